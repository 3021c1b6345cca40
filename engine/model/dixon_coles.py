"""Dixon-Coles goal model: weighted, ridge-penalised maximum likelihood with an analytic gradient.

The home side of match i scores Poisson(lambda_i) goals and the away side Poisson(mu_i), with

    log lambda_i = intercept + home + attack[home_i] - defence[away_i]
    log mu_i     = intercept + attack[away_i] - defence[home_i]

and the Dixon-Coles correction tau(rho) on the scores 0-0, 0-1, 1-0 and 1-1. A higher ``defence``
means a team concedes fewer goals. The ridge penalty on attack and defence identifies the model
(without it a constant could move between attack, defence and intercept) and pulls teams with
little history towards a prior: the average team (0) unless the caller gives per-team prior
means, e.g. a below-average one for teams new to a league.
"""

from dataclasses import dataclass, replace

import numpy as np

from engine.model.scores import market_probabilities, score_matrix

#: Rates of an average team with no data at all: about 1.2 away goals and 1.5 home goals.
PRIOR_INTERCEPT = float(np.log(1.2))
PRIOR_HOME = float(np.log(1.25))

#: Box on log-scale strengths; generous for football, and it keeps exp() far from overflow.
STRENGTH_BOUND = 3.0
HOME_BOUND = 1.0

#: tau is floored here. With |rho| <= 0.15 tau stays positive for rates below 6.7 goals, so the
#: floor is only reached by absurd trial points of the line search, never near an optimum.
_TAU_FLOOR = 1e-12


@dataclass(frozen=True)
class FitConfig:
    """Settings of one maximum-likelihood fit."""

    ridge: float = 4.0  # L2 penalty on attack and defence, in units of (weighted) matches
    rho_bound: float = 0.15  # |rho| bound; tau stays positive for rates below 1 / bound
    max_iter: int = 500
    gtol: float = 1e-7  # on the projected gradient of the per-match objective
    ftol: float = 1e-13  # relative objective change; gtol is what normally stops a fit


@dataclass(frozen=True)
class DixonColesFit:
    """Fitted parameters (log scale) for ``len(attack)`` teams, and how the optimiser ended."""

    attack: np.ndarray
    defence: np.ndarray
    intercept: float
    home: float
    rho: float
    converged: bool
    iterations: int = 0
    objective: float = float("nan")

    @property
    def n_teams(self) -> int:
        """Number of teams the fit covers."""
        return len(self.attack)


def prior_fit(n_teams: int) -> DixonColesFit:
    """The fit with no data: every team average, typical league goal rates, no correction."""
    return DixonColesFit(
        attack=np.zeros(n_teams),
        defence=np.zeros(n_teams),
        intercept=PRIOR_INTERCEPT,
        home=PRIOR_HOME,
        rho=0.0,
        converged=True,
    )


def _prior(prior, n_teams: int) -> tuple[np.ndarray, np.ndarray]:
    """Ridge centres (attack, defence) of each team: zeros unless given."""
    if prior is None:
        return np.zeros(n_teams), np.zeros(n_teams)
    attack, defence = (np.asarray(p, dtype=float) for p in prior)
    if attack.shape != (n_teams,) or defence.shape != (n_teams,):
        raise ValueError("prior must be two arrays of length n_teams")
    return attack, defence


def pack(fit: DixonColesFit) -> np.ndarray:
    """Parameter vector [attack, defence, intercept, home, rho] of a fit."""
    return np.concatenate([fit.attack, fit.defence, [fit.intercept, fit.home, fit.rho]])


def unpack(params: np.ndarray, n_teams: int) -> tuple[np.ndarray, np.ndarray, float, float, float]:
    """(attack, defence, intercept, home, rho) from a parameter vector."""
    return (
        params[:n_teams],
        params[n_teams : 2 * n_teams],
        float(params[2 * n_teams]),
        float(params[2 * n_teams + 1]),
        float(params[2 * n_teams + 2]),
    )


