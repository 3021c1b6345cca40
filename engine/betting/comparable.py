"""Comparable matches: the past forecasts nearest to a forecast, and how often each selection won
among them."""

from dataclasses import dataclass

import numpy as np


@dataclass
class Neighbours:
    """The nearest candidates, nearest first, and what happened to them."""

    index: np.ndarray  # (m,) positions in the candidate arrays
    distance: np.ndarray  # (m,) Euclidean distance between probability vectors
    mean_predicted: np.ndarray  # (k,) mean forecast of each selection over the neighbours
    observed_rate: np.ndarray  # (k,) share of the neighbours' decided stakes each selection won


def nearest(target, candidates, outcomes, count: int, shares=None) -> Neighbours:
    """The ``count`` candidates whose probabilities (n, k) lie nearest ``target`` (k,).

    Distance is Euclidean over the selections' probabilities; ties keep the candidates' order.
    ``outcomes`` (n,) holds each candidate's winning selection index (-1: none, a push);
    ``shares`` (n,) the share of a stake its result decided (1 by default; at a quarter line a
    half won or half lost is ½, a push 0), which weighs it in the observed rates, as a line
    market's fair probability weighs stakes won against stakes lost. With no neighbours, or
    none decided, the means or rates are NaN.
    """
    target = np.asarray(target, dtype=float)
    candidates = np.asarray(candidates, dtype=float).reshape(-1, target.size)
    outcomes = np.asarray(outcomes, dtype=np.intp)
    shares = np.ones(len(outcomes)) if shares is None else np.asarray(shares, dtype=float)
    if count < 1:
        raise ValueError("count must be at least 1")
    if outcomes.shape != candidates.shape[:1] or shares.shape != outcomes.shape:
        raise ValueError("outcomes and shares need one entry per candidate")
    distance = np.sqrt(((candidates - target) ** 2).sum(axis=1))
    index = np.argsort(distance, kind="stable")[:count]
    chosen = candidates[index]
    won = outcomes[index, None] == np.arange(target.size)
    if not index.size:
        empty = np.full(target.size, np.nan)
        return Neighbours(index, distance[index], empty, empty.copy())
    weight = shares[index]
    decided = weight.sum()
    rate = (
        (won * weight[:, None]).sum(axis=0) / decided if decided else np.full(target.size, np.nan)
    )
    return Neighbours(index, distance[index], chosen.mean(axis=0), rate)
