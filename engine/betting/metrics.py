"""Scores of probability forecasts (Brier, log loss, RPS, reliability) and track-record figures of
settled picks, overall or per group, computed without a Python loop per pick."""

import numpy as np

from enums import DECIDED_STATUSES


def _forecasts(probs, outcome):
    """Probabilities (n, k) and outcome indices (n,) as arrays, after checking they fit."""
    probs = np.asarray(probs, dtype=float)
    outcome = np.asarray(outcome)
    if probs.ndim != 2 or outcome.shape != probs.shape[:1]:
        raise ValueError(f"need probs (n, k) and outcome (n,), got {probs.shape}, {outcome.shape}")
    if not np.issubdtype(outcome.dtype, np.integer) and outcome.size:
        raise ValueError("outcome must hold integer selection indices")
    if outcome.size and (outcome.min() < 0 or outcome.max() >= probs.shape[1]):
        raise ValueError(f"outcome indices must lie in [0, {probs.shape[1]})")
    if not np.isfinite(probs).all():
        raise ValueError("probabilities must be finite; drop the rows without a forecast first")
    return probs, outcome.astype(np.intp)


def _one_hot(outcome, k):
    """(n, k) indicator of the selection that happened."""
    return (outcome[:, None] == np.arange(k)).astype(float)


def brier(probs, outcome):
    """Multi-class Brier score: mean over rows of Σ_k (p_k − y_k)², from 0 (perfect) to 2.

    None when there are no rows.
    """
    probs, outcome = _forecasts(probs, outcome)
    if not len(outcome):
        return None
    return float(((probs - _one_hot(outcome, probs.shape[1])) ** 2).sum(axis=1).mean())


def log_loss(probs, outcome, eps=1e-15):
    """Mean negative log of the probability given to what happened (clipped to [eps, 1]).

    None when there are no rows.
    """
    probs, outcome = _forecasts(probs, outcome)
    if not len(outcome):
        return None
    happened = np.clip(probs[np.arange(len(outcome)), outcome], eps, 1.0)
    return float(-np.log(happened).mean())


def rps(probs, outcome):
    """Ranked probability score for ordered selections: mean of Σ_{i<k} (P_i − Y_i)² / (k − 1).

    P and Y are the cumulative forecast and outcome over the first i selections. None when there
    are no rows.
    """
    probs, outcome = _forecasts(probs, outcome)
    k = probs.shape[1]
    if k < 2:
        raise ValueError("a ranked probability score needs at least two selections")
    if not len(outcome):
        return None
    gap = np.cumsum(probs - _one_hot(outcome, k), axis=1)[:, :-1]
    return float(((gap**2).sum(axis=1) / (k - 1)).mean())


def _binned(probs, outcome, bins):
    """Per equal-width bin of every (row, selection) forecast: count, Σ predicted, Σ happened."""
    probs, outcome = _forecasts(probs, outcome)
    if bins < 1:
        raise ValueError("bins must be at least 1")
    predicted = probs.ravel()
    happened = _one_hot(outcome, probs.shape[1]).ravel()
    # A probability of exactly 1 belongs to the last bin, not to one past it.
    index = np.clip(np.floor(predicted * bins).astype(np.intp), 0, bins - 1)
    count = np.bincount(index, minlength=bins)
    return (
        count,
        np.bincount(index, weights=predicted, minlength=bins),
        np.bincount(index, weights=happened, minlength=bins),
    )


def reliability(probs, outcome, bins=10):
    """Reliability table over every (row, selection) forecast in ``bins`` equal-width bins.

    One entry per bin, empty ones included: ``{"from", "to", "mean_predicted", "observed_rate",
    "count"}`` with None for the mean and the rate of an empty bin.
    """
    count, predicted, happened = _binned(probs, outcome, bins)
    table = []
    for b in range(bins):
        n = int(count[b])
        table.append(
            {
                "from": b / bins,
                "to": (b + 1) / bins,
                "mean_predicted": float(predicted[b] / n) if n else None,
                "observed_rate": float(happened[b] / n) if n else None,
                "count": n,
            }
        )
    return table


def expected_calibration_error(probs, outcome, bins=10):
    """Σ_b (count_b / N) · |mean predicted_b − observed rate_b| over the reliability bins.

    N counts every (row, selection) forecast; None when there are none.
    """
    count, predicted, happened = _binned(probs, outcome, bins)
    total = count.sum()
    if not total:
        return None
    # Σ_b (n_b/N)·|Σp_b/n_b − Σy_b/n_b| simplifies to Σ_b |Σp_b − Σy_b| / N: no empty-bin division.
    return float(np.abs(predicted - happened).sum() / total)


