"""Connections: the one database proxy, opening SQLite or PostgreSQL with pools and timeouts,
telling an unavailable database from a wrong statement, and read-only snapshots. Every database
opened here keeps the data version (:mod:`store.versioning`), moved by every transaction that
writes the tables it watches."""

import fcntl
import os
import select
import sqlite3
import time
from contextlib import contextmanager
from urllib.parse import parse_qs, quote, urlparse

import psycopg2
import psycopg2.extensions
from peewee import DatabaseError, DatabaseProxy, InterfaceError, SqliteDatabase
from playhouse.db_url import parseresult_to_dict, schemes
from playhouse.pool import PooledSqliteDatabase

from store.versioning import (
    VersionedDatabase,
    VersionedPostgresConnection,
    VersionedSqliteConnection,
    Versioning,
    add_versioning,
)

db = DatabaseProxy()

SQLITE_PRAGMAS = {"journal_mode": "wal", "foreign_keys": 1, "synchronous": "normal"}

#: How long a pooled connection is kept before it is replaced, seconds.
POOL_RECYCLE_SECONDS = 300

#: How long an SQLite connection waits for another's write lock without a statement timeout.
SQLITE_BUSY_SECONDS = 30

#: How much longer than its statement timeout a query may wait for PostgreSQL to answer at all:
#: the server cancels a slow statement itself, so only a stalled server is given up on here.
STALL_GRACE_SECONDS = 1.0


def open_database(url: str, pooled: bool = True, *, connect_timeout=None, statement_timeout=None):
    """A Peewee database for ``url`` (sqlite:///path, postgres://…); SQLite gets WAL and FKs.

    ``pooled`` keeps connections open between requests (a connection per serving thread), so a
    request does not pay for a new connection and, on SQLite, its pragmas.

    ``connect_timeout`` and ``statement_timeout`` (seconds; None or 0 for none) bound how long a
    request may wait for the database: on PostgreSQL the server cancels a statement that runs
    longer, and a server that stops answering at all (paused, or its network gone) is given up
    on by the client after the same time (see :func:`_wait`). On SQLite the statement timeout is
    how long a writer waits for another's lock. An SQLite file is opened, never created: only
    ``db upgrade`` (:func:`store.migrate.upgrade`) makes one, so a database deleted under a
    running service is an error, not a new empty database.
    """
    scheme, rest = url.split("://", 1)
    scheme = {"postgres": "postgresql"}.get(scheme, scheme).removesuffix("+pool")
    versioning = Versioning()
    if scheme == "sqlite":
        return _open_sqlite(urlparse(url).path[1:], pooled, statement_timeout, versioning)
    options = {}
    if scheme == "postgresql":
        options = _postgres_options(url, connect_timeout, statement_timeout, versioning)
    if pooled:
        scheme += "+pool"
        options.update(max_connections=None, stale_timeout=POOL_RECYCLE_SECONDS)
    # playhouse.db_url.connect, with the class that keeps the data version.
    if scheme not in schemes:
        raise RuntimeError(f'Unrecognized or unsupported scheme: "{scheme}".')
    arguments = parseresult_to_dict(urlparse(f"{scheme}://{rest}"))
    if not arguments.get("database"):
        raise ValueError("the database URL names no database: write postgresql://host/name")
    database = add_versioning(schemes[scheme])(**{**arguments, **options})
    database.versioning = versioning
    return database


class FileConnection(VersionedSqliteConnection):
    """An SQLite connection that remembers which file it opened (``path`` is set per database),
    so the pool can tell a connection to a file deleted or replaced since."""

    path = ""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.identity = _file_identity(self.path)

    def same_file(self) -> bool:
        """Whether the path still names the file this connection opened."""
        return self.identity is not None and self.identity == _file_identity(self.path)


def _file_identity(path):
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


class FilePooledSqliteDatabase(VersionedDatabase, PooledSqliteDatabase):
    """Pooled SQLite that discards, on check-out, a connection whose file has gone: it would go
    on reading and writing a deleted file nobody else sees."""

    def _is_closed(self, conn):
        return super()._is_closed(conn) or not conn.same_file()


