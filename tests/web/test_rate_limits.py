"""Rate limits: each policy, what it counts by, its headers, its 429, and what stays outside."""

import os
import re
import threading
import time

import pytest
import redis
from limits import parse
from limits.strategies import STRATEGIES

from tests import asserts, factories
from tests.helpers import rate_limit_remaining, redis_commands_sent
from web import client_keys, ratelimit_storage
from web.extensions import limiter

REGISTER = "/api/auth/register"
LOGIN = "/api/auth/login"

#: For tests that count requests to a limit: the moving window counts exactly the hits of the
#: last window, where the sliding-window counter weighs the previous window's count by the clock
#: and so answers differently when a burst crosses a minute (or hour) boundary.
EXACT = {"RATELIMIT_STRATEGY": "moving-window"}

#: For tests that play several clients through X-Forwarded-For: one trusted proxy in front.
BEHIND_A_PROXY = {"PROXY_FIX_HOPS": 1}


def _register(client, n, ip="198.51.100.7"):
    return client.post(
        REGISTER,
        json={"email": f"r{n}@example.com", "password": "password-1"},
        headers={"X-Forwarded-For": ip},
    )


def test_register_allows_five_an_hour_per_ip(make_app):
    client = make_app(**EXACT, **BEHIND_A_PROXY).test_client()
    for n in range(5):
        assert _register(client, n).status_code == 200
    limited = _register(client, 99)
    body = asserts.problem(limited, 429, "rate-limited")
    assert "register" in body["detail"]
    assert 1 <= int(limited.headers["Retry-After"]) <= 3600
    assert _register(client, 100, ip="198.51.100.8").status_code == 200


def test_limited_requests_are_checked_before_validation(make_app):
    client = make_app(**EXACT).test_client()
    for n in range(5):
        client.post(REGISTER, json={"email": f"bad{n}"})  # 422s count too
    asserts.problem(client.post(REGISTER, json={"email": "x"}), 429, "rate-limited")


def test_login_counts_per_ip_under_the_auth_policy(make_app):
    client = make_app(RATELIMIT_AUTH="3 per minute", **EXACT, **BEHIND_A_PROXY).test_client()
    for _ in range(3):
        asserts.unauthorized(client.post(LOGIN, json={"email": "a@example.com", "password": "x"}))
    limited = client.post(LOGIN, json={"email": "a@example.com", "password": "x"})
    asserts.problem(limited, 429, "rate-limited")
    assert limited.headers["RateLimit-Policy"] == '"auth";q=3;w=60'
    other_ip = client.post(
        LOGIN,
        json={"email": "a@example.com", "password": "x"},
        headers={"X-Forwarded-For": "192.0.2.9"},
    )
    assert other_ip.status_code == 401


@pytest.mark.parametrize(
    ("policy", "paths", "elsewhere"),
    [
        ("auth", ["/api/admin/users", "/api/v1/ops/health/services"], "/api/v1/data/usage"),
        ("data", ["/api/v1/data/usage", "/api/v1/data/catalog"], "/api/admin/users"),
    ],
)
def test_authenticated_endpoints_share_one_count_per_user(make_app, policy, paths, elsewhere):
    """The endpoints of one policy share a user's count; the Data API's ``data`` and the other
    signed-in endpoints' ``auth`` are counted apart."""
    app = make_app(RATELIMIT_AUTH="4 per minute", RATELIMIT_DATA="4 per minute", **EXACT)
    client = app.test_client()
    with app.app_context():
        people = factories.people()
    admin, other = people["admin"][1], people["pro"][1]
    for path in paths * 2:
        assert client.get(path, headers=admin).status_code == 200
    limited = client.get(paths[0], headers=admin)
    asserts.problem(limited, 429, "rate-limited")
    assert limited.headers["RateLimit-Policy"] == f'"{policy}";q=4;w=60'
    assert int(limited.headers["Retry-After"]) >= 1
    assert client.get(elsewhere, headers=admin).status_code == 200
    if policy == "data":
        assert client.get(paths[0], headers=other).status_code == 200


def test_rate_limit_headers(client, people):
    response = client.get("/api/v1/data/usage", headers=people["pro"][1])
    headers = response.headers
    assert headers["X-RateLimit-Limit"] == "600"
    assert headers["X-RateLimit-Remaining"] == "599"
    assert int(headers["X-RateLimit-Reset"]) > 1_700_000_000
    assert headers["RateLimit-Policy"] == '"data";q=600;w=60'
    match = re.fullmatch(r'"data";r=(\d+);t=(\d+)', headers["RateLimit"])
    assert match and match.group(1) == "599" and 1 <= int(match.group(2)) <= 60
    assert "Retry-After" not in headers


