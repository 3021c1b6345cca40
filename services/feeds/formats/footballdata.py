"""Parser for football-data.co.uk match CSVs: results, half-time scores and bookmaker odds."""

import csv
import io
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from engine.records import LeagueRecord, MatchRecord, RejectedRow
from enums import TEAM_NAME_MAX
from services.feeds.formats import bounds
from services.feeds.formats.footballdata_odds import OddsReader, find_price_sets
from services.feeds.formats.text import hidden_character

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

#: Kick-off assumed, in Europe/London, for rows without a ``Time`` (every file before 2019/20).
DEFAULT_KICKOFF = time(15, 0)

#: The time zone football-data's ``Date`` and ``Time`` are given in.
SOURCE_TIMEZONE = ZoneInfo("Europe/London")

REQUIRED_COLUMNS = ("Div", "Date", "HomeTeam", "AwayTeam")
#: Shots and shots on target, home and away: read where all four are counts and neither side
#: has more on target than in all; else left out, never a reason to refuse the row.
SHOTS = ("HS", "AS", "HST", "AST")
#: The most shots a side is taken to have in a match: beyond it a cell is a typo.
SHOTS_MAX = 199
RESULTS = ("H", "D", "A")

#: The text columns that are stored as they are written: each must hold no character
#: ``hidden_character`` refuses.
TEXT_COLUMNS = ("Div", "HomeTeam", "AwayTeam")

#: The most goals a side is taken to score (in a match or a half): beyond it a cell is a typo.
GOALS_MAX = 99

#: A goal count as written: ASCII digits, perhaps ``.0`` after them (a file re-saved through
#: pandas writes ``2.0``). Python's ``int`` and ``float`` also read ``1_0``, ``1e1`` and other
#: scripts' digits (``١``).
GOALS_TEXT = re.compile(r"([0-9]+)(?:\.0+)?")

#: The dates a file may hold: football (and football-data's two-digit years, 1969–2068) lies
#: well within them.
EARLIEST_DATE = date(1900, 1, 1)
LATEST_DATE = date(2099, 12, 31)

#: How far ahead of the day it is imported a file may list a fixture: a season's fixture list
#: is published a few months before it starts.
FIXTURES_AHEAD = timedelta(days=366)

#: A season "Y-(Y+1)" starts on 1 July of Y and takes dates up to the end of this month of Y+1:
#: a late finish (2019/20's, into July and August 2020) still belongs to it.
SEASON_START_MONTH = 7
SEASON_LAST_MONTH = 8


class FootballDataError(ValueError):
    """The text is not a football-data CSV at all (no header, or a required column missing)."""


@dataclass
class ParsedFile:
    """What one file gave: the matches, the rows refused, and how many prices were dropped."""

    matches: list[MatchRecord] = field(default_factory=list)
    rejected: list[RejectedRow] = field(default_factory=list)
    rows_read: int = 0  # data rows, without the header and rows that are nothing but commas
    prices_skipped: int = 0  # non-blank odds cells dropped because their set was not valid


class _RowError(Exception):
    """A row that cannot be loaded; the message is the reason reported for it."""


def _season_start(day: date) -> int:
    """The year the season of ``day`` starts in, by the calendar (July–June)."""
    return day.year if day.month >= SEASON_START_MONTH else day.year - 1


def _label(start: int) -> str:
    """The name of the season starting in July of ``start``: "2023-24"."""
    return f"{start}-{(start + 1) % 100:02d}"


def season_label(day: date) -> str:
    """The season ``day`` falls in by the calendar: July–December of Y starts "Y-(Y+1)"."""
    return _label(_season_start(day))


def _season_span(start: int) -> tuple[date, date]:
    """The first and last date a season starting in ``start`` takes (see SEASON_LAST_MONTH)."""
    last = date(start + 1, SEASON_LAST_MONTH + 1, 1) - timedelta(days=1)
    return date(start, SEASON_START_MONTH, 1), last


