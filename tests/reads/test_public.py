"""The public endpoints on the demo world: picks of the day, match detail, explorer, track record,
backtest and prediction pages, as each kind of caller sees them. Built once for the module."""

from datetime import UTC, date, datetime

import numpy as np
import pytest

import schemas.spans
from engine.betting import metrics, picks
from enums import LINE_MARKETS, PICK_RATINGS
from models import League, Match, Pick, Prediction
from services.market import names
from tests import asserts, factories
from tests.helpers import NOW, UNLIMITED, ok

pytestmark = pytest.mark.slow  # the demo world: built once per run, copied per module

KINDS = ("anonymous", "free", "pro", "admin")
#: What a locked pick hides: what to back, at what price, why, and what gives the price back.
HIDDEN = ("selection", "odds", "bookmaker", "probability", "edge", "profit", "closingOdds", "clv")


@pytest.fixture(scope="module")
def world(demo_world):
    app = demo_world("public", **UNLIMITED)
    with app.app_context():
        app.people = {kind: headers for kind, (_, headers) in factories.people().items()}
    app.people["anonymous"] = {}
    with app.app_context():
        yield app


@pytest.fixture(scope="module")
def client(world):
    return world.test_client()


def get(client, world, path, kind="anonymous", **headers):
    """GET ``path`` as a caller of ``kind``; asserts nothing."""
    return client.get(path, headers={**world.people[kind], **headers})


def days_with_picks(live=None):
    """The UTC days that have picks, newest first."""
    query = Pick.select(Match.kickoff_at).join(Match)
    if live is not None:
        query = query.where(Pick.is_live == live)
    return sorted({kickoff.date() for (kickoff,) in query.tuples()}, reverse=True)


def a_pick_day(upcoming=True):
    """The day of the latest pick rated A (kicking off after NOW), or of the latest one whose
    match has kicked off."""
    kickoff = (
        Match.select(Match.kickoff_at)
        .join(Pick)
        .where(Pick.rating == "A")
        .where(Match.kickoff_at > NOW if upcoming else Match.kickoff_at <= NOW)
        .where(Pick.status == "pending" if upcoming else Pick.status.in_(("won", "lost")))
        .order_by(Match.kickoff_at.desc())
        .scalar()
    )
    return kickoff.date()


# Picks of the day


def test_picks_of_a_day_with_their_matches(client, world):
    day = days_with_picks(live=True)[0]
    body = ok(get(client, world, f"/api/picks/today?date={day}", "pro"))
    assert body["date"] == day.isoformat() and body["items"]
    stored = Pick.select().join(Match).where(Match.kickoff_at.between(*_day_bounds(day))).count()
    assert len(body["items"]) == stored
    for item in body["items"]:
        assert item["match"]["kickoffAt"].startswith(day.isoformat())
        assert set(item["match"]) >= {"id", "slug", "league", "homeTeam", "awayTeam", "score"}
        assert set(item["match"]["league"]) == {"id", "name", "country", "competitionType"}
    order = [(item["match"]["kickoffAt"], "ABC".index(item["rating"])) for item in body["items"]]
    assert order == sorted(order)


def _day_bounds(day):
    start = datetime(day.year, day.month, day.day, tzinfo=UTC)
    return start, datetime.fromordinal(day.toordinal() + 1).replace(tzinfo=UTC) - _SECOND


_SECOND = datetime(2000, 1, 1, 0, 0, 1) - datetime(2000, 1, 1)