def test_denied_requests_do_not_spend_the_limit(make_app):
    """401 and 403 come first, so they neither count nor carry rate-limit headers."""
    app = make_app(RATELIMIT_DATA="1 per minute")
    client = app.test_client()
    with app.app_context():
        people = factories.people()
    for _ in range(3):
        response = client.get("/api/v1/data/usage", headers=people["free"][1])
        asserts.problem(response, 403, "subscription-required")
        assert "X-RateLimit-Limit" not in response.headers
    assert client.get("/api/v1/data/usage", headers=people["free"][1]).status_code == 403


@pytest.mark.parametrize("path", ["/openapi.json", "/docs", "/problems/not-found", "/"])
def test_docs_and_problems_are_outside_every_limit(make_app, path):
    client = make_app(RATELIMIT_PUBLIC="1 per minute", RATELIMIT_AUTH="1 per minute").test_client()
    for _ in range(3):
        response = client.get(path)
        assert response.status_code == 200
        assert "X-RateLimit-Limit" not in response.headers


def test_limits_can_be_switched_off(make_app):
    client = make_app(RATELIMIT_ENABLED=False).test_client()
    for n in range(7):
        response = _register(client, n)
        assert response.status_code == 200 and "X-RateLimit-Limit" not in response.headers


REDIS = os.environ.get("RATELIMIT_STORAGE_URI", "")


@pytest.mark.skipif(not REDIS.startswith("redis"), reason="needs RATELIMIT_STORAGE_URI=redis://")
def test_a_limited_request_costs_one_redis_round_trip(make_app):
    app = make_app(RATELIMIT_PUBLIC="50 per minute")
    client = app.test_client()
    client.get("/api/picks/today?date=2026-01-01")  # loads the script into Redis once
    with redis_commands_sent() as sent:
        response = client.get("/api/picks/today?date=2026-01-01")
    assert response.status_code == 200
    assert len(sent) == 1, sent
    # The headers agree with a fresh read of the same counters by the stock strategy.
    remaining = rate_limit_remaining("50 per minute", *COUNTER)
    assert remaining == int(response.headers["X-RateLimit-Remaining"]) == 48


#: The counter public reads from the test client add to.
COUNTER = ("ip:127.0.0.1", "public-read")


#: One Redis server through redis-py's pool: where each thread keeps its connection.
ONE_SERVER = pytest.mark.skipif(
    not REDIS.startswith("redis://"), reason="needs RATELIMIT_STORAGE_URI=redis://"
)


@ONE_SERVER
def test_a_serving_thread_keeps_its_redis_connection(make_app, monkeypatch):
    """Each hit goes out on the thread's own connection, taken from the pool once: no check-out,
    stray-data poll and check-in around every request."""
    app = make_app(RATELIMIT_PUBLIC="50 per minute")
    client = app.test_client()
    client.get("/api/picks/today?date=2026-01-01")
    checkouts = []
    original = redis.ConnectionPool.get_connection

    def counting(pool, *args, **kwargs):
        checkouts.append(pool)
        return original(pool, *args, **kwargs)

    monkeypatch.setattr(redis.ConnectionPool, "get_connection", counting)
    answers = [client.get("/api/picks/today?date=2026-01-01") for _ in range(3)]
    monkeypatch.undo()
    assert checkouts == []
    remaining = [int(answer.headers["X-RateLimit-Remaining"]) for answer in answers]
    assert remaining == [48, 47, 46] and rate_limit_remaining("50 per minute", *COUNTER) == 46


@ONE_SERVER
def test_a_server_that_forgot_the_script_is_taught_it_again(make_app):
    """A restarted server (or SCRIPT FLUSH) no longer knows the script: the hit loads it and
    is counted in Redis, not in the per-process fallback."""
    app = make_app(RATELIMIT_PUBLIC="50 per minute")
    client = app.test_client()
    assert client.get("/api/picks/today?date=2026-01-01").headers["X-RateLimit-Remaining"] == "49"
    limiter.storage.get_connection().script_flush()
    response = client.get("/api/picks/today?date=2026-01-01")
    assert response.status_code == 200
    assert app.extensions["rate_fallback"].dead_until is None
    assert int(response.headers["X-RateLimit-Remaining"]) == 48
    assert rate_limit_remaining("50 per minute", *COUNTER) == 48


