"""The benchmarks' serving harness: a database wiped and built for the project (the demo world,
or in a smoke run its matches and odds alone, and the benchmark's accounts) through ``flask --app
app``, the settings gunicorn.conf.py gives, a server waited for until it answers, the accounts'
bearer tokens, one HTTP request, a bare Flask route to compare with, and the load generator (wrk
with a Lua script counting every answer that is not 2xx or 304, installed with apt-get when
allowed, else a Python fallback on keep-alive connections) with the percentile its figures are
read by and how busy the cores were before a run."""

import http.client
import json
import math
import os
import re
import runpy
import shutil
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import NamedTuple
from unittest import mock

from app import create_app
from bench.common import CONFIG, ROOT, START_TIMEOUT
from models import Match, Pick
from models.schema import drop_tables
from services.operations import demo_world
from store.database import db, open_database

#: account → (email, role, plan); the password is made per run.
ACCOUNTS = {
    "pro": ("bench-pro@example.com", "user", "pro"),
    "admin": ("bench-admin@example.com", "admin", "free"),
}


BARE_MODULE = "bench_bare_app"
BARE_APP = '''"""The baseline: one Flask route, nothing else; and the same route answering a
body of a given size (a 5 KB match card is not a 12-byte {"ok": true})."""

from flask import Flask, jsonify

app = Flask(__name__)


@app.get("/")
def ok():
    return jsonify(ok=True)


@app.get("/sized/<int:size>")
def sized(size):
    return app.response_class(b"x" * size, mimetype="application/json")
'''

# Counts every answer that is neither 2xx nor 304 per wrk thread (wrk itself only counts >= 400)
# and prints one machine-readable line for the run and one per unexpected status.
WRK_SCRIPT = """
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  bad = 0
  codes = {}
end

function response(status, headers, body)
  if (status < 200 or status > 299) and status ~= 304 then
    bad = bad + 1
    codes[tostring(status)] = (codes[tostring(status)] or 0) + 1
  end
end

function done(summary, latency, requests)
  local total, statuses = 0, {}
  for _, thread in ipairs(threads) do
    total = total + thread:get("bad")
    for code, count in pairs(thread:get("codes")) do
      statuses[code] = (statuses[code] or 0) + count
    end
  end
  local e = summary.errors
  io.write(string.format(
    "wrk-result requests=%d duration_us=%d p50_us=%.0f p99_us=%.0f bad=%d errors=%d\\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    total, e.connect + e.read + e.write + e.timeout))
  for code, count in pairs(statuses) do
    io.write(string.format("wrk-status %s %d\\n", code, count))
  end
end
"""

PYTHON_LOAD_CAP = 2_000_000  # requests per connection: a bound, never reached in practice


class Result(NamedTuple):
    """One load run: throughput, latency and every answer that was not a success."""

    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    bad: int  # answers other than 2xx and 304
    statuses: dict[str, int]  # status → count, for those answers
    errors: int  # connect, read, write errors and timeouts

    @property
    def rate(self) -> float:
        """Requests per second."""
        return self.requests / self.seconds if self.seconds else 0.0


