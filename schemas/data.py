"""Data API shapes: the catalog, the match feed and the usage report."""

from datetime import UTC, datetime

from itsdangerous import BadSignature, URLSafeSerializer
from marshmallow import ValidationError, fields, validate

from enums import CARD_RELATIONS, MATCH_STATUSES, USAGE_STATES
from schemas.common import CamelSchema, UTCDateTime, enum_of, id_field, wire
from schemas.matches import MatchCardSchema
from schemas.numbers import Integer
from schemas.spans import DayOrInstant, KickoffRangeSchema
from schemas.text import CommaList


class FeedCursor(fields.String):
    """A position in the match feed's order, (kick-off, id), as an opaque token signed with the
    service's key: a client passes back only what it was given (anything else is a 422)."""

    SALT = "match-feed-cursor"
    INVALID = "Not a valid cursor: pass nextCursor as it was given."
    MAX_LENGTH = 512

    @classmethod
    def _signer(cls) -> URLSafeSerializer:
        return URLSafeSerializer(wire()["cursor_key"], salt=cls.SALT)

    def _serialize(self, value, attr, obj, **kwargs):
        if value is None:
            return None
        kickoff_at, match_id = value
        return self._signer().dumps([kickoff_at.astimezone(UTC).isoformat(), match_id])

    def _deserialize(self, value, attr, data, **kwargs):
        text = super()._deserialize(value, attr, data, **kwargs)
        if len(text) > self.MAX_LENGTH:  # before any work on it
            raise ValidationError(self.INVALID)
        try:
            moment, match_id = self._signer().loads(text)
            return datetime.fromisoformat(moment), int(match_id)
        except (BadSignature, TypeError, ValueError) as exc:
            raise ValidationError(self.INVALID) from exc


class CatalogResourceSchema(CamelSchema):
    """A resource that can be fetched or exported."""

    name = fields.String(required=True)
    path = fields.String(
        allow_none=True,
        metadata={"description": "Its GET endpoint; null while the resource is export-only."},
    )
    fields_ = fields.List(fields.String(), required=True, data_key="fields", attribute="fields")
    filters = fields.List(fields.String(), required=True)
    includes = fields.List(fields.String(), required=True)
    export_formats = fields.List(fields.String(), required=True)


class CatalogLeagueSchema(CamelSchema):
    """A league with the data held for it."""

    id = Integer(required=True)
    code = fields.String(required=True)
    name = fields.String(required=True)
    country = fields.String(required=True)
    competition_type = fields.String(required=True)
    seasons = fields.List(fields.String(), required=True)
    match_count = Integer(required=True)
    first_kickoff_at = UTCDateTime(allow_none=True)
    last_kickoff_at = UTCDateTime(allow_none=True)


class CatalogSchema(CamelSchema):
    """What the Data API offers."""

    resources = fields.List(fields.Nested(CatalogResourceSchema), required=True)
    export_formats = fields.List(fields.String(), required=True)
    leagues = fields.List(fields.Nested(CatalogLeagueSchema), required=True)


class CounterSchema(CamelSchema):
    """One quota counter; a null limit means unlimited."""

    used = Integer(required=True)
    limit = Integer(required=True, allow_none=True)
    remaining = Integer(required=True, allow_none=True)


class PeriodSchema(CamelSchema):
    """A calendar month in UTC; ``end`` is exclusive (the next month's first instant)."""

    start = UTCDateTime(required=True)
    end = UTCDateTime(required=True)


class UsageSchema(CamelSchema):
    """Current-period consumption and quota state."""

    period = fields.Nested(PeriodSchema, required=True)
    plan = fields.String(required=True)
    requests = fields.Nested(CounterSchema, required=True)
    exports = fields.Nested(CounterSchema, required=True)
    export_rows = fields.Nested(CounterSchema, required=True)
    state = enum_of(
        USAGE_STATES,
        required=True,
        metadata={
            "description": "`warning` from 80 % of any limit, `exceeded` once one is spent.",
        },
    )
    resets_at = UTCDateTime(required=True)


class MatchesArgsSchema(KickoffRangeSchema):
    """Filters, relations and paging of the match feed."""

    date_from = DayOrInstant(data_key="from", metadata={"description": "Kick-off from."})
    date_to = DayOrInstant(
        data_key="to", metadata={"description": "Kick-off to (a date includes its whole day)."}
    )
    league_id = id_field()
    team_id = id_field(metadata={"description": "Home or away."})
    statuses = CommaList(MATCH_STATUSES, data_key="status")
    include = CommaList(
        CARD_RELATIONS,
        metadata={"description": "Relations to add to each match; each costs one query a page."},
    )
    limit = Integer(
        load_default=100,
        validate=validate.Range(1, 1000),
        metadata={"description": "Matches per page, 1–1000 (default 100)."},
    )
    after = FeedCursor(
        data_key="cursor",
        validate=validate.Length(max=FeedCursor.MAX_LENGTH),  # documents it: checked on load
        metadata={"description": "`nextCursor` of the previous page, as it was given."},
    )


class MatchesPageSchema(CamelSchema):
    """A page of matches by kick-off, then id."""

    items = fields.List(fields.Nested(MatchCardSchema), required=True)
    limit = Integer(required=True)
    next_after = FeedCursor(
        data_key="nextCursor",
        required=True,
        allow_none=True,
        metadata={"description": "Pass as `cursor` for the next page; null on the last page."},
    )