@ONE_SERVER
def test_a_connection_the_server_closed_while_unused_is_connected_again(make_app, monkeypatch):
    """The server closes a thread's connection between two hits (its idle timeout, a restart):
    the next hit polls it first, connects again and is counted in Redis, not in the fallback."""
    monkeypatch.setattr(ratelimit_storage, "IDLE_CHECK_SECONDS", 0)  # every hit follows a pause
    app = make_app(RATELIMIT_PUBLIC="50 per minute")
    client = app.test_client()
    assert client.get("/api/picks/today?date=2026-01-01").headers["X-RateLimit-Remaining"] == "49"
    held = limiter.limiter.connections.local.held
    host, port = held.connection._sock.getsockname()[:2]
    assert limiter.storage.get_connection().client_kill(f"{host}:{port}")
    response = client.get("/api/picks/today?date=2026-01-01")
    assert app.extensions["rate_fallback"].dead_until is None
    assert int(response.headers["X-RateLimit-Remaining"]) == 48
    assert rate_limit_remaining("50 per minute", *COUNTER) == 48


class FakeConnection:
    """A connection whose replies a test sets, recording what was done to it."""

    def __init__(self, replies):
        self.replies = replies  # values to return, exceptions to raise
        self.sent, self.disconnected = [], 0

    def should_reconnect(self):
        return False

    def can_read(self):
        return False

    def send_command(self, *command):
        self.sent.append(command)

    def read_response(self):
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        return reply

    def disconnect(self):
        self.disconnected += 1


class FakePool:
    """Hands out the connections given, in turn, and records what comes back."""

    def __init__(self, *connections):
        self.connections, self.released = list(connections), []

    def get_connection(self):
        return self.connections.pop(0)

    def release(self, connection):
        self.released.append(connection)


def test_a_thread_keeps_its_connection_until_it_fails_or_ends():
    """An error reply leaves the connection in use; a timeout closes it and gives it back, and
    the next call takes another; a thread that ends gives its own back."""
    first = FakeConnection([1, redis.ResponseError("no"), 2, redis.TimeoutError("slow")])
    second = FakeConnection([3])
    pool = FakePool(first, second)
    connections = ratelimit_storage.ThreadConnections(pool)
    assert connections.call("PING") == 1
    with pytest.raises(redis.ResponseError):
        connections.call("BAD")
    assert connections.call("PING") == 2 and pool.released == [] and not first.disconnected
    with pytest.raises(redis.TimeoutError):
        connections.call("PING")  # the reply may still come: never read it as another's
    assert first.disconnected == 1 and pool.released == [first]
    assert connections.call("PING") == 3 and second.sent == [("PING",)]

    third = FakeConnection([4])
    pool.connections.append(third)
    other = threading.Thread(target=lambda: connections.call("PING"))
    other.start()
    other.join()
    assert third.sent == [("PING",)] and pool.released == [first, third]
    assert third.disconnected == 1


@pytest.mark.parametrize("path", [LOGIN, REGISTER])
def test_x_forwarded_for_is_not_believed_without_a_trusted_proxy(make_app, path):
    """By default no proxy is trusted: a client's own X-Forwarded-For does not make it someone
    else, so it cannot escape the per-address limits by naming a new address each time."""
    client = make_app(RATELIMIT_AUTH="3 per minute", RATELIMIT_REGISTER="3 per hour", **EXACT)
    client = client.test_client()
    statuses = []
    for n in range(5):
        body = {"email": f"guess{n}@example.com", "password": "password-1"}
        headers = {"X-Forwarded-For": f"198.51.100.{n}"}
        statuses.append(client.post(path, json=body, headers=headers).status_code)
    assert statuses[3:] == [429, 429]


def test_a_trusted_proxy_hop_gives_the_client_address(make_app):
    client = make_app(RATELIMIT_AUTH="1 per minute", **EXACT, **BEHIND_A_PROXY).test_client()
    body = {"email": "a@example.com", "password": "password-1"}
    for n in range(3):
        headers = {"X-Forwarded-For": f"198.51.100.{n}"}
        assert client.post(LOGIN, json=body, headers=headers).status_code == 401


