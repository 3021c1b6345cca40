"""009: which closing line settled a pick, and time-stamps asked after the signing commits.

``odds_quote.closing_line`` says where a closing quote came from (the source's closing columns,
or the service's own line: the latest price seen before kick-off) and ``pick.closing_line`` which
one settled the pick; ``ledger_timestamp`` holds each checkpoint's RFC 3161 time-stamp (or the
authority's error), asked once the transaction that signed the checkpoint has committed, and is
append-only like the other ledger tables."""

import importlib

import peewee as pw
from peewee_migrate import Migrator

#: The ledger tables' triggers, as step 002 wrote them.
append_only = importlib.import_module("store.migrations.002_since_release").append_only


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """Two nullable columns (rows stored before keep their meaning: a closing quote without one
    came from a source's columns) and the time-stamps' table with its triggers; kept where a
    database made by ``db init`` from this version already has them."""

    class Table(pw.Model):
        class Meta:
            legacy_table_names = False  # index names from the snake_case table names

    # (While faking, to rebuild the models' state, peewee-migrate answers no query.)
    columns = (
        {}
        if fake
        else {
            table: {column.name for column in database.get_columns(table)}
            for table in ("odds_quote", "pick")
        }
    )
    for table in ("odds_quote", "pick"):
        if "closing_line" not in columns.get(table, ()):
            migrator.add_fields(table, closing_line=pw.CharField(max_length=8, null=True))
    if fake or not database.table_exists("ledger_timestamp"):

        @migrator.create_model
        class LedgerTimestamp(Table):
            id = pw.AutoField()
            size = pw.BigIntegerField(unique=True)
            token = pw.TextField(null=True)
            error = pw.TextField(null=True)
            stamped_at = pw.DateTimeField()

            class Meta:
                table_name = "ledger_timestamp"

    for statement in append_only("ledger_timestamp"):
        migrator.sql(statement)


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    """Without them (time-stamps asked since are lost)."""
    migrator.remove_model("ledger_timestamp")
    migrator.remove_fields("pick", "closing_line")
    migrator.remove_fields("odds_quote", "closing_line")
