"""Bulk rows: reading and writing hundreds of thousands of plain tuples without Peewee's
per-value work."""

import json
import operator
import sqlite3
from itertools import repeat

import numpy as np
from psycopg2.extras import execute_values

from store.database import db, is_sqlite
from store.fields import JSONField, UTCDateTimeField


def _driver_values(fields, rows) -> list[tuple]:
    """Rows of plain values ready for the driver: only datetime and JSON columns need converting
    (numbers, strings, booleans and None pass as they are)."""
    convert = [
        index
        for index, field in enumerate(fields)
        if isinstance(field, UTCDateTimeField | JSONField)
    ]
    if not convert:
        return [tuple(row) for row in rows]
    converted = []
    for row in rows:
        row = list(row)
        for index in convert:
            row[index] = fields[index].db_value(row[index])
        converted.append(tuple(row))
    return converted


def fetch_rows(query) -> list[tuple]:
    """The query's rows as the driver returns them, without Peewee's per-value conversion.

    For reading hundreds of thousands of rows into arrays: datetimes come back as SQLite text or
    PostgreSQL naive datetimes (see ``epoch_seconds``), booleans as 0/1 on SQLite.
    """
    return db.execute(query).fetchall()


def epoch_seconds(values) -> np.ndarray:
    """Stored UTC datetimes, as ``fetch_rows`` returns them, as int64 epoch seconds."""
    return np.array(values, dtype="datetime64[s]").astype(np.int64)


def json_documents(values) -> list:
    """Stored JSON texts, as ``fetch_rows`` returns them, decoded in one parse (None stays None)."""
    return json.loads("[" + ",".join("null" if text is None else text for text in values) + "]")


def insert_rows(
    model,
    names: list[str],
    rows,
    page_size=5000,
    constants=None,
    skip_taken=False,
    replace_on=None,
) -> None:
    """Insert many plain tuples (values in ``names`` order) in few statements; ``constants``
    are fields given one value for every row (converted once). ``skip_taken`` leaves out, without
    an error, a row whose unique key a stored row holds already; ``replace_on`` (the fields of a
    unique key) makes such a row give the stored one its other ``names``' values instead (the
    ``constants`` only fill new rows).

    Peewee's ``insert_many`` builds its SQL value by value, which costs far more than the database
    does for hundreds of thousands of rows; this hands the driver one prepared statement
    (SQLite) or a page of rows per round trip (PostgreSQL's execute_values).
    """
    if not rows:
        return
    fields = [model._meta.fields[name] for name in names]
    converted = _driver_values(fields, rows)
    if constants:
        fields += [model._meta.fields[name] for name in constants]
        fixed = tuple(
            field.db_value(value)
            for field, value in zip(fields[len(names) :], constants.values(), strict=True)
        )
        converted = [(*row, *fixed) for row in converted]
    columns = ", ".join(f'"{field.column_name}"' for field in fields)
    table = f'"{model._meta.table_name}"'
    verb, on_conflict = "INSERT", ""
    if replace_on:
        key = [model._meta.fields[name].column_name for name in replace_on]
        updates = ", ".join(
            f'"{field.column_name}" = excluded."{field.column_name}"'
            for field in fields[: len(names)]  # the rows' own fields, not the constants
            if field.column_name not in key
        )
        target = ", ".join(f'"{column}"' for column in key)
        on_conflict = f" ON CONFLICT ({target}) DO UPDATE SET {updates}"
    elif skip_taken:  # as Peewee's on_conflict_ignore() writes it for each database
        if is_sqlite():
            verb = "INSERT OR IGNORE"
        else:
            on_conflict = " ON CONFLICT DO NOTHING"
    cursor = db.cursor()
    if is_sqlite():
        marks = ", ".join("?" for _ in fields)
        cursor.executemany(
            f"{verb} INTO {table} ({columns}) VALUES ({marks}){on_conflict}", converted
        )
        return
    execute_values(
        cursor,
        f"{verb} INTO {table} ({columns}) VALUES %s{on_conflict}",
        converted,
        page_size=page_size,
    )


def insert_records(model, records: list[dict], replace_on=None, skip_taken=False) -> None:
    """:func:`insert_rows` for records (dicts of field names, all with the same keys), the
    model's defaults filling the fields they leave out in new rows, as Peewee's ``insert_many``
    fills them (but a callable default is called once for them all, not once a row)."""
    if not records:
        return
    names = list(records[0])
    left_out = {
        field.name: default() if callable(default) else default
        for field, default in model._meta.defaults.items()
        if field.name not in names
    }
    rows = [tuple(record[name] for name in names) for record in records]
    insert_rows(
        model, names, rows, constants=left_out, skip_taken=skip_taken, replace_on=replace_on
    )


#: Peewee field types :func:`insert_columns` ships: integers as decimal text (PostgreSQL casts the
#: split text to the column's type), text as it is.
_INTEGER_TYPES = ("BIGINT", "INT", "SMALLINT")
_TEXT_TYPES = ("TEXT", "VARCHAR", "CHAR")