def test_every_pick_has_its_edge_and_rating_by_the_rules(client, world):
    config = world.config
    seen = 0
    for day in days_with_picks():
        for pick in ok(get(client, world, f"/api/picks/today?date={day}", "pro"))["items"]:
            seen += 1
            # Both are written to 6 decimals, so their product is good to about 1e-5.
            assert pick["edge"] == pytest.approx(pick["probability"] * pick["odds"] - 1, abs=1e-5)
            assert pick["edge"] >= config["PICK_MIN_EDGE"] - 1e-12
            quality = pick["dataQuality"]
            kelly = picks.growth(pick["probability"], pick["odds"])
            if kelly >= config["RATING_A_GROWTH"] and quality >= config["RATING_A_QUALITY"]:
                expected = "A"
            elif kelly >= config["RATING_B_GROWTH"] and quality >= config["RATING_B_QUALITY"]:
                expected = "B"
            else:
                expected = "C"
            # The rating is the growth at the probability the rule trusts (engine.betting.trust):
            # a share of the edge at most 1, so never higher than the whole edge's growth (nor
            # for a line bet, which grows only on the share of its stake at risk).
            assert PICK_RATINGS.index(pick["rating"]) >= PICK_RATINGS.index(expected), pick
            if pick["market"] not in LINE_MARKETS:
                assert kelly >= config["PICK_MIN_GROWTH"] - 1e-12
            assert not pick["locked"]
    assert seen == Pick.select().count()


def test_rating_and_market_filters_take_comma_lists(client, world):
    day = a_pick_day(upcoming=False)
    everything = ok(get(client, world, f"/api/picks/today?date={day}", "pro"))["items"]
    some = ok(get(client, world, f"/api/picks/today?date={day}&rating=A,B&market=1x2,ou25", "pro"))
    expected = [
        pick["id"]
        for pick in everything
        if pick["rating"] in ("A", "B") and pick["market"] in ("1x2", "ou25")
    ]
    assert [pick["id"] for pick in some["items"]] == expected and expected


@pytest.mark.parametrize(
    ("query", "field", "allowed"),
    [
        ("date=2026-02-30", "date", "not a real date"),
        ("date=tomorrow", "date", "YYYY-MM-DD"),
        ("rating=D", "rating", "A, B, C"),
        ("rating=A,,B", "rating", "A, B, C"),
        ("market=1x2,corners", "market", "1x2, ou25, btts"),
    ],
)
def test_bad_picks_arguments_are_422s_naming_the_field(client, world, query, field, allowed):
    body = asserts.problem(get(client, world, f"/api/picks/today?{query}"), 422, "validation-error")
    assert list(body["errors"]) == [field] and allowed in body["errors"][field][0]


def test_an_empty_day_is_an_empty_list(client, world):
    assert ok(get(client, world, "/api/picks/today?date=1999-01-01")) == {
        "date": "1999-01-01",
        "items": [],
    }


def test_the_default_day_is_today_utc(client, world, monkeypatch):
    day = days_with_picks(live=True)[0]
    monkeypatch.setattr(
        schemas.spans, "now", lambda: datetime(day.year, day.month, day.day, 23, 59, tzinfo=UTC)
    )
    default = ok(get(client, world, "/api/picks/today"))
    assert default == ok(get(client, world, f"/api/picks/today?date={day}"))
    # A date-time names its UTC day.
    assert default == ok(get(client, world, f"/api/picks/today?date={day}T10:00:00%2B00:00"))


# The premium rule


@pytest.mark.parametrize("kind", KINDS)
def test_a_picks_are_locked_for_anonymous_and_free_callers_until_kick_off(client, world, kind):
    day = a_pick_day()
    items = ok(get(client, world, f"/api/picks/today?date={day}&rating=A", kind))["items"]
    match = ok(get(client, world, f"/api/matches/{items[0]['match']['id']}", kind))
    for pick in [*items, *(p for p in match["picks"] if p["rating"] == "A")]:
        locked = kind in ("anonymous", "free")
        assert pick["locked"] is locked
        assert all((pick[name] is None) is locked for name in HIDDEN[:5]), pick
        assert all(pick[name] is None for name in HIDDEN[5:])  # nothing settled yet
        assert pick["rating"] == "A" and pick["status"] == "pending"
    for pick in match["picks"]:  # the match is locked: its other picks with it
        assert pick["locked"] is (kind in ("anonymous", "free"))
        assert (pick["selection"] is None) is pick["locked"]


