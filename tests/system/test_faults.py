"""Faults in what the service depends on, injected into processes of the test's own: a temporary
PostgreSQL cluster and a Redis server on free loopback ports (never the shared ones), stopped,
paused and started again under a running app, and a gunicorn worker killed under load.

Skipped when the PostgreSQL or Redis binaries are missing (CI has them).
"""

import contextlib
import glob
import http.client
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest
import redis

from models import bump_data_version, data_version
from store.database import db
from tests import asserts, factories
from tests.helpers import counted_queries, rate_limit_remaining, redis_commands_sent
from tests.servers import call, free_port, gunicorn
from web import ratelimits

pytestmark = pytest.mark.slow

PG_BIN = sorted(glob.glob("/usr/lib/postgresql/*/bin"))[-1:] or [""]
PG_BIN = PG_BIN[0]
REDIS_SERVER = shutil.which("redis-server")

LOGIN = "/api/auth/login"

#: Seconds no call may be held once what it waits on stops answering. Without our timeouts a
#: call to a paused server waits for ever (its kernel still accepts and acknowledges), and the
#: operating system's TCP timeouts take minutes; with them a call gives up within a few seconds.
#: The bound sits far from both, so a machine starved for CPU cannot fail it, and the tests say
#: which timeout gave up (and that nothing was tried twice) exactly, by what was logged or sent.
NEVER_HELD = 30.0


def _as_postgres(command):
    """``command`` run as the postgres user when we are root (PostgreSQL refuses root)."""
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *command]
    return command


class Postgres:
    """A throwaway PostgreSQL cluster on a free port: stop, start, pause and resume it."""

    def __init__(self):
        self.folder = tempfile.mkdtemp(prefix="picks-faults-pg-")
        if os.geteuid() == 0:
            os.chown(self.folder, pwd.getpwnam("postgres").pw_uid, -1)
        self.data = os.path.join(self.folder, "data")
        self.port = free_port()
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        self._run(f"{PG_BIN}/initdb", "-D", self.data, "-A", "trust", "-U", "postgres", "--no-sync")
        self.start()

    def _run(self, *command):
        subprocess.run(_as_postgres(command), check=True, capture_output=True, timeout=60)

    def start(self):
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off"
        log = os.path.join(self.folder, "log")
        self._run(f"{PG_BIN}/pg_ctl", "-D", self.data, "-o", options, "-l", log, "-w", "start")

    def stop(self):
        self._run(f"{PG_BIN}/pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop")

    def _processes(self):
        postmaster = int(Path(self.data, "postmaster.pid").read_text().split()[0])
        children = subprocess.run(
            ["pgrep", "-P", str(postmaster)], capture_output=True, text=True
        ).stdout.split()
        return [postmaster, *map(int, children)]

    def pause(self):
        for pid in self._processes():
            os.kill(pid, signal.SIGSTOP)

    def resume(self):
        for pid in self._processes():
            os.kill(pid, signal.SIGCONT)

    def remove(self):
        with contextlib.suppress(Exception):
            self.resume()
        with contextlib.suppress(Exception):
            self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


