"""The database: one proxy, the tables of the whole domain, and their small lookups."""

import json
import os
import re
import secrets
import select
import sqlite3
import time
import unicodedata
from datetime import UTC, datetime
from urllib.parse import parse_qs, quote, urlparse

import numpy as np
import psycopg2
import psycopg2.extensions
from peewee import (
    BigIntegerField,
    BooleanField,
    CharField,
    DatabaseProxy,
    DateField,
    DateTimeField,
    DoubleField,
    ForeignKeyField,
    IntegerField,
    InterfaceError,
    Model,
    SqliteDatabase,
    TextField,
)
from playhouse.db_url import connect
from playhouse.migrate import SchemaMigrator, migrate
from playhouse.pool import PooledSqliteDatabase
from psycopg2.extras import execute_values

from enums import (
    COMPETITION_TYPES,
    EXPORT_FORMATS,
    EXPORT_RESOURCES,
    MARKETS,
    MATCH_STATUSES,
    OPERATION_KINDS,
    OPERATION_STATUSES,
    PICK_RATINGS,
    PICK_STATUSES,
    PREDICTION_SOURCES,
    SELECTIONS,
    USER_PLANS,
    USER_ROLES,
    USER_STATUSES,
)
from errors import NotFound

db = DatabaseProxy()


def _choices(values):
    """Peewee's ``choices`` (documentation of a column's allowed values) from an enumeration."""
    return [(value, value) for value in values]


SQLITE_PRAGMAS = {"journal_mode": "wal", "foreign_keys": 1, "synchronous": "normal"}


def slugify(text: str) -> str:
    """``Nott'm Forest`` → ``nott-m-forest``: ASCII letters and digits joined by hyphens."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")


def utcnow() -> datetime:
    """The current time, timezone-aware UTC, to the second."""
    return datetime.now(UTC).replace(microsecond=0)


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
    :func:`create_tables` (``db init``) makes one, so a database deleted under a running service
    is an error, not a new empty database.
    """
    scheme, rest = url.split("://", 1)
    scheme = {"postgres": "postgresql"}.get(scheme, scheme).removesuffix("+pool")
    if scheme == "sqlite":
        return _open_sqlite(urlparse(url).path[1:], pooled, statement_timeout)
    options = {}
    if scheme == "postgresql":
        options = _postgres_options(url, connect_timeout, statement_timeout)
    if pooled:
        scheme += "+pool"
        options.update(max_connections=None, stale_timeout=POOL_RECYCLE_SECONDS)
    return connect(f"{scheme}://{rest}", **options)


class FileConnection(sqlite3.Connection):
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


class FilePooledSqliteDatabase(PooledSqliteDatabase):
    """Pooled SQLite that discards, on check-out, a connection whose file has gone: it would go
    on reading and writing a deleted file nobody else sees."""

    def _is_closed(self, conn):
        return super()._is_closed(conn) or not conn.same_file()


def _open_sqlite(path: str, pooled: bool, statement_timeout):
    # busy_timeout as a pragma: the pool's own ``timeout`` argument means something else.
    busy = round((statement_timeout or SQLITE_BUSY_SECONDS) * 1000)
    options = {
        "pragmas": {**SQLITE_PRAGMAS, "busy_timeout": busy},
        "check_same_thread": not pooled,  # a pooled connection moves between threads
    }
    name = path
    if path and path != ":memory:":
        options["uri"] = True
        options["factory"] = type("Connection", (FileConnection,), {"path": path})
        name = f"file:{quote(path)}?mode=rw"  # open, never create
    if pooled:
        database = FilePooledSqliteDatabase(
            name, max_connections=None, stale_timeout=POOL_RECYCLE_SECONDS, **options
        )
    else:
        database = SqliteDatabase(name, **options)
    database.file_path = path if "uri" in options else None
    return database


