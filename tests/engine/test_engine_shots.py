"""Shots beside goals: the running conversion, moved goal rates, and the ratings fitted on them."""

from dataclasses import replace

import numpy as np

from engine.model import market_ratings, shots
from engine.model.scores import market_probabilities, score_matrix
from tests.helpers import epoch, schedule

NAN = np.nan


def test_running_conversion_counts_only_earlier_kickoffs_with_every_count_known():
    # Given out of order: kick-offs 30, 10, 20, 20. The row at 10 has nothing before it; both
    # rows at 20 see only the row at 10 (1 goal from 6 on target); the row at 30 sees the row
    # at 10 and the known row at 20 ((1 + 3) / (6 + 6)), not the one without shots.
    kickoff = [30, 10, 20, 20]
    goals = [[1, 1], [1, 0], [0, 0], [2, 1]]
    on_target = [[2, 2], [4, 2], [NAN, NAN], [5, 1]]
    np.testing.assert_allclose(
        shots.running_conversion(kickoff, goals, on_target), [1 / 3, NAN, 1 / 6, 1 / 6]
    )


def test_moved_rates_by_hand():
    rates = [[1.5, 1.0], [0.2, NAN], [1.2, 0.8]]
    goals = [[3, 0], [0, 0], [2, NAN]]
    on_target = [[6, 2], [1, 1], [NAN, 4]]
    conversion = [0.3, 0.3, 0.25]
    moved = shots.moved_rates(rates, goals, on_target, conversion, 0.1, 0.2)
    # 1.5 + 0.1 (3 - 1.5) + 0.2 (0.3·6 - 1.5) = 1.71; 1.0 + 0.1 (0 - 1) + 0.2 (0.6 - 1) = 0.82.
    # 0.2 + 0.1 (0 - 0.2) + 0.2 (0.3 - 0.2) = 0.2; a NaN rate stays NaN.
    # 1.2 + 0.1 (2 - 1.2), no shots: 1.28; 0.8, no goals, + 0.2 (0.25·4 - 0.8): 0.84.
    np.testing.assert_allclose(moved, [[1.71, 0.82], [0.2, NAN], [1.28, 0.84]])
    assert np.array_equal(shots.moved_rates(rates, goals, on_target, conversion, 0, 0), rates, True)


def test_goal_proxy_by_hand():
    proxy = shots.goal_proxy([[2, 0], [1, 3]], [[5, 3], [NAN, 4]], [0.3, 0.25], 0.5)
    # 0.5·2 + 0.5·0.3·5 = 1.75, 0.5·0 + 0.5·0.3·3 = 0.45; no shots: the goals; 0.5·3 + 0.5·1.
    np.testing.assert_allclose(proxy, [[1.75, 0.45], [1.0, 2.0]])


def test_moved_rates_keep_the_floor():
    moved = shots.moved_rates([[0.2, 1.0]], [[0, 0]], [[0, 0]], [0.3], 0.9, 0.0)
    np.testing.assert_allclose(moved, [[shots.RATE_FLOOR, 0.1]])


def _league():
    """Ten teams over two seasons, every match priced from rates made up per row, goals and
    shots on target drawn at those rates; ``now`` after the last match."""
    rng = np.random.default_rng(5)
    rows = schedule({2: list(range(200, 210))})
    kickoff, group, home, away = (np.array(col, dtype=np.int64) for col in zip(*rows, strict=True))
    rates = np.exp(rng.normal([0.35, 0.1], 0.25, (len(kickoff), 2)))
    probs = market_probabilities(score_matrix(rates[:, 0], rates[:, 1], -0.04))
    goals = rng.poisson(rates).astype(float)
    on_target = goals + rng.poisson(2 * rates)
    inp = market_ratings.RatingsInput(
        kickoff=kickoff,
        group=group,
        home=home,
        away=away,
        closing={"1x2": probs["1x2"], "ou25": probs["ou25"]},
        now=epoch(2023, 7, 1, 0),
    )
    return inp, goals, on_target


def test_zero_weights_leave_the_ratings_as_they_were():
    inp, goals, on_target = _league()
    plain = market_ratings.run(inp)
    observed = market_ratings.run(replace(inp, observed=(goals, on_target)))
    assert np.array_equal(plain.expected_goals, observed.expected_goals, equal_nan=True)


def test_a_goal_weight_of_one_fits_the_goals_and_not_the_prices():
    inp, goals, on_target = _league()
    config = replace(market_ratings.RatingsConfig(), goal_weight=1.0)
    other = {name: np.roll(p, 7, axis=0) for name, p in inp.closing.items()}
    by_goals = market_ratings.run(replace(inp, observed=(goals, on_target)), config)
    other_prices = market_ratings.run(
        replace(inp, closing=other, observed=(goals, on_target)), config
    )
    np.testing.assert_allclose(by_goals.expected_goals, other_prices.expected_goals, rtol=1e-9)
    assert not np.allclose(
        by_goals.expected_goals[-50:], market_ratings.run(inp).expected_goals[-50:]
    )
