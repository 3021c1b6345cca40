"""Explorer shapes: the slate of a day and comparable matches."""

from marshmallow import fields, validate

from enums import (
    COMPARABLE_DEFAULT,
    COMPARABLE_LIMIT,
    COMPARABLE_SCOPES,
    LINE_MARKETS,
    MARKETS,
    SELECTIONS,
)
from schemas.common import CamelSchema, enum_of, id_field, one_of
from schemas.matches import MatchSchema, PickSchema, PredictionSchema, probability_map
from schemas.numbers import Float, Integer, ratio
from schemas.spans import day_field

#: The markets the explorer compares: those without a line, and "ou25" (a market with lines has
#: a forecast per line, which a slate of one number per selection cannot show).
EXPLORED = tuple(market for market in MARKETS if market not in LINE_MARKETS)


class SlateArgsSchema(CamelSchema):
    """Which day, market and matches."""

    day = day_field()
    league_id = id_field()
    team_id = id_field(metadata={"description": "Home or away."})
    market = one_of(EXPLORED, load_default="1x2")
    min_data_quality = Float(
        validate=validate.Range(0, 1),
        metadata={"description": "Only matches whose prediction has at least this quality."},
    )


class SelectionEdgeSchema(CamelSchema):
    """One selection: published probability, best pre-match price and the edge between them.
    For anonymous and free callers, before kick-off, a match with a pick rated `A` shows no
    probability, price, bookmaker or edge in any market (the largest edge is the pick)."""

    selection = enum_of(SELECTIONS, required=True)
    probability = ratio(required=True, allow_none=True)
    best_price = fields.Float(required=True, allow_none=True)
    bookmaker = fields.String(required=True, allow_none=True)
    edge = ratio(
        required=True,
        allow_none=True,
        metadata={"description": "probability × best price − 1; null without both."},
    )


class SlateItemSchema(CamelSchema):
    """A match of the slate with the market's prediction, prices, edges and pick."""

    match = fields.Nested(MatchSchema, required=True)
    prediction = fields.Nested(PredictionSchema, required=True, allow_none=True)
    selections = fields.List(fields.Nested(SelectionEdgeSchema), required=True)
    pick = fields.Nested(PickSchema, required=True, allow_none=True)


class SlateSchema(CamelSchema):
    """A day's matches for one market, by kick-off."""

    date = fields.Date(required=True)
    market = enum_of(MARKETS, required=True)
    items = fields.List(fields.Nested(SlateItemSchema), required=True)


class ComparableArgsSchema(CamelSchema):
    """The match to compare, the market and where to look."""

    match_id = id_field(required=True)
    market = one_of(EXPLORED, load_default="1x2")
    scope = one_of(
        COMPARABLE_SCOPES,
        load_default="league",
        metadata={
            "description": "`league` (default): its league; `teams`: matches of either team; "
            "`global`: every league."
        },
    )
    limit = Integer(
        load_default=COMPARABLE_DEFAULT,
        validate=validate.Range(*COMPARABLE_LIMIT),
        metadata={
            "description": f"How many matches to list ({COMPARABLE_LIMIT[0]}–"
            f"{COMPARABLE_LIMIT[1]}, default {COMPARABLE_DEFAULT})."
        },
    )


class ComparableItemSchema(CamelSchema):
    """A past match, its published probabilities and what happened."""

    match = fields.Nested(MatchSchema, required=True)
    probabilities = probability_map("Its published probabilities.", required=True)
    outcome = enum_of(
        SELECTIONS, required=True, metadata={"description": "The selection that won."}
    )
    distance = fields.Float(
        required=True, metadata={"description": "Euclidean distance between the probabilities."}
    )


class SelectionRateSchema(CamelSchema):
    """How often a selection won among the comparable matches, beside how often it was given."""

    selection = enum_of(SELECTIONS, required=True)
    mean_predicted = fields.Float(required=True, allow_none=True)
    observed_rate = fields.Float(required=True, allow_none=True)


class ComparableSummarySchema(CamelSchema):
    """The comparable matches summed up."""

    count = Integer(required=True)
    selections = fields.List(fields.Nested(SelectionRateSchema), required=True)


class ComparableSchema(CamelSchema):
    """Finished matches that kicked off earlier, nearest first."""

    match = fields.Nested(MatchSchema, required=True)
    market = enum_of(MARKETS, required=True)
    scope = enum_of(COMPARABLE_SCOPES, required=True)
    locked = fields.Boolean(
        required=True,
        metadata={
            "description": "The match has a pick locked for this caller until kick-off: its "
            "probabilities are null and no comparable match is listed (which ones are nearest "
            "would give them back)."
        },
    )
    prediction = fields.Nested(
        PredictionSchema,
        required=True,
        allow_none=True,
        metadata={"description": "This match's prediction; null without one (then no items)."},
    )
    items = fields.List(fields.Nested(ComparableItemSchema), required=True)
    summary = fields.Nested(ComparableSummarySchema, required=True)
