"""A real gunicorn serving the app on a free loopback port, for the tests that need one."""

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.helpers import LEDGER_KEY, SECRET, WEBHOOK_KEY

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def call(base, method, path, body=None, token=None, headers=None):
    """(status, parsed JSON body or None) of one HTTP request."""
    request = urllib.request.Request(f"{base}{path}", method=method, headers=headers or {})
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


def traceback_in(output: str) -> str:
    """The first traceback in a server's output with some context, or ''."""
    at = output.find("Traceback")
    return "" if at < 0 else output[max(0, at - 400) : at + 4000]


@contextlib.contextmanager
def gunicorn(app, target="wsgi:app", output=None, **settings):
    """gunicorn serving ``app``'s database and rate-limit storage: yields (base URL, env).
    ``target`` is the WSGI app it loads (``tests.frozen_wsgi:app`` stops its clock).

    On exit the server is stopped, and its output must hold no traceback; given a list as
    ``output``, the output is appended to it instead, for a test expecting one to read.
    """
    port = free_port()
    env = {
        **os.environ,
        "APP_ENV": "test",
        "DATABASE_URL": app.config["DATABASE_URL"],
        "JWT_SECRET_KEY": SECRET,
        "LEDGER_SIGNING_KEY": LEDGER_KEY,
        "WEBHOOK_SECRETS_KEY": WEBHOOK_KEY,
        "PASSWORD_HASH_METHOD": app.config["PASSWORD_HASH_METHOD"],
        "PASSWORD_HASH_QUEUE": str(app.config["PASSWORD_HASH_QUEUE"]),
        "RATELIMIT_STORAGE_URI": app.config["RATELIMIT_STORAGE_URI"],
        "RATELIMIT_AUTH": "1000 per minute",
        "RATELIMIT_DATA": "1000 per minute",
        "HOST": "127.0.0.1",
        "PORT": str(port),
        # the defaults, and the server's own address with its port: links may name it
        "ALLOWED_HOSTS": f"localhost,127.0.0.1,::1,127.0.0.1:{port}",
        **{name: str(value) for name, value in settings.items()},
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "--config", "gunicorn.conf.py", target],
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
            raise RuntimeError(f"gunicorn did not start:\n{process.stdout.read().decode()}")
        time.sleep(0.2)
    try:
        yield base, env
    finally:
        process.terminate()
        printed = process.communicate(timeout=20)[0].decode()
    if output is not None:
        output.append(printed)
    else:
        assert not traceback_in(printed), traceback_in(printed)


def flask(env, *args) -> subprocess.CompletedProcess:
    """Run ``flask --app app ARGS`` against the served database."""
    return subprocess.run(
        [sys.executable, "-m", "flask", "--app", "app", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
