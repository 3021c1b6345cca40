"""Property-based conformance of the whole API against its own OpenAPI description.

    .venv/bin/python .ci/conformance.py [--examples N] [--seed S]

Builds the demo world in a fresh SQLite file, creates one account of each kind, serves the
project on gunicorn, and runs schemathesis against the live /openapi.json once per caller
(anonymous, free, pro, operator, admin): every operation, positive and negative data. What must
hold: no 5xx, every response of a documented status with its documented content type, headers and
schema (so every error is problem+json, the bare 401 aside), and invalid input refused.

Not run: ``rotateCalendarToken``, which renews the caller's token stamp and so ends the very
access token the rest of the run sends (every later call would be a 401); its tests
(``tests/reads/test_calendars.py``) call it.

Not checked: schemathesis' positive_data_acceptance, which expects every schema-valid request to
succeed. Rules OpenAPI cannot state (`from` before `to`, a cursor this service signed, a JSON
object inside `parametersJson`) rightly answer 422 to such requests. The seed is fixed so a run
is reproducible; change it to explore further.
"""

import argparse
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent

CHECKS = [
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
    "negative_data_rejection",
]

#: What refuses invalid data: schemathesis' own list (the client errors an API answers, and
#: 5xx, which ``not_a_server_error`` fails anyway) with 414, a request line the server will not
#: read.
REFUSALS = [
    "400",
    "401",
    "403",
    "404",
    "405",
    "406",
    "409",
    "414",
    "415",
    "422",
    "428",
    "429",
    "5xx",
]
#: caller → (role, plan) of its account; anonymous sends no token.
CALLERS = {
    "anonymous": None,
    "free": ("user", "free"),
    "pro": ("user", "pro"),
    "operator": ("operator", "free"),
    "admin": ("admin", "free"),
}


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def flask(env, *args) -> None:
    """Run ``flask --app app ARGS`` against the world's database."""
    subprocess.run(
        [BIN / "flask", "--app", "app", *args],
        cwd=ROOT,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )


def login(base, email, password) -> str:
    """A bearer token for an account."""
    request = urllib.request.Request(
        f"{base}/api/auth/login",
        data=json.dumps({"email": email, "password": password}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)["accessToken"]


def wait_for(base, process, seconds=60) -> None:
    """Until the server answers (or fail)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit("gunicorn stopped before it answered")
        try:
            urllib.request.urlopen(f"{base}/healthz", timeout=2).close()
            return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("gunicorn did not answer")


def run(base, caller, token, examples, seed, folder) -> tuple[bool, str]:
    """One schemathesis run as ``caller``: (passed, its summary lines).

    It runs in ``folder``, so its cache of past failures (``.schemathesis/``) starts empty and
    never lands in the project.
    """
    command = [
        BIN / "schemathesis", "run", f"{base}/openapi.json",
        "--checks", ",".join(CHECKS),
        "--phases", "examples,coverage,fuzzing",
        "--max-examples", str(examples),
        "--seed", str(seed),
        "--generation-deterministic",
        "--no-color",
        "--max-failures", "50",
        "--request-timeout", "30",
        "--exclude-operation-id", "rotateCalendarToken",
    ]  # fmt: skip
    if token:
        command += ["--header", f"Authorization: Bearer {token}"]
    # Invalid data refused before the app reads it is refused all the same: a request line
    # over the server's 8 KB (a list of ids past its maximum, say) is a 414.
    (Path(folder) / "schemathesis.toml").write_text(
        f"[checks.negative_data_rejection]\nexpected-statuses = {json.dumps(REFUSALS)}\n"
    )
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=600)
    output = done.stdout + done.stderr
    summary = [
        line.strip()
        for line in output.splitlines()
        if re.search(r"Selected:|Tested:|generated|failures|passed in|failed in", line)
    ]
    if done.returncode != 0:  # the failures, each with a curl command that reproduces it
        start = output.find("FAILURES")
        summary.append(output[start : output.find("SUMMARY", start)][:20000])
    return done.returncode == 0, "\n".join(summary)


def main():
    """Build, serve, run every caller, and exit non-zero on any failure."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=20, help="cases per operation")
    parser.add_argument("--seed", type=int, default=20261123)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        password = "conformance-" + secrets.token_hex(8)
        env = {
            **os.environ,
            "APP_ENV": "test",
            "DATABASE_URL": f"sqlite:///{Path(folder) / 'conformance.db'}",
            "JWT_SECRET_KEY": secrets.token_urlsafe(48),
            "PASSWORD_HASH_METHOD": "scrypt:1024:8:1",
            "RATELIMIT_STORAGE_URI": "memory://",
            "RATELIMIT_PUBLIC": "1000000 per minute",
            "RATELIMIT_AUTH": "1000000 per minute",
            "RATELIMIT_DATA": "1000000 per minute",
            "RATELIMIT_REGISTER": "1000000 per hour",
            "RATELIMIT_LOGIN_FAILURES": "1000000 per minute",
            "LOG_LEVEL": "WARNING",
            "HOST": "127.0.0.1",
            "PORT": str(free_port()),
        }
        started = time.monotonic()
        flask(env, "db", "init")
        flask(env, "data", "demo")
        for caller, account in CALLERS.items():
            if account:
                role, plan = account
                email = f"{caller}@conformance.example"
                flask(env, "users", "create", email, "--password", password,
                      "--role", role, "--plan", plan)  # fmt: skip
        server = subprocess.Popen(
            [BIN / "gunicorn", "--config", "gunicorn.conf.py", "wsgi:app"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        base = f"http://127.0.0.1:{env['PORT']}"
        results = {}
        try:
            wait_for(base, server)
            print(f"demo world and accounts ready in {time.monotonic() - started:.0f} s")
            for caller, account in CALLERS.items():
                token = login(base, f"{caller}@conformance.example", password) if account else None
                began = time.monotonic()
                passed, summary = run(base, caller, token, args.examples, args.seed, folder)
                results[caller] = passed
                state = "passed" if passed else "FAILED"
                print(f"== {caller}: {state} in {time.monotonic() - began:.0f} s\n{summary}")
        finally:
            server.terminate()
            log = server.communicate(timeout=30)[0]
        if "Traceback" in log:
            print("the server logged a traceback:\n" + log[log.index("Traceback") - 300 :][:6000])
            results["server log"] = False
    failed = [caller for caller, passed in results.items() if not passed]
    print(f"conformance: {'failed for ' + ', '.join(failed) if failed else 'every caller passed'}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
