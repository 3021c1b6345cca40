"""Column types of our own: datetimes stored as naive UTC and handed out aware, JSON as text, ids
never given twice."""

import json
from datetime import UTC, datetime

from peewee import SQL, AutoField, DateTimeField, NodeList, SqliteDatabase, TextField


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


class SequenceField(AutoField):
    """An id never given twice, even once its row is deleted: SQLite's ``AUTOINCREMENT``, where a
    plain ``INTEGER PRIMARY KEY`` gives the highest id again once that row is gone. (PostgreSQL's
    sequences never do.) For ids a client keeps: a webhook's ``webhook-id``, by which receivers
    drop repeats, and the endpoint and delivery ids it names."""

    def ddl(self, ctx):
        node = super().ddl(ctx)
        database = self.model._meta.database  # the proxy, or a migration's own database
        if isinstance(getattr(database, "obj", database), SqliteDatabase):
            return NodeList((node, SQL("AUTOINCREMENT")))
        return node
