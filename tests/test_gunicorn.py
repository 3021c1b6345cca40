"""The real thing: gunicorn serving the app on a loopback port, called over HTTP."""

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import SECRET

ROOT = Path(__file__).resolve().parents[1]


def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def call(base, method, path, body=None, token=None):
    """(status, parsed JSON body or None) of one HTTP request."""
    request = urllib.request.Request(f"{base}{path}", method=method)
    if body is not None:
        request.data = json.dumps(body).encode()
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or "null")
    except urllib.error.HTTPError as error:
        payload = error.read()
        return error.code, json.loads(payload) if payload else None


@pytest.fixture
def served(app):
    """gunicorn on a free loopback port, sharing the test database; its environment too."""
    port = _free_port()
    env = {
        **os.environ,
        "APP_ENV": "test",
        "DATABASE_URL": app.config["DATABASE_URL"],
        "JWT_SECRET_KEY": SECRET,
        "PASSWORD_HASH_METHOD": app.config["PASSWORD_HASH_METHOD"],
        "RATELIMIT_STORAGE_URI": app.config["RATELIMIT_STORAGE_URI"],
        "RATELIMIT_AUTH": "1000 per minute",
        "HOST": "127.0.0.1",
        "PORT": str(port),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "--config", "gunicorn.conf.py", "wsgi:app"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            if call(base, "GET", "/")[0] == 200:
                break
        except OSError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"gunicorn did not start:\n{process.stdout.read().decode()}")
        time.sleep(0.2)
    yield base, env
    process.terminate()
    output = process.communicate(timeout=20)[0].decode()
    assert "Traceback" not in output, output


def test_register_login_then_pro_through_the_cli(served):
    base, env = served
    status, session = call(
        base, "POST", "/api/auth/register", {"email": "Fan@Example.com", "password": "password-1"}
    )
    assert status == 200 and session["user"]["email"] == "fan@example.com"
    status, session = call(
        base, "POST", "/api/auth/login", {"email": "fan@example.com", "password": "password-1"}
    )
    assert status == 200
    token = session["accessToken"]
    status, problem = call(base, "GET", "/api/v1/data/usage", token=token)
    assert status == 403 and problem["detail"] == "A Pro subscription or admin role is required."
    cli = subprocess.run(
        [
            sys.executable,
            "-m",
            "flask",
            "--app",
            "app",
            "users",
            "update",
            "fan@example.com",
            "--plan",
            "pro",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert cli.returncode == 0, cli.stderr
    status, usage = call(base, "GET", "/api/v1/data/usage", token=token)
    assert status == 200 and usage["plan"] == "pro" and usage["requests"]["used"] == 0


def test_concurrent_data_requests_are_each_counted_once(served):
    base, _ = served
    _, session = call(
        base, "POST", "/api/auth/register", {"email": "many@example.com", "password": "password-1"}
    )
    token = session["accessToken"]
    subprocess.run(
        [
            sys.executable,
            "-m",
            "flask",
            "--app",
            "app",
            "users",
            "update",
            "many@example.com",
            "--plan",
            "pro",
        ],
        cwd=ROOT,
        env=served[1],
        check=True,
        capture_output=True,
        timeout=60,
    )
    threads_count = 24
    start = threading.Barrier(threads_count)
    statuses = []

    def one_request():
        start.wait()
        statuses.append(call(base, "GET", "/api/v1/data/catalog", token=token)[0])

    threads = [threading.Thread(target=one_request) for _ in range(threads_count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert statuses == [200] * threads_count
    status, usage = call(base, "GET", "/api/v1/data/usage", token=token)
    assert status == 200 and usage["requests"]["used"] == threads_count
