"""Suggested stakes: fractional Kelly, capped, zero where the evidence is thin; and what they
would have made.

Kelly for a binary bet at decimal price o won with probability p stakes the bankroll share
f* = (p·o − 1)/(o − 1) (0 where the edge p·o − 1 is not positive): the share that maximises the
expected log growth of the bankroll. Staking f* exactly presumes p is right; an overestimated p
overbets, and overbetting costs growth far faster than underbetting. So the suggestion is a
fraction of it (``fraction``, a quarter by default), capped at ``cap`` of the bankroll, and 0
where the evidence behind the pick is thin: its data quality below the rating rule's B threshold,
or fewer than ``min_settled`` settled picks of its rating and price band (:data:`STAKE_BANDS`)
known when it was made (:func:`settled_before`).

Markets with lines. Their probability is the *fair* one, p = W/(W + Lo), W and Lo the expected
shares of the stake won and lost (``engine.model.lines``). On a whole or half line the bet wins,
loses or is refunded (a push): the push leaves the bankroll as it was, so the growth is
W·ln(1 + f(o − 1)) + Lo·ln(1 − f), maximised by the binary f* at p: exact. On a quarter line
(two half stakes) the bet can also be half won or half lost; with a, b, c, d the chances of a
full win, half win, half loss and full loss the growth is
a·ln(1 + f(o − 1)) + b·ln(1 + f(o − 1)/2) + c·ln(1 − f/2) + d·ln(1 − f). Its slope at f = 0 is
W(o − 1) − Lo, as for the binary bet at p, but its curvature, a(o − 1)² + d + (b(o − 1)² + c)/4,
is smaller than the binary bet's, W(o − 1)² + Lo (a half outcome moves the bankroll by half), so
its optimum lies above the binary f* (up to twice it when every outcome is a half). The binary
f* at the fair probability is therefore used for every market: exact for whole and half lines,
an underbet (conservative) for quarter lines, which needs only the pick's probability.
"""

import numpy as np

#: Upper edges of the price bands a stake's evidence is counted in (not the rating rule's
#: ``metrics.PRICE_BANDS``): below 2.0, 2.0 to 3.0, 3.0 to 5.0,
#: 5.0 and above. A long price's record is noisier (a bet at o has a spread near √(o − 1)), so
#: each band has to earn its own stakes.
STAKE_BANDS = (2.0, 3.0, 5.0)

#: A settled pick counts as evidence for picks made at least this long after its kick-off (its
#: match played and settled by then): seconds.
RESULT_DELAY = 86_400


def kelly(probability, odds) -> np.ndarray:
    """Full Kelly share of the bankroll, (p·o − 1)/(o − 1), 0 where the edge is not positive or
    a probability or price is missing (NaN, or a price not above 1)."""
    p = np.asarray(probability, dtype=float)
    o = np.asarray(odds, dtype=float)
    known = np.isfinite(p) & np.isfinite(o) & (o > 1.0)
    o_ = np.where(known, o, 2.0)
    share = (np.where(known, p, 0.0) * o_ - 1.0) / (o_ - 1.0)
    return np.where(known, np.clip(share, 0.0, 1.0), 0.0)


def stake_band(odds) -> np.ndarray:
    """Each price's band: 0 below ``STAKE_BANDS[0]``, then one up at each edge (NaN: band 0)."""
    o = np.nan_to_num(np.asarray(odds, dtype=float), nan=0.0)
    return np.searchsorted(np.asarray(STAKE_BANDS), o, side="right")


def settled_before(moment, rating, odds, known_at, known_rating, known_odds) -> np.ndarray:
    """For each pick (made at ``moment``, epoch seconds, with its ``rating`` and ``odds``), how
    many of the settled picks (known at ``known_at``, with ``known_rating`` and ``known_odds``)
    share its rating and price band and were known at or before its moment. Walk-forward: a
    result known later never counts."""
    moment = np.asarray(moment, dtype=float)
    rating = np.asarray(rating, dtype=str)
    band = stake_band(odds)
    known_at = np.asarray(known_at, dtype=float)
    known_rating = np.asarray(known_rating, dtype=str)
    known_band = stake_band(known_odds)
    counts = np.zeros(moment.shape, dtype=np.int64)
    for value in np.unique(rating).tolist():
        for b in np.unique(band[rating == value]).tolist():
            mine = (rating == value) & (band == b)
            times = np.sort(known_at[(known_rating == value) & (known_band == b)])
            counts[mine] = np.searchsorted(times, moment[mine], side="right")
    return counts


def suggested(
    probability,
    odds,
    data_quality,
    evidence,
    *,
    fraction: float,
    cap: float,
    min_quality: float,
    min_settled: int,
) -> np.ndarray:
    """The suggested stake of each pick, a share of the bankroll: ``fraction`` × Kelly at
    ``probability`` and ``odds``, at most ``cap``; 0 where ``data_quality`` is below
    ``min_quality`` (or missing) or ``evidence`` (settled picks of its rating and price band,
    :func:`settled_before`) is below ``min_settled``."""
    share = np.minimum(fraction * kelly(probability, odds), cap)
    quality = np.asarray(data_quality, dtype=float)
    thin = ~(np.nan_to_num(quality, nan=-1.0) >= min_quality)
    thin |= np.asarray(evidence) < min_settled
    return np.where(thin, 0.0, share)


def record(stake, unit_profit, flat: float) -> dict:
    """What betting ``stake`` (shares of the bankroll) on each decided pick would have made,
    beside staking every one ``flat``, in the order given (settlement order): the profit per pick
    (``unit_profit``, per unit staked: odds − 1, −1, halves for a quarter line's half outcomes, 0
    for a void) times its stake is the bankroll's return on that pick.

    Returns ``{"picks", "staked", "mean_stake", "suggested", "flat"}``: the decided picks, how
    many had a stake above 0, their mean suggested stake; and for each way of staking the mean
    return per pick (a share of the bankroll) with its standard error (the sample standard
    deviation over √n; None below two picks), and ``growth``, the bankroll's growth after them
    all, each stake a share of the bankroll at the time: ∏(1 + return) − 1. Means are None
    without picks."""
    stake = np.asarray(stake, dtype=float)
    unit = np.asarray(unit_profit, dtype=float)
    n = int(unit.size)
    staked = stake > 0.0
    return {
        "picks": n,
        "staked": int(staked.sum()),
        "mean_stake": float(stake[staked].mean()) if staked.any() else None,
        "suggested": _returns(stake * unit),
        "flat": _returns(flat * unit),
    }


def _returns(returns: np.ndarray) -> dict:
    """Mean, its standard error and the compounded growth of per-pick bankroll returns."""
    n = returns.size
    return {
        "mean_return": float(returns.mean()) if n else None,
        "mean_return_std_error": float(returns.std(ddof=1) / np.sqrt(n)) if n > 1 else None,
        "growth": float(np.expm1(np.log1p(returns).sum())) if n else None,
    }
