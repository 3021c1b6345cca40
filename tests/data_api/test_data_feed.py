"""The Data API's match feed and track record on small hand-built worlds: whole UTC days, a
cursor walk while matches arrive, and track-record figures worked out by hand."""

from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

import pytest

from enums import CARD_RELATIONS, MARKETS
from tests import asserts, factories

MATCHES = "/api/v1/data/matches"
TRACK_RECORD = "/api/v1/data/track-record"
DAY = datetime(2026, 11, 21, tzinfo=UTC)
CUP = ("CUP", "Test Cup", "Testland", "cup")


def ok(response):
    """The JSON body of a 200."""
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.mimetype == "application/json"
    return response.get_json()


def store(name, kickoff, **options):
    """A scheduled match named ``name`` (its teams are ``name`` home and away); its id."""
    return factories.match(
        f"{name} H", f"{name} A", kickoff=kickoff, status="scheduled", **options
    ).id


# Whole UTC days


@pytest.fixture
def around_a_day(ctx):
    """Matches at the edges of DAY: name → id."""
    moments = {
        "eve": DAY - timedelta(seconds=1),
        "midnight": DAY,
        "noon": DAY + timedelta(hours=12),
        "late": DAY + timedelta(hours=23, minutes=59),
        "last second": DAY + timedelta(hours=23, minutes=59, seconds=59),
        "next midnight": DAY + timedelta(days=1),
    }
    return {name: store(name, moment) for name, moment in moments.items()}


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ({"from": "2026-11-21", "to": "2026-11-21"}, ["midnight", "noon", "late", "last second"]),
        ({"to": "2026-11-21"}, ["eve", "midnight", "noon", "late", "last second"]),
        ({"from": "2026-11-21"}, ["midnight", "noon", "late", "last second", "next midnight"]),
        ({"from": "2026-11-22", "to": "2026-11-22"}, ["next midnight"]),
        ({"to": "2026-11-21T23:59:00Z"}, ["eve", "midnight", "noon", "late"]),
        ({"from": "2026-11-21T23:59:00Z", "to": "2026-11-21T23:59:00Z"}, ["late"]),
        ({"from": "2026-11-21T00:30:00+01:00", "to": "2026-11-21T00:00:00"}, ["eve", "midnight"]),
        (
            {"from": "2026-11-21T12:00:00", "to": "2026-11-22T00:59:59+01:00"},
            ["noon", "late", "last second"],
        ),
    ],
)
def test_a_bare_date_is_its_whole_utc_day_and_a_date_time_an_instant(
    client, people, around_a_day, query, names
):
    body = ok(client.get(f"{MATCHES}?{urlencode(query)}", headers=people["pro"][1]))
    assert [item["id"] for item in body["items"]] == [around_a_day[name] for name in names]


def test_from_after_to_is_a_422_naming_to(client, people):
    query = urlencode({"from": "2026-11-21T00:00:01Z", "to": "2026-11-21T00:00:00Z"})
    body = asserts.problem(
        client.get(f"{MATCHES}?{query}", headers=people["pro"][1]), 422, "validation-error"
    )
    assert list(body["errors"]) == ["to"]


# What a page may cost


@pytest.mark.parametrize(
    ("include", "bound"),
    [
        (None, 1000),
        ("odds", 250),
        ("predictions", 200),
        ("picks", 500),
        ("intelligence", 90),
        ("odds,predictions,picks", 110),
        ("picks,odds,picks", 200),  # a relation named twice costs once
        ("odds,predictions,picks,intelligence", 50),
    ],
)
def test_a_page_is_bounded_by_what_it_includes(client, people, include, bound):
    query = {"limit": bound, **({"include": include} if include else {})}
    assert ok(client.get(f"{MATCHES}?{urlencode(query)}", headers=people["pro"][1]))
    query["limit"] = bound + 1
    response = client.get(f"{MATCHES}?{urlencode(query)}", headers=people["pro"][1])
    body = asserts.problem(response, 422, "validation-error")
    assert list(body["errors"]) == ["limit"]
    if include:  # bare, 1001 is past the parameter's documented maximum
        named = [name for name in CARD_RELATIONS if name in include.split(",")]
        assert body["errors"]["limit"] == [f"At most {bound} with include={','.join(named)}."]


@pytest.mark.parametrize(
    ("include", "limit"), [(None, 100), ("odds,predictions,picks", 100), ("intelligence", 90)]
)
def test_without_a_limit_a_page_holds_100_or_its_bound(client, people, include, limit):
    query = urlencode({"include": include} if include else {})
    assert ok(client.get(f"{MATCHES}?{query}", headers=people["pro"][1]))["limit"] == limit


