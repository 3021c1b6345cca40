"""016: the data version's tag and home (``data_version.tag``, ``data_version.home``).

The tag, random and written once here, names the database's data version for every process
using it however each spells the database's address: the key of its copy on Redis. The home is
where the web processes keep that copy, written as they start; a worker or a command compares
its own with it before it writes anything (``web/versions.py``). Nothing stored before changes."""

import secrets

import peewee as pw
from peewee_migrate import Migrator


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """The two nullable columns, the one row (when no change has written it yet) and its tag;
    the columns kept where a database made by ``db init`` from this version already has them."""
    # (While faking, to rebuild the models' state, peewee-migrate answers no query.)
    columns = set() if fake else {column.name for column in database.get_columns("data_version")}
    if "tag" not in columns:
        migrator.add_fields(
            "data_version",
            tag=pw.CharField(max_length=32, null=True),
            home=pw.TextField(null=True),
        )
    migrator.sql(
        'INSERT INTO "data_version" ("id", "value") SELECT 1, 0 '
        'WHERE NOT EXISTS (SELECT 1 FROM "data_version" WHERE "id" = 1)'
    )
    migrator.sql(
        f'UPDATE "data_version" SET "tag" = {database.param} WHERE "id" = 1 AND "tag" IS NULL',
        secrets.token_hex(16),
    )


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    """Without them (every process then keys the copy by the database's address, as before)."""
    migrator.remove_fields("data_version", "tag", "home")
