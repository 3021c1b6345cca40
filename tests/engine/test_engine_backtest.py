"""Backtests over a pick frame (engine.betting.backtest)."""

import json
from datetime import UTC, datetime

import numpy as np
import pytest

from engine.betting.backtest import PICK_FRAME_COLUMNS, BacktestFilters, run

NAN = np.nan


def epoch(text):
    """Epoch seconds of an ISO UTC datetime."""
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp())


def frame(rows):
    """A pick frame from rows of (kickoff, pick_id, league, market, rating, edge, odds, clv,
    status, profit), all staked 1 unit."""
    columns = list(zip(*rows, strict=True))
    return {
        "kickoff": np.array([epoch(k) for k in columns[0]], dtype=np.int64),
        "pick_id": np.array(columns[1], dtype=np.int64),
        "league_id": np.array(columns[2], dtype=np.int64),
        "market": np.array(columns[3]),
        "rating": np.array(columns[4]),
        "edge": np.array(columns[5], dtype=float),
        "odds": np.array(columns[6], dtype=float),
        "stake": np.ones(len(rows)),
        "clv": np.array(columns[7], dtype=float),
        "status": np.array(columns[8]),
        "profit": np.array(columns[9], dtype=float),
    }


# Deliberately out of order: the engine sorts by (kickoff, pick_id).
ROWS = [
    ("2024-03-02T15:00", 3, 1, "1x2", "B", 0.06, 3.0, NAN, "lost", -1.0),
    ("2024-03-02T15:00", 1, 1, "1x2", "A", 0.09, 2.0, 0.04, "lost", -1.0),
    ("2024-03-02T15:00", 2, 2, "ou25", "A", 0.10, 2.0, 0.02, "won", 1.0),
    ("2024-02-28T20:00", 4, 2, "btts", "C", 0.03, 1.9, -0.01, "won", 0.9),
    ("2024-03-05T19:45", 5, 1, "1x2", "B", 0.05, 2.5, NAN, "void", 0.0),
    ("2024-03-09T12:30", 6, 2, "1x2", "C", 0.02, 4.0, NAN, "pending", NAN),
]


def test_run_hand_worked():
    result = run(frame(ROWS))
    summary = result["summary"]
    # In order: #4 +0.9 (28 Feb), #1 −1, #2 +1, #3 −1 (2 Mar), #5 void (5 Mar), #6 pending.
    # Cumulative 0.9, −0.1, 0.9, −0.1, −0.1: drawdown 0.9 − (−0.1) = 1.0; results W L W L:
    # streak 1. (The frame's own order, #3 before #1 and #2, would give 2.0 and 2.)
    assert summary["picks"] == 6
    assert (summary["won"], summary["lost"], summary["void"], summary["pending"]) == (2, 2, 1, 1)
    assert summary["profit"] == pytest.approx(-0.1)
    assert summary["staked"] == 4.0
    assert summary["max_drawdown"] == pytest.approx(1.0)
    assert summary["longest_losing_streak"] == 1
    assert summary["avg_clv"] == pytest.approx(0.05 / 3)

    assert [m["month"] for m in result["by_month"]] == ["2024-02", "2024-03"]
    assert [m["picks"] for m in result["by_month"]] == [1, 5]
    assert result["by_month"][1]["profit"] == pytest.approx(-1.0)
    assert [league["league_id"] for league in result["by_league"]] == [1, 2]
    assert result["by_league"][0]["profit"] == pytest.approx(-2.0)
    assert result["by_league"][0]["longest_losing_streak"] == 2  # #1 then #3
    assert result["by_league"][1]["profit"] == pytest.approx(1.9)

    curve = result["equity_curve"]
    assert [point["date"] for point in curve] == ["2024-02-28", "2024-03-02", "2024-03-05"]
    assert [point["cumulative_profit"] for point in curve] == pytest.approx([0.9, -0.1, -0.1])
    assert [point["settled_picks"] for point in curve] == [1, 4, 5]


def test_pick_id_breaks_kickoff_ties():
    rows = [
        # All at one kick-off; in id order: #1 −1, #2 +2, #3 −1 → cumulative −1, 1, 0:
        # drawdown 1, streak 1. In the frame's order (#3, #1, #2) it would be 2 and 2.
        ("2024-05-01T18:00", 3, 1, "1x2", "A", 0.1, 2.0, NAN, "lost", -1.0),
        ("2024-05-01T18:00", 1, 1, "1x2", "A", 0.1, 2.0, NAN, "lost", -1.0),
        ("2024-05-01T18:00", 2, 1, "1x2", "A", 0.1, 3.0, NAN, "won", 2.0),
    ]
    summary = run(frame(rows))["summary"]
    assert summary["max_drawdown"] == 1.0
    assert summary["longest_losing_streak"] == 1


