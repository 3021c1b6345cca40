"""Track-record shapes: the figures of a set of picks, shared by the track record, the Data API
and backtests, with the request arguments that select them."""

from marshmallow import fields, validate, validates_schema

from enums import COMPETITION_TYPES, MARKETS, NOT_LIVE_REASONS, PICK_RATINGS, PICK_STATUSES
from schemas.common import CamelSchema, enum_of, id_field
from schemas.numbers import Float, Integer, mean_odds, money, ratio
from schemas.spans import DayOrInstant, check_range
from schemas.text import CommaListBody


class FiguresSchema(CamelSchema):
    """How a set of picks did. Ratios and averages are null when there is nothing to divide."""

    picks = Integer(required=True)
    won = Integer(required=True)
    lost = Integer(required=True)
    void = Integer(required=True, metadata={"description": "Voided picks, pushes included."})
    half_won = Integer(
        required=True,
        metadata={
            "description": "Quarter-line picks (Asian handicap, over/under) whose one half won "
            "and the other was refunded."
        },
    )
    half_lost = Integer(
        required=True,
        metadata={
            "description": "Quarter-line picks whose one half lost and the other was refunded."
        },
    )
    pending = Integer(required=True)
    hit_rate = ratio(
        required=True,
        allow_none=True,
        metadata={
            "description": "The share of the decided picks (won, lost, half won, half lost) "
            "that made money: (won + halfWon) ÷ (won + lost + halfWon + halfLost)."
        },
    )
    staked = money(
        required=True,
        metadata={"description": "Units on the decided picks (won, lost, half won, half lost)."},
    )
    profit = money(required=True, metadata={"description": "Units, settled picks."})
    roi = ratio(required=True, allow_none=True, metadata={"description": "profit ÷ staked."})
    roi_std_error = ratio(
        required=True,
        allow_none=True,
        metadata={
            "description": "Standard error of `roi` over the won and lost picks (a long price "
            "makes a result noisy: about √(odds − 1) units a pick). Null below two picks."
        },
    )
    avg_odds = mean_odds(
        required=True,
        allow_none=True,
        metadata={
            "description": "Mean odds of the settled picks (won, lost, void, half won, half "
            "lost): the `pending` ones are left out."
        },
    )
    avg_edge = ratio(
        required=True,
        allow_none=True,
        metadata={
            "description": "Mean edge of the settled picks: the `pending` ones are left out."
        },
    )
    avg_clv = ratio(
        required=True,
        allow_none=True,
        metadata={
            "description": "Mean of odds ÷ closing odds − 1 (against the raw closing price), "
            "over the settled picks with a closing price at their own line; `clvExcluded` "
            "counts the others."
        },
    )
    clv_excluded = Integer(
        required=True,
        metadata={
            "description": "Settled picks (won, lost, void, half won, half lost) left out of "
            "`avgClv` for want of a closing price: no close quoted, or a line pick whose line "
            "moved by the close (valued at its own line, it has no closing price there). "
            "Pending picks have none yet and are counted in `pending`."
        },
    )
    avg_closing_ev = ratio(
        required=True,
        allow_none=True,
        metadata={
            "description": "Mean of odds × the de-margined closing probability − 1: the expected "
            "return at the fair closing price, the margin removed by `MARGIN_METHOD` (power by "
            "default) when each pick was settled. A pick at an Asian handicap or over/under line "
            "counts its return per unit at risk (its closing probability is the fair W ÷ (W + L), "
            "a pushed part of the stake left out), where `roi` is per unit staked. Over the "
            "settled picks with a fair closing probability (a line pick whose line moved by the "
            "close has one, carried from the nearest closing line); `closingEvExcluded` counts "
            "the others."
        },
    )
    avg_closing_ev_std_error = ratio(
        required=True,
        allow_none=True,
        metadata={"description": "Standard error of `avgClosingEv`. Null below two picks."},
    )
    closing_ev_excluded = Integer(
        required=True,
        metadata={
            "description": "Settled picks (won, lost, void, half won, half lost) left out of "
            "`avgClosingEv` (and its standard error) for want of a fair closing probability: "
            "no close quoted for their market (an Asian handicap pick without a handicap "
            "close, say). Pending picks have none yet and are counted in `pending`."
        },
    )
    max_drawdown = money(
        required=True, metadata={"description": "Largest fall of cumulative profit, units."}
    )
    longest_losing_streak = Integer(required=True)


