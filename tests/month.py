"""The month the autopilot plays (``tests.autopilot`` runs it): a real Premier League month,
what happens to it, and two faithful upstreams serving it on the clock the harness advances.

- **The fixtures** are April 2024 of the shared 2023/24 file. The plan gives some of them a
  fate: a kick-off moved two hours later (known a day ahead), a match postponed (dropped by both
  sources, listed again at its real date), one cancelled (never played, never in a results
  file), a score The Odds API reports otherwise than football-data, a result football-data
  corrects in a later season file, and Nottingham Forest named "Nottingham Forest" by The Odds
  API (an operator maps it).
- **football-data** (:class:`MonthFootballData`) overwrites ``fixtures.csv`` on Tuesdays and
  Fridays at 15:00 (the coming week: first pre-match prices, then the moved ones) and the season
  file on Mondays and Thursdays at 09:00 (results with closing prices); it is down (503) for a
  day.
- **The Odds API** (:class:`MonthOddsApi`) answers ``/v4/sports/soccer_epl/odds`` with prices
  that change on every call and ``/scores?daysFrom=3``, charging credits and saying so in the
  documented headers; each week it answers a 429 with ``Retry-After``, a 502 and a call that
  times out, none of them charged.
"""

import contextlib
import csv
import hashlib
import io
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from services.feeds.formats import footballdata
from tests import sync_world
from tests.source_servers import FootballDataServer, OddsApiServer, http_date

KEY = "k" * 32
SPORT = "soccer_epl"
SEASON_PATH = "/mmz4281/2324/E0.csv"
FIXTURES_PATH = "/fixtures.csv"

#: The month: April 2024, from Monday the 1st at noon.
START = datetime(2024, 4, 1, 12, 0, tzinfo=UTC)
MONTH_DAYS = 29.5  # to the 30th, 23:59 (the last kick-off is on the 28th)

#: The Odds API's spelling of one team (the rest as football-data spells them).
RENAMED = {"Nott'm Forest": "Nottingham Forest"}

#: The Odds API's prices move on every call, by these factors in turn (no two in a row alike).
FACTORS = (1.0, 1.03, 0.98, 1.02, 0.97, 1.01)

#: The Odds API's bookmakers and football-data's columns of their prices.
BOOKS = {
    "pinnacle": (("PSH", "PSD", "PSA"), ("P>2.5", "P<2.5")),
    "williamhill": (("WHH", "WHD", "WHA"), None),
    "bet365": (("B365H", "B365D", "B365A"), ("B365>2.5", "B365<2.5")),
}

PLAYED_FOR = timedelta(minutes=115)  # a match is over this long after its kick-off
NEAR = timedelta(hours=3)  # the schedule's DATA_SYNC_NEAR_HOURS


def kickoff_of(row) -> datetime:
    """A season row's kick-off in UTC (its date and time are London's)."""
    return datetime.combine(
        footballdata.parse_date(row["Date"]),
        footballdata.parse_time(row["Time"] or "15:00"),
        footballdata.SOURCE_TIMEZONE,
    ).astimezone(UTC)


def _closing_name(name: str) -> str:
    if "2.5" in name:
        return name.replace(">", "C>").replace("<", "C<")
    return f"{name[:-1]}C{name[-1]}"


def _csv(header, records) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(header)
    for record in records:
        writer.writerow([record.get(name, "") for name in header])
    return out.getvalue().encode()


def _weekly(moment: datetime, weekdays: tuple[int, ...], hour: int) -> datetime:
    """The latest instant at or before ``moment`` on one of ``weekdays`` at ``hour``:00."""
    day = moment.replace(hour=hour, minute=0, second=0, microsecond=0)
    while day > moment or day.weekday() not in weekdays:
        day -= timedelta(days=1)
    return day


