"""Market-implied ratings: the rate solver, the ratings fit, walk-forward invariance, coverage."""

from dataclasses import replace

import numpy as np
import pytest

from engine.model import implied_rates, market_ratings, timeline, walkforward
from engine.model.scores import market_probabilities, score_matrix
from tests.helpers import assert_same_rows, epoch, schedule

HOUR = 3600
CONFIG = market_ratings.RatingsConfig()


def known_rates(n, seed):
    """Realistic goal rates, from a lopsided away win to a home rout."""
    rng = np.random.default_rng(seed)
    return np.exp(rng.uniform(-1.2, 1.2, n)), np.exp(rng.uniform(-1.2, 1.0, n))


def lines(home_rate, away_rate, rho):
    """Fair 1x2 and over/under probabilities of the score matrices of the given rates."""
    probs = market_probabilities(score_matrix(home_rate, away_rate, rho))
    return probs["1x2"], probs["ou25"]


@pytest.mark.parametrize("rho", [0.0, -0.04, -0.12])
@pytest.mark.parametrize("with_ou", [True, False])
def test_solver_recovers_the_rates_prices_were_made_from(rho, with_ou):
    lam, mu = known_rates(400, seed=1)
    p1x2, pou = lines(lam, mu, rho)
    home_rate, away_rate = implied_rates.solve_rates(p1x2, pou if with_ou else None, rho)
    np.testing.assert_allclose(home_rate, lam, rtol=1e-7)
    np.testing.assert_allclose(away_rate, mu, rtol=1e-7)


def test_solver_fits_what_each_row_has():
    lam, mu = known_rates(6, seed=2)
    p1x2, pou = lines(lam, mu, 0.0)
    pou[1] = np.nan  # 1x2 only: still solved, from the 1x2 line alone
    p1x2[2] = np.nan  # over/under only: the split between the sides is unknown
    p1x2[3] = pou[3] = np.nan
    home_rate, away_rate = implied_rates.solve_rates(p1x2, pou)
    solved = np.array([True, True, False, False, True, True])
    assert (np.isfinite(home_rate) == solved).all()
    assert (np.isfinite(away_rate) == solved).all()
    np.testing.assert_allclose(home_rate[solved], lam[solved], rtol=1e-7)
    np.testing.assert_allclose(away_rate[solved], mu[solved], rtol=1e-7)


def test_solver_finds_the_least_squares_rates_of_lines_no_rates_reproduce():
    # Real lines price more draws than any pair of Poisson rates gives: no exact solution.
    lam, mu = known_rates(200, seed=3)
    p1x2, pou = lines(lam, mu, 0.0)
    p1x2 = p1x2 * np.array([0.94, 1.15, 0.94])
    p1x2 /= p1x2.sum(axis=1, keepdims=True)
    home_rate, away_rate = implied_rates.solve_rates(p1x2, pou)

    def cost(h, a):
        fitted = lines(h, a, 0.0)
        return ((fitted[0] - p1x2) ** 2).sum(axis=1) + ((fitted[1] - pou) ** 2).sum(axis=1)

    best = cost(home_rate, away_rate)
    assert (best > 1e-5).all()
    for dh, da in ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1)):
        nudged = cost(home_rate * np.exp(1e-4 * dh), away_rate * np.exp(1e-4 * da))
        assert (nudged > best).all()


@pytest.mark.parametrize("rho", [0.0, -0.1, 0.1])
def test_jacobian_matches_finite_differences(rho):
    lam, mu = known_rates(50, seed=4)
    x = np.log(np.column_stack([lam, mu]))
    _, jac = implied_rates._market_and_jacobian(x, rho)
    for k in range(2):
        step = np.zeros_like(x)
        step[:, k] = 1e-6
        up, _ = implied_rates._market_and_jacobian(x + step, rho)
        down, _ = implied_rates._market_and_jacobian(x - step, rho)
        np.testing.assert_allclose(jac[:, :, k], (up - down) / 2e-6, atol=1e-8)


def test_solver_rejects_wrong_shapes():
    with pytest.raises(ValueError):
        implied_rates.solve_rates(np.full((3, 2), 0.5))
    with pytest.raises(ValueError):
        implied_rates.solve_rates(np.full((3, 3), 1 / 3), np.full((2, 2), 0.5))


def brute_fair(matrix, market, line):
    """The first selection's fair probability at ``line`` by a loop over one score matrix."""
    won = lost = 0.0
    quarter = abs(4 * line) % 2 == 1
    for part in (line - 0.25, line + 0.25) if quarter else (line, line):
        for home in range(matrix.shape[0]):
            for away in range(matrix.shape[1]):
                edge = home - away + part if market == "ah" else home + away - part
                won += 0.5 * matrix[home, away] * (edge > 0)
                lost += 0.5 * matrix[home, away] * (edge < 0)
    return won / (won + lost)


