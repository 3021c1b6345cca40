"""Markets with lines: results, settlement, fair probabilities, translation and pooling
(engine.model.lines)."""

import itertools

import numpy as np
import pytest

from engine.betting.settlement import settle, winning_selection
from engine.markets import market_line
from engine.model import lines, pooling
from engine.model.scores import score_matrix

NAN = np.nan
NOW = 1_700_000_000

# Scores that matter for a handicap around 0: home by 2, home by 1, a draw, away by 1, away by 2.
SCORES = [(2, 0), (1, 0), (1, 1), (0, 1), (0, 2)]

# Home side's handicap → the home bet's result on each of SCORES, worked by hand from its two
# half stakes (the away bet's is its negative).
AH_HOME = {
    # -0.5 and 0: by 1 wins both; a draw loses the -0.5 half and pushes the 0 half.
    -0.25: [1.0, 1.0, -0.5, -1.0, -1.0],
    # -1 and -0.5: by 1 pushes the -1 half and wins the -0.5 half; a draw loses both.
    -0.75: [1.0, 0.5, -1.0, -1.0, -1.0],
    # +1 and +1.5: a draw wins both; away by 1 pushes +1 and wins +1.5; by 2 loses both.
    1.25: [1.0, 1.0, 1.0, 0.5, -1.0],
    # A whole line: home by 1 at -1 is a push; by 2 wins.
    -1.0: [1.0, 0.0, -1.0, -1.0, -1.0],
    # A half line: no push, no half.
    -0.5: [1.0, 1.0, -1.0, -1.0, -1.0],
    0.0: [1.0, 1.0, 0.0, -1.0, -1.0],
}

# Over/under line → the over bet's result on total goals 1, 2, 3, 4.
TOTALS = [1, 2, 3, 4]
OU_OVER = {
    2.25: [-1.0, -0.5, 1.0, 1.0],  # 2 and 2.5: two goals push the 2 half and lose the 2.5 half
    3.0: [-1.0, -1.0, 0.0, 1.0],  # three goals: a push
    2.75: [-1.0, -1.0, 0.5, 1.0],  # 2.5 and 3: three goals win the 2.5 half, push the 3 half
    2.5: [-1.0, -1.0, 1.0, 1.0],
}


def test_halves_split_quarter_lines_only():
    lower, upper = lines.halves([-0.25, -0.75, 1.25, 2.75, -1.0, 0.5, 0.0, 3.0])
    assert lower.tolist() == [-0.5, -1.0, 1.0, 2.5, -1.0, 0.5, 0.0, 3.0]
    assert upper.tolist() == [0.0, -0.5, 1.5, 3.0, -1.0, 0.5, 0.0, 3.0]


@pytest.mark.parametrize("line", sorted(AH_HOME))
def test_asian_handicap_results_hand_worked(line):
    home, away = np.array(SCORES).T
    n = len(SCORES)
    expected = AH_HOME[line]
    assert lines.results("ah", ["home"] * n, [line] * n, home, away).tolist() == expected
    assert lines.results("ah", ["away"] * n, [line] * n, home, away).tolist() == [
        -r for r in expected
    ]


@pytest.mark.parametrize("line", sorted(OU_OVER))
def test_over_under_results_hand_worked(line):
    # Each total split both ways between the sides: only the total matters.
    for home, away in [(np.array(TOTALS), np.zeros(4)), (np.zeros(4), np.array(TOTALS))]:
        over = lines.results("ou", ["over"] * 4, [line] * 4, home, away)
        under = lines.results("ou", ["under"] * 4, [line] * 4, home, away)
        assert over.tolist() == OU_OVER[line]
        assert under.tolist() == [-r for r in OU_OVER[line]]


def test_no_score_is_nan_and_unknown_markets_or_selections_are_refused():
    r = lines.results("ah", ["home", "away"], [-0.25, 0.5], [NAN, 1], [0, None])
    assert np.isnan(r).all()
    with pytest.raises(ValueError, match="draw"):
        lines.results("ah", ["draw"], [0.0], [1], [0])
    with pytest.raises(ValueError, match="over"):
        lines.results("ah", ["over"], [0.0], [1], [0])
    with pytest.raises(ValueError, match="1x2"):
        lines.results("1x2", ["home"], [0.0], [1], [0])


