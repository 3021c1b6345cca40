"""Suggested stakes against hand-worked Kelly fractions: binary bets, the fraction and the cap,
zero where the evidence is thin, the lines' pushes and quarter lines; and what they made."""

import numpy as np
import pytest
from scipy.optimize import brentq

from engine.betting import stakes

RULE = {"fraction": 0.25, "cap": 0.02, "min_quality": 0.6, "min_settled": 30}


@pytest.mark.parametrize(
    ("p", "o", "full"),
    [
        (0.55, 2.0, 0.10),  # (1.1 − 1) / 1
        (0.5, 2.5, 0.25 / 1.5),  # (1.25 − 1) / 1.5
        (0.3, 4.0, 0.2 / 3.0),  # (1.2 − 1) / 3
        (0.4, 2.0, 0.0),  # edge −0.2: Kelly stakes nothing
        (0.5, 2.0, 0.0),  # no edge
        (np.nan, 2.0, 0.0),  # no probability
        (0.6, 1.0, 0.0),  # no price to win
    ],
)
def test_full_kelly_is_the_edge_over_the_net_odds(p, o, full):
    assert stakes.kelly(p, o) == pytest.approx(full)


def test_the_suggestion_is_a_quarter_of_kelly_capped():
    suggested = stakes.suggested(
        [0.5, 0.55, 0.3, 0.4], [2.5, 2.0, 4.0, 2.0], [0.9] * 4, [30] * 4, **RULE
    )
    # 0.1667 / 4 = 0.0417 and 0.10 / 4 = 0.025 capped at 0.02; 0.0667 / 4 = 0.0167; no edge: 0.
    assert suggested.tolist() == pytest.approx([0.02, 0.02, 0.2 / 12, 0.0])
    wider = stakes.suggested([0.5, 0.55], [2.5, 2.0], [0.9, 0.9], [30, 30], **{**RULE, "cap": 0.05})
    assert wider.tolist() == pytest.approx([0.25 / 6, 0.025])


@pytest.mark.parametrize(
    ("quality", "evidence", "expected"),
    [
        (0.9, 30, 0.2 / 12),
        (0.6, 30, 0.2 / 12),  # at B's data quality: enough
        (0.59, 30, 0.0),  # below B's data quality: thin
        (np.nan, 30, 0.0),  # no data quality: thin
        (0.9, 29, 0.0),  # one settled pick short in its rating and price band: thin
    ],
)
def test_the_stake_is_zero_where_the_evidence_is_thin(quality, evidence, expected):
    (stake,) = stakes.suggested([0.3], [4.0], [quality], [evidence], **RULE)
    assert stake == pytest.approx(expected)


def test_a_push_leaves_the_binary_kelly_of_the_fair_probability_exact():
    # A whole line: won 0.45, pushed 0.20, lost 0.35 at 2.1. The growth
    # 0.45 ln(1 + 1.1 f) + 0.35 ln(1 − f) is flat where 0.45 × 1.1 (1 − f) = 0.35 (1 + 1.1 f):
    # f = (0.495 − 0.35) / (0.8 × 1.1). The fair probability is 0.45 / 0.8.
    assert stakes.kelly(0.45 / 0.8, 2.1) == pytest.approx(0.145 / 0.88)


def test_a_quarter_line_is_staked_no_more_than_its_own_kelly():
    # Only half outcomes: half won 0.3, half lost 0.2 (the rest pushed) at 2.0. The growth
    # 0.3 ln(1 + f/2) + 0.2 ln(1 − f/2) is a binary bet of f/2 at 0.6: f/2 = 0.2, so f = 0.4;
    # the fair probability (0.15 / 0.25 = 0.6) gives the binary 0.2, half of it.
    assert stakes.kelly(0.15 / 0.25, 2.0) == pytest.approx(0.2)
    # Full and half outcomes: won 0.4, half won 0.2, half lost 0.1, lost 0.3 at 2.0.
    a, b, c, d = 0.4, 0.2, 0.1, 0.3
    exact = brentq(lambda f: a / (1 + f) + b / (2 + f) - c / (2 - f) - d / (1 - f), 0.0, 0.99)
    fair = (a + b / 2) / (a + b / 2 + c / 2 + d)
    assert stakes.kelly(fair, 2.0) == pytest.approx(2 * fair - 1)
    assert exact == pytest.approx(0.19226, abs=1e-5)
    assert 2 * fair - 1 < exact


