"""The Data API on the demo world: the match feed's filters, includes, paging and query count,
the track record, and exports of every resource in every format. Built once for the module."""

import csv
import io
import json
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from urllib.parse import urlencode

import pytest
from flask import current_app
from itsdangerous import URLSafeSerializer
from itsdangerous.encoding import base64_encode

from enums import (
    COMPETITION_TYPES,
    EXPORT_FORMATS,
    EXPORT_RESOURCES,
    MARKET_SELECTIONS,
    MARKETS,
    PICK_RATINGS,
)
from models import (
    Export,
    League,
    Match,
    MatchIntelligence,
    OddsQuote,
    OddsSummary,
    Pick,
    Prediction,
    Team,
)
from schemas.data import max_limit
from schemas.exports import ROWS
from services.data_api.exports import row_names
from services.market import staking
from tests import asserts, factories
from tests.helpers import UNLIMITED, counted_queries, ok

pytestmark = pytest.mark.slow  # the demo world: built once per run, copied per module

MATCHES = "/api/v1/data/matches"
TRACK_RECORD = "/api/v1/data/track-record"
EXPORTS = "/api/v1/data/exports"
USAGE = "/api/v1/data/usage"
ALL_INCLUDES = "odds,predictions,picks,intelligence"
MEDIA_TYPES = {"csv": "text/csv", "json": "application/json", "ndjson": "application/x-ndjson"}


@pytest.fixture(scope="module")
def world(demo_world):
    """The demo world with one user of each kind; rate limits out of the way."""
    app = demo_world("data-api", **UNLIMITED)
    with app.app_context():
        people = factories.people()
        app.people = {kind: headers for kind, (_, headers) in people.items()}
        app.users = {kind: user for kind, (user, _) in people.items()}
    app.people["anonymous"] = {}
    with app.app_context():
        yield app


@pytest.fixture(scope="module")
def client(world):
    return world.test_client()


@dataclass(frozen=True)
class Facts:
    """Places in the demo world the tests filter on, found in its data rather than assumed."""

    day: date  # a finished day with picks and matches of several leagues
    week: date  # six days before ``day``: [week, day] is a week of matches
    league: int  # the league with most matches on ``day``
    team: int  # a team of ``league``
    pick_day: date  # the median kick-off day of the picks
    pick_range: tuple[date, date]  # from a quarter of the picks to half of them
    fields: dict  # resource → its fields, from the catalog
    filters: dict  # resource → its filters, from the catalog


