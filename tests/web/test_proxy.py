"""The documented deployment, for real: gunicorn with one worker behind the shipped reverse proxy
(deploy/nginx.conf, nginx from Debian's packages), on loopback ports. Slow clients hold nginx's
connections, never gunicorn's threads; exports still stream; the rate limits count the client's
address, not the proxy's; and what nginx refuses itself is a problem+json."""

import contextlib
import http.client
import json
import os
import socket
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest

from engine.records import LeagueRecord, MatchRecord, OddsRecord
from services.feeds import imports
from tests import factories
from tests.servers import gunicorn
from tools import nginx

#: CI installs nginx and sets this, so these tests cannot be skipped there by accident.
REQUIRED = os.environ.get("REQUIRE_NGINX") == "1"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not nginx.find() and not REQUIRED, reason="nginx is not installed"),
]

SLOW_CLIENTS = 50
HOLD = 10.0  # seconds a slow client may stay open at most, whatever happens
PROBES = ("/healthz", "/api/picks/today")
EXPORTS = "/api/v1/data/exports"
PROBLEM_JSON = "application/problem+json"
MIB = 1024 * 1024


@pytest.fixture(autouse=True)
def _nginx_installed():
    """Where the tests run at all (nginx is installed, or CI requires it), it must be there."""
    if not nginx.find():
        pytest.fail("REQUIRE_NGINX=1 but nginx is not installed")


@contextlib.contextmanager
def proxied(app, **settings):
    """gunicorn with one worker serving ``app``'s database, behind nginx: yields (gunicorn's
    base URL, the proxy)."""
    with (
        gunicorn(app, WEB_CONCURRENCY=1, PROXY_FIX_HOPS=1, **settings) as (base, _),
        nginx.serving(base.removeprefix("http://")) as proxy,
    ):
        yield base, proxy


def port_of(base: str) -> int:
    """The port of a loopback base URL."""
    return int(base.rsplit(":", 1)[1])


def get(port, path, timeout, headers=None, source="127.0.0.1"):
    """(status, headers, body) of one GET on a new connection from ``source``."""
    connection = http.client.HTTPConnection(
        "127.0.0.1", port, timeout=timeout, source_address=(source, 0)
    )
    try:
        connection.request("GET", path, headers=headers or {})
        answer = connection.getresponse()
        return answer.status, answer, answer.read()
    finally:
        connection.close()


def timed_get(port, path, timeout=5.0):
    """(status, seconds) of one GET that must answer within ``timeout`` seconds."""
    started = time.monotonic()
    status, _, _ = get(port, path, timeout)
    return status, time.monotonic() - started


