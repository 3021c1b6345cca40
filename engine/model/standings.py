"""The league table from a season's earlier results, and what is still at stake for each side.

A competition's season is a double round robin: each of its n sides plays 2 (n − 1) matches.
Before a match, the table counts the results of the season's matches that kicked off before the
match's cut-off (3 points a win, 1 a draw). A side with ``points`` and ``left`` matches to play
can still finish above every side it can reach, and below every side that can reach it:

    best  = 1 + #{sides whose points already exceed points + 3 · left}
    worst = 1 + #{other sides whose points + 3 · their left reach points}

(ties counted as possible either way: the tie-breakers are not known in advance). The table is
cut into zones (the title, the European places, the relegation places: ``zone_cuts``); a side
whose best and worst places fall in one zone has nothing left at stake, a *dead rubber* side.
The bound is the usual "mathematically" one, blind to the sides' meetings with each other, so
a side is called dead only when no run of results can move it (never too early). A ``pace``
under 3 points a match calls a side settled sooner, once only an unlikely run would move it.
A season cut short (Ligue 1 2019/20 stopped after 28 rounds) leaves its sides the matches it
never played, so nothing in it is ever dead.

``goal_factors`` turns that into a multiplicative factor on each side's goal rate
(``engine.model.market_ratings.RatingsConfig.dead_attack``, ``dead_defence`` and kin). Off in
the model: the setting chosen on the Premier League and La Liga (a side settled at 1.5 points a
match: its own rate −5 %, its opponent's +10 %) gained −0.00158 ± 0.00073 × the close's RPS
there and −0.00023 ± 0.00070 on the Bundesliga, Ligue 1 and the Championship
(``bench/goal_model.py``, section 4; docs/method.md).
"""

from dataclasses import dataclass

import numpy as np

#: The places that end a zone counted from the top (the title, the Champions League, the other
#: European places) and from the bottom (the relegation places): a table of n sides is cut after
#: places 1, 4 and 6 and after place n − 3. The leagues differ a little (the Championship's
#: automatic promotion ends at 2 and its play-offs at 6; the Bundesliga relegates 2 and a
#: play-off); one cut for all keeps the rule from being fitted league by league.
TOP_CUTS = (1, 4, 6)
BOTTOM_CUTS = (3,)
WIN, DRAW = 3, 1


def zone_cuts(sides: int, top=TOP_CUTS, bottom=BOTTOM_CUTS) -> np.ndarray:
    """The sorted places after which a new zone starts, in a table of ``sides`` sides."""
    cuts = {c for c in top if 0 < c < sides} | {sides - c for c in bottom if 0 < c < sides}
    return np.array(sorted(cuts), dtype=np.int64)


def zone(place, cuts) -> np.ndarray:
    """Each 1-based ``place``'s zone: how many cuts lie before it."""
    return np.searchsorted(np.asarray(cuts), np.asarray(place), side="left")


def reachable_places(points, left, pace: float = WIN) -> tuple[np.ndarray, np.ndarray]:
    """Each side's best and worst final place (1-based) from its ``points`` and the matches it
    has ``left``: the bounds above, ties counted as possible. ``pace`` is the most points a
    side is taken to win a match: 3 is the mathematical bound, less reads a side as settled
    once only an unlikely run would move it."""
    points = np.asarray(points, dtype=float)
    most = points + pace * np.asarray(left, dtype=float)
    best = 1 + (points[None, :] > most[:, None]).sum(axis=1)
    reach = most[None, :] >= points[:, None]
    np.fill_diagonal(reach, False)
    worst = 1 + reach.sum(axis=1)
    return best, worst


def dead(points, left, cuts, pace: float = WIN) -> np.ndarray:
    """Per side, True where its best and worst places share a zone: nothing left at stake."""
    best, worst = reachable_places(points, left, pace)
    return zone(best, cuts) == zone(worst, cuts)


def table(home, away, home_goals, away_goals, sides: int) -> tuple[np.ndarray, np.ndarray]:
    """Points and matches played of ``sides`` sides (dense indices) over the given results."""
    home = np.asarray(home, dtype=np.intp)
    away = np.asarray(away, dtype=np.intp)
    diff = np.sign(np.asarray(home_goals, float) - np.asarray(away_goals, float))
    home_points = np.where(diff > 0, WIN, np.where(diff == 0, DRAW, 0))
    away_points = np.where(diff < 0, WIN, np.where(diff == 0, DRAW, 0))
    points = np.bincount(home, home_points, sides) + np.bincount(away, away_points, sides)
    played = np.bincount(home, minlength=sides) + np.bincount(away, minlength=sides)
    return points.astype(np.int64), played.astype(np.int64)


@dataclass
class Stakes:
    """Per input row, what the table said at its cut-off."""

    dead: np.ndarray  # (n, 2) bool: the home and the away side have nothing left at stake
    left: np.ndarray  # (n, 2) matches each side has left in the season (its own included)