#: Edges of the decimal-price bands that reliability and pick reports are cut into: under 2.0,
#: 2.0–4.0, 4.0–8.0, 8.0 and over (a price on an edge belongs to the band above it).
PRICE_BANDS = (2.0, 4.0, 8.0)


def price_band(prices):
    """Index of each price's band in :data:`PRICE_BANDS` (0 to 3); −1 where a price is NaN."""
    prices = np.asarray(prices, dtype=float)
    index = np.searchsorted(
        np.asarray(PRICE_BANDS), np.where(np.isfinite(prices), prices, 0.0), side="right"
    )
    return np.where(np.isfinite(prices), index, -1)


def _band_edges(band):
    """(from, to) of one band; None for the open ends."""
    edges = (1.0, *PRICE_BANDS, None)
    return edges[band], edges[band + 1]


def reliability_by_price(probs, outcome, prices):
    """Reliability of every (row, selection) forecast by the selection's price band.

    ``prices`` (n, k) are decimal odds beside ``probs`` (n, k); selections without a price are
    left out. One entry per band, empty ones included: ``{"from", "to", "count",
    "mean_predicted", "observed_rate", "std_error"}``, where ``std_error`` = √Σp(1 − p) / count
    is the spread of the observed rate were the forecasts right (the yardstick for the gap
    between the two); None for the figures of an empty band. ``to`` is None for the last band.
    """
    probs, outcome = _forecasts(probs, outcome)
    prices = np.asarray(prices, dtype=float)
    if prices.shape != probs.shape:
        raise ValueError(f"prices must match probs {probs.shape}, got {prices.shape}")
    band = price_band(prices).ravel()
    predicted = probs.ravel()
    happened = _one_hot(outcome, probs.shape[1]).ravel()
    priced = band >= 0
    slots = len(PRICE_BANDS) + 1
    count = np.bincount(band[priced], minlength=slots)
    mean = np.bincount(band[priced], weights=predicted[priced], minlength=slots)
    rate = np.bincount(band[priced], weights=happened[priced], minlength=slots)
    variance = np.bincount(
        band[priced], weights=(predicted * (1.0 - predicted))[priced], minlength=slots
    )
    table = []
    for b in range(slots):
        n = int(count[b])
        low, high = _band_edges(b)
        table.append(
            {
                "from": low,
                "to": high,
                "count": n,
                "mean_predicted": float(mean[b] / n) if n else None,
                "observed_rate": float(rate[b] / n) if n else None,
                "std_error": float(np.sqrt(variance[b]) / n) if n else None,
            }
        )
    return table


def max_drawdown(profits):
    """Largest fall of cumulative profit from its running peak (the peak starts at 0), ≥ 0.

    ``profits`` are settled picks in order; NaN entries (unsettled) are skipped.
    """
    profits = np.asarray(profits, dtype=float)
    cumulative = np.cumsum(np.where(np.isnan(profits), 0.0, profits))
    if not cumulative.size:
        return 0.0
    peak = np.maximum(np.maximum.accumulate(cumulative), 0.0)
    return float((peak - cumulative).max())


def longest_losing_streak(status):
    """Most consecutive losing picks (``lost`` or ``half-lost``), ``void`` and ``pending`` ones
    skipped (neither end it)."""
    status = np.asarray(status, dtype=str)
    decided = status[np.isin(status, DECIDED_STATUSES)]
    lost = np.concatenate([[0], np.isin(decided, _LOSING).astype(np.int8), [0]])
    change = np.diff(lost)
    starts, ends = np.flatnonzero(change == 1), np.flatnonzero(change == -1)
    return int((ends - starts).max()) if starts.size else 0


#: Status codes of pick_columns: the position of the status here, or len(STATUS_ORDER) if unknown.
#: A quarter-line bet is two half stakes: half won (the other half refunded) or half lost.
STATUS_ORDER = ("pending", "won", "lost", "void", "half-won", "half-lost")
_PENDING, _WON, _LOST, _VOID, _HALF_WON, _HALF_LOST, _OTHER = range(len(STATUS_ORDER) + 1)
#: The statuses of a pick that lost money (``DECIDED_STATUSES``: those that won or lost it).
_LOSING = ("lost", "half-lost")