def test_the_bounds_are_documented_on_the_parameter(client):
    spec = client.get("/openapi.json").get_json()
    parameters = spec["paths"][MATCHES]["get"]["parameters"]
    limit = next(each for each in parameters if each["name"] == "limit")
    assert limit["schema"]["maximum"] == 1000
    assert "all four 50" in limit["description"] and "`odds` alone 250" in limit["description"]


# The cursor walk


def walk_pages(client, headers, limit, cursor=None, pages=None):
    """Follow the feed from ``cursor`` for ``pages`` pages (all when None); (ids, cursor)."""
    ids = []
    while pages is None or pages > 0:
        query = {"limit": limit, **({"cursor": cursor} if cursor else {})}
        body = ok(client.get(f"{MATCHES}?{urlencode(query)}", headers=headers))
        ids += [item["id"] for item in body["items"]]
        cursor = body["nextCursor"]
        if cursor is None:
            break
        pages = None if pages is None else pages - 1
    return ids, cursor


def test_a_walk_returns_every_match_once_while_matches_arrive(client, people, ctx):
    """Five matches share each of four kick-offs, stored out of order; pages of three split the
    groups. Matches added mid-walk before the cursor never appear, nor does any match twice;
    those after it, even at the cursor's own kick-off, all appear, in (kick-off, id) order."""
    headers = people["pro"][1]
    kickoffs = [DAY + timedelta(hours=hour) for hour in (12, 15, 18, 20)]
    kickoff_of = {}
    for slot in (3, 1, 0, 2):  # ids do not follow kick-offs
        for index in range(5):
            kickoff_of[store(f"S{slot}M{index}", kickoffs[slot])] = kickoffs[slot]
    seen, cursor = walk_pages(client, headers, limit=3, pages=2)
    assert len(seen) == 6  # the cursor sits on the first match of the second kick-off
    assert kickoff_of[seen[-1]] == kickoffs[1]
    added = {
        "before everything": store("N0", kickoffs[0] - timedelta(hours=1)),
        "at the first kick-off": store("N1", kickoffs[0]),
        "at the cursor's kick-off": store("N2", kickoffs[1]),
        "later": store("N3", kickoffs[2] + timedelta(minutes=1)),
        "last": store("N4", kickoffs[3] + timedelta(hours=1)),
    }
    kickoff_of.update(
        {
            added["at the cursor's kick-off"]: kickoffs[1],
            added["later"]: kickoffs[2] + timedelta(minutes=1),
            added["last"]: kickoffs[3] + timedelta(hours=1),
        }
    )
    rest, _ = walk_pages(client, headers, limit=3, cursor=cursor)
    walked = seen + rest
    assert len(walked) == len(set(walked))
    assert added["before everything"] not in walked and added["at the first kick-off"] not in walked
    assert sorted(walked) == sorted(kickoff_of)
    assert walked == sorted(walked, key=lambda match_id: (kickoff_of[match_id], match_id))
    # A fresh walk sees the new ones too, each once.
    fresh, _ = walk_pages(client, headers, limit=4)
    assert len(fresh) == len(set(fresh)) == 25


# The track record, worked out by hand


def figures(**given):
    """Track-record figures: zeros and nulls but for ``given``."""
    return {
        "picks": 0,
        "won": 0,
        "lost": 0,
        "void": 0,
        "halfWon": 0,
        "halfLost": 0,
        "pending": 0,
        "hitRate": None,
        "staked": 0.0,
        "profit": 0.0,
        "roi": None,
        "roiStdError": None,
        "avgOdds": None,
        "avgEdge": None,
        "avgClv": None,
        "clvExcluded": 0,
        "avgClosingEv": None,
        "avgClosingEvStdError": None,
        "closingEvExcluded": 0,
        "maxDrawdown": 0.0,
        "longestLosingStreak": 0,
        **given,
    }


