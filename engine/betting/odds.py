"""Bookmaker prices: margin removal and the quote cubes (match × bookmaker × selection) built on it.

A quote cube is an array of decimal prices of shape ``(n_matches, n_bookmakers, k)`` with NaN
where a bookmaker did not quote, together with the list of bookmaker slugs along its second axis.
A bookmaker quotes a match only when all ``k`` of its prices are valid (finite and above 1.0).
"""

import numpy as np

from engine.records import AGGREGATE_BOOKMAKERS, SHARP_BOOKMAKER
from enums import MARGIN_METHODS

#: Margin-removal methods understood by :func:`remove_margin`, the simplest first.
METHODS = MARGIN_METHODS

#: What each method solves for, per row (see :func:`fit_margin`).
PARAMETERS = {
    "proportional": "booksum",  # Σ 1/o, which every implied probability is divided by
    "additive": "deduction",  # taken off every implied probability (floored at 0)
    "power": "kappa",  # the exponent κ with Σ (1/o)^κ = 1
    "shin": "z",  # Shin's share of insider money
    "odds-ratio": "odds_ratio",  # implied odds ÷ fair odds, the same for every selection
}

#: The aggregate used when the sharp bookmaker has no quote for a match.
FALLBACK_BOOKMAKER = "market-average"


def valid_rows(prices):
    """True where every price on the last axis is finite and above 1.0 (a usable quote)."""
    prices = np.asarray(prices, dtype=float)
    return np.all(np.isfinite(prices) & (prices > 1.0), axis=-1)


def overround(prices):
    """The bookmaker's margin, Σ 1/o − 1 over the last axis (0.05 is 5 %); NaN for invalid rows."""
    prices = np.asarray(prices, dtype=float)
    valid = valid_rows(prices)
    implied = 1.0 / np.where(valid[..., None], prices, 2.0)
    return np.where(valid, implied.sum(axis=-1) - 1.0, np.nan)


def remove_margin(prices, method="proportional", tol=1e-12, max_iter=200):
    """Fair probabilities from decimal prices (..., k): each row sums to 1; invalid rows are NaN.

    See :func:`fit_margin` for the methods; this is its first half.
    """
    return fit_margin(prices, method, tol, max_iter)[0]


def fit_margin(prices, method="proportional", tol=1e-12, max_iter=200):
    """``(probabilities, parameter)`` of one margin-removal ``method`` over prices (..., k).

    With implied probabilities π = 1/o and booksum β = Σπ, each method finds, row by row, the
    one parameter (named in :data:`PARAMETERS`) that makes its fair probabilities sum to 1:

    - ``proportional``: p = π / β (the parameter is β);
    - ``additive``: p = max(π − d, 0), the same deduction d from every selection (the Euclidean
      projection of π on the simplex: a long shot priced below d gets 0, never less);
    - ``power``: p = π^κ (Clarke, Kovalchik and Ingram 2017);
    - ``shin``: Shin's (1993) model with a share ``z`` of insider money,
      p = (√(z² + 4(1 − z)π²/β) − z) / (2(1 − z));
    - ``odds-ratio``: the implied odds are the fair odds times one ratio c (Cheung 2015),
      p = π / (c − cπ + π).

    Power, Shin and the odds ratio take more off long shots than off favourites; additive takes
    the most. The solvers bisect every row at once until each bracket is narrower than ``tol`` (or
    ``max_iter`` halvings). A row without a margin (β ≤ 1) has none to remove: Shin's z is then
    0 (the proportional answer); the others solve as usual (κ ≤ 1, c ≤ 1, d ≤ 0). Invalid rows
    (a price missing or ≤ 1.0) give NaN probabilities and a NaN parameter.
    """
    if method not in METHODS:
        raise ValueError(f"unknown margin-removal method {method!r}; expected one of {METHODS}")
    prices = np.asarray(prices, dtype=float)
    if prices.ndim == 0:
        raise ValueError("prices need a last axis of selections")
    valid = valid_rows(prices)
    # Invalid rows get a harmless placeholder so the solvers never see NaN; they are masked below.
    implied = 1.0 / np.where(valid[..., None], prices, 2.0)
    solver = {
        "proportional": _proportional,
        "additive": _additive,
        "power": _power,
        "shin": _shin,
        "odds-ratio": _odds_ratio,
    }[method]
    probs, parameter = solver(implied, tol, max_iter)
    return np.where(valid[..., None], probs, np.nan), np.where(valid, parameter, np.nan)


