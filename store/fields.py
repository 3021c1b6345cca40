"""Column types of our own: datetimes stored as naive UTC and handed out aware, JSON as text."""

import json
from datetime import UTC, datetime

from peewee import DateTimeField, TextField


class UTCDateTimeField(DateTimeField):
    """Stores naive UTC, hands out timezone-aware UTC: the same on SQLite and PostgreSQL."""

    def db_value(self, value):
        if isinstance(value, datetime) and value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        return super().db_value(value)

    def python_value(self, value):
        value = super().python_value(value)
        if isinstance(value, datetime) and value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value


class JSONField(TextField):
    """A JSON document kept as text, so SQLite and PostgreSQL store it the same way."""

    def db_value(self, value):
        return None if value is None else json.dumps(value, separators=(",", ":"))

    def python_value(self, value):
        return None if value is None else json.loads(value)
