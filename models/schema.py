"""The schema as the models describe it: creating every table, index and trigger at once, and
dropping them (the test suite's fast reset).

A real database gets its schema from the migrations (``store/migrations/``, ``flask db
upgrade``); ``tests/store/test_migrations.py`` proves the two make the same schema, on SQLite and on
PostgreSQL, so a model changed without its migration fails the suite.
"""

from models import (
    LEDGER_TABLES,
    AlertFanout,
    AlertMessage,
    AlertSubscription,
    Contradiction,
    DataVersion,
    Delivery,
    Event,
    Export,
    KickoffReport,
    League,
    LedgerCosignature,
    Match,
    MatchIntelligence,
    OddsQuote,
    OddsSummary,
    Operation,
    Pick,
    Prediction,
    PriceSeen,
    SchedulerLease,
    SourceFetch,
    SourceState,
    Team,
    TeamAlias,
    UsageCounter,
    User,
    WebhookEndpoint,
    WorkerBeat,
)
from models.versions import new_tag
from store import migrate
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
    LedgerCosignature,
    WorkerBeat,
    SchedulerLease,
    SourceFetch,
    SourceState,
    TeamAlias,
    PriceSeen,
    Contradiction,
    KickoffReport,
    AlertSubscription,
    AlertMessage,
    AlertFanout,
]


def create_tables():
    """Create the database file (SQLite), then every missing table, index and trigger of the
    models, and record every migration step as applied: the newest schema in one go."""
    create_database_file()
    with db.atomic():
        for model in TABLES:
            model._schema.create_sequences()
            model._schema.create_table(safe=True)
            model._schema.create_indexes(safe=True)
    _append_only([*LEDGER_TABLES, LedgerCosignature])
    DataVersion.insert(id=1, value=0, tag=new_tag()).on_conflict_ignore().execute()
    migrate.stamp()


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
    """Drop every table and the migration history (the test suite's reset, and `flask data demo
    --rebuild` on a database that holds nothing but the demo world)."""
    create_database_file()
    db.drop_tables(TABLES, safe=True)
    db.execute_sql(f'DROP TABLE IF EXISTS "{migrate.HISTORY_TABLE}"')