def raw(port, data: bytes) -> tuple[http.client.HTTPResponse, bytes]:
    """The answer to ``data`` sent as it is on a new connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(data)
        answer = http.client.HTTPResponse(connection)
        answer.begin()
        return answer, answer.read()


@contextlib.contextmanager
def slow_clients(port, count=SLOW_CLIENTS):
    """``count`` connections that each sent half a request's headers, and as many that sent
    whole headers and half the body they announced, then nothing more: yields them all. Each is
    closed on the way out, or ``HOLD`` seconds after they opened if that comes first (a check
    still running then meets closed sockets instead of holding them longer)."""
    opened = []
    closing = threading.Timer(HOLD, lambda: [sock.close() for sock in opened])
    closing.start()
    try:
        for index in range(count):
            sock = socket.create_connection(("127.0.0.1", port), timeout=HOLD)
            opened.append(sock)
            sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: {index}".encode())
        for _ in range(count):
            sock = socket.create_connection(("127.0.0.1", port), timeout=HOLD)
            opened.append(sock)
            sock.sendall(
                b"POST /api/auth/login HTTP/1.1\r\nHost: localhost\r\n"
                b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
                b'{"email": "slow@example.com", '
            )
        yield opened
    finally:
        closing.cancel()
        for sock in opened:
            sock.close()


def still_open(sock) -> bool:
    """Whether the server keeps ``sock`` open, having sent nothing on it."""
    timeout = sock.gettimeout()
    sock.setblocking(False)  # a socket with a timeout would wait for data first
    try:
        return sock.recv(1, socket.MSG_PEEK) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        sock.settimeout(timeout)


def test_fifty_slow_clients_hold_the_proxy_not_the_service(app):
    """Fifty connections holding half their headers and fifty holding half their body: nginx
    keeps them all waiting, and /healthz and a public read through it answer within a second."""
    with proxied(app) as (_, proxy):
        for path in PROBES:  # warm: the first read of a process pays for its imports
            assert timed_get(proxy.port, path)[0] == 200
        with slow_clients(proxy.port) as held:
            for path in PROBES:
                status, seconds = timed_get(proxy.port, path)
                assert status == 200 and seconds < 1.0, (path, seconds)
            assert all(still_open(sock) for sock in held)


def test_the_same_slow_clients_stall_gunicorn_alone(app):
    """The control: the same slow connections straight to gunicorn hold every thread of its one
    worker, and /healthz goes unanswered until they close."""
    with proxied(app) as (base, _):
        port = port_of(base)
        assert timed_get(port, "/healthz")[0] == 200
        with slow_clients(port) as held:
            with pytest.raises(TimeoutError):
                timed_get(port, "/healthz", timeout=2.0)
            assert all(still_open(sock) for sock in held)
        status, seconds = timed_get(port, "/healthz", timeout=HOLD)
        assert status == 200, seconds


LEAGUE = LeagueRecord("PRX", "Proxy League", "Testland", "top-flight")
QUOTES = [
    OddsRecord(bookmaker, market, selection, 1.5 + index / 10, False)
    for bookmaker in ("pinnacle", "bet365", "bwin", "unibet")
    for market, names in {
        "1x2": ("home", "draw", "away"),
        "ou25": ("over", "under"),
        "btts": ("yes", "no"),
    }.items()
    for index, selection in enumerate(names)
]


def store_matches(count) -> int:
    """``count`` finished matches a day apart with 28 quotes each; the number of quotes."""
    start = datetime(2026, 3, 7, 15, tzinfo=UTC)
    imports.store_records(
        [
            MatchRecord(
                league=LEAGUE,
                season="2025-26",
                kickoff_at=start + timedelta(days=day),
                home_team=f"PRX H{day}",
                away_team=f"PRX A{day}",
                status="finished",
                home_goals=day % 3,
                away_goals=1,
                odds=QUOTES,
            )
            for day in range(count)
        ]
    )
    return count * len(QUOTES)


def export_request(token) -> bytes:
    """The bytes of one request for an NDJSON export of every quote."""
    body = json.dumps({"resource": "odds", "format": "ndjson"}).encode()
    return (
        f"POST {EXPORTS} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {token}\r\nContent-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode() + body


def test_an_export_streams_through_the_proxy(make_app):
    """nginx passes an export on as the service writes it, never spooling it: a reader holding
    its first bytes holds the export itself (the caller's one stream stays taken, so another is
    a 429) for longer than the whole export takes to read, then reads it whole."""
    app = make_app()
    with app.app_context():
        rows = store_matches(3000)  # an NDJSON body over 8 MB: more than the buffers between
        token = factories.token(factories.user("pro@example.com", plan="pro"))
    # The reader below stalls on purpose for twice the export's time: no minimum rate cuts it
    # here (that bound has its own test in tests/data_api/test_exports.py).
    slow_readers_kept = {"EXPORT_MIN_RATE": 0, "EXPORT_SEND_TIMEOUT": 600}
    with proxied(app, EXPORT_STREAMS_PER_USER=1, LOG_LEVEL="WARNING", **slow_readers_kept) as (
        _,
        proxy,
    ):
        started = time.monotonic()
        whole, body = raw(proxy.port, export_request(token))
        took = time.monotonic() - started
        assert whole.status == 200 and len(body.splitlines()) == rows
        with socket.socket() as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.settimeout(30)
            sock.connect(("127.0.0.1", proxy.port))
            sock.sendall(export_request(token))
            answer = http.client.HTTPResponse(sock)
            try:
                answer.begin()
                assert answer.status == 200 and answer.getheader("X-Row-Count") == str(rows)
                first = answer.read(1024)
                # A proxy spooling the answer would have taken all of it from the service by now
                # (it takes about as long as the whole export did, at most a quarter more).
                time.sleep(1.0 + 1.25 * took)
                second, problem = raw(proxy.port, export_request(token))
                assert second.status == 429, second.status
                assert json.loads(problem)["type"].endswith("/problems/too-many-exports")
                rest = answer.read()
            finally:
                answer.close()  # a failed check leaves no socket to the collector
        assert first + rest == body


def test_the_rate_limits_count_the_clients_address_not_the_proxys(app):
    """Behind nginx (PROXY_FIX_HOPS=1) each client has its own budget, whatever address it
    claims in an X-Forwarded-For of its own: nginx's address, the same for all, counts for none."""
    with proxied(app, RATELIMIT_PUBLIC="3 per minute") as (_, proxy):
        first = [get(proxy.port, "/api/picks/today", 5, source="127.0.0.2")[0] for _ in range(3)]
        assert first == [200, 200, 200]
        for claimed in ({}, {"X-Forwarded-For": "198.51.100.7"}):
            status, answer, body = get(proxy.port, "/api/picks/today", 5, claimed, "127.0.0.2")
            assert status == 429 and answer.getheader("Content-Type") == PROBLEM_JSON
            assert json.loads(body)["type"].endswith("/problems/rate-limited")
        assert get(proxy.port, "/api/picks/today", 5, source="127.0.0.3")[0] == 200