@pytest.mark.parametrize("kind", KINDS)
def test_from_kick_off_every_pick_is_public_in_full(client, world, kind):
    day = a_pick_day(upcoming=False)
    items = ok(get(client, world, f"/api/picks/today?date={day}&rating=A", kind))["items"]
    assert items
    for pick in items:
        assert not pick["locked"] and all(pick[name] is not None for name in HIDDEN[:5])
        assert pick["status"] in ("won", "lost")


@pytest.mark.parametrize("kind", KINDS)
def test_the_slate_never_shows_the_prices_behind_a_locked_pick(client, world, kind):
    pick = (  # of a market the slate shows: one without a line
        Pick.select(Pick, Match)
        .join(Match)
        .where((Pick.rating == "A") & (Match.kickoff_at > NOW) & Pick.market.not_in(LINE_MARKETS))
        .order_by(Match.kickoff_at.desc(), Pick.id)
        .first()
    )
    day = pick.match.kickoff_at.date()
    path = f"/api/explorer/slate?date={day}&market={pick.market}"
    items = ok(get(client, world, path, kind))["items"]
    (item,) = [item for item in items if item["match"]["id"] == pick.match_id]
    locked = kind in ("anonymous", "free")
    assert item["pick"]["locked"] is locked
    assert (item["prediction"]["probabilities"] is None) is locked
    assert (item["prediction"]["marketProbabilities"] is None) is locked  # the sharp line too
    for row in item["selections"]:
        hidden = ("probability", "bestPrice", "bookmaker", "edge")
        assert all((row[name] is None) is locked for name in hidden)
    if not locked:
        best = max(item["selections"], key=lambda row: row["edge"])
        assert (best["selection"], best["bestPrice"]) == (pick.selection, pick.odds)


@pytest.mark.parametrize("kind", KINDS)
def test_a_sealed_match_withholds_the_lines_it_quotes(client, world, kind):
    """A locked pick's line is one of the lines its match quotes (in the demo world the only
    one): a locked match shows the locked pick's market once, its line withheld, in its card and
    on its page (another market with lines, without a locked pick, keeps its lines)."""
    pick = (
        Pick.select(Pick, Match)
        .join(Match)
        .where((Pick.rating == "A") & (Match.kickoff_at > NOW) & Pick.market.in_(LINE_MARKETS))
        .order_by(Match.kickoff_at, Pick.id)
        .first()
    )
    locked = kind in ("anonymous", "free")
    card = ok(get(client, world, f"/api/matches/{pick.match_id}", kind))
    for part in ("odds", "predictions"):
        shown = [(row["market"], row["line"]) for row in card[part]]
        with_lines = [(market, line) for market, line in shown if market in LINE_MARKETS]
        if locked:
            assert [line for market, line in with_lines if market == pick.market] == [None]
        else:
            assert (pick.market, pick.line) in with_lines
    assert {row["bookmakers"] for row in card["odds"] if row["market"] == pick.market} != {0}
    slug = pick.match.slug
    page = get(client, world, f"/api/v1/seo/predictions/{slug}", kind, Accept="text/html")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert (names.market_name(pick.market, pick.line) in html) is not locked
    assert (names.MARKET_NAMES[pick.market] in html) is True


def test_a_suspended_account_reads_public_pages_as_anonymous(client, world):
    day = a_pick_day()
    body = ok(get(client, world, f"/api/picks/today?date={day}&rating=A", "suspended"))
    assert all(pick["locked"] for pick in body["items"])


def test_an_invalid_token_on_a_public_endpoint_is_a_401(client, world):
    asserts.unauthorized(
        client.get("/api/picks/today", headers=factories.bearer("not-a-token")),
        invalid_token=True,
    )


# Match detail


