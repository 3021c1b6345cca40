"""The data version copied to Redis, read in the rate-limit hit's own round trip: on Redis, a
cached answer learns whether it is still current without a database query.

The database holds the data version (:class:`models.versions.DataVersion`), moved in the
transaction of every change as it commits (:class:`store.versioning.Versioning`), once
:func:`init_app` has switched the watch on. With the rate limits on one
Redis server (or Sentinel's), Redis holds a copy of it, which every process reads with each hit
(:class:`web.ratelimit_storage.OneTripSlidingWindow`):

- **a writer says so before and after**: the database marks a change pending before it writes
  the next version (a token in a sorted set) and, once its transaction has ended, committed or
  rolled back, takes the token out and drops the copy (:meth:`SharedVersion.changing` and
  :meth:`~SharedVersion.changed`). While any change is pending, readers ask the database, so a
  request that begins after a commit never reads the version from before it, exactly as when
  every request asked the database;
- **a reader fills it**: one that finds no copy reads the database and leaves what it read,
  unless a change began meanwhile (a generation counter every change bumps says so);
- **it lives ``VALUE_SECONDS``**: a change Redis could not be told of (it did not answer the
  writer) is seen at most that late; a token whose transaction never said it ended (its
  process died) keeps readers on the database for ``PENDING_SECONDS``.

The copy is kept per database (its keys carry the database's host, port and name, or an SQLite
file's real path), so deployments sharing a Redis never read each other's; every process of one
deployment must name its database the same way, as a PaaS's one ``DATABASE_URL`` does.

When Redis fails, the rate limits fall back to the process's memory and readers ask the database
again (:func:`current`). A Redis Cluster client (whose keys must share a slot with the limit's)
and the in-process storage keep no copy: every request asks the database.
"""

import hashlib
import logging
import os
import time
import uuid
from urllib.parse import urlparse

from limits.storage import RedisClusterStorage, RedisStorage, storage_from_string
from redis.exceptions import RedisError

from models.versions import data_version, watch_data_version
from store.database import db
from web.ratelimit_storage import storage_options

log = logging.getLogger("picks.versions")

#: How long the copy lives once read from the database (see the module's docstring).
VALUE_SECONDS = 10

#: How long a change's token counts as pending when its transaction never says it ended (its
#: process died, or lost Redis, before its commit or rollback): readers ask the database
#: meanwhile. Far longer than any transaction: one still open when its token lapses is seen
#: late by the time its second word takes (``VALUE_SECONDS`` should that fail).
PENDING_SECONDS = 15 * 60

#: How long a process's writers leave Redis alone after it failed one of them.
RETRY_SECONDS = 5.0

#: KEYS: the copy, the pending tokens, the generation; ARGV: the token, how long it may pend
#: (ms). Tokens expire by the server's clock, so the writers' clocks need not agree.
CHANGING = """
if redis.replicate_commands then redis.replicate_commands() end  -- before TIME on Redis < 7
local time = redis.call('time')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('zremrangebyscore', KEYS[2], '-inf', now)
redis.call('zadd', KEYS[2], now + tonumber(ARGV[2]), ARGV[1])
redis.call('pexpire', KEYS[2], ARGV[2])
redis.call('del', KEYS[1])
return redis.call('incr', KEYS[3])
"""

#: KEYS as CHANGING's; ARGV: the token.
CHANGED = """
redis.call('zrem', KEYS[2], ARGV[1])
redis.call('del', KEYS[1])
return redis.call('incr', KEYS[3])
"""

#: KEYS as CHANGING's; ARGV: the generation the reader saw, the version it read, the copy's ms.
FILL = """
if (redis.call('get', KEYS[3]) or '0') ~= ARGV[1] or redis.call('zcard', KEYS[2]) ~= 0 then
    return 0
end
redis.call('set', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
"""