@pytest.mark.parametrize(
    "headers",
    [
        {"X-Forwarded-Proto": "javascript", "X-Forwarded-Host": "evil.example"},
        {"Host": "evil.example"},
        {"Host": "evil.example:443", "X-Forwarded-Host": "evil.example"},
    ],
)
@pytest.mark.parametrize("hops", [0, 1])
def test_an_untrusted_host_never_reaches_a_link(make_app, headers, hops):
    client = make_app(PROXY_FIX_HOPS=hops).test_client()
    base = (
        client.get("/nope", headers=headers).get_json()["type"].removesuffix("/problems/not-found")
    )
    assert base in ("", "http://localhost")  # relative, or the test client's own allowed host
    index = client.get("/", headers=headers).get_json()
    assert (index["openapi"], index["docs"]) == (f"{base}/openapi.json", f"{base}/docs")


def test_allowed_hosts_and_the_public_base_url_make_absolute_links(make_app):
    allowed = make_app(ALLOWED_HOSTS="localhost:8000").test_client()
    local = allowed.get("/nope", headers={"Host": "localhost:8000"})
    assert local.get_json()["type"] == "http://localhost:8000/problems/not-found"
    bare = make_app().test_client().get("/nope", headers={"Host": "localhost:8000"})
    assert bare.get_json()["type"] == "/problems/not-found"  # a bare host: its default port
    public = make_app(PUBLIC_BASE_URL="https://picks.example.com").test_client()
    problem = public.get("/nope", headers={"Host": "evil.example"}).get_json()
    assert problem["type"] == "https://picks.example.com/problems/not-found"


def test_a_cached_prediction_page_never_carries_another_requests_host(make_app):
    from datetime import timedelta

    from clock import utcnow

    app = make_app()
    with app.app_context():
        match = factories.match("Rovers", "United", kickoff=utcnow() + timedelta(days=2))
    client = app.test_client()
    path = f"/api/v1/seo/predictions/{match.slug}"
    poisoned = client.get(path, headers={"Host": "evil.example"}).get_json()
    assert poisoned["canonicalUrl"] == path and poisoned["structuredData"]["url"] == path
    page = client.get(path).get_json()
    assert page["canonicalUrl"] == f"http://localhost{path}"
    html = client.get(path, headers={"Host": "evil.example", "Accept": "text/html"})
    assert b"evil.example" not in html.get_data()


def _login(client, email, password, ip):
    return client.post(
        LOGIN, json={"email": email, "password": password}, headers={"X-Forwarded-For": ip}
    )


def test_failed_logins_are_limited_per_account_across_addresses(make_app):
    app = make_app(RATELIMIT_LOGIN_FAILURES="3 per minute", **EXACT, **BEHIND_A_PROXY)
    with app.app_context():
        factories.user("target@example.com")
    client = app.test_client()
    for n in range(3):
        asserts.unauthorized(_login(client, "Target@example.com", f"guess-{n}", f"203.0.113.{n}"))
    limited = _login(client, "target@example.com", "guess-9", "203.0.113.9")
    body = asserts.problem(limited, 429, "rate-limited")
    assert "login-failures" in body["detail"] and 1 <= int(limited.headers["Retry-After"]) <= 60
    # The headers name what refused it (not the auth policy, which has requests left); the
    # per-account count shows only once it refuses, which the 429 says anyway.
    assert limited.headers["RateLimit-Policy"] == '"login-failures";q=3;w=60'
    assert limited.headers["RateLimit"].startswith('"login-failures";r=0;t=')
    assert limited.headers["X-RateLimit-Remaining"] == "0"
    failed = _login(client, "other@example.com", "guess", "203.0.113.11")
    assert failed.status_code == 401 and failed.headers["RateLimit-Policy"] == '"auth";q=20;w=60'
    # While the account is throttled, even the right password waits (else it would be an oracle).
    asserts.problem(
        _login(client, "target@example.com", factories.PASSWORD, "203.0.113.10"),
        429,
        "rate-limited",
    )
    # Other accounts are not affected.
    asserts.unauthorized(_login(client, "other@example.com", "guess", "203.0.113.9"))