def _seasons_holding(day: date) -> tuple[int, ...]:
    """The seasons (by start year) whose span takes ``day``: its own, and in July or August
    also the one before (a late finish)."""
    start = _season_start(day)
    if SEASON_START_MONTH <= day.month <= SEASON_LAST_MONTH:
        return (start, start - 1)
    return (start,)


def _file_season(days) -> int:
    """The season (by start year) of a file with these dates: the one whose span takes most of
    them (ties go to the later season), so a mistyped year does not move the rest."""
    counts = Counter(start for day in days for start in _seasons_holding(day))
    return max(counts, key=lambda start: (counts[start], start))


#: What a football-data date looks like, whether or not the day exists.
_DATE_SHAPE = re.compile(r"([0-9]{1,2})/([0-9]{1,2})/([0-9]{2}|[0-9]{4})")
_TIME_SHAPE = re.compile(r"([0-9]{1,2}):([0-9]{1,2})")


def parse_date(text: str) -> date:
    """A football-data date, ``dd/mm/yy`` or ``dd/mm/yyyy`` in ASCII digits (two-digit years
    69–99 are 19xx)."""
    shape = _DATE_SHAPE.fullmatch(text)
    if shape is None:
        raise ValueError(text)
    day, month, year = (int(part) for part in shape.groups())
    if len(shape.group(3)) == 2:
        # The POSIX %y pivot, as strptime uses: the site's data starts in 1993/94.
        year += 1900 if year >= 69 else 2000
    return date(year, month, day)


def parse_time(text: str) -> time:
    """A kick-off time ``HH:MM`` in ASCII digits (UK local time)."""
    shape = _TIME_SHAPE.fullmatch(text)
    if shape is None:
        raise ValueError(text)
    return time(int(shape.group(1)), int(shape.group(2)))


def _shown(text: str, limit: int = 40) -> str:
    """A cell as a reason quotes it: ``repr`` (control characters escaped), clipped."""
    return repr(text[:limit]) + ("…" if len(text) > limit else "")


def _goals(text: str, column: str) -> int | None:
    """A goal count from a cell: None when blank, an error unless 0 to GOALS_MAX in ASCII
    digits ("2.0", from a file re-saved through pandas, is still two goals)."""
    if not text:
        return None
    written = GOALS_TEXT.fullmatch(text)
    if written is None:
        raise _RowError(f"{column} {_shown(text)} is not a number of goals")
    digits = written.group(1).lstrip("0") or "0"
    if len(digits) > len(str(GOALS_MAX)) or int(digits) > GOALS_MAX:
        raise _RowError(f"{column} {_shown(text)} is more goals than {GOALS_MAX}")
    return int(digits)


def _shots(cells: dict[str, str]) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
    """(shots, shots on target), each (home, away), or (None, None) unless all four cells are
    counts of 0 to SHOTS_MAX with no more on target than in all."""
    counts = []
    for name in SHOTS:
        written = GOALS_TEXT.fullmatch(cells[name])
        if written is None or len(written.group(1)) > 6 or int(written.group(1)) > SHOTS_MAX:
            return None, None
        counts.append(int(written.group(1)))
    home, away, home_on, away_on = counts
    if home_on > home or away_on > away:
        return None, None
    return (home, away), (home_on, away_on)


def _pair(cells: dict[str, str], home: str, away: str) -> tuple[int | None, int | None]:
    """Both goal counts of a score, or (None, None); an error when only one side is given."""
    home_goals, away_goals = _goals(cells[home], home), _goals(cells[away], away)
    if (home_goals is None) != (away_goals is None):
        raise _RowError(f"{home}/{away} give only one side of the score")
    return home_goals, away_goals


