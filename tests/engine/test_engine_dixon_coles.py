"""Dixon-Coles fit: gradient, parameter recovery, bounds, priors and warm starts."""

import numpy as np
import pytest
from scipy.optimize import check_grad

from engine.model import dixon_coles
from engine.model.scores import low_score_correction, market_probabilities, score_matrix


def round_robin(n_teams, rounds):
    """(home_idx, away_idx) of every ordered pair of teams, ``rounds`` times over."""
    pairs = [(h, a) for h in range(n_teams) for a in range(n_teams) if h != a]
    home, away = np.array(pairs * rounds).T
    return home, away


def simulate(fit, home_idx, away_idx, rng):
    """Scores drawn from the Dixon-Coles distribution of ``fit``."""
    lam, mu = dixon_coles.rates(fit, home_idx, away_idx)
    matrix = score_matrix(lam, mu, fit.rho).reshape(len(lam), -1)
    draws = (matrix.cumsum(axis=1) < rng.random(len(lam))[:, None]).sum(axis=1)
    size = int(np.sqrt(matrix.shape[1]))
    return (draws // size).astype(float), (draws % size).astype(float)


def true_fit(n_teams, rng, rho=-0.08):
    """Known parameters: strengths with sum zero, a realistic home advantage and rho."""
    attack = rng.normal(0.0, 0.3, n_teams)
    defence = rng.normal(0.0, 0.3, n_teams)
    return dixon_coles.DixonColesFit(
        attack=attack - attack.mean(),
        defence=defence - defence.mean(),
        intercept=0.15,
        home=0.25,
        rho=rho,
        converged=True,
    )


@pytest.fixture(scope="module")
def league():
    """A simulated 16-team league, 10 double round robins (2,400 matches), and its truth."""
    rng = np.random.default_rng(20240601)
    truth = true_fit(16, rng)
    home, away = round_robin(16, 10)
    home_goals, away_goals = simulate(truth, home, away, rng)
    return truth, home, away, home_goals, away_goals


@pytest.fixture(scope="module")
def fitted(league):
    """The maximum-likelihood fit of the simulated league."""
    _, home, away, home_goals, away_goals = league
    weights = np.ones(len(home))
    return dixon_coles.fit(
        home, away, home_goals, away_goals, weights, 16, config=dixon_coles.FitConfig(ridge=1.0)
    )


@pytest.mark.parametrize("rho", [-0.12, 0.0, 0.1])
def test_analytic_gradient_matches_numerical(league, rho):
    truth, home, away, home_goals, away_goals = league
    rng = np.random.default_rng(7)
    weights = rng.uniform(0.2, 1.0, len(home))
    prior = (rng.normal(0, 0.1, 16), rng.normal(0, 0.1, 16))
    point = dixon_coles.pack(truth) + rng.normal(0.0, 0.05, 2 * 16 + 3)
    point[-1] = rho

    def value(p):
        return dixon_coles.objective(
            p, home, away, home_goals, away_goals, weights, 16, 3.0, prior
        )[0]

    def gradient(p):
        return dixon_coles.objective(
            p, home, away, home_goals, away_goals, weights, 16, 3.0, prior
        )[1]

    error = check_grad(value, gradient, point, epsilon=1e-7)
    assert error < 1e-5 * max(1.0, np.linalg.norm(gradient(point)))
    assert np.linalg.norm(gradient(point)) > 1e-3  # a point away from the optimum


def test_fit_recovers_known_parameters(league, fitted):
    truth = league[0]
    assert fitted.converged
    assert fitted.home == pytest.approx(truth.home, abs=0.05)
    assert fitted.intercept == pytest.approx(truth.intercept, abs=0.05)
    assert fitted.rho == pytest.approx(truth.rho, abs=0.06)
    assert np.sqrt(np.mean((fitted.attack - truth.attack) ** 2)) < 0.08
    assert np.sqrt(np.mean((fitted.defence - truth.defence) ** 2)) < 0.08
    assert np.corrcoef(fitted.attack, truth.attack)[0, 1] > 0.95
    assert np.corrcoef(fitted.defence, truth.defence)[0, 1] > 0.95


def test_ridge_identifies_the_model(fitted):
    assert fitted.attack.sum() == pytest.approx(0.0, abs=1e-5)
    assert fitted.defence.sum() == pytest.approx(0.0, abs=1e-5)


def test_fitted_score_matrix_sums_to_one(fitted):
    home, away = round_robin(16, 1)
    lam, mu = dixon_coles.rates(fitted, home, away)
    matrix = score_matrix(lam, mu, fitted.rho)
    np.testing.assert_allclose(matrix.sum(axis=(1, 2)), 1.0, atol=1e-12)
    assert (matrix >= 0).all()
    probs = market_probabilities(matrix)
    for market in ("1x2", "ou25", "btts"):
        np.testing.assert_allclose(probs[market].sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(dixon_coles.probabilities(fitted, home, away)["1x2"], probs["1x2"])


def test_stronger_ridge_shrinks_strengths(league, fitted):
    _, home, away, home_goals, away_goals = league
    strong = dixon_coles.fit(
        home,
        away,
        home_goals,
        away_goals,
        np.ones(len(home)),
        16,
        config=dixon_coles.FitConfig(ridge=500),
    )
    assert np.abs(strong.attack).sum() < 0.7 * np.abs(fitted.attack).sum()


def test_rho_stays_within_its_bound_and_tau_positive():
    rng = np.random.default_rng(3)
    truth = true_fit(10, rng, rho=0.0)
    home, away = round_robin(10, 6)
    home_goals, away_goals = simulate(truth, home, away, rng)
    # Far more 0-0 and 1-1 draws than Poisson allows: negative rho inflates exactly those, and
    # unbounded this data wants rho near -0.5, where tau(1-0) would turn negative for mu > 2.
    draws = rng.random(len(home)) < 0.3
    home_goals[draws] = away_goals[draws] = rng.integers(0, 2, draws.sum())
    config = dixon_coles.FitConfig(rho_bound=0.05)
    fit = dixon_coles.fit(home, away, home_goals, away_goals, np.ones(len(home)), 10, config=config)
    assert fit.rho == pytest.approx(-0.05, abs=1e-9)
    lam, mu = dixon_coles.rates(fit, home, away)
    assert (low_score_correction(lam, mu, fit.rho) > 0).all()


def test_team_without_matches_sits_at_its_prior(league):
    _, home, away, home_goals, away_goals = league
    keep = (home != 3) & (away != 3)
    centre = np.zeros(16)
    centre[3] = -0.2
    fit = dixon_coles.fit(
        home[keep],
        away[keep],
        home_goals[keep],
        away_goals[keep],
        np.ones(keep.sum()),
        16,
        prior=(centre, centre),
    )
    assert fit.attack[3] == pytest.approx(-0.2, abs=1e-4)
    assert fit.defence[3] == pytest.approx(-0.2, abs=1e-4)


def test_warm_start_reaches_the_same_optimum_faster(league, fitted):
    _, home, away, home_goals, away_goals = league
    weights = np.ones(len(home))
    weights[-200:] = 0.5
    config = dixon_coles.FitConfig(ridge=1.0)
    cold = dixon_coles.fit(home, away, home_goals, away_goals, weights, 16, config=config)
    warm = dixon_coles.fit(
        home, away, home_goals, away_goals, weights, 16, init=fitted, config=config
    )
    assert warm.converged
    np.testing.assert_allclose(dixon_coles.pack(warm), dixon_coles.pack(cold), atol=1e-4)
    assert warm.iterations < cold.iterations


def test_weights_matter(league):
    _, home, away, home_goals, away_goals = league
    weights = np.ones(len(home))
    weights[home == 0] = 1e-3
    a = dixon_coles.fit(home, away, home_goals, away_goals, np.ones(len(home)), 16)
    b = dixon_coles.fit(home, away, home_goals, away_goals, weights, 16)
    assert abs(a.attack[0] - b.attack[0]) > 1e-3


def test_no_data_gives_the_prior_fit():
    empty = np.array([], dtype=int)
    fit = dixon_coles.fit(empty, empty, np.array([]), np.array([]), np.array([]), 4)
    assert fit.intercept == dixon_coles.PRIOR_INTERCEPT
    assert fit.home == dixon_coles.PRIOR_HOME
    np.testing.assert_array_equal(fit.attack, np.zeros(4))


def test_unseen_team_index_uses_the_given_strengths(fitted):
    lam, mu = dixon_coles.rates(fitted, [-1], [0], unseen=(-0.3, -0.1))
    expected_lam = np.exp(fitted.intercept + fitted.home - 0.3 - fitted.defence[0])
    expected_mu = np.exp(fitted.intercept + fitted.attack[0] + 0.1)
    assert lam[0] == pytest.approx(expected_lam)
    assert mu[0] == pytest.approx(expected_mu)


def test_init_with_another_team_count_is_rejected(fitted):
    home, away = round_robin(3, 1)
    goals = np.ones(len(home))
    with pytest.raises(ValueError):
        dixon_coles.fit(home, away, goals, goals, goals, 3, init=fitted)