def at_stake(
    competition,
    kickoff,
    cutoff,
    home,
    away,
    home_goals,
    away_goals,
    pace: float = WIN,
    top=TOP_CUTS,
    bottom=BOTTOM_CUTS,
) -> Stakes:
    """The table of each row's competition (one id per league and season, e.g. E0 2023/24) from
    the results of its matches kicked off before the row's ``cutoff``, and what is at stake.

    The season's sides are those its rows name (its fixtures, played or not); a row whose
    goals are NaN is not a result. Nothing the row's own match or a later one did is used.
    """
    competition = np.asarray(competition)
    kickoff = np.asarray(kickoff, dtype=np.int64)
    cutoff = np.asarray(cutoff, dtype=np.int64)
    home, away = np.asarray(home), np.asarray(away)
    home_goals = np.asarray(home_goals, dtype=float)
    away_goals = np.asarray(away_goals, dtype=float)
    n = len(kickoff)
    out = Stakes(dead=np.zeros((n, 2), dtype=bool), left=np.zeros((n, 2), dtype=np.int64))
    for season in np.unique(competition):
        rows = np.flatnonzero(competition == season)
        sides = np.unique(np.concatenate([home[rows], away[rows]]))
        h, a = np.searchsorted(sides, home[rows]), np.searchsorted(sides, away[rows])
        games = 2 * (len(sides) - 1)
        cuts = zone_cuts(len(sides), top, bottom)
        result = np.isfinite(home_goals[rows]) & np.isfinite(away_goals[rows])
        for cut in np.unique(cutoff[rows]):
            done = result & (kickoff[rows] < cut)
            points, played = table(
                h[done], a[done], home_goals[rows][done], away_goals[rows][done], len(sides)
            )
            left = games - played
            gone = dead(points, left, cuts, pace)
            target = cutoff[rows] == cut
            sel = rows[target]
            out.dead[sel] = np.column_stack([gone[h[target]], gone[a[target]]])
            out.left[sel] = np.column_stack([left[h[target]], left[a[target]]])
    return out


def goal_factors(
    stakes: Stakes, dead_attack: float, dead_defence: float, late: float = 0.0, late_left: int = 8
) -> np.ndarray:
    """(n, 2) factors on the home and away goal rates: a dead side's own rate × (1 +
    ``dead_attack``), its opponent's × (1 + ``dead_defence``) (both dead, both apply); and both
    rates × (1 + ``late``) where either side has at most ``late_left`` matches left. The
    attack and defence may be arrays (n,), one per row (``learned_effects``)."""
    gone = stakes.dead.astype(float)
    attack = np.log1p(np.asarray(dead_attack, dtype=float))
    defence = np.log1p(np.asarray(dead_defence, dtype=float))
    log_factor = gone * np.reshape(attack, (-1, 1)) + gone[:, ::-1] * np.reshape(defence, (-1, 1))
    if late:
        is_late = stakes.left.min(axis=1) <= late_left
        log_factor = log_factor + np.where(is_late, np.log1p(late), 0.0)[:, None]
    return np.exp(log_factor)


def learned_effects(
    stakes: Stakes, residual, kickoff, cutoff, min_sides: int = 20
) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the dead-side effects the closing lines of earlier matches showed: over the
    rows kicked off before the row's ``cutoff`` with a finite ``residual`` (n, 2: the log of
    the goal rates the close implied − the log of those the model predicted, home and away),
    the mean residual of a dead side's own rate and of its opponent's, less the mean of the
    rows where neither side was dead, as factors − 1 (``goal_factors``' ``dead_attack`` and
    ``dead_defence``). 0 until ``min_sides`` dead sides have been seen."""
    residual = np.asarray(residual, dtype=float)
    kickoff = np.asarray(kickoff, dtype=np.int64)
    known = np.isfinite(residual).all(axis=1)
    gone = stakes.dead & known[:, None]
    alive = known & ~stakes.dead.any(axis=1)
    res = np.where(known[:, None], residual, 0.0)
    # Per row: sums over its dead sides (own and opponent's residual), and over alive rows.
    columns = np.column_stack(
        [
            gone.sum(axis=1),
            (gone * res).sum(axis=1),
            (gone * res[:, ::-1]).sum(axis=1),
            2 * alive,
            alive * res.sum(axis=1),
        ]
    ).astype(float)
    order = np.argsort(kickoff, kind="stable")
    running = np.vstack([np.zeros(columns.shape[1]), np.cumsum(columns[order], axis=0)])
    before = running[np.searchsorted(kickoff[order], np.asarray(cutoff, np.int64), side="left")]
    sides, own, given, alive_sides, alive_sum = before.T
    base = np.where(alive_sides > 0, alive_sum / np.maximum(alive_sides, 1), 0.0)
    enough = sides >= max(min_sides, 1)
    safe = np.maximum(sides, 1)
    attack = np.where(enough, np.expm1(own / safe - base), 0.0)
    defence = np.where(enough, np.expm1(given / safe - base), 0.0)
    return attack, defence
