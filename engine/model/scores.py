"""Score matrices: the Dixon-Coles joint distribution of a match's goals, and the market
probabilities (1x2, over/under 2.5, both teams to score) it implies."""

import numpy as np

#: Goals per side the matrices cover; the mass beyond is below 1e-6 for any realistic rate.
MAX_GOALS = 10


def low_score_correction(home_rate, away_rate, rho):
    """Dixon-Coles tau for the four low scores, shape (..., 2, 2): [[0-0, 0-1], [1-0, 1-1]]."""
    lam, mu, rho = np.broadcast_arrays(
        np.asarray(home_rate, dtype=float),
        np.asarray(away_rate, dtype=float),
        np.asarray(rho, dtype=float),
    )
    return np.stack(
        [
            np.stack([1.0 - lam * mu * rho, 1.0 + lam * rho], axis=-1),
            np.stack([1.0 + mu * rho, 1.0 - rho], axis=-1),
        ],
        axis=-2,
    )


def score_matrix(home_rate, away_rate, rho=0.0, max_goals=MAX_GOALS):
    """P(home scores i, away scores j) for each match, shape (n, max_goals+1, max_goals+1).

    Independent Poisson goals with rates ``home_rate`` and ``away_rate``, the Dixon-Coles
    correction ``rho`` on 0-0, 0-1, 1-0 and 1-1, truncated at ``max_goals`` and renormalised so
    each matrix sums to exactly 1.
    """
    from scipy.special import gammaln  # SciPy loads with the first model run (engine.model)

    lam = np.atleast_1d(np.asarray(home_rate, dtype=float))
    mu = np.atleast_1d(np.asarray(away_rate, dtype=float))
    goals = np.arange(max_goals + 1)
    log_fact = gammaln(goals + 1)
    home_pmf = np.exp(goals * np.log(lam)[:, None] - lam[:, None] - log_fact)
    away_pmf = np.exp(goals * np.log(mu)[:, None] - mu[:, None] - log_fact)
    matrix = home_pmf[:, :, None] * away_pmf[:, None, :]
    matrix[:, :2, :2] *= low_score_correction(lam, mu, rho)
    matrix = np.clip(matrix, 0.0, None)
    return matrix / matrix.sum(axis=(1, 2), keepdims=True)


def market_probabilities(matrix):
    """Probabilities of every market's selections from score matrices (n, G, G).

    Returns ``{"1x2": (n, 3) home/draw/away, "ou25": (n, 2) over/under, "btts": (n, 2) yes/no}``.
    """
    size = matrix.shape[-1]
    home_goals, away_goals = np.indices((size, size))
    home = (matrix * (home_goals > away_goals)).sum(axis=(1, 2))
    draw = np.trace(matrix, axis1=1, axis2=2)
    over = (matrix * (home_goals + away_goals > 2)).sum(axis=(1, 2))
    both = matrix[:, 1:, 1:].sum(axis=(1, 2))
    return {
        "1x2": np.stack([home, draw, 1.0 - home - draw], axis=1),
        "ou25": np.stack([over, 1.0 - over], axis=1),
        "btts": np.stack([both, 1.0 - both], axis=1),
    }
