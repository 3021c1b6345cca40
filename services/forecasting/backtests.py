"""Backtests over the walk-forward (backfilled) picks: nothing the model had seen is scored."""

import numpy as np

from engine.betting import backtest
from models import League, Match, Pick
from store.bulk import epoch_seconds, fetch_rows

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
    Pick.closing_probability,
)


def pick_frame() -> dict:
    """Every backfilled pick as the engine's pick frame (arrays, one entry per pick)."""
    walk_forward = ~Pick.is_live & Pick.not_live_reason.is_null()  # set-apart picks are neither
    rows = fetch_rows(Pick.select(*COLUMNS).join(Match).where(walk_forward))
    columns = list(zip(*rows, strict=True)) or [()] * len(COLUMNS)
    kickoff, pick_id, league_id, market, rating, edge, odds, stake, clv, status, profit, fair = (
        columns
    )
    # As floats, NULL (a pending pick's profit, a missing CLV) becomes NaN.
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
        "closing_probability": np.array(fair, dtype=float),
    }


def run(
    ratings=None, markets=None, min_edge=None, league_id=None, date_from=None, date_to=None
) -> dict:
    """Summary, by month, by league and the equity curve of the backfilled picks that pass.

    ``date_from`` and ``date_to`` are spans (a bare date covers its whole UTC day).
    """
    filters = backtest.BacktestFilters(
        ratings=tuple(ratings) if ratings else None,
        markets=tuple(markets) if markets else None,
        min_edge=min_edge,
        league_id=league_id,
        date_from=int(date_from.start.timestamp()) if date_from else None,
        # The engine's bound is inclusive: a whole day ends one second before the next.
        date_to=(
            int(date_to.start.timestamp() if date_to.instant else date_to.end.timestamp() - 1)
            if date_to
            else None
        ),
    )
    result = backtest.run(pick_frame(), filters)
    names = dict(League.select(League.id, League.name).tuples())
    for row in result["by_league"]:
        row["league_name"] = names.get(row["league_id"])
    params = {
        "rating": ratings,
        "market": markets,
        "min_edge": min_edge,
        "league_id": league_id,
        "date_from": date_from,
        "date_to": date_to,
    }
    return {"params": params, **result}
