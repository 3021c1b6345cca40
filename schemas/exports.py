"""Export shapes: the request, each resource's filters (the names of its list endpoint) and its
flat row, the same in CSV, JSON and NDJSON. The catalog lists these fields and filters, so what
it promises and what an export writes come from one place."""

from marshmallow import RAISE, ValidationError, fields, post_load, validate

from enums import (
    COMPETITION_TYPES,
    EXPORT_FORMATS,
    EXPORT_RESOURCES,
    MARGIN_METHODS,
    MARKETS,
    MATCH_STATUSES,
    PICK_RATINGS,
    PICK_STATUSES,
    PREDICTION_SOURCES,
    SELECTIONS,
)
from schemas.common import CamelSchema, UTCDateTime, enum_of, id_field, one_of
from schemas.matches import closing_line
from schemas.numbers import Integer, Line, line_filter, money, ratio
from schemas.records import FiguresSchema
from schemas.spans import KickoffRangeSchema
from schemas.text import CommaList, DuplicateName, load_json


class ExportRequestSchema(CamelSchema):
    """What to export, filtered how, in which format."""

    resource = one_of(EXPORT_RESOURCES, required=True)
    parameters_json = fields.String(
        load_default="{}",
        validate=validate.Length(max=10_000),
        metadata={
            "description": "The resource's filters as a JSON object in a string, e.g. "
            '`{"from": "2026-11-01", "leagueId": 3}`; the names of its list endpoint (see the '
            "catalog). Default `{}`: everything."
        },
    )
    format = one_of(EXPORT_FORMATS, required=True)

    @post_load
    def load_filters(self, data, **kwargs):
        """``parametersJson`` read through the resource's filter schema, as ``filters``."""
        data["filters"] = load_filters(data["resource"], data.pop("parameters_json"))
        return data


def load_filters(resource: str, text: str) -> dict:
    """A resource's filters from the JSON object in ``text``; a ValidationError keyed by
    ``parametersJson`` (or ``parametersJson.<filter>``) otherwise."""
    try:
        given = load_json(text)
    except DuplicateName as exc:
        # (a long name is clipped where the 422 is written, as every message)
        raise ValidationError(f"Names {exc.args[0]!r} twice.", "parametersJson") from exc
    except (ValueError, RecursionError) as exc:  # RecursionError: nested too deeply
        raise ValidationError(NOT_AN_OBJECT, "parametersJson") from exc
    if not isinstance(given, dict):
        raise ValidationError(NOT_AN_OBJECT, "parametersJson")
    schema = FILTERS[resource]()
    try:
        return schema.load(given)
    except ValidationError as exc:
        allowed = ", ".join(field.data_key for field in schema.fields.values()) or "none"
        errors = {}
        for key, messages in exc.normalized_messages().items():
            if messages == ["Unknown field."]:
                messages = [f"Unknown filter for {resource}; allowed: {allowed}."]
            errors[f"parametersJson.{key}"] = messages
        raise ValidationError(errors) from exc


NOT_AN_OBJECT = "Must be a JSON object in a string, such as {}."


class ExportJSONSchema(CamelSchema):
    """An export in the `json` format (CSV and NDJSON carry the same rows, one per line)."""

    id = Integer(required=True)
    resource = enum_of(EXPORT_RESOURCES, required=True)
    format = enum_of(EXPORT_FORMATS, required=True)
    row_count = Integer(required=True)
    generated_at = UTCDateTime(required=True)
    items = fields.List(
        fields.Dict(), required=True, metadata={"description": "The resource's rows (flat)."}
    )


class Filters(CamelSchema):
    """Filters of an export: unknown names are refused, naming the allowed ones."""

    class Meta:
        unknown = RAISE


class RangeFilters(Filters, KickoffRangeSchema):
    """``from`` and ``to`` on the kick-off: a date (its whole UTC day) or a date-time."""


class MatchFilters(RangeFilters):
    """Matches by kick-off, league, team (home or away) and status."""

    league_id = id_field(strict=True)
    team_id = id_field(strict=True)
    statuses = CommaList(MATCH_STATUSES, data_key="status")


class PickFilters(RangeFilters):
    """Picks by kick-off, league, market, rating, status and live or not."""

    league_id = id_field(strict=True)
    markets = CommaList(MARKETS, data_key="market")
    line = line_filter()
    ratings = CommaList(PICK_RATINGS, data_key="rating")
    statuses = CommaList(PICK_STATUSES, data_key="status")
    is_live = fields.Boolean()


class PredictionFilters(RangeFilters):
    """Predictions by kick-off, league and market."""

    league_id = id_field(strict=True)
    markets = CommaList(MARKETS, data_key="market")
    line = line_filter()


class OddsFilters(RangeFilters):
    """Quotes by kick-off, league, market, bookmaker, and pre-match or closing."""

    league_id = id_field(strict=True)
    markets = CommaList(MARKETS, data_key="market")
    line = line_filter()
    bookmaker = fields.String(validate=validate.Length(1, 32))
    is_closing = fields.Boolean()


class TeamFilters(Filters):
    """Teams that played in a league."""

    league_id = id_field(strict=True)


class NoFilters(Filters):
    """Leagues take no filter."""


