"""Forecast scores and track-record figures (engine.betting.metrics)."""

import json
import math

import numpy as np
import pytest

from engine.betting import metrics
from engine.betting.metrics import (
    brier,
    expected_calibration_error,
    log_loss,
    longest_losing_streak,
    max_drawdown,
    reliability,
    rps,
    track_record,
    track_record_by,
)

NAN = np.nan
PROBS = np.array([[0.5, 0.3, 0.2], [0.2, 0.5, 0.3]])
OUTCOME = np.array([0, 2])


def test_brier_hand_worked():
    # Row 0: (0.5 − 1)² + 0.3² + 0.2² = 0.25 + 0.09 + 0.04 = 0.38
    # Row 1: 0.2² + 0.5² + (0.3 − 1)² = 0.04 + 0.25 + 0.49 = 0.78 → mean 0.58
    assert brier(PROBS, OUTCOME) == pytest.approx(0.58)
    assert brier([[1.0, 0.0]], [0]) == 0.0
    assert brier([[0.0, 1.0]], [0]) == pytest.approx(2.0)


def test_log_loss_hand_worked():
    # −(ln 0.5 + ln 0.3) / 2 = (0.693147 + 1.203973) / 2 = 0.948560
    assert log_loss(PROBS, OUTCOME) == pytest.approx(0.948560, abs=1e-6)
    assert log_loss([[0.0, 1.0]], [0]) == pytest.approx(-math.log(1e-15))
    assert log_loss([[0.0, 1.0]], [0], eps=1e-6) == pytest.approx(-math.log(1e-6))


def test_rps_hand_worked():
    # Row 0: cumulative forecast 0.5, 0.8 against 1, 1 → (0.25 + 0.04) / 2 = 0.145
    # Row 1: cumulative forecast 0.2, 0.7 against 0, 0 → (0.04 + 0.49) / 2 = 0.265 → mean 0.205
    assert rps(PROBS, OUTCOME) == pytest.approx(0.205)


def test_rps_rewards_a_near_miss_where_brier_does_not():
    # Away wins; both forecasts give it 0.1, but the second puts its mass next door (draw).
    far, near = [[0.8, 0.1, 0.1]], [[0.1, 0.8, 0.1]]
    assert brier(far, [2]) == pytest.approx(brier(near, [2]))
    assert rps(near, [2]) < rps(far, [2])


def test_reliability_hand_worked():
    probs = np.array([[0.25, 0.75], [0.15, 0.85], [0.95, 0.05]])
    outcome = np.array([1, 1, 0])
    # Pairs (p, y): (0.25,0) (0.75,1) (0.15,0) (0.85,1) (0.95,1) (0.05,0).
    # Two bins: [0, 0.5) holds 0.25, 0.15, 0.05 → mean 0.15, rate 0;
    # [0.5, 1] holds 0.75, 0.85, 0.95 → mean 0.85, rate 1. ECE = ½·0.15 + ½·0.15 = 0.15.
    table = reliability(probs, outcome, bins=2)
    assert [(b["from"], b["to"], b["count"]) for b in table] == [(0.0, 0.5, 3), (0.5, 1.0, 3)]
    assert table[0]["mean_predicted"] == pytest.approx(0.15)
    assert table[0]["observed_rate"] == 0.0
    assert table[1]["mean_predicted"] == pytest.approx(0.85)
    assert table[1]["observed_rate"] == 1.0
    assert expected_calibration_error(probs, outcome, bins=2) == pytest.approx(0.15)