def parse(
    text: str,
    default_kickoff: time = DEFAULT_KICKOFF,
    today: date | None = None,
    divisions: dict[str, LeagueRecord] | None = None,
) -> ParsedFile:
    """Parse one football-data.co.uk CSV into match records, rejected rows and counts.

    Columns are looked up by header name, so every season's layout works; unknown columns are
    ignored. A leading BOM is stripped, CRLF and LF are both accepted and rows that are nothing
    but commas are skipped. Each line is one row (football-data never quotes a line break), so
    a stray quote or an over-long cell costs its own line only. ``Date`` and ``Time`` are UK
    local time (Europe/London) and converted to UTC; rows without a ``Time`` (files before
    2019/20) get ``default_kickoff`` (15:00 UK).

    A file is one season: the one whose span (1 July to 31 August of the next year) takes most
    of its dates, ties going to the later one. A row is rejected, with its 1-based physical line
    number, when its line is not CSV, Div, Date or a team is missing, Div is unknown, Div or a
    team holds a control character, a lone surrogate, a bidirectional control, another invisible
    format character or U+FFFD (``text.hidden_character``), a team's name is longer than
    ``TEAM_NAME_MAX``, the teams are the same, the date or time cannot be read (ASCII digits),
    the date lies before ``EARLIEST_DATE``, after ``LATEST_DATE`` or more than
    ``FIXTURES_AHEAD`` after ``today`` (when given), or outside the file's season, goals are not
    0 to ``GOALS_MAX`` in ASCII digits, a score is half given, half-time goals exceed full-time
    goals, or FTR disagrees with the goals. A price set (bookmaker, market, pre-match or
    closing; its columns, bounds and reading are ``footballdata_odds``') with any leg blank, not a
    decimal number in ASCII digits, below ``PRICE_MIN`` or above ``PRICE_MAX`` is dropped whole and
    its non-blank cells counted in ``prices_skipped``; the row still loads. Asian handicap sets
    (market "ah", bookmakers as for over/under 2.5) carry the row's line (``AH_LINE_COLUMNS``:
    ``AHh`` pre-match, ``AHCh`` closing, Betbrain's ``BbAHh`` before 2019/20) as the records'
    ``line``; a line that is not a multiple of 0.25 within ±``LINE_MAX`` drops the set like a bad
    price. Over/under 2.5 records have line 2.5, 1x2's none. Raises FootballDataError when the
    header is missing, is not CSV or lacks one of Div, Date, HomeTeam, AwayTeam. ``divisions`` are
    the codes known (``DIVISIONS`` unless given).
    """
    divisions = DIVISIONS if divisions is None else divisions
    lines = io.StringIO(text.removeprefix("\ufeff"), newline="")
    try:
        header = _cells(next(lines, ""))
    except csv.Error as error:
        raise FootballDataError(f"Line 1 is not valid CSV: {error}") from None
    if not header:
        raise FootballDataError("The file is empty: no header row.")
    positions: dict[str, int] = {}
    for index, name in enumerate(header):
        # A repeated column name means its first occurrence.
        positions.setdefault(name.strip(), index)
    missing = [name for name in REQUIRED_COLUMNS if name not in positions]
    if missing:
        raise FootballDataError(f"Not a football-data file: no {', '.join(missing)} column.")
    layout = find_price_sets(positions)
    width = len(header)
    columns = [
        (name, positions.get(name))
        for name in (*REQUIRED_COLUMNS, "Time", "FTHG", "FTAG", "FTR", "HTHG", "HTAG", *SHOTS)
    ]
    latest = LATEST_DATE if today is None else min(LATEST_DATE, today + FIXTURES_AHEAD)
    kickoffs: dict[tuple[str, str], datetime] = {}
    odds_reader = OddsReader(layout)
    parsed = ParsedFile()
    loaded: list[tuple[date, str, MatchRecord, int]] = []  # UK date, its text, match, skipped
    for line, written in enumerate(lines, start=2):
        try:
            row = _cells(written)
        except csv.Error as error:
            parsed.rows_read += 1
            parsed.rejected.append(RejectedRow(line, f"the line is not valid CSV: {error}"))
            continue
        if not any(cell.strip() for cell in row):
            continue
        parsed.rows_read += 1
        if len(row) < width:
            row = row + [""] * (width - len(row))
        cells = {name: row[i].strip() if i is not None else "" for name, i in columns}
        try:
            day, match = _read_row(cells, kickoffs, line, default_kickoff, latest, divisions)
        except _RowError as error:
            parsed.rejected.append(RejectedRow(line, str(error)))
            continue
        skipped = odds_reader.read(row, match.odds)
        loaded.append((day, cells["Date"], match, skipped))
    if loaded:
        start = _file_season(day for day, *_ in loaded)
        first, last = _season_span(start)
        for day, date_text, match, skipped in loaded:
            if not first <= day <= last:
                reason = (
                    f"Date {_shown(date_text)} is outside the file's season {_label(start)} "
                    f"({first:%d/%m/%Y} to {last:%d/%m/%Y})"
                )
                parsed.rejected.append(RejectedRow(match.line, reason))
                continue
            match.season = _label(start)
            parsed.matches.append(match)
            parsed.prices_skipped += skipped
        parsed.rejected.sort(key=lambda rejected: rejected.line)
    return parsed