def test_profits_and_statuses_hand_worked():
    r = [1.0, 0.5, 0.0, -0.5, -1.0, NAN]
    # Stake 2 at 1.9: won 2 × 0.9, half-won 1 × 0.9, push 0, half-lost −1, lost −2.
    assert lines.profits(r, [1.9] * 6, [2.0] * 6) == pytest.approx(
        [1.8, 0.9, 0.0, -1.0, -2.0, NAN], nan_ok=True
    )
    assert lines.statuses(r).tolist() == [
        "won",
        "half-won",
        "void",
        "half-lost",
        "lost",
        "pending",
    ]


def _brute_force(market, matrix, line):
    """W and Lo of the first selection by a loop over every score of one matrix."""
    first = {"ah": "home", "ou": "over"}[market]
    won = lost = 0.0
    for i, j in itertools.product(range(matrix.shape[0]), range(matrix.shape[1])):
        r = lines.results(market, [first], [line], [i], [j])[0]
        won += matrix[i, j] * max(r, 0.0)
        lost += matrix[i, j] * max(-r, 0.0)
    return won, lost


@pytest.mark.parametrize(
    ("market", "line"),
    [
        ("ah", -0.25),
        ("ah", -0.75),
        ("ah", 1.25),
        ("ah", -1.0),
        ("ah", 0.5),
        ("ah", 0.0),
        ("ah", -2.75),
        ("ou", 2.25),
        ("ou", 3.0),
        ("ou", 2.75),
        ("ou", 0.5),
        ("ou", 4.25),
    ],
)
def test_fair_probabilities_match_a_brute_force_loop(market, line):
    matrix = score_matrix([1.7, 0.9, 2.4], [1.1, 1.6, 0.4], [-0.06, 0.0, 0.08])
    p, at_risk = lines.fair_probabilities(market, matrix, [line] * 3)
    for row in range(3):
        won, lost = _brute_force(market, matrix[row], line)
        assert p[row, 0] == pytest.approx(won / (won + lost), abs=1e-12)
        assert p[row, 1] == pytest.approx(lost / (won + lost), abs=1e-12)
        assert at_risk[row] == pytest.approx(won + lost, abs=1e-12)


def test_fair_probabilities_of_a_half_line_are_plain_probabilities():
    # No push at x.5: nothing is returned, so p is the plain probability and all is at risk.
    matrix = score_matrix([1.4], [1.2], [-0.04])
    p, at_risk = lines.fair_probabilities("ou", matrix, [2.5])
    size = matrix.shape[-1]
    hg, ag = np.indices((size, size))
    assert p[0, 0] == pytest.approx(matrix[0][hg + ag > 2].sum(), abs=1e-12)
    assert at_risk[0] == pytest.approx(1.0)


def test_fair_probabilities_each_row_at_its_own_line_and_nan_rows():
    matrix = score_matrix([1.5, 1.5], [1.0, 1.0])
    mixed, _ = lines.fair_probabilities("ah", matrix, [-0.25, 0.75])
    first, _ = lines.fair_probabilities("ah", matrix[:1], [-0.25])
    second, _ = lines.fair_probabilities("ah", matrix[1:], [0.75])
    np.testing.assert_allclose(mixed, np.vstack([first, second]))
    nan_line, nan_risk = lines.fair_probabilities("ah", matrix, [NAN, 0.0])
    assert np.isnan(nan_line[0]).all() and np.isnan(nan_risk[0])
    assert np.isfinite(nan_line[1]).all()


def test_outcome_index():
    # Home at -0.25 on 1-0 (won), 1-1 (half-lost), 0-1 (lost); home at -1 on 1-0 (push); no score.
    index = lines.outcome_index(
        "ah", [-0.25, -0.25, -0.25, -1.0, 0.5], [1, 1, 0, 1, NAN], [0, 1, 1, 0, 0]
    )
    assert index.tolist() == [0, 1, 1, -1, -1]
    assert lines.outcome_index("ou", [3.0, 2.75], [2, 2], [1, 1]).tolist() == [-1, 0]
    # The share of the stake each decided: whole, half (the other half pushed), none.
    share = lines.outcome_share(
        "ah", [-0.25, -0.25, -0.25, -1.0, 0.5, -0.75], [1, 1, 0, 1, NAN, 2], [0, 1, 1, 0, 0, 1]
    )
    assert share.tolist() == [1.0, 0.5, 1.0, 0.0, 0.0, 0.5]
    assert lines.outcome_share("ou", [3.0, 2.75, 2.25], [2, 2, 1], [1, 1, 1]).tolist() == [
        0.0,
        0.5,
        0.5,
    ]


