"""Match shapes: the match object every answer shares, the match card with its odds summary,
predictions, picks and intelligence, and the stored intelligence payload."""

from marshmallow import fields, validate

from enums import (
    CLOSING_LINES,
    COMPETITION_TYPES,
    GOAL_SOURCES,
    MARGIN_METHODS,
    MARKETS,
    MATCH_STATUSES,
    PICK_RATINGS,
    PICK_STATUSES,
    PREDICTION_SOURCES,
    SELECTIONS,
)
from schemas.common import CamelSchema, UTCDateTime, enum_of
from schemas.numbers import Integer, Line, money, ratio


def probability_map(description, **kwargs):
    """``{selection: probability}`` for one market's selections."""
    return fields.Dict(
        keys=fields.String(metadata={"enum": list(SELECTIONS)}),
        values=ratio(),
        metadata={"description": description},
        **kwargs,
    )


def closing_line(required=True):
    """A settled pick's ``closing_line`` field: which closing line it was measured against."""
    return enum_of(
        CLOSING_LINES,
        required=required,
        allow_none=True,
        metadata={
            "description": "Which closing line the closing odds, CLV and fair closing EV come "
            "from: `source`, the source's own closing prices (football-data.co.uk's closing "
            "columns); `seen`, the service's own closing line, the latest price it saw before "
            "kick-off, used where the source gives no closing price. Null while pending, "
            "without a closing price, and for picks settled before the closing line was "
            "recorded."
        },
    )


class LeagueRefSchema(CamelSchema):
    """The league a match belongs to."""

    id = Integer(required=True)
    name = fields.String(required=True)
    country = fields.String(required=True)
    competition_type = enum_of(COMPETITION_TYPES, required=True)


class TeamRefSchema(CamelSchema):
    """A team as a match names it."""

    id = Integer(required=True)
    name = fields.String(required=True)


class ScoreSchema(CamelSchema):
    """Full-time goals."""

    home = Integer(required=True)
    away = Integer(required=True)


class MatchSchema(CamelSchema):
    """A match, as every answer that mentions one carries it."""

    id = Integer(required=True)
    slug = fields.String(
        required=True, metadata={"description": "`home-team-vs-away-team-YYYY-MM-DD`."}
    )
    kickoff_at = UTCDateTime(required=True)
    status = enum_of(MATCH_STATUSES, required=True)
    season = fields.String(required=True)
    league = fields.Nested(LeagueRefSchema, required=True)
    home_team = fields.Nested(TeamRefSchema, required=True)
    away_team = fields.Nested(TeamRefSchema, required=True)
    score = fields.Nested(
        ScoreSchema,
        required=True,
        allow_none=True,
        metadata={"description": "Null until the match has a result."},
    )


class SelectionOddsSchema(CamelSchema):
    """The prices of one selection: best pre-match, sharp pre-match and closing."""

    selection = enum_of(SELECTIONS, required=True)
    best_price = fields.Float(
        required=True,
        allow_none=True,
        metadata={
            "description": "Highest pre-match price among real bookmakers. Every price of a "
            "match, with its bookmaker, is null for anonymous and free callers before kick-off "
            "when the match has a pick rated `A` (see the pick). An upcoming match's prices are "
            "those of its latest prediction: none before its first."
        },
    )
    best_bookmaker = fields.String(required=True, allow_none=True)
    sharp_price = fields.Float(
        required=True,
        allow_none=True,
        metadata={
            "description": "Pinnacle's pre-match price, else the market average (null like the "
            "best price)."
        },
    )
    sharp_bookmaker = fields.String(required=True, allow_none=True)
    closing_price = fields.Float(
        required=True,
        allow_none=True,
        metadata={
            "description": "Pinnacle's closing price, else the market average's (null like the "
            "best price)."
        },
    )
    closing_bookmaker = fields.String(required=True, allow_none=True)


class MarketOddsSchema(CamelSchema):
    """One market's odds summary at one line: a market with lines ("ah", "ou") has one per line
    quoted, in the order of their lines."""

    market = enum_of(MARKETS, required=True)
    line = Line(required=True)
    bookmakers = Integer(
        required=True, metadata={"description": "Real bookmakers quoting before kick-off."}
    )
    selections = fields.List(fields.Nested(SelectionOddsSchema), required=True)


