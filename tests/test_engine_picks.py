"""Edges, pick choice, ratings and data quality (engine.picks)."""

import numpy as np
import pytest

from engine.picks import (
    DataQualityConfig,
    RatingThresholds,
    choose,
    data_quality,
    edges,
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
    selection, edge = choose(probs, prices)
    assert selection.tolist() == [2, -1, -1, 0]
    assert edge[[0, 1, 3]] == pytest.approx([0.20, 0.01, 0.10])
    assert np.isnan(edge[2])
    assert choose(probs, prices, min_edge=0.15)[0].tolist() == [2, -1, -1, -1]
    assert choose(probs, prices, min_edge=0.0)[0].tolist() == [2, 0, -1, 0]


def test_choose_needs_a_matrix():
    with pytest.raises(ValueError):
        choose([0.5, 0.5], [2.1, 2.1])


def test_rate_boundaries():
    edge = [0.08, 0.08, 0.079, 0.05, 0.049, 0.2, NAN, 0.3]
    quality = [0.8, 0.79, 0.95, 0.6, 0.95, 0.59, 0.9, NAN]
    assert rate(edge, quality).tolist() == ["A", "B", "B", "B", "C", "C", "C", "C"]


def test_rate_with_custom_thresholds():
    strict = RatingThresholds(a_edge=0.1, a_quality=0.9, b_edge=0.08, b_quality=0.8)
    assert rate([0.09, 0.12, 0.12], [0.95, 0.85, 0.95], strict).tolist() == ["B", "B", "A"]


def test_data_quality_hand_worked():
    score, parts = data_quality(
        history_home=[10, 40, 0, NAN],
        history_away=[30, 25, 5, 20],
        n_bookmakers=[3, 7, 0, 5],
        has_closing=[True, False, False, True],
    )
    # Match 0: history min(10, 30)/20 = 0.5, bookmakers 3/5 = 0.6, closing 1
    #          → 0.45·0.5 + 0.40·0.6 + 0.15·1 = 0.225 + 0.24 + 0.15 = 0.615.
    # Match 1: 25/20 and 7/5 cap at 1, no closing odds → 0.45 + 0.40 = 0.85.
    # Match 2: nothing → 0. Match 3: unknown history counts as none → 0.40 + 0.15 = 0.55.
    assert score == pytest.approx([0.615, 0.85, 0.0, 0.55])
    assert parts["history"] == pytest.approx([0.5, 1.0, 0.0, 0.0])
    assert parts["bookmakers"] == pytest.approx([0.6, 1.0, 0.0, 1.0])
    assert parts["closing_odds"].tolist() == [1.0, 0.0, 0.0, 1.0]


def test_data_quality_config_and_scalar_parts_broadcast():
    config = DataQualityConfig(
        history_target=10, bookmaker_target=2, history_weight=0.5, bookmaker_weight=0.5,
        closing_weight=0.0,
    )  # fmt: skip
    score, parts = data_quality([5, 10], [8, 12], 1, True, config)
    # (0.5·0.5 + 0.5·0.5, 0.5·1 + 0.5·0.5) = (0.5, 0.75)
    assert score == pytest.approx([0.5, 0.75])
    assert parts["bookmakers"].shape == parts["closing_odds"].shape == (2,)


@pytest.mark.parametrize(
    "overrides",
    [{"history_target": 0}, {"bookmaker_target": -1}, {"closing_weight": 0.3}],
)
def test_data_quality_config_rejects_nonsense(overrides):
    with pytest.raises(ValueError):
        DataQualityConfig(**overrides)