@pytest.mark.parametrize(
    ("market", "line_from", "line_to"), [("ah", -0.25, -1.0), ("ou", 2.75, 2.0)]
)
def test_translate_reads_the_model_at_its_own_shift(market, line_from, line_to):
    # A p_from the model itself gives at line_from needs no shift: the answer is the model's
    # own fair probability at line_to. Then back again.
    rates, rho = ([1.6, 1.1], [1.0, 1.3]), [-0.05, 0.02]
    matrix = score_matrix(*rates, rho)
    p_from = lines.fair_probabilities(market, matrix, [line_from] * 2)[0][:, 0]
    p_to = lines.fair_probabilities(market, matrix, [line_to] * 2)[0][:, 0]
    moved = lines.translate(market, *rates, rho, line_from, p_from, line_to)
    assert moved == pytest.approx(p_to, abs=1e-9)
    back = lines.translate(market, *rates, rho, line_to, moved, line_from)
    assert back == pytest.approx(p_from, abs=1e-9)


def test_translate_round_trip_off_the_model():
    # A market price the model does not give (0.62 at -0.25): carried to -0.75 it falls (a
    # harder handicap), and carried back it is 0.62 again. The same line leaves it unchanged.
    moved = lines.translate("ah", 1.4, 1.2, -0.04, -0.25, 0.62, -0.75)
    assert moved[0] < 0.62
    assert lines.translate("ah", 1.4, 1.2, -0.04, -0.75, moved, -0.25) == pytest.approx(0.62)
    assert lines.translate("ou", 1.4, 1.2, -0.04, 2.25, 0.47, 2.25).tolist() == [0.47]
    up = lines.translate("ou", 1.4, 1.2, -0.04, 2.25, 0.47, 3.0)
    assert up[0] < 0.47
    assert np.isnan(lines.translate("ah", [1.4, NAN], 1.2, 0.0, 0.0, [NAN, 0.5], 0.5)).all()


def _world():
    """Twelve matches a week apart, each quoted at -0.25 and at 2.5 totals, results known."""
    n = 12
    kickoff = np.arange(n, dtype=np.int64) * 7 * 86400
    cutoff = kickoff - 86400
    rng = np.random.default_rng(3)
    goal_rates = np.column_stack([rng.uniform(1.0, 2.0, n), rng.uniform(0.8, 1.6, n)])
    goal_rho = np.full(n, -0.04)
    home_goals = rng.integers(0, 4, n).astype(float)
    away_goals = rng.integers(0, 3, n).astype(float)
    return kickoff, cutoff, goal_rates, goal_rho, home_goals, away_goals


def test_forecast_model_is_the_score_matrix_at_each_line_and_rows_without_a_market_are_model():
    kickoff, cutoff, rates, rho, hg, ag = _world()
    match_row = np.array([0, 0, 5])
    line = np.array([-0.25, 0.5, -0.25])
    market = np.array([[0.55, 0.45], [NAN, NAN], [0.4, 0.6]])
    out = lines.forecast(
        "ah", match_row, line, market, kickoff, cutoff, rates, rho, hg, ag,
        np.ones(12, dtype=bool), pool_weights={-0.25: 0.3},
    )  # fmt: skip
    matrix = score_matrix(rates[match_row, 0], rates[match_row, 1], rho[match_row])
    model, at_risk = lines.fair_probabilities("ah", matrix, line)
    np.testing.assert_allclose(out.model, model)
    np.testing.assert_allclose(out.at_risk, at_risk)
    # Line 0.5 is not in the caller's weights: the prior (0), but the row has no market: 1.
    assert out.pool_weight.tolist() == [0.3, 1.0, 0.3]
    np.testing.assert_allclose(out.published[1], model[1])
    np.testing.assert_allclose(
        out.published[[0, 2]], pooling.pool(model[[0, 2]], market[[0, 2]], 0.3)
    )


