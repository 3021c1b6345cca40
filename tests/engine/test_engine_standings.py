"""The league table from earlier results, what is at stake for each side, and the goal rates it
moves in the market-implied ratings."""

from dataclasses import replace

import numpy as np
import pytest

from engine.model import market_ratings, standings, timeline
from engine.model.scores import market_probabilities, score_matrix
from tests.helpers import epoch, round_robin_rounds, schedule

#: Four sides, one cut after the first place and one before the last: the champion, the middle
#: (places 2 and 3) and the relegated side.
CUTS = standings.zone_cuts(4, top=(1,), bottom=(1,))


def test_zone_cuts_of_a_twenty_side_table():
    # The title ends at 1, the Champions League at 4, the other European places at 6, and
    # relegation starts after 17: five zones.
    assert standings.zone_cuts(20).tolist() == [1, 4, 6, 17]
    assert standings.zone(np.arange(1, 21), standings.zone_cuts(20)).tolist() == (
        [0] + [1] * 3 + [2] * 2 + [3] * 11 + [4] * 3
    )
    assert CUTS.tolist() == [1, 3]


def test_champion_safe_and_still_playing_for_something_by_hand():
    # One match left each. A (15) cannot be caught: champion. B (7) cannot reach 15 and C
    # reaches 5 at most: B is second whatever happens, in the middle zone. C (2) can be passed
    # by D (0 + 3): third or fourth, still at stake; D can reach third: at stake too.
    best, worst = standings.reachable_places([15, 7, 2, 0], [1, 1, 1, 1])
    assert best.tolist() == [1, 2, 3, 3]
    assert worst.tolist() == [1, 2, 4, 4]
    assert standings.dead([15, 7, 2, 0], [1, 1, 1, 1], CUTS).tolist() == [True, True, False, False]


def test_relegated_with_matches_left_and_alive_on_a_tie():
    # D (1) with two left reaches 7, short of C's 8: relegated with matches to play. With C on
    # 7 instead, D can draw level and pass it on the tie-breakers: both still at stake.
    assert standings.dead([20, 12, 8, 1], [2, 2, 2, 2], CUTS).tolist() == [True, True, True, True]
    assert standings.dead([20, 12, 7, 1], [2, 2, 2, 2], CUTS).tolist() == [
        True,
        True,
        False,
        False,
    ]


def test_a_slower_pace_reads_a_side_as_settled_before_the_mathematics_does():
    # D (0) with two left could reach 6 > C's 5 at 3 points a match; at 2 a match only 4.
    points, left = [20, 12, 5, 0], [2, 2, 2, 2]
    assert standings.dead(points, left, CUTS).tolist() == [True, True, False, False]
    assert standings.dead(points, left, CUTS, pace=2).tolist() == [True, True, True, True]


def test_table_by_hand():
    points, played = standings.table([0, 1, 2], [1, 2, 0], [2, 1, 3], [0, 1, 0], 4)
    # 0 beats 1 2-0 at home and loses 3-0 at 2; 1 draws 1-1 with 2; side 3 has not played.
    assert points.tolist() == [3, 1, 4, 0]
    assert played.tolist() == [2, 2, 2, 0]


def _season(results):
    """Four sides 0-3 in a double round robin, a round a week from 2022-08-06, each match
    ending as ``results(home, away)`` says (home goals, away goals)."""
    rows = []
    for week, rnd in enumerate(round_robin_rounds(range(4))):
        for k, (h, a) in enumerate(rnd):
            kickoff = epoch(2022, 8, 6, 15) + week * 7 * 86_400 + k * 3600
            rows.append((kickoff, h, a, *results(h, a)))
    kickoff, home, away, hg, ag = (np.array(col) for col in zip(*rows, strict=True))
    return kickoff, home, away, hg.astype(float), ag.astype(float)


