"""Parser for football-data.co.uk match CSVs: results, half-time scores and bookmaker odds."""

import csv
import io
import math
import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from zoneinfo import ZoneInfo

from engine.markets import MARKETS
from engine.records import LeagueRecord, MatchRecord, OddsRecord, RejectedRow
from enums import TEAM_NAME_MAX

#: football-data's division codes and the competitions they stand for.
DIVISIONS: dict[str, LeagueRecord] = {
    league.code: league
    for league in (
        LeagueRecord("E0", "Premier League", "England", "top-flight"),
        LeagueRecord("E1", "Championship", "England", "lower-league"),
        LeagueRecord("E2", "League One", "England", "lower-league"),
        LeagueRecord("E3", "League Two", "England", "lower-league"),
        LeagueRecord("EC", "National League", "England", "lower-league"),
        LeagueRecord("SC0", "Premiership", "Scotland", "top-flight"),
        LeagueRecord("SC1", "Championship", "Scotland", "lower-league"),
        LeagueRecord("SC2", "League One", "Scotland", "lower-league"),
        LeagueRecord("SC3", "League Two", "Scotland", "lower-league"),
        LeagueRecord("D1", "Bundesliga", "Germany", "top-flight"),
        LeagueRecord("D2", "2. Bundesliga", "Germany", "lower-league"),
        LeagueRecord("I1", "Serie A", "Italy", "top-flight"),
        LeagueRecord("I2", "Serie B", "Italy", "lower-league"),
        LeagueRecord("SP1", "La Liga", "Spain", "top-flight"),
        LeagueRecord("SP2", "Segunda División", "Spain", "lower-league"),
        LeagueRecord("F1", "Ligue 1", "France", "top-flight"),
        LeagueRecord("F2", "Ligue 2", "France", "lower-league"),
        LeagueRecord("N1", "Eredivisie", "Netherlands", "top-flight"),
        LeagueRecord("B1", "Pro League", "Belgium", "top-flight"),
        LeagueRecord("P1", "Primeira Liga", "Portugal", "top-flight"),
        LeagueRecord("T1", "Süper Lig", "Turkey", "top-flight"),
        LeagueRecord("G1", "Super League", "Greece", "top-flight"),
    )
}

#: Column prefixes of the 1x2 prices and the canonical bookmaker each stands for. Earlier entries
#: win when two prefixes give the same bookmaker (``Avg`` over the older Betbrain ``BbAv``).
PREFIXES_1X2: dict[str, str] = {
    "B365": "bet365",
    "BW": "bwin",
    "IW": "interwetten",
    "PS": "pinnacle",
    "WH": "william-hill",
    "VC": "vc-bet",
    "LB": "ladbrokes",
    "BFD": "betfred",
    "BMGM": "betmgm",
    "BV": "betvictor",
    "CL": "coral",
    "1XB": "1xbet",
    "Avg": "market-average",
    "BbAv": "market-average",
}

#: Column prefixes of the over/under 2.5 goals prices (Pinnacle is ``P`` here, not ``PS``).
PREFIXES_OU25: dict[str, str] = {**PREFIXES_1X2, "P": "pinnacle"}
del PREFIXES_OU25["PS"]

#: Column suffix of each selection, per market.
SUFFIXES: dict[str, dict[str, str]] = {
    "1x2": {"home": "H", "draw": "D", "away": "A"},
    "ou25": {"over": ">2.5", "under": "<2.5"},
}

#: Kick-off assumed, in Europe/London, for rows without a ``Time`` (every file before 2019/20).
DEFAULT_KICKOFF = time(15, 0)

#: The time zone football-data's ``Date`` and ``Time`` are given in.
SOURCE_TIMEZONE = ZoneInfo("Europe/London")

REQUIRED_COLUMNS = ("Div", "Date", "HomeTeam", "AwayTeam")
RESULTS = ("H", "D", "A")


class FootballDataError(ValueError):
    """The text is not a football-data CSV at all (no header, or a required column missing)."""


