"""The stakes of stored picks (``services.market.staking``): the evidence they are sized from
(every decided pick not set apart, known a day after its kick-off), each pick's moment (when it
was made, or its kick-off if earlier), and a pick sized only from what was known at its
moment."""

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from services.market import staking
from tests import factories
from tests.helpers import counted_queries

T0 = datetime(2026, 4, 1, 12, 0, tzinfo=UTC)
DAY = 86_400
#: Stakes from two settled picks of a rating and price band on.
RULE = {
    "STAKE_KELLY_FRACTION": 0.25,
    "STAKE_CAP": 0.05,
    "RATING_B_QUALITY": 0.6,
    "STAKE_MIN_SETTLED": 2,
}
#: A quarter of Kelly at 0.5 and 2.5: (1.25 − 1) / 1.5 / 4.
STAKE = 0.25 / 6


def settled(home, kickoff, status, odds=2.5, rating="B", **fields):
    match = factories.match(home, f"{home} Away", kickoff=kickoff)
    return factories.pick(match, odds=odds, rating=rating, status=status, **fields)


def test_the_evidence_is_every_decided_pick_not_set_apart_known_a_day_after_kick_off(ctx):
    assert [part.tolist() for part in staking.evidence()] == [[], [], []]
    for day, status in enumerate(("won", "lost", "half-won", "half-lost")):
        settled(f"D{day}", T0 + timedelta(days=day), status, odds=2.0 + day, rating="AB"[day % 2])
    settled("Void", T0, "void")
    settled("Pending", T0, "pending")
    settled("Apart", T0, "won", not_live_reason="made-after-kickoff")
    known_at, rating, odds = staking.evidence()
    order = np.argsort(known_at)
    start = T0.timestamp() + DAY
    assert known_at[order].tolist() == [start, start + DAY, start + 2 * DAY, start + 3 * DAY]
    assert rating[order].tolist() == ["A", "B", "A", "B"]
    assert odds[order].tolist() == [2.0, 3.0, 4.0, 5.0]


def test_a_picks_moment_is_when_it_was_made_or_its_kick_off_if_earlier():
    made = [T0, T0 + timedelta(hours=3)]
    kickoff = [T0 + timedelta(hours=1), T0 + timedelta(hours=2)]
    assert staking.moments(made, kickoff).tolist() == [
        T0.timestamp(),
        T0.timestamp() + 2 * 3600,
    ]


def test_a_stake_is_sized_from_the_evidence_given_else_the_stored(ctx):
    settled("Alpha", T0, "won")
    settled("Gamma", T0 + timedelta(hours=1), "lost")
    later = T0.timestamp() + 2 * DAY
    args = ([0.5], [2.5], ["B"], [0.9], [later], RULE)
    assert staking.suggest(*args).tolist() == [pytest.approx(STAKE)]  # two known
    nothing = (np.array([]), np.array([], dtype=str), np.array([]))
    assert staking.suggest(*args, known=nothing).tolist() == [0.0]
    one = (np.array([T0.timestamp()]), np.array(["B"]), np.array([2.6]))
    assert staking.suggest(*args, known=one).tolist() == [0.0]
    two = (np.array([T0.timestamp()] * 2), np.array(["B"] * 2), np.array([2.6, 2.9]))
    assert staking.suggest(*args, known=two).tolist() == [pytest.approx(STAKE)]


def test_picks_are_given_the_stake_of_what_was_known_when_each_was_made(ctx):
    settled("Alpha", T0, "won")
    settled("Gamma", T0 + timedelta(days=1), "lost")  # known at T0 + 2 days
    coming = T0 + timedelta(days=5)
    picks = [
        {
            "trusted_probability": 0.5,
            "odds": 2.5,
            "rating": "B",
            "data_quality": 0.9,
            "created_at": made,
            "match_id": 1,
        }
        for made in (T0 + timedelta(days=2) - timedelta(seconds=1), T0 + timedelta(days=2), coming)
    ]
    # The last made after its match kicked off: sized as of its kick-off, when one was known.
    kickoffs = {1: T0 + timedelta(days=1, hours=12)}
    answered = staking.with_stakes(picks, kickoffs, RULE)
    assert answered is picks
    assert [pick["suggested_stake"] for pick in picks] == [0.0, 0.0, 0.0]
    kickoffs = {1: coming}
    sized = staking.with_stakes(
        [{**pick, "trusted_probability": 0.5} for pick in picks], kickoffs, RULE
    )
    assert [pick["suggested_stake"] for pick in sized] == [
        0.0,
        pytest.approx(STAKE),
        pytest.approx(STAKE),
    ]
    assert all("trusted_probability" not in pick for pick in sized)
    with counted_queries() as statements:
        assert staking.with_stakes([], kickoffs, RULE) == []
    assert statements == []