def test_reliability_lists_empty_bins_and_puts_certainty_in_the_last():
    probs, outcome = [[1.0, 0.0], [0.36, 0.64]], [0, 1]
    table = reliability(probs, outcome, bins=10)
    assert len(table) == 10
    assert table[3]["from"] == 0.3 and table[3]["to"] == 0.4
    # 0.0 → bin 0, 0.36 → bin 3 (not rounded up to 4), 0.64 → bin 6, 1.0 → the last bin.
    assert [b["count"] for b in table] == [1, 0, 0, 1, 0, 0, 1, 0, 0, 1]
    assert table[1] == {
        "from": 0.1, "to": 0.2, "mean_predicted": None, "observed_rate": None, "count": 0,
    }  # fmt: skip
    assert table[9]["mean_predicted"] == 1.0 and table[9]["observed_rate"] == 1.0
    # |0.36 − 0| and |0.64 − 1| over four forecasts: 0.72 / 4 = 0.18.
    assert expected_calibration_error(probs, outcome) == pytest.approx(0.18)


def test_scores_of_nothing_are_none():
    empty, no_outcome = np.zeros((0, 3)), np.zeros(0, dtype=int)
    assert brier(empty, no_outcome) is None
    assert log_loss(empty, no_outcome) is None
    assert rps(empty, no_outcome) is None
    assert expected_calibration_error(empty, no_outcome) is None
    assert all(b["count"] == 0 for b in reliability(empty, no_outcome))


@pytest.mark.parametrize(
    ("probs", "outcome"),
    [
        ([[0.5, 0.5]], [2]),  # outcome outside the selections
        ([[0.5, 0.5]], [-1]),
        ([[NAN, NAN]], [0]),  # no forecast
        ([0.5, 0.5], [0]),  # not a matrix
        ([[0.5, 0.5]], [0.0]),  # not an index
    ],
)
def test_bad_forecasts_are_rejected(probs, outcome):
    with pytest.raises(ValueError):
        brier(probs, outcome)


def test_max_drawdown_hand_worked():
    # Cumulative 1, 0, −1, 1, −2, −1.5: peak 1, lowest −2 after it → 3.
    assert max_drawdown([1, -1, -1, 2, -3, 0.5]) == 3.0
    # The peak starts at 0: cumulative −1, −2, 1 → 2.
    assert max_drawdown([-1, -1, 3]) == 2.0
    assert max_drawdown([1, 2]) == 0.0
    assert max_drawdown([]) == 0.0
    assert max_drawdown([2, NAN, -1.5]) == 1.5  # unsettled entries are skipped


def test_half_results_count_as_decided_picks():
    # A quarter-line bet at odds 2.0 that half won makes 0.5, one that half lost −0.5.
    status = ["half-won", "half-lost", "won", "half-lost", "void"]
    profit = [0.5, -0.5, 1.0, -0.5, 0.0]
    figures = track_record(status, profit, [2.0] * 5, [0.05] * 5, [NAN] * 5, np.ones(5))
    assert (figures["half_won"], figures["half_lost"], figures["won"]) == (1, 2, 1)
    # Made money: the half win and the win, of four decided picks; all four were staked.
    assert figures["hit_rate"] == 0.5
    assert figures["staked"] == 4.0
    assert figures["profit"] == 0.5
    assert figures["roi"] == 0.125
    # Half losses lose: HW HL W HL → a streak of one.
    assert figures["longest_losing_streak"] == 1
    assert longest_losing_streak(["half-lost", "void", "lost", "won"]) == 2


def test_longest_losing_streak_skips_voids_and_pendings():
    status = ["lost", "void", "lost", "pending", "lost", "won", "lost", "lost"]
    assert longest_losing_streak(status) == 3
    assert longest_losing_streak(["won", "void"]) == 0
    assert longest_losing_streak([]) == 0


STATUS = np.array(["won", "lost", "lost", "void", "lost", "pending", "won", "lost"])
PROFIT = np.array([1.0, -1.0, -1.0, 0.0, -1.0, NAN, 2.0, -1.0])
ODDS = np.array([2.0, 2.5, 1.5, 3.0, 2.0, 2.2, 3.0, 1.8])
EDGE = np.array([0.1, 0.05, NAN, 0.02, 0.03, 0.1, 0.1, 0.04])
CLV = np.array([NAN, NAN, NAN, NAN, NAN, NAN, 0.05, -0.01])
STAKE = np.ones(8)