def pick_columns(status, profit, odds, edge, clv, stake, closing_probability=None):
    """Track-record inputs as arrays of one length plus the status masks every figure needs.

    ``closing_probability`` is each pick's selection's de-margined closing probability (NaN
    where unknown; all unknown when omitted). Build the columns once and pass them to
    grouped_figures as often as needed (overall, per month, ...).
    """
    status = np.asarray(status, dtype=str)
    odds = np.asarray(odds, dtype=float)
    if closing_probability is None:
        closing_probability = np.full(odds.shape, np.nan)
    columns = {
        "profit": np.asarray(profit, dtype=float),
        "odds": odds,
        "edge": np.asarray(edge, dtype=float),
        "clv": np.asarray(clv, dtype=float),
        "stake": np.asarray(stake, dtype=float),
        # The expected return of the price taken at the fair (margin-free) closing price.
        "closing_ev": odds * np.asarray(closing_probability, dtype=float) - 1.0,
    }
    shapes = {name: column.shape for name, column in columns.items()} | {"status": status.shape}
    if len(set(shapes.values())) != 1 or status.ndim != 1:
        raise ValueError(f"track-record columns must be 1-d and of one length, got {shapes}")
    code = np.full(status.shape, _OTHER, dtype=np.intp)
    for position, name in enumerate(STATUS_ORDER):
        code[status == name] = position
    columns["code"] = code
    columns["decided"] = np.isin(code, (_WON, _LOST, _HALF_WON, _HALF_LOST))
    columns["booked"] = (columns["decided"] | (code == _VOID)) & np.isfinite(columns["profit"])
    columns["settled"] = columns["decided"] | (code == _VOID)
    return columns


def _segment_starts(group):
    """Start positions of the runs of equal values in a sorted group array."""
    return np.flatnonzero(np.concatenate([[True], group[1:] != group[:-1]]))


def _grouped_drawdown(group, profit, n_groups):
    """max_drawdown per group, ``group``/``profit`` being settled picks in chronological order."""
    result = np.zeros(n_groups)
    if not group.size:
        return result
    if n_groups == 1:
        result[0] = max_drawdown(profit)
        return result
    order = np.argsort(group, kind="stable")
    group, profit = group[order], profit[order]
    starts = _segment_starts(group)
    cumulative = np.cumsum(profit)
    before = np.concatenate([[0.0], cumulative])[starts]
    cumulative -= np.repeat(before, np.diff(np.append(starts, group.size)))
    # A running maximum that restarts with each group: on ranks offset by group × m, the keys of a
    # later group all exceed those of an earlier one, and the integers stay exact.
    m = cumulative.size
    ranked = np.argsort(cumulative)
    rank = np.empty(m, dtype=np.int64)
    rank[ranked] = np.arange(m)
    offset = group.astype(np.int64) * m
    running = np.maximum.accumulate(offset + rank) - offset
    peak = np.maximum(cumulative[ranked][running], 0.0)
    result[group[starts]] = np.maximum.reduceat(peak - cumulative, starts)
    return result


def _grouped_streak(group, lost, n_groups):
    """longest_losing_streak per group, ``group``/``lost`` being decided picks in order."""
    result = np.zeros(n_groups, dtype=np.int64)
    if not lost.any():
        return result
    if n_groups > 1:
        order = np.argsort(group, kind="stable")
        group, lost = group[order], lost[order]
    continues = np.concatenate([[False], lost[:-1] & (group[1:] == group[:-1])])
    starts = lost & ~continues
    run = np.cumsum(starts) - 1
    np.maximum.at(result, group[starts], np.bincount(run[lost]))
    return result


def _ratio(numerator, denominator):
    """numerator / denominator as a float, None when the denominator is 0."""
    return float(numerator / denominator) if denominator else None


def _standard_error(squares, n, scale):
    """√(squares / (n − 1)) · √n / scale: with ``scale`` = n the standard error of a mean whose
    squared deviations sum to ``squares``; with ``scale`` the sum of the weights, that of a
    ratio of sums. None with fewer than two values."""
    if n < 2 or not scale:
        return None
    return float(np.sqrt(squares / (n - 1) * n) / scale)


