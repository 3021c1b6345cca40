"""004: on SQLite, the webhook tables' ids are never given twice (``AUTOINCREMENT``).

A plain ``INTEGER PRIMARY KEY`` gives the highest id again once its row is deleted: deleting the
endpoint whose test ping was the newest event let the next event take that ping's id, and its
``webhook-id`` (``evt_<id>``), by which receivers drop repeats. PostgreSQL's sequences never
reuse an id: nothing to do there.

SQLite cannot add ``AUTOINCREMENT`` to a table, so each is made again, its rows copied. The step
runs in a transaction with foreign keys enforced, where dropping a table deletes what refers to
it: so the old tables are renamed first (SQLite points the references at the new names), the new
ones made from the old ones' own statements and filled, and the old ones dropped children first,
when nothing refers to them any more.
"""

import peewee as pw
from peewee_migrate import Migrator

#: Parents first: ``event`` refers to ``webhook_endpoint``, ``delivery`` to both.
TABLES = ("webhook_endpoint", "event", "delivery")

PLAIN_KEY = '"id" INTEGER NOT NULL PRIMARY KEY,'


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """Make the three tables again with ``AUTOINCREMENT``, keeping their rows and indexes."""
    if fake or not isinstance(database, pw.SqliteDatabase):
        return
    statements = {
        table: database.execute_sql(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).fetchone()[0]
        for table in TABLES
    }
    if all(PLAIN_KEY not in sql for sql in statements.values()):
        return  # made by this version's models already
    indexes = [
        sql
        for (sql,) in database.execute_sql(
            "SELECT sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
            f"AND tbl_name IN ({', '.join('?' for _ in TABLES)})",
            TABLES,
        ).fetchall()
    ]
    for table in reversed(TABLES):
        database.execute_sql(f'ALTER TABLE "{table}" RENAME TO "{table}_before_004"')
    for table in TABLES:
        database.execute_sql(
            statements[table].replace(PLAIN_KEY, PLAIN_KEY[:-1] + " AUTOINCREMENT,", 1)
        )
        database.execute_sql(f'INSERT INTO "{table}" SELECT * FROM "{table}_before_004"')
    for table in reversed(TABLES):
        database.execute_sql(f'DROP TABLE "{table}_before_004"')
    for sql in indexes:
        database.execute_sql(sql)


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    """Nothing to undo that matters: the tables keep ``AUTOINCREMENT``."""
