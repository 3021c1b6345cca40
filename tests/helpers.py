"""What the test modules share besides their data (``factories``) and assertions (``asserts``):
the test settings, the demo world at a fixed instant, and small readers of answers and queries.

No test module imports another test module (or ``conftest``): what two of them need lives here.
"""

import contextlib
import fcntl
import io
import logging
import os
import pickle
import re
import sqlite3
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import psycopg2
import psycopg2.extensions
import redis
from limits import parse
from limits.strategies import SlidingWindowCounterRateLimiter
from peewee import AutoField
from werkzeug.test import EnvironBuilder
from xdist.scheduler import LoadScopeScheduling

from app import create_app
from engine.model import timeline
from models import DataVersion, Match, OddsQuote, Team
from models.schema import TABLES, create_tables, drop_tables
from models.versions import new_tag
from store import migrate
from store.database import db, is_sqlite
from web.extensions import limiter

SECRET = "test-only-secret-that-is-long-enough-for-hs256-0123456789"
#: The tests' ledger signing key (never a real one): checkpoints are signed test.example/ledger.
LEDGER_KEY = "PRIVATE+KEY+test.example/ledger+cbd80a5f+AQ9reeSsP+qsBMSentkNy+zelPtilYQJsf4X/Ra0VvGr"
#: The tests' key encrypting webhook secrets (WEBHOOK_SECRETS_KEY; never a real one).
WEBHOOK_KEY = "hMxqNzTWyJZQlbjSU7P-LHqkPEHfOZ6IAR3w9da_2ns="

#: The moment the demo world is built around: fixed, so no test depends on the day it runs.
NOW = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)

#: Rate limits out of the way of tests that send many requests as one caller.
UNLIMITED = {
    "RATELIMIT_PUBLIC": "100000 per minute",
    "RATELIMIT_AUTH": "100000 per minute",
    "RATELIMIT_DATA": "100000 per minute",
    "RATELIMIT_TILES": "100000 per minute",
}


def test_database_url(tmp_path):
    """TEST_DATABASE_URL when CI gives one (the suite may wipe it), else a fresh SQLite file."""
    return os.environ.get("TEST_DATABASE_URL") or f"sqlite:///{tmp_path / 'test.db'}"


# Not a test, whatever its name says.
test_database_url.__test__ = False


def worker_settings(worker: str, environment) -> dict[str, str]:
    """The TEST_DATABASE_URL and RATELIMIT_STORAGE_URI of pytest-xdist's ``worker`` (``gw0``,
    ``gw1``, …): a PostgreSQL database of its own beside the one given (made when missing) and the
    Redis database that many above the one given; nothing for what is not set."""
    number = int(worker.removeprefix("gw"))
    found = {}
    if url := environment.get("TEST_DATABASE_URL"):
        parts = urlsplit(url)
        name = f"{parts.path.lstrip('/')}_{worker}"
        server = psycopg2.connect(parts._replace(path="/postgres").geturl())
        try:
            server.autocommit = True
            with server.cursor() as cursor:
                cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
                if cursor.fetchone() is None:
                    cursor.execute(f'CREATE DATABASE "{name}"')
        finally:
            server.close()
        found["TEST_DATABASE_URL"] = parts._replace(path=f"/{name}").geturl()
    storage = environment.get("RATELIMIT_STORAGE_URI", "")
    if storage.startswith("redis://"):
        parts = urlsplit(storage)
        base = int(parts.path.lstrip("/") or 0)
        found["RATELIMIT_STORAGE_URI"] = parts._replace(path=f"/{base + number}").geturl()
    return found


def settings(tmp_path, **overrides):
    """Test configuration: nothing from a developer's own environment leaks in but the storage."""
    return {
        "APP_ENV": "test",
        "DATABASE_URL": test_database_url(tmp_path),
        "JWT_SECRET_KEY": SECRET,
        "LEDGER_SIGNING_KEY": LEDGER_KEY,
        "WEBHOOK_SECRETS_KEY": WEBHOOK_KEY,
        "PUBLIC_BASE_URL": None,
        "ACCESS_TOKEN_EXPIRES": 3600,
        "PASSWORD_HASH_METHOD": "scrypt:128:8:1",  # real scrypt at the least cost werkzeug takes
        # sign-ins made side by side wait their turn; the queue's own tests set their bound
        "PASSWORD_HASH_QUEUE": 64,
        "RATELIMIT_ENABLED": True,
        "RATELIMIT_STORAGE_URI": os.environ.get("RATELIMIT_STORAGE_URI", "memory://"),
        "RATELIMIT_STRATEGY": "sliding-window-counter",
        "PROXY_FIX_HOPS": 0,  # tests playing several clients by X-Forwarded-For set 1
        "RATELIMIT_PUBLIC": "120 per minute",
        "RATELIMIT_AUTH": "20 per minute",
        "RATELIMIT_REGISTER": "5 per hour",
        "RATELIMIT_DATA": "600 per minute",
        "RATELIMIT_TILES": "3000 per minute",
        **overrides,
    }


