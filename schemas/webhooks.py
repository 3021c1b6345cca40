"""Webhook shapes: endpoints, their deliveries, and the payload of every event (documented in the
OpenAPI description's top-level ``webhooks``)."""

import json

from marshmallow import ValidationError, fields, validate, validates_schema

from enums import (
    DELIVERY_STATUSES,
    MARKETS,
    OPERATION_KINDS,
    OPERATION_STATUSES,
    PREDICTION_SOURCES,
    SETTLED_STATUSES,
    WEBHOOK_EVENTS,
)
from schemas.common import CamelSchema, PageArgsSchema, UTCDateTime, enum_of, page_of
from schemas.matches import closing_line
from schemas.numbers import Integer, JsonBoolean, Line, money, ratio

URL_MAX = 2048
DESCRIPTION_MAX = 500


def _events_field(**kwargs):
    return fields.List(
        fields.String(validate=validate.OneOf(WEBHOOK_EVENTS, error="Must be one of: {choices}.")),
        validate=validate.Length(min=1, max=len(WEBHOOK_EVENTS)),
        metadata={"description": "The event types to receive.", "uniqueItems": True},
        **kwargs,
    )


class EndpointCreateSchema(CamelSchema):
    """A new endpoint."""

    url = fields.String(
        required=True,
        validate=validate.Length(min=1, max=URL_MAX),
        metadata={
            "description": "Where events are POSTed: `https` (plain `http` outside production), "
            "on a host whose every address is public, with no space or control character "
            "(percent-encode them) and a port from 1 to 65535.",
            "format": "uri",
            "example": "https://example.com/hooks/picks",
        },
    )
    events = _events_field(required=True)
    description = fields.String(load_default="", validate=validate.Length(max=DESCRIPTION_MAX))


class EndpointUpdateSchema(CamelSchema):
    """What may change on an endpoint: any of its fields, at least one."""

    url = fields.String(validate=validate.Length(min=1, max=URL_MAX), metadata={"format": "uri"})
    events = _events_field()
    description = fields.String(validate=validate.Length(max=DESCRIPTION_MAX))
    enabled = JsonBoolean(
        metadata={
            "description": "`true` enables a disabled endpoint; its waiting deliveries "
            "go out again."
        }
    )

    @validates_schema
    def changes_something(self, data, **kwargs):
        """An empty body changes nothing: a 422, so a caller's mistake never reads as done."""
        if not data:
            raise ValidationError("Give at least one of url, events, description and enabled.")


class EndpointSchema(CamelSchema):
    """A webhook endpoint (its secret is shown only when made or rotated)."""

    id = Integer(required=True)
    url = fields.String(required=True)
    description = fields.String(required=True)
    events = fields.List(enum_of(WEBHOOK_EVENTS), required=True)
    enabled = fields.Boolean(required=True)
    disabled_reason = fields.String(
        required=True, allow_none=True, metadata={"description": "Why it was disabled."}
    )
    secret_rotating_until = UTCDateTime(
        required=True,
        allow_none=True,
        attribute="previous_secret_expires_at",
        metadata={"description": "Until when the previous secret signs too (after a rotation)."},
    )
    created_at = UTCDateTime(required=True)
    updated_at = UTCDateTime(required=True)


class EndpointWithSecretSchema(EndpointSchema):
    """An endpoint with its signing secret: shown this once."""

    secret = fields.String(
        required=True,
        metadata={
            "description": "The signing secret (`whsec_` and base64), shown only now: keep it.",
            "example": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        },
    )


class EndpointListSchema(CamelSchema):
    """The caller's endpoints."""

    items = fields.List(fields.Nested(EndpointSchema), required=True)
    limit = Integer(
        required=True, metadata={"description": "How many endpoints the account may have."}
    )