@pytest.fixture(scope="module")
def facts(world, client):
    """What the tests filter on (see Facts)."""
    pick_days = sorted(
        kickoff.date() for (kickoff,) in Pick.select(Match.kickoff_at).join(Match).tuples()
    )
    leagues_by_day = {}
    for kickoff, league in Match.select(Match.kickoff_at, Match.league).tuples():
        leagues_by_day.setdefault(kickoff.date(), Counter())[league] += 1
    day = max(
        set(pick_days) & set(leagues_by_day),
        key=lambda day: (len(leagues_by_day[day]), sum(leagues_by_day[day].values()), day),
    )
    league = leagues_by_day[day].most_common(1)[0][0]
    catalog = ok(client.get("/api/v1/data/catalog", headers=world.people["admin"]))
    return Facts(
        day=day,
        week=day - timedelta(days=6),
        league=league,
        team=Match.select(Match.home_team).where(Match.league == league).scalar(),
        pick_day=pick_days[len(pick_days) // 2],
        pick_range=(pick_days[len(pick_days) // 4], pick_days[len(pick_days) // 2]),
        fields={item["name"]: item["fields"] for item in catalog["resources"]},
        filters={item["name"]: item["filters"] for item in catalog["resources"]},
    )


def bounds(first: date, last: date) -> tuple[datetime, datetime]:
    """[first 00:00, the day after last 00:00) in UTC: what ``from=first&to=last`` covers."""
    return (
        datetime.combine(first, time(), tzinfo=UTC),
        datetime.combine(last + timedelta(days=1), time(), tzinfo=UTC),
    )


def usage(client, world, kind="pro"):
    """The caller's usage report (not counted itself)."""
    return ok(client.get(USAGE, headers=world.people[kind]))


def walk(client, world, query, limit=1000, kind="pro"):
    """Every match of the feed for ``query``, page after page, as (kickoffAt, id) pairs."""
    seen, cursor = [], None
    for _ in range(10_000):
        arguments = {**query, "limit": limit, **({"cursor": cursor} if cursor else {})}
        body = ok(client.get(f"{MATCHES}?{urlencode(arguments)}", headers=world.people[kind]))
        assert body["limit"] == limit and len(body["items"]) <= limit
        seen += [(item["kickoffAt"], item["id"]) for item in body["items"]]
        cursor = body["nextCursor"]
        if cursor is None:
            return seen
        assert len(body["items"]) == limit  # only a full page has a next one
    raise AssertionError("the walk never ended")


def stored(where=None):
    """The stored matches ``where`` selects, as (kickoffAt, id) pairs in feed order."""
    query = Match.select(Match.id, Match.kickoff_at).order_by(Match.kickoff_at, Match.id)
    if where is not None:
        query = query.where(where)
    return [(f"{match.kickoff_at:%Y-%m-%dT%H:%M:%SZ}", match.id) for match in query]


# The match feed: filters


def filter_cases(facts):
    """name → (query, the stored matches it must select)."""
    day_start, day_end = bounds(facts.day, facts.day)
    kickoffs = sorted(
        {m.kickoff_at for m in Match.select().where(Match.kickoff_at.between(day_start, day_end))}
    )
    first, last = kickoffs[0], kickoffs[-1]
    return {
        "a whole day": (
            {"from": facts.day, "to": facts.day},
            (Match.kickoff_at >= day_start) & (Match.kickoff_at < day_end),
        ),
        "from a day": ({"from": facts.day}, Match.kickoff_at >= day_start),
        "to a day": ({"to": facts.day}, Match.kickoff_at < day_end),
        "between two instants, both included": (
            {"from": f"{first:%Y-%m-%dT%H:%M:%SZ}", "to": f"{last:%Y-%m-%dT%H:%M:%S}+00:00"},
            (Match.kickoff_at >= first) & (Match.kickoff_at <= last),
        ),
        "one instant": (
            {"from": f"{last:%Y-%m-%dT%H:%M:%SZ}", "to": f"{last:%Y-%m-%dT%H:%M:%SZ}"},
            Match.kickoff_at == last,
        ),
        "a league": ({"leagueId": facts.league}, Match.league == facts.league),
        "a team, home or away": (
            {"teamId": facts.team},
            (Match.home_team == facts.team) | (Match.away_team == facts.team),
        ),
        "one status": ({"status": "scheduled"}, Match.status == "scheduled"),
        "a list of statuses": (
            {"status": "postponed,cancelled,live"},
            Match.status.in_(["postponed", "cancelled", "live"]),
        ),
        "all together": (
            {"from": facts.week, "to": facts.day, "leagueId": facts.league, "status": "finished"},
            (Match.kickoff_at >= bounds(facts.week, facts.day)[0])
            & (Match.kickoff_at < day_end)
            & (Match.league == facts.league)
            & (Match.status == "finished"),
        ),
    }


FILTERS = [
    "a whole day",
    "from a day",
    "to a day",
    "between two instants, both included",
    "one instant",
    "a league",
    "a team, home or away",
    "one status",
    "a list of statuses",
    "all together",
]


@pytest.mark.parametrize("name", FILTERS)
def test_each_filter_selects_exactly_its_matches(client, world, facts, name):
    query, where = filter_cases(facts)[name]
    expected = stored(where)
    assert 0 < len(expected) < Match.select().count()  # the filter has something to tell apart
    assert walk(client, world, query) == expected


def test_a_team_filter_finds_its_home_and_away_matches(client, world, facts):
    body = ok(client.get(f"{MATCHES}?teamId={facts.team}&limit=1000", headers=world.people["pro"]))
    sides = Counter(
        "home" if item["homeTeam"]["id"] == facts.team else "away"
        for item in body["items"]
        if facts.team in (item["homeTeam"]["id"], item["awayTeam"]["id"])
    )
    assert sides["home"] and sides["away"] and sum(sides.values()) == len(body["items"])


def test_a_filter_that_selects_nothing_is_an_empty_last_page(client, world):
    body = ok(client.get(f"{MATCHES}?from=1999-01-01&to=1999-12-31", headers=world.people["pro"]))
    assert body == {"items": [], "limit": 100, "nextCursor": None, "missingIds": None}


# The match feed: includes


RELATIONS = ("odds", "predictions", "picks", "intelligence")


def relations_of(match_ids):
    """match id → the number of odds summaries, predictions, picks and intelligence stored."""
    counts = {match_id: dict.fromkeys(RELATIONS, 0) for match_id in match_ids}
    for model, name in (
        (OddsSummary, "odds"),
        (Prediction, "predictions"),
        (Pick, "picks"),
        (MatchIntelligence, "intelligence"),
    ):
        for (match_id,) in model.select(model.match).where(model.match.in_(match_ids)).tuples():
            counts[match_id][name] += 1
    return counts


def shown(item, name):
    """How many rows of relation ``name`` the card ``item`` shows (as relations_of counts)."""
    value = item[name]
    if name == "odds":
        return sum(len(market["selections"]) for market in value)
    if name == "intelligence":
        return int(value is not None)
    return len(value)


@pytest.mark.parametrize(
    "include", ["odds", "predictions", "picks", "intelligence", "picks,odds", ALL_INCLUDES, None]
)
def test_each_include_adds_exactly_its_relation(client, world, facts, include):
    query = {
        "from": facts.day,
        "to": facts.day,
        "limit": max_limit(include.split(",") if include else ()),
    }
    if include is not None:
        query["include"] = include
    items = ok(client.get(f"{MATCHES}?{urlencode(query)}", headers=world.people["pro"]))["items"]
    wanted = [name for name in RELATIONS if name in (include or "").split(",")]
    counts = relations_of([item["id"] for item in items])
    assert items and any(count["picks"] for count in counts.values())
    for item in items:
        assert {"id", "slug", "kickoffAt", "status", "league", "homeTeam", "awayTeam"} <= set(item)
        assert [name for name in RELATIONS if name in item] == wanted
        assert {name: shown(item, name) for name in wanted} == {
            name: counts[item["id"]][name] for name in wanted
        }


def test_picks_in_the_feed_are_never_locked(client, world, facts):
    query = urlencode({"from": facts.week, "to": facts.day, "include": "picks", "limit": 500})
    items = ok(client.get(f"{MATCHES}?{query}", headers=world.people["pro"]))["items"]
    picks = [pick for item in items for pick in item["picks"]]
    assert picks and not any(pick["locked"] for pick in picks)
    assert all(pick["selection"] and pick["odds"] for pick in picks)


def test_a_page_with_every_include_costs_the_same_queries_for_10_or_100_matches(
    client, world, facts
):
    counts = []
    for limit in (10, 50):  # 50: the largest page with every include
        # From the middle of the picks' days: a league's first weeks, unseen, have none.
        path = (
            f"{MATCHES}?status=finished&include={ALL_INCLUDES}&limit={limit}&from={facts.pick_day}"
        )
        with counted_queries() as statements:
            items = ok(client.get(path, headers=world.people["pro"]))["items"]
        assert len(items) == limit
        # Every relation has rows on these matches, so none of its queries can be skipped.
        assert all(item["odds"] and item["predictions"] and item["intelligence"] for item in items)
        assert any(item["picks"] for item in items)
        counts.append(len(statements))
    assert counts[0] == counts[1]
    # The caller, the quota, the data version, the matches, then one query per relation, and
    # the settled picks the picks' stakes are sized by.
    assert counts[1] <= 5 + len(RELATIONS)


# The match feed: paging and cursors


def test_limit_defaults_to_100_and_takes_1_to_1000(client, world):
    headers = world.people["pro"]
    default = ok(client.get(MATCHES, headers=headers))
    assert (default["limit"], len(default["items"])) == (100, 100) and default["nextCursor"]
    for limit in (1, 1000):
        body = ok(client.get(f"{MATCHES}?limit={limit}", headers=headers))
        assert (body["limit"], len(body["items"])) == (limit, limit)
    assert [item["id"] for item in default["items"]] == [id_ for _, id_ in stored()[:100]]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("limit=0", "limit"),
        ("limit=1001", "limit"),
        ("limit=-5", "limit"),
        ("limit=x", "limit"),
        ("limit=1.5", "limit"),
        ("from=2026-11-22&to=2026-11-21", "to"),
        ("from=2026-11-21T20:00:00Z&to=2026-11-21T19:59:59Z", "to"),
        ("from=yesterday", "from"),
        ("to=2026-02-30", "to"),
        ("leagueId=x", "leagueId"),
        ("leagueId=0", "leagueId"),
        ("teamId=2147483648", "teamId"),
        ("status=done", "status"),
        ("status=finished,,live", "status"),
        ("include=odds,weather", "include"),
    ],
)
def test_bad_feed_arguments_are_422s_naming_the_field(client, world, query, field):
    body = asserts.problem(
        client.get(f"{MATCHES}?{query}", headers=world.people["pro"]), 422, "validation-error"
    )
    assert list(body["errors"]) == [field], body


def test_a_bare_to_on_the_same_day_as_from_is_not_before_it(client, world, facts):
    """``from`` a date-time late in a day and ``to`` that bare date: the day still includes it."""
    query = urlencode({"from": f"{facts.day}T23:00:00Z", "to": facts.day})
    assert ok(client.get(f"{MATCHES}?{query}", headers=world.people["pro"]))["items"] == []


def test_a_walk_over_shared_kick_offs_returns_each_match_once_in_order(client, world, facts):
    query = {"from": facts.week, "to": facts.day}
    expected = stored(
        (Match.kickoff_at >= bounds(facts.week, facts.day)[0])
        & (Match.kickoff_at < bounds(facts.week, facts.day)[1])
    )
    kickoffs = Counter(kickoff for kickoff, _ in expected)
    assert max(kickoffs.values()) > 3  # pages of 3 split matches that kick off together
    assert walk(client, world, query, limit=3) == expected


def cursor_from(client, world, facts):
    """A real cursor, from the first page of the week."""
    query = urlencode({"from": facts.week, "to": facts.day, "limit": 2})
    return ok(client.get(f"{MATCHES}?{query}", headers=world.people["pro"]))["nextCursor"]


def signed(secret, payload, salt="match-feed-cursor"):
    """A cursor signed with ``secret`` and ``salt`` around ``payload``."""
    return URLSafeSerializer(secret, salt=salt).dumps(payload)


def with_payload(real, payload):
    """``real``'s signature on another payload."""
    text = base64_encode(json.dumps(payload, separators=(",", ":")).encode()).decode()
    return f"{text}.{real.rsplit('.', 1)[1]}"


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(
            lambda real, secret: real[:-2] + ("AA" if real[-2:] != "AA" else "BB"), id="tampered"
        ),
        pytest.param(lambda real, secret: with_payload(real, [0, 1]), id="tampered-payload"),
        pytest.param(lambda real, secret: "not-a-cursor", id="garbage"),
        pytest.param(lambda real, secret: "x" * 513, id="too-long"),
        pytest.param(
            lambda real, secret: signed("another-service-secret-0123456789abcdef", [0, 1]),
            id="foreign-secret",
        ),
        pytest.param(
            lambda real, secret: signed(secret, [0, 1], salt="another-use"), id="foreign-salt"
        ),
        pytest.param(lambda real, secret: signed(secret, 5), id="not-a-pair"),
        pytest.param(lambda real, secret: signed(secret, ["soon", 1]), id="not-a-time"),
        pytest.param(lambda real, secret: signed(secret, [10**20, 1]), id="out-of-range"),
    ],
)
def test_a_cursor_this_service_did_not_make_is_a_422(client, world, facts, make):
    cursor = make(cursor_from(client, world, facts), world.config["JWT_SECRET_KEY"])
    response = client.get(f"{MATCHES}?{urlencode({'cursor': cursor})}", headers=world.people["pro"])
    body = asserts.problem(response, 422, "validation-error")
    assert list(body["errors"]) == ["cursor"]


