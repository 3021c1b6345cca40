"""The premium lock against an outside attacker: what an anonymous or free caller can compute of
a locked pick from everything the service answers them, not only whether its own fields are null.

The world is the small one of tests/world.py, with one more fixture whose prices arrive by an
import and whose pick, rated A, is made by the prediction run that follows (its published
probabilities are the market's own, as they are wherever the goal model carries no weight). The
attacker reads every public answer and page: equal values in any spelling, the argmax of
probability x price over whatever per-selection numbers show, and the Dixon-Coles score grid
from whatever goal figures show. A Pro caller reading the same answers gives the pick away to
the same attacker, so each test can fail.
"""

import json
import re
from datetime import timedelta

import numpy as np
import pytest
from scipy.optimize import brentq

from app import create_app
from engine.markets import MARKETS
from engine.model import scores
from engine.records import LeagueRecord, MatchRecord, OddsRecord
from models import Match, Pick
from models.schema import create_tables, drop_tables
from services.feeds import imports
from services.forecasting import predictions
from services.market.names import selection_name
from services.record import signed_log
from store.database import db
from tests import factories, helpers, world
from tests.helpers import UNLIMITED
from web.extensions import limiter

NOW = world.T0
#: Every pick the prediction run makes is rated A, so the new fixture's pick is locked.
EVERY_PICK_A = {"RATING_A_GROWTH": 0.0, "RATING_A_QUALITY": 0.0}
KICKOFF = NOW + timedelta(days=1, hours=3)
HOME, AWAY = "United", "Athletic"
#: The new fixture's quotes: the sharp line, and a soft bookmaker's generous away price.
QUOTES = (
    ("pinnacle", "1x2", "home", 2.41),
    ("pinnacle", "1x2", "draw", 3.31),
    ("pinnacle", "1x2", "away", 3.13),
    ("bet365", "1x2", "home", 2.29),
    ("bet365", "1x2", "draw", 3.23),
    ("bet365", "1x2", "away", 3.87),
    ("pinnacle", "ou25", "over", 1.93),
    ("pinnacle", "ou25", "under", 1.92),
    ("pinnacle", "btts", "yes", 1.83),
    ("pinnacle", "btts", "no", 1.97),
)
PUBLIC_KINDS = ("anonymous", "free")


def import_fixture() -> Match:
    """The new fixture and its prices, imported at NOW (no prediction yet)."""
    record = MatchRecord(
        league=LeagueRecord("TST", "Test League", "Testland", "top-flight"),
        season="2026-27",
        kickoff_at=KICKOFF,
        home_team=HOME,
        away_team=AWAY,
        status="scheduled",
        home_goals=None,
        away_goals=None,
        odds=[OddsRecord(*quote, False) for quote in QUOTES],
    )
    with db.atomic():
        imports.store_records([record], now=NOW)
    return Match.get(Match.slug == Match.slug_for(HOME, AWAY, KICKOFF))


def predict(match: Match) -> Pick:
    """The prediction run over the fixture: its pick, rated A."""
    # The test league's few results: seen, with no minimum of them (MODEL_MIN_LEAGUE_MATCHES).
    settings = {**factories.settings(), "MODEL_MIN_LEAGUE_MATCHES": 0}
    predictions.refresh(predictions.check_open(match.id), settings, now=NOW)
    (pick,) = Pick.select().where(Pick.match == match)
    assert pick.rating == "A" and pick.is_live
    return pick


# The attacker


NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(\s*%)?")


def spelled_numbers(text: str) -> list[tuple[float, int, bool]]:
    """Every number written in ``text``: ``(value, decimals, as a percentage)``."""
    found = []
    for digits, percent in NUMBER.findall(text):
        decimals = len(digits.split(".")[1]) if "." in digits else 0
        found.append((float(digits), decimals, bool(percent)))
    return found


def gives_back(spelled: tuple[float, int, bool], value: float) -> bool:
    """Whether a number as written is ``value`` rounded as it is written (with at least two
    significant digits: a lone "0" or "1" tells nothing)."""
    number, decimals, percent = spelled
    target = value * 100 if percent else value
    significant = len(f"{number:.{decimals}f}".replace(".", "").lstrip("0"))
    return significant >= 2 and round(target, decimals) == round(number, decimals)