class DataQualityPartsSchema(CamelSchema):
    """The parts of a data-quality score, each in [0, 1], all known before kick-off."""

    history = fields.Float(
        required=True, metadata={"description": "Prior matches of the less-known team, /20."}
    )
    bookmakers = fields.Float(
        required=True, metadata={"description": "Bookmakers quoting before kick-off, /5."}
    )
    sharp_line = fields.Float(
        metadata={
            "description": "1 when the sharp bookmaker (Pinnacle) quotes the market before "
            "kick-off. Absent from predictions made before model version 3.0.0, which had "
            "`closingOdds` instead."
        }
    )
    closing_odds = fields.Float(
        metadata={
            "description": "Predictions before model version 3.0.0 only: 1 when the match's "
            "closing odds were stored when the prediction was made."
        }
    )


class PredictionSchema(CamelSchema):
    """The published forecast of one market at one line."""

    market = enum_of(MARKETS, required=True)
    line = Line(required=True)
    probabilities = probability_map(
        "Published probability of each selection (they sum to 1): whose numbers they are, "
        "the market's, a pool or the goal model's, `source` says. Null before kick-off for "
        "callers without premium access when the match has a pick rated `A` (locked), in "
        "every market.",
        required=True,
        allow_none=True,
    )
    model_probabilities = probability_map(
        "The goal model's own probabilities (market-implied ratings, else Dixon-Coles on "
        "goals, as `intelligence.model.source` says), before any pooling with the market: "
        "beside `probabilities` for comparison, and the same numbers where `source` is the goal "
        "model's. Where `source` is `market` the published probabilities are the market's and "
        "these are the goal model's view of the same match, which carried no weight. Null like "
        "`probabilities` when the match has a locked pick.",
        required=True,
        allow_none=True,
    )
    market_probabilities = probability_map(
        "The de-margined sharp pre-match odds; null without a sharp or average quote, and "
        "null like `probabilities` when the match has a locked pick.",
        required=True,
        allow_none=True,
    )
    source = enum_of(
        PREDICTION_SOURCES,
        required=True,
        allow_none=True,
        metadata={
            "description": "Whose numbers `probabilities` are. `market`: the sharp pre-match "
            "line alone (the goal model's weight in the pool is 0; `probabilities` equal "
            "`marketProbabilities`, and `modelProbabilities` show the goal model's own view "
            "beside them: the market's forecast, not the service's); `pool`: that line pooled "
            "with the goal model (`modelProbabilities`); `market-ratings` or `dixon-coles`: the "
            "goal model alone, where no sharp line is quoted (`probabilities` equal "
            "`modelProbabilities`). Null for predictions made before sources were recorded."
        },
    )
    model_name = fields.String(required=True)
    model_version = fields.String(required=True)
    margin_method = enum_of(
        MARGIN_METHODS,
        required=True,
        allow_none=True,
        metadata={
            "description": "How the bookmakers' margin was removed from every price behind the "
            "prediction (`MARGIN_METHOD`). Null for predictions made before it was recorded "
            "(model versions before 3.0.0, which removed it proportionally)."
        },
    )
    made_at = UTCDateTime(required=True)
    fitted_at = UTCDateTime(
        required=True, metadata={"description": "Results before this instant fed the model."}
    )
    data_quality = fields.Float(required=True, validate=validate.Range(0, 1))
    data_quality_parts = fields.Nested(DataQualityPartsSchema, required=True)
    is_live = fields.Boolean(
        required=True, metadata={"description": "Made before kick-off in real time."}
    )


