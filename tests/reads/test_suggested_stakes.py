"""Suggested stakes in the answers: on open picks, null on sealed ones, sized walk-forward from
the settled picks known when each was made; and the track record's figures of what they made,
beside flat stakes, in the Data API and on the page."""

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from tests import factories
from tests.helpers import ok

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
#: Stakes from two settled picks of a rating and price band on, capped at 5 % of the bankroll.
RULE = {"STAKE_MIN_SETTLED": 2, "STAKE_CAP": 0.05, "CLOCK": lambda: NOW}
#: A quarter of Kelly at 0.5 and 2.5: (1.25 − 1) / 1.5 / 4.
STAKE = 0.25 / 6


@pytest.fixture
def staked(make_app):
    """An app whose stake rule needs two settled picks, and its client."""
    app = make_app(**RULE)
    return app, app.test_client()


def settled_record():
    """Four live B picks at 2.5 (probability 0.5) two days apart, won, lost, won, lost: the first
    two are made with fewer than two results known (stake 0), the last two with two and three."""
    for day in range(4):
        kickoff = NOW - timedelta(days=20 - 2 * day)
        won = day % 2 == 0
        factories.pick(
            factories.match(f"H{day}", f"A{day}", kickoff=kickoff),
            odds=2.5,
            probability=0.5,
            rating="B",
            is_live=True,
            created_at=kickoff - timedelta(hours=1),
            status="won" if won else "lost",
            profit=1.5 if won else -1.0,
        )


def test_an_open_pick_carries_its_stake_and_a_sealed_one_hides_it(staked):
    app, client = staked
    with app.app_context():
        settled_record()
        coming = factories.match(
            "Gamma", "Delta", kickoff=NOW + timedelta(days=1), status="scheduled"
        )
        factories.pick(coming, odds=2.5, probability=0.5, rating="A", created_at=NOW)
        factories.pick(
            coming, "ou25", "over", odds=2.5, probability=0.5, rating="B", created_at=NOW
        )
        thin = factories.match("Eps", "Zeta", kickoff=NOW + timedelta(days=1), status="scheduled")
        factories.pick(thin, odds=2.5, probability=0.5, rating="C", created_at=NOW)
        people = factories.people()
    path = f"/api/matches/{coming.id}"
    for kind in (None, "free"):
        headers = people[kind][1] if kind else {}
        picks = {p["market"]: p for p in ok(client.get(path, headers=headers))["picks"]}
        assert picks["1x2"]["locked"] and picks["1x2"]["suggestedStake"] is None
        # The whole match is locked by its A pick: its B pick too.
        assert picks["ou25"]["suggestedStake"] is None
    for kind in ("pro", "admin"):
        picks = {p["market"]: p for p in ok(client.get(path, headers=people[kind][1]))["picks"]}
        # Four settled B picks at 2.5 are known, none rated A: the A pick's evidence is thin.
        assert picks["1x2"]["suggestedStake"] == 0.0
        assert picks["ou25"]["suggestedStake"] == pytest.approx(STAKE, abs=1e-6)
        assert picks["1x2"]["stake"] == 1.0
    # An open match: its C pick is public, with no settled C pick behind it: 0.
    (pick,) = ok(client.get(f"/api/matches/{thin.id}"))["picks"]
    assert (pick["locked"], pick["suggestedStake"]) == (False, 0.0)
    # The past picks, public, each sized by what was known when it was made.
    record = ok(client.get(f"/api/picks/today?date={(NOW - timedelta(days=14)).date()}"))
    assert [p["suggestedStake"] for p in record["items"]] == [pytest.approx(STAKE, abs=1e-6)]
    with app.app_context():
        coming.kickoff_at = NOW - timedelta(minutes=1)  # kicked off: the A pick is public
        coming.save()
    picks = {p["market"]: p for p in ok(client.get(path))["picks"]}
    assert picks["ou25"]["suggestedStake"] == pytest.approx(STAKE, abs=1e-6)


def test_the_track_record_says_what_the_stakes_made_beside_flat_ones(staked):
    app, client = staked
    with app.app_context():
        settled_record()
        headers = factories.people()["pro"][1]
    stakes = ok(client.get("/api/v1/data/track-record", headers=headers))["live"]["stakes"]
    assert (stakes["picks"], stakes["staked"], stakes["flatStake"]) == (4, 2, 0.05)
    assert stakes["meanStake"] == pytest.approx(STAKE, abs=1e-6)
    # Suggested: 0, 0, then STAKE × 1.5 won and STAKE lost; flat: 5 % on each.
    suggested = np.array([0.0, 0.0, STAKE * 1.5, -STAKE])
    flat = np.array([0.075, -0.05, 0.075, -0.05])
    for name, returns in (("suggested", suggested), ("flat", flat)):
        figures = stakes[name]
        assert figures["meanReturn"] == pytest.approx(returns.mean(), abs=1e-6)
        error = returns.std(ddof=1) / 2
        assert figures["meanReturnStdError"] == pytest.approx(error, abs=1e-6)
        assert figures["growth"] == pytest.approx(np.prod(1 + returns) - 1, abs=1e-6)
    assert stakes["suggested"]["growth"] == pytest.approx(1.0625 * (1 - 0.25 / 6) - 1, abs=1e-6)
    page = client.get("/track-record", headers={"Accept": "text/html"}).get_data(as_text=True)
    live = page.split("<h2>Live record</h2>")[1].split("<h2>Backfilled record")[0]
    assert "Suggested stakes" in live and "2 given a stake of 4.17% on average" in live
    assert "not to protect it" in live
