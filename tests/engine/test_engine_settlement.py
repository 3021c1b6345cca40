"""Settlement and closing-line value (engine.betting.settlement)."""

import itertools
from decimal import Decimal

import numpy as np
import pytest

from engine.betting.settlement import clv, settle, winning_selection
from engine.markets import MARKETS, outcome

NAN = np.nan
HOUR = 3600
NOW = 1_700_000_000

# market, selection, odds, stake, match status, home goals, away goals, hours since kick-off,
# then the expected status and profit.
CASES = [
    ("1x2", "home", 2.5, 2.0, "finished", 2, 1, 3, "won", 3.0),  # 2 × (2.5 − 1)
    ("1x2", "draw", 3.4, 1.0, "finished", 1, 1, 3, "won", 2.4),
    ("1x2", "away", 4.0, 2.0, "finished", 0, 0, 3, "lost", -2.0),
    ("ou25", "over", 1.9, 1.0, "finished", 2, 1, 3, "won", 0.9),  # 3 goals > 2.5
    ("ou25", "over", 1.9, 1.0, "finished", 1, 1, 3, "lost", -1.0),
    ("ou25", "under", 2.05, 1.0, "finished", 1, 1, 3, "won", 1.05),
    ("btts", "yes", 1.8, 1.5, "finished", 1, 0, 3, "lost", -1.5),
    ("btts", "no", 2.0, 1.0, "finished", 0, 0, 3, "won", 1.0),
    ("1x2", "home", 2.5, 1.0, "cancelled", None, None, -20, "void", 0.0),
    ("1x2", "home", 2.5, 1.0, "postponed", None, None, 49, "void", 0.0),
    ("1x2", "home", 2.5, 1.0, "postponed", None, None, 47, "pending", NAN),
    ("1x2", "home", 2.5, 1.0, "finished", None, None, 3, "pending", NAN),  # no score yet
    ("1x2", "home", 2.5, 1.0, "live", 1, 0, 1, "pending", NAN),
    ("1x2", "home", 2.5, 1.0, "scheduled", None, None, -5, "pending", NAN),
]


def run_cases(cases, now=NOW):
    columns = list(zip(*cases, strict=True))
    kickoff = now - np.array(columns[7]) * HOUR
    return settle(*columns[:7], kickoff=kickoff, now=now)


def test_settle_hand_worked_cases():
    status, profit = run_cases(CASES)
    assert status.tolist() == [case[8] for case in CASES]
    assert profit == pytest.approx([case[9] for case in CASES], nan_ok=True)


def test_postponement_window_is_configurable():
    case = [("1x2", "home", 2.5, 1.0, "postponed", None, None, 30, "void", 0.0)]
    columns = list(zip(*case, strict=True))
    kickoff = NOW - 30 * HOUR
    assert settle(*columns[:7], kickoff=kickoff, now=NOW)[0].tolist() == ["pending"]
    status, _ = settle(*columns[:7], kickoff=kickoff, now=NOW, void_after_hours=24)
    assert status.tolist() == ["void"]


def test_settle_is_idempotent():
    first = run_cases(CASES)
    second = run_cases(CASES)
    assert first[0].tolist() == second[0].tolist()
    np.testing.assert_array_equal(first[1], second[1])


def test_winning_selection_agrees_with_markets_outcome():
    scores = list(itertools.product(range(6), range(6)))
    home, away = np.array(scores).T
    for market in MARKETS:
        expected = [outcome(market, h, a) for h, a in scores]
        assert winning_selection([market] * len(scores), home, away).tolist() == expected


def test_every_selection_settles_like_markets_outcome():
    rows = [
        (market, selection, 2.0, 1.0, "finished", h, a, 3)
        for market, selections in MARKETS.items()
        for selection in selections
        for h, a in itertools.product(range(4), range(4))
    ]
    status, profit = run_cases([(*row, None, None) for row in rows])
    expected = ["won" if outcome(r[0], r[5], r[6]) == r[1] else "lost" for r in rows]
    assert status.tolist() == expected
    assert profit.tolist() == [1.0 if s == "won" else -1.0 for s in expected]


