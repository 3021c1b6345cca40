"""The rate limits' storages and the one-trip strategy: the in-process memory that sweeps its
expired counters itself, one Redis connection per serving thread, and the sliding-window
counter that learns the window's counts (and the data version's copy, :mod:`web.versions`) in
the hit's own round trip, with its Lua script; limits' options for opening the storage."""

import bisect
import math
import os
import threading
import time
import weakref

from limits import WindowStats
from limits.storage import MemoryStorage, RedisStorage
from limits.storage.memory import Entry
from limits.strategies import SlidingWindowCounterRateLimiter
from redis.backoff import NoBackoff
from redis.connection import ConnectionPool
from redis.exceptions import NoScriptError, RedisError, ResponseError
from redis.retry import Retry

#: How often the in-process storage sweeps out expired counters.
SWEEP_SECONDS = 1.0


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
        (the arguments of :func:`window_stats`; None on other storages, which read them for
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


def window_stats(item, previous_count, previous_ttl, current_count, current_ttl) -> WindowStats:
    """(reset epoch, remaining) from the sliding window's counts, as limits computes it from a
    fresh read of the same counters, but for the current window's: it lives from one to two
    windows (:data:`ACQUIRE_AND_COUNT` sets it for two and renames it below one), so it has
    room when its own window ends, its time to live less one window. limits takes the remainder
    of a division by the window, which says no wait at all for a counter read the moment it
    was set (two whole windows): a 429 with ``Retry-After: 1`` for an hour's limit."""
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
        current_reset_in = max(current_expires_in - expiry, 0.0)
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
