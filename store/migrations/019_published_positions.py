"""019: where each pick was published, by pick: a partial index of the ledger's ``pick.published``
entries by ``pick_id`` (``ledger_entry_pick_id``). Settlement looks up the position of each
settling pick's entry (to find the checkpoint that first signed it) instead of reading every
entry of the ledger, bodies and all; outcome entries are not in it, so appending them costs
nothing more. Nothing stored changes: an index, no row written."""

import peewee as pw
from peewee_migrate import Migrator

INDEX = "ledger_entry_pick_id"


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """The index (kept where a database made from these models already has it)."""
    migrator.sql(
        f'CREATE INDEX IF NOT EXISTS "{INDEX}" ON "ledger_entry" ("pick_id") '
        "WHERE (\"kind\" = 'pick.published')"
    )


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    """Without it (settlement reads the published entries again)."""
    migrator.sql(f'DROP INDEX IF EXISTS "{INDEX}"')
