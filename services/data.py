"""The Data API's match feed: match cards a page at a time, by kick-off then id, continued with
an opaque cursor (keyset pagination: no OFFSET, so a walk returns every match exactly once even
while matches are added)."""

from datetime import UTC, datetime

from flask import current_app
from itsdangerous import BadSignature, URLSafeSerializer

from errors import ValidationFailed
from models import Match
from services import cards
from services.queries import match_filters, within

CURSOR_SALT = "match-feed-cursor"


def _signer() -> URLSafeSerializer:
    return URLSafeSerializer(current_app.config["JWT_SECRET_KEY"], salt=CURSOR_SALT)


def encode_cursor(kickoff_at: datetime, match_id: int) -> str:
    """An opaque, signed token naming the last match of a page (its exact kick-off)."""
    return _signer().dumps([kickoff_at.astimezone(UTC).isoformat(), match_id])


def decode_cursor(cursor: str) -> tuple[datetime, int]:
    """(kick-off, id) the cursor names; a 422 for a cursor this service did not make."""
    try:
        moment, match_id = _signer().loads(cursor)
        return datetime.fromisoformat(moment), int(match_id)
    except (BadSignature, TypeError, ValueError) as exc:
        raise ValidationFailed(
            "The cursor is not one this service gave out.",
            errors={"cursor": ["Not a valid cursor: pass nextCursor as it was given."]},
        ) from exc


def matches(
    date_from=None,
    date_to=None,
    league_id=None,
    team_id=None,
    statuses=None,
    include=(),
    limit=100,
    cursor=None,
    viewer=None,
) -> dict:
    """One page of match cards with the relations in ``include``, and the cursor to the next
    page (None on the last)."""
    query = within(cards.matches(), Match.kickoff_at, date_from, date_to)
    query = match_filters(query, league_id, team_id, statuses)
    if cursor is not None:
        kickoff_at, match_id = decode_cursor(cursor)
        query = query.where(
            (Match.kickoff_at > kickoff_at)
            | ((Match.kickoff_at == kickoff_at) & (Match.id > match_id))
        )
    query = query.order_by(Match.kickoff_at, Match.id).limit(limit + 1)
    items = cards.build(query, viewer, include or ())
    following = None
    if len(items) > limit:
        items = items[:limit]
        following = encode_cursor(items[-1]["kickoff_at"], items[-1]["id"])
    return {"items": items, "limit": limit, "next_cursor": following}