def test_a_match_in_full(client, world):
    match = Match.select().join(Pick).where(Pick.rating == "B").order_by(Match.id).first()
    body = ok(get(client, world, f"/api/matches/{match.id}", "pro"))
    assert (body["id"], body["slug"], body["status"]) == (match.id, match.slug, match.status)
    assert body["score"] == {"home": match.home_goals, "away": match.away_goals}
    markets = [market["market"] for market in body["odds"]]
    # The demo world quotes Asian handicap and over/under at one line a match.
    assert markets == ["1x2", "ou25", "btts", "ah", "ou"]
    for market in body["odds"]:
        for selection in market["selections"]:
            assert selection["bestPrice"] >= 1.0 and selection["bestBookmaker"] != "market-average"
            assert selection["closingPrice"] and selection["sharpPrice"]
    assert [prediction["market"] for prediction in body["predictions"]] == markets
    for prediction in body["predictions"]:
        assert sum(prediction["probabilities"].values()) == pytest.approx(1, abs=1e-5)
        assert prediction["fittedAt"] <= body["kickoffAt"]
        assert set(prediction["dataQualityParts"]) == {"history", "bookmakers", "sharpLine"}
        assert prediction["modelName"] and prediction["modelVersion"]
    sources = {prediction["source"] for prediction in body["predictions"]}
    assert sources <= {"market", "pool", "market-ratings", "dixon-coles"} and sources
    intelligence = body["intelligence"]
    assert set(intelligence) == {"home", "away", "headToHead", "model", "updatedAt"}
    model = intelligence["model"]
    # Dixon-Coles' own, for the markets without a line (its lines are the predictions').
    fixed = [market for market in markets if market not in LINE_MARKETS]
    assert set(model["probabilities"]) == set(fixed)
    ratings = model["marketRatings"]  # beside the market-implied ratings'
    assert set(ratings["probabilities"]) == set(fixed) and ratings["covered"] is True
    assert model["source"] == "market-ratings"
    for meeting in intelligence["headToHead"]["matches"]:
        assert meeting["kickoffAt"].endswith("Z") and meeting["kickoffAt"] < body["kickoffAt"]
    pick_ids = {pick["id"] for pick in body["picks"]}
    assert pick_ids == {pick.id for pick in Pick.select().where(Pick.match == match)}


@pytest.mark.parametrize("path", ["/api/matches/999999", "/api/matches/0", "/api/matches/x"])
def test_unknown_matches_are_404s(client, world, path):
    asserts.problem(get(client, world, path), 404, "not-found")


def test_ids_beyond_int32_are_404s_not_errors(client, world):
    asserts.problem(get(client, world, "/api/matches/99999999999999999999"), 404, "not-found")


def test_an_id_is_spelt_one_way(client, world):
    """ASCII digits without a leading zero: another script's digits do not name the match."""
    match_id = Match.select(Match.id).order_by(Match.id).first().id
    assert get(client, world, f"/api/matches/{match_id}").status_code == 200
    for spelling in (
        f"0{match_id}",
        "".join(chr(0x0660 + int(digit)) for digit in str(match_id)),  # Arabic-Indic
        "".join(chr(0xFF10 + int(digit)) for digit in str(match_id)),  # full-width
        f"+{match_id}",
    ):
        asserts.problem(get(client, world, f"/api/matches/{spelling}"), 404, "not-found")


def test_a_path_is_spelt_one_way(client, world):
    """A doubled or a trailing slash does not route: no redirect, whose body was an HTML page."""
    match_id = Match.select(Match.id).order_by(Match.id).first().id
    for path in (
        "/api//picks/today",
        "/api/picks//today",
        "/api/picks/today/",
        f"/api/matches//{match_id}",
        "/openapi.json/",
    ):
        asserts.problem(get(client, world, path), 404, "not-found")
    assert get(client, world, "/api/picks/today").status_code == 200


# Explorer


def test_the_slate_of_a_day(client, world):
    day = days_with_picks(live=True)[0]
    body = ok(get(client, world, f"/api/explorer/slate?date={day}", "pro"))
    assert body["market"] == "1x2" and body["date"] == day.isoformat()
    expected = Match.select().where(Match.kickoff_at.between(*_day_bounds(day))).count()
    assert len(body["items"]) == expected
    for item in body["items"]:
        assert [row["selection"] for row in item["selections"]] == ["home", "draw", "away"]
        for row in item["selections"]:
            if row["edge"] is not None:
                assert row["edge"] == pytest.approx(
                    row["probability"] * row["bestPrice"] - 1, abs=1e-5
                )
        if item["pick"]:
            assert item["pick"]["market"] == "1x2"
            chosen = max(item["selections"], key=lambda row: row["edge"])
            assert item["pick"]["selection"] == chosen["selection"]