class _Data:
    """Arrays of one fit, with the low-score cells located once rather than at every evaluation."""

    def __init__(self, home_idx, away_idx, home_goals, away_goals, weights, n_teams, prior):
        self.prior_attack, self.prior_defence = _prior(prior, n_teams)
        self.home_idx = np.asarray(home_idx, dtype=np.intp)
        self.away_idx = np.asarray(away_idx, dtype=np.intp)
        self.x = np.asarray(home_goals, dtype=float)
        self.y = np.asarray(away_goals, dtype=float)
        self.w = np.asarray(weights, dtype=float)
        self.n_teams = int(n_teams)
        self.total_weight = float(self.w.sum())
        self.cells = [
            np.flatnonzero((self.x == i) & (self.y == j))
            for i, j in ((0, 0), (0, 1), (1, 0), (1, 1))
        ]


def _objective(params: np.ndarray, data: _Data, ridge: float) -> tuple[float, np.ndarray]:
    """Penalised negative log-likelihood per unit of weight and its gradient."""
    n = data.n_teams
    attack, defence = params[:n], params[n : 2 * n]
    dev_a = attack - data.prior_attack
    dev_d = defence - data.prior_defence
    intercept, home, rho = params[2 * n], params[2 * n + 1], params[2 * n + 2]
    hi, ai, w = data.home_idx, data.away_idx, data.w

    eta_h = intercept + home + attack[hi] - defence[ai]
    eta_a = intercept + attack[ai] - defence[hi]
    lam = np.exp(eta_h)
    mu = np.exp(eta_a)
    # Plain sums rather than np.dot: BLAS threads oversubscribe a busy 2-core machine badly.
    loglik = (w * (data.x * eta_h - lam + data.y * eta_a - mu)).sum()
    # Scores of the Poisson parts with respect to the two linear predictors.
    g_h = data.x - lam
    g_a = data.y - mu
    g_rho = 0.0

    c00, c01, c10, c11 = data.cells
    lm = lam[c00] * mu[c00]
    for cell, tau, d_h, d_a, d_rho in (
        (c00, 1.0 - lm * rho, -lm * rho, -lm * rho, -lm),
        (c01, 1.0 + lam[c01] * rho, lam[c01] * rho, 0.0, lam[c01]),
        (c10, 1.0 + mu[c10] * rho, 0.0, mu[c10] * rho, mu[c10]),
        (c11, np.full(len(c11), 1.0 - rho), 0.0, 0.0, -1.0),
    ):
        if len(cell) == 0:
            continue
        ok = tau > _TAU_FLOOR
        safe = np.where(ok, tau, _TAU_FLOOR)
        inv = np.where(ok, 1.0 / safe, 0.0)
        wc = w[cell]
        loglik += (wc * np.log(safe)).sum()
        g_h[cell] += d_h * inv
        g_a[cell] += d_a * inv
        g_rho += (wc * d_rho * inv).sum()

    wg_h = w * g_h
    wg_a = w * g_a
    grad = np.empty_like(params)
    grad[:n] = -(np.bincount(hi, wg_h, n) + np.bincount(ai, wg_a, n)) + ridge * dev_a
    grad[n : 2 * n] = np.bincount(ai, wg_h, n) + np.bincount(hi, wg_a, n) + ridge * dev_d
    grad[2 * n] = -(wg_h.sum() + wg_a.sum())
    grad[2 * n + 1] = -wg_h.sum()
    grad[2 * n + 2] = -g_rho
    value = -loglik + 0.5 * ridge * ((dev_a * dev_a).sum() + (dev_d * dev_d).sum())
    scale = max(data.total_weight, 1.0)
    value /= scale
    grad /= scale
    # At the optimum the ridge makes attack and defence deviate from their priors by zero on sum
    # (the likelihood cannot tell a shift of all attacks from one of the intercept), so these
    # terms leave the minimiser alone; they only give those nearly flat directions unit
    # curvature, which saves iterations.
    sum_a, sum_d = dev_a.sum(), dev_d.sum()
    per_team = 1.0 / max(n, 1)
    value += 0.5 * (sum_a * sum_a + sum_d * sum_d) * per_team
    grad[:n] += sum_a * per_team
    grad[n : 2 * n] += sum_d * per_team
    return value, grad