def database_name(url: str) -> str | None:
    """What names ``url``'s database for every process using it: an SQLite file's real path, or
    the server's host, port (PostgreSQL's 5432 unless given) and database; None for an
    in-memory SQLite (each process its own)."""
    parsed = urlparse(url)
    if parsed.scheme.startswith("sqlite"):
        path = parsed.path[1:]
        return None if path in ("", ":memory:") else os.path.realpath(path)
    return f"{(parsed.hostname or '').lower()}:{parsed.port or 5432}{parsed.path}"


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class SharedVersion:
    """The copy of one database's data version on the rate limits' Redis (see the module)."""

    def __init__(self, storage, name: str, prefix: str):
        tag = hashlib.sha256(name.encode()).hexdigest()[:16]
        base = storage.prefixed_key(f"{prefix}/data-version/{tag}")
        #: The keys a reader's hit appends to its own: the copy, the pending set, the generation.
        self.keys = (f"{base}/value", f"{base}/pending", f"{base}/generation")
        client = storage.get_connection()
        self.changing_script = client.register_script(CHANGING)
        self.changed_script = client.register_script(CHANGED)
        self.fill_script = client.register_script(FILL)
        self.quiet_until = 0.0  # monotonic: writers skip Redis until then, after a failure

    def current(self, seen) -> int:
        """The data version, from ``seen`` (what a hit read: the copy or None, how many changes
        are pending, the generation or None) when it holds one and nothing is pending, else the
        database's, which is then left in Redis for the next readers."""
        value, pending, generation = seen
        if value is not None and pending == 0:
            return int(value)
        version = data_version()
        if pending == 0:
            seen_generation = "0" if generation is None else _text(generation)
            try:
                self.fill_script(self.keys, (seen_generation, version, VALUE_SECONDS * 1000))
            except RedisError as error:  # the next reader fills it
                log.debug("the data version's copy was not filled: %s", error)
        return version

    def changing(self) -> str:
        """Mark a change pending (before its new version is written); its token."""
        token = uuid.uuid4().hex
        self._tell(self.changing_script, token, PENDING_SECONDS * 1000)
        return token

    def changed(self, token: str) -> None:
        """The change ``token`` marked has ended (committed or rolled back): drop the copy and
        the token."""
        self._tell(self.changed_script, token)

    def _tell(self, script, *arguments) -> None:
        """Run a writer's ``script``. Never raises (the change commits either way, and after its
        commit an error would make it look failed); a failure is logged, and for
        ``RETRY_SECONDS`` this process's writers no longer wait on Redis: either way the copy
        lags by ``VALUE_SECONDS`` at most."""
        if time.monotonic() < self.quiet_until:
            return
        try:
            script(self.keys, arguments)
        except Exception as error:  # noqa: BLE001 - see above
            self.quiet_until = time.monotonic() + RETRY_SECONDS
            log.warning(
                "the data version's copy on Redis was not told of a change (%s): other "
                "processes may serve answers older than it for up to %s s",
                error,
                VALUE_SECONDS,
            )


def current(app, counted) -> int:
    """The data version for a request whose rate-limit hit was ``counted``
    (:class:`web.ratelimits.Counted`, or None): from what the hit read of the copy on Redis,
    found once per hit, so a request the fast path hands to the full path does not ask twice;
    the database's when the hit read nothing."""
    shared = app.extensions.get("shared_version")
    if shared is None or counted is None or counted.seen is None:
        return data_version()
    if counted.version is None:
        counted.version = shared.current(counted.seen)
    return counted.version


def init_app(app) -> None:
    """Have the app's database keep the data version (:func:`models.versions.watch_data_version`),
    each change told to its copy on Redis when the rate limits are on one Redis server or
    Sentinel's, whether or not this process counts them (a worker that serves nothing may run
    without: the storage is then opened with the rate limits' options); the rate limits'
    strategy (None when they are off) reads the copy with each hit when it holds a connection
    per thread. After :func:`web.ratelimits.init_app`, whose strategy it reads."""
    strategy = app.extensions["rate_limits"].limiter
    options = storage_options(app.config)
    name = database_name(app.config["DATABASE_URL"])
    uri = app.config["RATELIMIT_STORAGE_URI"]
    storage = None
    if strategy is not None:
        storage = strategy.storage
    elif uri.startswith(("redis://", "rediss://", "redis+unix://", "redis+sentinel://")):
        storage = storage_from_string(uri, **options)
    shared = None
    if (
        name is not None
        and isinstance(storage, RedisStorage)
        and not isinstance(storage, RedisClusterStorage)
    ):
        shared = SharedVersion(storage, name, app.config["RATELIMIT_KEY_PREFIX"])
    app.extensions["shared_version"] = shared
    watch_data_version(db.obj, shared)