def test_track_record_hand_worked():
    figures = track_record(STATUS, PROFIT, ODDS, EDGE, CLV, STAKE)
    # Won 2, lost 4: hit rate 2/6; staked 6 (the void and the pending are not staked);
    # profit 1 − 1 − 1 + 0 − 1 + 2 − 1 = −1, ROI −1/6.
    # Cumulative profit 1, 0, −1, −1, −2, 0, −1 → drawdown 1 − (−2) = 3.
    # Results without voids and pendings: W L L L W L → longest losing streak 3.
    assert figures == {
        "picks": 8,
        "won": 2,
        "lost": 4,
        "void": 1,
        "half_won": 0,
        "half_lost": 0,
        "pending": 1,
        "hit_rate": pytest.approx(1 / 3),
        "staked": 6.0,
        "profit": -1.0,
        "roi": pytest.approx(-1 / 6),
        # Residuals profit + 1/6 over the six won and lost picks: 7/6, 13/6 and −5/6 four times;
        # Σ² = (49 + 169 + 100)/36 = 8.8333, so the standard error is √(8.8333/5 · 6)/6 = 0.542627.
        "roi_std_error": pytest.approx(0.542627, abs=1e-6),
        "avg_odds": pytest.approx(18.0 / 8),
        "avg_edge": pytest.approx(0.44 / 7),
        "avg_clv": pytest.approx(0.02),
        # Settled without a CLV: the first five but the pending one (six, less the pending).
        "clv_excluded": 5,
        "avg_closing_ev": None,
        "avg_closing_ev_std_error": None,
        "closing_ev_excluded": 7,  # every settled pick: none has a closing probability
        "max_drawdown": 3.0,
        "longest_losing_streak": 3,
    }


def test_closing_ev_is_the_return_at_the_fair_closing_probability():
    closing = np.array([0.55, NAN, 0.6, NAN, NAN, NAN, 0.3, 0.5])
    figures = track_record(STATUS, PROFIT, ODDS, EDGE, CLV, STAKE, closing)
    # 2 × 0.55 − 1 = 0.1, 1.5 × 0.6 − 1 = −0.1, 3 × 0.3 − 1 = −0.1, 1.8 × 0.5 − 1 = −0.1.
    assert figures["avg_closing_ev"] == pytest.approx(-0.2 / 4)
    # Deviations from −0.05: 0.15 and −0.05 three times; Σ² = 0.03, √(0.03/3)/√4 = 0.05.
    assert figures["avg_closing_ev_std_error"] == pytest.approx(0.05)
    # Left out for want of a closing probability: the lost, void and lost picks 2, 4 and 5
    # (the pending pick 6 is counted as pending, not as left out).
    assert figures["closing_ev_excluded"] == 3
    grouped = track_record_by(STATUS == "won", STATUS, PROFIT, ODDS, EDGE, CLV, STAKE, closing)
    assert grouped[True]["avg_closing_ev"] == pytest.approx(0.0)  # 0.1 and −0.1
    assert grouped[False]["avg_closing_ev"] == pytest.approx(-0.1)
    assert (grouped[True]["closing_ev_excluded"], grouped[False]["closing_ev_excluded"]) == (0, 3)


def test_track_record_of_nothing():
    figures = track_record([], [], [], [], [], [])
    assert figures["picks"] == 0 and figures["profit"] == 0.0
    assert figures["hit_rate"] is None and figures["roi"] is None and figures["avg_clv"] is None
    assert figures["roi_std_error"] is None and figures["avg_closing_ev_std_error"] is None
    assert figures["max_drawdown"] == 0.0 and figures["longest_losing_streak"] == 0


def test_the_roi_standard_error_with_flat_stakes_is_that_of_the_mean_profit():
    rng = np.random.default_rng(5)
    odds = rng.uniform(1.5, 9.0, 400)
    won = rng.random(400) < 1 / odds
    profit = np.where(won, odds - 1, -1.0)
    status = np.where(won, "won", "lost")
    figures = track_record(status, profit, odds, odds * 0, odds * NAN, np.ones(400))
    assert figures["roi"] == pytest.approx(profit.mean())
    assert figures["roi_std_error"] == pytest.approx(profit.std(ddof=1) / np.sqrt(400))