def test_a_cursor_continues_with_other_filters_and_limits(client, world, facts):
    """The cursor names a position in the order, so the next page may change its limit."""
    first = ok(client.get(f"{MATCHES}?limit=5", headers=world.people["pro"]))
    following = ok(
        client.get(f"{MATCHES}?limit=7&cursor={first['nextCursor']}", headers=world.people["pro"])
    )
    ids = [id_ for _, id_ in stored()[:12]]
    assert [item["id"] for item in first["items"] + following["items"]] == ids


# The match feed: access and quota


@pytest.mark.parametrize(("kind", "status"), [("pro", 200), ("admin", 200), ("free", 403)])
def test_the_feed_is_for_pro_and_admin(client, world, kind, status):
    response = client.get(f"{MATCHES}?limit=1", headers=world.people[kind])
    if status == 200:
        ok(response)
    else:
        body = asserts.problem(response, 403, "subscription-required")
        assert body["detail"] == "A Pro subscription or admin role is required."


@pytest.mark.parametrize("path", [MATCHES, TRACK_RECORD])
def test_anonymous_callers_get_a_401(client, world, path):
    asserts.unauthorized(client.get(path))


@pytest.mark.parametrize("kind", ["pro", "admin"])
def test_every_feed_call_counts_one_request(client, world, facts, kind):
    before = usage(client, world, kind)["requests"]["used"]
    client.get(f"{MATCHES}?from={facts.day}", headers=world.people[kind])
    client.get(f"{MATCHES}?from={facts.day}", headers=world.people[kind])  # from the cache
    client.get(f"{MATCHES}?limit=0", headers=world.people[kind])  # a 422 is counted too
    client.get(f"{TRACK_RECORD}?from={facts.day}", headers=world.people[kind])
    assert usage(client, world, kind)["requests"]["used"] == before + 4


