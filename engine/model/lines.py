"""Markets with lines: Asian handicap ("ah") and over/under ("ou") at any line.

A line bet's result is a fraction r of its stake: 1 won, 0.5 half-won, 0 void (a push), -0.5
half-lost, -1 lost. A quarter line (x.25, x.75) is two half stakes, at line - 0.25 and line +
0.25. The Asian handicap line is the home side's handicap: "home" at line L wins when
home_goals - away_goals + L > 0, "away" when away_goals - home_goals - L > 0; "over" at L wins
when the total exceeds L.

Probabilities of a line market are *fair probabilities*: with W the expected fraction of the stake
won (half wins count 0.5) and Lo the expected fraction lost, p = W / (W + Lo), so the two
selections' add up to 1 and a bet at odds o returns (W + Lo)·(p·o − 1) on average: the same scale
as a de-margined two-way line, so pooling, edges and closing value work as for two-way markets.

Each of a market's first selection ("home", "over") is a bet that a score variable s exceeds a
threshold c: s = home − away goals and c = −half for "ah", s = total goals and c = half for "ou".
The second selection is the opposite bet.
"""

from dataclasses import dataclass

import numpy as np

from engine.model import implied_rates, market_ratings, pooling
from engine.model.scores import score_matrix
from enums import LINE_MARKETS, MARKET_SELECTIONS

#: Each result fraction's status, and the status of a row without a result.
_STATUSES = {1.0: "won", 0.5: "half-won", 0.0: "void", -0.5: "half-lost", -1.0: "lost"}
PENDING = "pending"

#: The bisection of ``translate``: the log-rate shift's bracket (rates times e^±4, beyond any
#: football match) and its halvings, to a shift within 8 / 2^40 (1e-11).
_SHIFT_BOUND = 4.0
_BISECTIONS = 40


def _check_market(market: str) -> None:
    if market not in LINE_MARKETS:
        raise ValueError(f"unknown line market: {market!r}")


def _sign(market: str, selection) -> np.ndarray:
    """+1 for the market's first selection, −1 for its second; ValueError for anything else."""
    _check_market(market)
    first, second = MARKET_SELECTIONS[market]
    selection = np.asarray(selection, dtype=str)
    known = (selection == first) | (selection == second)
    if not known.all():
        bad = sorted({str(s) for s in np.atleast_1d(selection[~known])})
        raise ValueError(f"unknown {market} selection: {', '.join(bad)}")
    return np.where(selection == first, 1.0, -1.0)


def halves(line):
    """The two half-stake lines of each line: x.25 and x.75 split ±0.25, others twice the line."""
    line = np.asarray(line, dtype=float)
    quarter = np.isclose(np.mod(line * 4.0, 2.0), 1.0)
    return np.where(quarter, line - 0.25, line), np.where(quarter, line + 0.25, line)


def _variable(market: str, home_goals, away_goals) -> np.ndarray:
    """The score variable s of the market: goal difference for "ah", total goals for "ou"."""
    hg = np.asarray(home_goals, dtype=float)
    ag = np.asarray(away_goals, dtype=float)
    return hg - ag if market == "ah" else hg + ag


def _thresholds(market: str, line):
    """The thresholds c of the two halves: the first selection wins a half when s > c."""
    lower, upper = halves(line)
    return (-lower, -upper) if market == "ah" else (lower, upper)


def results(market: str, selection, line, home_goals, away_goals) -> np.ndarray:
    """Each bet's result fraction r in {1, .5, 0, −.5, −1}; NaN where there is no score."""
    sign = _sign(market, selection)
    s = _variable(market, home_goals, away_goals)
    c_low, c_high = _thresholds(market, line)
    r = sign * 0.5 * (np.sign(s - c_low) + np.sign(s - c_high))
    return np.where(np.isfinite(s), r, np.nan)


