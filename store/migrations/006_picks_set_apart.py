"""006: why a settled pick is not live (``pick.not_live_reason``): a pick stored as live that
fails the live rule when it settles (made after its match's real kick-off, never published in
the ledger, or first signed after the kick-off) is set apart with the reason, never counted in
the live record."""

import peewee as pw
from peewee_migrate import Migrator


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """The new nullable column (every stored pick keeps its standing); kept where a database
    made by ``db init`` from this version already has it."""
    # (While faking, to rebuild the models' state, peewee-migrate answers no query.)
    columns = set() if fake else {column.name for column in database.get_columns("pick")}
    if "not_live_reason" not in columns:
        migrator.add_fields("pick", not_live_reason=pw.CharField(max_length=32, null=True))


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    """Without the column."""
    migrator.remove_fields("pick", "not_live_reason")
