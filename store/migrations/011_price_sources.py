"""011: the price history keeps each source's prices apart. ``price_seen``'s unique index gains
``source``: the same bookmaker quoted by two sources is two observations, each a run of that
source's own price, so two sources that disagree never collide and never alternate.

Every row stored before keeps its meaning: it was one source's observation already. The
indexes are named as the models name them (``playhouse.migrate.make_index_name``) and made in
SQL, so the step does not depend on what the steps before it told peewee-migrate's state."""

import peewee as pw
from peewee_migrate import Migrator
from playhouse.migrate import make_index_name

#: How many characters of a name PostgreSQL keeps (it cuts longer ones, as these two are).
POSTGRESQL_NAME_LENGTH = 63

BEFORE = ("match_id", "market", "line", "bookmaker", "selection", "first_seen_at")
AFTER = ("match_id", "market", "line", "bookmaker", "selection", "source", "first_seen_at")


def _create(columns) -> str:
    listed = ", ".join(f'"{column}"' for column in columns)
    name = make_index_name("price_seen", list(columns))
    return f'CREATE UNIQUE INDEX "{name}" ON "price_seen" ({listed})'


def _drop(columns) -> str:
    return f'DROP INDEX IF EXISTS "{make_index_name("price_seen", list(columns))}"'


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """The index made again with the source; kept where a database made by ``db init`` from
    this version already has it."""
    # (While faking, to rebuild the models' state, peewee-migrate answers no query.)
    if fake:
        return
    present = {index.name for index in database.get_indexes("price_seen")}
    made = make_index_name("price_seen", list(AFTER))
    if made in present or made[:POSTGRESQL_NAME_LENGTH] in present:
        return
    migrator.sql(_drop(BEFORE))
    migrator.sql(_create(AFTER))


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    """Without the source in the key: of two sources' runs that began at one moment, the
    football-data one is kept."""
    if fake:
        return
    same = " AND ".join(f'other."{column}" = "price_seen"."{column}"' for column in BEFORE)
    migrator.sql(
        'DELETE FROM "price_seen" WHERE "source" <> \'football-data\' AND EXISTS ('
        f'SELECT 1 FROM "price_seen" AS other WHERE other."id" <> "price_seen"."id" AND {same})'
    )
    migrator.sql(_drop(AFTER))
    migrator.sql(_create(BEFORE))