#: The countries of football-data's "new leagues" (``new_league_fixtures.csv``, one league
#: each) and the code their leagues are stored under, as the site's own files name them; and
#: those whose season is a calendar year (stored as "2024").
NEW_LEAGUE_CODES = {
    "Argentina": "ARG",
    "Austria": "AUT",
    "Brazil": "BRA",
    "China": "CHN",
    "Denmark": "DNK",
    "Finland": "FIN",
    "Ireland": "IRL",
    "Japan": "JPN",
    "Mexico": "MEX",
    "Norway": "NOR",
    "Poland": "POL",
    "Romania": "ROU",
    "Russia": "RUS",
    "Sweden": "SWE",
    "Switzerland": "SWZ",
    "USA": "USA",
}
CALENDAR_YEAR_LEAGUES = frozenset({"ARG", "BRA", "CHN", "FIN", "IRL", "JPN", "NOR", "SWE", "USA"})


def parse_new_leagues(text: str, today: date | None = None) -> ParsedFile:
    """Parse football-data's ``new_league_fixtures.csv`` (``Country,League,Date,Time,Home,
    Away,PSH,…``): each country's league stored under its code (``NEW_LEAGUE_CODES``), named as
    the file names it; a calendar-year league's season is its year. Rows of a country not
    known are rejected; otherwise as :func:`parse`."""
    lines = text.removeprefix("\ufeff").splitlines(keepends=True)
    if not lines:
        raise FootballDataError("The file is empty: no header row.")
    header = [name.strip() for name in _cells(lines[0].rstrip("\r\n"))]
    missing = [name for name in ("Country", "League", "Home", "Away") if name not in header]
    if missing:
        raise FootballDataError(f"Not a new-leagues file: no {', '.join(missing)} column.")
    country, league = header.index("Country"), header.index("League")
    divisions = {}
    for written in lines[1:]:
        try:
            row = _cells(written.rstrip("\r\n"))
        except csv.Error:
            continue  # parse reports the line itself
        if len(row) > max(country, league):
            code = NEW_LEAGUE_CODES.get(row[country].strip())
            if code is not None and code not in divisions:
                name = row[league].strip()[:100] or code
                divisions[code] = LeagueRecord(code, name, row[country].strip(), "top-flight")
    renamed = ["Div" if name == "Country" else name for name in header]
    renamed = [{"Home": "HomeTeam", "Away": "AwayTeam"}.get(name, name) for name in renamed]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(renamed)
    for written in lines[1:]:
        try:
            row = _cells(written.rstrip("\r\n"))
        except csv.Error:
            out.write(written.rstrip("\r\n") + "\n")  # kept as it was, for parse to refuse
            continue
        if len(row) > country:
            row[country] = NEW_LEAGUE_CODES.get(row[country].strip(), row[country])
        writer.writerow(row)
    parsed = parse(out.getvalue(), today=today, divisions=divisions)
    for match in parsed.matches:
        if match.league.code in CALENDAR_YEAR_LEAGUES:
            match.season = str(match.kickoff_at.astimezone(SOURCE_TIMEZONE).year)
    return parsed