@pytest.fixture
def six_picks(ctx):
    """Four live picks and two backfilled ones across January and February 2026, two leagues."""
    jan10 = factories.match("A", "B", kickoff=datetime(2026, 1, 10, 15, tzinfo=UTC))
    jan31 = factories.match("C", "D", kickoff=datetime(2026, 1, 31, 23, 59, tzinfo=UTC))
    feb01 = factories.match("E", "F", kickoff=datetime(2026, 2, 1, tzinfo=UTC), league=CUP)
    feb15 = factories.match(
        "G", "H", kickoff=datetime(2026, 2, 15, 19, 45, tzinfo=UTC), status="scheduled"
    )
    factories.pick(
        jan10,
        "1x2",
        odds=2.5,
        edge=0.10,
        rating="A",
        status="won",
        profit=1.5,
        clv=0.05,
        closing_probability=0.45,
        is_live=True,
    )
    factories.pick(
        jan31,
        "ou25",
        "over",
        odds=1.9,
        edge=0.06,
        rating="B",
        status="lost",
        profit=-1.0,
        clv=-0.02,
        closing_probability=0.5,
        is_live=True,
    )
    factories.pick(
        feb01,
        "btts",
        "yes",
        odds=2.0,
        edge=0.05,
        rating="B",
        status="void",
        profit=0.0,
        is_live=True,
    )
    factories.pick(feb15, "1x2", "away", odds=3.0, edge=0.03, rating="C", is_live=True)
    factories.pick(
        jan10, "ou25", "under", odds=1.8, edge=0.04, rating="C", status="lost", profit=-1.0
    )
    factories.pick(feb15, "btts", "no", odds=2.2, edge=0.09, rating="A", status="won", profit=1.2)


LIVE = figures(
    picks=4,
    won=1,
    lost=1,
    void=1,
    pending=1,
    hitRate=0.5,
    staked=2.0,
    profit=0.5,
    roi=0.25,
    # Profits 1.5 and −1 around 0.25: √((1.25² + 1.25²) / 1 · 2) / 2 = 1.25.
    roiStdError=1.25,
    avgOdds=2.13,  # (2.5 + 1.9 + 2.0) / 3 of the settled picks only, to 2 decimals
    avgEdge=(0.10 + 0.06 + 0.05) / 3,
    avgClv=0.015,
    clvExcluded=1,  # the void pick, which has no closing value
    avgClosingEv=0.0375,
    # Closing EVs 0.125 and −0.05 around 0.0375: √(2 · 0.0875² / 1) / √2 = 0.0875.
    avgClosingEvStdError=0.0875,
    closingEvExcluded=1,
    maxDrawdown=1.0,
    longestLosingStreak=1,
)
BACKFILLED = figures(
    picks=2,
    won=1,
    lost=1,
    hitRate=0.5,
    staked=2.0,
    profit=0.2,
    roi=0.1,
    roiStdError=1.1,
    avgOdds=2.0,
    avgEdge=0.065,
    clvExcluded=2,  # neither settled pick has a closing value
    closingEvExcluded=2,
    maxDrawdown=1.0,
    longestLosingStreak=1,
)


def approx(expected):
    """``expected`` with its floats compared approximately."""
    return {
        name: pytest.approx(value) if isinstance(value, float) else value
        for name, value in expected.items()
    }


def strip(item, label):
    """An item of a grouping without its label."""
    return {name: value for name, value in item.items() if name != label}


def test_track_record_figures_agree_with_the_picks(client, people, six_picks):
    body = ok(client.get(TRACK_RECORD, headers=people["pro"][1]))
    live, backfilled = body["live"], body["backfilled"]
    groupings = ("byMonth", "byMarket", "byRating", "byCompetitionType")
    assert {name: live[name] for name in LIVE} == approx(LIVE)
    assert {name: backfilled[name] for name in BACKFILLED} == approx(BACKFILLED)
    assert [item["month"] for item in live["byMonth"]] == ["2026-01", "2026-02"]
    january, february = (strip(item, "month") for item in live["byMonth"])
    assert january == approx(
        figures(
            picks=2,
            won=1,
            lost=1,
            hitRate=0.5,
            staked=2.0,
            profit=0.5,
            roi=0.25,
            roiStdError=1.25,
            avgOdds=2.2,
            avgEdge=0.08,
            avgClv=0.015,
            avgClosingEv=0.0375,
            avgClosingEvStdError=0.0875,
            maxDrawdown=1.0,
            longestLosingStreak=1,
        )
    )
    assert february == approx(
        figures(
            picks=2,
            void=1,
            pending=1,
            avgOdds=2.0,
            avgEdge=0.05,
            clvExcluded=1,
            closingEvExcluded=1,
        )
    )
    markets = {item["market"]: strip(item, "market") for item in live["byMarket"]}
    assert list(markets) == list(MARKETS)
    assert markets["1x2"] == approx(
        figures(
            picks=2,
            won=1,
            pending=1,
            hitRate=1.0,
            staked=1.0,
            profit=1.5,
            roi=1.5,
            avgOdds=2.5,
            avgEdge=0.10,
            avgClv=0.05,
            avgClosingEv=0.125,
        )
    )
    assert markets["btts"] == approx(
        figures(picks=1, void=1, avgOdds=2.0, avgEdge=0.05, clvExcluded=1, closingEvExcluded=1)
    )
    ratings = {item["rating"]: item["picks"] for item in live["byRating"]}
    assert ratings == {"A": 1, "B": 2, "C": 1}
    kinds = {
        item["competitionType"]: strip(item, "competitionType")
        for item in live["byCompetitionType"]
    }
    assert list(kinds) == ["top-flight", "lower-league", "cup", "international"]
    assert [kinds[kind]["picks"] for kind in kinds] == [3, 0, 1, 0]
    assert kinds["lower-league"] == figures() == kinds["international"]
    assert all(sum(item["picks"] for item in live[name]) == 4 for name in groupings)
    assert [item["rating"] for item in backfilled["byRating"] if item["picks"]] == ["A", "C"]