def concerning(answer, match: Match) -> list:
    """The parts of a JSON answer about ``match``: each object that is the match, holds it, or
    names it by id."""
    found = []

    def is_match(value):
        return isinstance(value, dict) and value.get("id") == match.id and "slug" in value

    def walk(value):
        if isinstance(value, dict):
            if (
                is_match(value)
                or any(is_match(item) for item in value.values())
                or value.get("matchId") == match.id
            ):
                found.append(value)
                return
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(answer)
    return found


def html_concerning(text: str, match: Match) -> list[str]:
    """The parts of a page about ``match``: its own page whole, else the table rows, sitemap
    entries or paragraphs that link to it."""
    if f"<h1>{HOME} vs {AWAY}</h1>" in text and match.kickoff_at.strftime("%-d %B %Y") in text:
        return [text]
    chunks = re.split(r"(?=<tr|<url>|<p|<li)", text)
    return [chunk for chunk in chunks if match.slug in chunk]


def calendar(text: str) -> bool:
    """Whether ``text`` is an iCalendar answer."""
    return text.startswith("BEGIN:VCALENDAR")


def calendar_concerning(text: str, match: Match) -> list[str]:
    """The event of ``match`` in a calendar, its lines unfolded and its text unescaped."""
    unfolded = text.replace("\r\n ", "")
    for escaped, plain in (("\\n", "\n"), ("\\,", ","), ("\\;", ";"), ("\\\\", "\\")):
        unfolded = unfolded.replace(escaped, plain)
    return [event for event in unfolded.split("BEGIN:VEVENT") if f"UID:match-{match.id}@" in event]


def vectors(part, selections) -> list[np.ndarray]:
    """Every per-selection set of numbers in a JSON part: ``{selection: number}`` objects, and
    each numeric field of a list of ``{"selection": ...}`` objects covering the market."""
    found = []

    def walk(value):
        if isinstance(value, dict):
            if set(selections) <= set(value) and all(
                isinstance(value[name], int | float) and not isinstance(value[name], bool)
                for name in selections
            ):
                found.append(np.array([value[name] for name in selections], dtype=float))
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            rows = {item.get("selection"): item for item in value if isinstance(item, dict)}
            if set(selections) <= set(rows):
                fields = set.intersection(*(set(rows[name]) for name in selections))
                for field in sorted(fields):
                    column = [rows[name][field] for name in selections]
                    if all(isinstance(x, int | float) and not isinstance(x, bool) for x in column):
                        found.append(np.array(column, dtype=float))
            for item in value:
                walk(item)

    walk(part)
    return found


def html_vectors(text: str, names) -> list[np.ndarray]:
    """The per-selection numbers of a page's tables: for the rows headed by each selection's
    name, each column of percentages or prices they share."""
    rows = []
    for name in names:
        row = re.search(rf'<th scope="row">{re.escape(name)}</th>(.*?)</tr>', text, re.S)
        if row is None:
            return []
        rows.append(
            [n / 100 if pct else n for n, _, pct in spelled_numbers(re.sub("<[^>]+>", " ", row[1]))]
        )
    width = min(len(row) for row in rows)
    return [np.array([row[k] for row in rows], dtype=float) for k in range(width)]


def grids(part) -> list[np.ndarray]:
    """The 1x2 of the Dixon-Coles score grid from every pair of expected goals in a JSON part,
    with ρ solved from a visible BTTS probability (0 without one)."""
    found = []
    btts = [
        value["yes"]
        for value in _objects(part)
        if isinstance(value.get("yes"), float) and isinstance(value.get("no"), float)
    ]
    for value in _objects(part):
        goals = value.get("expectedGoals")
        if isinstance(goals, dict) and isinstance(goals.get("home"), float):
            for rho in [*(solve_rho(goals, p) for p in btts), 0.0]:
                grid = scores.score_matrix(
                    np.array([goals["home"]]), np.array([goals["away"]]), rho
                )
                found.append(np.asarray(scores.market_probabilities(grid)["1x2"])[0])
    return found