# The track record


FIGURES = {
    "picks",
    "won",
    "lost",
    "void",
    "halfWon",
    "halfLost",
    "pending",
    "hitRate",
    "staked",
    "profit",
    "roi",
    "roiStdError",
    "avgOdds",
    "avgEdge",
    "avgClv",
    "clvExcluded",
    "avgClosingEv",
    "avgClosingEvStdError",
    "closingEvExcluded",
    "maxDrawdown",
    "longestLosingStreak",
}


def test_the_track_record_reports_live_and_backfilled_apart(client, world):
    body = ok(client.get(TRACK_RECORD, headers=world.people["pro"]))
    assert (body["from"], body["to"]) == (None, None)
    for part, is_live in (("live", True), ("backfilled", False)):
        record = body[part]
        groupings = {"byMonth", "byMarket", "byRating", "byCompetitionType", "ratingsTold"}
        assert set(record) == FIGURES | groupings | {"stakes"}
        decided = sum(record[name] for name in ("won", "lost", "halfWon", "halfLost"))
        assert record["stakes"]["picks"] == decided
        assert 0 <= record["stakes"]["staked"] <= decided
        picks = Pick.select().where(Pick.is_live == is_live)
        assert record["picks"] == picks.count() > 0
        for status in ("won", "lost", "void", "half-won", "half-lost", "pending"):
            name = {"half-won": "halfWon", "half-lost": "halfLost"}.get(status, status)
            assert record[name] == picks.where(Pick.status == status).count()
        settled = picks.where(Pick.status != "pending")
        assert record["clvExcluded"] == settled.where(Pick.clv.is_null()).count()
        assert record["closingEvExcluded"] == (
            settled.where(Pick.closing_probability.is_null()).count()
        )
        assert [item["market"] for item in record["byMarket"]] == list(MARKETS)
        assert [item["rating"] for item in record["byRating"]] == list(PICK_RATINGS)
        kinds = [item["competitionType"] for item in record["byCompetitionType"]]
        assert kinds == list(COMPETITION_TYPES)
        for grouping in ("byMonth", "byMarket", "byRating", "byCompetitionType"):
            assert all(set(item) > FIGURES for item in record[grouping])
            assert sum(item["picks"] for item in record[grouping]) == record["picks"]
        months = [item["month"] for item in record["byMonth"]]
        assert months == sorted(set(months))
        by_month = Counter(
            f"{kickoff:%Y-%m}"
            for (kickoff,) in Pick.select(Match.kickoff_at)
            .join(Match)
            .where(Pick.is_live == is_live)
            .tuples()
        )
        assert {item["month"]: item["picks"] for item in record["byMonth"]} == by_month


