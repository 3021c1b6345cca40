"""Comparable matches (engine.betting.comparable): the nearest forecasts, and how often each
selection won among them, a stake decided in part weighing in part."""

import numpy as np
import pytest

from engine.betting.comparable import nearest


def test_the_nearest_forecasts_and_their_rates_hand_worked():
    candidates = [[0.6, 0.4], [0.5, 0.5], [0.9, 0.1], [0.55, 0.45]]
    near = nearest([0.56, 0.44], candidates, [0, 1, 0, 0], 3)
    assert near.index.tolist() == [3, 0, 1]  # 0.01·√2, 0.04·√2, 0.06·√2
    assert near.distance == pytest.approx(np.array([0.01, 0.04, 0.06]) * 2**0.5)
    assert near.mean_predicted == pytest.approx([0.55, 0.45])
    assert near.observed_rate == pytest.approx([2 / 3, 1 / 3])


def test_a_push_and_a_half_stake_weigh_what_they_decided():
    # A whole stake won by the first selection, half a stake by the second (a quarter line's
    # half lost), a push (no winner): the first won 1 of the 1.5 decided.
    near = nearest([0.5, 0.5], [[0.5, 0.5]] * 3, [0, 1, -1], 3, [1.0, 0.5, 0.0])
    assert near.observed_rate == pytest.approx([1 / 1.5, 0.5 / 1.5])
    pushed = nearest([0.5, 0.5], [[0.5, 0.5]], [-1], 1, [0.0])
    assert np.isnan(pushed.observed_rate).all() and pushed.mean_predicted.tolist() == [0.5, 0.5]
    with pytest.raises(ValueError, match="shares"):
        nearest([0.5, 0.5], [[0.5, 0.5]], [0], 1, [1.0, 1.0])