@dataclass
class Fixture:
    """A real match of the month and what the plan does to it."""

    row: dict
    kickoff: datetime  # when it is really played
    fate: str = "played"  # played, moved, postponed, cancelled, contradicted
    original: datetime | None = None  # the kick-off first listed (moved, postponed)
    changed_at: datetime | None = None  # when the move, postponement or cancellation is known
    relisted_at: datetime | None = None  # a postponed match listed again (at its real date)

    @property
    def home(self) -> str:
        return self.row["HomeTeam"]

    @property
    def away(self) -> str:
        return self.row["AwayTeam"]

    @property
    def score(self) -> tuple[int, int]:
        return int(self.row["FTHG"]), int(self.row["FTAG"])

    def listed(self, moment: datetime) -> datetime | None:
        """The kick-off the sources give at ``moment``, or None while it is not listed."""
        if self.fate == "moved":
            return self.original if moment < self.changed_at else self.kickoff
        if self.fate == "postponed":
            if moment < self.changed_at:
                return self.original
            return self.kickoff if moment >= self.relisted_at else None
        if self.fate == "cancelled":
            return self.kickoff if moment < self.changed_at else None
        return self.kickoff

    def played_by(self, moment: datetime) -> bool:
        """Whether it has been played (over) by ``moment``."""
        return self.fate != "cancelled" and moment >= self.kickoff + PLAYED_FOR


@dataclass
class Incident:
    """An upstream's bad answer, given to the first calls at or after ``at``."""

    source: str
    kind: str  # "429", "502", "timeout", "down" (every call until ``until``)
    at: datetime
    until: datetime | None = None
    left: int = 1  # answers still to give (a retried call fails each try)
    hit_at: list = field(default_factory=list)  # the instants it was answered at