def test_unknown_market_or_selection_is_rejected():
    with pytest.raises(ValueError, match="ou25/home"):
        settle(["ou25"], ["home"], [2.0], [1.0], ["finished"], [1], [0], [0], NOW)
    with pytest.raises(ValueError, match="corners/over"):
        settle(["corners"], ["over"], [2.0], [1.0], ["finished"], [1], [0], [0], NOW)


def test_clv_hand_worked():
    # Taken at 2.2, closed at 2.0: 2.2 / 2.0 − 1 = +10 %; taken at 1.8 against 2.0: −10 %.
    assert clv([2.2, 1.8], [2.0, 2.0]) == pytest.approx([0.1, -0.1])
    result = clv([2.2, 2.2, 2.2], [NAN, 0.0, 1.0])
    assert np.isnan(result).all()


def test_a_finished_match_with_one_score_missing_settles_nothing():
    # A half-imported result (one side's goals unknown) is no result: every pick on it stays
    # pending, never lost, whatever the market.
    cases = [
        ("1x2", "home", 2.5, 1.0, "finished", 2, None, 3, "pending", NAN),
        ("1x2", "away", 3.1, 1.0, "finished", None, 1, 3, "pending", NAN),
        ("ou25", "under", 1.9, 1.0, "finished", 0, None, 3, "pending", NAN),
        ("btts", "no", 2.0, 1.0, "finished", None, 0, 3, "pending", NAN),
        ("1x2", "home", 2.5, 1.0, "finished", 2, 0, 3, "won", 1.5),  # both scores: settled
    ]
    status, profit = run_cases(cases)
    assert status.tolist() == [case[8] for case in cases]
    assert profit == pytest.approx([case[9] for case in cases], nan_ok=True)


def test_a_postponed_match_voids_its_picks_only_after_48_hours():
    # Exactly 48 h after the original kick-off the match may still be played: pending. One
    # second later the pick is void.
    row = ("1x2", "home", 2.5, 1.0, "postponed", None, None)
    columns = list(zip(*[row, row], strict=True))
    kickoff = np.array([NOW - 48 * HOUR, NOW - 48 * HOUR - 1])
    status, profit = settle(*columns, kickoff=kickoff, now=NOW)
    assert status.tolist() == ["pending", "void"]
    assert np.isnan(profit[0]) and profit[1] == 0.0


def test_no_winner_without_a_score_or_for_an_unknown_market():
    # An empty string, never a selection: a pick can only be won against a final score of a
    # market the engine knows.
    winner = winning_selection(
        ["1x2", "ou25", "btts", "corners"], [NAN, 1, None, 2], [0, NAN, 0, 1]
    )
    assert winner.tolist() == ["", "", "", ""]


def test_clv_with_a_price_missing_as_none():
    # None where a price is missing (as a database column gives it) reads as NaN: no CLV.
    result = clv([2.2, None, 2.2], [None, 2.0, 2.0])
    assert result.dtype == float
    assert result == pytest.approx([NAN, NAN, 0.1], nan_ok=True)


def test_odds_and_stakes_may_be_exact_decimals():
    # Decimal, as the ledger's decimal strings read back: settled at their float values.
    status, profit = settle(
        ["1x2", "1x2"],
        ["home", "away"],
        [Decimal("2.5"), Decimal("3.1")],
        [Decimal("2"), Decimal("1")],
        ["finished", "finished"],
        [2, 2],
        [1, 1],
        [NOW - 3 * HOUR] * 2,
        NOW,
    )
    assert status.tolist() == ["won", "lost"] and profit.tolist() == [3.0, -1.0]


def test_every_unknown_market_and_selection_is_named_once():
    rows = [("ou25", "home"), ("corners", "over"), ("1x2", "home"), ("ou25", "home")]
    markets, selections = zip(*rows, strict=True)
    with pytest.raises(ValueError, match=r"^unknown market/selection: corners/over, ou25/home$"):
        settle(markets, selections, [2.0] * 4, [1.0] * 4, ["finished"] * 4, [1] * 4, [0] * 4,
               [0] * 4, NOW)  # fmt: skip
