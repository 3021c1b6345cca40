"""The football's tables: leagues, teams and matches, their prices (quotes, summaries, the
prices seen over time, the ``line`` every priced row stores), the predictions, picks and
intelligence published on them, and what the live sources report of them (team names,
kick-offs, contradictions)."""

from datetime import UTC, datetime

from peewee import SQL, BooleanField, CharField, DoubleField, ForeignKeyField, IntegerField

from clock import utcnow
from enums import (
    CLOSING_LINES,
    COMPETITION_TYPES,
    CONTRADICTION_FIELDS,
    CONTRADICTION_STATUSES,
    LINE_MARKETS,
    MARGIN_METHODS,
    MARKETS,
    MATCH_STATUSES,
    NOT_LIVE_REASONS,
    OU25_LINE,
    PICK_RATINGS,
    PICK_STATUSES,
    PREDICTION_SOURCES,
    SELECTIONS,
    TEAM_NAME_MAX,
)
from models.base import BaseModel, choices_of, slugify
from store.fields import JSONField, UTCDateTimeField


class League(BaseModel):
    """A competition, keyed by a stable code (football-data's division code for imports)."""

    code = CharField(max_length=16, unique=True)
    name = CharField(max_length=100)
    country = CharField(max_length=64)
    competition_type = CharField(max_length=16, index=True, choices=choices_of(COMPETITION_TYPES))


class Team(BaseModel):
    """A club or national team; the same name may exist in two countries."""

    name = CharField(max_length=TEAM_NAME_MAX)
    country = CharField(max_length=64)

    class Meta:
        indexes = ((("name", "country"), True),)


class Match(BaseModel):
    """A fixture and, once played, its result."""

    # Foreign keys lead composite indexes below, so they need no index of their own.
    league = ForeignKeyField(League, backref="matches", on_delete="CASCADE", index=False)
    season = CharField(max_length=16)
    home_team = ForeignKeyField(Team, backref="home_matches", on_delete="CASCADE", index=False)
    away_team = ForeignKeyField(Team, backref="away_matches", on_delete="CASCADE", index=False)
    kickoff_at = UTCDateTimeField(index=True)
    status = CharField(max_length=16, default="scheduled", choices=choices_of(MATCH_STATUSES))
    home_goals = IntegerField(null=True)
    away_goals = IntegerField(null=True)
    ht_home_goals = IntegerField(null=True)
    ht_away_goals = IntegerField(null=True)
    slug = CharField(max_length=255, unique=True)
    updated_at = UTCDateTimeField(default=utcnow)
    #: When its picks became public for good: the kick-off it had when a later change moved it
    #: (a postponement after kick-off); null while ``kickoff_at`` says it all. See
    #: ``services.market.premium``.
    public_since = UTCDateTimeField(null=True)
    #: While the live sources disagree on its kick-off, the latest they report: its picks open
    #: to everyone only then (``kickoff_at``, the earliest, governs the pick cut-off and the
    #: live rule). Null while they agree: ``kickoff_at`` says it all. See
    #: ``services.feeds.kickoffs``.
    unlock_at = UTCDateTimeField(null=True)

    class Meta:
        indexes = (
            (("league", "season", "home_team", "away_team"), False),
            (("league", "kickoff_at"), False),
            (("home_team", "kickoff_at"), False),
            (("away_team", "kickoff_at"), False),
            (("status", "kickoff_at"), False),
        )

    @staticmethod
    def slug_for(home_team: str, away_team: str, kickoff_at: datetime) -> str:
        """The SEO slug: ``home-team-vs-away-team-YYYY-MM-DD`` (the UTC kick-off date)."""
        day = kickoff_at.astimezone(UTC).date().isoformat()
        return f"{slugify(home_team)}-vs-{slugify(away_team)}-{day}"


#: The line stored for a market quoted without one (1x2, btts). The keyed tables store a line
#: for every row, never NULL: their unique indexes include it, and NULLs never conflict there
#: (nor in the upserts' conflict targets). The answers write null for these markets.
NO_LINE = 0.0
#: The markets without a line (stored with :data:`NO_LINE`, answered with null).
UNLINED_MARKETS = tuple(
    market for market in MARKETS if market not in LINE_MARKETS and market != "ou25"
)


def stored_line(market: str, line: float | None) -> float:
    """The ``line`` column's value for a price or forecast of ``market``: the line of a line
    market ("ah": the home side's handicap; "ou"), 2.5 for "ou25" and :data:`NO_LINE` for the
    markets without one (1x2, btts), whatever ``line`` says for those."""
    if market in LINE_MARKETS:
        if line is None:
            raise ValueError(f"a {market!r} price needs its line")
        return float(line)
    return OU25_LINE if market == "ou25" else NO_LINE