@pytest.mark.parametrize(
    ("filters", "expected_ids"),
    [
        (BacktestFilters(ratings=("A",)), {1, 2}),
        (BacktestFilters(ratings=("A", "B")), {1, 2, 3, 5}),
        (BacktestFilters(markets=("1x2",)), {1, 3, 5, 6}),
        (BacktestFilters(min_edge=0.06), {1, 2, 3}),
        (BacktestFilters(league_id=2), {2, 4, 6}),
        (BacktestFilters(date_from=epoch("2024-03-02T15:00")), {1, 2, 3, 5, 6}),
        (BacktestFilters(date_to=epoch("2024-03-02T15:00")), {1, 2, 3, 4}),
        (BacktestFilters(ratings=("B", "C"), markets=("1x2",), league_id=1), {3, 5}),
    ],
)
def test_filters(filters, expected_ids):
    rows_by_id = {row[1]: row for row in ROWS}
    result = run(frame(ROWS), filters)
    alone = run(frame([rows_by_id[i] for i in sorted(expected_ids)]))
    assert result == alone


def test_nothing_selected():
    result = run(frame(ROWS), BacktestFilters(ratings=("A",), markets=("btts",)))
    assert result["summary"]["picks"] == 0
    assert result["summary"]["roi"] is None
    assert result["by_month"] == result["by_league"] == result["equity_curve"] == []


def test_frame_must_be_complete_and_even():
    picks = frame(ROWS)
    del picks["clv"]
    with pytest.raises(ValueError, match="clv"):
        run(picks)
    picks = frame(ROWS)
    picks["odds"] = picks["odds"][:-1]
    with pytest.raises(ValueError):
        run(picks)


def big_frame(n=20_000, seed=11):
    """A random frame of ``n`` picks over five years and 20 leagues, in no particular order."""
    rng = np.random.default_rng(seed)
    status = rng.choice(["won", "lost", "void", "pending"], n, p=[0.44, 0.46, 0.03, 0.07])
    odds = rng.uniform(1.3, 6.0, n)
    stake = rng.choice([0.5, 1.0], n)
    return {
        "kickoff": epoch("2020-08-01T12:00") + rng.integers(0, 5 * 365 * 86_400, n),
        "pick_id": rng.permutation(n).astype(np.int64),
        "league_id": rng.integers(1, 21, n),
        "market": rng.choice(["1x2", "ou25", "btts"], n),
        "rating": rng.choice(["A", "B", "C"], n),
        "edge": rng.uniform(0.02, 0.25, n),
        "odds": odds,
        "stake": stake,
        "clv": np.where(rng.random(n) < 0.8, rng.normal(0.0, 0.04, n), NAN),
        "status": status,
        "profit": np.select(
            [status == "won", status == "lost", status == "void"],
            [stake * (odds - 1), -stake, np.zeros(n)],
            default=NAN,
        ),
    }


def test_twenty_thousand_picks_add_up():
    picks = big_frame()
    assert set(picks) == set(PICK_FRAME_COLUMNS)
    result = run(picks)
    summary = result["summary"]
    assert summary["picks"] == 20_000
    for breakdown in ("by_month", "by_league"):
        rows = result[breakdown]
        for name in ("picks", "won", "lost", "void", "pending"):
            assert sum(row[name] for row in rows) == summary[name]
        assert sum(row["profit"] for row in rows) == pytest.approx(summary["profit"])
        assert sum(row["staked"] for row in rows) == pytest.approx(summary["staked"])
    months = [row["month"] for row in result["by_month"]]
    assert months == sorted(months) and len(months) == len(set(months)) == 60  # Aug 2020 – Jul 2025
    assert [row["league_id"] for row in result["by_league"]] == list(range(1, 21))

    curve = result["equity_curve"]
    dates = [point["date"] for point in curve]
    assert dates == sorted(dates) and len(dates) == len(set(dates))
    assert curve[-1]["cumulative_profit"] == pytest.approx(summary["profit"])
    assert curve[-1]["settled_picks"] == summary["won"] + summary["lost"] + summary["void"]
    # End-of-day points are some of the pick-by-pick points, so their drawdown cannot be larger.
    daily = np.array([point["cumulative_profit"] for point in curve])
    daily_drawdown = (np.maximum(np.maximum.accumulate(daily), 0.0) - daily).max()
    assert 0.0 < daily_drawdown <= summary["max_drawdown"] + 1e-9

    filtered = run(picks, BacktestFilters(ratings=("A", "B"), min_edge=0.05, league_id=7))
    keep = (
        np.isin(picks["rating"], ["A", "B"]) & (picks["edge"] >= 0.05) & (picks["league_id"] == 7)
    )
    assert filtered["summary"]["picks"] == int(keep.sum())
    assert [row["league_id"] for row in filtered["by_league"]] == [7]
    json.dumps(result, allow_nan=False)