class CompetitionFiguresSchema(FiguresSchema):
    """The figures of one competition type."""

    competition_type = enum_of(COMPETITION_TYPES, required=True)


class MonthFiguresSchema(FiguresSchema):
    """The figures of one calendar month (UTC)."""

    month = fields.String(required=True, metadata={"example": "2026-11"})


class MarketFiguresSchema(FiguresSchema):
    """The figures of one market."""

    market = enum_of(MARKETS, required=True)


class RatingFiguresSchema(FiguresSchema):
    """The figures of one rating."""

    rating = enum_of(PICK_RATINGS, required=True)


class RatingsToldSchema(CamelSchema):
    """Whether a rating's record can be told from the next rating's down."""

    higher = enum_of(PICK_RATINGS, required=True)
    lower = enum_of(PICK_RATINGS, required=True)
    difference = ratio(
        required=True,
        allow_none=True,
        metadata={
            "description": "The higher rating's `avgClosingEv` minus the lower's. Null when "
            "either is null."
        },
    )
    standard_error = ratio(
        required=True,
        allow_none=True,
        metadata={
            "description": "Standard error of `difference`: the two ratings' "
            "`avgClosingEvStdError` in quadrature. Null when either is null."
        },
    )
    told_apart = fields.Boolean(
        required=True,
        metadata={
            "description": "`true` when `difference` is positive and at least two standard "
            "errors: the higher rating's picks were worth more at the close than the lower's "
            "beyond chance. `false`: the two records cannot be told apart within their "
            "standard error, and the higher rating is not shown to be the better."
        },
    )


class TrackRecordArgsSchema(CamelSchema):
    """Whether to report the live or the backfilled picks."""

    is_live = fields.Boolean(
        load_default=True,
        metadata={"description": "`true` (default): picks made before kick-off in real time."},
    )


class SetApartItemSchema(CamelSchema):
    """A pick stored as live that failed the live rule when it settled."""

    pick_id = id_field(required=True)
    match_id = id_field(required=True)
    reason = enum_of(NOT_LIVE_REASONS, required=True)
    status = enum_of(PICK_STATUSES, required=True)


class ReasonCountSchema(CamelSchema):
    """How many picks were set apart for one reason."""

    reason = enum_of(NOT_LIVE_REASONS, required=True)
    count = Integer(required=True)


class SetApartSchema(CamelSchema):
    """Picks set apart: stored as live, but failing the live rule when they settled, so counted
    in neither the live nor the backfilled record.

    The live rule: a pick is live only if it was made before its match's kick-off as finally
    known, and its `pick.published` ledger entry was covered by a signed checkpoint dated
    strictly before that kick-off. Reasons: `made-after-kickoff` (e.g. a fixture later moved
    before the pick's time), `not-in-ledger` (no published entry), `signed-after-kickoff` (the
    entry's first checkpoint is dated at or after the kick-off). The ledger's outcome entry of
    such a pick says `"live": false` with the same `notLiveReason`."""

    count = Integer(required=True)
    by_reason = fields.List(fields.Nested(ReasonCountSchema), required=True)
    items = fields.List(
        fields.Nested(SetApartItemSchema),
        required=True,
        metadata={"description": "The first 100 set-apart picks, by id."},
    )


class ByCompetitionTypeSchema(CamelSchema):
    """One item per competition type, every type listed (zeros where there are no picks), and
    the picks set apart from the record."""

    is_live = fields.Boolean(required=True)
    items = fields.List(fields.Nested(CompetitionFiguresSchema), required=True)
    set_apart = fields.Nested(SetApartSchema, required=True)


class StakeReturnsSchema(CamelSchema):
    """What one way of staking made, the bankroll's return on each pick (stake × units won per
    unit staked: odds − 1 won, −1 lost, halves for a quarter line's half outcomes)."""

    mean_return = ratio(
        required=True,
        allow_none=True,
        metadata={"description": "Mean return per pick, a share of the bankroll (0.001 = 0.1 %)."},
    )
    mean_return_std_error = ratio(
        required=True,
        allow_none=True,
        metadata={"description": "Standard error of `meanReturn`. Null below two picks."},
    )
    growth = ratio(
        required=True,
        allow_none=True,
        metadata={
            "description": "The bankroll's growth after every pick in settlement order, each "
            "stake a share of the bankroll at the time: ∏(1 + return) − 1 (−0.1 is a tenth lost)."
        },
    )


