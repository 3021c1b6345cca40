"""Reading The Odds API (v4): its ``odds`` and ``scores`` answers as match records, and what a
call costs.

``GET /v4/sports/{sport}/odds?regions=…&markets=h2h,spreads,totals&oddsFormat=decimal`` answers
a list of events: ``{id, sport_key, commence_time, home_team, away_team, bookmakers: [{key,
title, last_update, markets: [{key, outcomes: [{name, price, point?}]}]}]}``; soccer's ``h2h``
has three outcomes (the two teams by name and ``Draw``), ``spreads`` the two teams by name each
at a ``point`` (its handicap: the home team's is our Asian handicap line, the away team's its
negative), ``totals`` an ``Over`` and an ``Under`` at a ``point`` (2.5 is our ``ou25``, any
other point ``ou`` at that line). ``GET /v4/sports/{sport}/scores?daysFrom=N`` answers ``{…,
completed, scores: [{name, score}] | null}``. An odds call costs markets × regions credits; a
scores call 1, or 2 with ``daysFrom``.

Neither parser raises on an answer that is a list, whatever its events hold: an event not in the
documented shape is refused with why, a bookmaker's market that is not (or whose prices, line or
overround lie outside ``services.feeds.formats.bounds``) is left out with why, and the rest is read.
"""

import math
from dataclasses import dataclass, field
from datetime import UTC, date, datetime

from engine.records import MatchRecord, OddsRecord, RejectedRow
from enums import OU25_LINE, TEAM_NAME_MAX
from services.feeds.formats import bounds
from services.feeds.formats.footballdata import (
    DIVISIONS,
    EARLIEST_DATE,
    FIXTURES_AHEAD,
    GOALS_MAX,
    GOALS_TEXT,
    LATEST_DATE,
    SOURCE_TIMEZONE,
    season_label,
)
from services.feeds.formats.text import hidden_character

#: The Odds API's bookmaker keys that name a bookmaker football-data also quotes, in its
#: canonical slug; other keys are kept with ``_`` as ``-``.
BOOKMAKERS = {
    "pinnacle": "pinnacle",
    "williamhill": "william-hill",
    "betvictor": "betvictor",
    "coral": "coral",
    "ladbrokes_uk": "ladbrokes",
    "onexbet": "1xbet",
    "betfred": "betfred",
    "betmgm": "betmgm",
}

#: Its markets (the ones a call may request) and ours: ``spreads`` is the Asian handicap,
#: ``totals`` over/under at any point ("ou25" at 2.5 goals, "ou" at the others).
MARKETS = {"h2h": "1x2", "spreads": "ah", "totals": "ou"}

#: The sports (competitions) and the football-data division each stands for, unless
#: configured otherwise (``ODDS_API_SPORTS``).
DEFAULT_SPORTS = {
    "soccer_epl": "E0",
    "soccer_efl_champ": "E1",
    "soccer_spain_la_liga": "SP1",
    "soccer_germany_bundesliga": "D1",
    "soccer_italy_serie_a": "I1",
    "soccer_france_ligue_one": "F1",
}

BOOKMAKER_MAX = 32


class OddsApiError(ValueError):
    """An answer that is not the documented JSON shape at all."""


@dataclass
class ParsedEvents:
    """What one answer gave: the matches, the events refused with why, and the parts of events
    (a bookmaker, a market, a line) left out with why, their events kept."""

    matches: list[MatchRecord] = field(default_factory=list)
    rejected: list[RejectedRow] = field(default_factory=list)
    refused: list[RejectedRow] = field(default_factory=list)


def odds_cost(markets: int, regions: int) -> int:
    """Credits an odds call costs: one per market per region."""
    return max(1, markets) * max(1, regions)


def scores_cost(days_from: int | None) -> int:
    """Credits a scores call costs: 2 with ``daysFrom`` (results of past days), else 1."""
    return 2 if days_from else 1


def bookmaker_slug(key: str) -> str:
    """Our slug of one of its bookmaker keys."""
    return BOOKMAKERS.get(key, key.replace("_", "-"))[:BOOKMAKER_MAX]


