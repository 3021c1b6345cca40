"""The Data API catalog: what can be fetched and exported, and which leagues hold data."""

from peewee import JOIN, fn

from enums import EXPORT_FORMATS
from models import League, Match
from services.data_api import exports


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


def resources() -> list[dict]:
    """Each resource with its list endpoint, fields, filters, includes and export formats, read
    from the schemas that write its rows and parse its filters."""
    return [
        {
            "name": resource.name,
            "path": resource.path,
            "fields": [field.data_key for field in resource.row().fields.values()],
            "filters": [field.data_key for field in resource.filters().fields.values()],
            "includes": resource.includes,
            "export_formats": EXPORT_FORMATS,
        }
        for resource in exports.RESOURCES.values()
    ]


def catalog() -> dict:
    """The whole catalog."""
    return {"resources": resources(), "export_formats": EXPORT_FORMATS, "leagues": leagues()}
