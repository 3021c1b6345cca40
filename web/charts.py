"""The pages' charts as plain geometry that one Jinja macro (``templates/_charts.html``) draws
as inline SVG with presentation attributes only, so the pages' Content-Security-Policy (no
inline ``style`` attribute, no script) holds.

Each chart comes with its ``title`` and ``desc`` (the SVG's accessible name and description)
and its ``rows``: the same figures as a table, one row per plotted mark (a polyline point, a
bar, a dot), for screen readers and for anyone who wants the numbers; a chart without rows
is drawn as its ``empty`` sentence instead of bare axes. Text sizes are not set here but in
the pages' style (``web/html.py``), which keeps them readable at any width the drawing is
scaled to; :func:`signed` writes every figure with its sign and never as a negative zero.
"""

from math import ceil, floor, log10

from services.reads.pages import MARKET_NAMES

#: The charts' drawing box (the SVG's viewBox) and the width it is shown at on a wide screen
#: (narrower screens scale it down to their column: about 358 CSS px at 390 px wide).
WIDTH, HEIGHT = 350, 180
SHOWN_WIDTH = 640
#: Room for the axes' labels: left, right, top, bottom.
MARGIN = (58, 10, 12, 30)
#: At most this many labels along the bars' axis (a month is about 55 user units wide).
TIME_LABELS = 4
#: Series colours (dark enough on white for any label in their colour).
INK = "#1b1b1b"
BLUE = "#1f5fa8"
ORANGE = "#a3530f"
GREEN = "#2e7d32"
RED = "#b3261e"
GRID = "#d0d0d0"


def signed(value: float | None, digits: int = 1, scale: float = 100.0, unit: str = "%") -> str:
    """``value × scale`` with its sign and ``digits`` decimals (``+5.3%``), a dash for None; a
    figure that rounds to zero is written ``0.0%``, never with a sign (no "−0")."""
    if value is None:
        return "–"
    text = f"{value * scale:+.{digits}f}"
    if float(text) == 0:
        text = f"{0:.{digits}f}"
    return text + unit


def _tick(value: float, scale: float = 100.0, unit: str = "%") -> str:
    """A round axis value with its sign and no more decimals than it has (``+2.5%``, ``0%``)."""
    shown = round(value * scale, 6)
    return f"0{unit}" if shown == 0 else f"{shown:+g}{unit}"


def _frame(title, desc, headers, empty):
    """A chart's figure: ``empty`` is what the page says instead when it has nothing to draw."""
    left, right, top, bottom = MARGIN
    return {
        "title": title,
        "desc": desc,
        "width": WIDTH,
        "height": HEIGHT,
        "shown_width": SHOWN_WIDTH,
        "shown_height": round(SHOWN_WIDTH * HEIGHT / WIDTH),
        "wide": True,
        "plot": (left, top, WIDTH - left - right, HEIGHT - top - bottom),
        "lines": [],
        "polylines": [],
        "rects": [],
        "circles": [],
        "texts": [],
        "headers": headers,
        "rows": [],
        "legend": [],
        "empty": empty,
    }


def _scale(low, high, start, length, flip=False):
    """A function mapping [low, high] onto [start, start + length] (reversed when ``flip``)."""
    span = (high - low) or 1.0

    def place(value):
        share = (value - low) / span
        return round(start + length * ((1 - share) if flip else share), 2)

    return place


