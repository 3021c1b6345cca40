"""Picks: the edge of a probability over a price, the choice of one selection per match and market,
and the A/B/C rating that weighs the expected log growth of the bet against the quality of the
data behind it.

The edge p·o − 1 says how much a bet is worth on average, not how much of it is noise: a 10 %
edge at 15.0 is a long shot that mostly loses, the same edge at 2.0 is not. The rating therefore
ranks a pick by the expected log growth of a Kelly stake on it,
g = p·ln(p·o) + (1 − p)·ln((1 − p)·o / (o − 1)), which is about edge² / (2(o − 1)): for the same
g, the edge a pick needs grows with the square root of its price. The thresholds (and the
smallest growth that makes a pick at all) were chosen on the Premier League and La Liga
2017/18–2021/22 and confirmed on other leagues and on later seasons (``bench/ratings.py`` prints
both).
"""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class RatingThresholds:
    """Smallest expected log growth and data quality for an ``A`` and a ``B`` rating; anything
    else is ``C``. ``A`` at 0.001 asks an edge of about 0.045 at 2.0, 0.10 at 6.0 and 0.14 at
    11.0; ``B`` at 0.0005 about 0.03, 0.07 and 0.10."""

    a_growth: float = 0.001
    a_quality: float = 0.8
    b_growth: float = 0.0005
    b_quality: float = 0.6


#: The smallest edge that makes a pick. A smallest expected log growth may be asked as well
#: (``choose``'s ``min_growth``); the search that chose the thresholds found none helps.
MIN_EDGE = 0.02


@dataclass(frozen=True)
class DataQualityConfig:
    """Targets at which each part of the data-quality score is full, and the parts' weights.

    ``history_target`` prior matches in the model window for the less-documented team,
    ``bookmaker_target`` real bookmakers quoting; the weights must sum to 1 so the score stays
    in [0, 1].
    """

    history_target: float = 20.0
    bookmaker_target: float = 5.0
    history_weight: float = 0.45
    bookmaker_weight: float = 0.40
    sharp_weight: float = 0.15

    def __post_init__(self):
        """Reject targets that are not positive and weights that do not form a convex sum."""
        if self.history_target <= 0 or self.bookmaker_target <= 0:
            raise ValueError("data-quality targets must be positive")
        weights = (self.history_weight, self.bookmaker_weight, self.sharp_weight)
        if min(weights) < 0 or not np.isclose(sum(weights), 1.0):
            raise ValueError("data-quality weights must be non-negative and sum to 1")


def edges(probs, prices):
    """Expected profit per unit staked, p × o − 1; NaN wherever a probability or price is NaN."""
    return np.asarray(probs, dtype=float) * np.asarray(prices, dtype=float) - 1.0


def growth(probs, prices):
    """Expected log growth of a Kelly stake on each selection, in nats per bet.

    With q = 1/o the price's own probability, g = p·ln(p/q) + (1 − p)·ln((1 − p)/(1 − q)) (the
    Kullback–Leibler divergence of q from p) where the edge p·o − 1 is positive, 0 where it is
    not (Kelly stakes nothing), NaN where a probability or a price is NaN.
    """
    p = np.asarray(probs, dtype=float)
    o = np.asarray(prices, dtype=float)
    known = np.isfinite(p) & np.isfinite(o) & (o > 1.0)
    value = known & (p * np.where(known, o, 1.0) > 1.0)
    # Placeholders keep the logarithms finite where the answer is fixed anyway.
    p_ = np.where(value, np.minimum(p, 1.0), 0.6)
    q = np.where(value, 1.0 / np.where(known, o, 2.0), 0.5)
    won = p_ * np.log(p_ / q)
    lost = np.where(p_ < 1.0, (1.0 - p_) * np.log(np.maximum(1.0 - p_, 1e-300) / (1.0 - q)), 0.0)
    return np.where(value, won + lost, np.where(known, 0.0, np.nan))


def choose(probs, best_prices, min_edge=MIN_EDGE, min_growth=0.0):
    """At most one pick per row: the selection with the largest edge, if that edge ≥ ``min_edge``
    and its expected log growth ≥ ``min_growth``.

    ``probs`` and ``best_prices`` are (n, k). Returns ``(selection, edge, growth)``: selection
    (n,) the index of the chosen selection or −1; edge (n,) and growth (n,) those of the row's
    largest-edge selection, whether picked or not (NaN where no selection has both a probability
    and a price). Ties go to the first selection.
    """
    edge = edges(probs, best_prices)
    if edge.ndim != 2:
        raise ValueError(f"probs and prices must be (n, k), got {edge.shape}")
    filled = np.where(np.isnan(edge), -np.inf, edge)
    index = filled.argmax(axis=1)
    rows = np.arange(filled.shape[0])
    largest = filled[rows, index]
    kelly = growth(
        np.asarray(probs, dtype=float)[rows, index],
        np.asarray(best_prices, dtype=float)[rows, index],
    )
    found = np.isfinite(largest)
    picked = found & (largest >= min_edge) & (kelly >= min_growth)
    return (
        np.where(picked, index, -1),
        np.where(found, largest, np.nan),
        np.where(found, kelly, np.nan),
    )


def rate(growth, data_quality, thresholds=RatingThresholds()):
    """Rating per pick from its expected log growth and data quality: ``A``, ``B`` or ``C`` (a
    NaN growth or quality is ``C``), as a str array."""
    growth = np.asarray(growth, dtype=float)
    quality = np.asarray(data_quality, dtype=float)
    is_a = (growth >= thresholds.a_growth) & (quality >= thresholds.a_quality)
    is_b = (growth >= thresholds.b_growth) & (quality >= thresholds.b_quality)
    return np.where(is_a, "A", np.where(is_b, "B", "C"))


def data_quality(
    history_home, history_away, n_bookmakers, has_sharp_line, config=DataQualityConfig()
):
    """How well-founded each forecast is, in [0, 1], and the three parts it is made of.

    Only what is known when the forecast is made counts (never the match's closing prices):
    history = min(1, min(history_home, history_away) / history_target), the team with fewer
    prior matches in the model window limiting the forecast; bookmakers = min(1, n_bookmakers /
    bookmaker_target) quoting before kick-off; sharp_line = 1 where the sharp bookmaker quotes
    the market before kick-off (the line the published forecast is anchored on), else 0. The
    score is their weighted sum. Returns ``(score, {"history": ..., "bookmakers": ...,
    "sharp_line": ...})``, all (n,) and unrounded. Missing (NaN) counts score 0.
    """
    history = np.minimum(
        np.asarray(history_home, dtype=float), np.asarray(history_away, dtype=float)
    )
    books = np.asarray(n_bookmakers, dtype=float)
    parts = {
        "history": np.clip(np.nan_to_num(history / config.history_target), 0.0, 1.0),
        "bookmakers": np.clip(np.nan_to_num(books / config.bookmaker_target), 0.0, 1.0),
        "sharp_line": np.asarray(has_sharp_line, dtype=bool).astype(float),
    }
    score = (
        config.history_weight * parts["history"]
        + config.bookmaker_weight * parts["bookmakers"]
        + config.sharp_weight * parts["sharp_line"]
    )
    return score, {name: np.broadcast_to(part, score.shape).copy() for name, part in parts.items()}