def _open_sqlite(path: str, pooled: bool, statement_timeout, versioning):
    # busy_timeout as a pragma: the pool's own ``timeout`` argument means something else.
    busy = round((statement_timeout or SQLITE_BUSY_SECONDS) * 1000)
    options = {
        "pragmas": {**SQLITE_PRAGMAS, "busy_timeout": busy},
        "check_same_thread": not pooled,  # a pooled connection moves between threads
        # Every transaction takes the write lock when it begins, waiting for it up to the busy
        # timeout. A deferred one reads first, and when another connection commits a write
        # meanwhile its snapshot cannot become a write: SQLite refuses at once ("database is
        # locked"), without waiting. So every path that writes (requests, the quota counter,
        # CLI commands, the worker) begins IMMEDIATE; snapshots begin their own reads.
        "lock_type": "IMMEDIATE",
    }
    name = path
    connection = {"versioning": versioning}
    options["factory"] = type("Connection", (VersionedSqliteConnection,), connection)
    if path and path != ":memory:":
        options["uri"] = True
        options["factory"] = type("Connection", (FileConnection,), {**connection, "path": path})
        name = f"file:{quote(path)}?mode=rw"  # open, never create
    if pooled:
        database = FilePooledSqliteDatabase(
            name, max_connections=None, stale_timeout=POOL_RECYCLE_SECONDS, **options
        )
    else:
        database = add_versioning(SqliteDatabase)(name, **options)
    database.file_path = path if "uri" in options else None
    database.versioning = versioning
    return database


def _postgres_options(url: str, connect_timeout, statement_timeout, versioning) -> dict:
    """psycopg2 options for the timeouts (a URL's own ``connect_timeout`` or ``options`` win)
    and the data version's ``versioning``."""
    given = parse_qs(urlparse(url).query)
    options = {}
    if connect_timeout and "connect_timeout" not in given:
        options["connect_timeout"] = max(2, round(connect_timeout))  # libpq: whole seconds, ≥ 2
    if statement_timeout and "options" not in given:
        options["options"] = f"-c statement_timeout={round(statement_timeout * 1000)}"
    stall = statement_timeout + STALL_GRACE_SECONDS if statement_timeout else None
    options["connection_factory"] = type(
        "Connection",
        (VersionedPostgresConnection,),
        {
            "connect_seconds": connect_timeout or None,
            "stall_seconds": stall,
            "versioning": versioning,
        },
    )
    # psycopg2's wait callback serves every connection of the process (those without limits
    # wait as before); set only when some database has a limit to keep.
    if (connect_timeout or stall) and psycopg2.extensions.get_wait_callback() is not _wait:
        psycopg2.extensions.set_wait_callback(_wait)
    return options


#: Connection states in which a connection is set up (any other is still connecting).
_CONNECTED = frozenset(
    {
        psycopg2.extensions.STATUS_READY,
        psycopg2.extensions.STATUS_BEGIN,
        psycopg2.extensions.STATUS_PREPARED,
    }
)
_POLL_EVENTS = {
    psycopg2.extensions.POLL_READ: select.POLLIN,
    psycopg2.extensions.POLL_WRITE: select.POLLOUT,
}


