"""Picks: the edge of a probability over a price, the choice of one selection per match and market,
and the A/B/C rating that weighs the edge against the quality of the data behind it."""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class RatingThresholds:
    """Minimum edge and data quality for an ``A`` and a ``B`` rating; anything else is ``C``."""

    a_edge: float = 0.08
    a_quality: float = 0.8
    b_edge: float = 0.05
    b_quality: float = 0.6


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
    closing_weight: float = 0.15

    def __post_init__(self):
        """Reject targets that are not positive and weights that do not form a convex sum."""
        if self.history_target <= 0 or self.bookmaker_target <= 0:
            raise ValueError("data-quality targets must be positive")
        weights = (self.history_weight, self.bookmaker_weight, self.closing_weight)
        if min(weights) < 0 or not np.isclose(sum(weights), 1.0):
            raise ValueError("data-quality weights must be non-negative and sum to 1")


def edges(probs, prices):
    """Expected profit per unit staked, p × o − 1; NaN wherever a probability or price is NaN."""
    return np.asarray(probs, dtype=float) * np.asarray(prices, dtype=float) - 1.0


def choose(probs, best_prices, min_edge=0.02):
    """At most one pick per row: the selection with the largest edge, if that edge ≥ ``min_edge``.

    ``probs`` and ``best_prices`` are (n, k). Returns ``(selection, edge)``: selection (n,) the
    index of the chosen selection or −1, edge (n,) the row's largest edge whether picked or not
    (NaN where no selection has both a probability and a price). Ties go to the first selection.
    """
    edge = edges(probs, best_prices)
    if edge.ndim != 2:
        raise ValueError(f"probs and prices must be (n, k), got {edge.shape}")
    filled = np.where(np.isnan(edge), -np.inf, edge)
    index = filled.argmax(axis=1)
    largest = filled[np.arange(filled.shape[0]), index]
    selection = np.where(largest >= min_edge, index, -1)
    return selection, np.where(np.isfinite(largest), largest, np.nan)


def rate(edge, data_quality, thresholds=RatingThresholds()):
    """Rating per pick: ``A``, ``B`` or ``C`` (a NaN edge or quality is ``C``), as a str array."""
    edge = np.asarray(edge, dtype=float)
    quality = np.asarray(data_quality, dtype=float)
    is_a = (edge >= thresholds.a_edge) & (quality >= thresholds.a_quality)
    is_b = (edge >= thresholds.b_edge) & (quality >= thresholds.b_quality)
    return np.where(is_a, "A", np.where(is_b, "B", "C"))


def data_quality(history_home, history_away, n_bookmakers, has_closing, config=DataQualityConfig()):
    """How well-founded each forecast is, in [0, 1], and the three parts it is made of.

    history = min(1, min(history_home, history_away) / history_target): the team with fewer prior
    matches in the model window limits the forecast; bookmakers = min(1, n_bookmakers /
    bookmaker_target); closing_odds = 1 if closing odds exist else 0. The score is their weighted
    sum. Returns ``(score, {"history": ..., "bookmakers": ..., "closing_odds": ...})``, all (n,)
    and unrounded. Missing (NaN) counts score 0.
    """
    history = np.minimum(
        np.asarray(history_home, dtype=float), np.asarray(history_away, dtype=float)
    )
    books = np.asarray(n_bookmakers, dtype=float)
    parts = {
        "history": np.clip(np.nan_to_num(history / config.history_target), 0.0, 1.0),
        "bookmakers": np.clip(np.nan_to_num(books / config.bookmaker_target), 0.0, 1.0),
        "closing_odds": np.asarray(has_closing, dtype=bool).astype(float),
    }
    score = (
        config.history_weight * parts["history"]
        + config.bookmaker_weight * parts["bookmakers"]
        + config.closing_weight * parts["closing_odds"]
    )
    return score, {name: np.broadcast_to(part, score.shape).copy() for name, part in parts.items()}
