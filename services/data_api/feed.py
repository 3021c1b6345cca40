"""The Data API's match feed: match cards a page at a time, by kick-off then id, each page
continued after the last match of the one before (keyset pagination: no OFFSET, so a walk
returns every match exactly once even while matches are added). On the wire that position is an
opaque signed cursor (``schemas.data.FeedCursor``)."""

from models import Match
from services.queries import match_filters, within
from services.reads import cards


def matches(
    date_from=None,
    date_to=None,
    league_id=None,
    team_id=None,
    statuses=None,
    include=(),
    limit=100,
    after=None,
    viewer=None,
    settings=None,
) -> dict:
    """One page of match cards with the relations in ``include`` that come after ``after``
    (the kick-off and id of the previous page's last match), and the position after this page
    (None on the last); picks' stakes by ``settings``'s rule."""
    query = within(cards.matches(), Match.kickoff_at, date_from, date_to)
    query = match_filters(query, league_id, team_id, statuses)
    if after is not None:
        kickoff_at, match_id = after
        query = query.where(
            (Match.kickoff_at > kickoff_at)
            | ((Match.kickoff_at == kickoff_at) & (Match.id > match_id))
        )
    query = query.order_by(Match.kickoff_at, Match.id).limit(limit + 1)
    items = cards.build(query, viewer, include or (), settings=settings)
    following = None
    if len(items) > limit:
        items = items[:limit]
        following = (items[-1]["kickoff_at"], items[-1]["id"])
    return {"items": items, "limit": limit, "next_after": following}