class StakeFiguresSchema(CamelSchema):
    """What the picks' suggested stakes (`suggestedStake`, a share of the bankroll) would have
    made, beside a flat stake of `flatStake` on every pick, over the picks with a result (won,
    lost, half won, half lost), each stake as it was suggested when the pick was made."""

    picks = Integer(required=True, metadata={"description": "Picks with a result."})
    staked = Integer(
        required=True,
        metadata={"description": "Those with a suggested stake above 0 (0: evidence thin)."},
    )
    mean_stake = ratio(
        required=True,
        allow_none=True,
        metadata={"description": "Mean suggested stake of those staked, a share of the bankroll."},
    )
    flat_stake = ratio(
        required=True,
        metadata={
            "description": "The flat stake compared with, a share of the bankroll: `STAKE_CAP`."
        },
    )
    suggested = fields.Nested(StakeReturnsSchema, required=True)
    flat = fields.Nested(StakeReturnsSchema, required=True)


class RecordPartSchema(FiguresSchema):
    """Live or backfilled picks: overall, and by month, market, rating and competition type, and
    whether each rating can be told from the next."""

    by_month = fields.List(
        fields.Nested(MonthFiguresSchema),
        required=True,
        metadata={
            "description": "The months with a pick, up to the current one (UTC): a month still "
            "to come has pending picks at most, and is left out."
        },
    )
    by_market = fields.List(fields.Nested(MarketFiguresSchema), required=True)
    by_rating = fields.List(fields.Nested(RatingFiguresSchema), required=True)
    by_competition_type = fields.List(fields.Nested(CompetitionFiguresSchema), required=True)
    ratings_told = fields.List(
        fields.Nested(RatingsToldSchema),
        required=True,
        metadata={
            "description": "For A and B, then B and C: whether the higher rating's record can "
            "be told from the lower's by their mean fair closing EVs (`avgClosingEv`)."
        },
    )
    stakes = fields.Nested(StakeFiguresSchema, required=True)


class TrackRecordSchema(CamelSchema):
    """The Data API track record: live and backfilled picks reported apart."""

    date_from = DayOrInstant(required=True, allow_none=True, data_key="from")
    date_to = DayOrInstant(required=True, allow_none=True, data_key="to")
    live = fields.Nested(RecordPartSchema, required=True)
    backfilled = fields.Nested(RecordPartSchema, required=True)
    set_apart = fields.Nested(SetApartSchema, required=True)


class BacktestRequestSchema(CamelSchema):
    """Which backfilled picks to backtest; every field is optional."""

    rating = CommaListBody(PICK_RATINGS, load_default=None)
    market = CommaListBody(MARKETS, load_default=None)
    min_edge = Float(
        strict=True,
        load_default=None,
        validate=validate.Range(0, 10),
        metadata={"description": "Only picks with at least this edge (0–10)."},
    )
    league_id = id_field(load_default=None, strict=True)
    date_from = DayOrInstant(
        load_default=None, metadata={"description": "Kick-off from (a date is its whole day)."}
    )
    date_to = DayOrInstant(
        load_default=None, metadata={"description": "Kick-off to (a date is its whole day)."}
    )

    @validates_schema
    def from_before_to(self, data, **kwargs):
        """``dateFrom`` after ``dateTo`` is a 422."""
        check_range(data.get("date_from"), data.get("date_to"), ("dateFrom", "dateTo"))


class LeagueFiguresSchema(FiguresSchema):
    """The figures of one league."""

    league_id = Integer(required=True)
    league_name = fields.String(required=True, allow_none=True)


class EquityPointSchema(CamelSchema):
    """Cumulative profit at the end of a UTC day with settled picks."""

    date = fields.String(required=True, metadata={"example": "2026-11-21"})
    cumulative_profit = money(required=True)
    settled_picks = Integer(required=True)


class BacktestSchema(CamelSchema):
    """A backtest over the walk-forward (backfilled) picks: never over matches the model saw."""

    params = fields.Nested(BacktestRequestSchema, required=True)
    summary = fields.Nested(FiguresSchema, required=True)
    by_month = fields.List(fields.Nested(MonthFiguresSchema), required=True)
    by_league = fields.List(fields.Nested(LeagueFiguresSchema), required=True)
    equity_curve = fields.List(fields.Nested(EquityPointSchema), required=True)