def test_the_track_record_of_a_range(client, world, facts):
    first, last = facts.pick_range
    query = urlencode({"from": first, "to": last})
    body = ok(client.get(f"{TRACK_RECORD}?{query}", headers=world.people["pro"]))
    assert (body["from"], body["to"]) == (str(first), str(last))
    start, end = bounds(first, last)
    in_range = (
        Pick.select().join(Match).where((Match.kickoff_at >= start) & (Match.kickoff_at < end))
    )
    assert body["backfilled"]["picks"] + body["live"]["picks"] == in_range.count()
    assert 0 < in_range.count() < Pick.select().count()


@pytest.mark.parametrize(
    ("query", "field"),
    [("from=2026-01-02&to=2026-01-01", "to"), ("from=soon", "from"), ("to=2026-13-01", "to")],
)
def test_bad_track_record_ranges_are_422s(client, world, query, field):
    body = asserts.problem(
        client.get(f"{TRACK_RECORD}?{query}", headers=world.people["pro"]), 422, "validation-error"
    )
    assert list(body["errors"]) == [field]


# Exports: every resource in every format


def export(client, world, resource, format_, parameters=None, kind="pro"):
    """POST an export; ``parameters`` (a dict) travel as the parametersJson string."""
    body = {"resource": resource, "format": format_}
    if parameters is not None:
        body["parametersJson"] = json.dumps(parameters, default=str)
    return client.post(EXPORTS, json=body, headers=world.people[kind])


def rows_of(response, format_):
    """(header, rows as dicts) parsed back from an export's body; header is None but for CSV."""
    text = response.get_data(as_text=True)
    if format_ == "csv":
        reader = csv.DictReader(io.StringIO(text))
        rows = list(reader)
        return reader.fieldnames, rows
    if format_ == "json":
        return None, json.loads(text)["items"]
    assert text == "" or text.endswith("\n")
    return None, [json.loads(line) for line in text.splitlines()]


def base_parameters(facts, resource) -> dict:
    """Filters that keep each resource's export small on the demo world."""
    return {
        "matches": {"from": facts.week},  # to the last fixture: every status
        "picks": {},
        "predictions": {"from": facts.day, "to": facts.day},
        "odds": {"from": facts.day, "to": facts.day},
        "teams": {},
        "leagues": {},
        "track-record": {"from": facts.pick_range[0], "to": facts.pick_range[1]},
    }[resource]