def profits(results, odds, stake) -> np.ndarray:
    """Profit of each bet: stake × (max(r, 0)·(odds − 1) + min(r, 0)); NaN where r is NaN."""
    r = np.asarray(results, dtype=float)
    odds = np.asarray(odds, dtype=float)
    stake = np.asarray(stake, dtype=float)
    return stake * (np.maximum(r, 0.0) * (odds - 1.0) + np.minimum(r, 0.0))


def statuses(results) -> np.ndarray:
    """Each result's status: won, half-won, void, half-lost, lost; pending where r is NaN."""
    r = np.asarray(results, dtype=float)
    status = np.full(r.shape, PENDING, dtype="<U9")
    for value, name in _STATUSES.items():
        status[r == value] = name
    return status


def _distribution(market: str, matrix):
    """Each matrix's distribution of the score variable: (values (v,), probabilities (m, v))."""
    matrix = np.asarray(matrix, dtype=float)
    size = matrix.shape[-1]
    hg, ag = np.indices((size, size))
    s = (hg - ag if market == "ah" else hg + ag).ravel()
    values = np.arange(s.min(), s.max() + 1)
    # A product with the one-hot map of cells to values sums each value's cells in one BLAS call.
    onehot = (s[:, None] == values[None, :]).astype(float)
    return values, matrix.reshape(matrix.shape[0], -1) @ onehot


def _beyond(values, cdf, c):
    """P(s > c) and P(s < c) per row, for integer-valued s with cumulative ``cdf`` (m, v)."""
    rows = np.arange(cdf.shape[0])

    def at_most(x):
        # P(s <= x) for integer x per row.
        idx = x.astype(np.int64) - int(values[0])
        inside = cdf[rows, np.clip(idx, 0, len(values) - 1)]
        return np.where(idx < 0, 0.0, np.where(idx >= len(values), 1.0, inside))

    above = 1.0 - at_most(np.floor(c))
    below = at_most(np.ceil(c) - 1.0)
    return above, below


def fair_probabilities(market: str, matrix, line):
    """Fair probabilities (m, 2) of each score matrix (m, G, G) at its row's line, in the market's
    selection order, and the fraction of the stake at risk, W + Lo (m,), the same for both sides.

    NaN for a row whose matrix or line is not finite.
    """
    _check_market(market)
    matrix = np.asarray(matrix, dtype=float)
    line = np.broadcast_to(np.asarray(line, dtype=float), (matrix.shape[0],))
    if not len(line):
        return np.empty((0, 2)), np.empty(0)
    finite = np.isfinite(line) & np.all(np.isfinite(matrix), axis=(1, 2))
    values, probs = _distribution(market, np.where(finite[:, None, None], matrix, 0.0))
    cdf = np.cumsum(probs, axis=1)
    won = np.zeros(len(line))
    lost = np.zeros(len(line))
    for c in _thresholds(market, np.where(finite, line, 0.0)):
        above, below = _beyond(values, cdf, c)
        won += 0.5 * above
        lost += 0.5 * below
    at_risk = won + lost
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(at_risk > 0.0, won / np.where(at_risk > 0.0, at_risk, 1.0), np.nan)
    p = np.where(finite, p, np.nan)
    return np.column_stack([p, 1.0 - p]), np.where(finite, at_risk, np.nan)


def outcome_index(market: str, line, home_goals, away_goals) -> np.ndarray:
    """0 where the first selection's result is positive, 1 where negative, −1 for a push or no
    score: the outcome pooling and log losses use."""
    first = MARKET_SELECTIONS[market][0] if market in LINE_MARKETS else ""
    r = results(market, first, line, home_goals, away_goals)
    return np.where(r > 0, 0, np.where(r < 0, 1, -1))


def outcome_share(market: str, line, home_goals, away_goals) -> np.ndarray:
    """The share of the stake each outcome decided: 1, ½ for a quarter line's half won or half
    lost (the other half pushed), 0 for a push or no score; what weighs a row in pooling."""
    first = MARKET_SELECTIONS[market][0] if market in LINE_MARKETS else ""
    r = results(market, first, line, home_goals, away_goals)
    return np.where(np.isfinite(r), np.abs(r), 0.0)