def test_slate_filters(client, world):
    day = days_with_picks(live=True)[0]
    everything = ok(get(client, world, f"/api/explorer/slate?date={day}&market=ou25"))["items"]
    league = everything[0]["match"]["league"]["id"]
    team = everything[0]["match"]["awayTeam"]["id"]
    by_league = ok(get(client, world, f"/api/explorer/slate?date={day}&leagueId={league}"))
    assert {item["match"]["league"]["id"] for item in by_league["items"]} == {league}
    by_team = ok(get(client, world, f"/api/explorer/slate?date={day}&teamId={team}"))["items"]
    assert [item["match"]["id"] for item in by_team] == [everything[0]["match"]["id"]]
    for day in days_with_picks():  # a day whose matches differ in data quality
        slate = ok(get(client, world, f"/api/explorer/slate?date={day}"))["items"]
        qualities = [item["prediction"]["dataQuality"] for item in slate]
        if min(qualities) < max(qualities):
            break
    strict = ok(
        get(client, world, f"/api/explorer/slate?date={day}&minDataQuality={max(qualities)}")
    )
    assert all(item["prediction"]["dataQuality"] >= max(qualities) for item in strict["items"])
    assert 0 < len(strict["items"]) < len(slate)
    for unknown in ("leagueId=999999", "teamId=999999"):
        assert ok(get(client, world, f"/api/explorer/slate?date={day}&{unknown}"))["items"] == []


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("minDataQuality=1.5", "minDataQuality"),
        ("minDataQuality=-0.1", "minDataQuality"),
        ("market=corners", "market"),
        ("leagueId=abc", "leagueId"),
    ],
)
def test_bad_slate_arguments(client, world, query, field):
    body = asserts.problem(
        get(client, world, f"/api/explorer/slate?{query}"), 422, "validation-error"
    )
    assert list(body["errors"]) == [field]


@pytest.mark.parametrize("scope", ["league", "teams", "global"])
def test_comparable_matches_lie_nearest_within_their_scope(client, world, scope):
    target = Match.select().where(Match.status == "scheduled").order_by(Match.kickoff_at).first()
    body = ok(
        get(client, world, f"/api/explorer/comparable?matchId={target.id}&scope={scope}&limit=15")
    )
    assert body["match"]["id"] == target.id and body["scope"] == scope
    items = body["items"]
    assert len(items) == 15 == body["summary"]["count"]
    wanted = np.array(list(body["prediction"]["probabilities"].values()))
    distances = [item["distance"] for item in items]
    assert distances == sorted(distances)
    for item in items:
        past = item["match"]
        assert past["status"] == "finished" and past["kickoffAt"] < body["match"]["kickoffAt"]
        gap = np.array(list(item["probabilities"].values())) - wanted
        # The probabilities are written to 6 decimals; the distance is from the exact ones.
        assert item["distance"] == pytest.approx(float(np.sqrt((gap**2).sum())), abs=1e-5)
        if scope == "league":
            assert past["league"]["id"] == target.league_id
        if scope == "teams":
            assert {past["homeTeam"]["id"], past["awayTeam"]["id"]} & {
                target.home_team_id,
                target.away_team_id,
            }
    for row in body["summary"]["selections"]:
        name = row["selection"]
        assert row["observedRate"] == pytest.approx(
            sum(item["outcome"] == name for item in items) / len(items)
        )
        assert row["meanPredicted"] == pytest.approx(
            np.mean([item["probabilities"][name] for item in items]), abs=1e-5
        )
    # Nothing nearer was left out: the farthest listed is no farther than any other candidate.
    if scope == "global":
        rows = (
            Prediction.select(Prediction.probabilities)
            .join(Match)
            .where(
                (Prediction.market == "1x2")
                & (Match.status == "finished")
                & (Match.kickoff_at < target.kickoff_at)
            )
        )
        every = sorted(
            float(np.sqrt(((np.array(list(row.probabilities.values())) - wanted) ** 2).sum()))
            for row in rows
        )
        assert distances == pytest.approx(every[:15], abs=1e-5)  # `wanted` is rounded


