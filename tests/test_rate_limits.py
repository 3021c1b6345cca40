"""Rate limits: each policy, what it counts by, its headers, its 429, and what stays outside."""

import os
import re

import pytest
import redis
from limits import parse
from limits.strategies import SlidingWindowCounterRateLimiter

from extensions import limiter
from tests import asserts, factories

REGISTER = "/api/auth/register"
LOGIN = "/api/auth/login"


def _register(client, n, ip="198.51.100.7"):
    return client.post(
        REGISTER,
        json={"email": f"r{n}@example.com", "password": "password-1"},
        headers={"X-Forwarded-For": ip},
    )


def test_register_allows_five_an_hour_per_ip(client):
    for n in range(5):
        assert _register(client, n).status_code == 200
    limited = _register(client, 99)
    body = asserts.problem(limited, 429, "rate-limited")
    assert "register" in body["detail"]
    assert 1 <= int(limited.headers["Retry-After"]) <= 3600
    assert _register(client, 100, ip="198.51.100.8").status_code == 200


def test_limited_requests_are_checked_before_validation(client):
    for n in range(5):
        client.post(REGISTER, json={"email": f"bad{n}"})  # 422s count too
    asserts.problem(client.post(REGISTER, json={"email": "x"}), 429, "rate-limited")


def test_login_counts_per_ip_under_the_auth_policy(make_app):
    client = make_app(RATELIMIT_AUTH="3 per minute").test_client()
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


def test_authenticated_endpoints_share_one_count_per_user(make_app):
    app = make_app(RATELIMIT_AUTH="4 per minute")
    client = app.test_client()
    with app.app_context():
        people = factories.people()
    admin, other = people["admin"][1], people["pro"][1]
    paths = [
        "/api/v1/data/usage",
        "/api/admin/users",
        "/api/v1/ops/health/services",
        "/api/v1/data/catalog",
    ]
    for path in paths:
        assert client.get(path, headers=admin).status_code == 200
    limited = client.get("/api/v1/data/usage", headers=admin)
    asserts.problem(limited, 429, "rate-limited")
    assert int(limited.headers["Retry-After"]) >= 1
    assert client.get("/api/v1/data/usage", headers=other).status_code == 200


def test_rate_limit_headers(client, people):
    response = client.get("/api/v1/data/usage", headers=people["pro"][1])
    headers = response.headers
    assert headers["X-RateLimit-Limit"] == "20"
    assert headers["X-RateLimit-Remaining"] == "19"
    assert int(headers["X-RateLimit-Reset"]) > 1_700_000_000
    assert headers["RateLimit-Policy"] == '"auth";q=20;w=60'
    match = re.fullmatch(r'"auth";r=(\d+);t=(\d+)', headers["RateLimit"])
    assert match and match.group(1) == "19" and 1 <= int(match.group(2)) <= 60
    assert "Retry-After" not in headers


def test_denied_requests_do_not_spend_the_limit(make_app):
    """401 and 403 come first, so they neither count nor carry rate-limit headers."""
    app = make_app(RATELIMIT_AUTH="1 per minute")
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
def test_a_limited_request_costs_one_redis_round_trip(make_app, monkeypatch):
    app = make_app(RATELIMIT_PUBLIC="50 per minute")
    client = app.test_client()
    client.get("/api/picks/today?date=2026-01-01")  # loads the script into Redis once
    sent = []
    original = redis.connection.Connection.send_packed_command

    def counting(connection, command, *args, **kwargs):
        sent.append(command)
        return original(connection, command, *args, **kwargs)

    monkeypatch.setattr(redis.connection.Connection, "send_packed_command", counting)
    response = client.get("/api/picks/today?date=2026-01-01")
    monkeypatch.undo()
    assert response.status_code == 200
    assert len(sent) == 1, sent
    # The headers agree with a fresh read of the same counters by the stock strategy.
    stock = SlidingWindowCounterRateLimiter(limiter.storage)
    window = stock.get_window_stats(parse("50 per minute"), "picks", "ip:127.0.0.1", "public-read")
    assert window.remaining == int(response.headers["X-RateLimit-Remaining"]) == 48