def test_links_name_the_host_and_scheme_the_client_used(app):
    """The service's links follow the Host the client sent through the proxy, and the scheme
    nginx says (X-Forwarded-Proto and -Host a client sends itself are replaced)."""
    forged = {"Host": "localhost", "X-Forwarded-Proto": "https", "X-Forwarded-Host": "evil.test"}
    with proxied(app) as (_, proxy):
        status, answer, body = get(proxy.port, "/api/no-such-thing", 5, forged)
    assert status == 404 and answer.getheader("Content-Type") == PROBLEM_JSON
    assert json.loads(body)["type"] == "http://localhost/problems/not-found"


def _request(head: str, body: bytes = b"") -> bytes:
    """A request's bytes: ``head``'s lines (without the blank one) ended by CRLF, then ``body``."""
    return head.replace("\n", "\r\n").encode() + b"\r\n" + body


@pytest.mark.parametrize(
    ("sent", "status", "problem_type"),
    [
        (
            _request(
                "POST /api/auth/login HTTP/1.1\nHost: x\nContent-Type: application/json\n"
                f"Content-Length: {MIB + 1}\n"
            ),
            413,
            "/problems/payload-too-large",
        ),
        (_request("GET /" + "a" * 9000 + " HTTP/1.1\nHost: x\n"), 414, "about:blank"),
        (_request("GET / HTTP/1.1\nHost: x\nX-Big: " + "a" * 9000 + "\n"), 431, "about:blank"),
        (_request("get / HTTP/1.1\nHost: x\n"), 400, "/problems/malformed-request"),
        (_request("GET /_proxy/502 HTTP/1.1\nHost: x\n"), 404, "/problems/not-found"),
    ],
    ids=["body-over-1-MiB", "long-request-line", "long-header", "malformed", "internal-page"],
)
def test_what_the_proxy_refuses_itself_is_a_problem(sent, status, problem_type):
    """nginx answers these before it asks the service anything (none runs here), in the
    service's own format: a problem+json with a request id, as gunicorn's refusals are."""
    with nginx.serving(f"127.0.0.1:{nginx.free_port()}") as proxy:
        answer, payload = raw(proxy.port, sent)
    assert answer.status == status
    assert answer.getheader("Content-Type") == PROBLEM_JSON
    assert answer.getheader("X-Content-Type-Options") == "nosniff"
    assert answer.getheader("Referrer-Policy") == "strict-origin-when-cross-origin"
    problem = json.loads(payload)
    assert problem["type"] == problem_type and problem["status"] == status, problem
    assert problem["requestId"] == answer.getheader("X-Request-ID")
    assert len(problem["requestId"]) == 32


def test_a_body_of_the_services_limit_passes_the_proxy(app):
    """nginx refuses only what the service would: a body of exactly 1 MiB reaches it (and is
    answered by it, under the client's own request id)."""
    body = b'{"email": "' + b"a" * (MIB - 30) + b'", "password": "x"}'
    assert len(body) == MIB
    with proxied(app) as (_, proxy):
        answer, payload = raw(
            proxy.port,
            _request(
                "POST /api/auth/login HTTP/1.1\nHost: x\nContent-Type: application/json\n"
                f"X-Request-ID: one-mib\nContent-Length: {MIB}\nConnection: close\n",
                body,
            ),
        )
    assert answer.status == 422 and answer.getheader("X-Request-ID") == "one-mib"
    assert json.loads(payload)["type"].endswith("/problems/validation-error")


def test_a_service_that_does_not_answer_is_a_problem_too():
    """Nothing listening behind nginx: a 502 problem+json with Retry-After, under the client's
    own request id."""
    with nginx.serving(f"127.0.0.1:{nginx.free_port()}") as proxy:
        status, answer, body = get(proxy.port, "/healthz", 5, {"X-Request-ID": "abc-123"})
    assert status == 502 and answer.getheader("Content-Type") == PROBLEM_JSON
    assert answer.getheader("Retry-After") == "5"
    assert answer.getheader("Server") == "nginx"  # no version
    problem = json.loads(body)
    assert problem == {
        "type": "about:blank",
        "title": "Bad Gateway",
        "status": 502,
        "detail": "The service is not answering; try again in a few seconds.",
        "requestId": "abc-123",
    }