@pytest.mark.parametrize(
    ("query", "status", "name"),
    [
        ("", 422, "validation-error"),
        ("matchId=999999", 404, "not-found"),
        ("matchId=1&scope=planet", 422, "validation-error"),
        ("matchId=1&limit=0", 422, "validation-error"),
    ],
)
def test_bad_comparable_requests(client, world, query, status, name):
    body = asserts.problem(get(client, world, f"/api/explorer/comparable?{query}"), status, name)
    if status == 422:
        assert body["errors"]


# Track record


@pytest.mark.parametrize("is_live", [True, False])
def test_track_record_lists_every_competition_type(client, world, is_live):
    body = ok(get(client, world, f"/api/track-record/by-competition-type?isLive={is_live}"))
    assert body["isLive"] is is_live
    items = {item["competitionType"]: item for item in body["items"]}
    assert list(items) == ["top-flight", "lower-league", "cup", "international"]
    for kind, item in items.items():
        picks = (
            Pick.select(Pick, Match)
            .join(Match)
            .join(League)
            .where((League.competition_type == kind) & (Pick.is_live == is_live))
            .order_by(Match.kickoff_at, Pick.id)
        )
        picks = list(picks)
        assert item["picks"] == len(picks)
        assert item["won"] == sum(pick.status == "won" for pick in picks)
        evs = [p.odds * p.closing_probability - 1 for p in picks if p.closing_probability]
        if evs:
            assert item["avgClosingEv"] == pytest.approx(np.mean(evs), abs=1e-6)
            # The raw closing price keeps the margin: CLV flatters each pick against the fair EV.
            assert item["avgClv"] > item["avgClosingEv"]
        else:
            assert item["avgClosingEv"] is None


def test_track_record_defaults_to_live_picks(client, world):
    body = ok(get(client, world, "/api/track-record/by-competition-type"))
    assert body["isLive"] is True
    assert sum(item["picks"] for item in body["items"]) == Pick.select().where(Pick.is_live).count()


def test_track_record_figures_match_the_engine(client, world):
    body = ok(get(client, world, "/api/track-record/by-competition-type?isLive=false"))
    top = next(item for item in body["items"] if item["competitionType"] == "top-flight")
    picks = list(
        Pick.select(Pick)
        .join(Match)
        .join(League)
        .where((League.competition_type == "top-flight") & ~Pick.is_live)
        .order_by(Match.kickoff_at, Pick.id)
    )
    figures = metrics.track_record(
        [p.status for p in picks],
        [np.nan if p.profit is None else p.profit for p in picks],
        [p.odds for p in picks],
        [p.edge for p in picks],
        [np.nan if p.clv is None else p.clv for p in picks],
        [p.stake for p in picks],
    )
    assert top["roi"] == pytest.approx(figures["roi"], abs=1e-6)
    assert top["maxDrawdown"] == pytest.approx(figures["max_drawdown"], abs=0.005)


# Backtest


def test_a_backtest_contains_no_live_pick(client, world):
    response = world.test_client().post("/api/backtest/run", json={}, headers=world.people["free"])
    body = ok(response)
    assert body["summary"]["picks"] == Pick.select().where(~Pick.is_live).count()
    assert sum(month["picks"] for month in body["byMonth"]) == body["summary"]["picks"]
    names = dict(League.select(League.id, League.name).tuples())
    assert all(row["leagueName"] == names[row["leagueId"]] for row in body["byLeague"])
    curve = body["equityCurve"]
    assert curve[-1]["cumulativeProfit"] == pytest.approx(body["summary"]["profit"])