class DeliverySchema(CamelSchema):
    """One event for one endpoint: its state, tries and the last answer."""

    id = Integer(required=True)
    event_id = Integer(required=True)
    event_type = enum_of((*WEBHOOK_EVENTS, "ping"), required=True)
    webhook_id = fields.String(
        required=True, metadata={"description": "The `webhook-id` header it is sent with."}
    )
    status = enum_of(DELIVERY_STATUSES, required=True)
    attempts = Integer(required=True)
    last_attempt_at = UTCDateTime(required=True, allow_none=True)
    last_status_code = Integer(required=True, allow_none=True)
    last_error = fields.String(
        required=True,
        allow_none=True,
        metadata={
            "description": "Why the last try failed: the receiver's status (`answered 503`), "
            "`unreachable`, a refused address, or `not sent: …` when the endpoint's owner, read "
            "again at every try, may no longer receive the event (no longer Pro or admin, "
            "suspended): such a delivery fails at once and is sent to nobody."
        },
    )
    next_attempt_at = UTCDateTime(
        required=True, allow_none=True, metadata={"description": "Null once it is over."}
    )
    created_at = UTCDateTime(required=True)


class DeliveryQuerySchema(PageArgsSchema):
    """Filters of an endpoint's deliveries."""

    status = fields.String(
        validate=validate.OneOf(DELIVERY_STATUSES, error="Must be one of: {choices}.")
    )


DeliveryPageSchema = page_of(DeliverySchema, "Delivery")


# Payloads. What every event POSTs: {type, timestamp, data}; ``data`` is thin, the ``url`` of
# the resource says where to read the rest.


class PayloadDataSchema(CamelSchema):
    """What every event's ``data`` carries."""

    id = Integer(required=True, metadata={"description": "The id of what it is about."})
    url = fields.String(
        required=True,
        metadata={"description": "Where to read it (absolute with `PUBLIC_BASE_URL`)."},
    )


class ScoreDataSchema(CamelSchema):
    """Goals at full time."""

    home = Integer(required=True)
    away = Integer(required=True)


class PickPublishedDataSchema(PayloadDataSchema):
    """A live pick, published before kick-off (the match card at `url`)."""

    match_id = Integer(required=True)
    kickoff_at = fields.String(required=True, metadata={"format": "date-time"})
    market = enum_of(MARKETS, required=True)
    line = Line(required=True)
    rating = fields.String(required=True)
    selection = fields.String(required=True)
    odds = fields.Float(required=True)
    bookmaker = fields.String(required=True)
    probability = ratio(required=True)
    edge = ratio(required=True)
    suggested_stake = ratio(
        required=True,
        allow_none=True,
        dump_default=None,
        metadata={
            "description": "The suggested stake, a share of the bankroll, as known at "
            "publication (`suggestedStake`: a fraction of Kelly at the probability the rating "
            "rule trusts, capped, 0 where the evidence is thin), from the results stored then: "
            "a match card read later may size it on results stored since. "
            "Null for an event published before stakes were announced. Every endpoint's owner "
            "may see every pick, so nothing here is sealed."
        },
    )


class PickSettledDataSchema(PayloadDataSchema):
    """A live pick settled: won, lost, void, half won or half lost (the match card at `url`)."""

    match_id = Integer(required=True)
    market = enum_of(MARKETS, required=True)
    line = Line(required=True)
    selection = fields.String(required=True)
    status = enum_of(SETTLED_STATUSES, required=True)
    odds = fields.Float(required=True)
    profit = money(required=True)
    closing_odds = fields.Float(required=True, allow_none=True)
    closing_line = closing_line()
    clv = ratio(required=True, allow_none=True)


class MatchResultDataSchema(PayloadDataSchema):
    """A stored fixture got its result, or its result was corrected (the match at `url`)."""

    status = fields.String(required=True, metadata={"enum": ["finished"]})
    kickoff_at = fields.String(required=True, metadata={"format": "date-time"})
    score = fields.Nested(ScoreDataSchema, required=True)


