"""Settlement: a pick's status and profit from its match, and its closing-line value.

Settlement is a pure function of the picks and their matches, so running it twice on the same
inputs gives the same answer: the services may re-run it as often as they like.
"""

import numpy as np

from engine.markets import FIXED_MARKETS, outcome_indices
from engine.model import lines
from enums import LINE_MARKETS, MARKET_SELECTIONS

_SECONDS_PER_HOUR = 3600.0


def winning_selection(market, home_goals, away_goals):
    """The winning selection of each pick's fixed market for a final score
    (engine.markets.outcome).

    ``market`` is a str array, goals numeric arrays; rows without a score, or of a line market
    (whose outcome needs its line: engine.model.lines), get an empty string.
    """
    market = np.asarray(market, dtype=str)
    indices = outcome_indices(home_goals, away_goals)
    winner = np.full(market.shape, "", dtype="<U8")
    for name, selections in FIXED_MARKETS.items():
        mine = market == name
        index = indices[name][mine]
        winner[mine] = np.where(index >= 0, np.asarray(selections)[index], "")
    return winner


def _check_selections(market, selection):
    """Raise ValueError for a market or a selection the engine does not know."""
    known = np.zeros(market.shape, dtype=bool)
    for name, selections in MARKET_SELECTIONS.items():
        known |= (market == name) & np.isin(selection, selections)
    if not known.all():
        bad = sorted({f"{m}/{s}" for m, s in zip(market[~known], selection[~known], strict=True)})
        raise ValueError(f"unknown market/selection: {', '.join(bad)}")


def settle(
    market,
    selection,
    odds,
    stake,
    match_status,
    home_goals,
    away_goals,
    kickoff,
    now,
    void_after_hours=48,
    line=None,
):
    """Status and profit of each pick from its match.

    A ``finished`` match with both scores settles the pick ``won`` (profit stake × (odds − 1)) or
    ``lost`` (−stake); a ``cancelled`` match voids it (profit 0), and so does a ``postponed`` one
    once more than ``void_after_hours`` have passed since the original ``kickoff`` (epoch seconds,
    like ``now``). Everything else stays ``pending`` with a NaN profit. Picks of a line market
    ("ah", "ou") settle at their ``line`` (a float array, NaN for the fixed markets' rows) through
    ``engine.model.lines``: also ``half-won`` or ``half-lost``, and a push is ``void`` with
    profit 0. Returns ``(status, profit)``: a str array and a float array.
    """
    market = np.asarray(market, dtype=str)
    selection = np.asarray(selection, dtype=str)
    match_status = np.asarray(match_status, dtype=str)
    odds = np.asarray(odds, dtype=float)
    stake = np.asarray(stake, dtype=float)
    _check_selections(market, selection)

    scored = np.isfinite(np.asarray(home_goals, dtype=float)) & np.isfinite(
        np.asarray(away_goals, dtype=float)
    )
    decided = (match_status == "finished") & scored
    won = decided & (selection == winning_selection(market, home_goals, away_goals))
    elapsed = np.asarray(now, dtype=float) - np.asarray(kickoff, dtype=float)
    void = (match_status == "cancelled") | (
        (match_status == "postponed") & (elapsed > void_after_hours * _SECONDS_PER_HOUR)
    )
    status = np.select([won, decided, void], ["won", "lost", "void"], default="pending")
    profit = np.select(
        [won, decided, void], [stake * (odds - 1.0), -stake, np.zeros_like(stake)], default=np.nan
    )
    at_line = np.isin(market, LINE_MARKETS)
    if at_line.any():
        status = status.astype("<U9")
        line = np.broadcast_to(
            np.asarray(np.nan if line is None else line, dtype=float), market.shape
        )
        stake, odds = np.broadcast_to(stake, market.shape), np.broadcast_to(odds, market.shape)
        home, away = (
            np.broadcast_to(np.asarray(g, dtype=float), market.shape)
            for g in (home_goals, away_goals)
        )
        for name in LINE_MARKETS:
            rows = (market == name) & decided
            r = lines.results(name, selection[rows], line[rows], home[rows], away[rows])
            if np.isnan(r).any():
                raise ValueError(f"a settled {name} pick needs its line")
            status[rows] = lines.statuses(r)
            profit[rows] = lines.profits(r, odds[rows], stake[rows])
    return status, profit


def clv(odds, closing_odds):
    """Closing-line value, odds ÷ closing − 1; NaN where the closing price is missing or ≤ 1.0."""
    odds = np.asarray(odds, dtype=float)
    closing = np.asarray(closing_odds, dtype=float)
    known = np.isfinite(closing) & (closing > 1.0)
    safe = np.where(known, closing, 1.0)
    return np.where(known, odds / safe - 1.0, np.nan)