def _stakes(kickoff, home, away, hg, ag, competition=None):
    """What is at stake at each match's weekly cut-off, with the four sides' zones."""
    cutoff = timeline.cutoff(kickoff, kickoff.max() + 1)
    competition = np.zeros(len(kickoff), dtype=int) if competition is None else competition
    return standings.at_stake(
        competition, kickoff, cutoff, home, away, hg, ag, top=(1,), bottom=(1,)
    )


def _results(h, a):
    """Side 0 wins every match, 3 loses every one, 1 and 2 draw both their meetings."""
    if {h, a} == {1, 2}:
        return (1, 1)
    return (1, 0) if h < a else (0, 1)


def _dead_sides(stakes, home, away, rows):
    """{side: dead} over ``rows``."""
    sides = np.stack([home[rows], away[rows]], axis=1).ravel().tolist()
    return dict(zip(sides, stakes.dead[rows].ravel().tolist(), strict=True))


def test_at_stake_walks_forward_through_a_season():
    kickoff, home, away, hg, ag = _season(_results)
    stakes = _stakes(kickoff, home, away, hg, ag)
    rnd = np.repeat(np.arange(6), 2)
    # Three rounds in (each pair met once): 9, 4, 4, 0 with three left; nothing settled.
    assert not stakes.dead[rnd <= 3].any()
    # Four in: 12, 5, 5, 0 with two left. Nobody reaches 12: side 0 is champion. Side 3 can
    # still reach 6, above the 5 of sides 1 and 2: everyone else still plays for something.
    assert _dead_sides(stakes, home, away, rnd == 4) == {0: True, 1: False, 2: False, 3: False}
    # Five in: 15, 8, 5, 0 with one left. Side 3 reaches 3 at most: relegated. Side 1 cannot
    # reach 15 nor fall below 2 (8 + 0 against its 5 + 3 = 8 is a tie, third at worst): second
    # or third, the middle zone, as is side 2 (third or second). All settled.
    assert (stakes.left[rnd == 5] == 1).all()
    assert _dead_sides(stakes, home, away, rnd == 5) == {0: True, 1: True, 2: True, 3: True}
    # A later result never changes an earlier row's table.
    changed = hg.copy()
    changed[rnd == 5] = 9
    assert np.array_equal(_stakes(kickoff, home, away, changed, ag).dead, stakes.dead)


def test_at_stake_counts_only_results_before_the_cutoff_and_of_its_own_table():
    kickoff, home, away, hg, ag = _season(_results)
    rnd = np.repeat(np.arange(6), 2)
    # Round 5's table counts five rounds: each side has 1 left (its own match).
    assert (_stakes(kickoff, home, away, hg, ag).left[rnd == 5] == 1).all()
    # Unplayed earlier matches (no goals) are not results: their sides have them still to play.
    unplayed = hg.copy()
    unplayed[rnd == 4] = np.nan
    assert (_stakes(kickoff, home, away, unplayed, ag).left[rnd == 5] == 2).all()
    # Another competition's results are not this table's: the second leg as a table of its
    # own starts from nothing, with 2 · 3 matches left for each side.
    split = (rnd >= 3).astype(int)
    alone = _stakes(kickoff, home, away, hg, ag, split)
    assert not alone.dead.any()
    assert (alone.left[rnd == 3] == 6).all()


def test_goal_factors_by_hand():
    stakes = standings.Stakes(
        dead=np.array([[False, False], [True, False], [False, True], [True, True]]),
        left=np.array([[10, 10], [3, 3], [8, 9], [9, 9]]),
    )
    factors = standings.goal_factors(stakes, -0.05, 0.10, late=0.03, late_left=8)
    expected = np.array(
        [
            [1.0, 1.0],
            [0.95 * 1.03, 1.10 * 1.03],
            [1.10 * 1.03, 0.95 * 1.03],
            [0.95 * 1.10, 0.95 * 1.10],
        ]
    )
    np.testing.assert_allclose(factors, expected)


