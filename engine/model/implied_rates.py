"""The Poisson goal rates a match's prices imply: the (lambda_home, lambda_away) whose score matrix
reproduces its de-margined closing probabilities (1x2, over/under 2.5, and the Asian handicap and
over/under at other lines) best in weighted least squares, solved by Levenberg-Marquardt on the log
rates with analytic derivatives. ``engine.model.market_ratings`` fits team ratings to them."""

import numpy as np

from engine.model.scores import score_matrix


def _matrix_and_derivatives(log_rates: np.ndarray, rho: float):
    """Score matrices (n, G, G) and their derivatives with respect to log lambda_home and
    log lambda_away, each (n, G, G)."""
    lam, mu = np.exp(log_rates[:, 0]), np.exp(log_rates[:, 1])
    matrix = score_matrix(lam, mu, rho)
    size = matrix.shape[-1]
    goals = np.arange(size, dtype=float)
    # d log Poisson(i; lambda) / d log lambda = i - lambda, for each truncated cell exactly.
    d_home = matrix * (goals[None, :, None] - lam[:, None, None])
    d_away = matrix * (goals[None, None, :] - mu[:, None, None])
    if rho != 0.0:
        # The tau factors move with the rates too: d tau / d log rate, over tau.
        tau00 = 1.0 - lam * mu * rho
        tau01 = 1.0 + lam * rho
        tau10 = 1.0 + mu * rho
        d_home[:, 0, 0] += matrix[:, 0, 0] * (-lam * mu * rho) / tau00
        d_home[:, 0, 1] += matrix[:, 0, 1] * (lam * rho) / tau01
        d_away[:, 0, 0] += matrix[:, 0, 0] * (-lam * mu * rho) / tau00
        d_away[:, 1, 0] += matrix[:, 1, 0] * (mu * rho) / tau10
    # The matrix is renormalised to sum to 1: remove the derivative of the normaliser.
    d_home -= matrix * d_home.sum(axis=(1, 2), keepdims=True)
    d_away -= matrix * d_away.sum(axis=(1, 2), keepdims=True)
    return matrix, d_home, d_away


def _market_and_jacobian(log_rates: np.ndarray, rho: float, lines=()):
    """Stacked probabilities (n, 5 + 2 per line market) of the score matrices and their
    derivatives (n, k, 2) with respect to (log lambda_home, log lambda_away).

    The first five are 1x2 and over/under 2.5; then, per ``(market, line)`` of ``lines`` (line
    (n,), NaN where none), its two selections' fair probabilities at the row's line (0 where
    none)."""
    matrix, d_home, d_away = _matrix_and_derivatives(log_rates, rho)
    size = matrix.shape[-1]
    home_goals, away_goals = np.indices((size, size))
    masks = np.stack(
        [
            home_goals > away_goals,
            home_goals == away_goals,
            home_goals < away_goals,
            home_goals + away_goals > 2,
            home_goals + away_goals <= 2,
        ]
    ).astype(float)
    probs = [np.einsum("nij,kij->nk", matrix, masks)]
    jac = [
        np.stack(
            [np.einsum("nij,kij->nk", d_home, masks), np.einsum("nij,kij->nk", d_away, masks)],
            axis=2,
        )
    ]
    for market, line in lines:
        p, dp = _fair_and_jacobian(matrix, d_home, d_away, market, line)
        probs.append(p)
        jac.append(dp)
    return np.concatenate(probs, axis=1), np.concatenate(jac, axis=1)


def _stake_masks(market: str, line: np.ndarray, size: int):
    """Per row, the fraction of a first-selection stake won and lost at each score (n, G, G):
    a quarter line is two half stakes at line ∓ 0.25, a push neither wins nor loses.

    The first selection is the home side at the home handicap ``line`` ("ah": wins when
    home - away + line > 0) or over ("ou": wins when home + away > line). NaN lines give zeros.
    """
    home_goals, away_goals = np.indices((size, size))
    if market == "ah":
        margin = (home_goals - away_goals)[None]  # the first selection wins when margin > -line
        sign = -1.0
    elif market == "ou":
        margin = (home_goals + away_goals)[None]  # over wins when margin > line
        sign = 1.0
    else:
        raise ValueError(f"no line market {market!r}")
    known = np.isfinite(line)
    line = np.where(known, line, 0.0)
    quarter = np.abs(4 * line) % 2 == 1  # x.25 and x.75: two half stakes
    won = np.zeros((len(line), size, size))
    lost = np.zeros((len(line), size, size))
    for offset in (-0.25, 0.25):
        half = sign * (line + np.where(quarter, offset, 0.0))
        won += 0.5 * (margin > half[:, None, None])
        lost += 0.5 * (margin < half[:, None, None])
    won[~known] = 0.0
    lost[~known] = 0.0
    return won, lost


