"""Weekly cut-offs and team indexing shared by the walk-forward models."""

from typing import NamedTuple

import numpy as np

DAY = 86_400
WEEK = 7 * DAY
#: 1970-01-05 00:00 UTC, the first Monday of the epoch: weeks are counted from it.
_MONDAY = 4 * DAY


def week_start(epoch_seconds) -> np.ndarray:
    """Monday 00:00 UTC of the week containing each timestamp."""
    t = np.asarray(epoch_seconds, dtype=np.int64)
    return t - (t - _MONDAY) % WEEK


def cutoff(kickoff, now):
    """Each match's cut-off: Monday 00:00 UTC of its week, or ``now`` if that is sooner. Its
    forecast comes from a fit on matches that kicked off before it, never at or after."""
    return np.minimum(week_start(kickoff), now)


def day_cutoff(kickoff, now):
    """Each match's cut-off at 00:00 UTC of its kick-off day, or ``now`` if that is sooner: a
    fit for it may use the matches of the earlier days of its week too."""
    t = np.asarray(kickoff, dtype=np.int64)
    return np.minimum(t - t % DAY, now)


def dense_index(ids: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Position of each value in the sorted ``ids``, -1 where absent."""
    if len(ids) == 0:
        return np.full(len(values), -1, dtype=np.intp)
    pos = np.clip(np.searchsorted(ids, values), 0, len(ids) - 1)
    return np.where(ids[pos] == values, pos, -1)


def needed_cutoffs(cutoffs: np.ndarray, rows) -> np.ndarray | None:
    """The distinct cut-offs of ``rows`` (None: every cut-off is needed)."""
    if rows is None:
        return None
    return np.unique(np.asarray(cutoffs)[np.asarray(rows, dtype=np.intp)])


class Week(NamedTuple):
    """One weekly fit of a group: the rows it trains on and the rows it forecasts."""

    cutoff: int
    train: np.ndarray  # training rows kicked off in the window before the cut-off, in order
    teams: np.ndarray  # the sorted ids of the teams in ``train``
    home: np.ndarray  # each training row's home team, as a position in ``teams``
    away: np.ndarray
    played: np.ndarray  # each team's matches in ``train``
    target: np.ndarray  # the rows forecast at this cut-off
    target_home: np.ndarray  # their home team's position in ``teams``, -1 if it has none
    target_away: np.ndarray

    def history(self) -> tuple[np.ndarray, np.ndarray]:
        """Matches in ``train`` of each target row's home and away team (0 for a newcomer)."""
        played = np.append(self.played, 0)
        return played[self.target_home], played[self.target_away]


def weeks(rows, cutoff, kickoff, home, away, trains, window, needed=None):
    """The weekly fits of one group's ``rows`` (sorted by kick-off), one :class:`Week` per
    distinct cut-off: it trains on the rows where ``trains`` holds that kicked off in the
    ``window`` seconds before the cut-off, never at or after it. With ``needed`` (cut-offs),
    only those weeks."""
    train = rows[trains[rows]]
    train_kickoff = kickoff[train]
    cutoffs, starts = np.unique(cutoff[rows], return_index=True)
    ends = np.append(starts[1:], len(rows))
    for cut, lo, hi in zip(cutoffs, starts, ends, strict=True):
        if needed is not None and cut not in needed:
            continue
        first = np.searchsorted(train_kickoff, cut - window, side="left")
        last = np.searchsorted(train_kickoff, cut, side="left")
        sel = train[first:last]
        teams = np.unique(np.concatenate([home[sel], away[sel]]))
        h_idx = np.searchsorted(teams, home[sel])
        a_idx = np.searchsorted(teams, away[sel])
        played = np.bincount(h_idx, minlength=len(teams)) + np.bincount(a_idx, minlength=len(teams))
        target = rows[lo:hi]
        yield Week(
            cut,
            sel,
            teams,
            h_idx,
            a_idx,
            played,
            target,
            dense_index(teams, home[target]),
            dense_index(teams, away[target]),
        )
