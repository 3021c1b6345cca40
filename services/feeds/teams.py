"""The stored teams as an operator maps names to them: each with its id, country and how each
source names it, and the names the sources gave that map to no team yet
(``flask data teams list``, ``GET /api/v1/ops/teams``; mapped with ``flask data teams map``)."""

from models import Team
from services.feeds import names
from services.queries import paginate


def listing(country: str | None = None, page: int = 1, page_size: int = 20) -> dict:
    """One page of teams by country and name with their aliases per source, and every unmapped
    name (of ``country``, if given): four queries, whatever the page's length."""
    query = Team.select(Team.id, Team.name, Team.country)
    if country is not None:
        query = query.where(Team.country == country)
    found = paginate(query.order_by(Team.country, Team.name, Team.id), page, page_size)
    aliases = names.aliases_of([team.id for team in found["items"]])
    found["items"] = [
        {"id": team.id, "name": team.name, "country": team.country, "aliases": aliases[team.id]}
        for team in found["items"]
    ]
    found["unmapped"] = names.unmatched(country=country)
    return found