class Plan:
    """The month's fixtures (``days`` from ``start``), their fates and the upstreams' incidents."""

    def __init__(self, start: datetime = START, days: float = MONTH_DAYS, retries: int = 1):
        self.start, self.end = start, start + timedelta(days=days)
        self.header, rows = sync_world.rows()
        self.fixtures = [Fixture(row, kickoff_of(row)) for row in rows]
        inside = [f for f in self.fixtures if self.start < f.kickoff < self.end - PLAYED_FOR]
        if len(inside) < 5:
            raise ValueError("the window holds fewer than five matches: make it longer")
        first = inside[0]
        # the first match whose two-hour move is known a day ahead, inside the window
        moved = next(f for f in inside[1:] if f.kickoff - timedelta(hours=26) >= start)
        others = [f for f in inside[1:-1] if f is not moved]
        self.cancelled, self.contradicted = others[0], others[1]
        moved.fate, moved.original = "moved", moved.kickoff - timedelta(hours=2)
        moved.changed_at = moved.original - timedelta(hours=24)
        self.moved = moved
        self.cancelled.fate = "cancelled"
        self.cancelled.changed_at = self.cancelled.kickoff - timedelta(hours=20)
        self.contradicted.fate = "contradicted"
        # the window's last match, first listed at the first one's slot, dropped six hours
        # before it, listed again (at its real date) half a day later at the soonest
        postponed = inside[-1]
        postponed.fate, postponed.original = "postponed", first.kickoff + timedelta(minutes=5)
        postponed.changed_at = postponed.original - timedelta(hours=6)
        postponed.relisted_at = max(
            postponed.changed_at + timedelta(hours=12), postponed.kickoff - timedelta(hours=36)
        )
        self.postponed = postponed
        # football-data corrects the last result before the window in its next season file
        self.corrected = max(
            (f for f in self.fixtures if f.kickoff < start), key=lambda f: f.kickoff
        )
        self.corrected_at = _weekly(start, (0, 3), 9) + timedelta(days=3)
        while self.corrected_at.weekday() not in (0, 3):
            self.corrected_at += timedelta(days=1)
        self.inside = inside
        self.incidents = [
            Incident(
                "football-data",
                "down",
                start + timedelta(hours=18),
                until=start + timedelta(hours=42),
                left=0,
            )
        ]
        week = timedelta(days=0)
        while start + week < self.end:
            self.incidents += [
                Incident("the-odds-api", "429", start + week + timedelta(hours=6)),
                Incident(
                    "the-odds-api", "502", start + week + timedelta(hours=30), left=retries + 1
                ),
                Incident(
                    "the-odds-api", "timeout", start + week + timedelta(hours=50), left=retries + 1
                ),
            ]
            week += timedelta(days=7)

    def reported_score(self, fixture: Fixture, source: str) -> tuple[int, int]:
        """The score ``source`` gives a played fixture."""
        home, away = fixture.score
        if source == "the-odds-api" and fixture is self.contradicted:
            return home + 1, away
        return home, away

    def kickoffs(self, moment: datetime):
        """Every kick-off listed at ``moment``."""
        return (k for f in self.fixtures if (k := f.listed(moment)) is not None)

    def steps(self, regular: timedelta, near: timedelta) -> list[datetime]:
        """The clock's instants: every ``regular`` step, every ``near`` one before a kick-off."""
        found, moment = [], self.start
        while moment < self.end:
            found.append(moment)
            close = any(moment < k <= moment + NEAR for k in self.kickoffs(moment))
            moment += near if close else regular
        return found

    # football-data's files

    def results_published(self, fixture: Fixture) -> datetime:
        """When football-data's season file first carries ``fixture``'s result."""
        moment = fixture.kickoff + PLAYED_FOR
        published = _weekly(moment, (0, 3), 9)
        while published < moment or published.weekday() not in (0, 3):
            published += timedelta(days=1)
        return published

    def season_file(self, moment: datetime) -> tuple[datetime, bytes]:
        """(published at, body) of the season file as served at ``moment``: the results of the
        matches played by its last Monday or Thursday 09:00, closing prices included."""
        published = _weekly(moment, (0, 3), 9)
        records = []
        for fixture in self.fixtures:
            if not fixture.played_by(published):
                continue
            record = dict(fixture.row)
            if fixture.kickoff != kickoff_of(fixture.row):
                raise AssertionError("a fixture's real kick-off is its row's")
            if fixture is self.corrected and published >= self.corrected_at:
                home, away = fixture.score
                record["FTHG"], record["FTR"] = (
                    str(home + 1),
                    "H" if home + 1 > away else ("D" if home + 1 == away else "A"),
                )
            records.append(record)
        return published, _csv(self.header, records)

    def fixtures_file(self, moment: datetime) -> tuple[datetime, bytes]:
        """(published at, body) of ``fixtures.csv`` as served at ``moment``: the week ahead of its
        last Tuesday or Friday 15:00, with pre-match prices (moved ones for a match it lists
        again)."""
        published = _weekly(moment, (1, 4), 15)
        before = _weekly(published - timedelta(minutes=1), (1, 4), 15)
        records = []
        for fixture in self.fixtures:
            kickoff = fixture.listed(published)
            if kickoff is None or not published <= kickoff < published + timedelta(days=7):
                continue
            again = fixture.listed(before)
            moved = again is not None and before <= again < before + timedelta(days=7)
            record = {name: fixture.row[name] for name in sync_world.FIXTURE_COLUMNS}
            local = kickoff.astimezone(footballdata.SOURCE_TIMEZONE)
            record |= {"Date": local.strftime("%d/%m/%Y"), "Time": local.strftime("%H:%M")}
            record["Referee"] = ""
            if moved:
                for name in sync_world.FIXTURE_COLUMNS[6:]:
                    record[name] = fixture.row.get(_closing_name(name)) or fixture.row[name]
            records.append(record)
        return published, _csv(sync_world.FIXTURE_COLUMNS, records)

    # The Odds API's answers

    def odds_events(self, moment: datetime, call: int) -> list[dict]:
        """The events an odds call at ``moment`` answers (the ``call``-th: its prices moved)."""
        factor = FACTORS[call % len(FACTORS)]
        events = []
        for fixture in self.fixtures:
            kickoff = fixture.listed(moment)
            if kickoff is None or not moment < kickoff <= moment + timedelta(days=10):
                continue
            home, away = (
                RENAMED.get(fixture.home, fixture.home),
                RENAMED.get(fixture.away, fixture.away),
            )
            books = []
            for key, (h2h, totals) in BOOKS.items():
                markets = []
                prices = [fixture.row.get(name) for name in h2h]
                if all(prices):
                    names = (home, "Draw", away)
                    markets.append(
                        {
                            "key": "h2h",
                            "outcomes": [
                                {"name": n, "price": _moved(p, factor)}
                                for n, p in zip(names, prices, strict=True)
                            ],
                        }
                    )
                if totals and all(fixture.row.get(name) for name in totals):
                    markets.append(
                        {
                            "key": "totals",
                            "outcomes": [
                                {"name": n, "price": _moved(fixture.row[c], factor), "point": 2.5}
                                for n, c in zip(("Over", "Under"), totals, strict=True)
                            ],
                        }
                    )
                if markets:
                    books.append(
                        {"key": key, "title": key, "last_update": _z(moment), "markets": markets}
                    )
            events.append(
                {
                    "id": _event_id(fixture),
                    "sport_key": SPORT,
                    "sport_title": "EPL",
                    "commence_time": _z(kickoff),
                    "home_team": home,
                    "away_team": away,
                    "bookmakers": books,
                }
            )
        return events

    def scores(self, moment: datetime) -> list[dict]:
        """What ``/scores?daysFrom=3`` answers at ``moment``."""
        found = []
        for fixture in self.fixtures:
            kickoff = fixture.listed(moment)
            if kickoff is None or not moment - timedelta(days=3) <= kickoff <= moment:
                continue
            home, away = (
                RENAMED.get(fixture.home, fixture.home),
                RENAMED.get(fixture.away, fixture.away),
            )
            done = fixture.played_by(moment)
            goals = self.reported_score(fixture, "the-odds-api") if done else None
            found.append(
                {
                    "id": _event_id(fixture),
                    "sport_key": SPORT,
                    "sport_title": "EPL",
                    "commence_time": _z(kickoff),
                    "completed": done,
                    "home_team": home,
                    "away_team": away,
                    "scores": None
                    if goals is None
                    else [
                        {"name": home, "score": str(goals[0])},
                        {"name": away, "score": str(goals[1])},
                    ],
                    "last_update": _z(moment) if done else None,
                }
            )
        return found


