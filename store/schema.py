"""The schema: creating every table, column and index (safe to run again), and dropping them."""

from playhouse.migrate import SchemaMigrator, migrate

from models import (
    LEDGER_TABLES,
    DataVersion,
    Delivery,
    Event,
    Export,
    League,
    Match,
    MatchIntelligence,
    OddsQuote,
    OddsSummary,
    Operation,
    Pick,
    Prediction,
    Team,
    UsageCounter,
    User,
    WebhookEndpoint,
)
from store.database import create_database_file, db, is_sqlite

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
    WebhookEndpoint,
    Event,
    Delivery,
    *LEDGER_TABLES,
]


def create_tables():
    """Create the database file (SQLite), then every missing table, column and index (safe to
    run again): the one place a database comes into being."""
    create_database_file()
    # Tables first, then the columns older tables lack, then indexes (which may name them).
    with db.atomic():
        for model in TABLES:
            model._schema.create_sequences()
            model._schema.create_table(safe=True)
    _add_missing_columns()
    with db.atomic():
        for model in TABLES:
            model._schema.create_indexes(safe=True)
    _append_only(LEDGER_TABLES)
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


def _append_only(models) -> None:
    """Triggers that make the database itself refuse to update or delete a row of ``models``
    (and, on PostgreSQL, to truncate them): the ledger's rows are only ever added."""
    for model in models:
        table = model._meta.table_name
        if is_sqlite():
            for event in ("UPDATE", "DELETE"):
                db.execute_sql(
                    f'CREATE TRIGGER IF NOT EXISTS "{table}_no_{event.lower()}" '
                    f'BEFORE {event} ON "{table}" '
                    f"BEGIN SELECT RAISE(ABORT, '{table} is append-only'); END"
                )
            continue
        db.execute_sql(
            "CREATE OR REPLACE FUNCTION append_only() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION '%% is append-only', TG_TABLE_NAME; END $$"
        )
        db.execute_sql(
            f'CREATE OR REPLACE TRIGGER "{table}_append_only" BEFORE UPDATE OR DELETE ON '
            f'"{table}" FOR EACH ROW EXECUTE FUNCTION append_only()'
        )
        db.execute_sql(
            f'CREATE OR REPLACE TRIGGER "{table}_no_truncate" BEFORE TRUNCATE ON '
            f'"{table}" FOR EACH STATEMENT EXECUTE FUNCTION append_only()'
        )


def drop_tables():
    """Drop every table (the test suite's reset, and `flask data demo --rebuild` on a database
    that holds nothing but the demo world)."""
    create_database_file()
    db.drop_tables(TABLES, safe=True)
