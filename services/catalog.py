"""The Data API catalog: what can be fetched and exported, and which leagues hold data."""

from peewee import JOIN, fn

from models import League, Match

DATE_FILTERS = ("from", "to")
EXPORT_FORMATS = ("csv", "json", "ndjson")

#: Each resource of the Data API: its fields, the filters its export takes, its includes.
RESOURCES = (
    {
        "name": "matches",
        "fields": (
            "id",
            "slug",
            "kickoffAt",
            "status",
            "season",
            "league",
            "homeTeam",
            "awayTeam",
            "score",
        ),
        "filters": (*DATE_FILTERS, "leagueId", "teamId", "status"),
        "includes": ("odds", "predictions", "picks", "intelligence"),
    },
    {
        "name": "picks",
        "fields": (
            "id",
            "matchId",
            "market",
            "selection",
            "bookmaker",
            "odds",
            "probability",
            "edge",
            "rating",
            "dataQuality",
            "stake",
            "isLive",
            "status",
            "profit",
            "closingOdds",
            "clv",
            "createdAt",
            "settledAt",
        ),
        "filters": (*DATE_FILTERS, "leagueId", "market", "rating", "status", "isLive"),
    },
    {
        "name": "predictions",
        "fields": (
            "matchId",
            "market",
            "probabilities",
            "modelProbabilities",
            "marketProbabilities",
            "poolWeight",
            "modelName",
            "modelVersion",
            "madeAt",
            "dataQuality",
        ),
        "filters": (*DATE_FILTERS, "leagueId", "market"),
    },
    {
        "name": "odds",
        "fields": ("matchId", "bookmaker", "market", "selection", "price", "isClosing"),
        "filters": (*DATE_FILTERS, "leagueId", "market", "bookmaker"),
    },
    {"name": "teams", "fields": ("id", "name", "country"), "filters": ("leagueId",)},
    {
        "name": "leagues",
        "fields": ("id", "code", "name", "country", "competitionType"),
        "filters": (),
    },
    {
        "name": "track-record",
        "fields": (
            "picks",
            "won",
            "lost",
            "void",
            "pending",
            "hitRate",
            "staked",
            "profit",
            "roi",
            "avgOdds",
            "avgEdge",
            "avgClv",
            "maxDrawdown",
            "byMonth",
            "byMarket",
            "byRating",
        ),
        "filters": DATE_FILTERS,
    },
)


def leagues() -> list[dict]:
    """Every league with its seasons, match count and first and last kick-off (two queries)."""
    seasons = {}
    for league_id, season in (
        Match.select(Match.league, Match.season).distinct().order_by(Match.season).tuples()
    ):
        seasons.setdefault(league_id, []).append(season)
    rows = (
        League.select(
            League,
            fn.COUNT(Match.id).alias("match_count"),
            fn.MIN(Match.kickoff_at).alias("first_kickoff_at"),
            fn.MAX(Match.kickoff_at).alias("last_kickoff_at"),
        )
        .join(Match, on=(Match.league == League.id), join_type=JOIN.LEFT_OUTER)
        .group_by(League.id)
        .order_by(League.country, League.name)
    )
    return [
        {
            "id": league.id,
            "code": league.code,
            "name": league.name,
            "country": league.country,
            "competition_type": league.competition_type,
            "seasons": seasons.get(league.id, []),
            "match_count": league.match_count,
            "first_kickoff_at": Match.kickoff_at.python_value(league.first_kickoff_at),
            "last_kickoff_at": Match.kickoff_at.python_value(league.last_kickoff_at),
        }
        for league in rows
    ]


def catalog() -> dict:
    """The whole catalog."""
    resources = [
        {"export_formats": EXPORT_FORMATS, "includes": (), "path": None, **resource}
        for resource in RESOURCES
    ]
    return {"resources": resources, "export_formats": EXPORT_FORMATS, "leagues": leagues()}
