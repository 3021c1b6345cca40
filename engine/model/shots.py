"""Shots beside goals: a goal proxy from shots on target, and past matches' goal rates moved
towards what the sides did.

The market-implied ratings learn each past match's goal rates from its closing line
(``engine.model.market_ratings``). What happened in the match (its goals, and its shots on
target at the rate they turn into goals) can move those rates before the ratings are fitted:

    rate' = rate + goal_weight · (goals − rate) + shots_weight · (conversion · on_target − rate)

with ``conversion`` the goals per shot on target of every match kicked off before the one
moved, so a rate is moved only by what was known once its match had been played. Both weights
at 0 leave the rates alone (the ratings' default: measured in ``bench/goal_model.py``).
"""

import numpy as np

#: The least goal rate a moved rate keeps, so that its logarithm stays finite.
RATE_FLOOR = 0.05


def running_conversion(kickoff, goals, on_target) -> np.ndarray:
    """Per row, goals per shot on target over the rows kicked off strictly before it.

    ``kickoff`` (n,), ``goals`` and ``on_target`` (n, 2) home and away; a row counts only
    where its goals and shots on target are all finite. NaN where no earlier shot on target.
    """
    kickoff = np.asarray(kickoff, dtype=np.int64)
    goals = np.asarray(goals, dtype=float)
    on_target = np.asarray(on_target, dtype=float)
    known = np.isfinite(goals).all(axis=1) & np.isfinite(on_target).all(axis=1)
    order = np.argsort(kickoff, kind="stable")
    ordered = kickoff[order]
    scored = np.cumsum(np.where(known, goals.sum(axis=1), 0.0)[order])
    shot = np.cumsum(np.where(known, on_target.sum(axis=1), 0.0)[order])
    # The rows strictly before each kick-off: those are the first `before` of the sorted ones.
    before = np.searchsorted(ordered, kickoff, side="left")
    total_goals = np.where(before > 0, scored[np.maximum(before - 1, 0)], 0.0)
    total_shots = np.where(before > 0, shot[np.maximum(before - 1, 0)], 0.0)
    return np.where(
        total_shots > 0, total_goals / np.where(total_shots > 0, total_shots, 1.0), np.nan
    )


def goal_proxy(goals, on_target, conversion, share: float) -> np.ndarray:
    """Goals (n, 2) blended with shots on target × conversion: (1 − share) · goals + share ·
    conversion · on_target, the goals alone where the shots term is unknown. Dixon-Coles can
    fit it in place of goals (its likelihood takes any non-negative count)."""
    goals = np.asarray(goals, dtype=float)
    proxy = np.asarray(conversion, dtype=float)[:, None] * np.asarray(on_target, dtype=float)
    return np.where(np.isfinite(proxy), (1.0 - share) * goals + share * proxy, goals)


def moved_rates(
    rates, goals, on_target, conversion, goal_weight: float, shots_weight: float
) -> np.ndarray:
    """Goal rates (n, 2) moved towards the goals scored and the shots on target × conversion.

    ``rates``, ``goals`` and ``on_target`` are (n, 2) home and away, ``conversion`` (n,). Where
    a row has no shots on target (or no conversion yet) the shots term is left out; where it
    has no goals, the goals term; NaN rates stay NaN. The result is floored at RATE_FLOOR.
    """
    rates = np.asarray(rates, dtype=float)
    goals = np.asarray(goals, dtype=float)
    proxy = np.asarray(conversion, dtype=float)[:, None] * np.asarray(on_target, dtype=float)
    moved = rates.copy()
    if goal_weight:
        moved += np.where(np.isfinite(goals), goal_weight * (goals - rates), 0.0)
    if shots_weight:
        moved += np.where(np.isfinite(proxy), shots_weight * (proxy - rates), 0.0)
    return np.where(np.isfinite(rates), np.maximum(moved, RATE_FLOOR), np.nan)


def observed_rates(rates, kickoff, goals, on_target, config) -> np.ndarray:
    """``moved_rates`` with the running conversion and ``config``'s ``goal_weight`` and
    ``shots_weight`` (a ``RatingsConfig``): what the market-implied ratings fit on."""
    conversion = running_conversion(kickoff, goals, on_target)
    return moved_rates(rates, goals, on_target, conversion, config.goal_weight, config.shots_weight)