class Load:
    """The load generator: wrk with our Lua script, or the Python fallback."""

    def __init__(self, wrk, folder, connections, threads):
        """Remember how to load; ``wrk`` is its path, or None for the Python fallback."""
        self.wrk = wrk
        self.connections = connections
        self.threads = threads
        self.script = folder / "report.lua"
        self.script.write_text(WRK_SCRIPT)

    @property
    def description(self) -> str:
        """What generates the load, for the header."""
        if self.wrk:
            return f"wrk, {self.threads} threads, {self.connections} connections"
        return (
            f"Python fallback, {self.connections} threads with keep-alive connections "
            "(figures are bounded by the generator itself)"
        )

    def run(self, url, headers, seconds) -> Result:
        """Load ``url`` for ``seconds``."""
        if self.wrk:
            return self._run_wrk(url, headers, seconds)
        return run_python_load(url, headers, self.connections, seconds)

    def _run_wrk(self, url, headers, seconds) -> Result:
        """One wrk run, read from the lines the Lua script prints."""
        command = [
            self.wrk,
            f"-t{self.threads}",
            f"-c{self.connections}",
            f"-d{seconds}s",
            "--timeout",
            "10s",
            "-s",
            str(self.script),
        ]
        for name, value in headers.items():
            command += ["-H", f"{name}: {value}"]
        finished = subprocess.run(
            [*command, url], capture_output=True, text=True, timeout=seconds + 60, check=False
        )
        found = re.search(
            r"wrk-result requests=(\d+) duration_us=(\d+) p50_us=(\d+) p99_us=(\d+) "
            r"bad=(\d+) errors=(\d+)",
            finished.stdout,
        )
        if finished.returncode or not found:
            raise RuntimeError(f"wrk failed:\n{finished.stdout}{finished.stderr}")
        requests, duration, p50, p99, bad, errors = (int(value) for value in found.groups())
        statuses = dict(re.findall(r"wrk-status (\d+) (\d+)", finished.stdout))
        return Result(
            requests,
            duration / 1e6,
            p50 / 1000,
            p99 / 1000,
            bad,
            {code: int(count) for code, count in statuses.items()},
            errors,
        )