def solve_rho(goals: dict, btts_yes: float) -> float:
    """The Dixon-Coles ρ under which the grid of ``goals`` gives ``btts_yes``."""

    def gap(rho):
        grid = scores.score_matrix(np.array([goals["home"]]), np.array([goals["away"]]), rho)
        return np.asarray(scores.market_probabilities(grid)["btts"])[0][0] - btts_yes

    try:
        return brentq(gap, -0.2, 0.2)
    except ValueError:
        return 0.0


def _objects(value):
    """Every JSON object in ``value``."""
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from _objects(item)
    elif isinstance(value, list):
        for item in value:
            yield from _objects(item)


def leaks(answers: dict, pick: Pick, match: Match) -> list[str]:
    """How each answer gives ``pick`` back (empty when none does)."""
    selections = MARKETS[pick.market]
    names = [selection_name(name, HOME, AWAY) for name in selections]
    secrets = {"odds": pick.odds, "probability": pick.probability, "edge": pick.edge}
    found = []
    for where, answer in answers.items():
        if isinstance(answer, str):
            parts = (calendar_concerning if calendar(answer) else html_concerning)(answer, match)
            texts = parts
            candidates = [v for part in parts for v in html_vectors(part, names)]
            for part in parts:
                if f"{selection_name(pick.selection, HOME, AWAY)} at " in part:
                    found.append(f"{where}: the selection in words")
        else:
            parts = concerning(answer, match)
            texts = [json.dumps(part) for part in parts]
            candidates = [v for part in parts for v in (*vectors(part, selections), *grids(part))]
            for value in _objects(parts):
                if value.get("id") == pick.id and value.get("selection") == pick.selection:
                    found.append(f"{where}: the selection")
        for text in texts:
            for spelled in spelled_numbers(text):
                for name, value in secrets.items():
                    if gives_back(spelled, value):
                        found.append(f"{where}: the {name} as {spelled}")
        shares = [v for v in candidates if np.all((v >= 0) & (v <= 1)) and abs(v.sum() - 1) < 0.02]
        prices = [v for v in candidates if np.all(v > 1)]
        target = selections.index(pick.selection)
        for p in shares:
            if abs(p[target] - pick.probability) < 0.005:
                found.append(f"{where}: the probability in a forecast")
            for price in prices:
                if int(np.argmax(p * price)) == target:
                    found.append(f"{where}: argmax of probability x price")
    return found


# The crawl


@pytest.fixture(scope="module")
def hostile(tmp_path_factory, schema_template):
    """The world of tests/world.py at NOW, the new fixture imported and predicted (its pick
    rated A and locked), one signed-in user of each kind."""
    folder = tmp_path_factory.mktemp("lock")
    if schema_template is not None:
        helpers.copy_sqlite(schema_template, folder / "test.db")
    app = create_app(helpers.settings(folder, CLOCK=lambda: NOW, **UNLIMITED, **EVERY_PICK_A))
    limiter.reset()
    with app.app_context():
        if schema_template is None:
            drop_tables()
            create_tables()
        world.build(NOW)
        app.match = import_fixture()
        app.pick = predict(app.match)
        app.people = {kind: headers for kind, (_, headers) in factories.people().items()}
        app.people["anonymous"] = {}
        yield app
    if not db.is_closed():
        db.close()


#: Realistic values of the public endpoints' query parameters (each tried in turn).
def parameter_values(match: Match) -> dict:
    day = match.kickoff_at.date().isoformat()
    return {
        "date": [day],
        "matchId": [str(match.id)],
        "market": list(MARKETS),
        "scope": ["league", "teams", "global"],
        "isLive": ["true", "false"],
        "leagueId": [str(match.league_id)],
        "teamId": [str(match.home_team_id)],
        "rating": ["A"],
        "from": [day],
        "to": [day],
        "index": ["0"],
    }