def _ticks(low, high, count=4):
    """About ``count`` round tick values covering [low, high]."""
    span = (high - low) or 1.0
    raw = span / count
    magnitude = 10 ** floor(_log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = ceil(low / step) * step
    ticks, value = [], first
    while value <= high + step * 1e-9:
        ticks.append(round(value, 10))
        value += step
    return ticks


def _log10(value):
    return log10(value) if value > 0 else 0.0


def _y_axis(chart, low, high, y, fmt, whole=False):
    """Horizontal grid lines and labels at round values of the y range (whole numbers only
    when ``whole``: counts)."""
    left, _, width, _ = chart["plot"]
    for tick in _ticks(low, high):
        if whole and tick != int(tick):
            continue
        chart["lines"].append(
            {"x1": left, "y1": y(tick), "x2": left + width, "y2": y(tick), "stroke": GRID}
        )
        chart["texts"].append({"x": left - 4, "y": y(tick) + 4, "text": fmt(tick), "anchor": "end"})


def units_curve(name: str, colour: str, found: list[tuple[int, float]]) -> dict:
    """Cumulative units against pick number of one record (live or backfilled), on an axis of
    its own: the live record's few picks are not squeezed beside thousands of backfilled ones."""
    chart = _frame(
        f"Units won or lost, pick by pick, {name}",
        f"Cumulative profit in units (1 unit staked per pick) after each settled {name} pick; "
        + (
            f"{len(found)} points, ending at {signed(found[-1][1], 2, 1, ' units')} after pick "
            f"{found[-1][0]}."
            if found
            else "no settled pick."
        ),
        ("Pick", "Units"),
        f"No settled {name} pick yet: the curve starts with the first one.",
    )
    if not found:
        return chart
    left, top, width, height = chart["plot"]
    last = max(number for number, _ in found)
    values = [units for _, units in found] + [0.0]
    low, high = min(values), max(values)
    pad = (high - low) * 0.05 or 1.0
    x = _scale(0, max(last, 1), left, width)
    y = _scale(low - pad, high + pad, top, height, flip=True)
    _y_axis(chart, low - pad, high + pad, y, lambda v: _tick(v, 1, ""))
    chart["lines"].append({"x1": left, "y1": y(0), "x2": left + width, "y2": y(0), "stroke": INK})
    chart["polylines"].append(
        {
            "name": name,
            "stroke": colour,
            "points": " ".join(f"{x(number)},{y(units)}" for number, units in found),
        }
    )
    chart["rows"].extend((number, signed(units, 2, 1, "")) for number, units in found)
    below = top + height + 16
    chart["texts"].append({"x": left, "y": below, "text": "0", "anchor": "start"})
    chart["texts"].append({"x": left + width, "y": below, "text": str(last), "anchor": "end"})
    chart["texts"].append(
        {"x": left + width / 2, "y": below, "text": "pick number", "anchor": "middle"}
    )
    return chart


def _mean_bars(chart, rows, key, label_of):
    """One bar per row: its ROI (up for a profit, down for a loss) with a bar of ± one standard
    error through its top, and the key below it at most :data:`TIME_LABELS` times."""
    left, top, width, height = chart["plot"]
    spans = [(row["roi"], row["roi_std_error"] or 0.0) for row in rows]
    ends = [roi - error for roi, error in spans] + [roi + error for roi, error in spans] + [0.0]
    low, high = min(ends), max(ends)
    pad = (high - low) * 0.08 or 0.1
    y = _scale(low - pad, high + pad, top, height, flip=True)
    _y_axis(chart, low - pad, high + pad, y, _tick)
    slot = min(width / len(rows), 60)
    label_every = max(1, ceil(len(rows) / TIME_LABELS))
    for index, (row, (roi, error)) in enumerate(zip(rows, spans, strict=True)):
        x = round(left + slot * index + slot * 0.15, 2)
        top_y, bottom_y = sorted((y(roi), y(0)))
        error_text = "" if row["roi_std_error"] is None else f" ± {signed(error, 1).lstrip('+')}"
        chart["rects"].append(
            {
                "x": x,
                "y": top_y,
                "width": round(slot * 0.7, 2),
                "height": round(max(bottom_y - top_y, 0.5), 2),
                "fill": GREEN if roi >= 0 else RED,
                "label": f"{label_of(row)}: ROI {signed(roi)}{error_text}, {row['picks']} picks",
            }
        )
        centre = round(x + slot * 0.35, 2)
        if error:
            chart["lines"].append(
                {
                    "x1": centre,
                    "y1": y(roi - error),
                    "x2": centre,
                    "y2": y(roi + error),
                    "stroke": INK,
                }
            )
        if index % label_every == 0:
            chart["texts"].append(
                {"x": centre, "y": top + height + 16, "text": row[key], "anchor": "middle"}
            )
        chart["rows"].append((row[key], row["picks"], signed(roi), error_text[3:] or "–"))
    chart["lines"].append({"x1": left, "y1": y(0), "x2": left + width, "y2": y(0), "stroke": INK})
    return chart


def _with_error(rows: list[dict]) -> list[dict]:
    """The rows whose ROI has a standard error (two decided picks or more): a ROI of one pick
    is drawn with its uncertainty or not at all, and one pick has no standard error."""
    return [row for row in rows if row["roi"] is not None and row["roi_std_error"] is not None]


def monthly_roi(months: list[dict], name: str) -> dict:
    """One bar per month with two settled picks or more: its ROI with ± one standard error."""
    shown = _with_error(months)
    chart = _frame(
        f"Return on investment by month, {name}",
        f"ROI of the settled {name} picks of each month, with ± one standard error and the "
        f"number of picks; {len(shown)} month{'s' if len(shown) != 1 else ''}.",
        ("Month", "Picks", "ROI", "± SE"),
        f"No month has two settled {name} picks yet: a ROI of one pick has no standard error, "
        "so none is drawn.",
    )
    if shown:
        _mean_bars(chart, shown, "month", lambda row: row["month"])
    return chart


def rating_roi(ratings: list[dict], name: str) -> dict:
    """One bar per rating with two settled picks or more: its ROI with ± one standard error
    (the table under the chart lists every rating)."""
    shown = _with_error(ratings)
    chart = _frame(
        f"Return on investment by rating, {name}",
        f"ROI of the settled {name} picks of each rating, with ± one standard error: a "
        "difference between ratings smaller than their error bars is noise.",
        ("Rating", "Picks", "ROI", "± SE"),
        f"No rating has two settled {name} picks yet: a ROI of one pick has no standard error, "
        "so none is drawn (the table below lists each rating).",
    )
    if shown:
        _mean_bars(chart, shown, "rating", lambda row: f"Rated {row['rating']}")
    return chart


def histogram(bins: list[dict], name: str) -> dict:
    """One bar per bin of fair closing EV, as tall as its count."""
    total = sum(row["count"] for row in bins)
    chart = _frame(
        f"Fair closing EV of the {name} picks",
        f"How many of the {total} settled {name} picks with a closing line had each fair "
        "closing expected value (odds × de-margined closing probability − 1); the outer bins "
        "hold everything beyond them.",
        ("Fair closing EV", "Picks"),
        f"No settled {name} pick has a closing line yet.",
    )
    if not total:
        return chart
    left, top, width, height = chart["plot"]
    most = max(row["count"] for row in bins)
    y = _scale(0, most, top, height, flip=True)
    _y_axis(chart, 0, most, y, lambda v: f"{v:g}", whole=True)
    slot = width / len(bins)
    for index, row in enumerate(bins):
        span = f"{signed(row['from'])} to {signed(row['to'])}"
        chart["rects"].append(
            {
                "x": round(left + slot * index + 1, 2),
                "y": y(row["count"]),
                "width": round(slot - 2, 2),
                "height": round(max(y(0) - y(row["count"]), 0), 2),
                "fill": GREEN if row["from"] >= 0 else ORANGE,
                "label": f"{span}: {row['count']} picks",
            }
        )
        chart["rows"].append((span, row["count"]))
    # The edges and the middle, the outer labels kept inside the drawing.
    low, high = bins[0]["from"], bins[-1]["to"]
    for index, anchor in ((0, "start"), (len(bins) // 2, "middle"), (len(bins), "end")):
        value = low + (high - low) * index / len(bins)
        chart["texts"].append(
            {
                "x": round(left + slot * index, 2),
                "y": top + height + 16,
                "text": _tick(value),
                "anchor": anchor,
            }
        )
    return chart


def reliability(market_name: str, bins: list[dict]) -> dict:
    """Observed rate against mean predicted probability, one dot per non-empty bin, beside the
    diagonal of perfect calibration."""
    filled = [row for row in bins if row["count"]]
    chart = _frame(
        f"Reliability, {market_name}",
        f"For the forecasts of each probability bin, how often the outcome happened against "
        f"the average forecast; {len(filled)} non-empty bins; a calibrated forecast lies on "
        "the diagonal.",
        ("Bin", "Forecasts", "Mean forecast", "Observed"),
        f"No {market_name} forecast of a finished match in the run's window.",
    )
    side = 300
    chart.update(width=side, height=side, shown_width=side, shown_height=side, wide=False)
    left, top = 50, MARGIN[2]
    size = side - left - MARGIN[1] - 8
    chart["plot"] = (left, top, size, size - 12)
    x = _scale(0, 1, left, size)
    y = _scale(0, 1, top, size - 12, flip=True)
    for tick in (0, 0.25, 0.5, 0.75, 1):
        chart["lines"].append(
            {"x1": left, "y1": y(tick), "x2": x(1), "y2": y(tick), "stroke": GRID}
        )
        chart["texts"].append(
            {"x": left - 6, "y": y(tick) + 4, "text": f"{tick:.0%}", "anchor": "end"}
        )
        chart["texts"].append(
            {
                "x": x(tick),
                "y": y(0) + 16,
                "text": f"{tick:.0%}",
                "anchor": ("start", "middle", "middle", "middle", "end")[int(tick * 4)],
            }
        )
    chart["lines"].append({"x1": x(0), "y1": y(0), "x2": x(1), "y2": y(1), "stroke": INK})
    for row in filled:
        chart["circles"].append(
            {
                "cx": x(row["mean_predicted"]),
                "cy": y(row["observed_rate"]),
                "r": 4,
                "fill": BLUE,
                "label": f"forecast {row['mean_predicted']:.1%}, observed "
                f"{row['observed_rate']:.1%} ({row['count']})",
            }
        )
        chart["rows"].append(
            (
                f"{row['from']:.0%}–{row['to']:.0%}",
                row["count"],
                f"{row['mean_predicted']:.1%}",
                f"{row['observed_rate']:.1%}",
            )
        )
    return chart


def for_track_record(page: dict) -> dict:
    """The track-record page's charts from its figures (see ``services.reads.pages``)."""
    found = {}
    for name, colour in (("live", BLUE), ("backfilled", ORANGE)):
        record = page[name]
        found[f"{name}_curve"] = units_curve(name, colour, record["curve"])
        found[f"{name}_months"] = monthly_roi(record["by_month"], name)
        found[f"{name}_ratings"] = rating_roi(record["by_rating"], name)
        found[f"{name}_ev"] = histogram(record["closing_ev_bins"], name)
    calibration = page.get("calibration")
    found["reliability"] = [
        (market, reliability(MARKET_NAMES.get(market, market), figures["bins"]))
        for market, figures in (calibration["markets"] if calibration else {}).items()
        if figures["count"]
    ]
    return found