@dataclass
class ParsedFile:
    """What one file gave: the matches, the rows refused, and how many prices were dropped."""

    matches: list[MatchRecord] = field(default_factory=list)
    rejected: list[RejectedRow] = field(default_factory=list)
    rows_read: int = 0  # data rows, without the header and rows that are nothing but commas
    prices_skipped: int = 0  # non-blank odds cells dropped because their set was not valid


@dataclass(frozen=True)
class _PriceSet:
    """Where one bookmaker's prices for one market (pre-match or closing) sit in the row."""

    bookmaker: str
    market: str
    is_closing: bool
    legs: tuple[tuple[int, str], ...]  # (column index, selection) in MARKETS order


class _RowError(Exception):
    """A row that cannot be loaded; the message is the reason reported for it."""


def _odds_layout(positions: dict[str, int]) -> list[_PriceSet]:
    """The complete price sets a header offers, one per (bookmaker, market, closing)."""
    layout: dict[tuple[str, str, bool], _PriceSet] = {}
    for market, prefixes in (("1x2", PREFIXES_1X2), ("ou25", PREFIXES_OU25)):
        suffixes = SUFFIXES[market]
        for prefix, bookmaker in prefixes.items():
            for closing in (False, True):
                key = (bookmaker, market, closing)
                stem = prefix + ("C" if closing else "")
                columns = [positions.get(stem + suffixes[s]) for s in MARKETS[market]]
                # A set the header only half offers is useless for de-margining; ignore it.
                if key in layout or None in columns:
                    continue
                legs = tuple(zip(columns, MARKETS[market], strict=True))
                layout[key] = _PriceSet(bookmaker, market, closing, legs)
    return list(layout.values())


def season_label(first_day: date) -> str:
    """The season a file belongs to from its earliest date: July–December of Y starts "Y-(Y+1)"."""
    start = first_day.year if first_day.month >= 7 else first_day.year - 1
    return f"{start}-{(start + 1) % 100:02d}"


#: What a football-data date looks like, whether or not the day exists.
_DATE_SHAPE = re.compile(r"\d{1,2}/\d{1,2}/(\d{2}|\d{4})")


def parse_date(text: str) -> date:
    """A football-data date, ``dd/mm/yy`` or ``dd/mm/yyyy`` (two-digit years 69–99 are 19xx)."""
    parts = text.split("/")
    if len(parts) != 3 or not all(part.isdigit() for part in parts):
        raise ValueError(text)
    day, month, year = (int(part) for part in parts)
    if len(parts[2]) == 2:
        # The POSIX %y pivot, as strptime uses: the site's data starts in 1993/94.
        year += 1900 if year >= 69 else 2000
    elif len(parts[2]) != 4:
        raise ValueError(text)
    return date(year, month, day)


def parse_time(text: str) -> time:
    """A kick-off time ``HH:MM`` (UK local time)."""
    parts = text.split(":")
    if len(parts) != 2 or not all(part.isdigit() for part in parts):
        raise ValueError(text)
    return time(int(parts[0]), int(parts[1]))


def _goals(text: str, column: str) -> int | None:
    """A goal count from a cell: None when blank, an error unless a non-negative integer."""
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise _RowError(f"{column} {text!r} is not a number of goals") from None
    # "2.0" (a file re-saved through pandas) is still two goals; "2.5" or "-1" is not.
    if not value.is_integer() or value < 0:
        raise _RowError(f"{column} {text!r} is not a number of goals")
    return int(value)


def _pair(cells: dict[str, str], home: str, away: str) -> tuple[int | None, int | None]:
    """Both goal counts of a score, or (None, None); an error when only one side is given."""
    home_goals, away_goals = _goals(cells[home], home), _goals(cells[away], away)
    if (home_goals is None) != (away_goals is None):
        raise _RowError(f"{home}/{away} give only one side of the score")
    return home_goals, away_goals