def test_forecast_weights_use_only_earlier_matches_of_the_same_line():
    kickoff, cutoff, rates, rho, hg, ag = _world()
    match_row = np.concatenate([np.arange(12), np.arange(12)])
    line = np.concatenate([np.full(12, -0.25), np.full(12, 0.25)])
    # A market that was wrong about every result (0.1 on the side that won): the model earns
    # weight as soon as there are rows enough.
    won = lines.outcome_index("ah", line, hg[match_row], ag[match_row]) == 0
    market = np.column_stack([np.where(won, 0.1, 0.9), np.where(won, 0.9, 0.1)])
    has_result = np.ones(12, dtype=bool)

    def run(home_goals):
        return lines.forecast(
            "ah", match_row, line, market, kickoff, cutoff, rates, rho, home_goals, ag,
            has_result, prior=0.0, min_rows=4,
        ).pool_weight  # fmt: skip

    base = run(hg)
    # Changing the last match's result can change only weights fitted after it: none here.
    changed = hg.copy()
    changed[-1] = 9.0
    np.testing.assert_array_equal(run(changed), base)
    # The first match's weight has no past at all: the prior.
    assert base[0] == 0.0 and base[12] == 0.0
    # Each row's weight is fit_weight on the earlier rows of its line alone.
    model = lines.fair_probabilities(
        "ah", score_matrix(rates[:, 0], rates[:, 1], rho), np.full(12, 0.25)
    )[0]
    outcome = lines.outcome_index("ah", np.full(12, 0.25), hg, ag)
    expected = pooling.fit_weight(model[:7], market[12:19], outcome[:7], prior=0.0, min_rows=4)
    assert expected > 0.5
    assert base[12 + 7] == pytest.approx(expected)
    assert base[-1] > 0.5


# market, selection, line, odds, stake, home goals, away goals, expected status and profit.
SETTLE_CASES = [
    ("ah", "home", -0.25, 1.9, 2.0, 1, 1, "half-lost", -1.0),
    ("ah", "away", -0.25, 2.0, 2.0, 1, 1, "half-won", 1.0),  # half of 2 at 2.0: +1
    ("ah", "home", -0.75, 2.1, 1.0, 2, 1, "half-won", 0.55),
    ("ah", "away", 1.25, 1.8, 1.0, 0, 2, "won", 0.8),
    ("ah", "home", -1.0, 1.9, 1.0, 2, 1, "void", 0.0),  # a push
    ("ah", "home", 0.5, 1.9, 1.0, 0, 1, "lost", -1.0),
    ("ou", "over", 2.25, 1.9, 1.0, 1, 1, "half-lost", -0.5),
    ("ou", "under", 3.0, 1.9, 1.0, 2, 1, "void", 0.0),
    ("ou", "over", 2.75, 2.0, 1.0, 3, 0, "half-won", 0.5),
    ("1x2", "home", NAN, 2.5, 2.0, 2, 1, "won", 3.0),
    ("ou25", "under", 2.5, 2.0, 1.0, 2, 1, "lost", -1.0),
]


def test_settle_with_lines_hand_worked():
    columns = list(zip(*SETTLE_CASES, strict=True))
    n = len(SETTLE_CASES)
    status, profit = settle(
        columns[0], columns[1], columns[3], columns[4], ["finished"] * n, columns[5], columns[6],
        [NOW - 3 * 3600] * n, NOW, line=columns[2],
    )  # fmt: skip
    assert status.tolist() == [case[7] for case in SETTLE_CASES]
    assert profit == pytest.approx([case[8] for case in SETTLE_CASES])


def test_settle_line_picks_pending_void_and_without_a_line():
    status, profit = settle(
        ["ah", "ou", "ah"], ["home", "over", "away"], [1.9] * 3, [1.0] * 3,
        ["live", "cancelled", "finished"], [1, None, None], [0, None, None], [NOW] * 3, NOW,
        line=[-0.25, 2.25, 0.5],
    )  # fmt: skip
    assert status.tolist() == ["pending", "void", "pending"]
    assert np.isnan(profit[0]) and profit[1] == 0.0 and np.isnan(profit[2])
    with pytest.raises(ValueError, match="line"):
        settle(["ah"], ["home"], [1.9], [1.0], ["finished"], [1], [0], [NOW], NOW)
    with pytest.raises(ValueError, match="ah/draw"):
        settle(["ah"], ["draw"], [1.9], [1.0], ["finished"], [1], [0], [NOW], NOW, line=[0.0])
    # A line market has no single winning selection: its outcome needs the line.
    assert winning_selection(["ah", "1x2"], [1, 1], [0, 0]).tolist() == ["", "home"]