@pytest.mark.parametrize(
    ("query", "live", "backfilled"),
    [
        ({"from": "2026-02-01"}, 2, 1),
        ({"to": "2026-01-31"}, 2, 1),  # the 23:59 pick is in
        ({"from": "2026-01-31T23:59:00Z", "to": "2026-02-01T00:00:00Z"}, 2, 0),
        ({"from": "2026-01-11", "to": "2026-01-30"}, 0, 0),
        ({"from": "2026-02-15", "to": "2026-02-15"}, 1, 1),
    ],
)
def test_track_record_range(client, people, six_picks, query, live, backfilled):
    body = ok(client.get(f"{TRACK_RECORD}?{urlencode(query)}", headers=people["pro"][1]))
    assert (body["live"]["picks"], body["backfilled"]["picks"]) == (live, backfilled)
    assert (body["from"], body["to"]) == (query.get("from"), query.get("to"))
    if not live:
        assert body["live"]["byMonth"] == []
        assert [item["picks"] for item in body["live"]["byMarket"]] == [0] * len(MARKETS)


# The Data API's own rate policy

PAGING = {"RATELIMIT_DATA": "600 per hour", "RATELIMIT_STRATEGY": "moving-window"}


def test_a_pro_user_walks_the_whole_feed_by_hundreds_within_the_data_policy(make_app):
    """37 pages of 100 are 37 requests of the ``data`` policy, not of the 20 of ``auth`` that
    sign-ins have: the walk passes, and the policy refuses only its 601st request. (An hour's
    window, so no test run is slow enough for a hit to leave it; the default's minute is pinned
    with the headers in test_rate_limits.)"""
    from engine.records import LeagueRecord, MatchRecord
    from services.feeds import imports

    app = make_app(**PAGING)
    client = app.test_client()
    with app.app_context():
        headers = factories.people()["pro"][1]
        league = LeagueRecord(*CUP)
        imports.store_records(
            [
                MatchRecord(
                    league=league,
                    season="2026-27",
                    kickoff_at=DAY + timedelta(minutes=n),
                    home_team=f"Feed H{n}",
                    away_team=f"Feed A{n}",
                    status="scheduled",
                )
                for n in range(3650)
            ]
        )
    ids = walk_pages(client, headers, limit=100)[0]
    assert len(ids) == len(set(ids)) == 3650  # 37 pages, the last of 50
    usage = client.get("/api/v1/data/usage", headers=headers)
    assert usage.headers["RateLimit-Policy"] == '"data";q=600;w=3600'
    assert usage.headers["X-RateLimit-Remaining"] == str(600 - 38)
    for _ in range(600 - 38):
        assert client.get("/api/v1/data/usage", headers=headers).status_code == 200
    limited = client.get(MATCHES, headers=headers)
    asserts.problem(limited, 429, "rate-limited")
    assert limited.headers["RateLimit-Policy"] == '"data";q=600;w=3600'
    assert limited.headers["X-RateLimit-Remaining"] == "0"
    assert 1 <= int(limited.headers["Retry-After"]) <= 3600
    login = client.post(
        "/api/auth/login", json={"email": "pro@example.com", "password": factories.PASSWORD}
    )
    assert login.status_code == 200 and login.headers["RateLimit-Policy"] == '"auth";q=20;w=60'