LINES = {
    "ah": np.array([-1.75, -1.25, -1.0, -0.75, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0, 1.5, 2.25]),
    "ou": np.array([0.5, 1.0, 1.75, 2.0, 2.25, 2.5, 2.75, 3.0, 3.25, 3.5, 4.0, 1.25]),
}


@pytest.mark.parametrize("market", ["ah", "ou"])
@pytest.mark.parametrize("rho", [0.0, -0.08])
def test_fair_line_probabilities_match_a_loop_over_the_scores(market, rho):
    lam, mu = known_rates(12, seed=5)
    fair = implied_rates._fair_line_probabilities(lam, mu, rho, market, LINES[market])
    matrix = score_matrix(lam, mu, rho)
    expected = [brute_fair(matrix[i], market, line) for i, line in enumerate(LINES[market])]
    np.testing.assert_allclose(fair[:, 0], expected, rtol=1e-12)
    np.testing.assert_allclose(fair.sum(axis=1), 1.0, rtol=1e-12)


def test_fair_line_probabilities_by_hand():
    # Goals 0-0, 1-0, 2-0 with probability 0.2, 0.5, 0.3 (rates far apart make no such matrix,
    # so the private helper is fed the matrix itself).
    matrix = np.zeros((1, 3, 3))
    matrix[0, 0, 0], matrix[0, 1, 0], matrix[0, 2, 0] = 0.2, 0.5, 0.3
    zero = np.zeros_like(matrix)

    def fair(market, line):
        return implied_rates._fair_and_jacobian(matrix, zero, zero, market, np.array([line]))[0][
            0, 0
        ]

    # Home -1: 2-0 wins, 1-0 pushes, 0-0 loses: 0.3 / 0.5.
    assert fair("ah", -1.0) == pytest.approx(0.3 / 0.5)
    # Home -0.75: half at -0.5 (1-0 and 2-0 win), half at -1 (as above): W 0.55, Lo 0.2.
    assert fair("ah", -0.75) == pytest.approx(0.55 / 0.75)
    # Over 1.25: half at 1 (2-0 wins, 1-0 pushes), half at 1.5 (2-0 wins): W 0.3, Lo 0.45.
    assert fair("ou", 1.25) == pytest.approx(0.3 / 0.75)
    assert fair("ou", 2.5) == pytest.approx(0.0)


@pytest.mark.parametrize("rho", [0.0, -0.1])
def test_jacobian_of_line_markets_matches_finite_differences(rho):
    lam, mu = known_rates(12, seed=6)
    x = np.log(np.column_stack([lam, mu]))
    given = (("ah", LINES["ah"]), ("ou", np.where(np.arange(12) == 3, np.nan, LINES["ou"])))
    probs, jac = implied_rates._market_and_jacobian(x, rho, given)
    assert probs.shape == (12, 9) and jac.shape == (12, 9, 2)
    assert (probs[3, 7:] == 0).all() and (jac[3, 7:] == 0).all()  # no line: no residual
    for k in range(2):
        step = np.zeros_like(x)
        step[:, k] = 1e-6
        up, _ = implied_rates._market_and_jacobian(x + step, rho, given)
        down, _ = implied_rates._market_and_jacobian(x - step, rho, given)
        np.testing.assert_allclose(jac[:, :, k], (up - down) / 2e-6, atol=1e-8)


def handicap_lines(lam, mu, rho, ah_line, ou_line):
    """The fair Asian handicap and over/under probabilities of the rates at the given lines."""
    return {
        "ah": (ah_line, implied_rates._fair_line_probabilities(lam, mu, rho, "ah", ah_line)),
        "ou": (ou_line, implied_rates._fair_line_probabilities(lam, mu, rho, "ou", ou_line)),
    }


@pytest.mark.parametrize("rho", [0.0, -0.04])
def test_solver_recovers_the_rates_from_lines_too(rho):
    lam, mu = known_rates(100, seed=7)
    p1x2, pou = lines(lam, mu, rho)
    given = handicap_lines(lam, mu, rho, np.resize(LINES["ah"], 100), np.resize(LINES["ou"], 100))
    home_rate, away_rate = implied_rates.solve_rates(p1x2, pou, rho, lines=given)
    np.testing.assert_allclose(home_rate, lam, rtol=1e-7)
    np.testing.assert_allclose(away_rate, mu, rtol=1e-7)