def crawl(client, headers, match: Match) -> dict:
    """Every GET the OpenAPI description lists, with realistic parameters, as JSON and as a
    page, the pages it does not list, and a backtest when signed in: request → answer."""
    spec = client.get("/openapi.json").get_json()
    values = parameter_values(match)
    paths = set()
    for path, operations in spec["paths"].items():
        if "get" not in operations:
            continue
        parameters = [*operations.get("parameters", []), *operations["get"].get("parameters", [])]
        filled = path.replace("{id}", str(match.id)).replace("{slug}", match.slug)
        filled = filled.replace("{match_id}", str(match.id)).replace("{name}", "not-found")
        filled = filled.replace("{day}", match.kickoff_at.date().isoformat())
        filled = filled.replace("{code}", match.league.code)
        if "{" in filled:
            continue  # an operation, webhook or delivery id: not public
        query = [p["name"] for p in parameters if p["in"] == "query"]
        required = {
            p["name"]: values[p["name"]][0]
            for p in parameters
            if p["in"] == "query" and p.get("required") and p["name"] in values
        }
        base = "&".join(f"{k}={v}" for k, v in required.items())
        paths.add(f"{filled}?{base}" if base else filled)
        for name in query:
            for value in values.get(name, []):
                extra = {**required, name: value}
                if "date" in query and name != "date":
                    extra.setdefault("date", values["date"][0])
                paths.add(f"{filled}?" + "&".join(f"{k}={v}" for k, v in extra.items()))
    found = {}
    for path in sorted(paths):
        response = client.get(path, headers=headers)
        if response.status_code == 200 and response.is_json:
            found[path] = response.get_json()
        elif response.status_code == 200 and response.mimetype == "text/calendar":
            found[path] = response.get_data(as_text=True)
        page = client.get(path, headers={**headers, "Accept": "text/html"})
        if page.status_code == 200 and page.mimetype == "text/html":
            found[f"html {path}"] = page.get_data(as_text=True)
    for path in ("/", "/track-record", "/sitemap.xml", "/robots.txt"):
        page = client.get(path, headers={**headers, "Accept": "text/html"})
        assert page.status_code == 200, path
        found[f"page {path}"] = page.get_data(as_text=True)
    if headers:
        day = match.kickoff_at.date().isoformat()
        for body in ({}, {"dateFrom": day, "dateTo": day}, {"rating": "A"}):
            response = client.post("/api/backtest/run", json=body, headers=headers)
            assert response.status_code == 200, response.get_json()
            found[f"backtest {body}"] = response.get_json()
    return found


def test_no_public_answer_or_page_lets_anyone_compute_a_locked_pick(hostile):
    """The hostile crawl: nothing an anonymous or free caller reads gives the locked pick's
    selection, odds, probability or edge back; the same attacker reading a Pro caller's answers
    finds all of it."""
    client = hostile.test_client()
    match, pick = hostile.match, hostile.pick
    for kind in PUBLIC_KINDS:
        answers = crawl(client, hostile.people[kind], match)
        card = answers[f"/api/matches/{match.id}"]
        assert card["picks"][0]["locked"] and card["picks"][0]["rating"] == "A"
        assert {f"/api/explorer/slate?date={KICKOFF.date()}", "page /"} <= set(answers)
        calendar_path = f"/api/calendars/leagues/{match.league.code}.ics"
        assert calendar_concerning(answers[calendar_path], match), "the match's event"
        assert len(answers) > 35, sorted(answers)
        assert leaks(answers, pick, match) == [], kind

    pro = leaks(crawl(client, hostile.people["pro"], match), pick, match)
    assert any("the odds" in leak for leak in pro)
    # The calendar is read as closely: a Pro reader's names the selection and its price.
    calendar_leaks = [leak for leak in pro if leak.startswith(f"{calendar_path}:")]
    assert any("the selection in words" in leak for leak in calendar_leaks), calendar_leaks
    assert any("the odds" in leak for leak in calendar_leaks), calendar_leaks
    assert any("the probability" in leak for leak in pro)
    assert any("argmax" in leak for leak in pro)
    assert any("the selection" in leak for leak in pro)