def test_backtest_filters(client, world):
    league = League.get(League.code == "NL1")
    body = ok(
        world.test_client().post(
            "/api/backtest/run",
            json={
                "rating": "A,B",
                "market": "1x2",
                "minEdge": 0.06,
                "leagueId": league.id,
                "dateFrom": "2024-01-01",
                "dateTo": "2026-12-31T23:59:59Z",
            },
            headers=world.people["pro"],
        )
    )
    assert body["params"] == {
        "rating": "A,B",
        "market": "1x2",
        "minEdge": 0.06,
        "leagueId": league.id,
        "dateFrom": "2024-01-01",
        "dateTo": "2026-12-31T23:59:59Z",
    }
    expected = (
        Pick.select()
        .join(Match)
        .where(
            ~Pick.is_live
            & Pick.rating.in_(["A", "B"])
            & (Pick.market == "1x2")
            & (Pick.edge >= 0.06)
            & (Match.league == league.id)
            & (Match.kickoff_at >= datetime(2024, 1, 1, tzinfo=UTC))
        )
        .count()
    )
    assert body["summary"]["picks"] == expected > 0
    assert [row["leagueId"] for row in body["byLeague"]] == [league.id]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"dateFrom": "2025-02-01", "dateTo": "2025-01-31"}, "dateTo"),
        ({"minEdge": 11}, "minEdge"),
        ({"minEdge": -0.5}, "minEdge"),
        ({"rating": "A,E"}, "rating"),
        ({"leagueId": "1"}, "leagueId"),
        ({"dateFrom": "yesterday"}, "dateFrom"),
        ({"unknown": 1}, "unknown"),
    ],
)
def test_bad_backtest_requests(world, body, field):
    response = world.test_client().post(
        "/api/backtest/run", json=body, headers=world.people["free"]
    )
    problem = asserts.problem(response, 422, "validation-error")
    assert list(problem["errors"]) == [field]


def test_backtests_need_a_signed_in_user(world):
    asserts.unauthorized(world.test_client().post("/api/backtest/run", json={}))
    response = world.test_client().post(
        "/api/backtest/run", json={}, headers=world.people["suspended"]
    )
    asserts.problem(response, 403, "account-suspended")


# Prediction pages


def test_a_prediction_page_as_json(client, world):
    match = Match.select().where(Match.status == "scheduled").order_by(Match.kickoff_at).first()
    body = ok(get(client, world, f"/api/v1/seo/predictions/{match.slug}"))
    assert body["slug"] == match.slug and body["match"]["id"] == match.id
    assert body["canonicalUrl"].endswith(f"/api/v1/seo/predictions/{match.slug}")
    assert body["prediction"]["market"] == "1x2"
    home, away = body["match"]["homeTeam"]["name"], body["match"]["awayTeam"]["name"]
    assert home in body["title"] and away in body["description"]
    event = body["structuredData"]
    assert (event["@context"], event["@type"]) == ("https://schema.org", "SportsEvent")
    assert event["homeTeam"] == {"@type": "SportsTeam", "name": home}
    assert event["awayTeam"] == {"@type": "SportsTeam", "name": away}
    assert event["startDate"] == body["match"]["kickoffAt"]
    assert event["eventStatus"] == "https://schema.org/EventScheduled"


@pytest.mark.parametrize(
    ("status", "event"),
    [
        ("postponed", "EventPostponed"),
        ("cancelled", "EventCancelled"),
        ("finished", "EventScheduled"),
    ],
)
def test_event_status_follows_the_match(client, world, status, event):
    match = Match.select().where(Match.status == status).first()
    body = ok(get(client, world, f"/api/v1/seo/predictions/{match.slug}"))
    assert body["structuredData"]["eventStatus"] == f"https://schema.org/{event}"


