"""Calibration of one market's forecasts against what happened, optionally beside a reference
forecast (the bookmakers' closing implied probabilities) scored on the same matches."""

import numpy as np

from engine.betting import metrics


def _figures(probs, outcome, ordered, bins, prices):
    """Count, Brier, log loss, RPS (ordered markets only), ECE, reliability bins and, with
    ``prices``, reliability by price band."""
    return {
        "count": len(outcome),
        "brier": metrics.brier(probs, outcome),
        "log_loss": metrics.log_loss(probs, outcome),
        "rps": metrics.rps(probs, outcome) if ordered else None,
        "ece": metrics.expected_calibration_error(probs, outcome, bins=bins),
        "bins": metrics.reliability(probs, outcome, bins=bins),
        "price_bands": (
            None if prices is None else metrics.reliability_by_price(probs, outcome, prices)
        ),
    }


def evaluate(probs, outcome, reference=None, ordered=False, bins=10, prices=None):
    """Calibration figures of one market's forecasts ``probs`` (n, k) given outcome indices (n,).

    Rows where the forecast has a NaN are left out. With a ``reference`` (n, k) that exists for at
    least one remaining row, the model and the reference are both scored on exactly the rows where
    both exist, so they compare like with like; otherwise the model is scored on all its rows and
    ``reference`` is None. ``prices`` (n, k), the selections' prices (NaN where unknown), add
    reliability by price band (:func:`engine.betting.metrics.reliability_by_price`) to both. Returns
    ``{"count", "brier", "log_loss", "rps", "ece", "bins", "price_bands", "reference"}``,
    ``reference`` holding the same figures (its own ``reference`` omitted); scores are None when
    no row is left, ``price_bands`` None without prices.
    """
    probs = np.asarray(probs, dtype=float)
    outcome = np.asarray(outcome)
    if probs.ndim != 2 or outcome.shape != probs.shape[:1]:
        raise ValueError(f"need probs (n, k) and outcome (n,), got {probs.shape}, {outcome.shape}")
    rows = np.isfinite(probs).all(axis=1)
    if prices is not None:
        prices = np.asarray(prices, dtype=float)
        if prices.shape != probs.shape:
            raise ValueError(f"prices must match probs {probs.shape}, got {prices.shape}")
    ref_figures = None
    if reference is not None:
        reference = np.asarray(reference, dtype=float)
        if reference.shape != probs.shape:
            raise ValueError(f"reference must match probs {probs.shape}, got {reference.shape}")
        both = rows & np.isfinite(reference).all(axis=1)
        if both.any():
            rows = both
            ref_figures = _figures(reference[rows], outcome[rows], ordered, bins, _at(prices, rows))
    figures = _figures(probs[rows], outcome[rows], ordered, bins, _at(prices, rows))
    return {**figures, "reference": ref_figures}


def _at(prices, rows):
    """The prices of ``rows``, or None without prices."""
    return None if prices is None else prices[rows]