def test_learned_effects_by_hand():
    # Rows at kick-offs 1..4; the row at 4 (cut-off 4) sees rows 1-3. Row 1: nobody dead,
    # residuals 0.1 and 0.0 (alive mean 0.05). Row 2: home dead, own 0.05, opponent 0.25.
    # Row 3: away dead, own 0.15, opponent 0.35. Own mean 0.1, opponent 0.3, less 0.05.
    stakes = standings.Stakes(
        dead=np.array([[False, False], [True, False], [False, True], [True, False]]),
        left=np.ones((4, 2), dtype=int),
    )
    residual = np.array([[0.1, 0.0], [0.05, 0.25], [0.35, 0.15], [np.nan, np.nan]])
    kickoff = np.array([1, 2, 3, 4])
    attack, defence = standings.learned_effects(stakes, residual, kickoff, kickoff, min_sides=2)
    np.testing.assert_allclose(attack[3], np.expm1(0.05))
    np.testing.assert_allclose(defence[3], np.expm1(0.25))
    # Fewer than two dead sides seen before the others' cut-offs: no effect.
    assert (attack[:3] == 0).all() and (defence[:3] == 0).all()


def _league():
    """Six sides over two seasons of made-up prices, goals drawn at the priced rates, each
    season its own table; ``now`` after the last match."""
    rng = np.random.default_rng(3)
    rows = schedule({2: list(range(200, 206))})
    kickoff, group, home, away = (np.array(col, dtype=np.int64) for col in zip(*rows, strict=True))
    strength = {team: rng.normal(0, 0.6) for team in range(200, 206)}
    gap = np.array([strength[h] - strength[a] for h, a in zip(home, away, strict=True)])
    rates = np.exp(np.column_stack([0.3 + gap / 2, 0.1 - gap / 2]))
    probs = market_probabilities(score_matrix(rates[:, 0], rates[:, 1], -0.04))
    goals = rng.poisson(rates).astype(float)
    inp = market_ratings.RatingsInput(
        kickoff=kickoff,
        group=group,
        home=home,
        away=away,
        closing={"1x2": probs["1x2"], "ou25": probs["ou25"]},
        now=epoch(2023, 7, 1, 0),
        observed=(goals, np.full_like(goals, np.nan)),
        competition=(kickoff >= epoch(2022, 7, 1, 0)).astype(int),
    )
    return inp, goals


def test_dead_sides_move_only_their_matches_goal_rates():
    inp, goals = _league()
    plain = market_ratings.run(inp)
    config = replace(market_ratings.RatingsConfig(), dead_attack=-0.05, dead_defence=0.1)
    moved = market_ratings.run(inp, config)
    cutoff = moved.fitted_at
    stakes = standings.at_stake(
        inp.competition, inp.kickoff, cutoff, inp.home, inp.away, goals[:, 0], goals[:, 1]
    )
    assert stakes.dead.any() and not stakes.dead.all()
    expected = plain.expected_goals * standings.goal_factors(stakes, -0.05, 0.1)
    np.testing.assert_allclose(moved.expected_goals, expected, rtol=1e-12)
    alive = ~stakes.dead.any(axis=1)
    assert np.array_equal(moved.probabilities["1x2"][alive], plain.probabilities["1x2"][alive])
    assert not np.allclose(moved.probabilities["1x2"][~alive], plain.probabilities["1x2"][~alive])
    # The fits themselves are the same: only the forecasts' rates move.
    assert np.array_equal(moved.strengths, plain.strengths, equal_nan=True)


def test_stakes_need_the_table():
    inp, _ = _league()
    config = replace(market_ratings.RatingsConfig(), dead_defence=0.1)
    with pytest.raises(ValueError, match="competition"):
        market_ratings.run(replace(inp, competition=None), config)
    learned = replace(market_ratings.RatingsConfig(), dead_learned=True)
    with pytest.raises(ValueError, match="every row"):
        market_ratings.run(inp, learned, rows=[5])
    assert np.isfinite(market_ratings.run(inp, learned).expected_goals).all()
