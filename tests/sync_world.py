"""A simulated week of football-data's files, cut from the shared Premier League 2023/24 file:
the season so far on Friday with a fixture list of the weekend and its prices, moved prices on
Saturday, the weekend's results on Monday (no closing columns: the service keeps its own).

Each day is ``(now, {path: bytes})``, the paths as football-data.co.uk serves them.
"""

import csv
import io
from datetime import UTC, date, datetime

from services.feeds.formats import footballdata
from tests.data import FOOTBALL_DATA

SEASON = "/mmz4281/2324/E0.csv"
FIXTURES = "/fixtures.csv"

FRIDAY = datetime(2024, 3, 29, 15, 0, tzinfo=UTC)
SATURDAY = datetime(2024, 3, 30, 9, 0, tzinfo=UTC)
MONDAY = datetime(2024, 4, 1, 9, 0, tzinfo=UTC)

#: The weekend the fixture list covers, and the midweek round after it.
WEEKEND = (date(2024, 3, 30), date(2024, 3, 31))
MIDWEEK = (date(2024, 4, 2), date(2024, 4, 4))

#: The fixture file's columns: pre-match 1x2 and over/under prices, as football-data's.
FIXTURE_COLUMNS = [
    "Div", "Date", "Time", "HomeTeam", "AwayTeam", "Referee",
    "B365H", "B365D", "B365A", "PSH", "PSD", "PSA", "WHH", "WHD", "WHA",
    "MaxH", "MaxD", "MaxA", "AvgH", "AvgD", "AvgA",
    "B365>2.5", "B365<2.5", "P>2.5", "P<2.5", "Avg>2.5", "Avg<2.5",
]  # fmt: skip


def rows() -> tuple[list[str], list[dict]]:
    """The shared file's header and rows (by column name)."""
    text = (FOOTBALL_DATA / "E0_2324.csv").read_text()
    reader = csv.reader(io.StringIO(text))
    header = next(reader)
    return header, [dict(zip(header, row, strict=True)) for row in reader if row]


def _day(row) -> date:
    return footballdata.parse_date(row["Date"])


def _write(header, records) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(header)
    for record in records:
        writer.writerow([record.get(name, "") for name in header])
    return out.getvalue().encode()


def _fixture(row, closing=False) -> dict:
    """A season row as a fixture row: no result, pre-match prices (or the closing ones, as the
    prices moved to by Saturday)."""
    fixture = {name: row[name] for name in FIXTURE_COLUMNS}
    fixture["Referee"] = ""
    if closing:
        for name in FIXTURE_COLUMNS[6:]:
            if "2.5" in name:
                stem = name.replace(">", "C>").replace("<", "C<")
            else:
                stem = f"{name[:-1]}C{name[-1]}"
            fixture[name] = row.get(stem, "") or row[name]
    return fixture


def _season(header, rows_, until: date) -> bytes:
    """The season file as published after ``until``: results, no closing columns."""
    kept = []
    for row in rows_:
        if _day(row) > until:
            continue
        kept.append({name: ("" if _closing(name) else value) for name, value in row.items()})
    return _write(header, kept)


def _closing(name: str) -> bool:
    return any(
        name.startswith(p + "C") for p in ("B365", "BW", "IW", "PS", "WH", "VC", "Max", "Avg")
    ) or name.startswith(("PC>", "PC<", "PCAH", "AHC"))


def week() -> list[tuple[datetime, dict[str, bytes]]]:
    """Friday, Saturday and Monday: what football-data serves on each."""
    header, all_rows = rows()
    weekend = [row for row in all_rows if WEEKEND[0] <= _day(row) <= WEEKEND[1]]
    midweek = [row for row in all_rows if MIDWEEK[0] <= _day(row) <= MIDWEEK[1]]
    friday = {
        SEASON: _season(header, all_rows, date(2024, 3, 17)),
        FIXTURES: _write(FIXTURE_COLUMNS, [_fixture(row) for row in weekend]),
    }
    saturday = {
        SEASON: friday[SEASON],
        FIXTURES: _write(FIXTURE_COLUMNS, [_fixture(row, closing=True) for row in weekend]),
    }
    monday = {
        SEASON: _season(header, all_rows, WEEKEND[1]),
        FIXTURES: _write(FIXTURE_COLUMNS, [_fixture(row) for row in midweek]),
    }
    return [(FRIDAY, friday), (SATURDAY, saturday), (MONDAY, monday)]
