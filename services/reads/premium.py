"""Premium fields: the one rule deciding what of a pick, and of its market, a caller may see.

Before kick-off a pick rated ``A`` is the product Pro subscribers pay for: anonymous and free
callers see that it exists, its rating, market and status, but not what to back, at what price
or why. Nothing else in an answer may give it back, so for that match and market the published
probabilities, the best prices and their bookmakers, and the goal models' own probabilities are
withheld too, wherever they appear; the sharp line and the closing prices stay. From kick-off
every pick is public in full: a record can only be checked if it can be seen.
"""

from models import Match, Pick

#: Ratings whose picks are locked for callers without premium access until kick-off.
LOCKED_RATINGS = frozenset({"A"})
#: What a locked pick hides (null in the answer): what to back, at what price and why, and what
#: would give the price back (profit, closing odds with CLV, closing EV).
HIDDEN_FIELDS = (
    "selection",
    "odds",
    "bookmaker",
    "probability",
    "edge",
    "profit",
    "closing_odds",
    "clv",
    "closing_ev",
)


def has_premium(viewer) -> bool:
    """Whether ``viewer`` (a user, or None when anonymous) sees every pick in full."""
    return viewer is not None and (viewer.plan == "pro" or viewer.role == "admin")


def locked(rating: str, kickoff_at, now, premium: bool = False) -> bool:
    """Whether a pick is locked: rated ``A``, seen without premium access, before kick-off."""
    return rating in LOCKED_RATINGS and not premium and now < kickoff_at


def sealed_markets(kickoffs: dict, viewer, now) -> set[tuple[int, str]]:
    """``{(match_id, market)}`` whose pick is locked for ``viewer`` at ``now``, among the matches
    of ``kickoffs`` (``{match_id: kickoff_at}``): one query, none for premium callers or when
    every match has kicked off."""
    if has_premium(viewer):
        return set()
    upcoming = [match_id for match_id, kickoff_at in kickoffs.items() if now < kickoff_at]
    if not upcoming:
        return set()
    query = Pick.select(Pick.match, Pick.market).where(
        Pick.match.in_(upcoming) & Pick.rating.in_(sorted(LOCKED_RATINGS))
    )
    return set(query.tuples())


def present(pick: dict, is_locked: bool) -> dict:
    """``pick`` with its hidden fields nulled when ``is_locked``, and ``locked`` set."""
    if is_locked:
        pick.update(dict.fromkeys(HIDDEN_FIELDS))
    pick["locked"] = is_locked
    return pick


def seal_prediction(prediction: dict) -> dict:
    """A locked market's prediction: its published probabilities withheld (the de-margined sharp
    line stays, as the sharp prices do)."""
    prediction["probabilities"] = None
    return prediction


def seal_odds(summary: dict) -> dict:
    """A locked market's odds summary: its best prices and their bookmakers withheld."""
    for row in summary["selections"]:
        row["best_price"] = row["best_bookmaker"] = None
    return summary


def seal_intelligence(intelligence: dict, markets) -> dict:
    """Intelligence with the goal models' own probabilities of ``markets`` withheld."""
    model = intelligence["model"]
    views = [model["probabilities"]]
    if model.get("market_ratings"):
        views.append(model["market_ratings"]["probabilities"])
    for view in views:
        for market in markets:
            if market in view:
                view[market] = None
    return intelligence


def next_unlock(now):
    """The next kick-off after ``now`` of a match with a locked pick (None if none): until then
    no locked answer changes by the clock alone."""
    return (
        Match.select(Match.kickoff_at)
        .join(Pick)
        .where((Match.kickoff_at > now) & Pick.rating.in_(sorted(LOCKED_RATINGS)))
        .order_by(Match.kickoff_at)
        .limit(1)
        .scalar()
    )