def parse(text: str, default_kickoff: time = DEFAULT_KICKOFF) -> ParsedFile:
    """Parse one football-data.co.uk CSV into match records, rejected rows and counts.

    Columns are looked up by header name, so every season's layout works; unknown columns are
    ignored. A leading BOM is stripped, CRLF and LF are both accepted and rows that are nothing
    but commas are skipped. ``Date`` and ``Time`` are UK local time (Europe/London) and converted
    to UTC; rows without a ``Time`` (files before 2019/20) get ``default_kickoff`` (15:00 UK).
    The season comes from the file's earliest date (see ``season_label``). A row is rejected,
    with its 1-based physical line number, when Div, Date or a team is missing, Div is unknown,
    the date or time cannot be read, goals are not non-negative integers, a score is half given,
    the teams are the same, a team's name is longer than ``TEAM_NAME_MAX``, half-time goals
    exceed full-time goals, or FTR disagrees with the goals. A price set (bookmaker, market,
    pre-match or closing) with any leg blank, not a number, or not above 1.0 is dropped whole
    and its non-blank cells counted in ``prices_skipped``; the row still loads. Raises
    FootballDataError when the header is missing or lacks one of Div, Date, HomeTeam,
    AwayTeam, or the text is not valid CSV.
    """
    reader = csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline=""))
    header = next(reader, None)
    if not header:
        raise FootballDataError("The file is empty: no header row.")
    positions: dict[str, int] = {}
    for index, name in enumerate(header):
        # A repeated column name means its first occurrence.
        positions.setdefault(name.strip(), index)
    missing = [name for name in REQUIRED_COLUMNS if name not in positions]
    if missing:
        raise FootballDataError(f"Not a football-data file: no {', '.join(missing)} column.")
    layout = _odds_layout(positions)
    width = len(header)
    columns = [
        (name, positions.get(name))
        for name in (*REQUIRED_COLUMNS, "Time", "FTHG", "FTAG", "FTR", "HTHG", "HTAG")
    ]
    kickoffs: dict[tuple[str, str], datetime] = {}
    odds_reader = _OddsReader(layout)
    parsed = ParsedFile()
    loaded: list[tuple[date, MatchRecord]] = []
    for row in _rows(reader):
        line = reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        parsed.rows_read += 1
        if len(row) < width:
            row = row + [""] * (width - len(row))
        cells = {name: row[i].strip() if i is not None else "" for name, i in columns}
        try:
            day, match = _read_row(cells, kickoffs, line, default_kickoff)
        except _RowError as error:
            parsed.rejected.append(RejectedRow(line, str(error)))
            continue
        parsed.prices_skipped += odds_reader.read(row, match.odds)
        loaded.append((day, match))
    if loaded:
        season = season_label(min(day for day, _ in loaded))
        for _, match in loaded:
            match.season = season
        parsed.matches = [match for _, match in loaded]
    return parsed


def _rows(reader):
    """The reader's rows; a CSV the csv module cannot split becomes a FootballDataError."""
    try:
        yield from reader
    except csv.Error as error:
        raise FootballDataError(f"Line {reader.line_num} is not valid CSV: {error}") from None


