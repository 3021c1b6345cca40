"""Edges, pick choice, ratings and data quality (engine.betting.picks)."""

import numpy as np
import pytest

from engine.betting.picks import (
    DataQualityConfig,
    RatingThresholds,
    choose,
    data_quality,
    edges,
    growth,
    rate,
)

NAN = np.nan


def test_edges_hand_worked_and_nan_safe():
    # 0.5 × 2.1 − 1 = 0.05; 0.25 × 3.6 − 1 = −0.10
    assert edges([0.5, 0.25], [2.1, 3.6]) == pytest.approx([0.05, -0.10])
    assert np.isnan(edges([NAN, 0.5], [2.0, NAN])).all()


def test_choose_takes_the_largest_edge_above_the_minimum():
    probs = np.array(
        [
            [0.5, 0.3, 0.2],  # edges 0.05, −0.04, 0.20 → away
            [0.5, 0.3, 0.2],  # edges 0.01, −0.10, −0.20 → nothing (0.01 < 0.02)
            [0.5, 0.3, 0.2],  # no prices at all
            [0.5, 0.25, 0.25],  # edges 0.10, NaN, 0.10 (exactly equal) → the first selection
        ]
    )
    prices = np.array(
        [
            [2.1, 3.2, 6.0],
            [2.02, 3.0, 4.0],
            [NAN, NAN, NAN],
            [2.2, NAN, 4.4],
        ]
    )
    selection, edge, kelly = choose(probs, prices)
    assert selection.tolist() == [2, -1, -1, 0]
    assert edge[[0, 1, 3]] == pytest.approx([0.20, 0.01, 0.10])
    assert np.isnan(edge[2]) and np.isnan(kelly[2])
    assert kelly[[0, 1, 3]] == pytest.approx(growth([0.2, 0.5, 0.5], [6.0, 2.02, 2.2]))
    assert choose(probs, prices, min_edge=0.15)[0].tolist() == [2, -1, -1, -1]
    assert choose(probs, prices, min_edge=0.0)[0].tolist() == [2, 0, -1, 0]


def test_choose_needs_a_matrix():
    with pytest.raises(ValueError, match=r"^probs and prices must be \(n, k\), got \(2,\)$"):
        choose([0.5, 0.5], [2.1, 2.1])


def test_growth_hand_worked():
    # p = 0.5 at 2.1: the Kelly stake f = (0.5·2.1 − 1)/1.1 = 0.0454545 grows the bankroll by
    # 0.5·ln(1 + 1.1f) + 0.5·ln(1 − f) = 0.5·ln 1.05 + 0.5·ln 0.9545455 = 0.0011351 a bet; the
    # closed form p·ln(p·o) + (1 − p)·ln((1 − p)·o/(o − 1)) gives the same.
    kelly = 0.05 / 1.1
    by_hand = 0.5 * np.log(1 + 1.1 * kelly) + 0.5 * np.log(1 - kelly)
    assert by_hand == pytest.approx(0.0011351, abs=1e-7)
    assert growth([0.5, 0.1, 0.5, NAN, 1.0], [2.1, 11.0, 1.9, 2.0, 1.5]) == pytest.approx(
        [by_hand, 0.1 * np.log(1.1) + 0.9 * np.log(0.9 * 1.1), 0.0, NAN, np.log(1.5)],
        nan_ok=True,
    )


def test_the_same_edge_grows_less_at_a_longer_price():
    # A 10 % edge at 2.0 is worth about 0.1²/2 = 0.005 a bet; at 11.0 about 0.1²/20 = 0.0005.
    short, long_shot = growth([0.55, 0.1], [2.0, 11.0])
    assert short == pytest.approx(0.005, rel=0.05) and long_shot == pytest.approx(0.0005, rel=0.05)


def test_choose_drops_a_long_shot_below_the_minimum_growth():
    # Both edges are 0.03; at 21.0 that is a growth of about 0.03²/40 = 0.0000225 < 0.00005.
    probs = np.array([[0.515, 0.485], [0.049047619, 0.950952381]])
    prices = np.array([[2.0, 1.9], [21.0, 1.02]])
    selection, edge, kelly = choose(probs, prices, min_edge=0.02, min_growth=0.00005)
    assert selection.tolist() == [0, -1] and edge == pytest.approx([0.03, 0.03])
    assert kelly[1] == pytest.approx(0.0000225, rel=0.05)


def test_rate_boundaries():
    kelly = [0.001, 0.001, 0.00099, 0.0005, 0.00049, 0.01, NAN, 0.05]
    quality = [0.8, 0.79, 0.95, 0.6, 0.95, 0.59, 0.9, NAN]
    assert rate(kelly, quality).tolist() == ["A", "B", "B", "B", "C", "C", "C", "C"]


def test_rate_with_custom_thresholds():
    strict = RatingThresholds(a_growth=0.002, a_quality=0.9, b_growth=0.001, b_quality=0.8)
    assert rate([0.0015, 0.003, 0.003], [0.95, 0.85, 0.95], strict).tolist() == ["B", "B", "A"]