def _wait(conn, _cursor=None):
    """psycopg2's wait callback: wait for the server as psycopg2 would, but give up after the
    connection's own limit (``connect_seconds`` while connecting, ``stall_seconds`` for a
    statement), raising OperationalError; psycopg2 then closes the connection.

    Blocking libpq waits for ever on a server that accepts TCP but never answers (a paused
    process, a dead network path): its ``connect_timeout`` covers only connecting, and a
    statement timeout needs a server that runs. Connections made without a limit wait as before.
    """
    connecting = conn.status not in _CONNECTED
    limit = getattr(conn, "connect_seconds" if connecting else "stall_seconds", None)
    deadline = None if not limit else time.monotonic() + limit
    while True:
        state = conn.poll()
        if state == psycopg2.extensions.POLL_OK:
            return
        if state not in _POLL_EVENTS:
            raise psycopg2.OperationalError(f"unexpected poll state {state}")
        waiting = None
        if deadline is not None:
            waiting = deadline - time.monotonic()
            if waiting <= 0:
                what = "connect" if connecting else "answer"
                raise psycopg2.OperationalError(f"the database did not {what} within {limit} s")
        poller = select.poll()
        poller.register(conn.fileno(), _POLL_EVENTS[state])
        poller.poll(None if waiting is None else max(1, round(waiting * 1000)))


#: PostgreSQL SQLSTATEs (or their two-character classes) meaning the database cannot serve right
#: now: a connection exception, a shutdown or start-up under way, no connection slot left, a
#: statement cancelled by its timeout.
UNAVAILABLE_STATES = ("08", "57P01", "57P02", "57P03", "53300", "57014")

#: What SQLite says when its file is gone, unreadable or busy, or holds no tables yet.
SQLITE_UNAVAILABLE = (
    "unable to open database file",
    "database is locked",
    "disk i/o error",
    "no such table",
)


#: What a failed statement raises: Peewee's errors, and the drivers' own where a bulk write
#: used the driver's cursor (``store.bulk``).
DATABASE_ERRORS = (DatabaseError, sqlite3.Error, psycopg2.Error)


def unavailable(error) -> bool:
    """Whether a database error means the database cannot serve right now (a 503), rather than
    a statement that is wrong (a 500)."""
    if isinstance(error, InterfaceError):
        return True  # a connection that is closed or broken
    original = error
    while getattr(original, "orig", None) is not None:  # the driver's error Peewee wrapped
        original = original.orig
    if isinstance(original, sqlite3.Error):
        return any(phrase in str(original).lower() for phrase in SQLITE_UNAVAILABLE)
    if isinstance(original, psycopg2.Error):
        code = original.pgcode
        return code is None or code.startswith(UNAVAILABLE_STATES)  # None: no server answer
    return False


def discard_connections() -> None:
    """Drop the current connection and every idle pooled one: after a failure that says the
    database went away, they may all point at the server that is gone."""
    if db.obj is None:
        return
    if hasattr(db.obj, "manual_close"):
        db.manual_close()
    elif not db.is_closed():
        db.close()
    if hasattr(db.obj, "close_idle"):
        db.close_idle()


def create_database_file() -> None:
    """Make the SQLite file the database names, if it does not exist (PostgreSQL: nothing)."""
    path = getattr(db.obj, "file_path", None)
    if path and not os.path.exists(path):
        sqlite3.connect(f"file:{quote(path)}?mode=rwc", uri=True).close()


def is_sqlite() -> bool:
    """Whether the proxy stands for an SQLite database."""
    return isinstance(db.obj, SqliteDatabase)