def _bisect_decreasing(excess, lo, hi, tol, max_iter):
    """Per-row root of a decreasing function ``excess`` between the brackets ``lo`` and ``hi``.

    A row stops halving once its own bracket is narrower than ``tol``, so its answer never
    depends on which other rows were solved beside it (a prediction must not change when later
    matches are added to the batch).
    """
    lo, hi = lo.copy(), hi.copy()
    for _ in range(max_iter):
        active = hi - lo > tol
        if not active.any():
            break
        mid = 0.5 * (lo + hi)
        above = excess(mid) > 0.0
        lo = np.where(active & above, mid, lo)
        hi = np.where(active & ~above, mid, hi)
    return 0.5 * (lo + hi)


def _normalised(probs):
    """Rows divided by their sums: removes a bisection's last residual."""
    return probs / probs.sum(axis=-1, keepdims=True)


def _proportional(implied, _tol, _max_iter):
    """Proportional: every implied probability divided by the booksum."""
    booksum = implied.sum(axis=-1)
    return implied / booksum[..., None], booksum


def _additive(implied, _tol, _max_iter):
    """Additive: d with Σ max(π − d, 0) = 1, solved exactly by sorting (simplex projection)."""
    k = implied.shape[-1]
    ordered = -np.sort(-implied, axis=-1)
    cumulative = np.cumsum(ordered, axis=-1)
    counts = np.arange(1, k + 1)
    # The selections kept are the largest ones with π_j > (Σ_{i≤j} π_i − 1) / j.
    kept = (ordered - (cumulative - 1.0) / counts > 0).sum(axis=-1)
    total = np.take_along_axis(cumulative, (kept - 1)[..., None], axis=-1)[..., 0]
    deduction = (total - 1.0) / kept
    return np.maximum(implied - deduction[..., None], 0.0), deduction


def _shin_probabilities(implied, booksum, z):
    """Shin's fair probabilities for a given share of insider money ``z`` (< 1) per row."""
    z = z[..., None]
    return (np.sqrt(z * z + 4.0 * (1.0 - z) * implied**2 / booksum) - z) / (2.0 * (1.0 - z))


def _shin(implied, tol, max_iter):
    """Shin's method: z in [0, 1) such that the fair probabilities sum to 1, row by row."""
    booksum = implied.sum(axis=-1, keepdims=True)
    # Σp(z) falls from √booksum at z = 0 to below 1 as z → 1, so a root exists only with a margin.
    hi = np.where(booksum[..., 0] > 1.0, 1.0, 0.0)
    lo = np.zeros_like(hi)
    z = _bisect_decreasing(
        lambda zz: _shin_probabilities(implied, booksum, zz).sum(axis=-1) - 1.0,
        lo,
        hi,
        tol,
        max_iter,
    )
    # The last renormalisation removes the bisection's residual (and is exact for z = 0 rows).
    return _normalised(_shin_probabilities(implied, booksum, z)), z


def _power(implied, tol, max_iter):
    """Power method: κ such that Σ (1/o_i)^κ = 1, row by row."""
    k = implied.shape[-1]
    log_implied = np.log(implied)
    # k·min^κ ≥ 1 ≥ k·max^κ brackets the root: Σ π^κ lies between those two bounds.
    lo = np.log(k) / -log_implied.min(axis=-1)
    hi = np.log(k) / -log_implied.max(axis=-1)
    kappa = _bisect_decreasing(
        lambda kk: np.exp(kk[..., None] * log_implied).sum(axis=-1) - 1.0,
        lo,
        hi,
        tol,
        max_iter,
    )
    return _normalised(np.exp(kappa[..., None] * log_implied)), kappa


def _odds_ratio_probabilities(implied, ratio):
    """Fair probabilities whose odds are the implied odds divided by ``ratio`` (per row)."""
    ratio = ratio[..., None]
    return implied / (ratio - ratio * implied + implied)


def _odds_ratio(implied, tol, max_iter):
    """Odds-ratio method: c such that Σ π / (c − cπ + π) = 1, row by row."""
    k = implied.shape[-1]
    # p_i(c) ≥ 1/k exactly when c ≤ (k − 1)π_i / (1 − π_i), so these bounds bracket the root.
    bound = (k - 1) * implied / (1.0 - np.minimum(implied, 1.0 - 1e-15))
    ratio = _bisect_decreasing(
        lambda cc: _odds_ratio_probabilities(implied, cc).sum(axis=-1) - 1.0,
        bound.min(axis=-1),
        bound.max(axis=-1),
        tol,
        max_iter,
    )
    return _normalised(_odds_ratio_probabilities(implied, ratio)), ratio


