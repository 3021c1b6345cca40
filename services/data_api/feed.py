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
    ids=None,
    settings=None,
) -> dict:
    """One page of match cards with the relations in ``include`` that come after ``after``
    (the kick-off and id of the previous page's last match), and the position after this page
    (None on the last); picks' stakes by ``settings``'s rule. With ``ids``, the batch of those
    matches instead: see :func:`batch`."""
    query = within(cards.matches(), Match.kickoff_at, date_from, date_to)
    query = match_filters(query, league_id, team_id, statuses)
    if ids is not None:
        return batch(query, ids, include, viewer, settings)
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
    return {"items": items, "limit": limit, "next_after": following, "missing_ids": None}


def batch(query, ids, include=(), viewer=None, settings=None) -> dict:
    """The cards of the matches ``ids`` (distinct) that ``query`` selects, in the order of
    ``ids``, as one last page, and the ids left out (no such match, or filtered out): one query
    for the matches whatever their number, then one per relation (picks' stakes by
    ``settings``'s rule)."""
    found = cards.build(query.where(Match.id.in_(ids)), viewer, include or (), settings=settings)
    position = {match_id: index for index, match_id in enumerate(ids)}
    items = sorted(found, key=lambda card: position[card["id"]])
    present = {card["id"] for card in items}
    missing = [match_id for match_id in ids if match_id not in present]
    return {"items": items, "limit": len(ids), "next_after": None, "missing_ids": missing}