# The demo world


def build_demo(app) -> None:
    """Fill ``app``'s database with the demo world, as ``flask data demo`` does, at the app's
    clock: fresh tables, then the world loaded, backfilled, settled and calibrated."""
    with app.app_context():
        drop_tables()
        create_tables()
    result = app.test_cli_runner().invoke(args=["data", "demo"])
    assert result.exit_code == 0, result.output


#: What a PostgreSQL schema made by ``create_tables`` looks like (see :func:`reset_tables`).
_made_schema = {}

#: One text of a PostgreSQL schema: its relations with their columns, its triggers and the
#: migration steps it records as applied.
_SCHEMA_PRINT = f"""
SELECT md5(string_agg(part, ',' ORDER BY part)) FROM (
    SELECT c.relname || ':' || c.relkind::text || ':' || coalesce(string_agg(
        a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull::text,
        ';' ORDER BY a.attnum), '') AS part
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
    WHERE n.nspname = current_schema()
    GROUP BY c.relname, c.relkind
    UNION ALL
    SELECT 'trigger ' || t.tgname || ' ' || t.tgrelid::regclass::text
    FROM pg_trigger t
    JOIN pg_class c ON c.oid = t.tgrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = current_schema() AND NOT t.tgisinternal
    UNION ALL
    SELECT 'step ' || name FROM "{migrate.HISTORY_TABLE}"
) parts
"""


def _numbered(model) -> bool:
    return isinstance(model._meta.primary_key, AutoField)


def _id_sequence(model) -> str:
    """SQL naming the sequence that numbers ``model``'s rows."""
    table, column = model._meta.table_name, model._meta.primary_key.column_name
    return f"""pg_get_serial_sequence('"{table}"', '{column}')"""


#: Every table emptied and the sequence of each one's id restarted (the migration history,
#: which is not emptied, keeps its own), in one round trip: the append-only triggers off for the
#: transaction that runs it.
_EMPTY_TABLES = ";".join(
    [
        "SET LOCAL session_replication_role = replica",
        *(f'DELETE FROM "{model._meta.table_name}"' for model in reversed(TABLES)),
        "SELECT setval(sequence, 1, false) FROM unnest(ARRAY["
        + ", ".join(_id_sequence(model) for model in TABLES if _numbered(model))
        + "]) AS sequence WHERE sequence IS NOT NULL",
    ]
)


def reset_tables() -> None:
    """Empty tables of the newest schema in the app's database, as ``create_tables`` leaves them.

    On PostgreSQL, when the schema found is the one ``create_tables`` made earlier in this run
    (the same relations, columns, triggers and applied steps), every row is deleted with the
    append-only triggers off for that transaction and their ids' sequences restart, in one round
    trip: about 5 ms (15 ms with a statement each), where dropping and creating the schema takes
    about half a second. Otherwise
    (SQLite, the first reset, a schema a migration test left behind) everything is dropped and
    created again.
    """
    made = None if is_sqlite() else _made_schema.get(db.database)
    if made is not None and made == _schema_print():
        with db.atomic():
            db.execute_sql(_EMPTY_TABLES)
        # The data version starts again at 0 under a new tag (the batch above, whose first
        # statement writes no rows, moves no version), so no process reads an old copy of it.
        tag = new_tag()
        DataVersion.insert(id=1, value=0, tag=tag).on_conflict(
            conflict_target=[DataVersion.id], update={DataVersion.value: 0, DataVersion.tag: tag}
        ).execute()
        return
    drop_tables()
    create_tables()
    if not is_sqlite():
        _made_schema[db.database] = _schema_print()


def _schema_print() -> str | None:
    if not db.table_exists(migrate.HISTORY_TABLE):
        return None
    return db.execute_sql(_SCHEMA_PRINT).fetchone()[0]