def stored_count(client, world, facts, resource) -> int:
    """How many rows the base export of ``resource`` must hold, counted from the database (the
    track record: from its endpoint, a row per group)."""
    parameters = base_parameters(facts, resource)
    in_range = Match.id.is_null(False)
    if "from" in parameters:
        in_range &= Match.kickoff_at >= bounds(parameters["from"], parameters["from"])[0]
    if "to" in parameters:
        in_range &= Match.kickoff_at < bounds(parameters["to"], parameters["to"])[1]
    if resource == "matches":
        return Match.select().where(in_range).count()
    if resource == "picks":
        return Pick.select().count()
    if resource == "predictions":
        markets = Prediction.select(Prediction.market).join(Match).where(in_range).tuples()
        return sum(len(MARKET_SELECTIONS[market]) for (market,) in markets)
    if resource == "odds":
        return OddsQuote.select().join(Match).where(in_range).count()
    if resource == "teams":
        return Team.select().count()
    if resource == "leagues":
        return League.select().count()
    query = urlencode(parameters)
    report = ok(client.get(f"{TRACK_RECORD}?{query}", headers=world.people["admin"]))
    groupings = ("byMonth", "byMarket", "byRating", "byCompetitionType")
    return sum(
        1 + sum(len(report[part][name]) for name in groupings) for part in ("live", "backfilled")
    )


@pytest.mark.parametrize("format_", EXPORT_FORMATS)
@pytest.mark.parametrize("resource", EXPORT_RESOURCES)
def test_every_resource_exports_in_every_format(client, world, facts, resource, format_):
    parameters = base_parameters(facts, resource)
    response = export(client, world, resource, format_, parameters)
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.mimetype == MEDIA_TYPES[format_]
    count = int(response.headers["X-Row-Count"])
    export_id = int(response.headers["X-Export-Id"])
    assert response.headers["Content-Disposition"] == (
        f'attachment; filename="{resource}-{export_id}.{format_}"'
    )
    header, rows = rows_of(response, format_)
    assert len(rows) == count == stored_count(client, world, facts, resource) > 0
    fields = facts.fields[resource]
    if format_ == "csv":
        assert header == fields
    else:
        assert all(list(row) == fields for row in rows)
        assert not any(isinstance(value, dict | list) for row in rows for value in row.values())
    if format_ == "json":
        body = response.get_json()
        assert {key: body[key] for key in ("id", "resource", "format", "rowCount")} == {
            "id": export_id,
            "resource": resource,
            "format": format_,
            "rowCount": count,
        }
        assert body["generatedAt"].endswith("Z")
    record = Export.get_by_id(export_id)
    assert (record.user_id, record.resource, record.format, record.row_count) == (
        world.users["pro"].id,
        resource,
        format_,
        count,
    )
    assert record.parameters == json.loads(json.dumps(parameters, default=str))


def as_text(value) -> str:
    """A JSON value as the CSV writes it: nulls empty, booleans true/false."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@pytest.mark.parametrize("resource", EXPORT_RESOURCES)
def test_the_three_formats_carry_the_same_rows(client, world, facts, resource):
    parameters = base_parameters(facts, resource)
    rows = {
        format_: rows_of(export(client, world, resource, format_, parameters), format_)[1]
        for format_ in EXPORT_FORMATS
    }
    assert rows["ndjson"] == rows["json"]
    assert rows["csv"] == [
        {name: as_text(value) for name, value in row.items()} for row in rows["json"]
    ]


def wire_names(resource) -> list[str]:
    """The wire names of ``resource``'s row schema, in its order."""
    return [field.data_key or name for name, field in ROWS[resource]().fields.items()]


def card_stake(pick) -> float:
    """A pick's suggested stake as the match cards work it out (``staking.with_stakes``)."""
    (staked,) = staking.with_stakes(
        [
            {
                "trusted_probability": pick.trusted_probability or pick.probability,
                "odds": pick.odds,
                "rating": pick.rating,
                "data_quality": pick.data_quality,
                "created_at": pick.created_at,
                "match_id": pick.match_id,
            }
        ],
        {pick.match_id: pick.match.kickoff_at},
        current_app.config,
    )
    return staked["suggested_stake"]


