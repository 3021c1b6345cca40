"""002: what the schema gained between the release before migrations (commit 4826b13) and
the first release with them: the margin method of a prediction, the schedule slot of an
operation, the webhook tables (``webhook_endpoint``, ``event``, ``delivery``) and the ledger's
tables, which the database itself keeps append-only (triggers).

A database made by ``db init`` from an unreleased version in between may already have some of
these: what exists is kept, only what is missing is made.
"""

import peewee as pw
from peewee_migrate import Migrator

from store.database import is_sqlite

LEDGER_TABLES = ("ledger_entry", "ledger_node", "ledger_checkpoint", "ledger_seal")


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """New columns, their index, the webhook and ledger tables, and the ledger's triggers."""

    class Table(pw.Model):
        class Meta:
            legacy_table_names = False  # index names from the snake_case table names

    # (While faking, to rebuild the models' state, peewee-migrate answers no query.)
    columns = (
        {}
        if fake
        else {
            table: {column.name for column in database.get_columns(table)}
            for table in ("operation", "prediction")
        }
    )
    if "scheduled_for" not in columns.get("operation", ()):
        migrator.add_fields("operation", scheduled_for=pw.DateTimeField(null=True))
    indexes = set() if fake else {index.name for index in database.get_indexes("operation")}
    if "operation_kind_scheduled_for" not in indexes:
        migrator.add_index("operation", "kind", "scheduled_for", unique=True)
    if "margin_method" not in columns.get("prediction", ()):
        migrator.add_fields("prediction", margin_method=pw.CharField(max_length=16, null=True))

    @migrator.create_model
    class WebhookEndpoint(Table):
        id = pw.AutoField()
        user = pw.ForeignKeyField(
            column_name="user_id", field="id", model=migrator.orm["user"], on_delete="CASCADE"
        )
        url = pw.CharField(max_length=2048)
        description = pw.CharField(default="", max_length=500)
        events = pw.TextField()
        secret = pw.CharField(max_length=64)
        previous_secret = pw.CharField(max_length=64, null=True)
        previous_secret_expires_at = pw.DateTimeField(null=True)
        enabled = pw.BooleanField(default=True)
        disabled_reason = pw.TextField(null=True)
        created_at = pw.DateTimeField()
        updated_at = pw.DateTimeField()

        class Meta:
            table_name = "webhook_endpoint"

    @migrator.create_model
    class Event(Table):
        id = pw.AutoField()
        type = pw.CharField(max_length=32)
        occurred_at = pw.DateTimeField()
        data = pw.TextField(null=True)
        subjects = pw.TextField(null=True)
        audience = pw.CharField(default="subscribers", max_length=16)
        endpoint = pw.ForeignKeyField(
            column_name="endpoint_id",
            field="id",
            model=migrator.orm["webhook_endpoint"],
            null=True,
            on_delete="CASCADE",
            index=False,
        )
        dispatched_at = pw.DateTimeField(null=True)

        class Meta:
            table_name = "event"
            indexes = [(("dispatched_at", "id"), False)]

    @migrator.create_model
    class Delivery(Table):
        id = pw.AutoField()
        event = pw.ForeignKeyField(
            column_name="event_id", field="id", model=migrator.orm["event"], on_delete="CASCADE"
        )
        subject = pw.IntegerField(null=True)
        endpoint = pw.ForeignKeyField(
            column_name="endpoint_id",
            field="id",
            model=migrator.orm["webhook_endpoint"],
            on_delete="CASCADE",
            index=False,
        )
        status = pw.CharField(default="pending", max_length=16)
        attempts = pw.IntegerField(default=0)
        next_attempt_at = pw.DateTimeField(null=True)
        leased_until = pw.DateTimeField(null=True)
        last_attempt_at = pw.DateTimeField(null=True)
        last_status_code = pw.IntegerField(null=True)
        last_error = pw.TextField(null=True)
        created_at = pw.DateTimeField()
        finished_at = pw.DateTimeField(null=True)

        class Meta:
            table_name = "delivery"
            indexes = [(("status", "next_attempt_at"), False), (("endpoint", "id"), False)]

    @migrator.create_model
    class LedgerCheckpoint(Table):
        id = pw.AutoField()
        size = pw.BigIntegerField(unique=True)
        root_hash = pw.CharField(max_length=64)
        published_at = pw.DateTimeField()
        signed_note = pw.TextField()
        key_id = pw.CharField(max_length=8)
        timestamp_token = pw.TextField(null=True)
        timestamp_error = pw.TextField(null=True)

        class Meta:
            table_name = "ledger_checkpoint"

    @migrator.create_model
    class LedgerEntry(Table):
        position = pw.BigIntegerField(primary_key=True)
        kind = pw.CharField(max_length=16)
        pick_id = pw.BigIntegerField()
        body = pw.TextField()
        created_at = pw.DateTimeField()

        class Meta:
            table_name = "ledger_entry"

    @migrator.create_model
    class LedgerNode(Table):
        address = pw.BigIntegerField(primary_key=True)
        level = pw.IntegerField()
        position = pw.BigIntegerField()
        hash = pw.CharField(max_length=64)

        class Meta:
            table_name = "ledger_node"

    @migrator.create_model
    class LedgerSeal(Table):
        id = pw.AutoField()
        pick_id = pw.BigIntegerField(unique=True)
        salt = pw.CharField(max_length=64)
        published_hash = pw.CharField(max_length=64)

        class Meta:
            table_name = "ledger_seal"

    for table in LEDGER_TABLES:
        for statement in append_only(table):
            migrator.sql(statement)


def append_only(table: str) -> list[str]:
    """The statements that make the database refuse to update or delete a row of ``table`` (and,
    on PostgreSQL, to truncate it): the ledger's rows are only ever added."""
    if is_sqlite():
        return [
            f'CREATE TRIGGER IF NOT EXISTS "{table}_no_{event.lower()}" '
            f'BEFORE {event} ON "{table}" '
            f"BEGIN SELECT RAISE(ABORT, '{table} is append-only'); END"
            for event in ("UPDATE", "DELETE")
        ]
    return [
        "CREATE OR REPLACE FUNCTION append_only() RETURNS trigger LANGUAGE plpgsql AS "
        "$$ BEGIN RAISE EXCEPTION '%% is append-only', TG_TABLE_NAME; END $$",
        f'CREATE OR REPLACE TRIGGER "{table}_append_only" BEFORE UPDATE OR DELETE ON '
        f'"{table}" FOR EACH ROW EXECUTE FUNCTION append_only()',
        f'CREATE OR REPLACE TRIGGER "{table}_no_truncate" BEFORE TRUNCATE ON '
        f'"{table}" FOR EACH STATEMENT EXECUTE FUNCTION append_only()',
    ]


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    """Back to the release's schema (the ledger's and webhooks' rows are lost)."""
    for table in (*LEDGER_TABLES, "delivery", "event", "webhook_endpoint"):
        migrator.remove_model(table)
    migrator.drop_index("operation", "kind", "scheduled_for")
    migrator.remove_fields("operation", "scheduled_for")
    migrator.remove_fields("prediction", "margin_method")
