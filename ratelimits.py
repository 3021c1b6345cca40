"""Rate limits on the request path: one hit per request against the policy's shared counter.

flask-limiter owns the configuration, the storage (memory or Redis) and the strategy; this
module spends them on each request directly. flask-limiter's own per-request machinery (limit
resolution, exemption scopes, context objects) cost more than the rest of a cached answer, for
features the service does not use, so its check is not installed (see :func:`init_app`).

When the storage stops answering, limits fall back to per-process memory until it answers
again (checked at most every ``RECHECK_SECONDS``), and the health report says so.
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
from redis.exceptions import RedisError

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


def init_app(app) -> None:
    """Set up flask-limiter as the owner of storage and strategy, without its request hook."""
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


def hit(policy: str, limit: str, key: str) -> None:
    """Count one request against ``policy``'s counter for ``key``; RateLimited when over."""
    if not limiter.enabled:
        return
    item = _item(limit)
    counter = (current_app.config["RATELIMIT_KEY_PREFIX"], key, policy)
    fallback = current_app.extensions["rate_fallback"]
    strategy = fallback.strategy if fallback.active() else limiter.limiter
    try:
        allowed = strategy.hit(item, *counter)
    except (StorageError, RedisError) as error:
        fallback.fail(error)
        strategy = fallback.strategy
        allowed = strategy.hit(item, *counter)
    g.rate_counted = Counted(policy, item, counter, strategy)
    if not allowed:
        retry_after = seconds_until(g.rate_counted.window()[0])
        raise RateLimited(policy, str(item), retry_after)


def seconds_until(timestamp) -> int:
    """Whole seconds from now until ``timestamp`` (epoch), rounded up, at least 1."""
    return max(1, math.ceil(timestamp - time.time()))


def headers() -> dict[str, str]:
    """Where this request's caller stands, when it was counted: flask-limiter's ``X-RateLimit-*``
    and the IETF draft's ``RateLimit-Policy`` and ``RateLimit``."""
    counted = g.get("rate_counted")
    if counted is None:
        return {}
    reset_at, remaining = counted.window()
    amount, window = counted.item.amount, counted.item.get_expiry()
    remaining = max(0, remaining)
    return {
        "X-RateLimit-Limit": str(amount),
        "X-RateLimit-Remaining": str(remaining),
        "X-RateLimit-Reset": str(int(reset_at + 1)),
        "RateLimit-Policy": f'"{counted.policy}";q={amount};w={window}',
        "RateLimit": f'"{counted.policy}";r={remaining};t={seconds_until(reset_at)}',
    }
