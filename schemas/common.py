"""Shapes every endpoint group shares: camelCase, the one UTC ``Z`` datetime format, identifiers and
enumerations, paging, and stored documents dumped through a schema."""

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TypedDict

from marshmallow import Schema, ValidationError, fields, validate
from marshmallow.experimental.context import Context

from enums import ID_RANGE
from schemas.numbers import INT32, Integer, WithinInt32
from schemas.text import plain_text


class Wire(TypedDict, total=False):
    """What the web layer hands the schemas while it answers a request (``web.wire``): the app's
    clock, which day arguments default by, and the key feed cursors are signed with. Outside a
    request there is none: the system clock, and no cursor to sign."""

    clock: Callable[[], datetime]
    cursor_key: str


#: The schemas' context for the request being answered (marshmallow's context variable).
WireContext = Context[Wire]


def wire() -> Wire:
    """The current request's :class:`Wire`, or an empty one outside a request."""
    return WireContext.get({})


def camelcase(name: str) -> str:
    """``page_size`` → ``pageSize``."""
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def utc_z(value: datetime) -> str:
    """The one way a datetime is written, in answers and in stored JSON alike:
    ISO 8601 in UTC to the second with a ``Z`` (``2026-11-21T19:45:00Z``); naive means UTC."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).replace(microsecond=0, tzinfo=None).isoformat() + "Z"


class CamelSchema(Schema):
    """Python attributes in snake_case, JSON in camelCase (also in validation errors).

    Every string and integer field also checks what it loads, whatever its schema adds: a
    string holds text a database and a log can store, an integer fits int32. So no request
    (body, query, or the filters inside an export's ``parametersJson``) reaches the database
    with a value it cannot take.
    """

    def on_bind_field(self, field_name, field_obj):
        field_obj.data_key = camelcase(field_obj.data_key or field_name)
        # The fields are this instance's shallow copies (marshmallow's Field.__deepcopy__), so
        # they share the class's list of validators: a new list each time, or every instance
        # made (several a request) would append to the one list for ever.
        if isinstance(field_obj, fields.String):
            field_obj.validators = [*field_obj.validators, plain_text]
        elif isinstance(field_obj, fields.Integer):
            field_obj.validators = [*field_obj.validators, WithinInt32(field_obj)]


class UTCDateTime(fields.DateTime):
    """ISO 8601 in UTC with a ``Z`` (``2026-11-21T19:45:00Z``); input without an offset is UTC."""

    def _serialize(self, value, attr, obj, **kwargs):
        return None if value is None else utc_z(value)

    def _deserialize(self, value, attr, data, **kwargs):
        parsed = super()._deserialize(value, attr, data, **kwargs)
        try:
            return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
        except OverflowError as exc:  # year 1 with a positive offset lies before year 1 in UTC
            raise ValidationError("Out of the supported date range.") from exc


def id_field(**kwargs):
    """An id argument: a positive 32-bit integer (``strict`` ones refuse numbers in strings)."""
    return Integer(validate=validate.Range(*ID_RANGE), **kwargs)


def enum_of(values, **kwargs):
    """An output string documented with its allowed values."""
    metadata = {"enum": list(values), **kwargs.pop("metadata", {})}
    return fields.String(metadata=metadata, **kwargs)


def one_of(values, **kwargs):
    """A string restricted to ``values``; the 422 names the allowed ones."""
    return fields.String(
        validate=validate.OneOf(values, error="Must be one of: {choices}."), **kwargs
    )


def dump_known(schema: Schema, value: dict) -> dict:
    """``schema.dump(value)``, refusing keys the schema does not know (marshmallow would drop
    them silently, and a stored document would lose what a service meant to keep)."""
    known = {field.attribute or name for name, field in schema.fields.items()}
    unknown = sorted(set(value) - known)
    if unknown:
        raise ValueError(f"{type(schema).__name__} does not know {', '.join(unknown)}")
    return schema.dump(value)


class PageArgsSchema(CamelSchema):
    """``page`` ≥ 1 (default 1) and ``pageSize`` 1–100 (default 20)."""

    page = Integer(load_default=1, validate=validate.Range(min=1, max=INT32[1]))
    page_size = Integer(load_default=20, validate=validate.Range(min=1, max=100))


class PageSchema(CamelSchema):
    """The paging fields every paged list answers with."""

    page = Integer(required=True)
    page_size = Integer(required=True)
    total = Integer(required=True, metadata={"description": "Items across all pages."})


def page_of(item_schema, name: str):
    """A page schema whose ``items`` are ``item_schema``s (named ``<name>PageSchema``)."""
    return type(
        f"{name}PageSchema",
        (PageSchema,),
        {
            "__doc__": f"One page of {name.lower()}s.",
            "items": fields.List(fields.Nested(item_schema), required=True),
        },
    )
