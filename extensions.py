"""The unbound extension singletons: the API (documenting problem+json), JWT and the limiter."""

import http
import math
import time
from pathlib import Path

from flask import current_app, g, has_request_context, request
from flask_jwt_extended import JWTManager
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from flask_smorest import Api
from limits import WindowStats
from limits.storage import RedisStorage
from limits.strategies import SlidingWindowCounterRateLimiter

from schemas.common import ProblemSchema

PROBLEM_JSON = "application/problem+json"

DESCRIPTION = (Path(__file__).parent / "docs" / "openapi.md").read_text(encoding="utf-8")

RETRY_AFTER = {
    "description": "Whole seconds to wait before trying again (at least 1).",
    "schema": {"type": "integer", "minimum": 1},
}


class ProblemApi(Api):
    """flask-smorest's Api, documenting every error as problem+json and 401 as a bare challenge."""

    ERROR_SCHEMA = ProblemSchema

    def _register_responses(self):
        for status in http.HTTPStatus:
            if status < 400:
                continue
            self.spec.components.response(status.name, error_response(status), lazy=True)
        self.spec.components.response(
            self.DEFAULT_ERROR_RESPONSE_NAME,
            error_response(
                http.HTTPStatus.INTERNAL_SERVER_ERROR,
                "Problem details: `internal-error` (500), `service-unavailable` (503, with "
                "`Retry-After`).",
            ),
            lazy=True,
        )


def error_response(status, description=None):
    """The OpenAPI response object for an error status."""
    if status == http.HTTPStatus.UNAUTHORIZED:
        return {
            "description": "Missing, invalid or expired token, or wrong credentials at login. "
            "Empty body.",
            "headers": {
                "WWW-Authenticate": {
                    "description": '`Bearer`, or `Bearer error="invalid_token"` when a token '
                    "was sent but is not valid.",
                    "schema": {"type": "string"},
                }
            },
        }
    response = {
        "description": description or status.phrase,
        "content": {PROBLEM_JSON: {"schema": ProblemSchema}},
    }
    if status in (http.HTTPStatus.TOO_MANY_REQUESTS, http.HTTPStatus.SERVICE_UNAVAILABLE):
        response["headers"] = {"Retry-After": RETRY_AFTER}
    return response


#: limits' acquire script for the sliding-window counter, returning the window's counts with the
#: verdict: {acquired, previous count, previous TTL ms, current count, current TTL ms}.
ACQUIRE_AND_COUNT = """
local limit = tonumber(ARGV[1])
local expiry = tonumber(ARGV[2]) * 1000
local amount = tonumber(ARGV[3])
local current_ttl = tonumber(redis.call('pttl', KEYS[2]))
if current_ttl > 0 and current_ttl < expiry then
    redis.call('rename', KEYS[2], KEYS[1])
    redis.call('set', KEYS[2], 0, 'PX', current_ttl + expiry)
end
local previous_count = tonumber(redis.call('get', KEYS[1])) or 0
local previous_ttl = math.max(tonumber(redis.call('pttl', KEYS[1])) or 0, 0)
local current_count = tonumber(redis.call('get', KEYS[2])) or 0
current_ttl = math.max(tonumber(redis.call('pttl', KEYS[2])) or 0, 0)
local weighted = math.floor(previous_count * previous_ttl / expiry) + current_count
if amount > limit or weighted + amount > limit then
    return {0, previous_count, previous_ttl, current_count, current_ttl}
end
if redis.call('exists', KEYS[2]) == 1 then
    current_count = redis.call('incrby', KEYS[2], amount)
else
    redis.call('set', KEYS[2], amount, 'PX', expiry * 2)
    current_count = amount
    current_ttl = expiry * 2
end
return {1, previous_count, previous_ttl, current_count, current_ttl}
"""


class OneTripSlidingWindow(SlidingWindowCounterRateLimiter):
    """The sliding-window counter, learning the window's counts in the hit's own round trip on
    Redis, so the rate-limit headers need no second read: one round trip per request.

    Other storages (in-process memory) keep the stock behaviour, where a read costs nothing.
    """

    def __init__(self, storage):
        super().__init__(storage)
        self.script = None
        if isinstance(storage, RedisStorage):
            self.script = storage.get_connection().register_script(ACQUIRE_AND_COUNT)

    def hit(self, item, *identifiers, cost=1):
        if self.script is None or not has_request_context():
            return super().hit(item, *identifiers, cost=cost)
        key = item.key_for(*identifiers)
        # The storage's own key layout, so stock reads and resets see the same counters.
        current = self.storage.prefixed_key(self.storage._current_window_key(key))
        previous = self.storage.prefixed_key(self.storage._previous_window_key(key))
        acquired, *window = self.script([previous, current], [item.amount, item.get_expiry(), cost])
        g.setdefault("rate_windows", {})[key] = window
        return bool(acquired)

    def get_window_stats(self, item, *identifiers):
        key = item.key_for(*identifiers)
        window = g.get("rate_windows", {}).get(key) if has_request_context() else None
        if window is None:
            return super().get_window_stats(item, *identifiers)
        previous_count, previous_ttl, current_count, current_ttl = window
        previous_expires_in, current_expires_in = previous_ttl / 1000, current_ttl / 1000
        # As limits computes it from a fresh read of the same counters.
        expiry = item.get_expiry()
        weighted = previous_count * previous_expires_in / expiry + current_count
        remaining = max(0, item.amount - math.floor(weighted))
        now = time.time()
        if not (previous_count or current_count):
            return WindowStats(now, remaining)
        previous_reset_in = current_reset_in = math.inf
        if previous_count:
            previous_reset_in = previous_expires_in % (expiry / previous_count)
        if current_count:
            current_reset_in = current_expires_in % expiry
        return WindowStats(now + min(previous_reset_in, current_reset_in), remaining)


def use_one_trip_strategy(extension: Limiter) -> None:
    """Swap the initialised limiter's sliding-window counter for :class:`OneTripSlidingWindow`.

    flask-limiter builds its strategy from a fixed table, so the swap happens after
    ``init_app``; the in-memory fallback keeps the stock strategy.
    """
    if isinstance(extension._limiter, SlidingWindowCounterRateLimiter):
        extension._limiter = OneTripSlidingWindow(extension.storage)


api = ProblemApi(
    spec_kwargs={
        "info": {"description": DESCRIPTION},
        "servers": [{"url": "/", "description": "This deployment"}],
    }
)
jwt = JWTManager()
limiter = Limiter(key_func=get_remote_address)


def base_url() -> str:
    """The base of every link the service writes: ``PUBLIC_BASE_URL`` when set, else the
    request's own scheme and host when that host is one of ``ALLOWED_HOSTS``, else ``""`` (links
    are then relative, which a client resolves against the URL it asked, the same place).

    The ``Host`` header and, behind a trusted proxy, ``X-Forwarded-Host`` and ``-Proto`` are
    whatever the client sent: written into a problem type, the index or a cached prediction page
    they would point readers (or a shared cache's later readers) wherever the sender chose.
    """
    configured = current_app.config["PUBLIC_BASE_URL"]
    if configured:
        return configured.rstrip("/")
    host = request.host.lower()
    name = host[1:].partition("]")[0] if host.startswith("[") else host.partition(":")[0]
    if request.scheme in ("http", "https") and name in current_app.config["ALLOWED_HOSTS"]:
        return request.host_url.rstrip("/")
    return ""


def problem_type(name: str) -> str:
    """The URI naming a problem type: ``{base_url}/problems/<name>``."""
    return f"{base_url()}/problems/{name}"