def _shifted(market: str, home_rate, away_rate, shift):
    """The rates moved by a log shift t: (λe^t, μe^−t) for "ah", (λe^t, μe^t) for "ou"."""
    return home_rate * np.exp(shift), away_rate * np.exp(-shift if market == "ah" else shift)


def translate(market: str, home_rate, away_rate, rho, line_from, p_from, line_to) -> np.ndarray:
    """The first selection's fair probability at ``line_to`` of a market whose fair probability
    at ``line_from`` is ``p_from``, carried through the score model.

    The goal rates (λ, μ) are shifted by the t that makes the model's fair probability at
    ``line_from`` equal ``p_from`` ((λe^t, μe^−t) for "ah", (λe^t, μe^t) for "ou": bisection,
    monotone in t), and the shifted model is read at ``line_to``. Same line: ``p_from`` itself.
    NaN in any input gives NaN.
    """
    _check_market(market)
    lam, mu, rho, line_from, p_from, line_to = (
        np.atleast_1d(np.asarray(a, dtype=float))
        for a in np.broadcast_arrays(home_rate, away_rate, rho, line_from, p_from, line_to)
    )
    known = np.isfinite(lam) & np.isfinite(mu) & np.isfinite(rho) & np.isfinite(p_from)
    known &= np.isfinite(line_from) & np.isfinite(line_to) & (lam > 0) & (mu > 0)
    lam, mu, rho = np.where(known, lam, 1.0), np.where(known, mu, 1.0), np.where(known, rho, 0.0)
    lf, lt = np.where(known, line_from, 0.0), np.where(known, line_to, 0.0)
    target = np.where(known, p_from, 0.5)

    def first(shift, at_line):
        home, away = _shifted(market, lam, mu, shift)
        return fair_probabilities(market, score_matrix(home, away, rho), at_line)[0][:, 0]

    low = np.full(lam.shape, -_SHIFT_BOUND)
    high = np.full(lam.shape, _SHIFT_BOUND)
    for _ in range(_BISECTIONS):
        mid = 0.5 * (low + high)
        up = first(mid, lf) < target
        low, high = np.where(up, mid, low), np.where(up, high, mid)
    moved = first(0.5 * (low + high), lt)
    out = np.where(lf == lt, target, moved)
    return np.where(known, out, np.nan)


@dataclass
class LineForecast:
    """Forecasts per line row, in input order."""

    model: np.ndarray  # (m, 2) the goal model's fair probabilities at the row's line
    published: np.ndarray  # (m, 2) pooled with the de-margined market line
    pool_weight: np.ndarray  # (m,) weight on the model (1 where the row has no market line)
    at_risk: np.ndarray  # (m,) the model's W + Lo: the stake's expected fraction settled


