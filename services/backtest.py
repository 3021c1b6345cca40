"""Backtests over the walk-forward (backfilled) picks: nothing the model had seen is scored."""

import numpy as np

from engine import backtest
from models import Match, Pick, epoch_seconds, fetch_rows

COLUMNS = (
    Match.kickoff_at,
    Pick.id,
    Match.league,
    Pick.market,
    Pick.rating,
    Pick.edge,
    Pick.odds,
    Pick.stake,
    Pick.clv,
    Pick.status,
    Pick.profit,
)


def pick_frame() -> dict:
    """Every backfilled pick as the engine's pick frame (arrays, one entry per pick)."""
    rows = fetch_rows(Pick.select(*COLUMNS).join(Match).where(~Pick.is_live))
    columns = list(zip(*rows, strict=True)) or [()] * len(COLUMNS)
    kickoff, pick_id, league_id, market, rating, edge, odds, stake, clv, status, profit = columns
    return {
        "kickoff": epoch_seconds(kickoff),
        "pick_id": np.array(pick_id, dtype=np.int64),
        "league_id": np.array(league_id, dtype=np.int64),
        "market": np.array(market, dtype=str),
        "rating": np.array(rating, dtype=str),
        "edge": np.array(edge, dtype=float),
        "odds": np.array(odds, dtype=float),
        "stake": np.array(stake, dtype=float),
        "clv": np.array(clv, dtype=float),
        "status": np.array(status, dtype=str),
        "profit": np.array(profit, dtype=float),
    }


def run(
    ratings=None, markets=None, min_edge=None, league_id=None, date_from=None, date_to=None
) -> dict:
    """Summary, by month, by league and the equity curve of the backfilled picks that pass."""
    filters = backtest.BacktestFilters(
        ratings=tuple(ratings) if ratings else None,
        markets=tuple(markets) if markets else None,
        min_edge=min_edge,
        league_id=league_id,
        date_from=int(date_from.timestamp()) if date_from else None,
        date_to=int(date_to.timestamp()) if date_to else None,
    )
    return backtest.run(pick_frame(), filters)