def test_a_handicap_moves_the_rates_by_its_weight_and_none_at_weight_zero():
    lam, mu = known_rates(40, seed=8)
    p1x2, pou = lines(lam, mu, 0.0)
    # The handicap says the home side is stronger than its 1x2 line says.
    line = np.full(40, -0.5)
    stronger = implied_rates._fair_line_probabilities(lam * 1.2, mu / 1.2, 0.0, "ah", line)
    stronger[5] = np.nan  # not quoted at this row: nothing moves
    plain = implied_rates.solve_rates(p1x2, pou)
    off = implied_rates.solve_rates(p1x2, pou, lines={"ah": (line, stronger)}, weights={"ah": 0.0})
    np.testing.assert_array_equal(off, plain)
    supremacy, miss = {}, {}
    for weight in (1.0, 8.0):
        home_rate, away_rate = implied_rates.solve_rates(
            p1x2, pou, lines={"ah": (line, stronger)}, weights={"ah": weight}
        )
        supremacy[weight] = np.log(home_rate / away_rate)
        np.testing.assert_allclose(supremacy[weight][5], np.log(lam[5] / mu[5]), rtol=1e-7)
        fitted = implied_rates._fair_line_probabilities(home_rate, away_rate, 0.0, "ah", line)
        miss[weight] = np.abs(fitted - stronger)[:, 0]
    quoted = np.arange(40) != 5
    assert (supremacy[1.0][quoted] > np.log(lam / mu)[quoted]).all()
    assert (supremacy[8.0][quoted] > supremacy[1.0][quoted]).all()
    # The heavier the handicap weighs, the closer the solved rates price it.
    assert (miss[8.0][quoted] < miss[1.0][quoted]).all()


def test_solver_rejects_wrong_line_shapes():
    p1x2 = np.full((3, 3), 1 / 3)
    with pytest.raises(ValueError):
        implied_rates.solve_rates(p1x2, lines={"ah": (np.zeros(2), np.full((3, 2), 0.5))})
    with pytest.raises(ValueError):
        implied_rates.solve_rates(p1x2, lines={"ou": (np.zeros(3), np.full((3, 3), 0.5))})


def round_robin(n_teams, rounds):
    """(home_idx, away_idx) of every ordered pair of teams, ``rounds`` times over."""
    pairs = [(h, a) for h in range(n_teams) for a in range(n_teams) if h != a]
    home, away = np.array(pairs * rounds).T
    return home, away


def true_ratings(n_teams, seed):
    """Known ratings: attack and defence centred on 0 (what the ridge settles on), home 0.25."""
    rng = np.random.default_rng(seed)
    attack, defence = rng.normal(0.0, 0.3, (2, n_teams))
    return market_ratings.Ratings(attack - attack.mean(), defence - defence.mean(), 0.15, 0.25)


def test_ratings_fit_recovers_known_strengths():
    truth = true_ratings(12, seed=5)
    home, away = round_robin(12, 1)
    lam, mu = market_ratings.rates(truth, home, away)
    weights = np.random.default_rng(6).uniform(0.1, 1.0, len(home))
    fit = market_ratings.fit_ratings(home, away, np.log(lam), np.log(mu), weights, 12, ridge=1e-6)
    np.testing.assert_allclose(fit.attack, truth.attack, atol=1e-5)
    np.testing.assert_allclose(fit.defence, truth.defence, atol=1e-5)
    assert fit.intercept == pytest.approx(truth.intercept, abs=1e-5)
    assert fit.home == pytest.approx(truth.home, abs=1e-5)


def test_ratings_fit_averages_noisy_rates_and_follows_the_weights():
    truth = true_ratings(10, seed=7)
    home, away = round_robin(10, 8)
    lam, mu = market_ratings.rates(truth, home, away)
    rng = np.random.default_rng(8)
    noise = rng.normal(0.0, 0.1, (2, len(home)))
    fit = market_ratings.fit_ratings(
        home, away, np.log(lam) + noise[0], np.log(mu) + noise[1], np.ones(len(home)), 10, 0.01
    )
    np.testing.assert_allclose(fit.attack, truth.attack, atol=0.03)
    np.testing.assert_allclose(fit.defence, truth.defence, atol=0.03)
    # Matches of weight 0 are ignored: half the data from another world changes nothing.
    other = true_ratings(10, seed=9)
    lam2, mu2 = market_ratings.rates(other, home, away)
    both = market_ratings.fit_ratings(
        np.r_[home, home],
        np.r_[away, away],
        np.r_[np.log(lam), np.log(lam2)],
        np.r_[np.log(mu), np.log(mu2)],
        np.r_[np.ones(len(home)), np.zeros(len(home))],
        10,
        1e-6,
    )
    np.testing.assert_allclose(both.attack, truth.attack, atol=1e-5)


