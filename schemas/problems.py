"""Problem details (RFC 9457) as OpenAPI documents them."""

from marshmallow import Schema, fields

from schemas.numbers import Integer


class ProblemSchema(Schema):
    """RFC 9457 problem details, as every error other than 401 answers."""

    type = fields.String(
        required=True,
        metadata={
            "description": "`{base_url}/problems/<name>`; relative (`/problems/<name>`) when "
            "the service has no public base URL and the request's host is not an allowed one",
            "format": "uri-reference",
        },
    )
    title = fields.String(required=True)
    status = Integer(required=True)
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
    status = Integer(required=True)
    description = fields.String(required=True)