def objective(
    params, home_idx, away_idx, home_goals, away_goals, weights, n_teams, ridge, prior=None
) -> tuple[float, np.ndarray]:
    """Penalised negative log-likelihood (per unit of total weight) and its analytic gradient.

    The log-factorial constants are left out. ``params`` is laid out as :func:`pack` makes it;
    ``prior`` is as in :func:`fit`.
    """
    data = _Data(home_idx, away_idx, home_goals, away_goals, weights, n_teams, prior)
    return _objective(np.asarray(params, dtype=float), data, ridge)


def fit(
    home_idx,
    away_idx,
    home_goals,
    away_goals,
    weights,
    n_teams: int,
    init: DixonColesFit | None = None,
    config: FitConfig = FitConfig(),
    prior=None,
) -> DixonColesFit:
    """Maximum-likelihood Dixon-Coles fit (L-BFGS-B) of ``n_teams`` teams on weighted matches.

    ``home_idx``/``away_idx`` are dense team indices in [0, n_teams); ``weights`` are the
    non-negative weight of each match (time decay). ``init`` warm-starts the optimiser: a fit
    with the same ``n_teams`` (e.g. last week's, reindexed, newcomers at 0). ``prior`` is None
    (every team shrunk towards the average, 0) or a pair (prior_attack, prior_defence) of arrays
    of length ``n_teams``: the centres the ridge pulls each team towards.
    """
    data = _Data(home_idx, away_idx, home_goals, away_goals, weights, n_teams, prior)
    centre = replace(prior_fit(n_teams), attack=data.prior_attack, defence=data.prior_defence)
    start = pack(init if init is not None else centre)
    if len(start) != 2 * n_teams + 3:
        raise ValueError("init covers a different number of teams")
    if len(data.x) == 0 or data.total_weight <= 0.0:
        return centre
    rho_bound = config.rho_bound
    bounds = (
        [(-STRENGTH_BOUND, STRENGTH_BOUND)] * (2 * n_teams + 1)
        + [(-HOME_BOUND, HOME_BOUND)]
        + [(-rho_bound, rho_bound)]
    )
    start = np.clip(start, [b[0] for b in bounds], [b[1] for b in bounds])
    from scipy.optimize import minimize  # SciPy loads with the first fit (engine.model)

    result = minimize(
        _objective,
        start,
        args=(data, config.ridge),
        jac=True,
        method="L-BFGS-B",
        bounds=bounds,
        options={"maxiter": config.max_iter, "gtol": config.gtol, "ftol": config.ftol},
    )
    attack, defence, intercept, home, rho = unpack(result.x, n_teams)
    return DixonColesFit(
        attack=attack.copy(),
        defence=defence.copy(),
        intercept=intercept,
        home=home,
        rho=rho,
        converged=bool(result.success),
        iterations=int(result.nit),
        objective=float(result.fun),
    )


def strengths(fit: DixonColesFit, idx, unseen=(0.0, 0.0)) -> tuple[np.ndarray, np.ndarray]:
    """(attack, defence) of teams by index; -1 is a team the fit has not seen, given ``unseen``."""
    attack = np.append(fit.attack, unseen[0])
    defence = np.append(fit.defence, unseen[1])
    idx = np.asarray(idx, dtype=np.intp)
    return attack[idx], defence[idx]


def rates(fit: DixonColesFit, home_idx, away_idx, unseen=(0.0, 0.0)):
    """Expected goals (home_rate, away_rate) of matches between teams of ``fit``.

    An index of -1 stands for a team the fit has never seen: it gets the (attack, defence) in
    ``unseen``, by default the average team's (0, 0) that the ridge penalty would give it.
    """
    att_h, def_h = strengths(fit, home_idx, unseen)
    att_a, def_a = strengths(fit, away_idx, unseen)
    home_rate = np.exp(fit.intercept + fit.home + att_h - def_a)
    away_rate = np.exp(fit.intercept + att_a - def_h)
    return home_rate, away_rate


def probabilities(fit: DixonColesFit, home_idx, away_idx, unseen=(0.0, 0.0)):
    """Market probabilities ({"1x2": (n,3), "ou25": (n,2), "btts": (n,2)}) of matches."""
    home_rate, away_rate = rates(fit, home_idx, away_idx, unseen)
    return market_probabilities(score_matrix(home_rate, away_rate, fit.rho))
