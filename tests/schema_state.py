"""A database's schema as plain data, read from the database itself (SQLite's catalogue or
PostgreSQL's), so two ways of making a schema can be compared: tables and their columns (type,
nullability, default, primary key), foreign keys, indexes, triggers and functions.

Column order is left out (queries name their columns), and so is the migration history table.
Also: emptying a database (:func:`wipe`) and describing one by its URL (:func:`schema_of`), for
the tests that migrate one.
"""

import re
from pathlib import Path

import psycopg2
from peewee import SqliteDatabase

from store.database import discard_connections, open_database

#: Tables that are the migration tool's own, not the service's schema.
IGNORED = ("migratehistory",)


def wipe(url: str) -> None:
    """An empty database at ``url``: no table, trigger, function or migration history."""
    discard_connections()
    if url.startswith("sqlite"):
        path = Path(url.split(":///", 1)[1])
        for suffix in ("", "-wal", "-shm"):
            path.with_name(path.name + suffix).unlink(missing_ok=True)
        return
    with psycopg2.connect(url) as connection, connection.cursor() as cursor:
        cursor.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
    connection.close()


def schema_of(url: str) -> dict:
    """The description of the schema at ``url``, read on a connection of its own."""
    database = open_database(url, pooled=False)
    try:
        return describe(database)
    finally:
        database.close()


def describe(database) -> dict:
    """``{"tables": {name: {...}}, "triggers": {...}, "functions": {...}}`` of ``database``."""
    if isinstance(database, SqliteDatabase):
        return _sqlite(database)
    return _postgres(database)


def _rows(database, sql, params=()):
    return database.execute_sql(sql, params).fetchall()


def _sqlite(database) -> dict:
    tables = {}
    names = _rows(
        database,
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
    )
    for (table,) in names:
        if table in IGNORED:
            continue
        columns = {
            name: {
                "type": kind.upper(),
                "null": not notnull,
                "default": default,
                "primary_key": bool(pk),
            }
            for _cid, name, kind, notnull, default, pk in _rows(
                database, f'PRAGMA table_info("{table}")'
            )
        }
        foreign_keys = sorted(
            (row[3], row[2], row[4], row[6])  # from, table, to, on delete
            for row in _rows(database, f'PRAGMA foreign_key_list("{table}")')
        )
        indexes = {}
        for _seq, name, unique, origin, _partial in _rows(
            database, f'PRAGMA index_list("{table}")'
        ):
            columns_of = [row[2] for row in _rows(database, f'PRAGMA index_info("{name}")')]
            # SQLite names the indexes of UNIQUE constraints itself: key them by what they cover.
            key = name if origin == "c" else f"{origin}:{','.join(columns_of)}"
            indexes[key] = {"unique": bool(unique), "columns": columns_of}
        (made,) = _rows(database, "SELECT sql FROM sqlite_master WHERE name = ?", (table,))[0]
        tables[table] = {
            "columns": columns,
            "foreign_keys": foreign_keys,
            "indexes": indexes,
            "autoincrement": "AUTOINCREMENT" in made.upper(),
        }
    triggers = {
        name: _spaces(sql)
        for name, sql in _rows(
            database, "SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"
        )
    }
    return {"tables": tables, "triggers": triggers, "functions": {}}


def _postgres(database) -> dict:
    tables = {}
    names = _rows(
        database,
        "SELECT table_name FROM information_schema.tables "
        "WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
    )
    for (table,) in names:
        if table in IGNORED:
            continue
        columns = {
            name: {"type": kind, "length": length, "null": nullable == "YES", "default": default}
            for name, kind, length, nullable, default in _rows(
                database,
                "SELECT column_name, data_type, character_maximum_length, is_nullable, "
                "column_default FROM information_schema.columns "
                "WHERE table_schema = current_schema() AND table_name = %s",
                (table,),
            )
        }
        constraints = dict(
            _rows(
                database,
                "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint "
                "WHERE conrelid = %s::regclass",
                (f'"{table}"',),
            )
        )
        indexes = {
            name: _spaces(definition)
            for name, definition in _rows(
                database,
                "SELECT indexname, indexdef FROM pg_indexes "
                "WHERE schemaname = current_schema() AND tablename = %s",
                (table,),
            )
        }
        tables[table] = {"columns": columns, "constraints": constraints, "indexes": indexes}
    triggers = {
        name: _spaces(definition)
        for name, definition in _rows(
            database,
            "SELECT tgname, pg_get_triggerdef(t.oid) FROM pg_trigger t "
            "JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE NOT t.tgisinternal AND n.nspname = current_schema()",
        )
    }
    functions = {
        name: _spaces(source)
        for name, source in _rows(
            database,
            "SELECT p.proname, p.prosrc FROM pg_proc p "
            "JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = current_schema()",
        )
    }
    return {"tables": tables, "triggers": triggers, "functions": functions}


def _spaces(text: str) -> str:
    return re.sub(r"\s+", " ", text or "").strip()


def differences(left: dict, right: dict, names=("first", "second"), path="") -> list[str]:
    """Where two descriptions differ, one line each (empty when they are the same); ``names``
    say what each side is."""
    if isinstance(left, dict) and isinstance(right, dict):
        found = []
        for key in sorted(set(left) | set(right), key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in right:
                found.append(f"{where}: only in the {names[0]}")
            elif key not in left:
                found.append(f"{where}: only in the {names[1]}")
            else:
                found.extend(differences(left[key], right[key], names, where))
        return found
    return [] if left == right else [f"{path}: {names[0]} {left!r}, {names[1]} {right!r}"]
