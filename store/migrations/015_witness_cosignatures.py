"""015: the witnesses' cosignatures of the ledger's checkpoints.

``ledger_cosignature`` holds each configured witness's answer to a checkpoint (C2SP
tlog-witness): its ``cosignature/v1`` line and the time it signed, or why it gave none; one per
witness and checkpoint, asked once the transaction that signed the checkpoint has committed, and
append-only like the other ledger tables."""

import importlib

import peewee as pw
from peewee_migrate import Migrator

#: The ledger tables' triggers, as step 002 wrote them.
append_only = importlib.import_module("store.migrations.002_since_release").append_only


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """The table, its unique (witness, size) index and its triggers; kept where a database made
    by ``db init`` from this version already has them."""

    class Table(pw.Model):
        class Meta:
            legacy_table_names = False  # index names from the snake_case table names

    # (While faking, to rebuild the models' state, peewee-migrate answers no query.)
    if fake or not database.table_exists("ledger_cosignature"):

        @migrator.create_model
        class LedgerCosignature(Table):
            id = pw.AutoField()
            size = pw.BigIntegerField()
            witness = pw.CharField(max_length=255)
            signature = pw.TextField(null=True)
            cosigned_at = pw.DateTimeField(null=True)
            error = pw.TextField(null=True)
            asked_at = pw.DateTimeField()

            class Meta:
                table_name = "ledger_cosignature"
                indexes = ((("witness", "size"), True),)

    for statement in append_only("ledger_cosignature"):
        migrator.sql(statement)


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    """Without it (the cosignatures gathered since are lost; the witnesses keep theirs)."""
    migrator.remove_model("ledger_cosignature")