def demo_template(folder: Path):
    """The demo world built at :data:`NOW` (see :func:`build_demo`), kept for copying: a SQLite
    file, or on TEST_DATABASE_URL a :class:`Snapshot` of the one database's rows."""
    if os.environ.get("TEST_DATABASE_URL"):
        app = create_app(settings(folder, CLOCK=lambda: NOW))
        build_demo(app)
        with app.app_context():
            return Snapshot.take()
    app = create_app(
        settings(folder, CLOCK=lambda: NOW, DATABASE_URL=f"sqlite:///{folder}/demo.db")
    )
    build_demo(app)
    if not db.is_closed():
        db.close()
    return folder / "demo.db"


#: A test module that defines a module-scoped fixture.
_MODULE_FIXTURE = re.compile(r'@pytest\.fixture\(scope="module"')


class SharedFixtureScheduling(LoadScopeScheduling):
    """pytest-xdist's scheduling (``tests/conftest.py``'s ``pytest_xdist_make_scheduler``): the
    tests of a module that defines a module-scoped fixture are one unit of work, so one worker
    makes the fixture once (spread over two, each would make it: half a minute for some); every
    other test is a unit of its own, to whichever worker is free. The units of many tests go
    first, so the longest fixtures do not wait for the end of the run.

    (pytest-xdist's own ``--dist loadgroup`` reads groups from marks it writes into node ids,
    which pytest 9.2 no longer lets a plugin rewrite.)"""

    def __init__(self, config, log=None):
        super().__init__(config, log)
        self.shared_modules = modules_with_module_fixtures(config.rootpath / "tests")

    def _split_scope(self, nodeid: str) -> str:
        return work_unit(nodeid, self.shared_modules)


def work_unit(nodeid: str, shared_modules: set[str]) -> str:
    """The unit of work a test belongs to: its module if that is one of ``shared_modules``,
    else itself."""
    module = nodeid.split("::", 1)[0]
    return module if module in shared_modules else nodeid


def modules_with_module_fixtures(folder: Path) -> set[str]:
    """The test modules under ``folder`` (paths as node ids write them) that define a
    module-scoped fixture."""
    root = folder.parent
    return {
        path.relative_to(root).as_posix()
        for path in folder.rglob("test_*.py")
        if _MODULE_FIXTURE.search(path.read_text())
    }


def built_once(shared: Path, name: str, make):
    """``make(folder)``'s result, made once for every pytest-xdist worker of a run (``shared`` is
    the folder they share): the first worker to ask makes it under a lock and keeps it pickled;
    the others wait for the lock and read it. Two workers would otherwise each build the demo
    world (half a minute on PostgreSQL)."""
    folder = shared / name
    folder.mkdir(exist_ok=True)
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        kept = folder / "made.pickle"
        if kept.exists():
            return pickle.loads(kept.read_bytes())
        made = make(folder)
        kept.write_bytes(pickle.dumps(made))
        return made


def copy_sqlite(source: Path, target: Path) -> None:
    """Copy a SQLite database file whole, through SQLite's backup (so nothing is left behind in
    its write-ahead log), with a data version tag of its own: copies of one template must not
    share their data version's copy on Redis."""
    with (
        contextlib.closing(sqlite3.connect(source)) as read,
        contextlib.closing(sqlite3.connect(target)) as write,
    ):
        read.backup(write)
        write.execute('UPDATE "data_version" SET "tag" = ? WHERE "id" = 1', (new_tag(),))
        write.commit()


#: The tables a :class:`Snapshot` copies; the data version's one row is written apart.
_COPIED = [model for model in TABLES if model is not DataVersion]


