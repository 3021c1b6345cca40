"""Shapes every endpoint group shares: camelCase, UTC datetimes, enumerations, paging, problems."""

from datetime import UTC

from marshmallow import Schema, fields, validate


def camelcase(name: str) -> str:
    """``page_size`` → ``pageSize``."""
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def camel_keys(value):
    """A JSON-like value with every dict key in camelCase, recursively."""
    if isinstance(value, dict):
        return {camelcase(str(key)): camel_keys(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [camel_keys(item) for item in value]
    return value


class CamelSchema(Schema):
    """Python attributes in snake_case, JSON in camelCase (also in validation errors)."""

    def on_bind_field(self, field_name, field_obj):
        field_obj.data_key = camelcase(field_obj.data_key or field_name)


class UTCDateTime(fields.DateTime):
    """ISO 8601 in UTC with a ``Z`` (``2026-11-21T19:45:00Z``); input without an offset is UTC."""

    def _serialize(self, value, attr, obj, **kwargs):
        if value is None:
            return None
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value.astimezone(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")

    def _deserialize(self, value, attr, data, **kwargs):
        parsed = super()._deserialize(value, attr, data, **kwargs)
        if parsed.tzinfo is None:
            return parsed.replace(tzinfo=UTC)
        return parsed.astimezone(UTC)


def one_of(values, **kwargs):
    """A string restricted to ``values``; the 422 names the allowed ones."""
    return fields.String(
        validate=validate.OneOf(values, error="Must be one of: {choices}."), **kwargs
    )


class PageArgsSchema(CamelSchema):
    """``page`` ≥ 1 (default 1) and ``pageSize`` 1–100 (default 20)."""

    page = fields.Integer(load_default=1, validate=validate.Range(min=1))
    page_size = fields.Integer(load_default=20, validate=validate.Range(min=1, max=100))


class PageSchema(CamelSchema):
    """The paging fields every paged list answers with."""

    page = fields.Integer(required=True)
    page_size = fields.Integer(required=True)
    total = fields.Integer(required=True, metadata={"description": "Items across all pages."})


class ProblemSchema(Schema):
    """RFC 9457 problem details, as every error other than 401 answers."""

    type = fields.String(
        required=True, metadata={"description": "`{base_url}/problems/<name>`", "format": "uri"}
    )
    title = fields.String(required=True)
    status = fields.Integer(required=True)
    detail = fields.String(required=True)
    errors = fields.Dict(
        keys=fields.String(),
        values=fields.List(fields.String()),
        metadata={"description": "Validation errors only: field or parameter name → messages."},
    )
    requestId = fields.String(  # noqa: N815 - the wire name
        metadata={"description": "The `X-Request-ID` of the request, as logged."}
    )


class ProblemDescriptionSchema(Schema):
    """What ``GET /problems/<name>`` answers."""

    name = fields.String(required=True)
    type = fields.String(required=True)
    title = fields.String(required=True)
    status = fields.Integer(required=True)
    description = fields.String(required=True)
