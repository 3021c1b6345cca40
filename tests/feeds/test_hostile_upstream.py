"""Hostile upstream answers driven through a real sync: a local Odds API server answering a
malformed event, an absurd price or line, JSON nested too deep, an extreme ``Retry-After`` or
credits header, beside a local football-data server on a good day. Each time the sync returns
normally, football-data's part lands, the rest of the Odds API answer lands, and what was refused
is listed with its reason, never priced."""

import copy
import json
import math
import random
from datetime import timedelta

import pytest

from models import Match, OddsQuote, SourceState, Team, TeamAlias
from services.feeds.formats import bounds, footballdata, oddsapi
from services.feeds.sources import http
from services.operations import jobs
from tests import factories, sync_world
from tests.data import needs_football_data
from tests.source_servers import FootballDataServer, OddsApiServer, http_date, odds_api_event

pytestmark = needs_football_data

KEY = "k" * 32

#: A bookmaker only The Odds API quotes here: its quotes stored say the good events landed.
EXTRA = "marathonbet"

#: The bookmaker the hostile markets are quoted under: none of its prices may be stored.
HOSTILE = "betsson"


class _NoWait:
    def __call__(self, seconds):
        pass


def _good_events(files) -> list[dict]:
    """The fixture list as Odds API events, each with an extra bookmaker's own prices."""
    parsed = footballdata.parse(files[sync_world.FIXTURES].decode())
    events = [odds_api_event(match) for match in parsed.matches]
    for event in events:
        pinnacle = next(book for book in event["bookmakers"] if book["key"] == "pinnacle")
        extra = copy.deepcopy(pinnacle) | {"key": EXTRA, "title": EXTRA}
        for market in extra["markets"]:
            for outcome in market["outcomes"]:
                outcome["price"] = round(outcome["price"] * 1.02, 2)
        event["bookmakers"].append(extra)
    return events


def _hostile_book(event, *markets) -> dict:
    """A copy of ``event`` quoted only by HOSTILE with ``markets``."""
    hostile = copy.deepcopy(event) | {"id": "hostile"}
    hostile["bookmakers"] = [{"key": HOSTILE, "title": HOSTILE, "markets": list(markets)}]
    return hostile


def _h2h(event, home, draw, away, name=None) -> dict:
    names = [name or event["home_team"], "Draw", event["away_team"]]
    prices = [home, draw, away]
    return {
        "key": "h2h",
        "outcomes": [{"name": n, "price": p} for n, p in zip(names, prices, strict=True)],
    }


def _with(event, **fields) -> dict:
    return copy.deepcopy(event) | {"id": "hostile", **fields}


def _spreads(event, point):
    return {
        "key": "spreads",
        "outcomes": [
            {"name": event["home_team"], "price": 1.9, "point": point},
            {"name": event["away_team"], "price": 1.95, "point": -point},
        ],
    }


def _totals(point, over=1.9, under=1.95):
    return {
        "key": "totals",
        "outcomes": [
            {"name": "Over", "price": over, "point": point},
            {"name": "Under", "price": under, "point": point},
        ],
    }


def _book_with(event, **fields) -> dict:
    """A copy of ``event`` whose one bookmaker (HOSTILE) has ``fields`` set."""
    hostile = _hostile_book(event, _h2h(event, 2.0, 3.4, 3.9))
    hostile["bookmakers"][0] |= fields
    return hostile