@dataclass(frozen=True)
class Snapshot:
    """Every row of a PostgreSQL database made by ``create_tables`` (each table's ``COPY``
    text), its sequences' positions and its data version: the demo world built once, put back
    in about 2 s where building it again takes half a minute."""

    rows: dict[str, bytes]
    sequences: list[tuple[str, int | None]]
    version: int

    @classmethod
    def take(cls) -> "Snapshot":
        rows = {}
        with _copying(), db.atomic():
            db.execute_sql("SET LOCAL statement_timeout = 0")
            cursor = db.cursor()
            for model in _COPIED:
                buffer = io.BytesIO()
                cursor.copy_expert(f'COPY "{model._meta.table_name}" TO STDOUT', buffer)
                rows[model._meta.table_name] = buffer.getvalue()
            sequences = db.execute_sql(
                "SELECT schemaname || '.' || sequencename, last_value FROM pg_sequences "
                "WHERE schemaname = current_schema()"
            ).fetchall()
        return cls(rows, sequences, DataVersion.get_by_id(1).value)

    def restore(self) -> None:
        """Put the rows back in the app's database, emptied first (``reset_tables``)."""
        reset_tables()
        with _copying(), db.atomic():
            # The app's statement timeout is for requests: a copy of the whole world on a loaded
            # machine may take longer, and is no request.
            db.execute_sql("SET LOCAL statement_timeout = 0")
            db.execute_sql("SET LOCAL session_replication_role = replica")
            cursor = db.cursor()
            for model in _COPIED:
                table = model._meta.table_name
                cursor.copy_expert(f'COPY "{table}" FROM STDIN', io.BytesIO(self.rows[table]))
            for sequence, last in self.sequences:
                db.execute_sql("SELECT setval(%s, %s, %s)", (sequence, last or 1, last is not None))
        # After the commit, which wrote the next data version for the rows it deleted.
        DataVersion.update(value=self.version).where(DataVersion.id == 1).execute()


@contextlib.contextmanager
def _copying():
    """psycopg2 refuses ``COPY`` while a wait callback is set (``store.database`` sets one for
    its timeouts): none for the copy's while."""
    callback = psycopg2.extensions.get_wait_callback()
    psycopg2.extensions.set_wait_callback(None)
    try:
        yield
    finally:
        psycopg2.extensions.set_wait_callback(callback)


def demo_world(folder: Path, template, clock=None, **overrides):
    """An app on its own copy of the demo world at :data:`NOW`, its clock ``clock`` (default:
    frozen at NOW), copied from ``template`` (see :func:`demo_template`). Users are not part of
    it."""
    clock = clock or (lambda: NOW)
    config = settings(folder, CLOCK=clock, **overrides)
    if isinstance(template, Snapshot):
        app = create_app(config)
        with app.app_context():
            template.restore()
        return app
    copy_sqlite(template, folder / "test.db")
    return create_app(config)


# Answers and queries


def ok(response, mimetype="application/json"):
    """The JSON body of a 200 of ``mimetype``."""
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.mimetype == mimetype
    return response.get_json()


def meetings(home: str, away: str) -> list[tuple]:
    """Every stored match of ``home`` v ``away`` by kick-off, as (id, UTC kick-off as
    ``YYYY-MM-DD HH:MM``, status, score ``"2-1"`` or None, Pinnacle's pre-match 1x2 prices)."""
    home_team, away_team = Team.alias(), Team.alias()
    query = (
        Match.select(Match.id, Match.kickoff_at, Match.status, Match.home_goals, Match.away_goals)
        .join(home_team, on=Match.home_team == home_team.id)
        .switch(Match)
        .join(away_team, on=Match.away_team == away_team.id)
        .where((home_team.name == home) & (away_team.name == away))
        .order_by(Match.kickoff_at)
    )
    found = []
    for match_id, kickoff, status, home_goals, away_goals in query.tuples():
        quotes = OddsQuote.select(OddsQuote.selection, OddsQuote.price, OddsQuote.is_closing).where(
            (OddsQuote.match == match_id)
            & (OddsQuote.bookmaker == "pinnacle")
            & (OddsQuote.market == "1x2")
        )
        prices = {selection: price for selection, price, closing in quotes.tuples() if not closing}
        score = None if home_goals is None else f"{home_goals}-{away_goals}"
        prices = tuple(prices.get(selection) for selection in ("home", "draw", "away"))
        found.append((match_id, f"{kickoff:%Y-%m-%d %H:%M}", status, score, prices))
    return found