def test_a_moved_line_is_carried_from_the_nearest_closing_line():
    # Match 0 closes at -1.0 (balanced), -0.5 and 0.0 (-0.25 lies between -0.5 and 0.0: the
    # more balanced wins); match 1 at 2.0 and 3.0 (equally near 2.5: the more balanced again);
    # match 2 has no fair line; match 3 none at all.
    cube_row = np.array([0, 0, 0, 1, 1, 2])
    cube_line = np.array([-1.0, -0.5, 0.0, 2.0, 3.0, 1.5])
    fair = np.array([[0.5, 0.5], [0.6, 0.4], [0.7, 0.3], [0.7, 0.3], [0.45, 0.55], [NAN, NAN]])
    picks = ([0, 0, 0, 1, 2, 3], [0.25, -0.25, -1.25, 2.5, 1.5, 0.0])
    near = lines.nearest_rows(*picks, cube_row, cube_line, fair)
    assert near.tolist() == [2, 1, 0, 4, -1, -1]
    # closing_at carries the nearest line's probability, not the main line's.
    rates = (np.array([1.5, 1.4, 1.2, 1.0]), np.array([1.1, 1.2, 1.0, 1.0]), -0.04)
    prices = np.where(np.isfinite(fair), 1.0 / np.where(np.isfinite(fair), fair, 1.0), NAN)
    price, probability, row = lines.closing_at(
        "ah", ([0], [0.25], [0]), (cube_row, cube_line, prices, fair), rates
    )
    assert np.isnan(price[0]) and row.tolist() == [2]
    expected = lines.translate("ah", 1.5, 1.1, -0.04, 0.0, 0.7, 0.25)
    assert probability == pytest.approx(expected)


def test_an_over_under_line_without_rates_is_carried_by_its_total():
    # No 1x2 close, no rates: the goals are split evenly and scaled to the quoted total, which
    # at 2.5 goals and above gives the Poisson total's probabilities whatever the split.
    cube = (np.array([0]), np.array([2.5]), np.array([[2.0, 2.0]]), np.array([[0.5, 0.5]]))
    no_rates = (np.array([NAN]), np.array([NAN]), -0.04)
    _, probability, row = lines.closing_at("ou", ([0, 0], [3.0, 2.75], [0, 1]), cube, no_rates)
    # By hand: the Poisson total m with P(T <= 2) = 1/2 is 2.674060, P(T = 3) = 0.219803.
    # Over 3.0 wins from 4 goals, pushes at 3: (1/2 - P3) / (1 - P3). Under 2.75 loses half
    # at 3 goals: one minus over's (1/2 - P3/2) / (1 - P3/2).
    p3 = 0.219803
    over_3 = (0.5 - p3) / (1 - p3)
    under_275 = 1 - (0.5 - p3 / 2) / (1 - p3 / 2)
    assert probability.tolist() == pytest.approx([over_3, under_275], abs=2e-6)
    assert row.tolist() == [0, 0]
    # A handicap needs the split: without rates it has no carried probability.
    handicap = (np.array([0]), np.array([-0.5]), np.array([[2.0, 2.0]]), np.array([[0.5, 0.5]]))
    assert np.isnan(lines.closing_at("ah", ([0], [-0.25], [0]), handicap, no_rates)[1]).all()


@pytest.mark.parametrize(
    ("market", "stored", "line"),
    [
        ("ah", -0.25, -0.25),
        ("ah", 0, 0.0),
        ("ou", 3.75, 3.75),
        ("ah", None, None),  # withheld
        ("ou25", 0, 2.5),
        ("1x2", 0, None),
        ("btts", 0, None),
    ],
)
def test_a_rows_line_is_its_own_on_a_line_market_and_fixed_elsewhere(market, stored, line):
    assert market_line(market, stored) == line
