"""Rate limits on the request path: one hit per request against the policy's shared counter.

The service owns its limiter outright, with `limits` (:class:`RateLimits`, the singleton
``web.extensions.limiter``): the storage (memory or Redis) from ``RATELIMIT_STORAGE_URI``, the
strategy from ``RATELIMIT_STRATEGY``, and each request's hit spent directly by admission
(:mod:`web.admission`), with no per-request machinery besides. On Redis, the sliding-window
counter learns the window's counts in the hit's own round trip, sent on the serving thread's
own connection.

When the storage stops answering, limits fall back to per-process memory until it answers
again (checked at most every ``RECHECK_SECONDS``), and the health report says so. A storage
that answers slowly counts as one that does not answer: every call on Redis gives up after
``RATELIMIT_STORAGE_TIMEOUT`` seconds, once, with no retry.
"""

import bisect
import ipaddress
import logging
import math
import os
import re
import socket
import threading
import time
import weakref
from dataclasses import dataclass

from flask import current_app, request
from limits import RateLimitItem, WindowStats, parse
from limits.errors import StorageError
from limits.storage import MemoryStorage, RedisStorage, storage_from_string
from limits.storage.memory import Entry
from limits.strategies import STRATEGIES, RateLimiter, SlidingWindowCounterRateLimiter
from redis.backoff import NoBackoff
from redis.connection import ConnectionPool
from redis.exceptions import NoScriptError, RedisError, ResponseError
from redis.retry import Retry

from errors import RateLimited

log = logging.getLogger("picks.ratelimits")

#: How often a dead storage is asked whether it answers again.
RECHECK_SECONDS = 5.0

#: How often the in-process storage sweeps out expired counters.
SWEEP_SECONDS = 1.0


#: The longest address string counted as given when it is no address at all (the proxy in front
#: reported something else): longer ones are cut, so no counter's key grows without bound.
MAX_UNPARSED_ADDRESS = 64


#: The parts of an address ``inet_aton`` reads: one to four numbers, decimal, octal or hex.
CLASSIC_IPV4 = re.compile(r"(?:0[xX][0-9a-fA-F]+|[0-9]+)(?:\.(?:0[xX][0-9a-fA-F]+|[0-9]+)){0,3}")