def stored_row(resource, row) -> dict:
    """The stored record behind an export row (read by its wire names), as ``{field name:
    value}`` for every field of the row schema: each found by name on the record, else on a
    record it refers to (``league_name`` is its league's ``name``, ``kickoff_at`` its match's)."""
    if resource == "predictions":
        record = Prediction.get(
            (Prediction.match == row["matchId"]) & (Prediction.market == row["market"])
        )
        selection = row["selection"]
        given = {
            "selection": selection,
            "probability": record.probabilities[selection],
            "model_probability": record.model_probabilities[selection],
            "market_probability": (record.market_probabilities or {}).get(selection),
        }
    elif resource == "odds":
        record = OddsQuote.get(
            (OddsQuote.match == row["matchId"])
            & (OddsQuote.bookmaker == row["bookmaker"])
            & (OddsQuote.market == row["market"])
            & (OddsQuote.selection == row["selection"])
            & (OddsQuote.is_closing == (row["isClosing"] == "true"))
        )
        given = {}
    else:
        model = {"matches": Match, "picks": Pick, "teams": Team, "leagues": League}[resource]
        record, given = model.get_by_id(int(row["id"])), {}
        if resource == "picks":  # not stored: worked out when read, as the match cards do
            given["suggested_stake"] = card_stake(record)
    match = record if isinstance(record, Match) else getattr(record, "match", None)
    related = []
    if match is not None:
        related = [
            ("home_team_", match.home_team),
            ("away_team_", match.away_team),
            ("league_", match.league),
            ("", match.league),
            ("", match),
        ]
    values = {}
    for name in row_names(resource):
        if name in given:
            values[name] = given[name]
        elif hasattr(record, name):
            values[name] = getattr(record, name)
        else:
            owner, attribute = next(
                (owner, name.removeprefix(prefix))
                for prefix, owner in related
                if name.startswith(prefix) and hasattr(owner, name.removeprefix(prefix))
            )
            values[name] = getattr(owner, attribute)
    return values


@pytest.mark.parametrize("resource", EXPORT_RESOURCES)
def test_each_csv_column_is_its_row_schema_field_by_name(client, world, facts, resource):
    """The header is the row schema's fields, in its order; and under each name stands that
    field's stored value, whatever order a query selects its columns in."""
    response = export(client, world, resource, "csv", base_parameters(facts, resource))
    header, rows = rows_of(response, "csv")
    assert header == wire_names(resource) == facts.fields[resource]
    if resource == "track-record":  # no table: its values are checked against its endpoint
        return
    schema = ROWS[resource]()
    sample = rows[:40] + rows[-40:]
    assert sample
    for row in sample:
        expected = schema.dump(stored_row(resource, row))
        assert row == {name: as_text(value) for name, value in expected.items()}


# Exports: filters


