"""Bulk rows: reading and writing hundreds of thousands of plain tuples without Peewee's
per-value work."""

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


def insert_rows(model, names: list[str], rows, page_size=5000, constants=None) -> None:
    """Insert many plain tuples (values in ``names`` order) in few statements; ``constants``
    are fields given one value for every row (converted once).

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
    cursor = db.cursor()
    if is_sqlite():
        marks = ", ".join("?" for _ in fields)
        cursor.executemany(
            f'INSERT INTO "{model._meta.table_name}" ({columns}) VALUES ({marks})', converted
        )
        return
    execute_values(
        cursor,
        f'INSERT INTO "{model._meta.table_name}" ({columns}) VALUES %s',
        converted,
        page_size=page_size,
    )


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
