"""Explorer shapes: the slate of a day and comparable matches."""

from marshmallow import fields, validate

from enums import (
    COMPARABLE_DEFAULT,
    COMPARABLE_LIMIT,
    COMPARABLE_SCOPES,
    MARKETS,
    SELECTIONS,
)
from schemas.common import CamelSchema, enum_of, id_field, one_of
from schemas.matches import MatchSchema, PickSchema, PredictionSchema, probability_map
from schemas.numbers import LINE_DESCRIPTION, Float, Integer, line_filter, ratio
from schemas.spans import day_field

#: What the explorer's ``market`` argument says in the OpenAPI description.
MARKET_DESCRIPTION = (
    "`1x2` (default; home, draw, away), `ou25` (over/under 2.5 goals), `btts` (both teams to "
    "score), `ah` (Asian handicap: home, away at the home side's handicap) or `ou` (over/under "
    "at any other line). A market with lines is a set of selections per line: see `line`."
)


class SlateArgsSchema(CamelSchema):
    """Which day, market, line and matches."""

    day = day_field()
    league_id = id_field()
    team_id = id_field(metadata={"description": "Home or away."})
    market = one_of(MARKETS, load_default="1x2", metadata={"description": MARKET_DESCRIPTION})
    line = line_filter(
        "Only the items at exactly this line, a multiple of 0.25: `market=ah&line=-0.25` the "
        "Asian handicap at −0.25, `market=ou&line=3` over/under 3 goals, `market=ou25&line=2.5` "
        "every item of `ou25`; a market without a line (`1x2`, `btts`) has none to match. A "
        "match sealed for the caller (see `locked`) keeps its one item, its line null, whatever "
        "`line` asks: which matches an answer keeps must not tell which lines a sealed match "
        "quotes."
    )
    min_data_quality = Float(
        validate=validate.Range(0, 1),
        metadata={"description": "Only items whose prediction has at least this quality."},
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
    """A match of the slate with the market's prediction, prices, edges and pick at one line:
    a market with lines (`ah`, `ou`) has an item per line the match quotes or is predicted at,
    by line, each a set of selections of its own."""

    match = fields.Nested(MatchSchema, required=True)
    line = fields.Float(
        required=True,
        allow_none=True,
        metadata={
            "description": f"{LINE_DESCRIPTION} For `ah` and `ou`, null where the match has no "
            "line of the market, and where it is sealed for the caller: its one item then "
            "stands for every line, every price, probability and edge null, its pick locked "
            "(which lines a sealed match quotes narrows its locked pick's line down)."
        },
    )
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
    market = one_of(MARKETS, load_default="1x2", metadata={"description": MARKET_DESCRIPTION})
    line = line_filter(
        "The line to compare at, a multiple of 0.25: the match's prediction at exactly this "
        "line beside past forecasts at the same line. Without it a market with lines (`ah`, "
        "`ou`) is compared at the match's main line (its forecast nearest even odds, then the "
        "lower line); a market without a line (`1x2`, `btts`) has no prediction at any line, "
        "`ou25` one at 2.5. A match sealed for the caller lists no matches whatever `line` "
        "asks."
    )
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
        SELECTIONS,
        required=True,
        allow_none=True,
        metadata={
            "description": "The selection that won (at a quarter line, won at least half its "
            "stake); null for a push at a whole line of `ah` or `ou`, the stake refunded."
        },
    )
    distance = fields.Float(
        required=True, metadata={"description": "Euclidean distance between the probabilities."}
    )


class SelectionRateSchema(CamelSchema):
    """How often a selection won among the comparable matches, beside how often it was given."""

    selection = enum_of(SELECTIONS, required=True)
    mean_predicted = fields.Float(required=True, allow_none=True)
    observed_rate = fields.Float(
        required=True,
        allow_none=True,
        metadata={
            "description": "The share of the matches' decided stakes the selection won: a "
            "push counts nothing, a quarter line's half won or half lost a half (as a line's "
            "fair probability weighs them). Null without matches, or with only pushes."
        },
    )


class ComparableSummarySchema(CamelSchema):
    """The comparable matches summed up."""

    count = Integer(required=True)
    selections = fields.List(fields.Nested(SelectionRateSchema), required=True)


class ComparableSchema(CamelSchema):
    """Finished matches that kicked off earlier, nearest first."""

    match = fields.Nested(MatchSchema, required=True)
    market = enum_of(MARKETS, required=True)
    line = fields.Float(
        required=True,
        allow_none=True,
        metadata={
            "description": "The line compared at: the `line` asked for, else the main line of "
            "`ah` or `ou`; 2.5 for `ou25`; null for `1x2` and `btts`, for a market with lines "
            "the match has no prediction of, and for a sealed match (its main line would tell "
            "which lines it quotes)."
        },
    )
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