def _kind(value) -> str:
    """What a JSON value is, as a reason names it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _shown(value, limit: int = 40) -> str:
    """A scalar as a reason quotes it (clipped); any other value by its kind (never its repr:
    it may be nested deeper than repr can go)."""
    if isinstance(value, str):
        return repr(value[:limit]) + ("…" if len(value) > limit else "")
    if value is None or isinstance(value, bool | int | float):
        text = repr(value)
        return text[:limit] + ("…" if len(text) > limit else "")
    return _kind(value)


def _label(item, position: int) -> str:
    """An event as a reason names it: its position and its id when it has a short one."""
    event_id = item.get("id") if isinstance(item, dict) else None
    if isinstance(event_id, str) and event_id and len(event_id) <= 64:
        return f"event {position} ({event_id!r})"
    return f"event {position}"


class _Refused(ValueError):
    """An event (or part of one) that is not the documented shape; the message says why."""


def _instant(value, today: date | None) -> datetime:
    """``commence_time`` as an aware UTC instant within the dates a fixture may have."""
    if not isinstance(value, str):
        raise _Refused(f"commence_time is {_kind(value)}, not an ISO 8601 instant")
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise _Refused(f"commence_time {_shown(value)} is not an ISO 8601 instant") from None
    if moment.tzinfo is None:
        raise _Refused(f"commence_time {_shown(value)} has no UTC offset")
    latest = LATEST_DATE if today is None else min(LATEST_DATE, today + FIXTURES_AHEAD)
    try:
        moment = moment.astimezone(UTC)
        day = moment.astimezone(SOURCE_TIMEZONE).date()
    except (OverflowError, ValueError):
        raise _Refused(f"commence_time {_shown(value)} is outside the dates taken") from None
    if not EARLIEST_DATE <= day <= latest:
        raise _Refused(
            f"commence_time {_shown(value)} is outside the dates taken "
            f"({EARLIEST_DATE:%d/%m/%Y} to {latest:%d/%m/%Y})"
        )
    return moment


def _team(item, field_name: str) -> str:
    """A team's name as the event gives it: a non-empty string a stored name may be."""
    name = item.get(field_name)
    if not isinstance(name, str):
        raise _Refused(f"{field_name} is {_kind(name)}, not a name")
    name = name.strip()
    if not name:
        raise _Refused(f"{field_name} is empty")
    if len(name) > TEAM_NAME_MAX:
        raise _Refused(f"{field_name} is {len(name)} characters long (at most {TEAM_NAME_MAX})")
    hidden = hidden_character(name)
    if hidden is not None:
        raise _Refused(f"{field_name} {_shown(name)} holds U+{ord(hidden[0]):04X}, {hidden[1]}")
    return name


def _event(item, division: str, today: date | None = None) -> MatchRecord:
    """The fixture of one event (its teams and kick-off); _Refused when it is not one."""
    if not isinstance(item, dict):
        raise _Refused(f"{_kind(item)}, not an event object")
    league = DIVISIONS[division]
    kickoff = _instant(item.get("commence_time"), today)
    home, away = _team(item, "home_team"), _team(item, "away_team")
    if home == away:
        raise _Refused(f"home_team and away_team are both {home!r}")
    return MatchRecord(
        league=league,
        season=season_label(kickoff.astimezone(SOURCE_TIMEZONE).date()),
        kickoff_at=kickoff,
        home_team=home,
        away_team=away,
    )


def _line(value) -> float | None:
    """A ``point`` as a line: a finite number in quarter goals, else None (its bounds per market
    are ``services.feeds.formats.bounds``')."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        line = float(value)
    except OverflowError:
        return None
    if not math.isfinite(line) or (line * 4) % 1:
        return None
    return line + 0.0  # never -0.0


def _outcome(outcome) -> tuple:
    """An outcome's (name, price, point) as given; _Refused unless an object with a name that
    is a string and a price that is a decimal price within bounds."""
    if not isinstance(outcome, dict):
        raise _Refused(f"an outcome is {_kind(outcome)}, not an object")
    name, price = outcome.get("name"), outcome.get("price")
    if not isinstance(name, str):
        raise _Refused(f"an outcome's name is {_kind(name)}, not a string")
    problem = bounds.price_problem(price)
    if problem is not None:
        raise _Refused(f"{name[:40]!r}: {problem}")
    return name, float(price), outcome.get("point")


def _match_odds(outcomes, home, away, bookmaker) -> list[OddsRecord]:
    """A bookmaker's ``h2h`` market: its three legs; _Refused when they are not."""
    legs = {}
    for outcome in outcomes:
        name, price, _ = _outcome(outcome)
        selection = {home: "home", away: "away", "Draw": "draw"}.get(name)
        if selection is None:
            raise _Refused(f"the outcome {_shown(name)} is neither team nor Draw")
        if selection in legs:
            raise _Refused(f"the outcome {_shown(name)} is given twice")
        legs[selection] = price
    wanted = ("home", "draw", "away")
    if set(legs) != set(wanted):
        raise _Refused(f"outcomes for {', '.join(s for s in wanted if s not in legs)} missing")
    _check("1x2", bookmaker, None, [legs[selection] for selection in wanted])
    return [OddsRecord(bookmaker, "1x2", selection, legs[selection]) for selection in wanted]