def _moved(price: str, factor: float) -> float:
    return round(max(1.01, float(price) * factor), 2)


def _z(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _event_id(fixture: Fixture) -> str:
    return hashlib.md5(f"{fixture.home}|{fixture.away}|{fixture.row['Date']}".encode()).hexdigest()


class MonthFootballData(FootballDataServer):
    """football-data.co.uk on the month's clock: the files as the plan publishes them."""

    def __init__(self, plan: Plan, clock):
        super().__init__()
        self.plan, self.clock = plan, clock
        self.log = []  # (instant, path, status)

    def answer(self, handler):
        now = self.clock()
        path = handler.path.split("?")[0]
        down = next(
            (
                i
                for i in self.plan.incidents
                if i.source == "football-data" and i.kind == "down" and i.at <= now < i.until
            ),
            None,
        )
        if down is not None:
            down.hit_at.append(now)
            answer = (
                503,
                {"Content-Type": "text/html"},
                b"<html><body>Service Unavailable</body></html>",
            )
        else:
            for name, made in (
                (SEASON_PATH, self.plan.season_file),
                (FIXTURES_PATH, self.plan.fixtures_file),
            ):
                published, body = made(now)
                self.put(name, body, http_date(published))
            answer = super().answer(handler)
        with self.lock:
            self.log.append((now, path, answer[0]))
        return answer


class MonthOddsApi(OddsApiServer):
    """The Odds API v4 on the month's clock: its prices move on every call; the plan's incidents
    (429, 502, a timeout) answered when due, none charged. ``charged`` logs (instant, path,
    credits) of each answer that cost credits."""

    def __init__(self, plan: Plan, clock, credits: int, timeout: float):
        super().__init__(credits=credits, key=KEY)
        self.plan, self.clock, self.timeout = plan, clock, timeout
        self.calls = 0
        self.log = []  # (instant, path, status, credits charged)

    def _handle(self, handler):
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            super()._handle(handler)

    def answer(self, handler):
        now = self.clock()
        path = handler.path.split("?")[0]
        incident = self._incident(now)
        if incident is not None:
            answer = self._failure(incident)
        else:
            with self.lock:
                self.calls += 1
                call = self.calls
                used = self.used
            self.events[SPORT] = self.plan.odds_events(now, call)
            self.scores[SPORT] = self.plan.scores(now)
            answer = super().answer(handler)
            with self.lock:
                self.log.append((now, path, answer[0], self.used - used))
            return answer
        with self.lock:
            self.log.append((now, path, answer[0], 0))
        return answer

    def _incident(self, now):
        with self.lock:
            for incident in self.plan.incidents:
                if incident.source == "the-odds-api" and incident.at <= now and incident.left > 0:
                    incident.left -= 1
                    incident.hit_at.append(now)
                    return incident
        return None

    def _failure(self, incident):
        if incident.kind == "429":
            body = b'{"message": "Too many requests", "error_code": "EXCEEDED_FREQ_LIMIT"}'
            return 429, {"Content-Type": "application/json", "Retry-After": "1800"}, body
        if incident.kind == "502":
            return 502, {"Content-Type": "text/html"}, b"<html><body>502 Bad Gateway</body></html>"
        time.sleep(self.timeout + 0.5)  # the caller has given up by now
        return 504, {"Content-Type": "text/html"}, b"<html><body>504 Gateway Timeout</body></html>"

    def charged(self) -> int:
        """Credits the account was charged."""
        with self.lock:
            return sum(credits for *_, credits in self.log)