class PickSchema(CamelSchema):
    """A rated pick. Before kick-off, for anonymous and free callers, a pick rated `A` is sealed
    with its market: the pick is `locked` (its `selection`, `odds`, `bookmaker`, `probability`,
    `edge`, closing figures and the `line` of a handicap or over/under pick null; its rating and
    market shown), and so is every price and probability of its market, and whatever the goal
    model made with it in the match's other markets (see the API description); what was public
    before it stays public. From kick-off every pick is public in full, and stays public if the
    match is later moved. A locked pick's `suggestedStake` is null too."""

    id = Integer(required=True)
    market = enum_of(MARKETS, required=True)
    line = Line(
        required=True,
        metadata={
            "description": "The line the pick backs (see the odds' `line`); null also for a "
            "locked pick of a market with lines, whose line is part of what to back."
        },
    )
    selection = enum_of(SELECTIONS, required=True, allow_none=True)
    bookmaker = fields.String(required=True, allow_none=True)
    odds = fields.Float(required=True, allow_none=True)
    probability = ratio(required=True, allow_none=True)
    edge = ratio(
        required=True,
        allow_none=True,
        metadata={"description": "probability × odds − 1 at the best pre-match price."},
    )
    rating = enum_of(
        PICK_RATINGS,
        required=True,
        metadata={
            "description": "`A`, `B` or `C` by the expected log growth of a Kelly stake at the "
            "probability the rating rule trusts: the edge shrunk by how far earlier settled "
            "picks' edges held at the close at the pick's price band and league, so a long "
            "price needs more edge (docs/method.md, Ratings), and by data quality. A rating "
            "is not shown to be better picks than the next: the track record's `ratingsTold` "
            "says whether their fair closing EVs can be told apart, and on the leagues the "
            "rule was confirmed on they could not all be. The lock on `A` before kick-off sells "
            "the same evidence, earlier, not better picks."
        },
    )
    data_quality = fields.Float(required=True)
    stake = money(
        required=True,
        metadata={"description": "The flat stake the track record counts: 1 unit per pick."},
    )
    suggested_stake = ratio(
        required=True,
        allow_none=True,
        metadata={
            "description": "The suggested stake, a share of the bankroll (0.01 is 1 %): a "
            "quarter of the Kelly stake at the probability the rating rule trusts and the "
            "pick's price (`STAKE_KELLY_FRACTION`), at most `STAKE_CAP` (0.02 by default); 0 "
            "where the evidence is thin (data quality below rating B's, or fewer than "
            "`STAKE_MIN_SETTLED` settled picks of its rating and price band when it was made). "
            "Sized for a bankroll to grow, not to be safe: even these stakes lose for long "
            "runs. Null on a locked pick (it is computed from its price and probability)."
        },
    )
    is_live = fields.Boolean(required=True)
    status = enum_of(PICK_STATUSES, required=True)
    profit = money(required=True, allow_none=True)
    closing_odds = fields.Float(required=True, allow_none=True)
    closing_bookmaker = fields.String(
        required=True,
        allow_none=True,
        metadata={
            "description": "The bookmaker whose price is `closingOdds` (the sharp bookmaker's "
            "close, as the ledger records it); null where there is no closing price, and for a "
            "locked pick."
        },
    )
    closing_line = closing_line()
    clv = ratio(
        required=True,
        allow_none=True,
        metadata={"description": "odds ÷ closing odds − 1 (the closing price keeps its margin)."},
    )
    closing_ev = ratio(
        required=True,
        allow_none=True,
        metadata={"description": "odds × de-margined closing probability − 1."},
    )
    locked = fields.Boolean(required=True)
    created_at = UTCDateTime(required=True)
    settled_at = UTCDateTime(required=True, allow_none=True)


class TeamFormSchema(CamelSchema):
    """One side's recent results before the match."""

    form = fields.List(
        fields.String(validate=validate.OneOf("WDL")),
        required=True,
        metadata={"description": "Up to five results, most recent first."},
    )
    form_points = Integer(required=True)
    goals_for = fields.Float(required=True, allow_none=True)
    goals_against = fields.Float(required=True, allow_none=True)
    matches = Integer(required=True)
    rest_days = fields.Float(required=True, allow_none=True)


class MeetingSchema(CamelSchema):
    """One earlier meeting of the two teams."""

    kickoff_at = UTCDateTime(required=True)
    home_team_id = Integer(required=True)
    away_team_id = Integer(required=True)
    home_goals = Integer(required=True)
    away_goals = Integer(required=True)


class HeadToHeadSchema(CamelSchema):
    """The last meetings, at either venue, counted for this match's home and away team."""

    matches = fields.List(fields.Nested(MeetingSchema), required=True)
    home_wins = Integer(required=True)
    draws = Integer(required=True)
    away_wins = Integer(required=True)


