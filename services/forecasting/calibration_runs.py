"""Calibration runs: how well the published probabilities matched what happened, per market,
beside the bookmakers' closing implied probabilities scored on the same matches."""

from datetime import timedelta

import numpy as np

from clock import utcnow
from engine.betting import calibration, odds
from engine.markets import FIXED_MARKETS, ORDERED_MARKETS, outcome_indices
from models import Match, Prediction
from services.market import price_cubes


def run(window_days: int, settings, now=None) -> dict:
    """The calibration-run operation over matches finished in the last ``window_days`` days,
    the reference de-margined by ``settings["MARGIN_METHOD"]``."""
    now = now or utcnow()
    start = now - timedelta(days=window_days)
    rows = list(
        Prediction.select(
            Prediction.match,
            Prediction.market,
            Prediction.probabilities,
            Match.home_goals,
            Match.away_goals,
        )
        .join(Match)
        .where(
            (Match.status == "finished") & (Match.kickoff_at >= start) & (Match.kickoff_at < now)
        )
        .order_by(Prediction.match)
        .tuples()
    )
    all_matches = np.unique(np.array([row[0] for row in rows], dtype=np.int64))
    method = settings["MARGIN_METHOD"]
    closing = _closing_lines(all_matches, method)  # one read of the closing odds, all markets
    markets = {}
    for market, selections in FIXED_MARKETS.items():
        mine = [row for row in rows if row[1] == market]
        at = np.searchsorted(all_matches, np.array([row[0] for row in mine], dtype=np.int64))
        probs = np.array(
            [[row[2][name] for name in selections] for row in mine], dtype=float
        ).reshape(len(mine), len(selections))
        goals = np.array([row[3:5] for row in mine], dtype=float).reshape(len(mine), 2)
        outcome = outcome_indices(goals[:, 0], goals[:, 1])[market]
        fair, prices = closing[market]
        markets[market] = calibration.evaluate(
            probs,
            outcome,
            reference=fair[at],
            ordered=market in ORDERED_MARKETS,
            prices=prices[at],
        )
    return {
        "window_days": window_days,
        "date_from": start,
        "date_to": now,
        "reference_method": f"closing odds, {method} margin removal",
        "markets": markets,
    }


def _closing_lines(match_ids, method) -> dict:
    """Per market, ``(fair, prices)``: the sharp closing prices (Pinnacle's, else the market
    average's) of ``match_ids``, rows in that order, and their de-margined probabilities."""
    lines = {}
    for market, cube in price_cubes.load(match_ids, closing=True).items():
        prices, _ = odds.closing_prices(cube.prices, cube.bookmakers)
        lines[market] = (odds.remove_margin(prices, method=method), prices)
    return lines
