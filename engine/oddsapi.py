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
"""

from dataclasses import dataclass, field
from datetime import UTC, datetime

from engine.footballdata import DIVISIONS, PRICE_MAX, SOURCE_TIMEZONE, season_label
from engine.records import MatchRecord, OddsRecord, RejectedRow
from enums import OU25_LINE

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
#: The largest line (goals, either sign) read as one: beyond it a point is no football line.
LINE_MAX = 20.0


class OddsApiError(ValueError):
    """An answer that is not the documented JSON shape at all."""


@dataclass
class ParsedEvents:
    """What one answer gave: the matches, and the events refused with why."""

    matches: list[MatchRecord] = field(default_factory=list)
    rejected: list[RejectedRow] = field(default_factory=list)


def odds_cost(markets: int, regions: int) -> int:
    """Credits an odds call costs: one per market per region."""
    return max(1, markets) * max(1, regions)


def scores_cost(days_from: int | None) -> int:
    """Credits a scores call costs: 2 with ``daysFrom`` (results of past days), else 1."""
    return 2 if days_from else 1


def bookmaker_slug(key: str) -> str:
    """Our slug of one of its bookmaker keys."""
    return BOOKMAKERS.get(key, key.replace("_", "-"))[:BOOKMAKER_MAX]


def _instant(text) -> datetime:
    if not isinstance(text, str):
        raise ValueError(text)
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        raise ValueError(text)
    return moment.astimezone(UTC)


def _event(item, division: str) -> MatchRecord:
    league = DIVISIONS[division]
    kickoff = _instant(item["commence_time"])
    home, away = item["home_team"], item["away_team"]
    if not isinstance(home, str) or not isinstance(away, str) or not home or home == away:
        raise ValueError("home_team and away_team must be two names")
    return MatchRecord(
        league=league,
        season=season_label(kickoff.astimezone(SOURCE_TIMEZONE).date()),
        kickoff_at=kickoff,
        home_team=home.strip(),
        away_team=away.strip(),
    )


def _price(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if 1.0 < value <= PRICE_MAX else None


def _line(value) -> float | None:
    """A ``point`` as a line: a number in quarter goals, else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not abs(value) <= LINE_MAX or (value * 4) % 1:
        return None
    return float(value) + 0.0  # never -0.0


def _match_odds(outcomes, home, away, bookmaker) -> list[OddsRecord]:
    """A bookmaker's ``h2h`` market: its three legs, or none."""
    legs = {}
    for outcome in outcomes:
        name, price = outcome.get("name"), _price(outcome.get("price"))
        selection = {home: "home", away: "away", "Draw": "draw"}.get(name)
        if selection is None or price is None:
            return []
        legs[selection] = price
    wanted = ("home", "draw", "away")
    if set(legs) != set(wanted):
        return []
    return [OddsRecord(bookmaker, "1x2", selection, legs[selection]) for selection in wanted]


def _spread_odds(outcomes, home, away, bookmaker) -> list[OddsRecord]:
    """A bookmaker's ``spreads`` market at each of its lines: the home team's point, where the
    away team's is its negative; any leg that does not fit leaves the whole market out."""
    legs = {}
    for outcome in outcomes:
        name, price = outcome.get("name"), _price(outcome.get("price"))
        selection = {home: "home", away: "away"}.get(name)
        point = _line(outcome.get("point"))
        if selection is None or price is None or point is None:
            return []
        line = point if selection == "home" else -point + 0.0
        if (line, selection) in legs:
            return []
        legs[line, selection] = price
    lines = sorted({line for line, _ in legs})
    if not lines or len(legs) != 2 * len(lines):
        return []
    return [
        OddsRecord(bookmaker, "ah", selection, legs[line, selection], line=line)
        for line in lines
        for selection in ("home", "away")
    ]