def insert_columns(model, columns: dict, constants=None, page_size=10000) -> None:
    """Insert rows given column by column (``{name: values}``, all as long; integer and text
    fields, no None); ``constants`` are fields given one value for every row (converted once).

    For appends of a hundred thousand rows in one transaction: SQLite runs one prepared INSERT
    over the columns zipped; PostgreSQL receives each column of a page as ONE text parameter,
    its values joined by newlines, and splits it itself (``string_to_array``, cast to the
    column's type): the driver quotes one string per column instead of adapting every value.
    So a text value holds no newline (canonical JSON and hex never do): one that does is
    refused (ValueError), as is None, a float or a field of another type.
    """
    values = [list(column) for column in columns.values()]
    count = len(values[0]) if values else 0
    if any(len(column) != count for column in values):
        raise ValueError("the columns differ in length")
    if not count:
        return
    if any(None in column for column in values):
        raise ValueError("insert_columns takes no None (NULL); insert_rows does")
    fields = [model._meta.fields[name] for name in columns]
    kinds = [_column_kind(field) for field in fields]
    constants = constants or {}
    fixed_fields = [model._meta.fields[name] for name in constants]
    fixed = [
        field.db_value(value) for field, value in zip(fixed_fields, constants.values(), strict=True)
    ]
    table = model._meta.table_name
    names = ", ".join(f'"{field.column_name}"' for field in [*fields, *fixed_fields])
    for column, kind in zip(values, kinds, strict=True):
        if kind == "integer":
            column[:] = map(operator.index, column)  # refuses floats (and converts NumPy's ints)
        elif any(map(operator.contains, column, repeat("\n"))):
            raise ValueError("a text value holds a newline, which separates the values")
    cursor = db.cursor()
    if is_sqlite():
        marks = ", ".join("?" for _ in [*fields, *fixed_fields])
        # Adapted once (a datetime as the driver writes it), not once per row.
        fixed = [sqlite3.adapt(value, sqlite3.PrepareProtocol, value) for value in fixed]
        rows = zip(*values, *(repeat(value, count) for value in fixed), strict=True)
        cursor.executemany(f'INSERT INTO "{table}" ({names}) VALUES ({marks})', rows)
        return
    types = db.get_context_options()["field_types"]
    aliases = [f"c{index}" for index in range(len(fields))]
    arrays = [
        "string_to_array(%s, E'\\n')" + ("" if kind == "text" else f"::{types[field.field_type]}[]")
        for field, kind in zip(fields, kinds, strict=True)
    ]
    selected = ", ".join([*aliases, *("%s" for _ in fixed)])
    statement = (
        f'INSERT INTO "{table}" ({names}) SELECT {selected} '
        f"FROM unnest({', '.join(arrays)}) AS v({', '.join(aliases)})"
    )
    for start in range(0, count, page_size):
        page = [column[start : start + page_size] for column in values]
        if len(page[0]) == 1:  # string_to_array('') is an empty array, not one empty string
            marks = ", ".join("%s" for _ in [*fields, *fixed_fields])
            row = (*(column[0] for column in page), *fixed)
            cursor.execute(f'INSERT INTO "{table}" ({names}) VALUES ({marks})', row)
            continue
        texts = [
            "\n".join(column if kind == "text" else map(str, column))
            for column, kind in zip(page, kinds, strict=True)
        ]
        cursor.execute(statement, (*fixed, *texts))


def _column_kind(field) -> str:
    if field.field_type in _INTEGER_TYPES:
        return "integer"
    if field.field_type in _TEXT_TYPES:
        return "text"
    raise TypeError(f"insert_columns ships integer and text fields, not {field.name}")


def update_rows(model, columns: dict[str, str], rows, constants=None, page_size=5000) -> None:
    """Set ``columns`` on many rows by id in a few statements: ``rows`` are ``(id, value, …)``.

    ``columns`` maps each field to its SQL type, so PostgreSQL types the VALUES list (NULLs
    included); ``constants`` are fields set to one value on every row. SQLite runs one prepared
    UPDATE over all rows; PostgreSQL joins each page of rows as a VALUES list (psycopg2's
    execute_values), a round trip per page, not per row.
    """
    if not rows:
        return
    table = model._meta.table_name
    fixed = {
        name: getattr(model, name).db_value(value) for name, value in (constants or {}).items()
    }
    converted = _driver_values([model.id, *(getattr(model, name) for name in columns)], rows)
    cursor = db.cursor()
    if is_sqlite():
        assignments = ", ".join(f'"{name}" = ?' for name in [*columns, *fixed])
        cursor.executemany(
            f'UPDATE "{table}" SET {assignments} WHERE "id" = ?',
            [(*values, *fixed.values(), row_id) for row_id, *values in converted],
        )
        return
    assignments = [f'"{name}" = v."{name}"::{kind}' for name, kind in columns.items()]
    assignments += [
        f'"{name}" = ' + cursor.mogrify("%s", (value,)).decode() for name, value in fixed.items()
    ]
    names = ", ".join(f'"{name}"' for name in ["id", *columns])
    execute_values(
        cursor,
        f'UPDATE "{table}" SET {", ".join(assignments)} FROM (VALUES %s) AS v({names}) '
        f'WHERE "{table}"."id" = v."id"',
        converted,
        page_size=page_size,
    )