def test_only_results_known_by_a_picks_moment_count_in_its_band():
    counts = stakes.settled_before(
        moment=[100, 200, 200, 200],
        rating=["A", "A", "B", "A"],
        odds=[2.5, 2.5, 2.5, 1.5],
        known_at=[50, 150, 200, 250, 60],
        known_rating=["A", "A", "A", "A", "B"],
        known_odds=[2.2, 2.9, 2.0, 2.1, 2.4],
    )
    # A at 2.0–3.0: one known by 100, three by 200 (the one known at 250 not yet); B: one; A
    # below 2.0: none.
    assert counts.tolist() == [1, 3, 1, 0]
    assert stakes.stake_band([1.9, 2.0, 2.99, 3.0, 5.0, 11.0]).tolist() == [0, 1, 1, 2, 3, 3]


def test_the_record_of_stakes_beside_flat_ones():
    figures = stakes.record([0.02, 0.0, 0.01], [1.5, -1.0, -0.5], flat=0.02)
    assert (figures["picks"], figures["staked"]) == (3, 2)
    assert figures["mean_stake"] == pytest.approx(0.015)
    suggested, flat = figures["suggested"], figures["flat"]
    # Returns 0.03, 0, −0.005: mean 0.008333, deviations 0.021667, −0.008333, −0.013333.
    assert suggested["mean_return"] == pytest.approx(0.025 / 3)
    assert suggested["mean_return_std_error"] == pytest.approx((0.00071667 / 2 / 3) ** 0.5, 1e-4)
    assert suggested["growth"] == pytest.approx(1.03 * 0.995 - 1)
    # Flat: 0.03, −0.02, −0.01.
    assert flat["mean_return"] == pytest.approx(0.0, abs=1e-12)
    assert flat["growth"] == pytest.approx(1.03 * 0.98 * 0.99 - 1)
    empty = stakes.record([], [], flat=0.02)
    assert empty["mean_stake"] is None and empty["suggested"]["growth"] is None
    assert stakes.record([0.01], [1.0], 0.02)["suggested"]["mean_return_std_error"] is None


def test_kelly_never_stakes_more_than_the_whole_bankroll():
    # A sure thing is the whole bankroll at any price; a probability over 1 (bad data), no more.
    assert stakes.kelly([1.0, 1.0], [3.0, 1.5]).tolist() == [1.0, 1.0]
    assert stakes.kelly([1.2, 1.5], [2.0, 4.0]).tolist() == [1.0, 1.0]  # (2.4 − 1) / 1 = 1.4


def test_a_missing_data_quality_is_thin_whatever_the_threshold():
    rule = {**RULE, "min_quality": 0.0}
    assert stakes.suggested([0.3, 0.3], [4.0, 4.0], [np.nan, 0.0], [30, 30], **rule).tolist() == [
        0.0,
        pytest.approx(0.2 / 12),
    ]


def test_the_counts_of_settled_picks_are_whole_numbers():
    counts = stakes.settled_before(
        [100.0, 300.0], ["B", "B"], [2.5, 2.5], [50, 250], ["B"] * 2, [2.1] * 2
    )
    assert counts.dtype.kind == "i" and counts.tolist() == [1, 2]


def test_two_picks_have_a_standard_error_and_one_has_none():
    figures = stakes.record([0.02, 0.02], [1.0, -1.0], flat=0.01)
    # Returns 0.02 and −0.02: mean 0, sample deviation 0.02 × √2, over √2: 0.02.
    assert figures["suggested"]["mean_return_std_error"] == pytest.approx(0.02)
    assert figures["flat"]["mean_return_std_error"] == pytest.approx(0.01)
    assert stakes.record([0.02], [1.0], flat=0.01)["flat"]["mean_return_std_error"] is None


def test_a_missing_value_given_as_none_counts_as_missing():
    # A probability or a price of None stakes nothing; a data quality of None is thin; a price
    # of None is in the lowest band.
    assert stakes.kelly([None, 0.5, 0.5], [2.5, None, 2.5]).tolist() == [0.0, 0.0, 0.25 / 1.5]
    assert stakes.suggested([0.3, 0.3], [4.0, 4.0], [None, 0.9], [30, 30], **RULE).tolist() == [
        0.0,
        pytest.approx(0.2 / 12),
    ]
    assert stakes.stake_band([None, 2.5]).tolist() == [0, 1]