def _fair_and_jacobian(matrix, d_home, d_away, market: str, line: np.ndarray):
    """Fair probabilities (n, 2) of a line market's two selections at each row's ``line`` and
    their derivatives (n, 2, 2) with respect to the log rates; zeros where the line is NaN.

    With W and Lo the expected fractions of a first-selection stake won and lost, its fair
    probability is W / (W + Lo), the second's Lo / (W + Lo): the same definition as
    ``engine.model.lines.fair_probabilities``."""
    won, lost = _stake_masks(market, np.asarray(line, dtype=float), matrix.shape[-1])
    w = np.einsum("nij,nij->n", matrix, won)
    lo = np.einsum("nij,nij->n", matrix, lost)
    at_risk = w + lo
    safe = np.where(at_risk > 0, at_risk, 1.0)
    first = np.where(at_risk > 0, w / safe, 0.0)
    d_first = []
    for d in (d_home, d_away):
        dw = np.einsum("nij,nij->n", d, won)
        dlo = np.einsum("nij,nij->n", d, lost)
        d_first.append(np.where(at_risk > 0, (dw * lo - w * dlo) / safe**2, 0.0))
    d_first = np.column_stack(d_first)
    given = at_risk > 0
    probs = np.column_stack([first, np.where(given, 1.0 - first, 0.0)])
    jac = np.stack([d_first, -d_first], axis=1)
    return probs, jac


def _fair_line_probabilities(home_rate, away_rate, rho: float, market: str, line):
    """Fair probabilities (n, 2) of ``market`` ("ah" or "ou") at each row's ``line`` from the
    goal rates' score matrices; NaN rows where the line or the rates are NaN."""
    lam = np.asarray(home_rate, dtype=float)
    mu = np.asarray(away_rate, dtype=float)
    line = np.asarray(line, dtype=float)
    known = np.isfinite(lam) & np.isfinite(mu) & np.isfinite(line)
    out = np.full((len(lam), 2), np.nan)
    if known.any():
        log_rates = np.log(np.column_stack([lam[known], mu[known]]))
        matrix, d_home, d_away = _matrix_and_derivatives(log_rates, rho)
        out[known] = _fair_and_jacobian(matrix, d_home, d_away, market, line[known])[0]
    return out


