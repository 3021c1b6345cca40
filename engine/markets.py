"""Markets, their selections and the outcome a final score gives each fixed market (one without
a line: a line market's outcome needs its line, see ``engine.model.lines``)."""

import numpy as np

from enums import LINE_MARKETS, MARKET_SELECTIONS, OU25_LINE

#: The markets without a line and their selections (as ``enums`` defines them), in the order
#: of the columns of the match-indexed (n, k) arrays; the line markets (``enums.LINE_MARKETS``)
#: are held as line rows (``engine.model.lines``), and ``enums.MARKET_SELECTIONS`` has every market.
FIXED_MARKETS = {
    market: selections
    for market, selections in MARKET_SELECTIONS.items()
    if market not in LINE_MARKETS
}
#: The match-indexed arrays' markets, by the name their callers have always used.
MARKETS = FIXED_MARKETS

#: Markets whose selections are ordered, so a ranked probability score is meaningful.
ORDERED_MARKETS = frozenset({"1x2"})


def market_line(market: str, line) -> float | None:
    """The line a row of ``market`` stands at: its own for a market with lines ("ah": the home
    side's handicap; "ou": the goals line; None where it is withheld), 2.5 for "ou25", and None
    for the markets without one (1x2 and btts, stored with line 0)."""
    if market in LINE_MARKETS:
        return None if line is None else float(line)
    return OU25_LINE if market == "ou25" else None


def outcome(market: str, home_goals: int, away_goals: int) -> str:
    """The winning selection of a fixed ``market`` for a final score; KeyError for another."""
    if market == "1x2":
        if home_goals > away_goals:
            return "home"
        return "draw" if home_goals == away_goals else "away"
    if market == "ou25":
        return "over" if home_goals + away_goals > 2 else "under"
    if market == "btts":
        return "yes" if home_goals > 0 and away_goals > 0 else "no"
    raise KeyError(market)


def outcome_indices(home_goals, away_goals) -> dict[str, np.ndarray]:
    """Index of the winning selection of every fixed market for each score, -1 where no result.

    The vectorised form of ``outcome``: the tests check the two agree on every score.
    """
    hg = np.asarray(home_goals, dtype=float)
    ag = np.asarray(away_goals, dtype=float)
    known = np.isfinite(hg) & np.isfinite(ag)
    hg = np.where(known, hg, 0.0)
    ag = np.where(known, ag, 0.0)
    result = {
        "1x2": np.where(hg > ag, 0, np.where(hg == ag, 1, 2)),
        "ou25": np.where(hg + ag > 2, 0, 1),
        "btts": np.where((hg > 0) & (ag > 0), 0, 1),
    }
    return {market: np.where(known, idx, -1) for market, idx in result.items()}