def test_ridge_pulls_teams_with_little_weight_towards_average():
    truth = true_ratings(8, seed=10)
    home, away = round_robin(8, 1)
    lam, mu = market_ratings.rates(truth, home, away)
    light = market_ratings.fit_ratings(
        home, away, np.log(lam), np.log(mu), np.full(len(home), 0.01), 8, 1.0
    )
    heavy = market_ratings.fit_ratings(
        home, away, np.log(lam), np.log(mu), np.full(len(home), 100.0), 8, 1.0
    )
    assert np.abs(light.attack).max() < 0.5 * np.abs(heavy.attack).max()
    np.testing.assert_allclose(heavy.attack, truth.attack, atol=0.01)


def build_world(seed=11, drift=0.2, noise=0.03):
    """Three groups over two seasons, one round a week, strengths drifting by ``drift`` a year,
    closing lines made from the true rates (1x2 blurred by ``noise``), some rows 1x2-only or
    unpriced. Returns the input and the true rates (n, 2).

    Group 1 swaps team 111 for the newcomer 112 in season two; group 3 has no prices at all.
    Rows after ``now`` carry "closing" lines too: the model must not use them.
    """
    rng = np.random.default_rng(seed)
    rows = schedule({1: list(range(100, 112)), 2: list(range(200, 210)), 3: list(range(300, 306))})
    kickoff, group, home, away = (np.array(col, dtype=np.int64) for col in zip(*rows, strict=True))
    teams = np.unique(np.r_[home, away])
    base = rng.normal(0.0, 0.3, (len(teams), 2))
    drift = rng.normal(0.0, drift, (len(teams), 2))
    years = (kickoff - kickoff.min()) / (365 * walkforward.DAY)
    h, a = np.searchsorted(teams, home), np.searchsorted(teams, away)
    strength = base[:, None, :] + drift[:, None, :] * years[None, :, None]  # (team, row, 2)
    rows_idx = np.arange(len(kickoff))
    lam = np.exp(0.4 + strength[h, rows_idx, 0] - strength[a, rows_idx, 1])
    mu = np.exp(0.15 + strength[a, rows_idx, 0] - strength[h, rows_idx, 1])
    p1x2, pou = lines(lam, mu, CONFIG.rho)
    p1x2 = p1x2 * np.exp(rng.normal(0.0, noise, p1x2.shape))
    p1x2 /= p1x2.sum(axis=1, keepdims=True)
    pou[rng.random(len(kickoff)) < 0.2] = np.nan
    p1x2[rng.random(len(kickoff)) < 0.05] = np.nan
    p1x2[group == 3] = np.nan
    pou[group == 3] = np.nan
    inp = market_ratings.RatingsInput(
        kickoff=kickoff,
        group=group,
        home=home,
        away=away,
        closing={"1x2": p1x2, "ou25": pou},
        now=epoch(2022, 10, 5, 12),  # a Wednesday, a few weeks into season two
    )
    return inp, np.column_stack([lam, mu])


def subset(inp, rows, **changes):
    """The input restricted to ``rows`` (in that order), with fields replaced by ``changes``."""
    return replace(
        inp,
        kickoff=inp.kickoff[rows],
        group=inp.group[rows],
        home=inp.home[rows],
        away=inp.away[rows],
        closing={name: probs[rows] for name, probs in inp.closing.items()},
        **changes,
    )


def with_closing(inp, row, p1x2):
    """A copy of ``inp`` whose row ``row`` has the 1x2 closing line ``p1x2``."""
    closing = {name: probs.copy() for name, probs in inp.closing.items()}
    closing["1x2"][row] = p1x2
    return replace(inp, closing=closing)


def row_outputs(out, rows):
    """Every per-row output of ``out`` for ``rows``, flattened into named arrays."""
    fields = {
        "expected_goals": out.expected_goals,
        "fitted_at": out.fitted_at,
        "priced_home": out.priced_home,
        "priced_away": out.priced_away,
        "covered": out.covered,
        "strengths": out.strengths,
        **{f"probabilities {name}": probs for name, probs in out.probabilities.items()},
    }
    return {name: values[rows] for name, values in fields.items()}


@pytest.fixture(scope="module")
def world():
    """The synthetic input and its walk-forward output."""
    inp, _ = build_world()
    return inp, market_ratings.run(inp, CONFIG)