class Snapshot:
    """A consistent, read-only view of the database on a connection of its own, for reading
    many rows while the request's own connection goes on writing (an export charges its quota
    after counting its rows, then streams exactly those rows).

    PostgreSQL reads in a REPEATABLE READ transaction through a server-side cursor; SQLite in a
    deferred transaction, which in WAL mode sees the database as it was at its first read.
    """

    def __init__(self, url: str, **timeouts):
        self.database = open_database(url, pooled=False, **timeouts)
        self.connection = None
        self.cursors = set()  # those of rows() not read to the end yet

    def open(self) -> "Snapshot":
        """Connect and start the snapshot (it is taken at the first read)."""
        self.database.connect()
        self.connection = self.database.connection()
        if isinstance(self.database, SqliteDatabase):
            self.connection.execute("BEGIN")
        else:
            self.connection.autocommit = False
            self.connection.set_session(isolation_level="REPEATABLE READ", readonly=True)
            # Its cursor is always read to the end: plan for every row, not for the first 10 %
            # (PostgreSQL's default for cursors picks fast-start plans, such as a nested loop
            # over the whole primary key that made a filtered odds export five times slower).
            with self.connection.cursor() as cursor:
                cursor.execute("SET LOCAL cursor_tuple_fraction = 1.0")
        return self

    def close(self) -> None:
        """End the snapshot and its connection (safe to call again): its open cursors first, so
        a rows() generator dropped half-read finds nothing left to close on a closed connection
        (SQLite would raise "Cannot operate on a closed database" from its finaliser)."""
        if self.connection is None:
            return
        for cursor in self.cursors:
            cursor.close()
        self.cursors.clear()
        self.connection = None
        self.database.close()  # a read-only transaction ends with its connection

    def scalar(self, query):
        """The first column of the first row of ``query``."""
        sql, params = query.sql()
        cursor = self.connection.cursor()
        cursor.execute(sql, params)
        return cursor.fetchone()[0]

    def fetch(self, query) -> list[tuple]:
        """Every row of ``query`` as the driver returns them, read whole (a client-side cursor:
        for rows that fit in memory at once)."""
        sql, params = query.sql()
        cursor = self.connection.cursor()
        try:
            cursor.execute(sql, params)
            return cursor.fetchall()
        finally:
            cursor.close()

    def rows(self, query, batch: int = 5000):
        """The rows of ``query`` as the driver returns them, fetched ``batch`` at a time."""
        sql, params = query.sql()
        if isinstance(self.database, SqliteDatabase):
            cursor = self.connection.cursor()
        else:
            cursor = self.connection.cursor(name=f"rows_{id(self)}")  # server-side
            cursor.itersize = batch
        self.cursors.add(cursor)
        try:
            cursor.execute(sql, params)
            while chunk := cursor.fetchmany(batch):
                yield from chunk
        finally:
            if cursor in self.cursors:  # else close() has closed it with the connection
                self.cursors.discard(cursor)
                cursor.close()


@contextmanager
def exclusive(name: str, key: int, poll: float = 0.5):
    """Hold a lock of the whole deployment named ``name`` (``key`` its PostgreSQL advisory lock
    number) while the block runs, waiting for it meanwhile: a file lock beside an SQLite
    database, an advisory lock held by a session of its own on PostgreSQL, tried every ``poll``
    seconds so that no single statement waits past the statement timeout. For work that spans
    transactions and must not run twice at once (a sync: its fetches, stores and predictions).
    """
    if is_sqlite():
        path = getattr(db.obj, "file_path", None)
        if path is None:  # in memory: one process, which serialises itself
            yield
            return
        with open(f"{path}.{name}-lock", "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
        return
    # A session of its own holds it: the work's own connections come and go from the pool, and
    # the lock goes with this session when it closes, however the process ends.
    params = {k: v for k, v in db.obj.connect_params.items() if k != "connection_factory"}
    holder = psycopg2.connect(dbname=db.obj.database, **params)
    try:
        holder.autocommit = True
        with holder.cursor() as cursor:
            while True:
                cursor.execute("SELECT pg_try_advisory_lock(%s)", (key,))
                if cursor.fetchone()[0]:
                    break
                time.sleep(poll)
        yield
    finally:
        holder.close()


def locked(query):
    """``query`` holding the rows it selects until its transaction ends, so a check of theirs
    and the write it allows are one step for every connection. ``FOR NO KEY UPDATE``: another
    such lock waits, a foreign key's check of the row (an insert referring to it) does not.
    SQLite locks the whole database for a transaction that writes (:func:`writing`), so there it
    is ``query``."""
    return query if is_sqlite() else query.for_update("FOR NO KEY UPDATE")


def writing():
    """A transaction that writes: on SQLite it takes the write lock when it begins (waiting for
    it up to the busy timeout), as every transaction there does (see :func:`_open_sqlite`), so
    a transaction that reads before it writes is never refused its write because another
    connection wrote in between. Elsewhere a plain transaction."""
    return db.atomic()