def filtered_cases(facts):
    """(resource, filters added to its base export, the rows of the base export they keep)."""
    league_of = dict(Match.select(Match.id, Match.league).tuples())
    kickoff_of = dict(Match.select(Match.id, Match.kickoff_at).tuples())
    start, end = bounds(facts.day, facts.day)
    kickoffs = sorted({kickoff for kickoff in kickoff_of.values() if start <= kickoff < end})
    later = kickoffs[len(kickoffs) // 2]  # the later half of the day's kick-offs
    played = set()
    for home, away in (
        Match.select(Match.home_team, Match.away_team).where(Match.league == facts.league).tuples()
    ):
        played |= {home, away}
    day, pick_day = str(facts.day), str(facts.pick_day)
    before = str(facts.day - timedelta(days=1))
    return {
        "matches from": ("matches", {"from": day}, lambda row: row["kickoffAt"][:10] >= day),
        "matches to": ("matches", {"to": before}, lambda row: row["kickoffAt"][:10] <= before),
        "matches leagueId": (
            "matches",
            {"leagueId": facts.league},
            lambda row: row["leagueId"] == facts.league,
        ),
        "matches teamId": (
            "matches",
            {"teamId": facts.team},
            lambda row: facts.team in (row["homeTeamId"], row["awayTeamId"]),
        ),
        "matches status": (
            "matches",
            {"status": "scheduled,postponed"},
            lambda row: row["status"] in ("scheduled", "postponed"),
        ),
        "picks from": ("picks", {"from": pick_day}, lambda row: row["kickoffAt"][:10] >= pick_day),
        "picks to": ("picks", {"to": pick_day}, lambda row: row["kickoffAt"][:10] <= pick_day),
        "picks leagueId": (
            "picks",
            {"leagueId": facts.league},
            lambda row: row["leagueId"] == facts.league,
        ),
        "picks market": (
            "picks",
            {"market": "ou25,btts"},
            lambda row: row["market"] in ("ou25", "btts"),
        ),
        "picks rating": ("picks", {"rating": "A,C"}, lambda row: row["rating"] in ("A", "C")),
        "picks status": (
            "picks",
            {"status": "won,void"},
            lambda row: row["status"] in ("won", "void"),
        ),
        "picks line": ("picks", {"line": 2.5}, lambda row: row["market"] == "ou25"),
        "picks isLive": ("picks", {"isLive": True}, lambda row: row["isLive"] is True),
        "picks not isLive": ("picks", {"isLive": False}, lambda row: row["isLive"] is False),
        "predictions from": (
            "predictions",
            {"from": f"{later:%Y-%m-%dT%H:%M:%SZ}"},
            lambda row: kickoff_of[row["matchId"]] >= later,
        ),
        "predictions leagueId": (
            "predictions",
            {"leagueId": facts.league},
            lambda row: league_of[row["matchId"]] == facts.league,
        ),
        "predictions market": (
            "predictions",
            {"market": "btts"},
            lambda row: row["market"] == "btts",
        ),
        "predictions line": ("predictions", {"line": 2.5}, lambda row: row["line"] == 2.5),
        "odds leagueId": (
            "odds",
            {"leagueId": facts.league},
            lambda row: league_of[row["matchId"]] == facts.league,
        ),
        "odds market": (
            "odds",
            {"market": "1x2,btts"},
            lambda row: row["market"] in ("1x2", "btts"),
        ),
        # 2.5 (ou25) against the markets without a line and the demo's other lines.
        "odds line": ("odds", {"line": 2.5}, lambda row: row["line"] == 2.5),
        "odds bookmaker": (
            "odds",
            {"bookmaker": "pinnacle"},
            lambda row: row["bookmaker"] == "pinnacle",
        ),
        "odds isClosing": ("odds", {"isClosing": True}, lambda row: row["isClosing"] is True),
        "odds not isClosing": ("odds", {"isClosing": False}, lambda row: row["isClosing"] is False),
        "teams leagueId": ("teams", {"leagueId": facts.league}, lambda row: row["id"] in played),
    }


FILTERED = [
    "matches from",
    "matches to",
    "matches leagueId",
    "matches teamId",
    "matches status",
    "picks from",
    "picks to",
    "picks leagueId",
    "picks market",
    "picks rating",
    "picks status",
    "picks line",
    "picks isLive",
    "picks not isLive",
    "predictions from",
    "predictions leagueId",
    "predictions market",
    "predictions line",
    "odds leagueId",
    "odds market",
    "odds line",
    "odds bookmaker",
    "odds isClosing",
    "odds not isClosing",
    "teams leagueId",
]


@pytest.mark.parametrize("name", FILTERED)
def test_each_export_filter_keeps_exactly_its_rows(client, world, facts, name):
    resource, added, keep = filtered_cases(facts)[name]
    base = base_parameters(facts, resource)
    everything = export(client, world, resource, "json", base).get_json()["items"]
    response = export(client, world, resource, "json", {**base, **added})
    expected = [row for row in everything if keep(row)]
    assert 0 < len(expected) < len(everything)  # the filter has something to tell apart
    assert ok(response)["items"] == expected
    assert int(response.headers["X-Row-Count"]) == len(expected)


def test_every_catalog_filter_is_exercised(facts):
    """Each resource's filters in the catalog have a case above (the track record's below)."""
    tried = {}
    for name in FILTERED:
        tried.setdefault(name.split()[0], set()).add(name.split()[-1])
    tried["matches"] |= {"from", "to"}
    tried["predictions"] |= {"to"}  # the base export's range
    tried["odds"] |= {"from", "to"}  # the base export's range, counted in the database
    tried["track-record"] = {"from", "to"}
    tried["leagues"] = set()
    assert {resource: set(names) for resource, names in facts.filters.items()} == tried


def test_a_track_record_export_is_the_track_record_flattened(client, world, facts):
    parameters = base_parameters(facts, "track-record")
    rows = ok(export(client, world, "track-record", "json", parameters))["items"]
    report = ok(client.get(f"{TRACK_RECORD}?{urlencode(parameters)}", headers=world.people["pro"]))
    groupings = {
        "month": ("byMonth", "month"),
        "market": ("byMarket", "market"),
        "rating": ("byRating", "rating"),
        "competitionType": ("byCompetitionType", "competitionType"),
    }
    expected = []
    for part in ("live", "backfilled"):
        record = report[part]
        figures = {name: record[name] for name in FIGURES}
        expected.append({"part": part, "groupBy": "all", "group": None, **figures})
        for group_by, (key, label) in groupings.items():
            for item in record[key]:
                figures = {name: item[name] for name in FIGURES}
                expected.append(
                    {"part": part, "groupBy": group_by, "group": item[label], **figures}
                )
    assert [dict(sorted(row.items())) for row in rows] == [
        dict(sorted(row.items())) for row in expected
    ]


@pytest.mark.parametrize(("kind", "status"), [("admin", 200), ("free", 403)])
def test_exports_are_for_pro_and_admin(client, world, kind, status):
    response = export(client, world, "leagues", "csv", kind=kind)
    if status == 200:
        assert response.status_code == 200 and response.mimetype == "text/csv"
        assert response.get_data(as_text=True).startswith("id,code,name,")
        assert (
            Export.get_by_id(int(response.headers["X-Export-Id"])).user_id == world.users[kind].id
        )
    else:
        asserts.problem(response, 403, "subscription-required")


def test_anonymous_exports_get_a_401(client, world):
    asserts.unauthorized(client.post(EXPORTS, json={"resource": "leagues", "format": "csv"}))