def test_a_successful_login_clears_the_account_failures(make_app):
    app = make_app(RATELIMIT_LOGIN_FAILURES="3 per minute", **EXACT)
    with app.app_context():
        factories.user("me@example.com")
    client = app.test_client()
    for _ in range(2):
        asserts.unauthorized(_login(client, "me@example.com", "typo", "203.0.113.1"))
    assert _login(client, "me@example.com", factories.PASSWORD, "203.0.113.1").status_code == 200
    for _ in range(3):  # a fresh count: three more failures before the 429
        asserts.unauthorized(_login(client, "me@example.com", "typo", "203.0.113.1"))
    asserts.problem(_login(client, "me@example.com", "typo", "203.0.113.1"), 429, "rate-limited")


def test_a_throttled_login_costs_no_password_hash(make_app, monkeypatch):
    import werkzeug.security

    app = make_app(RATELIMIT_LOGIN_FAILURES="1 per minute", **EXACT)
    client = app.test_client()
    asserts.unauthorized(_login(client, "x@example.com", "guess", "203.0.113.1"))
    checks = []
    original = werkzeug.security.check_password_hash
    monkeypatch.setattr(
        "services.accounts.credentials.check_password_hash",
        lambda *args: checks.append(1) or original(*args),
    )
    asserts.problem(_login(client, "x@example.com", "guess", "203.0.113.1"), 429, "rate-limited")
    assert checks == []


@pytest.mark.parametrize("strategy", ["moving-window", "fixed-window", "sliding-window-counter"])
def test_limits_answer_the_same_way_with_every_strategy(make_app, strategy):
    """web/ratelimits.py spends the strategy of `limits` that is configured, whichever it is (its
    one-round-trip Redis script replaces only the sliding-window counter)."""
    app = make_app(RATELIMIT_DATA="2 per minute", RATELIMIT_STRATEGY=strategy)
    client = app.test_client()
    with app.app_context():
        headers = factories.people()["pro"][1]
    assert isinstance(limiter.limiter, STRATEGIES[strategy])  # this app's, not the first one's
    first = client.get("/api/v1/data/usage", headers=headers)
    assert first.status_code == 200
    assert first.headers["RateLimit-Policy"] == '"data";q=2;w=60'
    assert int(first.headers["X-RateLimit-Limit"]) == 2
    assert int(first.headers["X-RateLimit-Remaining"]) in (0, 1)  # the counter weighs the clock
    statuses = [client.get("/api/v1/data/usage", headers=headers).status_code for _ in range(3)]
    assert statuses.count(429) >= 1 and statuses[-1] == 429
    limited = client.get("/api/v1/data/usage", headers=headers)
    asserts.problem(limited, 429, "rate-limited")
    assert 1 <= int(limited.headers["Retry-After"]) <= 60


#: One policy per kind of request counted by address, at a limit of 3: (path, body of the n-th).
BY_ADDRESS = {
    "login": (LOGIN, lambda n: {"email": "a@example.com", "password": "password-1"}),
    "register": (REGISTER, lambda n: {"email": f"v6-{n}@example.com", "password": "password-1"}),
    "public-read": ("/api/picks/today", None),
}

SMALL_LIMITS = {
    "RATELIMIT_AUTH": "3 per minute",
    "RATELIMIT_REGISTER": "3 per hour",
    "RATELIMIT_PUBLIC": "3 per minute",
    "RATELIMIT_LOGIN_FAILURES": "1000 per minute",
}


def _from(client, kind, n, address):
    """The ``n``-th request of ``kind`` from ``address``, as the trusted proxy reports it."""
    path, body = BY_ADDRESS[kind]
    headers = {"X-Forwarded-For": address}
    if body is None:
        return client.get(path, headers=headers)
    return client.post(path, json=body(n), headers=headers)


def _statuses(client, kind, addresses):
    return [_from(client, kind, n, address).status_code for n, address in enumerate(addresses)]


@pytest.mark.parametrize("kind", list(BY_ADDRESS))
def test_addresses_of_one_ipv6_network_share_one_budget(make_app, kind):
    """A client holding a /64 may send from any of its addresses: it is one client, counted by
    the network, not an address per request with a budget each."""
    client = make_app(**SMALL_LIMITS, **EXACT, **BEHIND_A_PROXY).test_client()
    addresses = [f"2001:db8:1:2:{n:x}::{n + 1:x}" for n in range(5)]
    assert _statuses(client, kind, addresses)[3:] == [429, 429]
    other_network = _from(client, kind, 10, "2001:db8:1:3::1")
    assert other_network.status_code != 429, "another /64 has its own budget"