class MatchRowSchema(CamelSchema):
    """A match, flat."""

    id = Integer()
    slug = fields.String()
    kickoff_at = UTCDateTime()
    status = enum_of(MATCH_STATUSES)
    season = fields.String()
    league_id = Integer()
    league_name = fields.String()
    competition_type = enum_of(COMPETITION_TYPES)
    home_team_id = Integer()
    home_team_name = fields.String()
    away_team_id = Integer()
    away_team_name = fields.String()
    home_goals = Integer(allow_none=True)
    away_goals = Integer(allow_none=True)


class PickRowSchema(CamelSchema):
    """A pick, flat, with its match's kick-off and league."""

    id = Integer()
    match_id = Integer()
    kickoff_at = UTCDateTime()
    league_id = Integer()
    market = enum_of(MARKETS)
    selection = enum_of(SELECTIONS)
    bookmaker = fields.String()
    odds = fields.Float()
    probability = ratio()
    edge = ratio()
    rating = enum_of(PICK_RATINGS)
    data_quality = fields.Float()
    stake = money()
    is_live = fields.Boolean()
    status = enum_of(PICK_STATUSES)
    profit = money(allow_none=True)
    closing_odds = fields.Float(allow_none=True)
    closing_bookmaker = fields.String(allow_none=True)
    closing_probability = ratio(allow_none=True)
    closing_line = closing_line(required=False)
    clv = ratio(allow_none=True)
    created_at = UTCDateTime()
    settled_at = UTCDateTime(allow_none=True)
    #: Last, so the columns of before keep their places in a CSV.
    line = Line()
    suggested_stake = ratio(
        metadata={
            "description": "The suggested stake, a share of the bankroll, as the match cards "
            "give it (`suggestedStake`: a fraction of Kelly at the probability the rating rule "
            "trusts, capped, 0 where the evidence was thin when the pick was made). The Data "
            "API is Pro's: nothing in an export is sealed."
        }
    )


class PredictionRowSchema(CamelSchema):
    """One selection of a prediction: the published, goal-model and market probabilities."""

    match_id = Integer()
    market = enum_of(MARKETS)
    selection = enum_of(SELECTIONS)
    probability = ratio(
        metadata={
            "description": "The published probability: the market's, a pool or the goal "
            "model's, as `source` says."
        }
    )
    model_probability = ratio(
        metadata={
            "description": "The goal model's own probability, before any pooling with the "
            "market (where `source` is `market`, its view beside the market's, with no weight)."
        }
    )
    market_probability = ratio(
        allow_none=True,
        metadata={"description": "The de-margined sharp pre-match probability; null without one."},
    )
    pool_weight = fields.Float(
        metadata={
            "description": "The goal model's weight in the pool (0: the market's line alone; 1: "
            "the goal model alone)."
        }
    )
    source = enum_of(
        PREDICTION_SOURCES,
        allow_none=True,
        metadata={
            "description": "Whose numbers `probability` is: `market` (the sharp line alone, "
            "pool weight 0), `pool` (that line pooled with the goal model), `market-ratings` or "
            "`dixon-coles` (the goal model alone). Null for predictions made before sources "
            "were recorded."
        },
    )
    model_name = fields.String()
    model_version = fields.String()
    margin_method = enum_of(MARGIN_METHODS, allow_none=True)
    made_at = UTCDateTime()
    fitted_at = UTCDateTime()
    data_quality = fields.Float()
    is_live = fields.Boolean()
    #: Last, so the columns of before keep their places in a CSV.
    line = Line()


class OddsRowSchema(CamelSchema):
    """One bookmaker's decimal price for one selection."""

    match_id = Integer()
    bookmaker = fields.String()
    market = enum_of(MARKETS)
    selection = enum_of(SELECTIONS)
    price = fields.Float()
    is_closing = fields.Boolean()
    #: Last, so the columns of before keep their places in a CSV.
    line = Line()


class TeamRowSchema(CamelSchema):
    """A team."""

    id = Integer()
    name = fields.String()
    country = fields.String()


class LeagueRowSchema(CamelSchema):
    """A league."""

    id = Integer()
    code = fields.String()
    name = fields.String()
    country = fields.String()
    competition_type = enum_of(COMPETITION_TYPES)


class TrackRecordRowSchema(FiguresSchema):
    """One group of the track record: live or backfilled, grouped how, which group."""

    part = enum_of(["live", "backfilled"])
    group_by = enum_of(["all", "month", "market", "rating", "competitionType"])
    group = fields.String(metadata={"description": "The month, market, rating or type."})

    class Meta:
        # The group comes first in a row, then its figures.
        fields = (
            "part",
            "group_by",
            "group",
            *FiguresSchema._declared_fields,
        )


#: Each resource's filters (its list endpoint's names) and its flat row.
FILTERS = {
    "matches": MatchFilters,
    "picks": PickFilters,
    "predictions": PredictionFilters,
    "odds": OddsFilters,
    "teams": TeamFilters,
    "leagues": NoFilters,
    "track-record": RangeFilters,
}
ROWS = {
    "matches": MatchRowSchema,
    "picks": PickRowSchema,
    "predictions": PredictionRowSchema,
    "odds": OddsRowSchema,
    "teams": TeamRowSchema,
    "leagues": LeagueRowSchema,
    "track-record": TrackRecordRowSchema,
}