def _postgres_options(url: str, connect_timeout, statement_timeout) -> dict:
    """psycopg2 options for the timeouts (a URL's own ``connect_timeout`` or ``options`` win)."""
    given = parse_qs(urlparse(url).query)
    options = {}
    if connect_timeout and "connect_timeout" not in given:
        options["connect_timeout"] = max(2, round(connect_timeout))  # libpq: whole seconds, ≥ 2
    if statement_timeout and "options" not in given:
        options["options"] = f"-c statement_timeout={round(statement_timeout * 1000)}"
    stall = statement_timeout + STALL_GRACE_SECONDS if statement_timeout else None
    options["connection_factory"] = type(
        "Connection",
        (psycopg2.extensions.connection,),
        {"connect_seconds": connect_timeout or None, "stall_seconds": stall},
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


class UTCDateTimeField(DateTimeField):
    """Stores naive UTC, hands out timezone-aware UTC: the same on SQLite and PostgreSQL."""

    def db_value(self, value):
        if isinstance(value, datetime) and value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        return super().db_value(value)

    def python_value(self, value):
        value = super().python_value(value)
        if isinstance(value, datetime) and value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value


class JSONField(TextField):
    """A JSON document kept as text, so SQLite and PostgreSQL store it the same way."""

    def db_value(self, value):
        return None if value is None else json.dumps(value, separators=(",", ":"))

    def python_value(self, value):
        return None if value is None else json.loads(value)


class BaseModel(Model):
    """Every table: bound to the proxy, snake_case table names."""

    class Meta:
        database = db
        legacy_table_names = False

    @classmethod
    def one_where(cls, **equal):
        """The row whose fields equal ``equal``, or None, in one plain statement.

        For the lookups every request makes (its caller, its quota counter): Peewee would spend
        longer building their SQL than the database spends answering it.
        """
        fields = cls._meta.sorted_fields
        columns = ", ".join(f'"{field.column_name}"' for field in fields)
        named = [cls._meta.fields[name] for name in equal]
        where = " AND ".join(f'"{field.column_name}" = {db.param}' for field in named)
        params = [field.db_value(value) for field, value in zip(named, equal.values(), strict=True)]
        sql = f'SELECT {columns} FROM "{cls._meta.table_name}" WHERE {where} LIMIT 1'
        row = db.execute_sql(sql, params).fetchone()
        if row is None:
            return None
        record = cls(
            **{
                field.name: field.python_value(value)
                for field, value in zip(fields, row, strict=True)
            }
        )
        record._dirty.clear()  # as Peewee leaves a row it has read: nothing to save
        return record

    @classmethod
    def get_or_raise(cls, record_id, what=None):
        """The record with ``record_id``, or NotFound naming what was looked for."""
        record = cls.get_or_none(cls._meta.primary_key == record_id)
        if record is None:
            raise NotFound(f"{what or cls.__name__} {record_id} does not exist.")
        return record


def new_token_stamp() -> str:
    """A fresh token stamp: random, so no two accounts or passwords ever share one."""
    return secrets.token_hex(16)


class User(BaseModel):
    """An account: role (user/operator/admin), plan (free/pro), status (active/suspended)."""

    email = CharField(max_length=254, unique=True)
    password_hash = CharField(max_length=255)
    #: Carried by every access token, which is good only while it matches: renewed with the
    #: password, so a new password ends the old tokens. Null on rows made before it existed.
    token_stamp = CharField(max_length=32, null=True, default=new_token_stamp)
    role = CharField(max_length=16, default="user", index=True, choices=_choices(USER_ROLES))
    plan = CharField(max_length=16, default="free", index=True, choices=_choices(USER_PLANS))
    status = CharField(max_length=16, default="active", index=True, choices=_choices(USER_STATUSES))
    created_at = UTCDateTimeField(default=utcnow)
    updated_at = UTCDateTimeField(default=utcnow)

    @classmethod
    def by_email(cls, email):
        """The user with this (already normalised) email, or None."""
        return cls.get_or_none(cls.email == email)

    @classmethod
    def by_id(cls, user_id: int):
        """The user with this id, or None (read on every authenticated request: role, plan and
        status apply at once)."""
        return cls.one_where(id=user_id)


class League(BaseModel):
    """A competition, keyed by a stable code (football-data's division code for imports)."""

    code = CharField(max_length=16, unique=True)
    name = CharField(max_length=100)
    country = CharField(max_length=64)
    competition_type = CharField(max_length=16, index=True, choices=_choices(COMPETITION_TYPES))


class Team(BaseModel):
    """A club or national team; the same name may exist in two countries."""

    name = CharField(max_length=100)
    country = CharField(max_length=64)

    class Meta:
        indexes = ((("name", "country"), True),)


class Match(BaseModel):
    """A fixture and, once played, its result."""

    # Foreign keys lead composite indexes below, so they need no index of their own.
    league = ForeignKeyField(League, backref="matches", on_delete="CASCADE", index=False)
    season = CharField(max_length=16)
    home_team = ForeignKeyField(Team, backref="home_matches", on_delete="CASCADE", index=False)
    away_team = ForeignKeyField(Team, backref="away_matches", on_delete="CASCADE", index=False)
    kickoff_at = UTCDateTimeField(index=True)
    status = CharField(max_length=16, default="scheduled", choices=_choices(MATCH_STATUSES))
    home_goals = IntegerField(null=True)
    away_goals = IntegerField(null=True)
    ht_home_goals = IntegerField(null=True)
    ht_away_goals = IntegerField(null=True)
    slug = CharField(max_length=255, unique=True)
    updated_at = UTCDateTimeField(default=utcnow)

    class Meta:
        indexes = (
            (("league", "season", "home_team", "away_team"), False),
            (("league", "kickoff_at"), False),
            (("home_team", "kickoff_at"), False),
            (("away_team", "kickoff_at"), False),
            (("status", "kickoff_at"), False),
        )

    @staticmethod
    def slug_for(home_team: str, away_team: str, kickoff_at: datetime) -> str:
        """The SEO slug: ``home-team-vs-away-team-YYYY-MM-DD`` (the UTC kick-off date)."""
        day = kickoff_at.astimezone(UTC).date().isoformat()
        return f"{slugify(home_team)}-vs-{slugify(away_team)}-{day}"


class OddsQuote(BaseModel):
    """One bookmaker's decimal price for one selection, pre-match or at the close."""

    match = ForeignKeyField(Match, backref="odds", on_delete="CASCADE", index=False)
    bookmaker = CharField(max_length=32)
    market = CharField(max_length=8, choices=_choices(MARKETS))
    selection = CharField(max_length=8, choices=_choices(SELECTIONS))
    price = DoubleField()
    is_closing = BooleanField(default=False)

    class Meta:
        indexes = ((("match", "market", "is_closing", "bookmaker", "selection"), True),)


class OddsSummary(BaseModel):
    """The prices a match card shows for one selection, kept beside the quotes they come from:
    the best pre-match price and who offers it, the sharp pre-match price and the closing price.

    Derived from ``OddsQuote`` whenever a match's quotes are stored, so a card reads a few rows
    per match instead of every bookmaker's quotes.
    """

    match = ForeignKeyField(Match, backref="odds_summary", on_delete="CASCADE", index=False)
    market = CharField(max_length=8, choices=_choices(MARKETS))
    selection = CharField(max_length=8, choices=_choices(SELECTIONS))
    best_price = DoubleField(null=True)
    best_bookmaker = CharField(max_length=32, null=True)
    sharp_price = DoubleField(null=True)
    sharp_bookmaker = CharField(max_length=32, null=True)
    closing_price = DoubleField(null=True)
    closing_bookmaker = CharField(max_length=32, null=True)
    bookmakers = IntegerField(default=0)  # real bookmakers quoting the market before kick-off

    class Meta:
        indexes = ((("match", "market", "selection"), True),)


class Prediction(BaseModel):
    """The published probabilities of one market of one match, and what they were made from."""

    match = ForeignKeyField(Match, backref="predictions", on_delete="CASCADE", index=False)
    market = CharField(max_length=8, choices=_choices(MARKETS))
    probabilities = JSONField()  # {selection: published probability}
    model_probabilities = JSONField()  # the goal model alone
    market_probabilities = JSONField(null=True)  # de-margined sharp pre-match odds
    pool_weight = DoubleField()  # weight of the goal model in the pool
    #: What made the published probabilities (null for predictions made before sources).
    source = CharField(max_length=16, null=True, choices=_choices(PREDICTION_SOURCES))
    model_name = CharField(max_length=64)
    model_version = CharField(max_length=32)
    made_at = UTCDateTimeField(default=utcnow)
    fitted_at = UTCDateTimeField()  # results up to this instant fed the model
    data_quality = DoubleField()
    data_quality_parts = JSONField()
    is_live = BooleanField(default=False)

    class Meta:
        indexes = ((("match", "market"), True),)


class Pick(BaseModel):
    """A rated bet on the selection with the largest edge, and how it settled."""

    match = ForeignKeyField(Match, backref="picks", on_delete="CASCADE", index=False)
    market = CharField(max_length=8, choices=_choices(MARKETS))
    selection = CharField(max_length=8, choices=_choices(SELECTIONS))
    bookmaker = CharField(max_length=32)
    odds = DoubleField()
    probability = DoubleField()
    edge = DoubleField()
    rating = CharField(max_length=1, choices=_choices(PICK_RATINGS))
    data_quality = DoubleField()
    stake = DoubleField(default=1.0)
    is_live = BooleanField(default=False)
    status = CharField(max_length=8, default="pending", index=True, choices=_choices(PICK_STATUSES))
    profit = DoubleField(null=True)
    closing_odds = DoubleField(null=True)
    closing_bookmaker = CharField(max_length=32, null=True)
    #: The selection's de-margined closing probability: odds × it − 1 is the expected return at
    #: the fair closing price (CLV against the raw closing price keeps the bookmaker's margin).
    closing_probability = DoubleField(null=True)
    clv = DoubleField(null=True)
    created_at = UTCDateTimeField(default=utcnow)
    settled_at = UTCDateTimeField(null=True)

    class Meta:
        indexes = ((("match", "market"), True),)


class MatchIntelligence(BaseModel):
    """What the model and the history say about a match: form, goals, rest, head-to-head."""

    match = ForeignKeyField(Match, backref="intelligence", unique=True, on_delete="CASCADE")
    payload = JSONField()
    updated_at = UTCDateTimeField(default=utcnow)


class Operation(BaseModel):
    """A long-running job (refresh, settlement, calibration): its parameters, state and result."""

    kind = CharField(max_length=32, choices=_choices(OPERATION_KINDS))
    status = CharField(max_length=16, default="queued", choices=_choices(OPERATION_STATUSES))
    params = JSONField()
    result = JSONField(null=True)
    error = TextField(null=True)
    created_by = ForeignKeyField(User, null=True, on_delete="SET NULL")
    created_at = UTCDateTimeField(default=utcnow)
    started_at = UTCDateTimeField(null=True)
    finished_at = UTCDateTimeField(null=True)

    class Meta:
        indexes = ((("kind", "status", "finished_at"), False),)


class UsageCounter(BaseModel):
    """A user's Data API consumption in one calendar month (UTC)."""

    user = ForeignKeyField(User, backref="usage", on_delete="CASCADE")
    period = DateField()  # the first day of the month
    requests = IntegerField(default=0)
    exports = IntegerField(default=0)
    export_rows = IntegerField(default=0)

    class Meta:
        indexes = ((("user", "period"), True),)


class Export(BaseModel):
    """A Data API export: who asked for what, in which format, and how many rows it held."""

    user = ForeignKeyField(User, null=True, backref="exports", on_delete="SET NULL")
    resource = CharField(max_length=16, choices=_choices(EXPORT_RESOURCES))
    format = CharField(max_length=8, choices=_choices(EXPORT_FORMATS))
    parameters = JSONField()  # the filters, as the request gave them (wire names)
    row_count = IntegerField()
    created_at = UTCDateTimeField(default=utcnow)


class DataVersion(BaseModel):
    """One counter that every change to matches, odds, predictions or picks bumps, in the
    change's own transaction: cached answers are keyed by it, so none outlives the data."""

    value = BigIntegerField(default=0)


def data_version() -> int:
    """The current data version (0 before anything was stored).

    Read on every cached request, so it is one prepared statement rather than a Peewee query.
    """
    row = db.execute_sql('SELECT "value" FROM "data_version" WHERE "id" = 1').fetchone()
    return row[0] if row else 0


def bump_data_version() -> None:
    """Mark the data as changed (call inside the transaction that changes it)."""
    DataVersion.insert(id=1, value=0).on_conflict_ignore().execute()
    DataVersion.update(value=DataVersion.value + 1).where(DataVersion.id == 1).execute()


def _driver_values(fields, rows) -> list[tuple]:
    """Rows of plain values ready for the driver: only datetime and JSON columns need converting
    (numbers, strings, booleans and None pass as they are)."""
    convert = [
        index
        for index, field in enumerate(fields)
        if isinstance(field, UTCDateTimeField | JSONField)
    ]
    if not convert:
        return [tuple(row) for row in rows]
    converted = []
    for row in rows:
        row = list(row)
        for index in convert:
            row[index] = fields[index].db_value(row[index])
        converted.append(tuple(row))
    return converted


def fetch_rows(query) -> list[tuple]:
    """The query's rows as the driver returns them, without Peewee's per-value conversion.

    For reading hundreds of thousands of rows into arrays: datetimes come back as SQLite text or
    PostgreSQL naive datetimes (see ``epoch_seconds``), booleans as 0/1 on SQLite.
    """
    return db.execute(query).fetchall()


def epoch_seconds(values) -> np.ndarray:
    """Stored UTC datetimes, as ``fetch_rows`` returns them, as int64 epoch seconds."""
    return np.array(values, dtype="datetime64[s]").astype(np.int64)


def _is_sqlite() -> bool:
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
        """End the snapshot and its connection (safe to call again)."""
        if self.connection is None:
            return
        self.connection = None
        self.database.close()  # a read-only transaction ends with its connection

    def scalar(self, query):
        """The first column of the first row of ``query``."""
        sql, params = query.sql()
        cursor = self.connection.cursor()
        cursor.execute(sql, params)
        return cursor.fetchone()[0]

    def rows(self, query, batch: int = 5000):
        """The rows of ``query`` as the driver returns them, fetched ``batch`` at a time."""
        sql, params = query.sql()
        if isinstance(self.database, SqliteDatabase):
            cursor = self.connection.cursor()
        else:
            cursor = self.connection.cursor(name=f"rows_{id(self)}")  # server-side
            cursor.itersize = batch
        cursor.execute(sql, params)
        try:
            while chunk := cursor.fetchmany(batch):
                yield from chunk
        finally:
            cursor.close()


def insert_rows(model, names: list[str], rows, page_size=5000) -> None:
    """Insert many plain tuples (values in ``names`` order) in few statements.

    Peewee's ``insert_many`` builds its SQL value by value, which costs far more than the database
    does for hundreds of thousands of rows; this hands the driver one prepared statement
    (SQLite) or a page of rows per round trip (PostgreSQL's execute_values).
    """
    if not rows:
        return
    fields = [model._meta.fields[name] for name in names]
    columns = ", ".join(f'"{field.column_name}"' for field in fields)
    converted = _driver_values(fields, rows)
    cursor = db.cursor()
    if _is_sqlite():
        marks = ", ".join("?" for _ in fields)
        cursor.executemany(
            f'INSERT INTO "{model._meta.table_name}" ({columns}) VALUES ({marks})', converted
        )
        return
    execute_values(
        cursor,
        f'INSERT INTO "{model._meta.table_name}" ({columns}) VALUES %s',
        converted,
        page_size=page_size,
    )


def update_rows(model, columns: dict[str, str], rows, constants=None, page_size=5000) -> None:
    """Set ``columns`` on many rows by id in a few statements: ``rows`` are ``(id, value, …)``.

    ``columns`` maps each field to its SQL type, so PostgreSQL types the VALUES list (NULLs
    included); ``constants`` are fields set to one value on every row. SQLite runs one prepared
    UPDATE over all rows; PostgreSQL joins each page of rows as a VALUES list (psycopg2's
    execute_values), a round trip per page, not per row.
    """
    if not rows:
        return
    table = model._meta.table_name
    fixed = {
        name: getattr(model, name).db_value(value) for name, value in (constants or {}).items()
    }
    converted = _driver_values([model.id, *(getattr(model, name) for name in columns)], rows)
    cursor = db.cursor()
    if _is_sqlite():
        assignments = ", ".join(f'"{name}" = ?' for name in [*columns, *fixed])
        cursor.executemany(
            f'UPDATE "{table}" SET {assignments} WHERE "id" = ?',
            [(*values, *fixed.values(), row_id) for row_id, *values in converted],
        )
        return
    assignments = [f'"{name}" = v."{name}"::{kind}' for name, kind in columns.items()]
    assignments += [
        f'"{name}" = ' + cursor.mogrify("%s", (value,)).decode() for name, value in fixed.items()
    ]
    names = ", ".join(f'"{name}"' for name in ["id", *columns])
    execute_values(
        cursor,
        f'UPDATE "{table}" SET {", ".join(assignments)} FROM (VALUES %s) AS v({names}) '
        f'WHERE "{table}"."id" = v."id"',
        converted,
        page_size=page_size,
    )


TABLES = [
    User,
    League,
    Team,
    Match,
    OddsQuote,
    OddsSummary,
    Prediction,
    Pick,
    MatchIntelligence,
    Operation,
    UsageCounter,
    Export,
    DataVersion,
]


def create_tables():
    """Create the database file (SQLite), then every missing table, column and index (safe to
    run again): the one place a database comes into being."""
    create_database_file()
    db.create_tables(TABLES, safe=True)
    _add_missing_columns()
    DataVersion.insert(id=1, value=0).on_conflict_ignore().execute()


def _add_missing_columns():
    """Add the nullable columns a newer version of a table has gained to a database made before
    it (``create_tables`` never alters an existing table)."""
    migrator = SchemaMigrator.from_database(db.obj)
    steps = []
    for model in TABLES:
        table = model._meta.table_name
        present = {column.name for column in db.get_columns(table)}
        for field in model._meta.sorted_fields:
            if field.column_name not in present:
                if not field.null:
                    raise RuntimeError(f"{table}.{field.column_name} is missing and not nullable")
                steps.append(migrator.add_column(table, field.column_name, field))
    if steps:
        migrate(*steps)


def drop_tables():
    """Drop every table (the test suite's reset; never called by the app)."""
    create_database_file()
    db.drop_tables(TABLES, safe=True)