@pytest.mark.parametrize("kind", list(BY_ADDRESS))
def test_one_address_spelt_otherwise_counts_as_one(make_app, kind):
    client = make_app(**SMALL_LIMITS, **EXACT, **BEHIND_A_PROXY).test_client()
    spellings = ["2001:db8::7", "2001:0DB8:0000:0000::0007", "[2001:db8::7]", "2001:db8::7%eth0"]
    assert _statuses(client, kind, spellings)[3:] == [429]
    mapped = ["::ffff:192.0.2.1", "192.0.2.1", "[::FFFF:c000:0201]:443", "192.0.2.1"]
    assert _statuses(client, kind, mapped)[3:] == [429]
    classic = ["192.0.2.9", "192.0.521", "0300.0.02.011", "0xc0000209"]
    assert _statuses(client, kind, classic)[3:] == [429]


@pytest.mark.parametrize("kind", list(BY_ADDRESS))
def test_ipv4_addresses_keep_a_budget_each(make_app, kind):
    client = make_app(**SMALL_LIMITS, **EXACT, **BEHIND_A_PROXY).test_client()
    assert _statuses(client, kind, ["192.0.2.1"] * 4)[3:] == [429]
    assert _from(client, kind, 9, "192.0.2.2").status_code != 429


def test_the_ipv6_network_counted_is_configuration(make_app):
    client = make_app(
        **SMALL_LIMITS, RATELIMIT_IPV6_PREFIX=128, **EXACT, **BEHIND_A_PROXY
    ).test_client()
    addresses = [f"2001:db8::{n + 1:x}" for n in range(5)]
    assert 429 not in _statuses(client, "public-read", addresses)
    spellings = ["2001:db8::7", "2001:0db8::0007", "[2001:db8::7]", "2001:db8::7%eth0"]
    assert _statuses(client, "public-read", spellings)[3:] == [429]


@pytest.mark.parametrize(
    ("address", "key"),
    [
        ("2001:db8:a:b:c:d:e:f", "ip:2001:db8:a:b::/64"),
        ("2001:0DB8:000a:000b::1", "ip:2001:db8:a:b::/64"),
        ("[2001:db8:a:b::1]:8443", "ip:2001:db8:a:b::/64"),
        ("fe80::1%eth0", "ip:fe80::/64"),
        ("::ffff:198.51.100.7", "ip:198.51.100.7"),
        ("198.51.100.7", "ip:198.51.100.7"),
        ("198.51.100.7:5000", "ip:198.51.100.7"),
        (None, "ip:127.0.0.1"),
        ("127.1", "ip:127.0.0.1"),
        ("0177.0.0.1", "ip:127.0.0.1"),
        ("0x7f.0.0.1", "ip:127.0.0.1"),
        ("0x7F000001", "ip:127.0.0.1"),
        ("2130706433", "ip:127.0.0.1"),
        ("198.51.25607", "ip:198.51.100.7"),
        ("127.1:8080", "ip:127.0.0.1"),
        ("1.2.3.4.5", "ip:1.2.3.4.5"),
        ("08.0.0.1", "ip:08.0.0.1"),
        ("4294967296", "ip:4294967296"),
        ("unknown", "ip:unknown"),
        ("x" * 100, "ip:" + "x" * 64),
    ],
)
def test_a_client_key_has_one_spelling_per_client(address, key):
    assert client_keys.client_key(address, 64) == key


@pytest.mark.parametrize(
    ("counts", "wait"),
    [
        ((0, 0, 1, 7_200_000), 3600),  # spent, read the moment it was set
        ((0, 0, 1, 7_199_000), 3599),
        ((0, 0, 1, 3_600_000), 0),  # its window ends now
        ((1, 1_800_000, 1, 5_400_000), 1800),
        ((2, 1_800_000, 0, 0), 0),  # the last window's two hits weigh one: room for one
    ],
)
def test_a_spent_counter_names_its_wait_even_read_the_moment_it_was_set(counts, wait):
    """The one-trip strategy's counts (Redis): the previous and current windows' counts and
    times to live (ms; the current window's counter lives from one window to two). The current
    window's counter has room when its window ends: read the moment it was set, a whole
    window to wait, not none."""
    before = time.time()
    reset_at, remaining = ratelimit_storage.window_stats(parse("1 per hour"), *counts)
    assert remaining == 0
    assert wait <= reset_at - before <= wait + (time.time() - before)