class StrengthSchema(CamelSchema):
    """A team's log-scale strengths in the goal model (higher defence concedes fewer)."""

    attack = fields.Float(required=True)
    defence = fields.Float(required=True)


class StrengthsSchema(CamelSchema):
    """Both teams' strengths and the home advantage."""

    home = fields.Nested(StrengthSchema, required=True)
    away = fields.Nested(StrengthSchema, required=True)
    home_advantage = fields.Float(required=True)


class SidesSchema(CamelSchema):
    """A count per side."""

    home = Integer(required=True)
    away = Integer(required=True)


def market_map(description, **kwargs):
    """``{market: {selection: probability}}``."""
    return fields.Dict(
        keys=fields.String(metadata={"enum": list(MARKETS)}),
        values=fields.Dict(keys=fields.String(), values=ratio(), allow_none=True),
        metadata={"description": description},
        **kwargs,
    )


class GoalsSchema(CamelSchema):
    """Expected goals of each side."""

    home = fields.Float(required=True)
    away = fields.Float(required=True)


class MarketRatingsSchema(CamelSchema):
    """The market-implied ratings' view: team ratings fitted on past closing lines."""

    covered = fields.Boolean(
        required=True,
        metadata={"description": "Both teams have priced history: the ratings lead the model."},
    )
    probabilities = market_map(
        "Per market, the ratings' probabilities (each null for a match with a locked pick, see "
        "the pick).",
        required=True,
    )
    priced_matches = fields.Nested(
        SidesSchema,
        required=True,
        metadata={"description": "Each team's matches with a closing line in the window."},
    )
    expected_goals = fields.Nested(
        GoalsSchema,
        required=True,
        allow_none=True,
        metadata={"description": "Null for a match with a locked pick (see the pick)."},
    )


class GoalModelSchema(CamelSchema):
    """The goal models' own views of the match, before any pooling with the market: Dixon-Coles
    on goals (``strengths``, ``probabilities``) and the market-implied ratings, side by side."""

    source = enum_of(
        GOAL_SOURCES,
        load_default="dixon-coles",
        metadata={"description": "Which of the two is the goal model for this match."},
    )
    fitted_at = UTCDateTime(required=True)
    strengths = fields.Nested(
        StrengthsSchema,
        required=True,
        allow_none=True,
        metadata={"description": "Null for a match with a locked pick (see the pick)."},
    )
    probabilities = market_map(
        "Per market, Dixon-Coles' probabilities (each null for a match with a locked pick, see "
        "the pick).",
        required=True,
    )
    expected_goals = fields.Nested(
        GoalsSchema,
        load_default=None,
        allow_none=True,
        metadata={
            "description": "Null for a match with a locked pick, or made before it was kept."
        },
    )
    history_matches = fields.Nested(
        SidesSchema,
        required=True,
        metadata={"description": "Prior matches of each team in Dixon-Coles' window."},
    )
    market_ratings = fields.Nested(
        MarketRatingsSchema,
        load_default=None,
        allow_none=True,
        metadata={"description": "Null where no closing lines were available."},
    )


class IntelligencePayloadSchema(CamelSchema):
    """What the history and the goal model say about a match, as it is stored: written and read
    back through this schema, so the stored JSON is the wire format."""

    home = fields.Nested(TeamFormSchema, required=True)
    away = fields.Nested(TeamFormSchema, required=True)
    head_to_head = fields.Nested(HeadToHeadSchema, required=True)
    model = fields.Nested(GoalModelSchema, required=True)


class IntelligenceSchema(IntelligencePayloadSchema):
    """A match's intelligence and when it was last computed."""

    updated_at = UTCDateTime(required=True)


class MatchCardSchema(MatchSchema):
    """A match with its odds summary, predictions, picks and, where asked for, intelligence."""

    odds = fields.List(fields.Nested(MarketOddsSchema))
    predictions = fields.List(fields.Nested(PredictionSchema))
    picks = fields.List(fields.Nested(PickSchema))
    intelligence = fields.Nested(
        IntelligenceSchema, allow_none=True, metadata={"description": "Null before it is made."}
    )
