"""What every table shares: the base model bound to the database proxy, with its one-statement
lookups (``one_where``, ``get_or_raise``), the ``choices`` of an enumeration, and slugs."""

import functools
import hashlib
import re
import unicodedata

from peewee import Model

from enums import SLUG_PART_MAX
from errors import NotFound
from store.database import db


def choices_of(values):
    """Peewee's ``choices`` (documentation of a column's allowed values) from an enumeration."""
    return [(value, value) for value in values]


def slugify(text: str, limit: int = SLUG_PART_MAX) -> str:
    """``Nott'm Forest`` → ``nott-m-forest``: ASCII letters and digits joined by hyphens, at
    most ``limit`` characters (cut at a hyphen where there is one). A name with no ASCII letter
    or digit at all (``Динамо``) becomes ``team-`` and a digest of it, so distinct names keep
    distinct, routable slugs."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    if not slug:
        return "team-" + hashlib.sha256(text.encode()).hexdigest()[:12]
    if len(slug) > limit:
        cut = slug[: limit + 1].rfind("-")
        slug = slug[: cut if cut > 0 else limit].strip("-")
    return slug


@functools.cache
def _select_one(model, names: tuple[str, ...], param: str) -> str:
    """The SQL of ``model.one_where`` on the fields ``names``, written once."""
    columns = ", ".join(f'"{field.column_name}"' for field in model._meta.sorted_fields)
    where = " AND ".join(f'"{model._meta.fields[name].column_name}" = {param}' for name in names)
    return f'SELECT {columns} FROM "{model._meta.table_name}" WHERE {where} LIMIT 1'


class BaseModel(Model):
    """Every table: bound to the proxy, snake_case table names."""

    class Meta:
        database = db
        legacy_table_names = False

    @classmethod
    def one_where(cls, **equal):
        """The row whose fields equal ``equal``, or None, in one plain statement.

        For the lookups every request makes (its caller, its quota counter): Peewee would spend
        longer building their SQL than the database spends answering it.
        """
        fields = cls._meta.sorted_fields
        named = [cls._meta.fields[name] for name in equal]
        params = [field.db_value(value) for field, value in zip(named, equal.values(), strict=True)]
        row = db.execute_sql(_select_one(cls, tuple(equal), db.param), params).fetchone()
        if row is None:
            return None
        # As Peewee makes a row it has read: no defaults computed, nothing left to save.
        record = cls(
            __no_default__=True,
            **{
                field.name: field.python_value(value)
                for field, value in zip(fields, row, strict=True)
            },
        )
        record._dirty.clear()
        return record

    @classmethod
    def get_or_raise(cls, record_id, what=None):
        """The record with ``record_id``, or NotFound naming what was looked for."""
        record = cls.get_or_none(cls._meta.primary_key == record_id)
        if record is None:
            raise NotFound(f"{what or cls.__name__} {record_id} does not exist.")
        return record
