"""Settlement through the service: results, voids, closing odds and CLV, idempotence, speed path."""

from datetime import timedelta

import pytest

from clock import utcnow
from models import Pick
from services.record import settling
from tests import factories

CLOSING = [
    ("pinnacle", "1x2", "home", 1.8, True),
    ("pinnacle", "1x2", "draw", 3.9, True),
    ("pinnacle", "1x2", "away", 4.6, True),
    ("market-average", "ou25", "over", 1.9, True),
    ("market-average", "ou25", "under", 1.9, True),
]


def _fresh(pick):
    return Pick.get_by_id(pick.id)


def test_finished_matches_settle_with_profit_closing_odds_and_clv(ctx):
    match = factories.match(goals=(2, 1), odds=CLOSING)
    won = factories.pick(match, "1x2", "home", odds=2.1)
    lost = factories.pick(match, "ou25", "under", odds=2.0)
    counts = settling.settle_pending(factories.settings())
    assert (counts["won"], counts["lost"], counts["void"], counts["pending"]) == (1, 1, 0, 0)
    won, lost = _fresh(won), _fresh(lost)
    assert (won.status, won.profit) == ("won", pytest.approx(1.1))
    assert (won.closing_odds, won.closing_bookmaker) == (1.8, "pinnacle")
    assert won.clv == pytest.approx(2.1 / 1.8 - 1)  # 0.1667: we beat the close
    assert (lost.status, lost.profit, lost.closing_bookmaker) == ("lost", -1.0, "market-average")
    assert lost.clv == pytest.approx(2.0 / 1.9 - 1)
    assert won.settled_at is not None


def test_cancelled_and_long_postponed_matches_void_their_picks(ctx):
    now = utcnow()
    cancelled = factories.match("C1", "C2", status="cancelled", kickoff=now - timedelta(days=1))
    long_ago = factories.match("P1", "P2", status="postponed", kickoff=now - timedelta(hours=49))
    recent = factories.match("Q1", "Q2", status="postponed", kickoff=now - timedelta(hours=47))
    picks = [factories.pick(m) for m in (cancelled, long_ago, recent)]
    settling.settle_pending(factories.settings(), now=now)
    assert [(_fresh(p).status, _fresh(p).profit) for p in picks] == [
        ("void", 0.0),
        ("void", 0.0),
        ("pending", None),
    ]
    assert _fresh(picks[0]).clv is None  # no closing odds, no CLV


def test_matches_not_yet_played_stay_pending(ctx):
    later = factories.match("F1", "F2", status="scheduled", kickoff=utcnow() + timedelta(days=2))
    started = factories.match("S1", "S2", status="scheduled", kickoff=utcnow() - timedelta(hours=1))
    picks = [factories.pick(later), factories.pick(started)]
    assert settling.settle_pending(factories.settings())["examined"] == 1
    assert [_fresh(p).status for p in picks] == ["pending", "pending"]


def test_settling_is_idempotent(ctx):
    match = factories.match(goals=(0, 0), odds=CLOSING)
    pick = factories.pick(match, "1x2", "draw", odds=3.5)
    first = settling.settle_pending(factories.settings())
    before = _fresh(pick).__data__
    second = settling.settle_pending(factories.settings())
    assert (first["examined"], second["examined"]) == (1, 0)
    assert _fresh(pick).__data__ == before and before["profit"] == pytest.approx(2.5)


def test_the_run_only_looks_back_last_days(ctx):
    now = utcnow()
    old = factories.pick(factories.match("O1", "O2", kickoff=now - timedelta(days=10)))
    new = factories.pick(factories.match("N1", "N2", kickoff=now - timedelta(days=2)))
    result = settling.run(7, factories.settings(), now=now)
    assert (result["last_days"], result["examined"]) == (7, 1)
    assert (_fresh(old).status, _fresh(new).status) == ("pending", "won")


#: The close of a match whose totals close at 2.5 goals ("ou25", 5/11 over once de-margined
#: proportionally) and at 3.5 goals (evenly, and unlike the 2.5 line).
TOTALS_CLOSE = [
    ("pinnacle", "ou25", "over", 2.10, True, 2.5),
    ("pinnacle", "ou25", "under", 1.75, True, 2.5),
    ("pinnacle", "ou", "over", 1.95, True, 3.5),
    ("pinnacle", "ou", "under", 1.95, True, 3.5),
]


def test_an_over_under_pick_off_the_closing_lines_is_valued_from_the_nearest(ctx):
    """Over 2.75 goals at 2.30, closing at 2.5 (stored as "ou25") and 3.5 only, 2.5 nearer.

    By hand: proportionally de-margined, over 2.5 closes at 5/11. The Poisson total m with
    P(T ≥ 3) = 5/11 is 2.49361, and P(T = 3) = e^−m m³/3! = 0.213488 (a Dixon-Coles score
    matrix gives the Poisson total at and above 2.5 goals, whatever its split). Over 2.75 is
    half at 2.5 (won from 3 goals) and half at 3.0 (won from 4, pushed at 3), lost up to 2:
    W = ½·5/11 + ½·(5/11 − 0.213488) = 0.347802, L = 6/11, so its fair probability is
    W ÷ (W + L) = 0.389364, and its fair closing EV 2.30 × 0.389364 − 1 = −0.104463. With
    the close's 1x2 too (which splits the goals between the sides) it is the same."""
    settings = {**factories.settings(), "MARGIN_METHOD": "proportional"}
    one_x_two = [
        ("pinnacle", "1x2", "home", 1.7, True),
        ("pinnacle", "1x2", "draw", 3.8, True),
        ("pinnacle", "1x2", "away", 5.5, True),
    ]
    totals = factories.match("T1", "T2", goals=(2, 1), odds=TOTALS_CLOSE)
    both = factories.match("B1", "B2", goals=(2, 1), odds=TOTALS_CLOSE + one_x_two)
    picks = [factories.pick(m, "ou", "over", odds=2.30, line=2.75) for m in (totals, both)]
    settling.settle_pending(settings)
    for pick in map(_fresh, picks):
        assert (pick.status, pick.profit) == ("half-won", pytest.approx(0.65))
        assert pick.closing_probability == pytest.approx(0.389364, abs=2e-6)
        assert pick.odds * pick.closing_probability - 1 == pytest.approx(-0.104463, abs=5e-6)
        # No close at 2.75 itself: no closing price, CLV or closing line to name.
        assert (pick.closing_odds, pick.clv, pick.closing_line) == (None, None, None)


def test_an_over_under_pick_at_a_closing_line_takes_its_price(ctx):
    """Under 3.5 at 1.90 where the close quotes 3.5: its closing price and fair probability
    there (½ each), whatever the 2.5 line says."""
    match = factories.match(goals=(2, 1), odds=TOTALS_CLOSE)
    pick = factories.pick(match, "ou", "under", odds=1.90, line=3.5)
    settling.settle_pending({**factories.settings(), "MARGIN_METHOD": "proportional"})
    pick = _fresh(pick)
    assert (pick.status, pick.closing_odds, pick.closing_bookmaker) == ("won", 1.95, "pinnacle")
    assert pick.closing_probability == pytest.approx(0.5)
    assert pick.clv == pytest.approx(1.90 / 1.95 - 1)
