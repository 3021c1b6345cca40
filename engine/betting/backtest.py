"""Backtests: the track record of the picks that pass a set of filters, overall, per month, per
league, and as a daily equity curve, from a "pick frame" of equal-length arrays."""

from dataclasses import dataclass

import numpy as np

from engine.betting.metrics import grouped_figures, pick_columns

#: The arrays a pick frame holds, one entry per pick.
PICK_FRAME_COLUMNS = (
    "kickoff",
    "pick_id",
    "league_id",
    "market",
    "rating",
    "edge",
    "odds",
    "stake",
    "clv",
    "status",
    "profit",
)

_SECONDS_PER_DAY = 86_400


@dataclass(frozen=True)
class BacktestFilters:
    """Which picks a backtest keeps; None means no limit. Dates are inclusive epoch seconds."""

    ratings: tuple[str, ...] | None = None
    markets: tuple[str, ...] | None = None
    min_edge: float | None = None
    league_id: int | None = None
    date_from: int | None = None
    date_to: int | None = None


def _frame(picks):
    """The pick frame's columns as arrays of one common length (ValueError otherwise)."""
    missing = [name for name in PICK_FRAME_COLUMNS if name not in picks]
    if missing:
        raise ValueError(f"pick frame lacks {', '.join(missing)}")
    frame = {
        "kickoff": np.asarray(picks["kickoff"], dtype=np.int64),
        "pick_id": np.asarray(picks["pick_id"], dtype=np.int64),
        "league_id": np.asarray(picks["league_id"], dtype=np.int64),
        "market": np.asarray(picks["market"], dtype=str),
        "rating": np.asarray(picks["rating"], dtype=str),
        "status": np.asarray(picks["status"], dtype=str),
    }
    for name in ("edge", "odds", "stake", "clv", "profit"):
        frame[name] = np.asarray(picks[name], dtype=float)
    # Optional: the selection's de-margined closing probability, for the closing EV.
    unknown = np.full(frame["odds"].shape, np.nan)
    frame["closing_probability"] = np.asarray(picks.get("closing_probability", unknown), float)
    shapes = {column.shape for column in frame.values()}
    if len(shapes) != 1 or frame["kickoff"].ndim != 1:
        raise ValueError("pick-frame columns must be 1-d arrays of one length")
    return frame


def _selected(frame, filters):
    """Boolean mask of the picks that pass every filter."""
    keep = np.ones(frame["kickoff"].shape, dtype=bool)
    if filters.ratings is not None:
        keep &= np.isin(frame["rating"], list(filters.ratings))
    if filters.markets is not None:
        keep &= np.isin(frame["market"], list(filters.markets))
    if filters.min_edge is not None:
        keep &= frame["edge"] >= filters.min_edge
    if filters.league_id is not None:
        keep &= frame["league_id"] == filters.league_id
    if filters.date_from is not None:
        keep &= frame["kickoff"] >= filters.date_from
    if filters.date_to is not None:
        keep &= frame["kickoff"] <= filters.date_to
    return keep


def _equity_curve(kickoff, profit, booked):
    """Cumulative profit and settled-pick count at the end of each UTC day with settled picks."""
    day = kickoff[booked] // _SECONDS_PER_DAY
    if not day.size:
        return []
    cumulative = np.cumsum(profit[booked])
    # Kick-offs are in order, so each day's last settled pick closes that day's point.
    last = np.flatnonzero(np.append(day[1:] != day[:-1], True))
    dates = np.datetime_as_string(day[last].astype("datetime64[D]"), unit="D").tolist()
    return [
        {"date": date, "cumulative_profit": profit, "settled_picks": count}
        for date, profit, count in zip(
            dates, cumulative[last].tolist(), (last + 1).tolist(), strict=True
        )
    ]


def run(picks, filters=None):
    """Backtest the picks that pass ``filters``, taken in (kickoff, pick_id) order.

    ``picks`` is a pick frame (see PICK_FRAME_COLUMNS, plus an optional ``closing_probability``;
    kickoff in epoch seconds, clv and closing_probability NaN when unknown, profit NaN while
    pending). Returns ``{"summary": figures, "by_month": [{"month":
    "YYYY-MM", **figures}], "by_league": [{"league_id": id, **figures}], "equity_curve": [{"date":
    "YYYY-MM-DD", "cumulative_profit", "settled_picks"}]}``; figures are metrics.track_record's,
    months and days are UTC, lists are in ascending month, league id and date order, and
    ``settled_picks`` is the running count of settled (won, lost, void) picks.
    """
    filters = filters if filters is not None else BacktestFilters()
    frame = _frame(picks)
    keep = np.flatnonzero(_selected(frame, filters))
    order = keep[np.lexsort((frame["pick_id"][keep], frame["kickoff"][keep]))]
    frame = {name: column[order] for name, column in frame.items()}

    columns = pick_columns(
        frame["status"],
        frame["profit"],
        frame["odds"],
        frame["edge"],
        frame["clv"],
        frame["stake"],
        frame["closing_probability"],
    )
    summary = grouped_figures(np.zeros(order.size, dtype=np.intp), 1, columns)[0]

    month = frame["kickoff"].astype("datetime64[s]").astype("datetime64[M]")
    months, month_group = np.unique(month, return_inverse=True)
    month_labels = np.datetime_as_string(months, unit="M").tolist()
    by_month = grouped_figures(month_group, months.size, columns)

    leagues, league_group = np.unique(frame["league_id"], return_inverse=True)
    by_league = grouped_figures(league_group, leagues.size, columns)

    return {
        "summary": summary,
        "by_month": [
            {"month": label, **figures}
            for label, figures in zip(month_labels, by_month, strict=True)
        ],
        "by_league": [
            {"league_id": league, **figures}
            for league, figures in zip(leagues.tolist(), by_league, strict=True)
        ],
        "equity_curve": _equity_curve(frame["kickoff"], frame["profit"], columns["booked"]),
    }