def run_python_load(url, headers, connections, seconds) -> Result:
    """Load ``url`` from ``connections`` threads, each on one keep-alive connection."""
    host, port, path = split_url(url)
    started = time.perf_counter()
    deadline = started + seconds
    latencies = [[] for _ in range(connections)]
    statuses = [Counter() for _ in range(connections)]
    errors = [0] * connections

    def one_connection(slot):
        """Send requests back to back until the deadline."""
        connection = None
        while time.perf_counter() < deadline and len(latencies[slot]) < PYTHON_LOAD_CAP:
            try:
                connection = connection or http.client.HTTPConnection(host, port, timeout=10)
                sent = time.perf_counter()
                connection.request("GET", path, headers=headers)
                response = connection.getresponse()
                response.read()
                latencies[slot].append(time.perf_counter() - sent)
                statuses[slot][response.status] += 1
            except (OSError, http.client.HTTPException):
                errors[slot] += 1
                if connection:
                    connection.close()
                connection = None
                time.sleep(0.01)  # a refused connection must not spin until the deadline
        if connection:
            connection.close()

    workers = [
        threading.Thread(target=one_connection, args=(slot,), daemon=True)
        for slot in range(connections)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(seconds + 30)
    elapsed = time.perf_counter() - started
    every = sorted(latency for slot in latencies for latency in slot)
    counted = sum(statuses, Counter())
    unexpected = {
        str(code): count
        for code, count in counted.items()
        if not (200 <= code < 300 or code == 304)
    }
    return Result(
        len(every),
        elapsed,
        percentile(every, 0.50) * 1000,
        percentile(every, 0.99) * 1000,
        sum(unexpected.values()),
        unexpected,
        sum(errors),
    )


def percentile(ordered, share) -> float:
    """The nearest-rank percentile of an ascending list (0 when empty)."""
    if not ordered:
        return 0.0
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def split_url(url):
    """(host, port, path) of an http:// URL."""
    rest = url.removeprefix("http://")
    address, _, path = rest.partition("/")
    host, _, port = address.partition(":")
    return host, int(port or 80), "/" + path


def request(base, method, path, body=None, token=None, timeout=30, raw=False):
    """(status, parsed JSON body or None) of one HTTP request on a fresh connection; with
    ``raw``, the body's bytes instead."""
    host, port, _ = split_url(base)
    connection = http.client.HTTPConnection(host, port, timeout=timeout)
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        connection.request(method, path, json.dumps(body) if body is not None else None, headers)
        response = connection.getresponse()
        payload = response.read()
    finally:
        connection.close()
    if raw:
        return response.status, payload
    try:
        return response.status, json.loads(payload) if payload else None
    except ValueError:
        return response.status, None


def find_wrk(install) -> str | None:
    """wrk's path; installed with apt-get when missing and allowed, else None (Python load)."""
    found = shutil.which("wrk")
    if found or not install:
        return found
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        print("wrk is missing and cannot be installed here (not root or no apt-get)")
        return None
    print("wrk is missing: apt-get install -y wrk")
    environment = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for steps in (
        [["apt-get", "install", "-y", "-q", "wrk"]],
        # the package lists may be old or absent on a fresh machine
        [["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", "wrk"]],
    ):
        if all(
            subprocess.run(step, env=environment, capture_output=True, check=False).returncode == 0
            for step in steps
        ):
            return shutil.which("wrk")
    print("apt-get could not install wrk")
    return None


def flask_cli(environment, *arguments) -> str:
    """Run ``flask --app app ARGUMENTS`` in the project; its output, or exit on failure."""
    finished = subprocess.run(
        [sys.executable, "-m", "flask", "--app", "app", *arguments],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if finished.returncode:
        sys.exit(f"flask {' '.join(arguments)} failed:\n{finished.stdout}{finished.stderr}")
    return finished.stdout


def build_database(url, environment, password, smoke=False) -> int:
    """Wipe ``url``, build the demo world (in a smoke run its matches and odds alone) and the
    accounts; a match id with picks."""
    db.initialize(open_database(url))
    drop_tables()  # a --database-url may hold anything: start from nothing, as a fresh file does
    db.close()
    started = time.perf_counter()
    flask_cli(environment, "db", "init")
    if smoke:
        app = create_app({"DATABASE_URL": url, "JWT_SECRET_KEY": environment["JWT_SECRET_KEY"]})
        with app.app_context():
            demo_world.load(app.extensions["clock"]())
    else:
        flask_cli(environment, "data", "demo")
    for email, role, plan in ACCOUNTS.values():
        flask_cli(
            environment,
            "users",
            "create",
            email,
            "--password",
            password,
            "--role",
            role,
            "--plan",
            plan,
        )
    # An upcoming match with picks is what the public pages show; a past one will do.
    with_picks = Match.select(Match.id).join(Pick).group_by(Match.id)
    found = (
        with_picks.where(Match.status == "scheduled").order_by(Match.kickoff_at).first()
        or with_picks.order_by(Match.kickoff_at.desc()).first()
        or Match.select(Match.id).first()
    )
    db.close()
    print(f"demo world and accounts built in {time.perf_counter() - started:.1f} s")
    return found.id if found else 1


def gunicorn_settings(environment) -> dict:
    """The settings gunicorn.conf.py gives under ``environment`` (it reads os.environ)."""
    with mock.patch.dict(os.environ, environment, clear=True):
        return runpy.run_path(str(CONFIG))


def wait_until_up(base, path, process, log_path):
    """Return once ``base + path`` answers; exit with the server's log if it never does."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline and process.poll() is None:
        try:
            request(base, "GET", path, timeout=5)
        except OSError:
            time.sleep(0.2)
        else:
            return
    sys.exit(f"gunicorn did not start at {base}:\n{log_path.read_text(errors='replace')}")


def login(base, password) -> dict[str, str]:
    """account → bearer token, through POST /api/auth/login."""
    tokens = {}
    for account, (email, _role, _plan) in ACCOUNTS.items():
        status, body = request(
            base, "POST", "/api/auth/login", {"email": email, "password": password}
        )
        if status != 200:
            sys.exit(f"login of {email} answered {status}: {body}")
        tokens[account] = body["accessToken"]
    return tokens


def busy_cores(seconds=1.0) -> str:
    """How busy the CPUs are while nothing of ours runs: other work skews every figure."""
    stat = Path("/proc/stat")
    if not stat.exists():
        return "CPU use before the run unknown"

    def sample():
        """(busy, total) jiffies of all CPUs."""
        values = [int(value) for value in stat.read_text().split("\n", 1)[0].split()[1:]]
        idle = values[3] + values[4]  # idle and iowait
        return sum(values) - idle, sum(values)

    busy, total = sample()
    time.sleep(seconds)
    busy_after, total_after = sample()
    share = (busy_after - busy) / max(1, total_after - total)
    return f"CPU busy before the run: {share:.0%} of {os.cpu_count()} cores"