def forecast(
    market: str,
    match_row,
    line,
    market_probs,
    kickoff,
    cutoff,
    goal_rates,
    goal_rho,
    home_goals,
    away_goals,
    has_result,
    prior: float = pooling.PRIOR_WEIGHT,
    min_rows: int = pooling.MIN_ROWS,
    pool_weights: dict[float, float] | None = None,
    eligible=None,
) -> LineForecast:
    """Walk-forward forecasts of one line market's rows (one per match and line quoted).

    The model is each row's match's score matrix (``goal_rates`` (n, 2), ``goal_rho`` (n,), as
    ``engine.model.walkforward`` used them) read at the row's line; it is pooled with the
    de-margined market line ``market_probs`` (m, 2) by a weight fitted
    (``engine.model.pooling.fit_weight``) on the rows of the same line whose match kicked off before
    the row's match's cutoff, and whose match has a result (``has_result``). With ``pool_weights``
    (line → weight, fitted on earlier matches by the caller) those are used, ``prior`` for a line it
    lacks. Rows of matches not ``eligible`` (n,) (a league the goal model has not seen) get weight
    0, the market alone, and train no weight.
    """
    _check_market(market)
    match_row = np.asarray(match_row, dtype=np.intp)
    eligible = None if eligible is None else np.asarray(eligible, dtype=bool)
    line = np.asarray(line, dtype=float)
    market_probs = np.asarray(market_probs, dtype=float).reshape(len(match_row), 2)
    rates = np.asarray(goal_rates, dtype=float)[match_row]
    matrix = score_matrix(rates[:, 0], rates[:, 1], np.asarray(goal_rho, dtype=float)[match_row])
    matrix[~np.all(np.isfinite(rates), axis=1)] = np.nan
    model, at_risk = fair_probabilities(market, matrix, line)
    result = np.asarray(has_result, dtype=bool)[match_row]
    hg = np.where(result, np.asarray(home_goals, dtype=float)[match_row], np.nan)
    ag = np.where(result, np.asarray(away_goals, dtype=float)[match_row], np.nan)
    outcomes = outcome_index(market, line, hg, ag)
    shares = outcome_share(market, line, hg, ag)
    row_kickoff = np.asarray(kickoff, dtype=np.int64)[match_row]
    row_cutoff = np.asarray(cutoff, dtype=np.int64)[match_row]
    seen = np.ones(len(match_row), dtype=bool) if eligible is None else eligible[match_row]
    if pool_weights is None:
        # Ties in kick-off broken by match and line, so the fit never depends on row order.
        order = np.lexsort((line, match_row, row_kickoff))
        weight = pooling.walk_forward_weights(
            np.unique(line, return_inverse=True)[1],
            row_cutoff,
            row_kickoff,
            model,
            market_probs,
            outcomes,
            prior=prior,
            min_rows=min_rows,
            eligible=seen,
            order=order,
            share=shares,
            family=True,
        )
    else:
        given = [float(pool_weights.get(float(value), prior)) for value in line.tolist()]
        weight = np.where(seen, np.array(given, dtype=float).reshape(-1), 0.0)
    # Without a market line the model is all there is, and the row says so.
    weight[~pooling.market_available(market_probs)] = 1.0
    published = pooling.pool(model, market_probs, weight)
    return LineForecast(model=model, published=published, pool_weight=weight, at_risk=at_risk)


def main_rows(match_row, fair, n: int) -> np.ndarray:
    """(n,) per match, the line row whose fair probabilities are the most balanced (the line
    the market prices most closely: what a match's "main line" means), −1 where no row of the
    match has fair probabilities."""
    match_row = np.asarray(match_row, dtype=np.int64)
    fair = np.asarray(fair, dtype=float)
    main = np.full(n, -1, dtype=np.int64)
    rows = np.flatnonzero(np.isfinite(fair).all(axis=1))
    if not len(rows):
        return main
    order = rows[np.lexsort((np.abs(fair[rows, 0] - 0.5), match_row[rows]))]
    first = np.unique(match_row[order], return_index=True)[1]
    main[match_row[order[first]]] = order[first]
    return main


def nearest_rows(match_row, line, cube_row, cube_line, fair) -> np.ndarray:
    """(p,) per pick (its match's row ``match_row`` and its ``line``), the closing line row of
    the same match nearest its line among those with fair probabilities: the least carrying
    through the score model. Of two equally near, the more balanced (the main line, see
    :func:`main_rows`), then the lower line; −1 where the match has no such row."""
    match_row = np.asarray(match_row, dtype=np.int64)
    line = np.asarray(line, dtype=float)
    cube_row = np.asarray(cube_row, dtype=np.int64)
    cube_line = np.asarray(cube_line, dtype=float)
    fair = np.asarray(fair, dtype=float).reshape(len(cube_row), 2)
    found = np.full(len(match_row), -1, dtype=np.int64)
    rows = np.flatnonzero(np.isfinite(fair).all(axis=1))
    if not len(rows) or not len(match_row):
        return found
    rows = rows[np.argsort(cube_row[rows], kind="stable")]
    start = np.searchsorted(cube_row[rows], match_row, side="left")
    count = np.searchsorted(cube_row[rows], match_row, side="right") - start
    # Every (pick, candidate row) pair, ranked within each pick.
    pick = np.repeat(np.arange(len(match_row)), count)
    offset = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)
    candidate = rows[np.repeat(start, count) + offset]
    order = np.lexsort(
        (
            cube_line[candidate],
            np.abs(fair[candidate, 0] - 0.5),
            np.abs(cube_line[candidate] - line[pick]),
            pick,
        )
    )
    first = np.unique(pick[order], return_index=True)[1]
    found[pick[order[first]]] = candidate[order[first]]
    return found


