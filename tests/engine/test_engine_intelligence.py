"""Tests of match intelligence on a tiny hand-made history."""

import json
import math

import numpy as np
import pytest

from engine.model import intelligence

DAY = 86_400
START = 1_700_000_000
A, B, C, D, E = 1, 2, 3, 4, 5
NAN = math.nan

#: (day, home, away, home goals, away goals), deliberately not in kick-off order.
HISTORY = [
    (10, A, B, NAN, NAN),  # 0: the fixture being previewed, no result yet
    (0, A, B, 2, 1),  # 1
    (7, B, A, 3, 0),  # 2
    (3, C, A, 0, 0),  # 3
    (10, C, D, 2, 1),  # 4: same instant as rows 0 and 7
    (5, A, B, NAN, NAN),  # 5: postponed, never played
    (12, D, C, 0, 2),  # 6
    (10, D, E, 2, 0),  # 7: D again at the same instant as row 4, to prove it is not seen
]


def _columns(rows=HISTORY):
    """The history as compute()'s arrays."""
    day, home, away, home_goals, away_goals = zip(*rows, strict=True)
    return (
        START + np.array(day, dtype=np.int64) * DAY,
        np.array(home, dtype=np.int64),
        np.array(away, dtype=np.int64),
        np.array(home_goals, dtype=float),
        np.array(away_goals, dtype=float),
    )


def test_form_points_averages_and_rest_days():
    preview = intelligence.compute(*_columns())[0]
    assert preview["home"] == {
        "form": ["L", "D", "W"],
        "form_points": 4,
        "goals_for": pytest.approx(2 / 3),
        "goals_against": pytest.approx(4 / 3),
        "matches": 3,
        "rest_days": 3.0,
    }
    assert preview["away"] == {
        "form": ["W", "L"],
        "form_points": 3,
        "goals_for": 2.0,
        "goals_against": 1.0,
        "matches": 2,
        "rest_days": 3.0,
    }


def test_head_to_head_is_counted_for_the_rows_home_team():
    h2h = intelligence.compute(*_columns())[0]["head_to_head"]
    assert h2h["matches"] == [
        {"kickoff": START + 7 * DAY, "home_id": B, "away_id": A, "home_goals": 3, "away_goals": 0},
        {"kickoff": START, "home_id": A, "away_id": B, "home_goals": 2, "away_goals": 1},
    ]
    # A (home today) won the first meeting, B (away today) the second; the postponed one is out.
    assert (h2h["home_wins"], h2h["draws"], h2h["away_wins"]) == (1, 0, 1)
    reverse = intelligence.compute(*_columns([(20, B, A, NAN, NAN), *HISTORY[1:3]]))[0]
    assert reverse["head_to_head"]["home_wins"] == 1
    assert reverse["head_to_head"]["away_wins"] == 1
    # D hosts C after losing at C: that win belongs to the away side of row 6.
    later = intelligence.compute(*_columns())[6]["head_to_head"]
    assert (later["home_wins"], later["draws"], later["away_wins"]) == (0, 0, 1)


def test_nothing_from_the_same_kickoff_or_the_future():
    answers = intelligence.compute(*_columns())
    # Row 7 kicks off with row 4: D has no earlier result at all.
    assert answers[7]["home"] == {
        "form": [],
        "form_points": 0,
        "goals_for": None,
        "goals_against": None,
        "matches": 0,
        "rest_days": None,
    }
    assert answers[4]["away"]["matches"] == 0
    assert answers[4]["home"]["form"] == ["D"] and answers[4]["home"]["rest_days"] == 7.0
    # The first match ever sees nothing, though later rows share its teams.
    assert answers[1]["home"]["matches"] == answers[1]["away"]["matches"] == 0
    assert answers[1]["head_to_head"]["matches"] == []
    # Row 6 sees both of D's matches at day 10 and C's at days 3 and 10.
    assert answers[6]["home"]["matches"] == 2 and answers[6]["home"]["rest_days"] == 2.0
    assert answers[6]["away"]["form"] == ["W", "D"]


def test_windows_targets_and_plain_values():
    columns = _columns()
    short = intelligence.compute(*columns, targets=[6, 0], form_matches=2, h2h_matches=1)
    assert len(short) == 2
    assert short[1]["home"]["form"] == ["L", "D"]
    assert short[1]["home"]["goals_for"] == 0.0
    assert [m["home_id"] for m in short[1]["head_to_head"]["matches"]] == [B]
    assert short[0]["away"]["form"] == ["W", "D"]
    # JSON-ready: plain Python values only.
    text = json.dumps(short)
    assert json.loads(text) == short
    preview = short[1]
    assert type(preview["home"]["form_points"]) is int
    assert type(preview["head_to_head"]["matches"][0]["kickoff"]) is int
    assert type(preview["head_to_head"]["matches"][0]["home_goals"]) is int


def test_input_checks():
    kickoff, home, away, home_goals, away_goals = _columns()
    with pytest.raises(ValueError):
        intelligence.compute(kickoff, home, away[:-1], home_goals, away_goals)
    with pytest.raises(IndexError):
        intelligence.compute(kickoff, home, away, home_goals, away_goals, targets=[99])
    assert intelligence.compute([], [], [], [], []) == []


def test_a_large_history_is_fast_and_order_independent():
    rng = np.random.default_rng(3)
    size = 12_000
    # Distinct kick-offs, so the order of a team's results is the same however rows are given.
    kickoff = START + np.arange(size, dtype=np.int64) * 3_600
    home = rng.integers(0, 200, size)
    away = (home + rng.integers(1, 200, size)) % 200
    home_goals = rng.poisson(1.5, size).astype(float)
    away_goals = rng.poisson(1.1, size).astype(float)
    home_goals[-500:] = np.nan
    away_goals[-500:] = np.nan
    answers = intelligence.compute(kickoff, home, away, home_goals, away_goals)
    shuffle = rng.permutation(size)
    shuffled = intelligence.compute(
        kickoff[shuffle], home[shuffle], away[shuffle], home_goals[shuffle], away_goals[shuffle]
    )
    for position in range(0, size, 997):
        original = answers[shuffle[position]]
        assert shuffled[position]["home"] == original["home"]
        assert shuffled[position]["away"] == original["away"]
