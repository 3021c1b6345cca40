"""Premium fields: the one rule deciding what of a match, and of its picks, a caller may see.

Before kick-off a pick rated ``A`` is the product Pro subscribers pay for: anonymous and free
callers see that it exists, its rating, market and status, but not what to back, at what price
or why. Nothing else may give it back, and every price and probability of the match does: a
market's published probability is its sharp line's where the market alone makes it, the goal
models' probabilities of one market follow from their expected goals and another market's, and
the best price of the pick's selection is the pick's price. So a match with a locked pick is
**locked**, market by market (:class:`Lock`): in the locked pick's own market every published,
market (sharp) and model probability, every best, sharp and closing price with its bookmaker,
the lines quoted (a locked pick's line is one of them) and every pick are withheld; in the
match's other markets, what was made with the locked pick or after it by the goal model (its
probabilities, the published ones it pools into, the picks made then) is withheld too, since
its expected goals carry one market's numbers to another's; and so are the expected goals and
strengths. What stays: the teams, kick-off, status, ratings and markets, and in the other
markets the prices with their bookmakers, the market's own fair line, and whatever was public
before the lock (a forecast shown to everyone is never hidden again).

From kick-off every pick is public in full, and stays public: a match moved after it kicked
off (a postponement) keeps, in ``Match.public_since``, the kick-off from which its picks were
public, so none of them is locked again, nor locks its match (a pick made after the move, for
the new kick-off, does until then). A record can only be checked if it can be seen.

"Kick-off" here is the latest one the live sources report: while they disagree (see
:mod:`services.feeds.kickoffs`), a match opens at its ``Match.unlock_at``, so one source's
kick-off in the past never unlocks a match another says has not started.
"""

from peewee import fn

from enums import LINE_MARKETS
from models import Match, Pick

#: Ratings whose picks are locked for callers without premium access until kick-off.
LOCKED_RATINGS = frozenset({"A"})

#: The markets of the goals' total: over/under 2.5 and over/under at any line, sealed together.
GOAL_TOTALS = frozenset({"ou25", "ou"})
#: What a pick of a locked match hides (null in the answer): what to back, at what price and
#: why, and what would give the price back (profit, closing odds with CLV, closing EV, and the
#: suggested stake: Kelly's share is a function of the probability and the price).
HIDDEN_FIELDS = (
    "selection",
    "odds",
    "bookmaker",
    "probability",
    "edge",
    "suggested_stake",
    "profit",
    "closing_odds",
    "closing_bookmaker",
    "clv",
    "closing_ev",
)
#: What a locked match's odds summary hides, for every selection of every market.
HIDDEN_PRICES = (
    "best_price",
    "best_bookmaker",
    "sharp_price",
    "sharp_bookmaker",
    "closing_price",
    "closing_bookmaker",
)
#: What a locked match's predictions hide, for every market: the published probabilities, the
#: goal model's own and the market's. Each gives a locked pick back: the market's line is what
#: is published where the goal model carries no weight, and the goal model's pools into it
#: elsewhere.
HIDDEN_PREDICTION = ("probabilities", "model_probabilities", "market_probabilities")


def has_premium(viewer) -> bool:
    """Whether ``viewer`` (a user, or None when anonymous) sees every pick in full."""
    return viewer is not None and (viewer.plan == "pro" or viewer.role == "admin")


def locked_matches(kickoffs: dict, viewer, now) -> dict:
    """The matches of ``kickoffs`` (``{match_id: unlock}``, each match's
    :func:`unlock_column` value) locked for ``viewer`` at ``now``: still to open, with a pick
    rated ``A`` that has never been public. Each maps to its :class:`Lock`: the instant its
    picks made until then became public for good (its ``public_since``, None if never), the
    markets of its locked picks and when the first of them was made. One query, none for
    premium callers or when every match has opened."""
    if has_premium(viewer):
        return {}
    upcoming = [match_id for match_id, unlock in kickoffs.items() if now < unlock]
    if not upcoming:
        return {}
    query = (
        Pick.select(Pick.match, Match.public_since, Pick.market, Pick.created_at)
        .join(Match)
        .where(Pick.match.in_(upcoming) & _not_open(now) & _never_public())
    )
    found = {}
    for match_id, public_since, market, created_at in query.tuples():
        created_at = Pick.created_at.python_value(created_at)
        lock = found.setdefault(match_id, Lock(public_since, set(), created_at))
        # Both goal-total markets with either: one over/under pick is made across "ou25" and
        # "ou", and the lines either side of a sealed one would bracket it.
        lock.markets.update(GOAL_TOTALS if market in GOAL_TOTALS else (market,))
        lock.since = min(lock.since, created_at)
    return found