def grouped_figures(group, n_groups, columns):
    """Track-record figures (see track_record) for each group, as a list indexed by group.

    ``group`` (n,) holds each pick's group in [0, n_groups); ``columns`` come from pick_columns,
    with the picks in settlement order.
    """
    group = np.asarray(group, dtype=np.intp)
    code = columns["code"]
    if group.shape != code.shape:
        raise ValueError("group must have one entry per pick")
    booked, decided = columns["booked"], columns["decided"]
    codes = _OTHER + 1
    by_status = np.bincount(group * codes + code, minlength=n_groups * codes)
    by_status = by_status.reshape(n_groups, codes)

    def total(weights):
        """Per-group sum of ``weights``."""
        return np.bincount(group, weights=weights, minlength=n_groups)

    def average(values):
        """Per-group sum and count of the finite ``values``."""
        known = np.isfinite(values)
        return total(np.where(known, values, 0.0)), total(known)

    def spread(values, centre):
        """Per-group sum of squared deviations of the finite ``values`` from ``centre`` (per
        group, NaN-free)."""
        known = np.isfinite(values)
        deviation = np.where(known, values - centre[group], 0.0)
        return total(deviation**2)

    picks = by_status.sum(axis=1)
    staked = total(np.where(decided, columns["stake"], 0.0))
    profit = total(np.where(booked, columns["profit"], 0.0))
    odds_sum, odds_n = average(columns["odds"])
    edge_sum, edge_n = average(columns["edge"])
    clv_sum, clv_n = average(columns["clv"])
    closing_ev_sum, closing_ev_n = average(columns["closing_ev"])
    closing_ev_mean = closing_ev_sum / np.maximum(closing_ev_n, 1)
    closing_ev_squares = spread(columns["closing_ev"], closing_ev_mean)
    # The settled picks each average leaves out for want of a value (a pending pick has none
    # yet, and is counted as pending).
    settled = columns["settled"]
    clv_excluded = total(settled & ~np.isfinite(columns["clv"]))
    closing_ev_excluded = total(settled & ~np.isfinite(columns["closing_ev"]))
    # The ROI is a ratio of sums over the decided picks: its standard error is that of the
    # mean residual profit − roi × stake, divided by the mean stake (the delta method).
    roi = profit / np.where(staked > 0, staked, 1.0)
    residual = np.where(decided, columns["profit"] - roi[group] * columns["stake"], np.nan)
    decided_n = total(np.isfinite(residual))
    roi_squares = spread(residual, np.zeros(n_groups))
    drawdown = _grouped_drawdown(group[booked], columns["profit"][booked], n_groups)
    losing = np.isin(code[decided], (_LOST, _HALF_LOST))
    streak = _grouped_streak(group[decided], losing, n_groups)

    figures = []
    for g in range(n_groups):
        won, lost = int(by_status[g, _WON]), int(by_status[g, _LOST])
        half_won, half_lost = int(by_status[g, _HALF_WON]), int(by_status[g, _HALF_LOST])
        figures.append(
            {
                "picks": int(picks[g]),
                "won": won,
                "lost": lost,
                "void": int(by_status[g, _VOID]),
                "half_won": half_won,
                "half_lost": half_lost,
                "pending": int(by_status[g, _PENDING]),
                "hit_rate": _ratio(won + half_won, won + lost + half_won + half_lost),
                "staked": float(staked[g]),
                "profit": float(profit[g]),
                "roi": _ratio(profit[g], staked[g]),
                "roi_std_error": _standard_error(roi_squares[g], decided_n[g], staked[g]),
                "avg_odds": _ratio(odds_sum[g], odds_n[g]),
                "avg_edge": _ratio(edge_sum[g], edge_n[g]),
                "avg_clv": _ratio(clv_sum[g], clv_n[g]),
                "clv_excluded": int(clv_excluded[g]),
                "avg_closing_ev": _ratio(closing_ev_sum[g], closing_ev_n[g]),
                "avg_closing_ev_std_error": _standard_error(
                    closing_ev_squares[g], closing_ev_n[g], closing_ev_n[g]
                ),
                "closing_ev_excluded": int(closing_ev_excluded[g]),
                "max_drawdown": float(drawdown[g]),
                "longest_losing_streak": int(streak[g]),
            }
        )
    return figures


def track_record(status, profit, odds, edge, clv, stake, closing_probability=None):
    """Figures of a list of picks in settlement order.

    picks, won, lost, void, half_won, half_lost, pending; hit_rate = the share of the decided
    picks (won, lost, half won, half lost) that made money; staked = stake of the decided picks;
    profit (of settled picks); roi = profit / staked and roi_std_error, its standard error
    over the decided picks; avg_odds and avg_edge over the picks that have one, avg_clv over
    those with a CLV and clv_excluded, the settled picks (decided or void) without one,
    avg_closing_ev (odds × de-margined closing probability − 1) over those with a closing
    probability, avg_closing_ev_std_error and closing_ev_excluded, the settled picks without a
    closing probability; max_drawdown (over settled picks) and
    longest_losing_streak as their functions define them. Ratios and averages are None when
    there is nothing to divide by, standard errors with fewer than two values.
    """
    columns = pick_columns(status, profit, odds, edge, clv, stake, closing_probability)
    return grouped_figures(np.zeros(columns["code"].shape, dtype=np.intp), 1, columns)[0]


def track_record_by(keys, status, profit, odds, edge, clv, stake, closing_probability=None):
    """Figures per distinct key, ``{key: figures}`` in ascending key order (see track_record)."""
    columns = pick_columns(status, profit, odds, edge, clv, stake, closing_probability)
    unique, group = np.unique(np.asarray(keys), return_inverse=True)
    if group.shape != columns["code"].shape:
        raise ValueError("keys must have one entry per pick")
    return dict(zip(unique.tolist(), grouped_figures(group, len(unique), columns), strict=True))
