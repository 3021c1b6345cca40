"""005: room for encrypted webhook secrets: ``webhook_endpoint.secret`` and ``previous_secret``
widen from 64 to 255 characters, enough for a secret encrypted under ``WEBHOOK_SECRETS_KEY`` (a
Fernet token of 164 characters for a ``whsec_`` secret).

The step only widens. The secrets already stored are encrypted by ``flask db upgrade`` right
after its steps (``services.webhooks.encryption.encrypt_plain``): the key lives in the service's
environment, which a step never reads.

PostgreSQL widens the columns in place. SQLite cannot change a column's type, so its three
webhook tables are made again as step 004 makes them, rows and ids kept: renamed first (SQLite
points the references at the new names, so dropping the old parent deletes nothing), made from
their own statements with the wider columns, filled, their ``AUTOINCREMENT`` counters carried
over (an id given once is never given again), the old tables dropped children first and the
indexes made again.
"""

import peewee as pw
from peewee_migrate import Migrator

#: Parents first: ``event`` refers to ``webhook_endpoint``, ``delivery`` to both.
TABLES = ("webhook_endpoint", "event", "delivery")

#: The columns' definitions in SQLite's statement of the table, before and after.
NARROW = ('"secret" VARCHAR(64) NOT NULL', '"previous_secret" VARCHAR(64)')
WIDE = ('"secret" VARCHAR(255) NOT NULL', '"previous_secret" VARCHAR(255)')

SUFFIX = "_before_005"


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """Widen the two secret columns to 255 characters."""
    if fake:
        return
    if not isinstance(database, pw.SqliteDatabase):
        database.execute_sql(
            'ALTER TABLE "webhook_endpoint" '
            'ALTER COLUMN "secret" TYPE VARCHAR(255), '
            'ALTER COLUMN "previous_secret" TYPE VARCHAR(255)'
        )
        return
    statements = {
        table: database.execute_sql(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).fetchone()[0]
        for table in TABLES
    }
    widened = statements["webhook_endpoint"]
    for narrow, wide in zip(NARROW, WIDE, strict=True):
        widened = widened.replace(narrow, wide, 1)
    if widened == statements["webhook_endpoint"]:
        return  # made by this version's models already
    statements["webhook_endpoint"] = widened
    indexes = [
        sql
        for (sql,) in database.execute_sql(
            "SELECT sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
            f"AND tbl_name IN ({', '.join('?' for _ in TABLES)})",
            TABLES,
        ).fetchall()
    ]
    for table in reversed(TABLES):
        database.execute_sql(f'ALTER TABLE "{table}" RENAME TO "{table}{SUFFIX}"')
    for table in TABLES:
        database.execute_sql(statements[table])
        database.execute_sql(f'INSERT INTO "{table}" SELECT * FROM "{table}{SUFFIX}"')
        # The old table's counter (renamed with it) may be past its highest id: it is the one.
        database.execute_sql("DELETE FROM sqlite_sequence WHERE name = ?", (table,))
        database.execute_sql(
            "UPDATE sqlite_sequence SET name = ? WHERE name = ?", (table, f"{table}{SUFFIX}")
        )
    for table in reversed(TABLES):
        database.execute_sql(f'DROP TABLE "{table}{SUFFIX}"')
    for sql in indexes:
        database.execute_sql(sql)


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    """Nothing to undo that matters: the columns stay wide (sealed secrets need the room)."""
