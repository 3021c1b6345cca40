"""Rate limits on the request path: one hit per request against the policy's shared counter.

The service owns its limiter outright, with `limits` (:class:`RateLimits`, the singleton
``web.extensions.limiter``): the storage (memory or Redis) from ``RATELIMIT_STORAGE_URI``, the
strategy from ``RATELIMIT_STRATEGY``, and each request's hit spent directly by admission
(:mod:`web.admission`), with no per-request machinery besides. On Redis, the sliding-window
counter learns the window's counts in the hit's own round trip, sent on the serving thread's
own connection (the storages and that strategy: :mod:`web.ratelimit_storage`).

When the storage stops answering, limits fall back to per-process memory until it answers
again (checked at most every ``RECHECK_SECONDS``), and the health report says so. A storage
that answers slowly counts as one that does not answer: every call on Redis gives up after
``RATELIMIT_STORAGE_TIMEOUT`` seconds, once, with no retry.
"""

import logging
import math
import time
from dataclasses import dataclass

from flask import current_app, request
from limits import RateLimitItem, parse
from limits.errors import StorageError
from limits.storage import storage_from_string
from limits.strategies import STRATEGIES, RateLimiter, SlidingWindowCounterRateLimiter
from redis.exceptions import RedisError

from errors import RateLimited
from web.ratelimit_storage import (
    OneTripSlidingWindow,
    SweptMemoryStorage,
    storage_options,
    window_stats,
)

log = logging.getLogger("picks.ratelimits")

#: How often a dead storage is asked whether it answers again.
RECHECK_SECONDS = 5.0


@dataclass
class Counted:
    """What a request was counted against, whether the hit was allowed, and for its rate-limit
    headers ``counts``, the window's counts when the hit itself learnt them (the one-trip
    strategy on Redis)."""

    policy: str
    item: RateLimitItem
    key: tuple[str, ...]
    strategy: RateLimiter
    allowed: bool
    counts: tuple | None = None
    #: What the hit read of the data version's copy on Redis, when it read it, and the version
    #: the request found from it, once found (see :func:`web.versions.current`).
    seen: tuple | None = None
    version: int | None = None

    def window(self):
        """(reset epoch, remaining) of the counter after this request's hit."""
        if self.counts is None:
            return self.strategy.get_window_stats(self.item, *self.key)
        return window_stats(self.item, *self.counts)


class Fallback:
    """The per-process memory strategy used while the configured ``storage`` is down."""

    def __init__(self, strategy_name: str, storage):
        self.strategy = STRATEGIES[strategy_name](SweptMemoryStorage())
        self.storage = storage
        self.dead_until = None  # monotonic time of the next check, None while the storage lives

    def active(self) -> bool:
        """Whether the storage is considered down (asking it again when a check is due)."""
        if self.dead_until is None:
            return False
        if time.monotonic() < self.dead_until:
            return True
        if self.storage.check():
            log.warning("rate-limit storage answers again; limits are shared once more")
            self.dead_until = None
            return False
        self.dead_until = time.monotonic() + RECHECK_SECONDS
        return True

    def fail(self, error) -> None:
        """Record that the storage failed; limits are per process until it recovers."""
        log.warning("rate-limit storage failed (%s); limits fall back to this process", error)
        self.dead_until = time.monotonic() + RECHECK_SECONDS


class RateLimits:
    """The rate limits of the app last set up with :meth:`init_app`, as an extension singleton
    is (``web.extensions.limiter``): whether they are on (``enabled``, which a test may switch),
    the ``storage`` (limits' in-process memory or Redis, from ``RATELIMIT_STORAGE_URI``) and the
    strategy counting on it (``limiter``, from ``RATELIMIT_STRATEGY``: the sliding-window counter
    is :class:`OneTripSlidingWindow`). Each app keeps its own fallback and parsed limits."""

    def __init__(self):
        self.enabled = False
        self.storage = self.limiter = None

    def init_app(self, app) -> None:
        """Open the storage and the strategy ``app``'s configuration names (none with the limits
        off)."""
        config = app.config
        name, uri = config["RATELIMIT_STRATEGY"], config["RATELIMIT_STORAGE_URI"]
        if name not in STRATEGIES:
            raise ValueError(f"RATELIMIT_STRATEGY: no strategy {name!r}: one of {list(STRATEGIES)}")
        options = storage_options(config)
        self.enabled = bool(config["RATELIMIT_ENABLED"])
        self.storage = self.limiter = None
        if self.enabled:
            self.storage = storage_from_string(
                "picks+" + uri if uri.startswith("memory://") else uri, **options
            )
            strategy = STRATEGIES[name]
            if strategy is SlidingWindowCounterRateLimiter:
                strategy = OneTripSlidingWindow
            self.limiter = strategy(self.storage)
        app.extensions.update(
            rate_limits=self, rate_fallback=Fallback(name, self.storage), rate_items={}
        )

    def reset(self) -> None:
        """Forget every count (the tests' fresh start)."""
        if self.storage is not None:
            self.storage.reset()


#: The limiter, unbound until :func:`init_app` (``web.extensions`` names it with the others).
limiter = RateLimits()


def init_app(app) -> None:
    """Set up :data:`limiter` for ``app``."""
    limiter.init_app(app)


def enabled(app) -> bool:
    """Whether ``app`` counts requests against its limits."""
    return app.extensions["rate_limits"].enabled


def _item(app, limit: str) -> RateLimitItem:
    """The parsed limit (``"20 per minute"``), parsed once per process."""
    items = app.extensions["rate_items"]
    if limit not in items:
        items[limit] = parse(limit)
    return items[limit]