def test_track_record_is_plain_json():
    figures = track_record(STATUS, PROFIT, ODDS, EDGE, CLV, STAKE)
    json.dumps(figures, allow_nan=False)
    assert all(type(v) in (int, float, type(None)) for v in figures.values())


def test_track_record_rejects_ragged_columns():
    with pytest.raises(ValueError):
        track_record(STATUS, PROFIT[:-1], ODDS, EDGE, CLV, STAKE)


def test_track_record_by_hand_worked():
    keys = ["a", "b", "a", "b", "a", "b", "a", "b"]
    groups = track_record_by(keys, STATUS, PROFIT, ODDS, EDGE, CLV, STAKE)
    assert list(groups) == ["a", "b"]
    # a: won +1, lost −1, lost −1, won +2 → cumulative 1, 0, −1, 1: drawdown 2, streak 2.
    # b: lost −1, void 0, pending, lost −1 → cumulative −1, −1, −2: drawdown 2, streak 2.
    assert groups["a"]["profit"] == 1.0 and groups["b"]["profit"] == -2.0
    assert groups["a"]["max_drawdown"] == 2.0 and groups["b"]["max_drawdown"] == 2.0
    assert groups["a"]["longest_losing_streak"] == 2
    assert groups["b"]["longest_losing_streak"] == 2
    assert groups["b"]["pending"] == 1 and groups["b"]["hit_rate"] == 0.0


def test_losing_streaks_do_not_run_across_groups():
    # a: W L, b: L W. Sorted by key the two losses sit side by side but belong to two groups.
    groups = track_record_by(
        ["a", "b", "a", "b"], ["won", "lost", "lost", "won"], [1, -1, -1, 1], [2] * 4,
        [0.1] * 4, [NAN] * 4, [1] * 4,
    )  # fmt: skip
    assert groups["a"]["longest_losing_streak"] == groups["b"]["longest_losing_streak"] == 1


def test_track_record_by_matches_each_group_on_its_own():
    rng = np.random.default_rng(3)
    n = 600
    status = rng.choice(["won", "lost", "void", "pending"], n, p=[0.4, 0.45, 0.05, 0.1])
    odds = rng.uniform(1.4, 5.0, n)
    stake = rng.choice([0.5, 1.0, 2.0], n)
    profit = np.select(
        [status == "won", status == "lost", status == "void"],
        [stake * (odds - 1), -stake, np.zeros(n)],
        default=NAN,
    )
    edge = rng.uniform(0.0, 0.2, n)
    clv_values = np.where(rng.random(n) < 0.7, rng.normal(0, 0.05, n), NAN)
    closing = np.where(rng.random(n) < 0.8, rng.uniform(0.2, 0.7, n), NAN)
    keys = rng.integers(0, 7, n) * 10
    keys[keys == 30] = 40  # a key missing from the middle of the range
    groups = track_record_by(keys, status, profit, odds, edge, clv_values, stake, closing)
    assert sorted(groups) == list(groups) == [0, 10, 20, 40, 50, 60]
    for key, figures in groups.items():
        part = keys == key
        alone = track_record(
            status[part],
            profit[part],
            odds[part],
            edge[part],
            clv_values[part],
            stake[part],
            closing[part],
        )
        assert figures == pytest.approx(alone, rel=1e-12, abs=1e-12)
        assert figures["max_drawdown"] == pytest.approx(max_drawdown(profit[part]))
        assert figures["longest_losing_streak"] == longest_losing_streak(status[part])


def test_price_bands_put_an_edge_price_in_the_band_above():
    assert metrics.price_band([1.01, 1.99, 2.0, 3.99, 4.0, 8.0, 50.0, NAN]).tolist() == [
        0, 0, 1, 1, 2, 3, 3, -1,
    ]  # fmt: skip
