"""010: markets with lines. Quotes, summaries, the prices seen, predictions and picks gain
``line`` (the home side's handicap for "ah", the goals line for "ou"; 2.5 for "ou25" and 0 for
the markets without one, never null: see ``models.stored_line``), and the unique indexes of the
tables where a match has a row per line of a market include it. A pick stays one per match and
market. ``pick.status`` widens to sixteen characters ("half-lost").

Every row stored before keeps its meaning: "ou25" rows get 2.5, the others 0."""

import peewee as pw
from peewee_migrate import Migrator
from playhouse.migrate import SqliteMigrator

#: The tables that gain ``line``, each with its unique index before and after (``None``: the
#: index stays as it is).
KEYS = {
    "odds_quote": (
        ("match", "market", "is_closing", "bookmaker", "selection"),
        ("match", "market", "line", "is_closing", "bookmaker", "selection"),
    ),
    "odds_summary": (
        ("match", "market", "selection"),
        ("match", "market", "line", "selection"),
    ),
    "price_seen": (
        ("match", "market", "bookmaker", "selection", "first_seen_at"),
        ("match", "market", "line", "bookmaker", "selection", "first_seen_at"),
    ),
    "prediction": (("match", "market"), ("match", "market", "line")),
    "pick": None,
}


def _line():
    return pw.DoubleField(default=0.0, constraints=[pw.SQL("DEFAULT 0")])


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """The columns (added NOT NULL with the database default 0, then "ou25" rows set to 2.5),
    the indexes made again with the line, and the wider status; each kept where a database made
    by ``db init`` from this version already has it."""
    # (While faking, to rebuild the models' state, peewee-migrate answers no query.)
    for table, keys in KEYS.items():
        present = set() if fake else {column.name for column in database.get_columns(table)}
        if "line" in present:
            continue
        migrator.add_fields(table, allow_not_null=True, line=_line())
        migrator.sql(f'UPDATE "{table}" SET "line" = 2.5 WHERE "market" = \'ou25\'')
        if keys is not None:
            before, after = keys
            migrator.drop_index(table, *before)
            migrator.add_index(table, *after, unique=True)
    if fake:
        return
    if not isinstance(database, pw.SqliteDatabase):
        migrator.sql('ALTER TABLE "pick" ALTER COLUMN "status" TYPE VARCHAR(16)')
    elif _declared(database, "pick", "status") != "VARCHAR(16)":
        # SQLite keeps a column's declared type in the table's SQL: the table is made again with
        # its rows, indexes and keys (SQLite never enforced the eight characters).
        wider = pw.CharField(max_length=16)
        migrator.run(
            lambda: SqliteMigrator(database).alter_column_type("pick", "status", wider).run()
        )


def _declared(database, table, name) -> str:
    """The type SQLite's schema declares for ``table.name``."""
    (column,) = [column for column in database.get_columns(table) if column.name == name]
    return column.data_type.upper()


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    """Without the lines: the rows of line markets would collide in the narrower indexes, so
    they are deleted first (their quotes, summaries, prices seen, predictions and picks)."""
    for table, keys in KEYS.items():
        migrator.sql(f"DELETE FROM \"{table}\" WHERE \"market\" IN ('ah', 'ou')")
        if keys is not None:
            before, after = keys
            migrator.drop_index(table, *after)
            migrator.add_index(table, *before, unique=True)
        migrator.remove_fields(table, "line")
