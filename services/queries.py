"""Query pieces every listing shares: a page of a query, a time range on a column, the match
filters."""

from models import UNLINED_MARKETS, Match


def paginate(query, page: int, page_size: int) -> dict:
    """One page of ``query`` (already ordered) with the paging fields of a page answer."""
    return {
        "items": list(query.paginate(page, page_size)),
        "page": page,
        "page_size": page_size,
        "total": query.count(),
    }


def within(query, column, since=None, until=None):
    """``query`` limited to rows whose ``column`` lies in the range the date arguments name.

    ``since`` and ``until`` are spans (see ``schemas.common.Span``): a bare date covers its whole
    UTC day, so ``until=2026-11-21`` includes 23:59 that day; a date-time is one instant.
    """
    if since is not None:
        query = query.where(column >= since.start)
    if until is not None:
        query = query.where(column <= until.start if until.instant else column < until.end)
    return query


def match_filters(query, league_id=None, team_id=None, statuses=None):
    """``query`` (on ``Match`` or joined to it) limited to one league, to the matches of one team
    at home or away, and to some statuses; None (or no statuses) leaves that filter out."""
    if league_id is not None:
        query = query.where(Match.league == league_id)
    if team_id is not None:
        query = query.where((Match.home_team == team_id) | (Match.away_team == team_id))
    if statuses:
        query = query.where(Match.status.in_(statuses))
    return query


def at_line(query, model, line=None):
    """``query`` limited to the rows of ``model`` (with ``market`` and ``line``) at exactly
    ``line`` of the markets with one (2.5: "ou25" too); None leaves it out. The markets without
    a line (stored with 0) never match."""
    if line is None:
        return query
    return query.where((model.line == line) & model.market.not_in(UNLINED_MARKETS))