def test_every_row_is_predicted_with_weekly_cutoffs(world):
    inp, out = world
    n = len(inp.kickoff)
    for name, k in (("1x2", 3), ("ou25", 2), ("btts", 2)):
        assert out.probabilities[name].shape == (n, k)
        assert np.isfinite(out.probabilities[name]).all()
        np.testing.assert_allclose(out.probabilities[name].sum(axis=1), 1.0, atol=1e-12)
    assert np.isfinite(out.strengths).all()
    assert (out.fitted_at <= inp.kickoff).all()
    monday = out.fitted_at == timeline.week_start(inp.kickoff)
    assert (monday | (out.fitted_at == inp.now)).all()
    assert 0 < out.fits <= len(set(zip(inp.group, out.fitted_at, strict=True)))
    started = inp.kickoff < inp.now
    assert out.priced == (np.isfinite(inp.closing["1x2"]).all(axis=1) & started).sum()


def test_ratings_recover_the_rates_of_a_steady_market():
    inp, truth = build_world(drift=0.0, noise=0.0)
    out = market_ratings.run(inp, CONFIG)
    # Teams that have played all season: the ridge's pull is all that is left of the error.
    rows = (inp.group == 2) & (out.fitted_at >= inp.now - 4 * timeline.WEEK)
    assert rows.sum() > 20
    np.testing.assert_allclose(out.expected_goals[rows], truth[rows], rtol=5e-3)
    exact = market_ratings.run(inp, replace(CONFIG, ridge=1e-7))
    np.testing.assert_allclose(exact.expected_goals[rows], truth[rows], rtol=1e-5)
    # The newcomer's first match is a prior, far from the truth.
    newcomer = np.flatnonzero((inp.home == 112) | (inp.away == 112))[0]
    assert not out.covered[newcomer]


@pytest.mark.parametrize("split", ["before now", "after now"])
def test_appending_later_matches_changes_no_earlier_row(world, split):
    inp, _ = world
    cut = inp.now - 10 * timeline.WEEK if split == "before now" else inp.now + 2 * timeline.WEEK
    shuffled = subset(inp, np.random.default_rng(12).permutation(len(inp.kickoff)))
    early = np.flatnonzero(shuffled.kickoff <= cut)
    assert 50 < len(early) < len(shuffled.kickoff) - 50
    prefix = market_ratings.run(subset(shuffled, early), CONFIG)
    whole = market_ratings.run(shuffled, CONFIG)
    assert_same_rows(row_outputs(prefix, slice(None)), row_outputs(whole, early))


def test_input_order_does_not_matter(world):
    inp, out = world
    perm = np.random.default_rng(13).permutation(len(inp.kickoff))
    permuted = market_ratings.run(subset(inp, perm), CONFIG)
    assert_same_rows(row_outputs(permuted, slice(None)), row_outputs(out, perm))


