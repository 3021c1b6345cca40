"""The pages' charts as plain geometry that one Jinja macro (``templates/_charts.html``) draws
as inline SVG with presentation attributes only, so the pages' Content-Security-Policy (no
inline ``style`` attribute, no script) holds.

Each chart comes with its ``title`` and ``desc`` (the SVG's accessible name and description)
and its ``rows``: the same figures as a table, one row per plotted mark (a polyline point, a
bar, a dot), for screen readers and for anyone who wants the numbers.
"""

from math import ceil, floor, log10

from services.reads.pages import MARKET_NAMES

WIDTH, HEIGHT = 640, 260
#: Room for the axes' labels: left, right, top, bottom.
MARGIN = (48, 12, 12, 34)
#: Series colours (dark enough on white for any label in their colour).
INK = "#1b1b1b"
BLUE = "#1f5fa8"
ORANGE = "#a3530f"
GREEN = "#2e7d32"
RED = "#b3261e"
GRID = "#d0d0d0"


def _frame(title, desc, headers):
    left, right, top, bottom = MARGIN
    return {
        "title": title,
        "desc": desc,
        "width": WIDTH,
        "height": HEIGHT,
        "plot": (left, top, WIDTH - left - right, HEIGHT - top - bottom),
        "lines": [],
        "polylines": [],
        "rects": [],
        "circles": [],
        "texts": [],
        "headers": headers,
        "rows": [],
        "legend": [],
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


def _y_axis(chart, low, high, y, fmt):
    """Horizontal grid lines and labels at round values of the y range."""
    left, _, width, _ = chart["plot"]
    for tick in _ticks(low, high):
        chart["lines"].append(
            {"x1": left, "y1": y(tick), "x2": left + width, "y2": y(tick), "stroke": GRID}
        )
        chart["texts"].append({"x": left - 6, "y": y(tick) + 4, "text": fmt(tick), "anchor": "end"})


def units_curve(series: list[tuple[str, str, list[tuple[int, float]]]]) -> dict:
    """Cumulative units against pick number, one polyline per ``(name, colour, points)``."""
    points = [point for _, _, found in series for point in found]
    chart = _frame(
        "Units won or lost, pick by pick",
        "Cumulative profit in units (1 unit staked per pick) after each settled pick; "
        + "; ".join(
            f"{name}: {len(found)} points, ending at {found[-1][1]:+.2f} units after pick "
            f"{found[-1][0]}"
            if found
            else f"{name}: no settled pick"
            for name, _, found in series
        )
        + ".",
        ("Series", "Pick", "Units"),
    )
    left, top, width, height = chart["plot"]
    last = max((number for number, _ in points), default=1)
    values = [units for _, units in points] + [0.0]
    low, high = min(values), max(values)
    pad = (high - low) * 0.05 or 1.0
    x = _scale(0, max(last, 1), left, width)
    y = _scale(low - pad, high + pad, top, height, flip=True)
    _y_axis(chart, low - pad, high + pad, y, lambda v: f"{v:+g}")
    chart["lines"].append({"x1": left, "y1": y(0), "x2": left + width, "y2": y(0), "stroke": INK})
    for name, colour, found in series:
        if not found:
            continue
        chart["polylines"].append(
            {
                "name": name,
                "stroke": colour,
                "points": " ".join(f"{x(number)},{y(units)}" for number, units in found),
            }
        )
        chart["legend"].append((name, colour))
        chart["rows"].extend((name, number, f"{units:+.2f}") for number, units in found)
    chart["texts"].append(
        {"x": left + width, "y": top + height + 26, "text": "pick number", "anchor": "end"}
    )
    chart["texts"].append({"x": left, "y": top + height + 26, "text": "0", "anchor": "start"})
    chart["texts"].append(
        {"x": left + width, "y": top + height + 14, "text": str(last), "anchor": "end"}
    )
    return chart


def monthly_roi(months: list[dict], name: str) -> dict:
    """One bar per month: its ROI (up for a profit, down for a loss), its pick count above."""
    chart = _frame(
        f"Return on investment by month, {name}",
        f"ROI of the settled {name} picks of each month, with the number of picks; "
        f"{len(months)} months.",
        ("Month", "Picks", "ROI"),
    )
    left, top, width, height = chart["plot"]
    rois = [row["roi"] or 0.0 for row in months] + [0.0]
    low, high = min(rois), max(rois)
    pad = (high - low) * 0.15 or 0.1
    y = _scale(low - pad, high + pad, top, height, flip=True)
    _y_axis(chart, low - pad, high + pad, y, lambda v: f"{v:+.0%}")
    slot = min(width / max(len(months), 1), 60)
    label_every = max(1, ceil(len(months) / 8))
    for index, row in enumerate(months):
        roi = row["roi"] or 0.0
        x = round(left + slot * index + slot * 0.15, 2)
        top_y, bottom_y = sorted((y(roi), y(0)))
        chart["rects"].append(
            {
                "x": x,
                "y": top_y,
                "width": round(slot * 0.7, 2),
                "height": round(max(bottom_y - top_y, 0.5), 2),
                "fill": GREEN if roi >= 0 else RED,
                "label": f"{row['month']}: ROI {roi:+.1%}, {row['picks']} picks",
            }
        )
        centre = round(x + slot * 0.35, 2)
        chart["texts"].append(
            {
                "x": centre,
                "y": top_y - 3 if roi >= 0 else bottom_y + 11,
                "text": str(row["picks"]),
                "anchor": "middle",
            }
        )
        if index % label_every == 0:
            chart["texts"].append(
                {"x": centre, "y": top + height + 26, "text": row["month"], "anchor": "middle"}
            )
        roi_text = "–" if row["roi"] is None else f"{row['roi']:+.1%}"
        chart["rows"].append((row["month"], row["picks"], roi_text))
    chart["lines"].append({"x1": left, "y1": y(0), "x2": left + width, "y2": y(0), "stroke": INK})
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
    )
    left, top, width, height = chart["plot"]
    most = max((row["count"] for row in bins), default=0) or 1
    y = _scale(0, most, top, height, flip=True)
    _y_axis(chart, 0, most, y, lambda v: f"{v:g}")
    slot = width / max(len(bins), 1)
    for index, row in enumerate(bins):
        span = f"{row['from']:+.1%} to {row['to']:+.1%}"
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
    for index in (0, len(bins) // 2, len(bins)):
        value = bins[0]["from"] + (bins[0]["to"] - bins[0]["from"]) * index if bins else 0
        chart["texts"].append(
            {
                "x": round(left + slot * index, 2),
                "y": top + height + 16,
                "text": f"{value:+.0%}",
                "anchor": "middle",
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
    )
    chart["width"] = chart["height"] = 300
    left, top = MARGIN[0], MARGIN[2]
    size = 300 - left - MARGIN[1] - MARGIN[3] + 12
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
            {"x": x(tick), "y": y(0) + 16, "text": f"{tick:.0%}", "anchor": "middle"}
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
    found = {
        "curve": units_curve(
            [
                ("Live", BLUE, page["live"]["curve"]),
                ("Backfilled (walk-forward)", ORANGE, page["backfilled"]["curve"]),
            ]
        )
    }
    for name in ("live", "backfilled"):
        found[f"{name}_months"] = monthly_roi(page[name]["by_month"], name)
        found[f"{name}_ev"] = histogram(page[name]["closing_ev_bins"], name)
    calibration = page.get("calibration")
    found["reliability"] = [
        (market, reliability(MARKET_NAMES.get(market, market), figures["bins"]))
        for market, figures in (calibration["markets"] if calibration else {}).items()
        if figures["count"]
    ]
    return found