def test_a_prediction_page_as_html(client, world):
    match = Match.select().where(Match.status == "scheduled").order_by(Match.kickoff_at).first()
    response = get(client, world, f"/api/v1/seo/predictions/{match.slug}", Accept="text/html")
    assert response.status_code == 200 and response.mimetype == "text/html"
    page = response.get_data(as_text=True)
    assert f'rel="canonical" href="http://localhost/api/v1/seo/predictions/{match.slug}"' in page
    assert '<script type="application/ld+json">' in page and 'class="bar"' in page
    policy = response.headers["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "script-src" not in policy


def test_unknown_slugs_are_404s_in_either_form(client, world):
    asserts.problem(
        get(client, world, "/api/v1/seo/predictions/nobody-vs-nobody-2026-01-01"), 404, "not-found"
    )
    response = get(
        client, world, "/api/v1/seo/predictions/nobody-vs-nobody-2026-01-01", Accept="text/html"
    )
    assert response.status_code == 404 and response.mimetype == "text/html"
    assert "nobody-vs-nobody" in response.get_data(as_text=True)
    # A slug that is not a slug never reaches the database.
    asserts.problem(get(client, world, "/api/v1/seo/predictions/%00bad"), 404, "not-found")


# Answers, caching and their freshness


def test_answers_carry_a_strong_etag_and_answer_304(client, world):
    day = date.fromisoformat(str(days_with_picks()[0]))
    first = get(client, world, f"/api/picks/today?date={day}")
    etag = first.headers["ETag"]
    assert etag.startswith('"') and not etag.startswith("W/")
    assert first.headers["Cache-Control"].startswith("public, max-age=")
    assert "Authorization" in first.headers["Vary"]
    again = get(client, world, f"/api/picks/today?date={day}", **{"If-None-Match": etag})
    assert again.status_code == 304 and again.headers["ETag"] == etag and not again.data
    # If-None-Match compares weakly (RFC 9110, 13.1.2): the weak form of the tag, a list
    # holding it, or "*" hold the answer; another tag does not.
    for held in (f"W/{etag}", f'"other", W/{etag}', "*", f'"other", {etag}'):
        again = get(client, world, f"/api/picks/today?date={day}", **{"If-None-Match": held})
        assert again.status_code == 304 and again.headers["ETag"] == etag, held
    for other in ('"other"', f'W/{etag[:-2]}"', "W/"):
        again = get(client, world, f"/api/picks/today?date={day}", **{"If-None-Match": other})
        assert again.status_code == 200 and again.data == first.data, other
    signed_in = get(client, world, f"/api/picks/today?date={day}", "pro")
    assert signed_in.headers["Cache-Control"] == "private, no-cache"


def test_a_cached_page_links_to_the_host_it_was_asked_on(client, world):
    match = Match.select().where(Match.status == "scheduled").order_by(Match.kickoff_at).first()
    path = f"/api/v1/seo/predictions/{match.slug}"
    # Known hosts (ALLOWED_HOSTS) give absolute links, any other a relative one.
    for host, base in (
        ("http://localhost", "http://localhost"),
        ("https://unknown.example", ""),
        ("http://127.0.0.1", "http://127.0.0.1"),
        ("http://localhost", "http://localhost"),
    ):
        body = ok(client.get(path, base_url=host))
        assert body["canonicalUrl"] == f"{base}{path}"
        assert body["structuredData"]["url"] == f"{base}{path}"


def test_comparable_reads_the_history_once_per_data_version(client, world):
    """Each market's finished history is read once per data version by the process, so a new
    ``limit`` (or match) costs array masks, not a read of every past forecast; a change to the
    data is seen at once. Every limit is a slice of the same ranking."""
    from models import bump_data_version
    from services.reads.explorer import ComparableIndex, comparable

    index = world.extensions["comparable_index"]
    target = Match.select().where(Match.status == "scheduled").order_by(Match.kickoff_at).first()
    path = f"/api/explorer/comparable?matchId={target.id}&scope=global"
    longest = ok(get(client, world, f"{path}&limit=100"))["items"]
    history = index.history("1x2")
    for limit in (1, 7, 20, 99):
        items = ok(get(client, world, f"{path}&limit={limit}"))["items"]
        assert items == longest[:limit]
        assert index.history("1x2") is history  # not read again
    fresh = comparable(target.id, scope="global", limit=100, now=NOW, index=ComparableIndex())
    assert [item["match"]["id"] for item in fresh["items"]] == [
        item["match"]["id"] for item in longest
    ]
    bump_data_version()
    assert index.history("1x2") is not history