def client_key(address: str | None, ipv6_prefix: int) -> str:
    """The rate-limit counter of a client at ``address`` (``REMOTE_ADDR``; None counts as
    127.0.0.1): every policy counting by address, on the full path and the fast path, keys on it.

    One client, one key. An address is read in one spelling (``ipaddress``'s: leading zeros and
    letter case gone; IPv4's classic spellings, ``127.1`` or octal, read as the address they
    name), without the brackets, port or zone (``%eth0``) a proxy may report with it;
    an IPv4-mapped IPv6 address (``::ffff:192.0.2.1``) counts as its IPv4 address; and an IPv6
    address counts by its network of ``ipv6_prefix`` bits (``RATELIMIT_IPV6_PREFIX``, 64: what
    one subscriber is given), since a client holding a /64 may send from any address in it.
    """
    text = (address or "127.0.0.1").strip()
    parsed = _address(text)
    if parsed is None:
        return f"ip:{text[:MAX_UNPARSED_ADDRESS]}"
    if parsed.version == 6 and parsed.ipv4_mapped is not None:
        parsed = parsed.ipv4_mapped
    if parsed.version == 4:
        return f"ip:{parsed}"
    network = ipaddress.IPv6Network((int(parsed), ipv6_prefix), strict=False)
    return f"ip:{network}"


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """``text`` as an address (brackets, a port and a zone dropped), or None when it is none."""
    if text.startswith("["):  # [2001:db8::1] or [2001:db8::1]:443
        text, closed, _port = text[1:].partition("]")
        if not closed:
            return None
    elif text.count(":") == 1:  # 192.0.2.1:443
        text = text.partition(":")[0]
    text = text.partition("%")[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return _classic_ipv4(text)


def _classic_ipv4(text: str) -> ipaddress.IPv4Address | None:
    """An IPv4 address in one of the spellings C's ``inet_aton`` reads and ``ipaddress`` does
    not (``127.1``, octal ``0177.0.0.1``, hex ``0x7f.0.0.1``, one number ``2130706433``), which
    a network stack takes for the same host; None for anything else."""
    if not CLASSIC_IPV4.fullmatch(text):
        return None
    try:
        return ipaddress.IPv4Address(socket.inet_aton(text))
    except OSError:
        return None


class SweptMemoryStorage(MemoryStorage):
    """limits' in-process storage (``memory://``), sweeping out expired counters at most once
    every ``SWEEP_SECONDS`` in the thread that counts, rather than starting a timer thread up to
    every 10 ms as limits' own does: starting a thread cost more than the rest of a cached
    answer. Counters expire when read either way; the sweep only frees their memory.

    Its three writes (:meth:`incr`, :meth:`decr`, :meth:`acquire_entry`) are limits' own, on the
    storage's public counters, less the timer. Registered with limits as ``picks+memory://``,
    which :class:`RateLimits` opens for a configured ``memory://``.
    """

    STORAGE_SCHEME = ["picks+memory"]

    def __init__(self, uri=None, **options):
        super().__init__(uri, **options)
        self.next_sweep = time.monotonic() + SWEEP_SECONDS

    def sweep(self) -> None:
        """Drop expired counters and entries, at most once every ``SWEEP_SECONDS``."""
        if time.monotonic() < self.next_sweep:
            return
        self.next_sweep = time.monotonic() + SWEEP_SECONDS
        now = time.time()
        for key in list(self.events):
            with self.locks[key]:
                events = self.events.get(key, [])  # newest first
                del events[bisect.bisect_left(events, -now, key=lambda event: -event.expiry) :]
                if not events:
                    self.events.pop(key, None)
                    self.locks.pop(key, None)
        for key in list(self.expirations):
            if self.expirations.get(key, now) <= now:
                self.storage.pop(key, None)
                self.expirations.pop(key, None)
                self.locks.pop(key, None)

    def incr(self, key: str, expiry: float, amount: int = 1) -> int:
        self.get(key)  # drops the counter if it expired
        self.sweep()
        with self.locks[key]:
            self.storage[key] += amount
            if self.storage[key] == amount:
                self.expirations[key] = time.time() + expiry
        return self.storage.get(key, 0)

    def decr(self, key: str, amount: int = 1) -> int:
        self.get(key)
        self.sweep()
        with self.locks[key]:
            self.storage[key] = max(self.storage[key] - amount, 0)
        return self.storage.get(key, 0)

    def acquire_entry(self, key: str, limit: int, expiry: int, amount: int = 1) -> bool:
        if amount > limit:
            return False
        self.sweep()
        with self.locks[key]:
            events = self.events.setdefault(key, [])
            entry = events[limit - amount] if len(events) > limit - amount else None
            if entry is not None and entry.atime >= time.time() - expiry:
                return False
            events[:0] = [Entry(expiry)] * amount
            return True


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
        return _window_stats(self.item, *self.counts)


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


#: limits' acquire script for the sliding-window counter, returning the window's counts with the
#: verdict: {acquired, previous count, previous TTL ms, current count, current TTL ms}; given
#: the data version's three keys too (see :mod:`web.versions`), what they hold follows: the
#: copy (or nil), how many changes are pending, the generation (or nil).
ACQUIRE_AND_COUNT = """
local function reply(counts)
    if #KEYS == 5 then
        counts[6] = redis.call('get', KEYS[3])
        counts[7] = redis.call('zcard', KEYS[4])
        counts[8] = redis.call('get', KEYS[5])
    end
    return counts
end
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
    return reply({0, previous_count, previous_ttl, current_count, current_ttl})
end
if redis.call('exists', KEYS[2]) == 1 then
    current_count = redis.call('incrby', KEYS[2], amount)
else
    redis.call('set', KEYS[2], amount, 'PX', expiry * 2)
    current_count = amount
    current_ttl = expiry * 2
end
return reply({1, previous_count, previous_ttl, current_count, current_ttl})
"""


#: How long a thread's Redis connection may sit unused before its next call first asks whether
#: the server closed it meanwhile (a restart, its idle ``timeout``, a proxy's): one poll of the
#: socket after a pause, none under load.
IDLE_CHECK_SECONDS = 1.0


class _Held:
    """One thread's connection, given back to the pool (``give_back``) when it fails or when
    the thread ends, its thread-local data going with it."""

    __slots__ = ("__weakref__", "connection", "give_back", "pid", "used")


def _give_back(pool, connection) -> None:
    connection.disconnect()
    pool.release(connection)


def _closed(connection) -> bool:
    """Whether the server closed ``connection``, or left data on it, while it sat unused."""
    try:
        return connection.can_read()
    except RedisError:
        return True


class ThreadConnections:
    """One Redis connection per serving thread, taken from the pool at its first call and kept.

    redis-py's client checks a connection out of its pool and back in around every command: a
    lock, a poll of the socket for stray data, bookkeeping for its metrics: on a cached answer,
    about 15 % of the rate two workers serve (measured in CHANGELOG.md, 2026-11-24). A thread's
    own connection needs none of it: it is only ever used by that thread, one command and its
    whole reply at a time. What the check-out did that still matters is done here: a connection
    unused for ``IDLE_CHECK_SECONDS`` is polled first and, if the server closed it, connected
    again; one marked to reconnect (a server's maintenance notice) is too. A connection that
    fails (a timeout, a reset) is closed and given back, and the thread's next call takes
    another; so is the connection of a thread that ends. A forked child takes its own, never
    its parent's. So each process holds one connection per serving thread, besides the pool's
    (whose 100 connections at most they count against).
    """

    def __init__(self, pool):
        self.pool = pool
        self.local = threading.local()

    def _held(self) -> _Held:
        """This thread's connection, taken from the pool if it has none (or its parent's)."""
        held = getattr(self.local, "held", None)
        if held is None or held.pid != os.getpid():
            held = _Held()
            held.connection, held.pid, held.used = self.pool.get_connection(), os.getpid(), 0.0
            held.give_back = weakref.finalize(held, _give_back, self.pool, held.connection)
            held.give_back.atexit = False
            self.local.held = held
        return held

    def call(self, *command):
        """The reply to one command; an error reply (``ResponseError``) leaves the connection
        in use, any other failure gives it back."""
        held = self._held()
        connection, now = held.connection, time.monotonic()
        try:
            if connection.should_reconnect() or (
                now - held.used >= IDLE_CHECK_SECONDS and _closed(connection)
            ):
                connection.disconnect()  # the send connects again
            connection.send_command(*command)
            return connection.read_response()
        except ResponseError:
            raise  # the whole reply was read: the connection is in step
        except BaseException:
            self.local.held = None
            held.give_back()
            raise
        finally:
            held.used = now


def window_keys(storage, key: str) -> tuple[str, str]:
    """The sliding window's previous and current counters of ``key`` on a Redis ``storage``,
    laid out as limits lays them out (``{key}/-1`` and ``{key}``, braced so a Cluster keeps them
    on one node, under the storage's prefix), so its stock reads and resets see the counters
    the one-trip script counts in."""
    current = f"{{{key}}}"
    return storage.prefixed_key(f"{current}/-1"), storage.prefixed_key(current)


class OneTripSlidingWindow(SlidingWindowCounterRateLimiter):
    """The sliding-window counter, learning the window's counts in the hit's own round trip on
    Redis, so the rate-limit headers need no second read: one round trip per request, on the
    serving thread's own connection where the storage's client is redis-py's with a connection
    pool, one server or Sentinel's (see :class:`ThreadConnections`). A Redis Cluster's client
    routes each call itself, and a Valkey client has a pool of its own kind: both send the
    script as redis-py's ``Script`` does.

    Other storages (in-process memory) keep the stock behaviour, where a read costs nothing.
    """

    def __init__(self, storage):
        super().__init__(storage)
        self.script = self.connections = None
        if isinstance(storage, RedisStorage):
            client = storage.get_connection()
            self.script = client.register_script(ACQUIRE_AND_COUNT)
            pool = getattr(client, "connection_pool", None)
            if isinstance(pool, ConnectionPool):
                self.connections = ThreadConnections(pool)

    def hit_counting(self, item, *identifiers, cost=1, version_keys=()):
        """``(acquired, counts, seen)``: the hit and, on Redis, the window's counts it learnt
        (the arguments of :func:`_window_stats`; None on other storages, which read them for
        free) and, given ``version_keys``, what it read of the data version's copy (the
        arguments of :meth:`web.versions.SharedVersion.current`), read on a thread's own
        connection only: a Cluster client's script takes the limit's own keys alone (None)."""
        if self.script is None:
            return super().hit(item, *identifiers, cost=cost), None, None
        keys = list(window_keys(self.storage, item.key_for(*identifiers)))
        arguments = [item.amount, item.get_expiry(), cost]
        if self.connections is None:
            acquired, *counts = self.script(keys, arguments)
        else:
            acquired, *counts = self._evalsha([*keys, *version_keys], arguments)
        return bool(acquired), tuple(counts[:4]), tuple(counts[4:]) or None

    def _evalsha(self, keys, arguments):
        """The script's reply on this thread's connection, loading it first where the server
        does not know it yet (a new or restarted server, a ``SCRIPT FLUSH``)."""
        command = ("EVALSHA", self.script.sha, len(keys), *keys, *arguments)
        try:
            return self.connections.call(*command)
        except NoScriptError:
            self.connections.call("SCRIPT", "LOAD", self.script.script)
            return self.connections.call(*command)


def _window_stats(item, previous_count, previous_ttl, current_count, current_ttl) -> WindowStats:
    """(reset epoch, remaining) from the sliding window's counts, as limits computes it from a
    fresh read of the same counters."""
    previous_expires_in, current_expires_in = previous_ttl / 1000, current_ttl / 1000
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


def storage_options(config) -> dict:
    """limits' options for the storage: on Redis, a socket timeout and no retry (redis-py
    retries a timed-out call three times with backoff by default, holding the request)."""
    if not config["RATELIMIT_STORAGE_URI"].startswith(("redis", "rediss")):
        return {}
    seconds = config["RATELIMIT_STORAGE_TIMEOUT"]
    return {
        "socket_timeout": seconds,
        "socket_connect_timeout": seconds,
        "retry": Retry(NoBackoff(), 0),
    }


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