def screen(parsed: ParsedFile) -> list[RejectedRow]:
    """Leave out of ``parsed``'s matches every price set outside ``bounds`` (its
    overround, or a price or line out of range), counting its prices in ``prices_skipped``; a
    reason for each set left out, with its row's line (the row itself still loads)."""
    notes = []
    for match in parsed.matches:
        kept, reasons = bounds.screen(match.odds)
        parsed.prices_skipped += len(match.odds) - len(kept)
        match.odds = kept
        notes += [RejectedRow(match.line, reason) for reason in reasons]
    return notes


def _cells(line: str) -> list[str]:
    """The cells of one line of CSV (none for a blank line); csv.Error if it cannot be split."""
    return next(csv.reader((line,)), [])


def _read_row(
    cells, kickoffs, line, default_kickoff, latest, divisions
) -> tuple[date, MatchRecord]:
    """The match of one row (its used cells, stripped) and its UK date; _RowError if unusable."""
    for name in REQUIRED_COLUMNS:
        if not cells[name]:
            raise _RowError(f"{name} is missing")
    for name in TEXT_COLUMNS:
        hidden = hidden_character(cells[name])
        if hidden is not None:
            character, kind = hidden
            raise _RowError(f"{name} {_shown(cells[name])} holds U+{ord(character):04X}, {kind}")
    code = cells["Div"]
    league = divisions.get(code)
    if league is None:
        raise _RowError(f"Div {_shown(code)} is not a known division")
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
        kickoff = _kickoff(date_text, time_text, default_kickoff, latest)
        kickoffs[(date_text, time_text)] = kickoff
    home_goals, away_goals = _pair(cells, "FTHG", "FTAG")
    ht_home, ht_away = _pair(cells, "HTHG", "HTAG")
    finished = home_goals is not None
    if ht_home is not None and (not finished or ht_home > home_goals or ht_away > away_goals):
        raise _RowError("the half-time score does not fit the full-time score")
    result = cells["FTR"]
    if result:
        if result not in RESULTS or not finished:
            raise _RowError(f"FTR {_shown(result)} does not fit the goals")
        actual = "H" if home_goals > away_goals else ("D" if home_goals == away_goals else "A")
        if result != actual:
            raise _RowError(f"FTR {result!r} disagrees with the score {home_goals}-{away_goals}")
    shots, on_target = _shots(cells) if finished else (None, None)
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
        shots=shots,
        shots_on_target=on_target,
        line=line,
    )
    return kickoff.astimezone(SOURCE_TIMEZONE).date(), match


def _kickoff(date_text: str, time_text: str, default_kickoff: time, latest: date) -> datetime:
    """UTC kick-off from UK local date and time (``default_kickoff`` when the time is blank)."""
    try:
        day = parse_date(date_text)
    except ValueError:
        if _DATE_SHAPE.fullmatch(date_text):  # 31/02/2024: the right shape, no such day
            raise _RowError(f"Date {date_text!r} is not a real date") from None
        raise _RowError(f"Date {_shown(date_text)} is not dd/mm/yy or dd/mm/yyyy") from None
    if not EARLIEST_DATE <= day <= latest:
        raise _RowError(
            f"Date {date_text!r} is outside the dates taken "
            f"({EARLIEST_DATE:%d/%m/%Y} to {latest:%d/%m/%Y})"
        )
    try:
        clock = parse_time(time_text) if time_text else default_kickoff
    except ValueError:
        raise _RowError(f"Time {_shown(time_text)} is not HH:MM") from None
    return datetime.combine(day, clock, SOURCE_TIMEZONE).astimezone(UTC)