class Redis:
    """A Redis server of the test's own, without persistence: stop, start, pause, resume."""

    def __init__(self):
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process = None
        self.start()

    def start(self):
        self.process = subprocess.Popen(
            [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis(port=self.port, socket_timeout=1)
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(redis.RedisError):
                if client.ping():
                    break
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.05)
        client.close()

    def stop(self):
        self.process.terminate()
        self.process.wait(10)

    def pause(self):
        self.process.send_signal(signal.SIGSTOP)

    def resume(self):
        self.process.send_signal(signal.SIGCONT)

    def keys(self):
        client = redis.Redis(port=self.port, socket_timeout=1)
        try:
            return client.keys("*")
        finally:
            client.close()


@pytest.fixture(scope="module")
def postgres():
    if not os.path.exists(f"{PG_BIN}/initdb"):
        pytest.skip("PostgreSQL's binaries are not installed")
    cluster = Postgres()
    yield cluster
    cluster.remove()


@pytest.fixture
def own_redis():
    if not REDIS_SERVER:
        pytest.skip("redis-server is not installed")
    server = Redis()
    yield server
    with contextlib.suppress(Exception):
        server.resume()
    with contextlib.suppress(Exception):
        server.stop()


def _login(client):
    return client.post(LOGIN, json={"email": "me@example.com", "password": factories.PASSWORD})


def _register(client, email="new@example.com"):
    return client.post("/api/auth/register", json={"email": email, "password": "password-1"})


def _until(condition, seconds):
    """Call ``condition`` until it answers true or ``seconds`` pass; its last answer."""
    deadline = time.monotonic() + seconds
    while True:
        answer = condition()
        if answer or time.monotonic() > deadline:
            return answer
        time.sleep(0.2)


@pytest.fixture
def on_postgres(make_app, postgres):
    """An app on the test's own PostgreSQL cluster with one user, and the cluster."""
    app = make_app(
        DATABASE_URL=postgres.url,
        DATABASE_CONNECT_TIMEOUT=1.0,
        DATABASE_STATEMENT_TIMEOUT=1.0,
        RATELIMIT_STORAGE_URI="memory://",
        READINESS_CACHE_SECONDS=0,  # every probe asks the database
    )
    with app.app_context():
        factories.user("me@example.com")
    return app, postgres


def test_postgres_stopped_is_a_503_then_recovers_without_a_restart(on_postgres):
    app, postgres = on_postgres
    client = app.test_client()
    assert _login(client).status_code == 200  # the pool holds a connection now
    postgres.stop()
    try:
        response = _login(client)
        asserts.problem(response, 503, "service-unavailable")
        assert int(response.headers["Retry-After"]) >= 1
        ready = client.get("/readyz")
        asserts.problem(ready, 503, "service-unavailable")
        assert int(ready.headers["Retry-After"]) >= 1
        assert client.get("/healthz").status_code == 200
        asserts.problem(_register(client), 503, "service-unavailable")  # inside a transaction
    finally:
        postgres.start()
    assert _until(lambda: _login(client).status_code == 200, 10)
    assert client.get("/readyz").status_code == 200


def test_postgres_paused_is_a_503_within_the_configured_timeout(on_postgres, caplog):
    """A server that accepts connections but never answers (SIGSTOP): given up on after the
    statement timeout (1 s here) and its grace, then the connect timeout of a new connection,
    never held for the operating system's TCP timeouts (see NEVER_HELD)."""
    app, postgres = on_postgres
    client = app.test_client()
    assert _login(client).status_code == 200
    postgres.pause()
    try:
        for call_paused in (_login, _register):  # the second inside a transaction
            caplog.clear()
            started = time.monotonic()
            response = call_paused(client)
            assert time.monotonic() - started < NEVER_HELD
            asserts.problem(response, 503, "service-unavailable")
            assert "the database did not connect within 1.0 s" in caplog.text
        started = time.monotonic()
        asserts.problem(client.get("/readyz"), 503, "service-unavailable")
        assert time.monotonic() - started < NEVER_HELD
    finally:
        postgres.resume()
    assert _until(lambda: _login(client).status_code == 200, 10)
    assert _register(client, "after@example.com").status_code == 200


def test_redis_stopped_or_paused_limits_fall_back_and_recover(make_app, own_redis, monkeypatch):
    monkeypatch.setattr(ratelimits, "RECHECK_SECONDS", 0.5)
    app = make_app(RATELIMIT_STORAGE_URI=own_redis.url, RATELIMIT_STORAGE_TIMEOUT=0.5)
    client = app.test_client()
    with app.app_context():
        account, admin = factories.people()["admin"]
    key = f"user:{account.id}"

    def health():
        body = client.get("/api/v1/ops/health/services", headers=admin).get_json()
        return body["status"], {s["name"]: s["status"] for s in body["services"]}

    assert health()[1]["rate-limit-storage"] == "ok"
    assert own_redis.keys()  # counted in Redis

    own_redis.pause()  # accepts connections, answers nothing
    try:
        started = time.monotonic()
        with redis_commands_sent() as sent:
            response = client.get("/api/admin/users", headers=admin)
        assert time.monotonic() - started < NEVER_HELD
        assert response.status_code == 200 and "X-RateLimit-Limit" in response.headers
        assert len(sent) == 1, sent  # one hit, timed out once: no retry, no second read
        assert health() == ("degraded", health()[1]) and health()[1]["rate-limit-storage"] == "down"
    finally:
        own_redis.resume()

    # Answering again, it counts once more at the fallback's next check, and the reply it owed
    # the timed-out request is never read as a later hit's: each answer says what the counter
    # holds after its own hit.
    assert _until(lambda: health()[1]["rate-limit-storage"] == "ok", 5)
    time.sleep(0.6)  # the fallback's next check is due
    remaining = [
        int(client.get("/api/admin/users", headers=admin).headers["X-RateLimit-Remaining"])
        for _ in range(2)
    ]
    read = rate_limit_remaining(app.config["RATELIMIT_AUTH"], key, "auth")
    assert remaining[0] - 1 == remaining[1] == read
    assert app.extensions["rate_fallback"].dead_until is None

    own_redis.stop()
    started = time.monotonic()
    for _ in range(3):
        assert client.get("/api/admin/users", headers=admin).status_code == 200
    assert time.monotonic() - started < NEVER_HELD
    status, services = health()
    assert status == "degraded" and services["rate-limit-storage"] == "down"

    own_redis.start()  # empty: a new process without persistence
    assert _until(lambda: health()[1]["rate-limit-storage"] == "ok", 5)
    time.sleep(0.6)  # the fallback's next check is due
    assert client.get("/api/admin/users", headers=admin).status_code == 200
    assert own_redis.keys()  # shared counts again
    assert app.extensions["rate_fallback"].dead_until is None


def test_a_change_redis_cannot_hear_of_still_commits_and_the_lag_is_logged(
    make_app, own_redis, caplog
):
    """The data version's copy on Redis (web.versions): with Redis gone, a change commits all
    the same, says its copy may lag, and the answers are made from the database's version."""
    app = make_app(RATELIMIT_STORAGE_URI=own_redis.url, RATELIMIT_STORAGE_TIMEOUT=0.5)
    client = app.test_client()
    first = client.get("/api/picks/today")
    assert first.status_code == 200 and app.extensions["shared_version"] is not None
    own_redis.stop()
    with app.app_context():
        before = data_version()
        with db.atomic():
            bump_data_version()
        assert data_version() == before + 1
    lags = [
        record for record in caplog.records if "was not told of a change" in record.getMessage()
    ]
    assert len(lags) == 1  # marking it pending; the writers then leave Redis alone a while
    with counted_queries() as queries:
        again = client.get("/api/picks/today")
    assert again.status_code == 200 and len(queries) > 1  # made again at the new version


def test_a_killed_worker_never_charges_a_request_twice(make_app, own_redis):
    """Two gunicorn workers serve a burst of Data API calls; one is killed in the middle. Every
    answered call was charged once, and no call was charged more than once."""
    app = make_app(RATELIMIT_STORAGE_URI=own_redis.url)
    with app.app_context():
        pro = factories.user("pro@example.com", plan="pro")
        token = factories.token(pro)
    sent, answered, lost = 0, [], []
    lock = threading.Lock()
    with gunicorn(app, WEB_CONCURRENCY=2, GUNICORN_THREADS=4) as (base, _env):
        master = _gunicorn_master(base)
        workers = _children(master)
        assert len(workers) == 2

        def burst(count):
            nonlocal sent
            for _ in range(count):
                with lock:
                    sent += 1
                try:
                    status, _ = call(base, "GET", "/api/v1/data/catalog", token=token)
                except (OSError, http.client.HTTPException):
                    with lock:
                        lost.append(1)
                    continue
                with lock:
                    answered.append(status)

        threads = [threading.Thread(target=burst, args=(15,)) for _ in range(6)]
        for thread in threads:
            thread.start()
        time.sleep(0.3)
        os.kill(workers[0], signal.SIGKILL)  # mid-load
        for thread in threads:
            thread.join(60)
        assert _until(lambda: len(_children(master)) == 2, 10)  # gunicorn replaced it
        status, usage = _read_again(lambda: call(base, "GET", "/api/v1/data/usage", token=token))
    assert status == 200 and sent == 90
    assert set(answered) <= {200}
    used = usage["requests"]["used"]
    # Answered calls were each charged; a call cut off with its worker was charged at most once.
    assert len(answered) <= used <= sent, (len(answered), used, sent, len(lost))


def _read_again(read, attempts=3):
    """A read that is retried when its connection is reset: in the moments after a worker is
    killed a connection can still be cut, and the read (not charged) may simply be made again."""
    for attempt in range(attempts):
        try:
            return read()
        except ConnectionResetError:
            if attempt == attempts - 1:
                raise
            time.sleep(0.5)
    raise AssertionError("unreachable")


def _gunicorn_master(base):
    port = base.rsplit(":", 1)[1]
    found = subprocess.run(
        ["pgrep", "-f", "gunicorn --config gunicorn.conf.py wsgi:app"],
        capture_output=True,
        text=True,
    ).stdout.split()
    for pid in map(int, found):
        if f"PORT={port}".encode() in Path(f"/proc/{pid}/environ").read_bytes():
            parent = int(Path(f"/proc/{pid}/stat").read_text().split()[3])
            return parent if _is_gunicorn(parent) else pid
    raise AssertionError("gunicorn's master was not found")


def _is_gunicorn(pid):
    with contextlib.suppress(OSError):
        return b"gunicorn" in Path(f"/proc/{pid}/cmdline").read_bytes()
    return False


def _children(pid):
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True)
    return [int(child) for child in found.stdout.split()]
