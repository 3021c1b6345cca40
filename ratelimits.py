"""Rate limits on the request path: one hit per request against the policy's shared counter.

flask-limiter owns the configuration, the storage (memory or Redis) and the strategy; this
module spends them on each request directly. flask-limiter's own per-request machinery (limit
resolution, exemption scopes, context objects) cost more than the rest of a cached answer, for
features the service does not use, so its check is not installed (see :func:`init_app`).

When the storage stops answering, limits fall back to per-process memory until it answers
again (checked at most every ``RECHECK_SECONDS``), and the health report says so. A storage
that answers slowly counts as one that does not answer: every call on Redis gives up after
``RATELIMIT_STORAGE_TIMEOUT`` seconds, once, with no retry.
"""

import logging
import math
import time
from dataclasses import dataclass

from flask import current_app, g
from limits import RateLimitItem, parse
from limits.errors import StorageError
from limits.storage import MemoryStorage
from limits.strategies import STRATEGIES, RateLimiter
from redis.backoff import NoBackoff
from redis.exceptions import RedisError
from redis.retry import Retry

from errors import RateLimited
from extensions import limiter, use_one_trip_strategy

log = logging.getLogger("picks.ratelimits")

#: How often a dead storage is asked whether it answers again.
RECHECK_SECONDS = 5.0


@dataclass
class Counted:
    """What this request was counted against, for its rate-limit headers."""

    policy: str
    item: RateLimitItem
    key: tuple[str, ...]
    strategy: RateLimiter

    def window(self):
        """(reset epoch, remaining) of the counter after this request's hit."""
        return self.strategy.get_window_stats(self.item, *self.key)


class Fallback:
    """The per-process memory strategy used while the configured storage is down."""

    def __init__(self, strategy_name: str):
        self.strategy = STRATEGIES[strategy_name](MemoryStorage())
        self.dead_until = None  # monotonic time of the next check, None while the storage lives

    def active(self) -> bool:
        """Whether the storage is considered down (asking it again when a check is due)."""
        if self.dead_until is None:
            return False
        if time.monotonic() < self.dead_until:
            return True
        if limiter.storage.check():
            log.warning("rate-limit storage answers again; limits are shared once more")
            self.dead_until = None
            return False
        self.dead_until = time.monotonic() + RECHECK_SECONDS
        return True

    def fail(self, error) -> None:
        """Record that the storage failed; limits are per process until it recovers."""
        log.warning("rate-limit storage failed (%s); limits fall back to this process", error)
        self.dead_until = time.monotonic() + RECHECK_SECONDS


def storage_options(config) -> dict:
    """flask-limiter's options for the storage: on Redis, a socket timeout and no retry (redis-py
    retries a timed-out call three times with backoff by default, holding the request)."""
    if not config["RATELIMIT_STORAGE_URI"].startswith(("redis", "rediss")):
        return {}
    seconds = config["RATELIMIT_STORAGE_TIMEOUT"]
    return {
        "socket_timeout": seconds,
        "socket_connect_timeout": seconds,
        "retry": Retry(NoBackoff(), 0),
    }


def init_app(app) -> None:
    """Set up flask-limiter as the owner of storage and strategy, without its request hook."""
    app.config["RATELIMIT_STORAGE_OPTIONS"] = storage_options(app.config)
    # flask-limiter keeps the first app's strategy for every later one; each app has its own.
    limiter._strategy = None
    limiter.init_app(app)
    # flask-limiter evaluates its default and application limits before every request; the
    # service has none (each policy is counted in access.guard), so that check only costs.
    hooks = app.before_request_funcs.get(None, [])
    if limiter._check_request_limit in hooks:  # not installed at all when limits are off
        hooks.remove(limiter._check_request_limit)
    use_one_trip_strategy(limiter)
    app.extensions["rate_fallback"] = Fallback(app.config["RATELIMIT_STRATEGY"])
    app.extensions["rate_items"] = {}


def _item(limit: str) -> RateLimitItem:
    """The parsed limit (``"20 per minute"``), parsed once per process."""
    items = current_app.extensions["rate_items"]
    if limit not in items:
        items[limit] = parse(limit)
    return items[limit]


def _strategy():
    """The configured strategy, or the per-process fallback while the storage is down."""
    fallback = current_app.extensions["rate_fallback"]
    return fallback.strategy if fallback.active() else limiter.limiter


def _on_storage(call):
    """``call(strategy)`` on the current strategy; on the fallback if the storage fails now."""
    strategy = _strategy()
    try:
        return strategy, call(strategy)
    except (StorageError, RedisError) as error:
        current_app.extensions["rate_fallback"].fail(error)
        strategy = current_app.extensions["rate_fallback"].strategy
        return strategy, call(strategy)


def hit(policy: str, limit: str, key: str, *, report: bool = True) -> None:
    """Count one request against ``policy``'s counter for ``key``; RateLimited when over.

    ``report``: this counter is the one the response's rate-limit headers describe.
    """
    if not limiter.enabled:
        return
    item = _item(limit)
    counter = (current_app.config["RATELIMIT_KEY_PREFIX"], key, policy)
    strategy, allowed = _on_storage(lambda strategy: strategy.hit(item, *counter))
    counted = Counted(policy, item, counter, strategy)
    if report:
        g.rate_counted = counted
    if not allowed:
        try:
            reset_at = counted.window()[0]
        except (StorageError, RedisError):  # gone since the hit: the longest wait it can be
            reset_at = time.time() + item.get_expiry()
        raise RateLimited(policy, str(item), seconds_until(reset_at))


def clear(policy: str, limit: str, key: str) -> None:
    """Forget every hit on ``policy``'s counter for ``key`` (a successful login its failures)."""
    if not limiter.enabled:
        return
    item = _item(limit)
    counter = (current_app.config["RATELIMIT_KEY_PREFIX"], key, policy)
    _on_storage(lambda strategy: strategy.clear(item, *counter))


def seconds_until(timestamp) -> int:
    """Whole seconds from now until ``timestamp`` (epoch), rounded up, at least 1."""
    return max(1, math.ceil(timestamp - time.time()))


def headers() -> dict[str, str]:
    """Where this request's caller stands, when it was counted: flask-limiter's ``X-RateLimit-*``
    and the IETF draft's ``RateLimit-Policy`` and ``RateLimit``."""
    counted = g.get("rate_counted")
    if counted is None:
        return {}
    try:
        reset_at, remaining = counted.window()  # a read, except on the one-trip strategy
    except (StorageError, RedisError) as error:
        current_app.extensions["rate_fallback"].fail(error)
        return {}
    amount, window = counted.item.amount, counted.item.get_expiry()
    remaining = max(0, remaining)
    return {
        "X-RateLimit-Limit": str(amount),
        "X-RateLimit-Remaining": str(remaining),
        "X-RateLimit-Reset": str(int(reset_at + 1)),
        "RateLimit-Policy": f'"{counted.policy}";q={amount};w={window}',
        "RateLimit": f'"{counted.policy}";r={remaining};t={seconds_until(reset_at)}',
    }
