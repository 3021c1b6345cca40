"""Rows written fast: a schema compiled into one converter per column, for exports."""

from marshmallow import Schema, fields

from engine.markets import market_line
from schemas.common import utc_z
from schemas.numbers import Line, Rounded, round_to


def _utc_text(value):
    """A stored datetime as the driver returns it (SQLite text, PostgreSQL naive datetime, or an
    aware datetime) in the one wire format."""
    if value is None:
        return None
    if isinstance(value, str):  # SQLite: "YYYY-MM-DD HH:MM:SS[.ffffff]", naive UTC
        return f"{value[:10]}T{value[11:19]}Z"
    return utc_z(value)


def flat_rows(schema: Schema, booleans=(True, False)):
    """``(names, convert)`` for writing rows of ``schema`` fast: its fields' wire names, and a
    function turning a driver row (values in field order) into wire values.

    Exports write up to millions of rows; marshmallow would spend microseconds per field, so the
    schema is compiled once into one converter per column (datetimes to UTC ``Z``, booleans
    from 0/1 to ``booleans``, a ``line`` from its row's ``market``) and everything else passes
    as the driver gives it.
    """
    true, false = booleans

    def boolean(value):
        return None if value is None else true if value else false

    names, converters, lines = [], [], []
    for name, field in schema.fields.items():
        names.append(field.data_key or name)
        if isinstance(field, Line):
            lines.append((len(converters), list(schema.fields).index("market")))
            converters.append(None)
        elif isinstance(field, fields.DateTime):
            converters.append(_utc_text)
        elif isinstance(field, Rounded):
            converters.append(lambda value, places=field.places: round_to(value, places))
        elif isinstance(field, fields.Boolean):
            converters.append(boolean)
        else:
            converters.append(None)
    pairs = [(index, convert) for index, convert in enumerate(converters) if convert]

    def convert(row):
        values = list(row)
        for index, converter in pairs:
            values[index] = converter(values[index])
        for index, market in lines:
            values[index] = market_line(values[market], values[index])
        return values

    return names, convert