def _total_odds(outcomes, bookmaker) -> list[OddsRecord]:
    """A bookmaker's ``totals`` market at each point with both an over and an under price
    ("ou25" at 2.5, "ou" elsewhere); a point with a leg missing or not a price is left out."""
    legs, bad = {}, set()
    for outcome in outcomes:
        point = _line(outcome.get("point"))
        selection = {"Over": "over", "Under": "under"}.get(outcome.get("name"))
        price = _price(outcome.get("price"))
        if point is None or selection is None:
            continue
        if price is None or (point, selection) in legs:
            bad.add(point)
        legs[point, selection] = price
    records = []
    for point in sorted({point for point, _ in legs} - bad):
        if (point, "over") in legs and (point, "under") in legs:
            market = "ou25" if point == OU25_LINE else "ou"
            records += [
                OddsRecord(bookmaker, market, selection, legs[point, selection], line=point)
                for selection in ("over", "under")
            ]
    return records


def _market_odds(key, outcomes, home, away, bookmaker) -> list[OddsRecord]:
    """One bookmaker's market as our records (each line whole, or left out)."""
    if key not in MARKETS or not isinstance(outcomes, list):
        return []
    if not all(isinstance(outcome, dict) for outcome in outcomes):
        return []
    if key == "h2h":
        return _match_odds(outcomes, home, away, bookmaker)
    if key == "spreads":
        return _spread_odds(outcomes, home, away, bookmaker)
    return _total_odds(outcomes, bookmaker)


def parse_odds(payload, division: str) -> ParsedEvents:
    """The events of an ``odds`` answer for the sport standing for ``division``, each with its
    bookmakers' complete 1x2 prices, Asian handicap prices at each line and over/under prices
    at each point (a market or line with a leg missing or not a price above 1.0 is left out
    whole). An event without its teams or kick-off is refused with its position (1-based) in
    the answer. OddsApiError when the answer is not a list."""
    if not isinstance(payload, list):
        raise OddsApiError("the odds answer is not a list of events")
    parsed = ParsedEvents()
    for position, item in enumerate(payload, start=1):
        try:
            match = _event(item, division)
        except (KeyError, TypeError, ValueError) as error:
            parsed.rejected.append(RejectedRow(position, f"event refused: {error!r}"))
            continue
        match.line = position
        seen = set()
        for book in item.get("bookmakers") or []:
            if not isinstance(book, dict) or not isinstance(book.get("key"), str):
                continue
            slug = bookmaker_slug(book["key"])
            for market in book.get("markets") or []:
                if not isinstance(market, dict):
                    continue
                odds = _market_odds(
                    market.get("key"),
                    market.get("outcomes"),
                    item["home_team"],
                    item["away_team"],
                    slug,
                )
                # A bookmaker's first quote of a market at a line is the one kept.
                for record in odds:
                    if (slug, record.market, record.line) not in seen:
                        match.odds.append(record)
                for record in odds:
                    seen.add((slug, record.market, record.line))
        parsed.matches.append(match)
    return parsed


def parse_scores(payload, division: str) -> ParsedEvents:
    """The finished events of a ``scores`` answer with their full-time score (events not
    completed are left out: their fixture comes with the odds)."""
    if not isinstance(payload, list):
        raise OddsApiError("the scores answer is not a list of events")
    parsed = ParsedEvents()
    for position, item in enumerate(payload, start=1):
        if not isinstance(item, dict) or item.get("completed") is not True:
            continue
        try:
            match = _event(item, division)
            goals = {entry["name"]: entry["score"] for entry in item["scores"]}
            home_goals = int(goals[item["home_team"]])
            away_goals = int(goals[item["away_team"]])
        except (KeyError, TypeError, ValueError) as error:
            parsed.rejected.append(RejectedRow(position, f"event refused: {error!r}"))
            continue
        if not (0 <= home_goals <= 99 and 0 <= away_goals <= 99):
            parsed.rejected.append(RejectedRow(position, "a score out of range"))
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