class PredictionUpdatedDataSchema(PayloadDataSchema):
    """An upcoming match's published probabilities for a market (at a line) were made or
    changed."""

    match_id = Integer(required=True)
    market = enum_of(MARKETS, required=True)
    line = Line(required=True)
    probabilities = fields.Dict(
        keys=fields.String(),
        values=ratio(),
        required=True,
        metadata={"description": "The published probabilities: whose they are, `source` says."},
    )
    model_probabilities = fields.Dict(
        keys=fields.String(),
        values=ratio(),
        metadata={
            "description": "The goal model's own probabilities, beside the published ones for "
            "comparison (where `source` is `market`, the goal model carried no weight). Absent "
            "from events written before it was sent."
        },
    )
    source = enum_of(
        PREDICTION_SOURCES,
        required=True,
        metadata={
            "description": "Whose numbers `probabilities` are: `market` (the sharp line alone), "
            "`pool` (pooled with the goal model), `market-ratings` or `dixon-coles` (the goal "
            "model alone)."
        },
    )
    made_at = fields.String(required=True, metadata={"format": "date-time"})


class OperationCompletedDataSchema(PayloadDataSchema):
    """An operation finished (operators and admins only; the record at `url`)."""

    kind = enum_of(OPERATION_KINDS, required=True)
    status = enum_of(OPERATION_STATUSES, required=True)
    created_by = fields.Raw(
        required=True,
        allow_none=True,
        metadata={
            "description": "The id of the user who started it, `scheduler`, or null (CLI).",
            "oneOf": [{"type": "integer"}, {"const": "scheduler"}, {"type": "null"}],
        },
    )
    finished_at = fields.String(required=True, metadata={"format": "date-time"})
    error = fields.String(required=True, allow_none=True)


class PingDataSchema(PayloadDataSchema):
    """An endpoint's test: `id` and `url` are the endpoint's own."""


#: Each event type's ``data``.
DATA_SCHEMAS = {
    "pick.published": PickPublishedDataSchema,
    "pick.settled": PickSettledDataSchema,
    "match.result": MatchResultDataSchema,
    "prediction.updated": PredictionUpdatedDataSchema,
    "operation.completed": OperationCompletedDataSchema,
    "ping": PingDataSchema,
}

#: What the OpenAPI description says of each event.
EVENT_SUMMARIES = {
    "pick.published": "A live pick was published (a locked pick only to callers who may see it).",
    "pick.settled": "A live pick was settled as won, lost, void, half won or half lost.",
    "match.result": "A stored fixture got its full-time result (or it was corrected).",
    "prediction.updated": "An upcoming match's prediction for a market was made or changed.",
    "operation.completed": "An operation finished, succeeded or failed (operators and admins).",
    "ping": "The endpoint's test (`POST /api/v1/data/webhooks/{id}/test`).",
}


def envelope_schema(event_type: str):
    """The whole payload of ``event_type``: ``{type, timestamp, data}``."""
    return type(
        f"{DATA_SCHEMAS[event_type].__name__.removesuffix('DataSchema')}EventSchema",
        (CamelSchema,),
        {
            "__doc__": EVENT_SUMMARIES[event_type],
            "type": fields.String(required=True, metadata={"enum": [event_type]}),
            "timestamp": UTCDateTime(required=True, metadata={"description": "When it happened."}),
            "data": fields.Nested(DATA_SCHEMAS[event_type], required=True),
        },
    )


ENVELOPES = {name: envelope_schema(name)() for name in DATA_SCHEMAS}


def payload(event_type: str, occurred_at, data: dict, base_url: str) -> str:
    """The JSON body of an event, from the data its service stored (snake_case, with the
    ``path`` of what it is about)."""
    data = dict(data)
    data["url"] = base_url.rstrip("/") + data.pop("path")
    body = ENVELOPES[event_type].dump({"type": event_type, "timestamp": occurred_at, "data": data})
    return json.dumps(body, separators=(",", ":"))
