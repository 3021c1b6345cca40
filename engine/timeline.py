"""Weekly cut-offs and team indexing shared by the walk-forward models."""

import numpy as np

DAY = 86_400
WEEK = 7 * DAY
#: 1970-01-05 00:00 UTC, the first Monday of the epoch: weeks are counted from it.
_MONDAY = 4 * DAY


def week_start(epoch_seconds) -> np.ndarray:
    """Monday 00:00 UTC of the week containing each timestamp."""
    t = np.asarray(epoch_seconds, dtype=np.int64)
    return t - (t - _MONDAY) % WEEK


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