class Lock:
    """What of a locked match is sealed: the picks of ``markets`` (those of its never-public
    picks rated A) and whatever was made with them, from ``since`` (the first of them) on; what
    was public before (``public_since``, and anything made before ``since``) stays public."""

    __slots__ = ("markets", "public_since", "since")

    def __init__(self, public_since, markets, since):
        self.public_since, self.markets, self.since = public_since, markets, since

    def seals_market(self, market: str) -> bool:
        """Whether ``market``'s prices, probabilities and lines are sealed: a locked pick's."""
        return market in self.markets

    def seals_since(self, made_at) -> bool:
        """Whether something made at ``made_at`` (a prediction, a pick) is sealed with the
        locked picks: made with them or after them (the same fit of the goal model, whose
        expected goals carry one market's numbers to another's)."""
        return made_at is None or made_at >= self.since


def unlock_column():
    """When a match's locked picks open, as a column: its latest reported kick-off (its
    ``unlock_at`` while the sources disagree, else its ``kickoff_at``)."""
    return fn.COALESCE(Match.unlock_at, Match.kickoff_at)


def _not_open(now):
    """The matches whose locked picks do not open yet at ``now``."""
    return (Match.kickoff_at > now) | (Match.unlock_at > now)


def _never_public():
    """The picks rated ``A`` that have never been public: made after their match's
    ``public_since``, or of a match that has none."""
    return Pick.rating.in_(sorted(LOCKED_RATINGS)) & (
        Match.public_since.is_null() | (Pick.created_at > Match.public_since)
    )


def pick_locked(pick: dict, locked: dict, match_id: int) -> bool:
    """Whether ``pick`` (with its ``market`` and ``created_at``) of ``match_id`` is locked,
    ``locked`` being :func:`locked_matches`' answer: its match is locked, it was not public
    before, and it is of a locked market or was made with the locked picks or after them (its
    probability is the same fit's)."""
    lock = locked.get(match_id)
    if lock is None:
        return False
    if lock.public_since is not None and pick["created_at"] <= lock.public_since:
        return False
    return lock.seals_market(pick["market"]) or lock.seals_since(pick["created_at"])


def present(pick: dict, is_locked: bool) -> dict:
    """``pick`` with its hidden fields nulled when ``is_locked``, and ``locked`` set: the line
    too of a pick of a market with lines (which line to back is part of the pick; the others'
    line is their market's)."""
    if is_locked:
        pick.update(dict.fromkeys(HIDDEN_FIELDS))
        if pick["market"] in LINE_MARKETS:
            pick["line"] = None
    pick["locked"] = is_locked
    return pick


def withhold_prediction(prediction: dict, lock: Lock | None = None) -> dict:
    """A locked match's prediction: in a locked market (or with no ``lock`` given) its
    published, goal-model and market probabilities withheld; in another market, made with the
    locked picks or after them, the goal model's probabilities withheld, and the published ones
    unless they are the market's own line (the goal model's numbers of one market give
    another's back through its expected goals). A prediction public before the lock stays as it
    was shown."""
    if lock is None or lock.seals_market(prediction["market"]):
        prediction.update(dict.fromkeys(HIDDEN_PREDICTION))
    elif lock.seals_since(prediction["made_at"]):
        prediction["model_probabilities"] = None
        if prediction["source"] != "market":
            prediction["probabilities"] = None
    return prediction


def withhold_odds(summary: dict) -> dict:
    """A locked match's odds summary of one market: every price and bookmaker withheld (how
    many bookmakers quote stays)."""
    for row in summary["selections"]:
        row.update(dict.fromkeys(HIDDEN_PRICES))
    return summary


def withhold_lines(rows: list, markets=None) -> list:
    """A locked match's odds summaries or predictions with one row per market with lines of
    ``markets`` (every such market when None), its line withheld: which lines are quoted
    narrows a locked pick's line down, to the very line where only one is. The market's first
    row stands for it; a summary counts the bookmakers of its most quoted line."""
    kept, first = [], {}
    for row in rows:
        market = row["market"]
        if market not in LINE_MARKETS or (markets is not None and market not in markets):
            kept.append(row)
        elif market in first:
            if "bookmakers" in row:
                first[market]["bookmakers"] = max(first[market]["bookmakers"], row["bookmakers"])
        else:
            first[market] = {**row, "line": None}
            kept.append(first[market])
    return kept


def withhold_intelligence(intelligence: dict) -> dict:
    """A locked match's intelligence: the goal models' probabilities of every market, their
    expected goals and the teams' strengths withheld (form and meetings, facts of past matches,
    stay)."""
    model = intelligence["model"]
    model["probabilities"] = dict.fromkeys(model["probabilities"])
    model["strengths"] = None
    model["expected_goals"] = None
    ratings = model.get("market_ratings")
    if ratings:
        ratings["probabilities"] = dict.fromkeys(ratings["probabilities"])
        ratings["expected_goals"] = None
    return intelligence


def next_unlock(now):
    """The next kick-off after ``now`` of a match still locked (None if none): until then no
    locked answer changes by the clock alone."""
    unlock = unlock_column()
    found = (
        Match.select(unlock)
        .join(Pick)
        .where(_not_open(now) & _never_public())
        .order_by(unlock)
        .limit(1)
        .scalar()
    )
    return Match.kickoff_at.python_value(found)