def _check_cube(prices, bookmakers):
    """The cube as a float array, after checking it matches its bookmaker list."""
    prices = np.asarray(prices, dtype=float)
    if prices.ndim != 3 or prices.shape[1] != len(bookmakers):
        raise ValueError(
            f"prices must have shape (n_matches, {len(bookmakers)} bookmakers, k), "
            f"got {prices.shape}"
        )
    return prices


def _real_bookmakers(bookmakers, exclude):
    """Boolean mask over the bookmaker axis: True for bookmakers not in ``exclude``."""
    excluded = frozenset(exclude or ())
    return np.array([name not in excluded for name in bookmakers], dtype=bool)


def has_quote(prices, bookmakers):
    """(n, b) True where a bookmaker quotes a match: all of its k prices are valid."""
    return valid_rows(_check_cube(prices, bookmakers))


def sharp_quotes(prices, bookmakers, sharp=SHARP_BOOKMAKER):
    """(n,) True where the sharp bookmaker quotes a match in full."""
    if sharp not in bookmakers:
        return np.zeros(_check_cube(prices, bookmakers).shape[0], dtype=bool)
    return has_quote(prices, bookmakers)[:, bookmakers.index(sharp)]


def quoting_count(prices, bookmakers, exclude=AGGREGATE_BOOKMAKERS):
    """(n,) number of bookmakers, aggregates excluded, with a full valid quote for each match."""
    quoted = has_quote(prices, bookmakers) & _real_bookmakers(bookmakers, exclude)
    return quoted.sum(axis=1)


def best_prices(prices, bookmakers, exclude=AGGREGATE_BOOKMAKERS):
    """Best price per selection over real bookmakers that quote the match.

    Returns ``(best, book_index)``, both (n, k): the highest price (NaN where no bookmaker quotes)
    and the index of the bookmaker offering it (−1 where none; the first listed wins a tie).
    """
    prices = _check_cube(prices, bookmakers)
    if not bookmakers:  # nobody quotes this market at all (BTTS in football-data files)
        shape = (prices.shape[0], prices.shape[2])
        return np.full(shape, np.nan), np.full(shape, -1, dtype=np.int64)
    usable = valid_rows(prices) & _real_bookmakers(bookmakers, exclude)
    masked = np.where(usable[:, :, None], prices, -np.inf)
    book_index = masked.argmax(axis=1)
    best = np.take_along_axis(masked, book_index[:, None, :], axis=1)[:, 0, :]
    found = np.isfinite(best)
    return np.where(found, best, np.nan), np.where(found, book_index, -1)


def _anchor(prices, bookmakers, sharp, fallback):
    """Per match, the sharp book's quote when it has one, else the fallback's: (rows, source)."""
    prices = _check_cube(prices, bookmakers)
    quoted = valid_rows(prices)
    source = np.full(prices.shape[0], -1, dtype=np.int64)
    # The fallback is written first so that the sharp book overwrites it where it quotes.
    for name in (fallback, sharp):
        if name is not None and name in bookmakers:
            position = bookmakers.index(name)
            source = np.where(quoted[:, position], position, source)
    if not bookmakers:
        return np.full((prices.shape[0], prices.shape[2]), np.nan), source
    rows = prices[np.arange(prices.shape[0]), np.maximum(source, 0)]
    return np.where((source >= 0)[:, None], rows, np.nan), source


def sharp_probabilities(
    prices,
    bookmakers,
    sharp=SHARP_BOOKMAKER,
    fallback=FALLBACK_BOOKMAKER,
    method="proportional",
):
    """De-margined probabilities from the sharp book, else the fallback aggregate, else NaN.

    Returns ``(probs, source)``: probs (n, k) and source (n,), the index in ``bookmakers`` of the
    book used (−1 where neither quotes). ``fallback=None`` disables the fallback.
    """
    rows, source = _anchor(prices, bookmakers, sharp, fallback)
    return remove_margin(rows, method=method), source


def sharp_prices(prices, bookmakers, sharp=SHARP_BOOKMAKER, fallback=FALLBACK_BOOKMAKER):
    """The sharp book's prices where it quotes a match, else the fallback aggregate's, else NaN.

    Returns ``(price, source)``: price (n, k) and source (n,), the index of the book used or −1.
    """
    return _anchor(prices, bookmakers, sharp, fallback)


#: Closing prices to settle CLV against: the same book's, from a cube of closing quotes.
closing_prices = sharp_prices
