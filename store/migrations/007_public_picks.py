"""007: when a match's picks became public for good (``match.public_since``): the kick-off it
had when a later change moved it again, so a postponement after kick-off never locks a pick
that everyone has already seen. Null while the kick-off as stored says it all."""

import peewee as pw
from peewee_migrate import Migrator


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """The nullable column (no row has one yet: every kick-off stored so far is its own); a
    database whose schema was made from these models already has it."""
    # (While faking, to rebuild the models' state, peewee-migrate answers no query.)
    if fake or "public_since" not in {column.name for column in database.get_columns("match")}:
        migrator.add_fields("match", public_since=pw.DateTimeField(null=True))


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    """Without it (a pick then locks again if its match is moved past its kick-off)."""
    migrator.remove_fields("match", "public_since")