def test_data_quality_hand_worked():
    score, parts = data_quality(
        history_home=[10, 40, 0, NAN],
        history_away=[30, 25, 5, 20],
        n_bookmakers=[3, 7, 0, 5],
        has_sharp_line=[True, False, False, True],
    )
    # Match 0: history min(10, 30)/20 = 0.5, bookmakers 3/5 = 0.6, sharp line 1
    #          → 0.45·0.5 + 0.40·0.6 + 0.15·1 = 0.225 + 0.24 + 0.15 = 0.615.
    # Match 1: 25/20 and 7/5 cap at 1, no sharp line → 0.45 + 0.40 = 0.85.
    # Match 2: nothing → 0. Match 3: unknown history counts as none → 0.40 + 0.15 = 0.55.
    assert score == pytest.approx([0.615, 0.85, 0.0, 0.55])
    assert parts["history"] == pytest.approx([0.5, 1.0, 0.0, 0.0])
    assert parts["bookmakers"] == pytest.approx([0.6, 1.0, 0.0, 1.0])
    assert parts["sharp_line"].tolist() == [1.0, 0.0, 0.0, 1.0]


def test_data_quality_config_and_scalar_parts_broadcast():
    config = DataQualityConfig(
        history_target=10, bookmaker_target=2, history_weight=0.5, bookmaker_weight=0.5,
        sharp_weight=0.0,
    )  # fmt: skip
    score, parts = data_quality([5, 10], [8, 12], 1, True, config)
    # (0.5·0.5 + 0.5·0.5, 0.5·1 + 0.5·0.5) = (0.5, 0.75)
    assert score == pytest.approx([0.5, 0.75])
    assert parts["bookmakers"].shape == parts["sharp_line"].shape == (2,)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"history_target": 0}, "^data-quality targets must be positive$"),
        ({"bookmaker_target": -1}, "^data-quality targets must be positive$"),
        ({"bookmaker_target": 0}, "^data-quality targets must be positive$"),
        ({"sharp_weight": 0.3}, "^data-quality weights must be non-negative and sum to 1$"),
    ],
)
def test_data_quality_config_rejects_nonsense(overrides, message):
    with pytest.raises(ValueError, match=message):
        DataQualityConfig(**overrides)


def test_data_quality_targets_need_only_be_positive():
    # Half a match and half a bookmaker are odd targets but valid ones: one of each is full.
    config = DataQualityConfig(history_target=0.5, bookmaker_target=0.5)
    score, parts = data_quality([1, 0], [3, 2], [1, 0], [False, False], config)
    assert score == pytest.approx([0.85, 0.0])
    assert parts["history"].tolist() == [1.0, 0.0] and parts["bookmakers"].tolist() == [1.0, 0.0]


def test_an_edge_exactly_at_the_minimum_makes_a_pick():
    # 0.5 × 2.25 − 1 = 0.125 and 0.5 × 2.5 − 1 = 0.25, both exact in binary: a minimum equal to
    # the edge (or to its growth) is met, one a hair above it is not.
    probs = np.array([[0.5, 0.5], [0.5, 0.5]])
    prices = np.array([[2.25, 1.5], [2.5, 1.2]])
    selection, edge, kelly = choose(probs, prices, min_edge=0.125)
    assert edge.tolist() == [0.125, 0.25] and selection.tolist() == [0, 0]
    assert choose(probs, prices, min_edge=np.nextafter(0.125, 1.0))[0].tolist() == [-1, 0]
    assert choose(probs, prices, min_edge=0.0, min_growth=kelly[0])[0].tolist() == [0, 0]
    above = np.nextafter(kelly[0], 1.0)
    assert choose(probs, prices, min_edge=0.0, min_growth=above)[0].tolist() == [-1, 0]


def test_the_default_minimum_edge_is_two_percent():
    # 0.51 × 2.0 − 1 is 0.02 as a price and a probability of the feed give it: a pick; 0.0199 is
    # not (the minimum by default).
    probs = np.array([[0.51, 0.49], [0.50995, 0.49005]])
    prices = np.array([[2.0, 1.9], [2.0, 1.9]])
    selection, edge, _ = choose(probs, prices)
    assert selection.tolist() == [0, -1] and edge == pytest.approx([0.02, 0.0199])


def test_a_price_of_one_or_less_has_no_growth():
    # A price of 1.0 pays nothing back, and one below it is no price at all: NaN, as a missing
    # price, never a growth of 0 that could be rated.
    assert np.isnan(growth([0.5, 0.5, 0.99], [1.0, 0.9, 1.0])).all()


def test_a_missing_value_may_be_none():
    # Array-likes may hold None where a value is missing (as a database column does): every
    # function reads it as NaN, as settle reads a missing score.
    assert np.isnan(edges([0.5, None], [None, 2.0])).all()
    assert growth([0.5, None, 0.5], [2.1, 2.1, None]) == pytest.approx(
        [float(growth(0.5, 2.1)), NAN, NAN], nan_ok=True
    )
    assert rate([0.001, None, 0.001], [0.8, 0.9, None]).tolist() == ["A", "C", "C"]
    score, parts = data_quality([None, 10], [30, None], [None, 3], [None, True])
    # Unknown history, bookmaker counts and sharp line score 0: then 0.40 · 3/5 + 0.15.
    assert score == pytest.approx([0.0, 0.39])
    assert parts["history"].tolist() == [0.0, 0.0] and parts["sharp_line"].tolist() == [0.0, 1.0]