@contextlib.contextmanager
def counted_queries():
    """Count the SQL statements Peewee runs inside the block."""
    statements = []

    class Collect(logging.Handler):
        def emit(self, record):
            statements.append(record.getMessage())

    logger = logging.getLogger("peewee")
    handler, level = Collect(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield statements
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def stored_rows(*models) -> dict[str, list[tuple]]:
    """Every row of each of ``models``' tables as the database holds it, in key order: what a
    test compares to show that nothing was written."""
    return {
        model._meta.table_name: db.execute_sql(
            f'SELECT * FROM "{model._meta.table_name}" ORDER BY 1'
        ).fetchall()
        for model in models
    }


def rate_limit_remaining(limit: str, key: str, policy: str) -> int:
    """What the stock sliding-window strategy reads of a rate-limit counter (``key`` under
    ``policy``, limited to ``limit``) in the current app's storage."""
    stock = SlidingWindowCounterRateLimiter(limiter.storage)
    return stock.get_window_stats(parse(limit), "picks", key, policy).remaining


#: How often a test's own HTTP server (a webhook receiver, a time-stamp authority) looks for
#: its shutdown: socketserver's default of 0.5 s held every test using one that long.
SHUTDOWN_POLL = 0.02


class Serving:
    """A server answering from a thread of its own inside its ``with`` block (the local
    stand-ins of the sources, the SMTP relay and the Bot API): :meth:`_serve` names it."""

    def _serve(self, server) -> None:
        self.served = server
        self.thread = threading.Thread(
            target=server.serve_forever, args=(SHUTDOWN_POLL,), daemon=True
        )

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.served.shutdown()
        self.served.server_close()


@contextlib.contextmanager
def redis_commands_sent():
    """The commands redis-py sends meanwhile, packed, in order; each is still sent."""
    sent, original = [], redis.connection.Connection.send_packed_command

    def counting(connection, command, *args, **kwargs):
        sent.append(command)
        return original(connection, command, *args, **kwargs)

    redis.connection.Connection.send_packed_command = counting
    try:
        yield sent
    finally:
        redis.connection.Connection.send_packed_command = original


# Synthetic fixture lists for the engine's walk-forward tests

HOUR = 3600


def epoch(*args):
    """Epoch seconds of a UTC date-time."""
    return int(datetime(*args, tzinfo=UTC).timestamp())


def round_robin_rounds(teams):
    """Double round robin by the circle method: a list of rounds of (home, away) pairs."""
    teams = list(teams)
    n = len(teams)
    rounds = []
    for r in range(n - 1):
        pairs = [(teams[i], teams[n - 1 - i]) for i in range(n // 2)]
        rounds.append([(h, a) if r % 2 else (a, h) for h, a in pairs])
        teams = [teams[0], teams[-1], *teams[1:-1]]
    return rounds + [[(a, h) for h, a in rnd] for rnd in rounds]


def schedule(groups):
    """(kickoff, group, home, away) of every match, sorted: each group of ``groups`` (id → teams)
    plays a double round robin, one round a week, in seasons 2021/22 and 2022/23; group 1 swaps
    team 111 for the newcomer 112 in season two."""
    rows = []
    for season, start in enumerate((epoch(2021, 8, 7, 15), epoch(2022, 8, 6, 15))):
        for group, teams in groups.items():
            if group == 1 and season == 1:
                teams = [*teams[:-1], 112]
            for week, rnd in enumerate(round_robin_rounds(teams)):
                for k, (h, a) in enumerate(rnd):
                    kickoff = start + week * timeline.WEEK + (k % 3) * 2 * HOUR + (group - 1) * HOUR
                    rows.append((kickoff, group, h, a))
    return sorted(rows)


def assert_same_rows(a, b, atol=1e-12):
    """Two row_outputs dictionaries agree field by field."""
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_allclose(a[name], b[name], rtol=0, atol=atol, err_msg=name)


def at_once(count, work):
    """``work(index)`` on ``count`` threads released together; their results in index order.
    A thread that raised, or has not finished within two minutes, fails the test."""
    start = threading.Barrier(count)
    results, failures = [None] * count, []

    def run(index):
        start.wait()
        try:
            results[index] = work(index)
        except BaseException as error:  # noqa: BLE001 - raised again in the test thread below
            failures.append(error)

    threads = [threading.Thread(target=run, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not any(thread.is_alive() for thread in threads), "a thread did not finish"
    if failures:
        raise failures[0]
    return results


def call(wsgi, path, headers=None):
    """``(status, headers, body)`` of ``wsgi`` answering a GET of ``path`` from 127.0.0.1."""
    environ = EnvironBuilder(
        path=path, headers=headers or {}, environ_base={"REMOTE_ADDR": "127.0.0.1"}
    ).get_environ()
    started = {}

    def start_response(status, response_headers, exc_info=None):
        started.update(status=status, headers=response_headers)

    chunks = wsgi(environ, start_response)
    body = b"".join(chunks)
    getattr(chunks, "close", lambda: None)()
    return started["status"], started["headers"], body