# (case, how the odds answer is made hostile, what a refused row's reason says): each of these
# failed on the code before services.feeds.formats.bounds (a crash of the whole sync, or a silent
# drop, or the absurd price stored).
EVENT_CASES = [
    ("bookmakers-a-number", lambda e: _with(e, bookmakers=5), "bookmakers is a number"),
    ("bookmakers-a-boolean", lambda e: _with(e, bookmakers=True), "bookmakers is a boolean"),
    (
        "bookmakers-an-object",
        lambda e: _with(e, bookmakers={"key": HOSTILE}),
        "bookmakers is an object",
    ),
    (
        "outcome-name-an-object",
        lambda e: _hostile_book(e, _h2h(e, 2.0, 3.4, 3.9, name={"en": "x"})),
        "name is an object",
    ),
    (
        "outcome-name-a-list",
        lambda e: _hostile_book(e, _h2h(e, 2.0, 3.4, 3.9, name=["x"])),
        "name is a list",
    ),
    ("markets-a-number", lambda e: _book_with(e, markets=7), "markets is a number"),
    ("bookmaker-key-an-object", lambda e: _book_with(e, key={"k": 1}), "key is an object"),
    (
        "price-a-string",
        lambda e: _hostile_book(e, _h2h(e, "2.0", 3.4, 3.9)),
        "price '2.0' is not a number",
    ),
    (
        "price-a-boolean",
        lambda e: _hostile_book(e, _h2h(e, True, 3.4, 3.9)),
        "price True is not a number",
    ),
    (
        "price-nan",
        lambda e: _hostile_book(e, _h2h(e, math.nan, 3.4, 3.9)),
        "price nan is outside",
    ),
    (
        "price-huge",
        lambda e: _hostile_book(e, _h2h(e, 1e300, 3.4, 3.9)),
        "price 1e+300 is outside",
    ),
    (
        "the-probes-sharp-line",
        lambda e: _hostile_book(e, _h2h(e, 1.0000001, 1000, 1000)),
        "price 1.0000001 is outside [1.01, 1000]",
    ),
    (
        "overround-below-one",
        lambda e: _hostile_book(e, _h2h(e, 10.0, 10.0, 10.0)),
        "overround 0.3000 is outside [0.97, 1.5]",
    ),
    (
        "overround-too-high",
        lambda e: _hostile_book(e, _h2h(e, 1.2, 1.2, 1.2)),
        "overround 2.5000 is outside",
    ),
    (
        "handicap-beyond-ten",
        lambda e: _hostile_book(e, _spreads(e, 15.0)),
        "handicap 15 is beyond ±10",
    ),
    ("total-beyond-ten-and-a-half", lambda e: _hostile_book(e, _totals(15.5)), "total 15.5"),
    (
        "commence-time-year-one",
        lambda e: _with(e, commence_time="0001-01-01T00:00:00Z"),
        "commence_time '0001-01-01T00:00:00Z' is outside the dates taken",
    ),
    (
        "commence-time-garbage",
        lambda e: _with(e, commence_time="next saturday"),
        "commence_time 'next saturday' is not an ISO 8601 instant",
    ),
    ("event-a-string", lambda e: "hostile", "a string, not an event object"),
    ("event-null", lambda e: None, "null, not an event object"),
    ("team-name-too-long", lambda e: _with(e, home_team="N" * 500), "home_team is 500 characters"),
]


@pytest.fixture
def world(make_app):
    """Friday's football-data files and The Odds API's events for them, both servers up."""
    (friday, files), *_ = sync_world.week()
    with FootballDataServer() as football_data, OddsApiServer(credits=1000, key=KEY) as odds:
        for path, body in files.items():
            football_data.put(path, body, http_date(friday))
        odds.events["soccer_epl"] = _good_events(files)
        app = make_app(
            FOOTBALL_DATA_LEAGUES="E0",
            FOOTBALL_DATA_SEASONS="2324",
            FOOTBALL_DATA_URL=football_data.base,
            ODDS_API_URL=odds.base,
            ODDS_API_KEY=KEY,
            ODDS_API_SPORTS="soccer_epl:E0",
            ODDS_API_REGIONS="uk",
            # The market alone forecasts (no goal model fits): what is stored is the question.
            MODEL_MIN_LEAGUE_MATCHES=10**6,
        )
        yield app, odds, friday


def _sync(app, now) -> dict:
    """One sync of both sources as the Operations API runs it; it must return normally."""
    operation = jobs.data_sync(
        None, app.config, now=now, policy=http.Policy.from_settings(app.config, sleep=_NoWait())
    )
    assert operation["status"] == "succeeded", operation["error"]
    result = jobs.result(operation["id"], app.config, now)[1]
    return {report["source"]: report for report in result["sources"]}


def _football_data_landed(reports) -> None:
    assert reports["football-data"]["errors"] == []
    assert reports["football-data"]["matches_new"] == 293  # the season so far and the fixtures
    assert Match.select().where(Match.slug == "newcastle-vs-west-ham-2024-03-30").exists()


def _extra_quotes() -> int:
    return OddsQuote.select().where(OddsQuote.bookmaker == EXTRA).count()