def _strategy(app):
    """The configured strategy, or the per-process fallback while the storage is down."""
    fallback = app.extensions["rate_fallback"]
    return fallback.strategy if fallback.active() else app.extensions["rate_limits"].limiter


def _on_storage(app, call):
    """``call(strategy)`` on the current strategy; on the fallback if the storage fails now."""
    strategy = _strategy(app)
    try:
        return strategy, call(strategy)
    except (StorageError, RedisError) as error:
        app.extensions["rate_fallback"].fail(error)
        strategy = app.extensions["rate_fallback"].strategy
        return strategy, call(strategy)


def _hit(strategy, item, counter, version_keys):
    """``(acquired, counts, seen)`` of one hit: the counts when the strategy learns them with
    it, and what it read of the data version's copy at ``version_keys`` (see
    :meth:`OneTripSlidingWindow.hit_counting`)."""
    if isinstance(strategy, OneTripSlidingWindow):
        return strategy.hit_counting(item, *counter, version_keys=version_keys)
    return strategy.hit(item, *counter), None, None


def count(app, policy: str, limit: str, key: str) -> Counted | None:
    """Count one request of ``app`` against ``policy``'s counter for ``key``: what it was
    counted against and whether it is allowed (None with the limits off). Needs no request
    context, so the fast path counts as the full path does. On Redis the hit also reads the
    data version's copy there (:mod:`web.versions`)."""
    if not enabled(app):
        return None
    item = _item(app, limit)
    counter = (app.config["RATELIMIT_KEY_PREFIX"], key, policy)
    shared = app.extensions.get("shared_version")
    version_keys = shared.keys if shared is not None else ()
    strategy, (allowed, counts, seen) = _on_storage(
        app, lambda strategy: _hit(strategy, item, counter, version_keys)
    )
    return Counted(policy, item, counter, strategy, allowed, counts, seen)


#: Where a request keeps the counter its rate-limit headers describe: in its WSGI environ, the
#: request's own (set by admission for the access rule's counter, by :func:`hit` for another).
REPORTED = "picks.rate_reported"


def refused(counted: Counted) -> RateLimited:
    """The 429 of a hit ``counted`` refused, with how long until the counter has room."""
    try:
        reset_at = counted.window()[0]
    except (StorageError, RedisError):  # gone since the hit: the longest wait it can be
        reset_at = time.time() + counted.item.get_expiry()
    return RateLimited(counted.policy, str(counted.item), seconds_until(reset_at))


def hit(policy: str, limit: str, key: str, *, report: bool = True) -> None:
    """Count the current request against ``policy``'s counter for ``key`` besides its access
    rule's (a sign-in against its account's failures); RateLimited when over.

    ``report``: this counter is the one the response's rate-limit headers describe; a counter
    that refuses the request is described either way, so a 429's headers name what refused it.
    """
    counted = count(current_app._get_current_object(), policy, limit, key)
    if counted is None:
        return
    if report or not counted.allowed:
        request.environ[REPORTED] = counted
    if not counted.allowed:
        raise refused(counted)


def clear(policy: str, limit: str, key: str) -> None:
    """Forget every hit on ``policy``'s counter for ``key`` (a successful login its failures)."""
    app = current_app._get_current_object()
    if not enabled(app):
        return
    item = _item(app, limit)
    counter = (app.config["RATELIMIT_KEY_PREFIX"], key, policy)
    _on_storage(app, lambda strategy: strategy.clear(item, *counter))


def seconds_until(timestamp) -> int:
    """Whole seconds from now until ``timestamp`` (epoch), rounded up, at least 1."""
    return max(1, math.ceil(timestamp - time.time()))


def headers() -> dict[str, str]:
    """Where the current request's caller stands, when it was counted (see
    :func:`header_items`)."""
    counted = request.environ.get(REPORTED)
    if counted is None:
        return {}
    return dict(header_items(current_app, counted))


def header_items(app, counted: Counted | None) -> list[tuple[str, str]]:
    """``X-RateLimit-Limit``, ``-Remaining`` and ``-Reset``, and the IETF draft's
    ``RateLimit-Policy`` and ``RateLimit``, for a request ``counted`` so (none when it was not
    counted, or the storage fails to say)."""
    if counted is None:
        return []
    try:
        reset_at, remaining = counted.window()  # a read, except on the one-trip strategy
    except (StorageError, RedisError) as error:
        app.extensions["rate_fallback"].fail(error)
        return []
    amount, window = counted.item.amount, counted.item.get_expiry()
    remaining = max(0, remaining)
    return [
        ("X-RateLimit-Limit", str(amount)),
        ("X-RateLimit-Remaining", str(remaining)),
        ("X-RateLimit-Reset", str(int(reset_at + 1))),
        ("RateLimit-Policy", f'"{counted.policy}";q={amount};w={window}'),
        ("RateLimit", f'"{counted.policy}";r={remaining};t={seconds_until(reset_at)}'),
    ]


def storage_health() -> tuple[str, str]:
    """``(status, detail)`` of the rate-limit storage, for the health report."""
    limits = current_app.extensions["rate_limits"]
    uri = current_app.config["RATELIMIT_STORAGE_URI"].split("://", 1)[0]
    if not limits.enabled:
        return "degraded", "rate limiting is disabled"
    if limits.storage.check():
        return "ok", f"{uri} storage"
    return "down", f"{uri} storage does not answer; limits fall back to per-process memory"
