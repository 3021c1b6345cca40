"""Schema migrations: the numbered steps in ``store/migrations/`` (peewee-migrate), applied in
order under a lock so that two runners (two release steps, a release step and an operator)
never apply the same step twice, and the check the web layer makes that none is pending.

``flask db upgrade`` (and ``flask db init``, the same) calls :func:`upgrade`. A step is applied in
one transaction with its line in the ``migratehistory`` table, so a step that fails leaves no
trace and the next run starts it again.
"""

import fcntl
import logging
from contextlib import contextmanager
from pathlib import Path

from peewee import SqliteDatabase
from peewee_migrate import Router
from playhouse.migrate import SchemaMigrator, migrate

from store.database import create_database_file, db, open_database

log = logging.getLogger("picks.migrations")

#: Where the steps live: ``NNN_what.py``, applied in the order of their numbers.
MIGRATIONS = Path(__file__).parent / "migrations"

#: The table that lists the steps applied (peewee-migrate's own name for it).
HISTORY_TABLE = "migratehistory"

#: The first step: the release that adopts a database made before migrations existed.
FIRST_STEP = "001_release_0_1_0"

#: The PostgreSQL advisory lock held while migrating (any constant; "picks" in ASCII).
ADVISORY_LOCK = 0x7069636B73


def steps() -> list[str]:
    """Every step's name (its file name without ``.py``), oldest first."""
    return sorted(path.stem for path in MIGRATIONS.glob("[0-9][0-9][0-9]_*.py"))


def applied(database=None) -> list[str]:
    """The steps the database has applied (none when it has no history table)."""
    database = database or db
    if not database.table_exists(HISTORY_TABLE):
        return []
    cursor = database.execute_sql(f'SELECT name FROM "{HISTORY_TABLE}" ORDER BY id')
    return [name for (name,) in cursor.fetchall()]


def pending(database=None) -> list[str]:
    """The steps the database has not applied yet, oldest first."""
    done = set(applied(database))
    return [name for name in steps() if name not in done]


def upgrade(url: str, target: str | None = None) -> list[str]:
    """Apply the pending steps (up to and including ``target``, else all) to the database at
    ``url``; returns the names applied. Creates an SQLite file that does not exist yet.

    It runs on a connection of its own without the service's statement timeout (building an
    index on a large table may take longer), bound to the database proxy meanwhile so that a
    step's data work through the models runs inside the step's transaction. For a process of its
    own (the CLI), never a serving one: peewee-migrate replays the applied steps to learn the
    models' state with Peewee's query methods patched out for the whole process meanwhile.
    """
    database = open_database(url, pooled=False)
    previous = db.obj
    db.initialize(database)
    try:
        with _locked(database):
            return _router(database).run(target)
    finally:
        db.initialize(previous)


def stamp(database=None) -> None:
    """Record every step as applied without running it: for a database whose schema was made
    from the models (``models.schema.create_tables``), which a test proves is the same schema."""
    router = _router(database or db)
    done = set(router.done)
    for name in steps():
        if name not in done:
            router.model.create(name=name)


@contextmanager
def _locked(database):
    """Hold the migration lock, connected: a file lock beside an SQLite database, taken before
    the file is created or opened (a second runner must not even switch a new file to WAL
    meanwhile), or an advisory lock for the session on PostgreSQL. A second runner waits here,
    then finds nothing left to do."""
    if isinstance(database, SqliteDatabase):
        path = database.file_path or database.database
        with open(f"{path}.migrate-lock", "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                create_database_file()
                with database.connection_context():
                    yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
        return
    with database.connection_context():
        database.execute_sql("SELECT pg_advisory_lock(%s)", (ADVISORY_LOCK,))
        try:
            yield
        finally:
            database.execute_sql("SELECT pg_advisory_unlock(%s)", (ADVISORY_LOCK,))


def _router(database) -> Router:
    return Router(database, migrate_dir=MIGRATIONS, migrate_table=HISTORY_TABLE, logger=log)


def add_missing_columns(database, models) -> None:
    """Add to existing tables the nullable columns of ``models`` they lack (a database made by
    ``db init`` before a column existed): for steps that adopt such databases."""
    migrator = SchemaMigrator.from_database(database)
    found = []
    for model in models:
        table = model._meta.table_name
        present = {column.name for column in database.get_columns(table)}
        for field in model._meta.sorted_fields:
            if field.column_name not in present and field.null:
                found.append(migrator.add_column(table, field.column_name, field))
    if found:
        migrate(*found)