def test_a_closing_line_never_feeds_its_own_or_earlier_forecasts(world):
    inp, out = world
    priced = np.flatnonzero(
        np.isfinite(inp.closing["1x2"]).all(axis=1) & (inp.group == 1) & (inp.kickoff < inp.now)
    )
    row = priced[len(priced) // 2]
    after = market_ratings.run(with_closing(inp, row, [0.02, 0.08, 0.90]), CONFIG)
    not_after = out.fitted_at <= inp.kickoff[row]
    assert not_after[row]
    assert_same_rows(row_outputs(after, not_after), row_outputs(out, not_after), atol=0.0)
    later_same_group = ~not_after & (inp.group == 1)
    moved = np.abs(after.probabilities["1x2"] - out.probabilities["1x2"]).max(axis=1)
    assert (moved[later_same_group] > 1e-3).any()
    other = inp.group != 1
    assert_same_rows(row_outputs(after, other), row_outputs(out, other), atol=0.0)


def test_closing_lines_from_now_on_are_ignored(world):
    inp, out = world
    future = np.flatnonzero(inp.kickoff >= inp.now)
    leaked = inp
    for row in future:
        leaked = with_closing(leaked, row, [0.9, 0.08, 0.02])
    again = market_ratings.run(leaked, CONFIG)
    assert_same_rows(row_outputs(again, slice(None)), row_outputs(out, slice(None)), atol=0.0)
    assert again.priced == out.priced


#: The long memory and the daily cut-off, both on.
REMEMBERING = replace(CONFIG, long_share=0.1, long_half_life_days=60.0, daily_cutoff=True)


def test_match_weights_add_a_long_memory_to_the_short_one():
    age = np.array([0.0, 14.0, 60.0, 120.0]) * walkforward.DAY
    np.testing.assert_allclose(
        market_ratings.match_weights(age, CONFIG), [1, 0.5, 0.5 ** (60 / 14), 0.5 ** (120 / 14)]
    )
    np.testing.assert_allclose(
        market_ratings.match_weights(
            age, replace(CONFIG, long_share=0.1, long_half_life_days=60.0)
        ),
        [1.1, 0.5 + 0.1 * 0.5 ** (14 / 60), 0.5 ** (60 / 14) + 0.05, 0.5 ** (120 / 14) + 0.025],
    )


@pytest.mark.parametrize("config", [CONFIG, REMEMBERING], ids=["as it is", "remembering"])
def test_each_row_comes_from_a_fit_on_the_priced_matches_before_its_cutoff(world, config):
    inp, out = world
    if config is not CONFIG:
        out = market_ratings.run(inp, config)
    priced = np.isfinite(inp.closing["1x2"]).all(axis=1) & (inp.kickoff < inp.now)
    home_rate, away_rate = implied_rates.solve_rates(
        inp.closing["1x2"], inp.closing["ou25"], CONFIG.rho
    )
    window = config.window_days * walkforward.DAY
    rows = np.flatnonzero(
        (inp.group != 3) & (out.fitted_at > inp.kickoff.min() + 8 * timeline.WEEK)
    )
    for row in np.random.default_rng(15).choice(rows, 8, replace=False):
        cut = out.fitted_at[row]
        train = np.flatnonzero(
            priced
            & (inp.group == inp.group[row])
            & (inp.kickoff < cut)
            & (inp.kickoff >= cut - window)
        )
        ids = np.unique(np.r_[inp.home[train], inp.away[train]])
        age = inp.kickoff[train].max() - inp.kickoff[train]
        ratings = market_ratings.fit_ratings(
            np.searchsorted(ids, inp.home[train]),
            np.searchsorted(ids, inp.away[train]),
            np.log(home_rate[train]),
            np.log(away_rate[train]),
            0.5 ** (age / (config.half_life_days * walkforward.DAY))
            + config.long_share * 0.5 ** (age / (config.long_half_life_days * walkforward.DAY)),
            len(ids),
            config.ridge,
        )
        expected = market_ratings.rates(
            ratings, [np.searchsorted(ids, inp.home[row])], [np.searchsorted(ids, inp.away[row])]
        )
        np.testing.assert_allclose(out.expected_goals[row], np.ravel(expected), rtol=1e-9)


def midweek_world():
    """The synthetic input with group 2's fifth round of season two moved from Saturday to the
    next Tuesday: the same week as its sixth round."""
    inp, _ = build_world()
    kickoff = inp.kickoff.copy()
    group2 = np.flatnonzero(inp.group == 2)
    season2 = group2[inp.kickoff[group2] >= epoch(2022, 8, 1)]
    rounds = np.unique(inp.kickoff[season2] - inp.kickoff[season2] % timeline.WEEK)
    fifth = season2[(inp.kickoff[season2] - inp.kickoff[season2] % timeline.WEEK) == rounds[4]]
    kickoff[fifth] += 3 * walkforward.DAY
    inp = replace(inp, kickoff=kickoff, now=int(kickoff.max()) + 1)
    sixth = season2[(inp.kickoff[season2] - inp.kickoff[season2] % timeline.WEEK) == rounds[5]]
    return inp, fifth, sixth


def test_a_daily_cutoff_fits_each_day_on_the_earlier_days_of_its_week():
    inp, fifth, sixth = midweek_world()
    assert (
        timeline.week_start(inp.kickoff[fifth]) == timeline.week_start(inp.kickoff[sixth][0])
    ).all()
    weekly = market_ratings.run(inp, CONFIG)
    daily = market_ratings.run(inp, replace(CONFIG, daily_cutoff=True))
    np.testing.assert_array_equal(daily.fitted_at, inp.kickoff - inp.kickoff % walkforward.DAY)
    moved = with_closing(inp, fifth[0], [0.02, 0.08, 0.90])
    weekly_moved = market_ratings.run(moved, CONFIG)
    daily_moved = market_ratings.run(moved, replace(CONFIG, daily_cutoff=True))
    # The Tuesday line feeds Saturday's forecasts only when the fits are made daily.
    np.testing.assert_array_equal(weekly_moved.expected_goals[sixth], weekly.expected_goals[sixth])
    assert np.abs(daily_moved.expected_goals[sixth] - daily.expected_goals[sixth]).max() > 1e-3
    # Never its own day's forecasts, nor earlier ones.
    not_after = daily.fitted_at <= inp.kickoff[fifth[0]]
    assert not_after[fifth].all()
    assert_same_rows(row_outputs(daily_moved, not_after), row_outputs(daily, not_after), atol=0.0)


def test_priced_counts_are_the_matches_inside_the_window(world):
    inp, out = world
    window = CONFIG.window_days * walkforward.DAY
    priced = np.isfinite(inp.closing["1x2"]).all(axis=1) & (inp.kickoff < inp.now)
    for row in np.random.default_rng(14).choice(len(inp.kickoff), 30, replace=False):
        cut = out.fitted_at[row]
        inside = (
            (inp.group == inp.group[row])
            & (inp.kickoff < cut)
            & (inp.kickoff >= cut - window)
            & priced
        )
        for team, counted in (
            (inp.home[row], out.priced_home[row]),
            (inp.away[row], out.priced_away[row]),
        ):
            assert counted == (inside & ((inp.home == team) | (inp.away == team))).sum()


@pytest.mark.parametrize("threshold", [1, 3, 6])
def test_covered_means_both_sides_have_enough_priced_matches(world, threshold):
    inp, _ = world
    out = market_ratings.run(inp, replace(CONFIG, min_priced_matches=threshold))
    fewer = np.minimum(out.priced_home, out.priced_away)
    priced = np.isfinite(inp.closing["1x2"]).all(axis=1) & (inp.kickoff < inp.now)
    window = CONFIG.window_days * walkforward.DAY
    group_matches = np.array(
        [
            (priced & (inp.group == g) & (inp.kickoff < cut) & (inp.kickoff >= cut - window)).sum()
            for g, cut in zip(inp.group, out.fitted_at, strict=True)
        ]
    )
    fitted = group_matches >= CONFIG.min_group_matches
    assert fitted.any() and not fitted.all()
    np.testing.assert_array_equal(out.covered, fitted & (fewer >= threshold))
    assert out.covered.any()
    assert (~out.covered & fitted).any()


def test_uncovered_rows(world):
    inp, out = world
    # The first week of each group has nothing before it.
    first = out.fitted_at == out.fitted_at[inp.group == inp.group].min()
    assert not out.covered[first].any()
    # The newcomer's first match: no priced history, the newcomer prior, not covered.
    newcomer = (inp.home == 112) | (inp.away == 112)
    row = np.flatnonzero(newcomer)[inp.kickoff[newcomer].argmin()]
    side = 0 if inp.home[row] == 112 else 2
    assert (out.priced_home if side == 0 else out.priced_away)[row] == 0
    assert not out.covered[row]
    np.testing.assert_allclose(out.strengths[row, side : side + 2], -CONFIG.newcomer_strength)
    # A group without a single price is never covered, yet every row has a forecast.
    unpriced = inp.group == 3
    assert not out.covered[unpriced].any()
    assert (out.priced_home[unpriced] == 0).all()
    assert np.isfinite(out.probabilities["1x2"][unpriced]).all()


def test_a_group_below_min_group_matches_is_not_fitted(world):
    inp, out = world
    strict = market_ratings.run(inp, replace(CONFIG, min_group_matches=10**6))
    assert strict.fits == 0
    assert not strict.covered.any()
    np.testing.assert_array_equal(strict.priced_home, out.priced_home)


def test_expected_goals_follow_the_strengths(world):
    inp, out = world
    rows = np.flatnonzero((out.fitted_at == inp.now) & (inp.group == 1))[:10]
    a_h, d_h, a_a, d_a, home = out.strengths[rows].T
    ratio_home = out.expected_goals[rows, 0] / np.exp(home + a_h - d_a)
    ratio_away = out.expected_goals[rows, 1] / np.exp(a_a - d_h)
    np.testing.assert_allclose(ratio_home, ratio_home[0])  # one intercept per fit
    np.testing.assert_allclose(ratio_home, ratio_away)
    expected = market_probabilities(
        score_matrix(out.expected_goals[:, 0], out.expected_goals[:, 1], CONFIG.rho)
    )
    np.testing.assert_allclose(out.probabilities["1x2"], expected["1x2"], atol=1e-12)


def test_empty_input():
    empty = np.array([], dtype=np.int64)
    out = market_ratings.run(
        market_ratings.RatingsInput(empty, empty, empty, empty, closing={}, now=0)
    )
    assert out.probabilities["1x2"].shape == (0, 3)
    assert out.covered.shape == (0,)
    assert out.fits == 0


def test_mismatched_shapes_are_rejected(world):
    inp, _ = world
    with pytest.raises(ValueError):
        market_ratings.run(replace(inp, home=inp.home[:-1]))
    with pytest.raises(ValueError):
        market_ratings.run(replace(inp, closing={"1x2": inp.closing["1x2"][:, :2]}))


WITH_HANDICAP = replace(
    CONFIG, observation_weights=(("1x2", 1.0), ("ou25", 1.0), ("ah", 1.0), ("ou", 1.0))
)


def with_handicap(inp, truth, shift=1.1):
    """``inp`` with closing handicap and over/under lines priced from the true rates with the
    home side ``shift`` times stronger (what its 1x2 line does not say), 1/5 of rows unquoted."""
    n = len(inp.kickoff)
    lam, mu = truth[:, 0] * shift, truth[:, 1] / shift
    ah_line = np.round(-2 * np.log(lam / mu)) / 4  # a quarter line near the favourite's edge
    ou_line = np.resize([2.25, 2.75, 3.0], n)
    given = handicap_lines(lam, mu, CONFIG.rho, ah_line, ou_line)
    unquoted = np.random.default_rng(16).random(n) < 0.2
    for line, probs in given.values():
        line[unquoted] = np.nan
        probs[unquoted] = np.nan
    return replace(inp, closing_lines=given)


@pytest.fixture(scope="module")
def handicapped():
    """The synthetic input with handicap lines, and its output learning from them."""
    inp, truth = build_world()
    inp = with_handicap(inp, truth)
    return inp, market_ratings.run(inp, WITH_HANDICAP)


def test_the_ratings_learn_from_handicap_lines_at_their_weight(world, handicapped):
    _, plain = world
    inp, out = handicapped
    assert out.priced == plain.priced  # a line adds to the 1x2 line, never replaces it
    # At weight 0 the lines change nothing; at weight 1 the fitted home sides are stronger.
    zero = (("1x2", 1.0), ("ou25", 1.0), ("ah", 0.0), ("ou", 0.0))
    off = market_ratings.run(inp, replace(CONFIG, observation_weights=zero))
    assert_same_rows(row_outputs(off, slice(None)), row_outputs(plain, slice(None)), atol=0.0)
    fitted = plain.covered & out.covered
    assert fitted.sum() > 100
    assert (out.strengths[fitted, 4] > plain.strengths[fitted, 4]).mean() > 0.9


def test_a_handicap_line_never_feeds_its_own_or_earlier_forecasts(handicapped):
    inp, out = handicapped
    line, probs = inp.closing_lines["ah"]
    quoted = np.flatnonzero(np.isfinite(line) & (inp.group == 2) & (inp.kickoff < inp.now))
    row = quoted[len(quoted) // 2]
    moved_probs = probs.copy()
    moved_probs[row] = [0.95, 0.05]
    after = market_ratings.run(
        replace(inp, closing_lines={**inp.closing_lines, "ah": (line, moved_probs)}),
        WITH_HANDICAP,
    )
    not_after = out.fitted_at <= inp.kickoff[row]
    assert_same_rows(row_outputs(after, not_after), row_outputs(out, not_after), atol=0.0)
    moved = np.abs(after.expected_goals - out.expected_goals).max(axis=1)
    assert (moved[~not_after & (inp.group == 2)] > 1e-4).any()


def test_handicap_lines_from_now_on_are_ignored(handicapped):
    inp, out = handicapped
    future = inp.kickoff >= inp.now
    leaked = {
        market: (np.where(future, 0.0, line), np.where(future[:, None], [0.9, 0.1], probs))
        for market, (line, probs) in inp.closing_lines.items()
    }
    again = market_ratings.run(replace(inp, closing_lines=leaked), WITH_HANDICAP)
    assert_same_rows(row_outputs(again, slice(None)), row_outputs(out, slice(None)), atol=0.0)


def test_wrong_closing_lines_are_rejected(handicapped):
    inp, _ = handicapped
    line, probs = inp.closing_lines["ah"]
    for wrong in (
        {"ah": (line[:-1], probs)},
        {"ah": (line, probs[:, :1])},
        {"btts": (line, probs)},
        {"ou25": (line, probs)},
    ):
        with pytest.raises(ValueError):
            market_ratings.run(replace(inp, closing_lines=wrong), WITH_HANDICAP)


def test_the_walk_forward_passes_closing_lines_to_the_ratings(handicapped):
    inp, _ = handicapped
    played = inp.kickoff < inp.now
    chain = walkforward.run(
        walkforward.WalkForwardInput(
            kickoff=inp.kickoff,
            group=inp.group,
            home=inp.home,
            away=inp.away,
            home_goals=np.where(played, 1.0, np.nan),
            away_goals=np.where(played, 1.0, np.nan),
            market={},
            now=inp.now,
            closing=inp.closing,
            closing_lines=inp.closing_lines,
        )
    )
    expected = market_ratings.run(inp, walkforward.RATINGS_CONFIG)
    np.testing.assert_array_equal(chain.ratings.expected_goals, expected.expected_goals)
    # The over/under lines at other lines than 2.5 weigh in by default.
    without = market_ratings.run(replace(inp, closing_lines=None), walkforward.RATINGS_CONFIG)
    assert not np.array_equal(chain.ratings.expected_goals, without.expected_goals)