def line_column():
    """A ``line`` column (see :func:`stored_line`): never null; the database's own default 0 is
    what a row written before lines existed was given, and what a writer naming no line gets."""
    return DoubleField(default=NO_LINE, constraints=[SQL("DEFAULT 0")])


class OddsQuote(BaseModel):
    """One bookmaker's decimal price for one selection of a market at one line, pre-match or at
    the close: a match has a quote per line its bookmakers offer ("ah", "ou")."""

    match = ForeignKeyField(Match, backref="odds", on_delete="CASCADE", index=False)
    bookmaker = CharField(max_length=32)
    market = CharField(max_length=8, choices=choices_of(MARKETS))
    line = line_column()  # see stored_line: 0 for 1x2 and btts, 2.5 for ou25
    selection = CharField(max_length=8, choices=choices_of(SELECTIONS))
    price = DoubleField()
    is_closing = BooleanField(default=False)
    #: Where a closing quote came from: the source's closing columns (``source``; also null on
    #: quotes stored before this was recorded, which only a source's columns wrote) or the
    #: service's own closing line, the latest price seen before kick-off (``seen``). Null on
    #: pre-match quotes.
    closing_line = CharField(max_length=8, null=True, choices=choices_of(CLOSING_LINES))

    class Meta:
        indexes = ((("match", "market", "line", "is_closing", "bookmaker", "selection"), True),)


class OddsSummary(BaseModel):
    """The prices a match card shows for one selection at one line, kept beside the quotes they
    come from: the best pre-match price and who offers it, the sharp pre-match price and the
    closing price.

    Derived from ``OddsQuote`` whenever a match's quotes are stored, so a card reads a few rows
    per match instead of every bookmaker's quotes.
    """

    match = ForeignKeyField(Match, backref="odds_summary", on_delete="CASCADE", index=False)
    market = CharField(max_length=8, choices=choices_of(MARKETS))
    line = line_column()  # see stored_line
    selection = CharField(max_length=8, choices=choices_of(SELECTIONS))
    best_price = DoubleField(null=True)
    best_bookmaker = CharField(max_length=32, null=True)
    sharp_price = DoubleField(null=True)
    sharp_bookmaker = CharField(max_length=32, null=True)
    closing_price = DoubleField(null=True)
    closing_bookmaker = CharField(max_length=32, null=True)
    bookmakers = IntegerField(default=0)  # real bookmakers quoting the market before kick-off

    class Meta:
        indexes = ((("match", "market", "line", "selection"), True),)


class Prediction(BaseModel):
    """The published probabilities of one market of one match at one line, and what they were
    made from: a line market ("ah", "ou") may have a prediction per line quoted."""

    match = ForeignKeyField(Match, backref="predictions", on_delete="CASCADE", index=False)
    market = CharField(max_length=8, choices=choices_of(MARKETS))
    line = line_column()  # see stored_line
    probabilities = JSONField()  # {selection: published probability}
    model_probabilities = JSONField()  # the goal model alone
    market_probabilities = JSONField(null=True)  # de-margined sharp pre-match odds
    pool_weight = DoubleField()  # weight of the goal model in the pool
    #: What made the published probabilities (null for predictions made before sources).
    source = CharField(max_length=16, null=True, choices=choices_of(PREDICTION_SOURCES))
    model_name = CharField(max_length=64)
    model_version = CharField(max_length=32)
    #: How the margin was taken off every price behind it (null for predictions made before the
    #: method was recorded: proportional removal, model versions before 3.0.0).
    margin_method = CharField(max_length=16, null=True, choices=choices_of(MARGIN_METHODS))
    made_at = UTCDateTimeField(default=utcnow)
    fitted_at = UTCDateTimeField()  # results up to this instant fed the model
    data_quality = DoubleField()
    data_quality_parts = JSONField()
    is_live = BooleanField(default=False)

    class Meta:
        indexes = ((("match", "market", "line"), True),)