#: The hostile events go in two answers, each within what a sync's result lists (20 rows).
HALVES = [EVENT_CASES[: len(EVENT_CASES) // 2], EVENT_CASES[len(EVENT_CASES) // 2 :]]


@pytest.mark.parametrize("cases", HALVES, ids=["first-half", "second-half"])
def test_hostile_events_are_refused_each_with_its_reason_and_the_rest_lands(world, cases):
    """Half the hostile cases at once, each an event of its own after the ten good ones: each
    is refused with its reason at its position, and everything else lands."""
    app, odds, friday = world
    events = odds.events["soccer_epl"]
    good = len(events)
    events.extend(make(events[0]) for _, make, _ in cases)
    with app.app_context():
        reports = _sync(app, friday)
        _football_data_landed(reports)
        report = reports["the-odds-api"]
        assert report["errors"] == []
        assert report["rejected"] == len(cases)
        reasons = {row["line"]: row["reason"] for row in report["rejected_rows"]}
        for position, (name, _, reason) in enumerate(cases, start=good + 1):
            assert reason in reasons.get(position, ""), (name, reasons)
        assert all(
            row["url"].endswith(
                "/v4/sports/soccer_epl/odds?regions=uk&markets=h2h%2Ctotals&oddsFormat=decimal"
            )
            for row in report["rejected_rows"]
        )
        # The ten good events' own prices landed; nothing of a hostile one is priced.
        assert _extra_quotes() == 10 * 5
        assert not OddsQuote.select().where(OddsQuote.bookmaker == HOSTILE).exists()
        assert not OddsQuote.select().where(OddsQuote.price > 61.0).exists()


def test_json_nested_too_deep_fails_that_answer_only(world):
    app, odds, friday = world
    odds.bodies["soccer_epl"] = b"[" * 100_000 + b"]" * 100_000
    with app.app_context():
        reports = _sync(app, friday)
        _football_data_landed(reports)
        (error,) = reports["the-odds-api"]["errors"]
        assert "nested too deep" in error
        assert reports["the-odds-api"]["credits_spent"] == 2  # charged all the same


def test_an_error_object_instead_of_a_list_fails_that_answer_only(world):
    app, odds, friday = world
    odds.bodies["soccer_epl"] = json.dumps({"message": "Unknown sport"}).encode()
    with app.app_context():
        reports = _sync(app, friday)
        _football_data_landed(reports)
        (error,) = reports["the-odds-api"]["errors"]
        assert "an object, not a list of events" in error


ODDS_PATH = "/v4/sports/soccer_epl/odds"


@pytest.mark.parametrize(
    ("retry_after", "paused"),
    [
        ("9" * 30, timedelta(hours=24)),  # a float's overflow before
        ("8640000000", timedelta(hours=24)),  # 100,000 days
        ("Fri, 31 Dec 9999 23:59:59 GMT", timedelta(hours=24)),
        ("3600", timedelta(hours=1)),  # within the cap: as asked
    ],
)
def test_an_extreme_retry_after_pauses_the_source_a_day_at_most(world, retry_after, paused):
    app, odds, friday = world
    odds.script[ODDS_PATH] = [(429, {"Retry-After": retry_after}, b"")]
    with app.app_context():
        reports = _sync(app, friday)
        _football_data_landed(reports)
        assert "HTTP 429" in reports["the-odds-api"]["errors"][0]
        state = SourceState.get(SourceState.source == "the-odds-api")
        assert state.backoff_until == friday + paused
        later = _sync(app, friday + paused)  # asked again once the pause is over
        # the prices of the matches still to kick off then: an in-play price is no quote
        upcoming = Match.select().where(Match.kickoff_at > friday + paused).count()
        assert later["the-odds-api"]["errors"] == [] and _extra_quotes() == upcoming * 5 > 0


@pytest.mark.parametrize("retry_after", ["-5", "soon", "1e400", "Fri, 31 Feb 2024 99:99:99 GMT"])
def test_a_retry_after_that_says_nothing_is_retried_with_backoff(world, retry_after):
    """(These held before too: the hostile table's companions.)"""
    app, odds, friday = world
    odds.script[ODDS_PATH] = [(429, {"Retry-After": retry_after}, b"")]
    with app.app_context():
        reports = _sync(app, friday)
        _football_data_landed(reports)
        assert reports["the-odds-api"]["errors"] == [] and _extra_quotes() == 10 * 5
        assert SourceState.get(SourceState.source == "the-odds-api").backoff_until is None


@pytest.mark.parametrize("header", ["x-requests-last", "x-requests-remaining", "x-requests-used"])
def test_a_credits_header_beyond_any_plan_is_no_count(world, header):
    app, odds, friday = world
    odds.headers[header] = str(10**20)
    with app.app_context():
        reports = _sync(app, friday)
        _football_data_landed(reports)
        report = reports["the-odds-api"]
        assert report["errors"] == [] and _extra_quotes() == 10 * 5
        assert report["credits_spent"] == 2  # the call's known cost
        state = SourceState.get(SourceState.source == "the-odds-api")
        assert state.credits_spent == 2
        assert header != "x-requests-remaining" or state.credits_remaining is None


# -- the parsers on random JSON: never an exception, every event either a match or refused --


def _random_json(rng: random.Random, depth: int = 0):
    """A random JSON value, biased towards the shapes an Odds API answer has."""
    scalars = [
        None, True, False, 0, -1, 1.0000001, 2.5, 1e300, math.nan, math.inf, -0.0, 10**30,
        "", "Draw", "Over", "Under", "2.5", "2024-03-30T12:30:00Z", "0001-01-01T00:00:00Z",
        "x" * 300, "\u202e", "Arsenal", "Chelsea",
    ]  # fmt: skip
    if depth > 4 or rng.random() < 0.35:
        return rng.choice(scalars)
    if rng.random() < 0.5:
        return [_random_json(rng, depth + 1) for _ in range(rng.randrange(4))]
    keys = [
        "id", "commence_time", "home_team", "away_team", "bookmakers", "key", "markets",
        "outcomes", "name", "price", "point", "completed", "scores", "score",
    ]  # fmt: skip
    return {rng.choice(keys): _random_json(rng, depth + 1) for _ in range(rng.randrange(6))}


def _mutated(rng: random.Random, value):
    """``value`` (a good event, deep-copied) with one node anywhere replaced by random JSON."""
    if isinstance(value, dict) and value and rng.random() < 0.7:
        key = rng.choice(list(value))
        value[key] = _mutated(rng, value[key])
        return value
    if isinstance(value, list) and value and rng.random() < 0.7:
        index = rng.randrange(len(value))
        value[index] = _mutated(rng, value[index])
        return value
    return _random_json(rng)


GOOD = {
    "id": "e1",
    "commence_time": "2024-03-30T12:30:00Z",
    "home_team": "Arsenal",
    "away_team": "Chelsea",
    "completed": True,
    "scores": [{"name": "Arsenal", "score": "2"}, {"name": "Chelsea", "score": 1}],
    "bookmakers": [
        {
            "key": "pinnacle",
            "markets": [
                {
                    "key": "h2h",
                    "outcomes": [
                        {"name": "Arsenal", "price": 1.9},
                        {"name": "Draw", "price": 3.6},
                        {"name": "Chelsea", "price": 4.4},
                    ],
                },
                {
                    "key": "spreads",
                    "outcomes": [
                        {"name": "Arsenal", "price": 1.95, "point": -0.5},
                        {"name": "Chelsea", "price": 1.95, "point": 0.5},
                    ],
                },
                {
                    "key": "totals",
                    "outcomes": [
                        {"name": "Over", "price": 1.8, "point": 2.5},
                        {"name": "Under", "price": 2.05, "point": 2.5},
                    ],
                },
            ],
        }
    ],
}


def test_the_parsers_never_raise_on_random_json():
    """Seeded: 4,000 answers of mutated and random events; each event is a match or refused,
    and every price taken is within services.feeds.formats.bounds."""
    rng = random.Random(37)
    for _ in range(2000):
        events = [
            _mutated(rng, copy.deepcopy(GOOD)) if rng.random() < 0.8 else _random_json(rng)
            for _ in range(rng.randrange(1, 5))
        ]
        payload = json.loads(json.dumps(events))  # as the wire gives it (NaN and all)
        for parse in (oddsapi.parse_odds, oddsapi.parse_scores):
            parsed = parse(payload, "E0")
            for row in parsed.rejected + parsed.refused:
                assert isinstance(row.line, int) and row.reason
            for match in parsed.matches:
                assert min((o.price for o in match.odds), default=2.0) >= 1.01
                assert max((o.price for o in match.odds), default=2.0) <= 1000
        assert len(oddsapi.parse_odds(payload, "E0").matches) + len(
            oddsapi.parse_odds(payload, "E0").rejected
        ) == len(payload)


def test_football_data_rows_never_raise_and_keep_to_the_bounds():
    """Seeded: 300 files of random cells under a real fixture header (prices, lines, dates,
    names, quotes and separators); a row is a match or refused, never an exception, and every
    price set kept after ``footballdata.screen`` is within services.feeds.formats.bounds."""
    header = [*sync_world.FIXTURE_COLUMNS, "AHh", "PAHH", "PAHA", "FTHG", "FTAG", "FTR"]
    cells = [
        "", "1.0000001", "1000", "1.01", "1.9", "3.6", "4.4", "0", "-2", "nan", "inf", "1e400",
        "2.5", "15", "-0.25", "0.3", "E0", "E9", "30/03/2024", "31/02/2024", "30/03/2124",
        "15:00", "25:61", "Arsenal", "Chelsea", "\u202eX", "x" * 200, '"', "a,b", "H", "D",
    ]  # fmt: skip
    rng = random.Random(37)
    for _ in range(300):
        rows = [",".join(header)]
        for _ in range(rng.randrange(1, 8)):
            row = {name: rng.choice(cells) for name in header}
            if rng.random() < 0.7:  # mostly a plausible row, so prices get read
                row |= {"Div": "E0", "Date": "30/03/2024", "HomeTeam": "Arsenal"}
                row |= {"AwayTeam": "Chelsea", "FTHG": "", "FTAG": "", "FTR": ""}
            rows.append(",".join(row[name] for name in header))
        parsed = footballdata.parse("\r\n".join(rows) + "\r\n", today=sync_world.FRIDAY.date())
        notes = footballdata.screen(parsed)
        for row in parsed.rejected + notes:
            assert isinstance(row.line, int) and row.reason
        for match in parsed.matches:
            kept, refused = bounds.screen(match.odds)
            assert kept == match.odds and refused == []


def test_a_poison_event_is_set_aside_once_and_costs_no_credit(world):
    """An event whose teams map to no team (no stored name, no alias) is held back, its names
    remembered once for an operator; the syncs after take the same answer as unchanged (set
    aside, not read again), at no credit beyond the call every sync makes anyway, and the rest
    of each answer lands."""
    app, odds, friday = world
    poison = _with(odds.events["soccer_epl"][0], home_team="Atlantis", away_team="Lemuria")
    odds.events["soccer_epl"].append(poison)
    with app.app_context():
        for minutes in (0, 10, 20):
            reports = _sync(app, friday + timedelta(minutes=minutes))
            report = reports["the-odds-api"]
            assert report["errors"] == [] and report["credits_spent"] == 2  # one odds call
            assert report["held_back"] == (1 if minutes == 0 else 0)
            assert report["unchanged"] == (0 if minutes == 0 else 1)
            aliases = TeamAlias.select().where(TeamAlias.name.in_(["Atlantis", "Lemuria"]))
            assert [(row.name, row.team_id) for row in aliases.order_by(TeamAlias.name)] == [
                ("Atlantis", None),
                ("Lemuria", None),
            ]
        assert not Team.select().where(Team.name.in_(["Atlantis", "Lemuria"])).exists()
        assert odds.used == 3 * 2 and _extra_quotes() == 10 * 5


def test_an_answer_cut_short_is_counted_as_charged_on_every_try(make_app):
    """The Odds API answers 200 and charges (its headers say so), then the body breaks off:
    nothing is stored, and each try's charge is counted all the same (the count ran behind
    what the API charged)."""
    (friday, files), *_ = sync_world.week()
    with OddsApiServer(credits=1000, key=KEY) as odds:
        odds.events["soccer_epl"] = _good_events(files)
        app = make_app(
            ODDS_API_URL=odds.base,
            ODDS_API_KEY=KEY,
            ODDS_API_SPORTS="soccer_epl:E0",
            ODDS_API_REGIONS="uk",
            SOURCE_RETRIES=1,
        )
        body = json.dumps(odds.events["soccer_epl"]).encode()
        charged = {"Content-Type": "application/json", "x-requests-last": "2"}
        odds.script[ODDS_PATH] = [(200, {**charged, "X-Cut-To": "100"}, body) for _ in range(2)]
        with app.app_context():
            factories.match("Newcastle", "West Ham", kickoff=friday + timedelta(hours=20))
            reports = _sync(app, friday)
            report = reports["the-odds-api"]
            assert report["errors"] and "cut short" in report["errors"][0]
            assert report["credits_spent"] == 4  # two tries, each charged 2
            state = SourceState.get(SourceState.source == "the-odds-api")
            assert state.credits_spent == 4