def _check(market, bookmaker, line, prices) -> None:
    problem = bounds.market_problem(market, bookmaker, line, prices)
    if problem is not None:
        raise _Refused(problem)


def _spread_odds(outcomes, home, away, bookmaker) -> list[OddsRecord]:
    """A bookmaker's ``spreads`` market at each of its lines: the home team's point, where the
    away team's is its negative; any leg that does not fit refuses the whole market."""
    legs = {}
    for outcome in outcomes:
        name, price, point = _outcome(outcome)
        selection = {home: "home", away: "away"}.get(name)
        if selection is None:
            raise _Refused(f"the outcome {_shown(name)} is neither team")
        line = _line(point)
        if line is None:
            raise _Refused(f"the point {_shown(point)} is not a line in quarter goals")
        line = line if selection == "home" else -line + 0.0
        if (line, selection) in legs:
            raise _Refused(f"{selection} at {line:g} is given twice")
        legs[line, selection] = price
    lines = sorted({line for line, _ in legs})
    if not lines or len(legs) != 2 * len(lines):
        raise _Refused("a line without both teams' prices (the away point is the home's negative)")
    for line in lines:
        _check("ah", bookmaker, line, [legs[line, "home"], legs[line, "away"]])
    return [
        OddsRecord(bookmaker, "ah", selection, legs[line, selection], line=line)
        for line in lines
        for selection in ("home", "away")
    ]


def _total_odds(outcomes, bookmaker) -> tuple[list[OddsRecord], list[str]]:
    """A bookmaker's ``totals`` market at each point with both an over and an under price
    ("ou25" at 2.5, "ou" elsewhere); a point with a leg missing, given twice or out of bounds
    is left out, with why."""
    legs, bad, problems = {}, set(), []
    for outcome in outcomes:
        if not isinstance(outcome, dict):
            problems.append(f"an outcome is {_kind(outcome)}, not an object")
            continue
        point = _line(outcome.get("point"))
        name = outcome.get("name")
        selection = {"Over": "over", "Under": "under"}.get(name) if isinstance(name, str) else None
        if point is None or selection is None:
            problems.append(
                f"the outcome {_shown(name)} at {_shown(outcome.get('point'))} is not an "
                "Over or Under at a line in quarter goals"
            )
            continue
        problem = bounds.price_problem(outcome.get("price"))
        if problem is not None or (point, selection) in legs:
            if point not in bad:
                problems.append(f"{point:g}: {problem or selection + ' given twice'}")
            bad.add(point)
            continue
        legs[point, selection] = float(outcome["price"])
    records = []
    for point in sorted({point for point, _ in legs} - bad):
        if (point, "over") not in legs or (point, "under") not in legs:
            problems.append(f"{point:g}: over or under missing")
            continue
        market = "ou25" if point == OU25_LINE else "ou"
        prices = [legs[point, "over"], legs[point, "under"]]
        problem = bounds.market_problem(market, bookmaker, point, prices)
        if problem is not None:
            problems.append(f"{point:g}: {problem}")
            continue
        records += [
            OddsRecord(bookmaker, market, selection, legs[point, selection], line=point)
            for selection in ("over", "under")
        ]
    return records, problems


def _market_odds(market, home, away, bookmaker) -> tuple[list[OddsRecord], list[str]]:
    """One bookmaker's market as our records (each line whole, or left out) and why anything
    of it was left out."""
    if not isinstance(market, dict):
        return [], [f"a market is {_kind(market)}, not an object"]
    key, outcomes = market.get("key"), market.get("outcomes")
    if not isinstance(key, str) or key not in MARKETS:
        return [], []  # a market not asked for: not ours to read
    if not isinstance(outcomes, list):
        return [], [f"{key}: outcomes is {_kind(outcomes)}, not a list"]
    try:
        if key == "h2h":
            return _match_odds(outcomes, home, away, bookmaker), []
        if key == "spreads":
            return _spread_odds(outcomes, home, away, bookmaker), []
    except _Refused as refused:
        return [], [f"{key}: {refused}"]
    records, problems = _total_odds(outcomes, bookmaker)
    return records, [f"{key} {problem}" for problem in problems]


def _bookmaker_odds(book, home, away) -> tuple[list[OddsRecord], list[str]]:
    """One bookmaker's markets (its first quote of a market at a line kept) and why anything
    of it was left out."""
    if not isinstance(book, dict):
        return [], [f"a bookmaker is {_kind(book)}, not an object"]
    key = book.get("key")
    if not isinstance(key, str) or not key:
        return [], [f"a bookmaker's key is {_kind(key)}, not a name"]
    slug = bookmaker_slug(key)
    markets = book.get("markets")
    if markets is None:
        return [], []
    if not isinstance(markets, list):
        return [], [f"{slug}: markets is {_kind(markets)}, not a list"]
    found, problems, seen = [], [], set()
    for market in markets:
        odds, refused = _market_odds(market, home, away, slug)
        problems += [f"{slug} {problem}" for problem in refused]
        # A bookmaker's first quote of a market at a line is the one kept.
        found += [r for r in odds if (r.market, r.line) not in seen]
        seen |= {(r.market, r.line) for r in odds}
    return found, problems