def closing_at(market, picks, cube, rates):
    """The close of line picks at their own lines.

    ``picks`` = (match_row (p,), line (p,), side (p,) 0 or 1); ``cube`` = (match_row (m,),
    line (m,), closing prices (m, 2), fair probabilities (m, 2)) of the closing line rows;
    ``rates`` = (home_rate (n,), away_rate (n,), rho) of a score model of each match (the close's
    own, e.g. solved from its 1x2 and over/under 2.5). Returns ``(price (p,), probability (p,),
    row (p,))``: where the close quotes the pick's line, its price and fair probability there
    and that line row; where the line moved, no price (NaN: there is no closing price at the
    pick's line to compare with), the fair probability of the nearest closing line
    (:func:`nearest_rows`) carried to the pick's line (:func:`translate`), and that line's row;
    NaN and −1 without a close.

    An over/under line carries through the total alone: a match without rates (no 1x2 close
    to split its goals by) is carried with its goals split evenly, which the shift then scales
    to the quoted line. The split moves nothing between lines of 2.5 goals and above (the
    Dixon-Coles correction leaves P(total ≤ 2), and every cumulative above it, those of the
    Poisson total), and little below (it moves mass between 0-0, 1-0, 0-1 and 1-1).
    """
    pick_row, pick_line, side = (np.asarray(value) for value in picks)
    cube_row, cube_line, prices, fair = (np.asarray(value) for value in cube)
    home_rate, away_rate, rho = rates
    side = side.astype(np.int64)
    price = np.full(len(pick_row), np.nan)
    probability = np.full(len(pick_row), np.nan)
    source = np.full(len(pick_row), -1, dtype=np.int64)
    exact = {
        (int(row), float(value)): at
        for at, (row, value) in enumerate(zip(cube_row.tolist(), cube_line.tolist(), strict=True))
    }
    at = np.array(
        [exact.get((int(r), float(v)), -1) for r, v in zip(pick_row, pick_line, strict=True)],
        dtype=np.int64,
    )
    quoted = at >= 0
    quoted[quoted] &= np.isfinite(prices[at[quoted], side[quoted]])
    price[quoted] = prices[at[quoted], side[quoted]]
    probability[quoted] = fair[at[quoted], side[quoted]]
    source[quoted] = at[quoted]
    near = np.full(len(pick_row), -1, dtype=np.int64)
    near[~quoted] = nearest_rows(pick_row[~quoted], pick_line[~quoted], cube_row, cube_line, fair)
    moved = ~quoted & (near >= 0)
    if moved.any():
        rows = pick_row[moved].astype(np.int64)
        home = np.asarray(home_rate, dtype=float)[rows]
        away = np.asarray(away_rate, dtype=float)[rows]
        if market == "ou":
            even = ~(np.isfinite(home) & np.isfinite(away))
            home, away = np.where(even, 1.0, home), np.where(even, 1.0, away)
        first = translate(
            market,
            home,
            away,
            np.full(len(rows), float(rho)),
            cube_line[near[moved]],
            fair[near[moved], 0],
            pick_line[moved].astype(float),
        )
        probability[moved] = np.where(side[moved] == 0, first, 1.0 - first)
        source[moved] = near[moved]
    return price, probability, source


def close_rates(fair_1x2, fair_ou25) -> tuple:
    """``(home_rate, away_rate, rho)`` of the score model whose goal rates reproduce each match's
    de-margined closing 1x2 (and over/under 2.5) line: what :func:`closing_at` carries a moved
    line's probability through."""
    rho = market_ratings.RatingsConfig().rho
    return (*implied_rates.solve_rates(fair_1x2, fair_ou25, rho=rho), rho)