def test_the_market_probabilities_do_not_give_a_locked_pick_back(hostile):
    """Where the published probabilities are the market's own (source `market`), the market's
    de-margined line is the pick's probability: shown to Pro callers, withheld from the others
    wherever the match appears, and so are the goal model's own probabilities shown beside
    them."""
    client = hostile.test_client()
    match, pick = hostile.match, hostile.pick
    path = f"/api/matches/{match.id}"
    pro = helpers.ok(client.get(path, headers=hostile.people["pro"]))
    (shown,) = [p for p in pro["predictions"] if p["market"] == pick.market]
    assert shown["source"] == "market"
    assert shown["marketProbabilities"][pick.selection] == pytest.approx(pick.probability)
    assert set(shown["modelProbabilities"]) == set(MARKETS[pick.market])  # the goal model's
    day = KICKOFF.date().isoformat()
    for kind in PUBLIC_KINDS:
        headers = hostile.people[kind]
        card = helpers.ok(client.get(path, headers=headers))
        slate = helpers.ok(client.get(f"/api/explorer/slate?date={day}", headers=headers))
        (item,) = [item for item in slate["items"] if item["match"]["id"] == match.id]
        seo = helpers.ok(client.get(f"/api/v1/seo/predictions/{match.slug}", headers=headers))
        for prediction in [*card["predictions"], item["prediction"], seo["prediction"]]:
            # The goal model's numbers, made with the pick, are withheld in every market (its
            # expected goals carry one market's to another's); the pick's own market withholds
            # the market's line too, another market shows its own.
            assert prediction["modelProbabilities"] is None
            if prediction["market"] == pick.market:
                assert prediction["marketProbabilities"] is None
                assert prediction["probabilities"] is None
            else:
                assert prediction["marketProbabilities"] is not None
            assert prediction["source"] == "market"  # whose they are, not what they are
        for market in card["odds"]:
            for row in market["selections"]:
                sealed = market["market"] == pick.market
                assert (row["sharpPrice"] is None and row["bestPrice"] is None) == sealed
        page = client.get(
            f"/api/v1/seo/predictions/{match.slug}", headers={**headers, "Accept": "text/html"}
        ).get_data(as_text=True)
        assert html_vectors(page, [f"{HOME} win", "Draw", f"{AWAY} win"]) == []
        assert "Goal model" in page  # the goal model's column, withheld like the market's


def test_expected_goals_and_btts_do_not_give_the_goal_models_1x2_back(hostile):
    """The Dixon-Coles score grid from the expected goals, its ρ solved from the BTTS
    probability, is the goal model's 1x2: it works on what a Pro caller reads, and anonymous and
    free callers read none of it (nor the strengths)."""
    client = hostile.test_client()
    match = hostile.match
    path = f"/api/matches/{match.id}"
    model = helpers.ok(client.get(path, headers=hostile.people["pro"]))["intelligence"]["model"]
    assert model["expectedGoals"] is not None
    rho = solve_rho(model["expectedGoals"], model["probabilities"]["btts"]["yes"])
    goals = model["expectedGoals"]
    grid = scores.score_matrix(np.array([goals["home"]]), np.array([goals["away"]]), rho)
    rebuilt = np.asarray(scores.market_probabilities(grid)["1x2"])[0]
    expected = [model["probabilities"]["1x2"][name] for name in MARKETS["1x2"]]
    assert rebuilt == pytest.approx(expected, abs=1e-6)
    for kind in PUBLIC_KINDS:
        card = helpers.ok(client.get(path, headers=hostile.people[kind]))
        model = card["intelligence"]["model"]
        assert model["expectedGoals"] is None and model["strengths"] is None
        assert set(model["probabilities"].values()) == {None}
        ratings = model.get("marketRatings")
        if ratings:
            assert ratings["expectedGoals"] is None
            assert set(ratings["probabilities"].values()) == {None}
        assert grids(card) == []


# The window between prices and picks


