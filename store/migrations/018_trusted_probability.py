"""018: the probability the rating rule trusted when it made a pick (``pick.trusted_probability``):
its published probability with the edge shrunk by the share earlier settled picks' edges held at
the close (``engine.betting.trust``), which the pick's suggested stake is worked from. Null for
the picks made before; their stakes are worked from their published probability, as before."""

import peewee as pw
from peewee_migrate import Migrator


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """The nullable column; a database whose schema was made from these models already has it."""
    # (While faking, to rebuild the models' state, peewee-migrate answers no query.)
    if fake or "trusted_probability" not in {c.name for c in database.get_columns("pick")}:
        migrator.add_fields("pick", trusted_probability=pw.DoubleField(null=True))


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    """Without it (stakes worked from the published probability again)."""
    migrator.remove_fields("pick", "trusted_probability")