def _read_row(cells, kickoffs, line, default_kickoff) -> tuple[date, MatchRecord]:
    """The match of one row (its used cells, stripped) and its UK date; _RowError if unusable."""
    for name in REQUIRED_COLUMNS:
        if not cells[name]:
            raise _RowError(f"{name} is missing")
    code = cells["Div"]
    league = DIVISIONS.get(code)
    if league is None:
        raise _RowError(f"Div {code!r} is not a known division")
    home_team, away_team = cells["HomeTeam"], cells["AwayTeam"]
    for name in ("HomeTeam", "AwayTeam"):
        if len(cells[name]) > TEAM_NAME_MAX:
            raise _RowError(
                f"{name} is {len(cells[name])} characters long (at most {TEAM_NAME_MAX})"
            )
    if home_team == away_team:
        raise _RowError(f"HomeTeam and AwayTeam are both {home_team!r}")
    date_text, time_text = cells["Date"], cells["Time"]
    kickoff = kickoffs.get((date_text, time_text))
    if kickoff is None:
        kickoff = _kickoff(date_text, time_text, default_kickoff)
        kickoffs[(date_text, time_text)] = kickoff
    home_goals, away_goals = _pair(cells, "FTHG", "FTAG")
    ht_home, ht_away = _pair(cells, "HTHG", "HTAG")
    finished = home_goals is not None
    if ht_home is not None and (not finished or ht_home > home_goals or ht_away > away_goals):
        raise _RowError("the half-time score does not fit the full-time score")
    result = cells["FTR"]
    if result:
        if result not in RESULTS or not finished:
            raise _RowError(f"FTR {result!r} does not fit the goals")
        actual = "H" if home_goals > away_goals else ("D" if home_goals == away_goals else "A")
        if result != actual:
            raise _RowError(f"FTR {result!r} disagrees with the score {home_goals}-{away_goals}")
    match = MatchRecord(
        league=league,
        season="",
        kickoff_at=kickoff,
        home_team=home_team,
        away_team=away_team,
        status="finished" if finished else "scheduled",
        home_goals=home_goals,
        away_goals=away_goals,
        ht_home_goals=ht_home,
        ht_away_goals=ht_away,
        line=line,
    )
    return kickoff.astimezone(SOURCE_TIMEZONE).date(), match


def _kickoff(date_text: str, time_text: str, default_kickoff: time) -> datetime:
    """UTC kick-off from UK local date and time (``default_kickoff`` when the time is blank)."""
    try:
        day = parse_date(date_text)
    except ValueError:
        if _DATE_SHAPE.fullmatch(date_text):  # 31/02/2024: the right shape, no such day
            raise _RowError(f"Date {date_text!r} is not a real date") from None
        raise _RowError(f"Date {date_text!r} is not dd/mm/yy or dd/mm/yyyy") from None
    try:
        clock = parse_time(time_text) if time_text else default_kickoff
    except ValueError:
        raise _RowError(f"Time {time_text!r} is not HH:MM") from None
    return datetime.combine(day, clock, SOURCE_TIMEZONE).astimezone(UTC)


class _OddsReader:
    """Reads a row's price sets through a per-leg cache of records built once per file.

    Records are immutable and a file repeats the same prices over and over, so
    each distinct (leg, cell text) is parsed once; a row whose every leg is a valid price (most
    rows) then costs one dictionary look-up per cell.
    """

    def __init__(self, layout: list[_PriceSet]):
        self.layout = layout
        self.legs = [
            (price_set, selection) for price_set in layout for _, selection in price_set.legs
        ]
        self.columns = [index for price_set in layout for index, _ in price_set.legs]
        self.caches: list[dict[str, OddsRecord | None]] = [{} for _ in self.legs]

    def read(self, row: list[str], odds: list[OddsRecord]) -> int:
        """Append the row's valid price sets to ``odds``; the number of non-blank cells dropped."""
        texts = [row[index] for index in self.columns]
        # False: a cell text not seen yet in this leg; None: seen, and not a valid price.
        records = [cache.get(text, False) for cache, text in zip(self.caches, texts, strict=True)]
        if all(records):
            odds.extend(records)
            return 0
        for position in [i for i, record in enumerate(records) if record is False]:
            price_set, selection = self.legs[position]
            record = _price(texts[position], price_set, selection)
            self.caches[position][texts[position]] = record
            records[position] = record
        if all(records):
            odds.extend(records)
            return 0
        skipped = 0
        start = 0
        for price_set in self.layout:
            stop = start + len(price_set.legs)
            if all(records[start:stop]):
                odds.extend(records[start:stop])
            else:
                skipped += sum(1 for text in texts[start:stop] if text.strip())
            start = stop
        return skipped


def _price(text: str, price_set: _PriceSet, selection: str) -> OddsRecord | None:
    """The record of one odds cell, or None when it is blank, not a number or not above 1.0."""
    try:
        price = float(text)
    except ValueError:
        return None
    if not (math.isfinite(price) and price > 1.0):
        return None
    return OddsRecord(
        bookmaker=price_set.bookmaker,
        market=price_set.market,
        selection=selection,
        price=price,
        is_closing=price_set.is_closing,
    )
