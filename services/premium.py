"""Premium fields: the one rule deciding what of a pick a caller may see.

A pick rated ``A`` is the product Pro subscribers pay for: anonymous and free callers see that it
exists, its rating, market and outcome, but not what to back, at what price or why, nor the
figures that would give them back (profit, closing odds, CLV, closing EV). Answers that list
edges per selection (the explorer's slate) hide them for a market whose pick is locked.
"""

#: Ratings whose picks are locked for callers without premium access.
LOCKED_RATINGS = frozenset({"A"})
#: What a locked pick hides (null in the answer): what to back, at what price and why, and what
#: would give the price back once it is settled (profit, closing odds with CLV, closing EV).
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
    """Whether a pick is locked: rated ``A``, seen without premium access before kick-off."""
    return rating in LOCKED_RATINGS and not premium and now < kickoff_at


def present(pick: dict, premium: bool) -> dict:
    """``pick`` as a caller with or without premium access may see it, ``locked`` set."""
    locked = pick["rating"] in LOCKED_RATINGS and not premium
    if locked:
        pick.update(dict.fromkeys(HIDDEN_FIELDS))
    pick["locked"] = locked
    return pick