def solve_rates(
    probs_1x2,
    probs_ou25=None,
    rho: float = 0.0,
    iterations: int = 20,
    lines: dict[str, tuple[np.ndarray, np.ndarray]] | None = None,
    weights: dict[str, float] | None = None,
):
    """Goal rates (home, away), each (n,), whose score matrices best fit the given probabilities.

    ``probs_1x2`` (n, 3) and ``probs_ou25`` (n, 2) are de-margined probabilities (rows summing
    to 1), NaN where a market was not quoted; ``lines`` adds markets quoted at a line, each
    ``market -> (line (n,), fair probabilities (n, 2))`` ("ah": the home side's handicap,
    home/away; "ou": over/under), NaN where none. Weighted least squares over the quoted ones
    (``weights``: market -> weight of its squared residuals, 1 where not given; 0 ignores a
    market), solved for all rows at once by Levenberg-Marquardt on the log rates. A row with a
    1x2 line is solved from whatever it has; a row without one gets NaN rates, because an
    over/under line alone fixes the total but not how it splits between the sides.
    """
    p1 = np.asarray(probs_1x2, dtype=float)
    n = p1.shape[0]
    pou = np.full((n, 2), np.nan) if probs_ou25 is None else np.asarray(probs_ou25, dtype=float)
    if p1.shape != (n, 3) or pou.shape != (n, 2):
        raise ValueError(
            f"need probs_1x2 (n, 3) and probs_ou25 (n, 2), got {p1.shape}, {pou.shape}"
        )
    weights = {} if weights is None else weights
    given = {}
    for market, (line, probs) in (lines or {}).items():
        line, probs = np.asarray(line, dtype=float), np.asarray(probs, dtype=float)
        if line.shape != (n,) or probs.shape != (n, 2):
            raise ValueError(f"need {market!r} line (n,) and probabilities (n, 2)")
        if weights.get(market, 1.0) > 0:
            given[market] = (np.where(np.isfinite(probs).all(axis=1), line, np.nan), probs)
    has_1x2 = np.isfinite(p1).all(axis=1)
    has_ou = np.isfinite(pou).all(axis=1) & has_1x2
    rows = np.flatnonzero(has_1x2)
    row_lines = tuple((market, line[rows]) for market, (line, _) in given.items())
    targets = [p1[rows], np.where(has_ou[rows, None], pou[rows], 0.0)]
    # Rows without a market simply drop its residuals; the rest count by their market's weight.
    use = [
        np.full((len(rows), 3), np.sqrt(weights.get("1x2", 1.0))),
        np.repeat(has_ou[rows, None], 2, axis=1) * np.sqrt(weights.get("ou25", 1.0)),
    ]
    for market, line in row_lines:
        has = np.isfinite(line)
        targets.append(np.where(has[:, None], given[market][1][rows], 0.0))
        use.append(np.repeat(has[:, None], 2, axis=1) * np.sqrt(weights.get(market, 1.0)))
    target, use = np.column_stack(targets), np.column_stack(use)
    # Start from typical rates split by the 1x2 favourite; LM does the rest in a few steps.
    tilt = np.clip(target[:, 0] - target[:, 2], -0.9, 0.9)
    x = np.column_stack([np.log(1.3) + 0.6 * tilt, np.log(1.3) - 0.6 * tilt])
    damping = np.full(len(rows), 1e-3)
    probs, jac = _market_and_jacobian(x, rho, row_lines)
    resid = (probs - target) * use
    cost = (resid**2).sum(axis=1)
    active = np.ones(len(rows), dtype=bool)
    for _ in range(iterations):
        if not active.any():
            break
        idx = np.flatnonzero(active)
        j = jac[idx] * use[idx, :, None]
        jtj = np.einsum("nki,nkj->nij", j, j)
        jtr = np.einsum("nki,nk->ni", j, resid[idx])
        # Marquardt's scaling: damping proportional to the diagonal keeps steps in proportion.
        a = jtj + damping[idx, None, None] * (jtj * np.eye(2) + 1e-12 * np.eye(2))
        det = a[:, 0, 0] * a[:, 1, 1] - a[:, 0, 1] * a[:, 1, 0]
        step = (
            -np.column_stack(
                [
                    a[:, 1, 1] * jtr[:, 0] - a[:, 0, 1] * jtr[:, 1],
                    a[:, 0, 0] * jtr[:, 1] - a[:, 1, 0] * jtr[:, 0],
                ]
            )
            / det[:, None]
        )
        # Goal rates between e^-4 and e^2.5: far wider than football, and no overflow.
        trial = np.clip(x[idx] + np.clip(step, -1.0, 1.0), -4.0, 2.5)
        t_probs, t_jac = _market_and_jacobian(
            trial, rho, tuple((market, line[idx]) for market, line in row_lines)
        )
        t_resid = (t_probs - target[idx]) * use[idx]
        t_cost = (t_resid**2).sum(axis=1)
        better = t_cost <= cost[idx]
        good = idx[better]
        x[good], probs[good], jac[good] = trial[better], t_probs[better], t_jac[better]
        resid[good], cost[good] = t_resid[better], t_cost[better]
        damping[good] *= 0.1
        damping[idx[~better]] *= 10.0
        moved = np.abs(step).max(axis=1)
        # A row is done once its steps no longer move it, or the damping swallows every step.
        active[idx] = (moved > 1e-9) & (damping[idx] < 1e8)
    home_rate = np.full(n, np.nan)
    away_rate = np.full(n, np.nan)
    home_rate[rows], away_rate[rows] = np.exp(x[:, 0]), np.exp(x[:, 1])
    return home_rate, away_rate