def test_prices_reach_the_public_only_with_the_picks_they_make(make_app):
    """Polled between an import and the prediction run, no public answer shows a price of the
    new quotes; after the run the match has a pick rated A and shows none of its market's (the
    other markets' prices are public with the prediction that made their picks; a Pro caller
    sees them all, from the same prediction)."""
    app = make_app(CLOCK=lambda: NOW, **UNLIMITED, **EVERY_PICK_A)
    with app.app_context():
        world.build(NOW)
        people = {kind: headers for kind, (_, headers) in factories.people().items()}
        match = import_fixture()
    people["anonymous"] = {}
    client = app.test_client()
    prices = sorted({quote[3] for quote in QUOTES})

    def shown(kind) -> list:
        answers = crawl(client, people[kind], match)
        return [
            (where, price)
            for where, answer in answers.items()
            for text in (
                (calendar_concerning if calendar(answer) else html_concerning)(answer, match)
                if isinstance(answer, str)
                else [json.dumps(part) for part in concerning(answer, match)]
            )
            for spelled in spelled_numbers(text)
            for price in prices
            if gives_back(spelled, price)
        ]

    for kind in ("anonymous", "free", "pro"):  # no prediction yet: nobody sees a price
        assert shown(kind) == [], kind
    with app.app_context():
        sealed = {quote[3] for quote in QUOTES if quote[1] == predict(match).market}
    for kind in PUBLIC_KINDS:
        assert [found for found in shown(kind) if found[1] in sealed] == [], kind
    assert {price for _, price in shown("pro")} >= {3.87, 3.13}


# Once public, public for good


def test_a_pick_public_from_kick_off_stays_public_when_its_match_is_postponed(make_app):
    """A pick whose match has kicked off is public; an import that then postpones the match
    (a later kick-off) does not lock it again, on the card nor in the ledger, while a pick made
    after the move, for the new kick-off, is locked until then. A postponement that comes
    before the kick-off keeps its pick locked."""
    clock = factories.Clock(NOW)
    app = make_app(CLOCK=clock)
    league = LeagueRecord("TST", "Test League", "Testland", "top-flight")

    def fixture(home, away, kickoff):
        return MatchRecord(
            league=league,
            season="2026-27",
            kickoff_at=kickoff,
            home_team=home,
            away_team=away,
            status="scheduled",
            home_goals=None,
            away_goals=None,
            odds=[],
        )

    started = NOW - timedelta(hours=1)
    coming = NOW + timedelta(hours=1)
    published_at = NOW - timedelta(days=1)
    with app.app_context():
        with db.atomic():
            imports.store_records(
                [fixture("Early", "Birds", started), fixture("Late", "Comers", coming)],
                now=published_at,
            )
        kicked_off = Match.get(Match.slug == Match.slug_for("Early", "Birds", started))
        waiting = Match.get(Match.slug == Match.slug_for("Late", "Comers", coming))
        made = {"rating": "A", "is_live": True, "created_at": published_at}
        picks = [
            factories.pick(kicked_off, "1x2", "away", 3.4, **made),
            factories.pick(waiting, "1x2", "home", 2.2, **made),
        ]
        signed_log.publish_new([pick.match_id for pick in picks], published_at, "test-1")
        signed_log.checkpoint(published_at, factories.settings())
    client = app.test_client()

    def shown(match):
        entries = helpers.ok(client.get("/api/track-record/ledger/entries"))["items"]
        found = {}
        for pick in helpers.ok(client.get(f"/api/matches/{match.id}"))["picks"]:
            for entry in entries:
                if json.loads(entry["entry"])["pickId"] == pick["id"]:
                    assert (entry["reveal"] is None) is pick["locked"]
            found[pick["market"]] = (pick["locked"], pick["selection"])
        return found

    assert shown(kicked_off) == {"1x2": (False, "away")}
    assert shown(waiting) == {"1x2": (True, None)}
    later = NOW + timedelta(days=3)
    with app.app_context(), db.atomic():
        summary = imports.store_records(
            [fixture("Early", "Birds", later), fixture("Late", "Comers", later)], now=NOW
        )
    assert summary.matches_updated == 2 and summary.matches_new == 0
    with app.app_context():
        assert Match.get_by_id(kicked_off.id).kickoff_at == later
    assert shown(kicked_off) == {"1x2": (False, "away")}
    assert shown(waiting) == {"1x2": (True, None)}
    clock.advance(hours=2)  # past the waiting match's first kick-off: it was never public
    assert shown(waiting) == {"1x2": (True, None)}
    with app.app_context():  # a pick for the new kick-off: locked until then, the old one not
        factories.pick(kicked_off, "ou25", "over", 1.9, rating="A", created_at=clock.now)
    assert shown(kicked_off) == {"1x2": (False, "away"), "ou25": (True, None)}
    clock.now = later
    assert shown(kicked_off) == {"1x2": (False, "away"), "ou25": (False, "over")}