def parse_odds(payload, division: str, today: date | None = None) -> ParsedEvents:
    """The events of an ``odds`` answer for the sport standing for ``division``, each with its
    bookmakers' complete 1x2 prices, Asian handicap prices at each line and over/under prices
    at each point. An event that is not an object, or whose teams, kick-off (within the dates
    a fixture may have, ``today`` given) or ``bookmakers`` are not the documented shape, is
    refused with its position (1-based) in ``rejected``; a bookmaker, market or line that is
    not (a leg missing, a name or price of the wrong type, a price, line or overround outside
    ``bounds``) is left out whole and listed in ``refused``, the event's other markets
    kept. OddsApiError when the answer is not a list. Never raises otherwise."""
    if not isinstance(payload, list):
        raise OddsApiError(f"the odds answer is {_kind(payload)}, not a list of events")
    parsed = ParsedEvents()
    for position, item in enumerate(payload, start=1):
        label = _label(item, position)
        try:
            match = _event(item, division, today)
        except _Refused as refused:
            parsed.rejected.append(RejectedRow(position, f"{label} refused: {refused}"))
            continue
        books = item.get("bookmakers")
        if books is None:
            books = []
        if not isinstance(books, list):
            reason = f"{label} refused: bookmakers is {_kind(books)}, not a list"
            parsed.rejected.append(RejectedRow(position, reason))
            continue
        match.line = position
        for book in books:
            odds, problems = _bookmaker_odds(book, match.home_team, match.away_team)
            match.odds += odds
            parsed.refused += [RejectedRow(position, f"{label}: {p}") for p in problems]
        parsed.matches.append(match)
    return parsed


def _goals(value) -> int:
    """A side's score as The Odds API gives it (``"4"``, or a whole number): 0 to GOALS_MAX."""
    written = GOALS_TEXT.fullmatch(value.strip()) if isinstance(value, str) else None
    if written is not None and len(written.group(1)) <= len(str(GOALS_MAX)):
        goals = int(written.group(1))
    elif isinstance(value, int) and not isinstance(value, bool):
        goals = value
    else:
        raise _Refused(f"a score {_shown(value)} is not a number of goals")
    if not 0 <= goals <= GOALS_MAX:
        raise _Refused(f"a score {_shown(value)} is out of range")
    return goals


def _result(item) -> tuple[int, int]:
    """The full-time score of a completed event; _Refused when it does not give both sides."""
    scores = item.get("scores")
    if not isinstance(scores, list):
        raise _Refused(f"scores is {_kind(scores)}, not a list")
    goals = {}
    for entry in scores:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise _Refused("a score is not an object with a team's name")
        goals[entry["name"].strip()] = entry.get("score")
    home, away = item["home_team"].strip(), item["away_team"].strip()
    if home not in goals or away not in goals:
        raise _Refused("scores do not name both teams")
    return _goals(goals[home]), _goals(goals[away])


def parse_scores(payload, division: str, today: date | None = None) -> ParsedEvents:
    """The finished events of a ``scores`` answer with their full-time score (events not
    completed are left out: their fixture comes with the odds); one that is not the documented
    shape is refused with its position and why. OddsApiError when the answer is not a list."""
    if not isinstance(payload, list):
        raise OddsApiError(f"the scores answer is {_kind(payload)}, not a list of events")
    parsed = ParsedEvents()
    for position, item in enumerate(payload, start=1):
        if isinstance(item, dict) and item.get("completed") is not True:
            continue
        label = _label(item, position)
        try:
            match = _event(item, division, today)
            home_goals, away_goals = _result(item)
        except _Refused as refused:
            parsed.rejected.append(RejectedRow(position, f"{label} refused: {refused}"))
            continue
        match.line = position
        match.status = "finished"
        match.home_goals, match.away_goals = home_goals, away_goals
        parsed.matches.append(match)
    return parsed


def sports(text: str | None) -> dict[str, str]:
    """``sport:Div`` pairs, comma-separated, as a mapping; ValueError for an unknown division."""
    if not text:
        return dict(DEFAULT_SPORTS)
    found = {}
    for entry in text.split(","):
        sport, _, division = entry.strip().partition(":")
        if not sport or division not in DIVISIONS:
            raise ValueError(f"{entry.strip()!r} is not sport:Div with a known division")
        found[sport] = division
    return found
