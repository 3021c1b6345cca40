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

The copy is kept per database, under a tag the database itself holds (a random one written by
migration step 016, read by each process on first use): every process using one database finds
the same keys however it spells the database's address, and deployments sharing a Redis never
read each other's. (A database restored from another's copy holds its tag too: give it a Redis
database of its own.) Until the database holds a tag (not migrated yet), nobody reads or tells
the copy: every request asks the database.

**One home.** A writer tells only the Redis its own settings name: a worker or a command
started without the web processes' ``RATELIMIT_STORAGE_URI`` (or with another) would change the
data unheard, and the web would serve answers older than the change for up to
``VALUE_SECONDS``. So the web processes record where they keep the copy (their :func:`home`) in
the database as they start (:func:`record_home`), and a worker or a command that writes compares
its own before it starts (:func:`home_refusal`): where the web keeps a copy and this process's
home differs, it is refused, in one line naming the setting.

When Redis fails, the rate limits fall back to the process's memory and readers ask the database
again (:func:`current`). A Redis Cluster client (whose keys must share a slot with the limit's)
and the in-process storage keep no copy: every request asks the database.
"""

import logging
import os
import time
import uuid
from urllib.parse import parse_qs, urlparse

from limits.storage import RedisClusterStorage, RedisStorage, storage_from_string
from peewee import DatabaseError, InterfaceError
from redis.exceptions import RedisError

from models.versions import (
    data_version,
    data_version_home,
    data_version_tag,
    record_data_version_home,
    watch_data_version,
)
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


#: The rate-limit storages on which the data version has a copy: one Redis server, or Sentinel's
#: (a Cluster's keeps none).
KEEPING = ("redis://", "rediss://", "redis+unix://", "redis+sentinel://")

#: Redis's and Sentinel's ports when a URI names none.
REDIS_PORT, SENTINEL_PORT = 6379, 26379


def database_name(url: str) -> str | None:
    """What names ``url``'s database for every process using it that spells it the same way
    (the export streams' counts): an SQLite file's real path, or the server's host, port
    (PostgreSQL's 5432 unless given) and database; None for an in-memory SQLite (each process
    its own, sharing nothing)."""
    parsed = urlparse(url)
    if parsed.scheme.startswith("sqlite"):
        path = parsed.path[1:]
        return None if path in ("", ":memory:") else os.path.realpath(path)
    return f"{(parsed.hostname or '').lower()}:{parsed.port or 5432}{parsed.path}"


def home(config) -> str | None:
    """Where a process with ``config`` keeps the data version's copy, spelt one way: the Redis
    server (or Sentinel's), its database and the key prefix, without user or password; None
    when it keeps none (the rate limits in memory or on a Redis Cluster, an in-memory SQLite)."""
    uri = config["RATELIMIT_STORAGE_URI"]
    if database_name(config["DATABASE_URL"]) is None or not uri.startswith(KEEPING):
        return None
    return f"{redis_server(uri)} (prefix {config['RATELIMIT_KEY_PREFIX']})"


def redis_server(uri: str) -> str:
    """A Redis URI in one spelling: scheme, host in lower case, port, database (``/0`` unless
    given in the path or as ``?db=``); a socket's path; Sentinel's hosts in order and its
    service. No user or password."""
    parsed = urlparse(uri)
    query = parse_qs(parsed.query)
    path = parsed.path.strip("/")
    if parsed.scheme == "redis+unix":
        return f"redis+unix://{parsed.path}?db={query.get('db', ['0'])[0]}"
    if parsed.scheme == "redis+sentinel":
        hosts = sorted(
            _host_port(place, SENTINEL_PORT)
            for place in parsed.netloc.rpartition("@")[2].split(",")
        )
        return f"redis+sentinel://{','.join(hosts)}/{path.replace('/', '')}"
    number = path or query.get("db", ["0"])[0]
    return f"{parsed.scheme}://{_host_port(parsed.netloc.rpartition('@')[2], REDIS_PORT)}/{number}"


def _host_port(place: str, default: int) -> str:
    """``host:port`` in one spelling (the host in lower case, the port given or ``default``)."""
    parsed = urlparse(f"//{place}")
    host = (parsed.hostname or "").lower()
    host = f"[{host}]" if ":" in host else host
    return f"{host}:{parsed.port or default}"


def record_home(app) -> None:
    """Record where this web process keeps the data version's copy (its :func:`home`), for the
    workers and commands to compare theirs with (:func:`home_refusal`): when it starts serving.
    A database not migrated yet or unavailable fails no start: it is skipped, and logged."""
    spelt = home(app.config)
    try:
        recorded = _connected(lambda: record_data_version_home(spelt))
    except (DatabaseError, InterfaceError) as error:
        log.warning("the data version's home was not recorded: %s", error)
        return
    if not recorded:
        log.warning(
            "the data version's home was not recorded: the database awaits its migration "
            "steps (`flask db upgrade`); workers and commands are not checked against it"
        )


def home_refusal(app) -> str | None:
    """Why a worker or a command that writes must not start with ``app``'s settings: the web
    processes keep the data version's copy somewhere this process would not tell of its
    changes (one line naming the setting); None when the homes agree, when the web keeps no
    copy, or when the database cannot say (not migrated yet, or unavailable: the process then
    meets that itself)."""
    try:
        theirs = _connected(data_version_home)
    except (DatabaseError, InterfaceError) as error:
        log.warning("the data version's home was not read: %s", error)
        return None
    if theirs is None or theirs == home(app.config):
        return None
    return (
        f"RATELIMIT_STORAGE_URI: the web processes keep the data version on {theirs}; this "
        "process would not tell them of its changes. Start it with the same setting."
    )


def _connected(call):
    """``call()`` on this thread's open connection, else on one opened for it and closed after
    (a process starting holds none yet; a command's caller may hold one, in a transaction)."""
    if not db.is_closed():
        return call()
    with db.connection_context():
        return call()


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class SharedVersion:
    """The copy of one database's data version on the rate limits' Redis (see the module)."""

    def __init__(self, storage, prefix: str):
        self.storage = storage
        self.prefix = prefix
        self.found = None  # the keys, once the database's tag has been read
        client = storage.get_connection()
        self.changing_script = client.register_script(CHANGING)
        self.changed_script = client.register_script(CHANGED)
        self.fill_script = client.register_script(FILL)
        self.quiet_until = 0.0  # monotonic: writers skip Redis until then, after a failure

    @property
    def keys(self) -> tuple:
        """The keys a reader's hit appends to its own: the copy, the pending set, the generation,
        under the database's tag, read once, on first use (the app may be made before the
        database is migrated: ``flask db upgrade``). Empty while the database holds no tag (not
        migrated yet) or cannot be asked: nobody then reads or tells the copy."""
        if self.found is None:
            try:
                tag = data_version_tag()
            except (DatabaseError, InterfaceError) as error:
                log.debug("the data version's tag was not read: %s", error)
                return ()
            if tag is None:
                return ()
            base = self.storage.prefixed_key(f"{self.prefix}/data-version/{tag}")
            self.found = (f"{base}/value", f"{base}/pending", f"{base}/generation")
        return self.found

    def current(self, seen) -> int:
        """The data version, from ``seen`` (what a hit read: the copy or None, how many changes
        are pending, the generation or None) when it holds one and nothing is pending, else the
        database's, which is then left in Redis for the next readers."""
        value, pending, generation = seen
        if value is not None and pending == 0:
            return int(value)
        version = data_version()
        if pending == 0 and self.found is not None:
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
        if time.monotonic() < self.quiet_until or not (keys := self.keys):
            return
        try:
            script(keys, arguments)
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
    uri = app.config["RATELIMIT_STORAGE_URI"]
    storage = None
    if strategy is not None:
        storage = strategy.storage
    elif uri.startswith(KEEPING):
        storage = storage_from_string(uri, **options)
    shared = None
    if (
        database_name(app.config["DATABASE_URL"]) is not None
        and isinstance(storage, RedisStorage)
        and not isinstance(storage, RedisClusterStorage)
    ):
        shared = SharedVersion(storage, app.config["RATELIMIT_KEY_PREFIX"])
    app.extensions["shared_version"] = shared
    watch_data_version(db.obj, shared)