class Pick(BaseModel):
    """A rated bet on the selection with the largest edge, and how it settled: one per match and
    market, at the line it was made at (``line`` follows the rule of the other tables,
    :func:`stored_line`, so a pick joins its prediction and quotes on equal values)."""

    match = ForeignKeyField(Match, backref="picks", on_delete="CASCADE", index=False)
    market = CharField(max_length=8, choices=choices_of(MARKETS))
    line = line_column()  # see stored_line
    selection = CharField(max_length=8, choices=choices_of(SELECTIONS))
    bookmaker = CharField(max_length=32)
    odds = DoubleField()
    probability = DoubleField()
    #: The probability the rating rule trusted (``engine.betting.trust``): the stake's; null for
    #: picks made before it was recorded (their published probability stands in).
    trusted_probability = DoubleField(null=True)
    edge = DoubleField()
    rating = CharField(max_length=1, choices=choices_of(PICK_RATINGS))
    data_quality = DoubleField()
    stake = DoubleField(default=1.0)
    is_live = BooleanField(default=False)
    #: Sixteen characters: "half-lost" (a quarter line) is longer than the eight of before.
    status = CharField(
        max_length=16, default="pending", index=True, choices=choices_of(PICK_STATUSES)
    )
    profit = DoubleField(null=True)
    closing_odds = DoubleField(null=True)
    closing_bookmaker = CharField(max_length=32, null=True)
    #: The selection's de-margined closing probability: odds × it − 1 is the expected return at
    #: the fair closing price (CLV against the raw closing price keeps the bookmaker's margin).
    closing_probability = DoubleField(null=True)
    #: Which closing line settled it (``CLOSING_LINES``): the source's, or the service's own;
    #: null without a closing price, or for picks settled before this was recorded.
    closing_line = CharField(max_length=8, null=True, choices=choices_of(CLOSING_LINES))
    clv = DoubleField(null=True)
    created_at = UTCDateTimeField(default=utcnow)
    settled_at = UTCDateTimeField(null=True)
    #: Why a pick stored as live was set apart when it settled
    #: (engine.ledger.entries.NOT_LIVE_REASONS): it then counts in neither the live nor the
    #: backfilled record.
    not_live_reason = CharField(max_length=32, null=True, choices=choices_of(NOT_LIVE_REASONS))

    class Meta:
        indexes = ((("match", "market"), True),)


class MatchIntelligence(BaseModel):
    """What the model and the history say about a match: form, goals, rest, head-to-head."""

    match = ForeignKeyField(Match, backref="intelligence", unique=True, on_delete="CASCADE")
    payload = JSONField()
    updated_at = UTCDateTimeField(default=utcnow)


class TeamAlias(BaseModel):
    """How one source names a stored team in one country (``team`` null: not matched yet, for
    an operator to map; records naming it are held back, never stored under a new team)."""

    source = CharField(max_length=32)
    country = CharField(max_length=64)
    name = CharField(max_length=TEAM_NAME_MAX)
    team = ForeignKeyField(Team, null=True, on_delete="CASCADE", index=False)
    first_seen_at = UTCDateTimeField(default=utcnow)

    class Meta:
        indexes = ((("source", "country", "name"), True),)


class KickoffReport(BaseModel):
    """The kick-off one live source last reported for a match, and since when it says so (one
    row per match and source; a source repeating itself writes nothing). See
    ``services.feeds.kickoffs``."""

    match = ForeignKeyField(Match, on_delete="CASCADE", index=False)
    source = CharField(max_length=32)
    kickoff_at = UTCDateTimeField()
    reported_at = UTCDateTimeField()

    class Meta:
        indexes = ((("match", "source"), True),)


class PriceSeen(BaseModel):
    """A pre-match price as one source showed it over time: one row per run of one price of one
    bookmaker's selection as that source quoted it, with when it was first and last seen (two
    sources quoting one bookmaker are two observations). See ``services.feeds.prices``."""

    match = ForeignKeyField(Match, on_delete="CASCADE", index=False)
    bookmaker = CharField(max_length=32)
    market = CharField(max_length=8, choices=choices_of(MARKETS))
    line = line_column()  # see stored_line
    selection = CharField(max_length=8, choices=choices_of(SELECTIONS))
    price = DoubleField()
    source = CharField(max_length=32)
    first_seen_at = UTCDateTimeField()
    last_seen_at = UTCDateTimeField()

    class Meta:
        indexes = (
            (
                ("match", "market", "line", "bookmaker", "selection", "source", "first_seen_at"),
                True,
            ),
        )


class Contradiction(BaseModel):
    """A source disagreeing with what is stored of a match (its score): the two values, held
    open (the match's picks unsettled) until an operator chooses one. One open row per match and
    field; a repeat of the same disagreement writes nothing. See
    ``services.feeds.contradictions``."""

    match = ForeignKeyField(Match, on_delete="CASCADE", index=False)
    field = CharField(max_length=16, choices=choices_of(CONTRADICTION_FIELDS))
    stored_value = CharField(max_length=64)  # "5-0" for a score
    source_value = CharField(max_length=64)  # what ``source`` says instead
    source = CharField(max_length=32)
    status = CharField(max_length=16, default="open", choices=choices_of(CONTRADICTION_STATUSES))
    opened_at = UTCDateTimeField()
    updated_at = UTCDateTimeField()  # when the source last gave a new value
    resolved_at = UTCDateTimeField(null=True)
    resolved_by = CharField(max_length=128, null=True)  # "user:ID", or "cli:NAME"
    chosen_value = CharField(max_length=64, null=True)


# One open disagreement per match and field (any number resolved).
Contradiction.add_index(
    Contradiction.index(Contradiction.match, Contradiction.field, unique=True).where(
        Contradiction.status == "open"
    )
)
