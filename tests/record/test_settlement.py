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
