"""Data API shapes: the catalog, the match feed and the usage report."""

from datetime import UTC, datetime

from itsdangerous import BadSignature, URLSafeSerializer
from marshmallow import ValidationError, fields, post_load, validate, validates_schema

from enums import (
    CARD_RELATIONS,
    FEED_DEFAULT_LIMIT,
    FEED_LIMIT,
    FEED_RELATION_COSTS,
    ID_RANGE,
    MATCH_STATUSES,
    USAGE_STATES,
)
from schemas.common import CamelSchema, UTCDateTime, enum_of, id_field, wire
from schemas.matches import MatchCardSchema
from schemas.numbers import Integer
from schemas.spans import DayOrInstant, KickoffRangeSchema
from schemas.text import CommaIds, CommaList


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


def max_limit(includes) -> int:
    """The largest page of the match feed with the relations ``includes``: ``FEED_LIMIT`` bare
    matches' worth, each match costing one plus its relations' costs, down to a multiple of 10."""
    cost = 1 + sum(FEED_RELATION_COSTS[name] for name in set(includes))
    return max(FEED_LIMIT // cost // 10 * 10, 10)


LIMIT_DESCRIPTION = (
    f"Matches per page (by default {FEED_DEFAULT_LIMIT}, or the bound below when it is lower): at "
    f"most {FEED_LIMIT} bare, fewer with relations, as each "
    f"costs per match about as much as more bare matches ("
    + ", ".join(f"`{name}` {cost}" for name, cost in FEED_RELATION_COSTS.items())
    + f"): at most {FEED_LIMIT} ÷ (1 + their costs), down to a multiple of 10. So "
    + ", ".join(f"`{name}` alone {max_limit([name])}" for name in CARD_RELATIONS)
    + f", `odds,predictions,picks` {max_limit(('odds', 'predictions', 'picks'))}, all four "
    f"{max_limit(CARD_RELATIONS)}. A larger `limit` is a 422 naming the bound for the "
    "relations asked."
)


IDS_DESCRIPTION = (
    "Fetch these matches in one call: their ids, comma-separated (`ids=7,12,31`; a repeated id "
    "counts once). At most as many distinct ids as the largest `limit` for the relations asked "
    f"({FEED_LIMIT} bare, {max_limit(CARD_RELATIONS)} with all four: see `limit`); more is a "
    "422 naming `ids`, as is an entry that is not an id. The answer is one page holding each "
    "match asked that exists and passes the other filters, in the order the ids were first "
    "given, with `nextCursor` null and `limit` the number of distinct ids; `missingIds` lists "
    "the others (no such match, or left out by another filter). It takes no `limit` or "
    "`cursor` (a 422). One call counts 1 against the monthly request quota, however many ids."
)


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
        validate=validate.Range(1, FEED_LIMIT),
        metadata={"description": LIMIT_DESCRIPTION},
    )
    after = FeedCursor(
        data_key="cursor",
        validate=validate.Length(max=FeedCursor.MAX_LENGTH),  # documents it: checked on load
        metadata={"description": "`nextCursor` of the previous page, as it was given."},
    )
    ids = CommaIds(ID_RANGE, FEED_LIMIT, metadata={"description": IDS_DESCRIPTION})

    @validates_schema
    def limit_within_its_bound(self, data, **kwargs):
        """A page costs at most ``FEED_LIMIT`` bare matches' worth (see :func:`max_limit`), and
        so does a batch of ``ids``, which is one page."""
        includes = [name for name in CARD_RELATIONS if name in (data.get("include") or ())]
        bound = max_limit(includes)
        asked = f"include={','.join(includes)}" if includes else "no include"
        if data.get("limit", 0) > bound:
            raise ValidationError(f"At most {bound} with {asked}.", "limit")
        ids = data.get("ids")
        if ids is None:
            return
        if len(ids) > bound:
            raise ValidationError(f"At most {bound} distinct ids with {asked}.", "ids")
        for name, key in (("limit", "limit"), ("after", "cursor")):
            if name in data:
                raise ValidationError(
                    f"A batch of `ids` is one page of every match asked: it takes no `{key}`.",
                    key,
                )

    @post_load
    def default_limit(self, data, **kwargs):
        """Without ``limit``, a page holds ``FEED_DEFAULT_LIMIT`` matches, or its bound; a batch
        of ``ids``, every one of them."""
        if "ids" in data:
            data["limit"] = len(data["ids"])
        elif "limit" not in data:
            data["limit"] = min(FEED_DEFAULT_LIMIT, max_limit(data.get("include") or ()))
        return data


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
    missing_ids = fields.List(
        Integer(),
        required=True,
        allow_none=True,
        metadata={
            "description": "With `ids`: the ids asked whose match is not in `items` (no such "
            "match, or one another filter leaves out), in the order given. Null without `ids`."
        },
    )
