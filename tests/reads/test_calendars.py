"""Calendars: a league's and a user's own (following their alert subscriptions, or the leagues
they choose), read back by the ``icalendar`` library as a calendar app would; the premium rule in
them; the calendar token, rotated; the text writer's folding and escaping."""

from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

import icalendar
import pytest

from models import Match, User
from services.accounts import users
from services.reads import ical
from tests import asserts, factories
from tests.helpers import NOW, counted_queries, ok

BASE = "https://picks.example"
LEAGUE = ("E0", "Premier League", "England", "top-flight")
OTHER = ("SP1", "La Liga", "Spain", "top-flight")
KICKOFF = NOW + timedelta(days=1, hours=6)
#: Names a text value must escape (comma, semicolon, backslash) and write in UTF-8.
HOME = "Brighton & Hove, Albion; \\ FC"
AWAY = "Żółć Ümlaut Ñandú Şehir Kulübü Spor Kulübü"
TOKEN = "/api/me/calendar-token"


@pytest.fixture
def clock():
    return factories.Clock(NOW)


@pytest.fixture
def app(make_app, clock):
    # A bot token: alert subscriptions by Telegram may be made (none is sent here).
    return make_app(
        CLOCK=clock,
        PUBLIC_BASE_URL=BASE,
        TELEGRAM_BOT_TOKEN="123456:calendar-test-bot",
        RATELIMIT_AUTH="1000 per minute",
    )


@pytest.fixture
def world(app, people):
    """A coming match with an A pick (locking it) and a B pick, one of another league, one
    past the window; the people."""
    with app.app_context():
        match = factories.match(HOME, AWAY, kickoff=KICKOFF, status="scheduled", league=LEAGUE)
        factories.pick(match, selection="away", odds=3.45, bookmaker="pinnacle", rating="A")
        factories.pick(match, market="btts", selection="yes", odds=1.91, rating="B")
        other = factories.match(
            "Sevilla", "Betis", kickoff=KICKOFF, status="scheduled", league=OTHER
        )
        factories.pick(other, selection="draw", odds=3.3, rating="C")
        factories.match(
            "Late", "Comers", kickoff=NOW + timedelta(days=15), status="scheduled", league=LEAGUE
        )
        factories.match(
            "Long", "Ago", kickoff=NOW - timedelta(days=3), status="finished", league=LEAGUE
        )
        return {
            "match": match.id,
            "other": other.id,
            "leagues": {"E0": match.league_id, "SP1": other.league_id},
            "people": people,
        }


def calendar(response) -> icalendar.Calendar:
    """The calendar of a 200, as a calendar app reads it."""
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.headers["Content-Type"] == "text/calendar; charset=utf-8"
    return icalendar.Calendar.from_ical(response.get_data())


def events(parsed) -> dict:
    """The calendar's events by summary."""
    return {str(event["SUMMARY"]): event for event in parsed.walk("VEVENT")}


def token_of(client, headers) -> str:
    return ok(client.get(TOKEN, headers=headers))["token"]


# A league's calendar


def test_a_league_calendar_reads_as_a_calendar_app_reads_it(client, world):
    parsed = calendar(client.get("/api/calendars/leagues/E0.ics"))
    assert (str(parsed["VERSION"]), str(parsed["CALSCALE"]), str(parsed["METHOD"])) == (
        "2.0",
        "GREGORIAN",
        "PUBLISH",
    )
    assert "Sports Pick Service" in str(parsed["PRODID"])
    assert str(parsed["X-WR-CALNAME"]) == "Premier League (England): matches and picks"
    assert parsed["REFRESH-INTERVAL"].dt == timedelta(hours=1)
    assert str(parsed["X-PUBLISHED-TTL"]) == "PT1H"
    found = events(parsed)
    # The window: from two days back to 14 ahead; the other league's match is not in it.
    assert list(found) == [f"{HOME} vs {AWAY}"]
    event = found[f"{HOME} vs {AWAY}"]
    assert str(event["UID"]) == f"match-{world['match']}@picks.example"
    assert event.decoded("DTSTART") == KICKOFF
    assert event.decoded("DTSTART").tzinfo is not None
    assert event.decoded("DTEND") - event.decoded("DTSTART") == timedelta(hours=2)
    assert event.decoded("DTSTAMP").tzinfo is not None
    assert str(event["URL"]).startswith(f"{BASE}/api/v1/seo/predictions/")
    assert str(event["STATUS"]) == "CONFIRMED"
    assert event["CATEGORIES"].cats == ["Premier League"]


def test_lines_are_folded_at_75_octets_with_crlf_and_text_escaped(client, world):
    body = client.get("/api/calendars/leagues/E0.ics").get_data()
    assert body.endswith(b"\r\n")
    lines = body.split(b"\r\n")[:-1]
    assert all(len(line) <= 75 for line in lines)
    assert all(b"\n" not in line and b"\r" not in line for line in lines)
    assert any(line.startswith(b" ") for line in lines)  # the long ones were folded
    for line in lines:
        line.decode()  # a fold never cuts a UTF-8 character
    unfolded = body.replace(b"\r\n ", b"").decode()
    assert "SUMMARY:Brighton & Hove\\, Albion\\; \\\\ FC vs Żółć Ümlaut" in unfolded
    # Read back, the names are exactly the teams'.
    event = events(icalendar.Calendar.from_ical(body))[f"{HOME} vs {AWAY}"]
    assert str(event["SUMMARY"]) == f"{HOME} vs {AWAY}"
    assert str(event["DESCRIPTION"]).splitlines()[:2] == ["Premier League (England)", "Picks:"]


def description(response) -> str:
    return str(events(calendar(response))[f"{HOME} vs {AWAY}"]["DESCRIPTION"])


def test_a_locked_pick_shows_anonymous_and_free_readers_only_its_market_and_rating(client, world):
    for headers in ({}, world["people"]["free"][1]):
        text = description(client.get("/api/calendars/leagues/E0.ics", headers=headers))
        assert "Match result, rated A: locked until kick-off." in text
        # The match is locked whole: its B pick too; no selection, price or bookmaker shows.
        assert "Both teams score, rated B: locked until kick-off." in text
        for secret in ("win", "3.45", "1.91", "pinnacle", "bet365", "edge", "Both score"):
            assert secret not in text


def test_pro_readers_see_every_pick_in_full(client, world):
    text = description(
        client.get("/api/calendars/leagues/E0.ics", headers=world["people"]["pro"][1])
    )
    assert (
        f"Match result, rated A: {AWAY} win at 3.45 (pinnacle), edge +10.0 %, no stake "
        "suggested (the evidence behind it is thin)." in text
    )
    assert "Both teams score, rated B: Both score at 1.91 (bet365)" in text


def test_an_open_pick_shows_its_suggested_stake_and_a_locked_one_does_not(make_app, clock):
    app = make_app(CLOCK=clock, PUBLIC_BASE_URL=BASE, STAKE_MIN_SETTLED=0)
    client = app.test_client()
    with app.app_context():
        match = factories.match(HOME, AWAY, kickoff=KICKOFF, status="scheduled", league=LEAGUE)
        # A quarter of Kelly at 0.55 and 3.45 is 9.2 %: capped at 2 %.
        factories.pick(match, selection="away", odds=3.45, bookmaker="pinnacle", rating="A")
        people = factories.people()
    pro = description(client.get("/api/calendars/leagues/E0.ics", headers=people["pro"][1]))
    assert "edge +10.0 %, suggested stake 2.00 % of the bankroll." in pro
    free = description(client.get("/api/calendars/leagues/E0.ics", headers=people["free"][1]))
    assert "locked until kick-off" in free and "stake" not in free


def test_from_kick_off_every_pick_is_public(client, world, clock):
    clock.advance(days=1, hours=6)
    text = description(client.get("/api/calendars/leagues/E0.ics"))
    assert f"{AWAY} win at 3.45 (pinnacle)" in text


def test_a_played_match_shows_its_result_and_how_its_picks_did_and_a_cancelled_one_says_so(
    client, app
):
    with app.app_context():
        played = factories.match(
            "Played", "Here", kickoff=NOW - timedelta(days=1), goals=(2, 1), league=LEAGUE
        )
        pick = factories.pick(
            played, selection="home", odds=2.2, rating="A", status="won", profit=1.2,
            settled_at=NOW - timedelta(hours=20),
        )  # fmt: skip
        # When the match or a pick of it last changed (the rows' own clocks, not the app's).
        changed = max(Match.get_by_id(played.id).updated_at, pick.created_at, pick.settled_at)
        factories.match("Called", "Off", kickoff=KICKOFF, status="cancelled", league=LEAGUE)
    found = events(calendar(client.get("/api/calendars/leagues/E0.ics")))
    text = str(found["Played vs Here"]["DESCRIPTION"])
    assert "Result: Played 2–1 Here" in text
    assert (
        "Match result, rated A: Played win at 2.20 (bet365), edge +10.0 %, no stake suggested "
        "(the evidence behind it is thin); won, +1.20 units." in text
    )
    assert found["Played vs Here"].decoded("DTSTAMP") == changed.replace(microsecond=0)
    assert str(found["Called vs Off"]["STATUS"]) == "CANCELLED"
    assert "Match cancelled." in str(found["Called vs Off"]["DESCRIPTION"])


def test_a_calendar_costs_the_same_queries_whatever_its_matches(client, app, world):
    client.get("/api/calendars/leagues/SP1.ics")  # the app's first request checks more
    counts = []
    for extra in (0, 6):
        with app.app_context():
            for n in range(extra):
                match = factories.match(
                    f"Extra {n}", f"Side {n}", kickoff=KICKOFF + timedelta(hours=n),
                    status="scheduled", league=LEAGUE,
                )  # fmt: skip
                factories.pick(match, rating="B")
        with counted_queries() as statements:
            parsed = calendar(client.get("/api/calendars/leagues/E0.ics"))
        assert len(events(parsed)) == 1 + extra
        # The data version is read once more where the fast path found the answer outdated.
        queries = [each for each in statements if each.startswith("(")]  # not the pool's
        counts.append(sum("data_version" not in query for query in queries))
    # The next unlock (the answer's lifetime), the league, the matches, the locked ones, their
    # picks, the settled picks their stakes are judged by, when they changed.
    assert counts == [7, 7]


def test_an_unknown_league_is_a_404(client, world):
    asserts.problem(client.get("/api/calendars/leagues/XX9.ics"), 404, "not-found")
    assert client.get("/api/calendars/leagues/E0.ical").status_code == 404
    assert client.get("/api/calendars/leagues/E%200.ics").status_code == 404


def test_a_calendar_answers_a_conditional_get_with_304(client, world):
    first = client.get("/api/calendars/leagues/E0.ics")
    assert first.headers["ETag"] and first.headers["Cache-Control"].startswith("public")
    again = client.get(
        "/api/calendars/leagues/E0.ics", headers={"If-None-Match": first.headers["ETag"]}
    )
    assert again.status_code == 304 and again.get_data() == b""
    # Anonymous and Pro answers are apart: a Pro reader's ETag is not the anonymous one.
    pro = client.get("/api/calendars/leagues/E0.ics", headers=world["people"]["pro"][1])
    assert pro.headers["ETag"] != first.headers["ETag"]


# A user's own calendar: the leagues they choose (without alert subscriptions)


def mine(client, token, leagues="E0,SP1", **more):
    return client.get(
        f"/api/calendars/mine.ics?{urlencode({'token': token, 'leagues': leagues, **more})}"
    )


def test_a_users_calendar_holds_the_leagues_chosen_as_the_user_may_see_them(client, world):
    pro, free = world["people"]["pro"], world["people"]["free"]
    answer = ok(client.get(TOKEN, headers=pro[1]))
    assert answer["url"] == f"{BASE}/api/calendars/mine.ics?token={answer['token']}"
    found = events(calendar(client.get(f"{answer['url']}&leagues=SP1,E0")))
    assert sorted(found) == [f"{HOME} vs {AWAY}", "Sevilla vs Betis"]
    assert f"{AWAY} win at 3.45" in str(found[f"{HOME} vs {AWAY}"]["DESCRIPTION"])
    free_text = description(mine(client, token_of(client, free[1]), "E0"))
    assert "locked until kick-off" in free_text and "3.45" not in free_text


def test_a_users_calendar_refuses_an_unknown_league_and_bad_arguments(client, world):
    token = token_of(client, world["people"]["pro"][1])
    body = asserts.problem(mine(client, token, "E0,NOPE"), 404, "not-found")
    assert "NOPE" in body["detail"]
    for query, name in (
        ({"token": token, "leagues": "E0,"}, "leagues"),
        ({"token": token, "leagues": ",".join(f"L{n}" for n in range(21))}, "leagues"),
        ({"token": "1.short", "leagues": "E0"}, "token"),
        ({"leagues": "E0"}, "token"),
        ({"token": token, "leagues": "E0", "league": "E0"}, "league"),
    ):
        response = client.get(f"/api/calendars/mine.ics?{urlencode(query)}")
        assert name in asserts.problem(response, 422, "validation-error")["errors"]


def test_a_token_of_no_account_or_badly_signed_is_a_404(client, world):
    token = token_of(client, world["people"]["pro"][1])
    user_id, mac = token.split(".")
    forged = f"{user_id}.{'A' * 43}"
    other = f"{int(user_id) + 100}.{mac}"
    for bad in (forged, other, f"2147483648.{mac}"):
        asserts.problem(mine(client, bad), 404, "not-found")


def test_a_rotated_token_is_refused_at_once_and_the_new_one_works(client, world):
    headers = world["people"]["pro"][1]
    old = token_of(client, headers)
    assert token_of(client, headers) == old  # the same until rotated
    assert calendar(mine(client, old))  # and now kept in the answer cache
    rotated = client.post(TOKEN, headers=headers)
    body = ok(rotated)
    assert rotated.headers["Cache-Control"] == "no-store"
    new = body["calendar"]["token"]
    assert new != old and body["calendar"]["url"].endswith(new)
    asserts.problem(mine(client, old), 404, "not-found")
    assert calendar(mine(client, new))
    # One stamp signs both: the old access token ended too; the session given works.
    asserts.unauthorized(client.get(TOKEN, headers=headers), invalid_token=True)
    session = factories.bearer(body["session"]["accessToken"])
    assert token_of(client, session) == new


def test_a_suspended_account_reads_its_calendar_as_anyone_does(client, app, world):
    pro = world["people"]["pro"]
    token = token_of(client, pro[1])
    with app.app_context():
        users.update(pro[0].email, status="suspended")
    text = description(mine(client, token, "E0"))
    assert "locked until kick-off" in text and "3.45" not in text


def test_the_token_endpoints_need_a_signed_in_active_account(client, world):
    asserts.unauthorized(client.get(TOKEN))
    asserts.unauthorized(client.post(TOKEN))
    suspended = world["people"]["suspended"][1]
    asserts.problem(client.get(TOKEN, headers=suspended), 403, "account-suspended")


def test_the_calendars_are_documented(client):
    spec = client.get("/openapi.json").get_json()
    league = spec["paths"]["/api/calendars/leagues/{code}.ics"]["get"]
    assert "text/calendar" in league["responses"]["200"]["content"]
    assert "404" in league["responses"]
    chosen = spec["paths"]["/api/calendars/mine.ics"]["get"]
    required = {each["name"]: each["required"] for each in chosen["parameters"]}
    assert required == {"token": True, "leagues": False}
    assert "alert subscriptions" in chosen["responses"]["200"]["description"]
    assert set(spec["paths"][TOKEN]) == {"get", "post"}


# The text writer


def test_folding_never_cuts_a_character_and_unfolds_to_the_line():
    line = "DESCRIPTION:" + "é" * 50 + "東" * 30 + "x" * 100
    folded = ical.fold(line)
    parts = folded.encode().split(b"\r\n")
    assert all(len(part) <= 75 for part in parts)
    assert all(part.startswith(b" ") for part in parts[1:])
    assert folded.replace("\r\n ", "") == line
    assert ical.fold("SHORT:x") == "SHORT:x"
    exactly = "X:" + "a" * 73
    assert ical.fold(exactly) == exactly and ical.fold(exactly + "b") == f"{exactly}\r\n b"


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("a,b;c\\d", "a\\,b\\;c\\\\d"),
        ("one\ntwo\r\nthree\rfour", "one\\ntwo\\nthree\\nfour"),
        ("bell\x07 and tab\t", "bell and tab\t"),
        ("Ümlaut", "Ümlaut"),
    ],
)
def test_text_values_are_escaped(value, written):
    assert ical.text(value) == written


def test_durations_and_instants():
    assert ical.duration(timedelta(hours=1)) == "PT1H"
    assert ical.duration(timedelta(days=1, minutes=30)) == "P1DT30M"
    assert ical.instant(datetime(2026, 11, 21, 16, 45, tzinfo=UTC)) == "20261121T164500Z"
    with pytest.raises(ValueError):
        ical.duration(timedelta(0))


def test_a_users_calendar_shows_the_plan_of_now_and_is_never_kept(client, app, world):
    """An account's own calendar is neither cached nor kept on the way: downgraded from Pro, the
    same address shows its locked pick locked at once."""
    pro = world["people"]["pro"]
    token = token_of(client, pro[1])
    first = mine(client, token, "E0")
    assert first.headers["Cache-Control"] == "no-store" and "ETag" not in first.headers
    assert "3.45" in description(first)
    with app.app_context():
        User.update(plan="free").where(User.id == pro[0].id).execute()  # not via the API
    assert "3.45" not in description(mine(client, token, "E0"))


# A user's own calendar: their alert subscriptions

ALERTS = "/api/me/alerts"


def subscribe(client, headers, **filters) -> dict:
    """An alert subscription by Telegram (``leagueIds``, ``markets``, ``ratings``)."""
    response = client.post(
        ALERTS, json={"channel": "telegram", "address": "424242", **filters}, headers=headers
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def own(client, token, **query):
    return client.get(f"/api/calendars/mine.ics?{urlencode({'token': token, **query})}")


@pytest.fixture
def third(app, world):
    """A match of a third league with only a B pick on both teams to score."""
    with app.app_context():
        match = factories.match(
            "Roma", "Lazio", kickoff=KICKOFF, status="scheduled",
            league=("I1", "Serie A", "Italy", "top-flight"),
        )  # fmt: skip
        factories.pick(match, market="btts", selection="no", odds=2.05, rating="B")
    return match.id


def test_a_users_calendar_follows_their_alert_subscriptions(client, world, third):
    headers = world["people"]["pro"][1]
    token = token_of(client, headers)
    # The Premier League's A picks; and, in every league, the match-result picks rated C.
    subscribe(client, headers, leagueIds=[world["leagues"]["E0"]], ratings=["A"])
    subscribe(client, headers, markets=["1x2"], ratings=["C"])
    response = own(client, token)
    assert response.headers["Cache-Control"] == "no-store" and "ETag" not in response.headers
    parsed = calendar(response)
    assert str(parsed["X-WR-CALNAME"]) == "Your matches and picks"
    caldesc = str(parsed["X-WR-CALDESC"])
    assert caldesc.startswith("Follows your alert subscriptions")
    assert "(Premier League)" in caldesc and "any other league" in caldesc
    found = events(parsed)
    # The league named, whole (its match past the window left out), and the match of another
    # league with a pick asked for; not Serie A's, whose one pick nobody asked for.
    assert sorted(found) == [f"{HOME} vs {AWAY}", "Sevilla vs Betis"]
    text = str(found[f"{HOME} vs {AWAY}"]["DESCRIPTION"])
    assert f"Match result, rated A: {AWAY} win at 3.45 (pinnacle)" in text
    assert "Both teams score" not in text  # rated B: not asked for
    assert "Match result, rated C: Draw at 3.30" in str(found["Sevilla vs Betis"]["DESCRIPTION"])
    # ``leagues`` keeps the calendar to its leagues.
    narrowed = calendar(own(client, token, leagues="SP1"))
    assert list(events(narrowed)) == ["Sevilla vs Betis"]
    assert "kept to La Liga" in str(narrowed["X-WR-CALDESC"])


def test_a_match_of_a_league_followed_without_a_pick_asked_for_says_so(client, world):
    headers = world["people"]["pro"][1]
    subscribe(client, headers, leagueIds=[world["leagues"]["SP1"]], markets=["btts"])
    (event,) = events(calendar(own(client, token_of(client, headers)))).values()
    assert str(event["SUMMARY"]) == "Sevilla vs Betis"
    assert "No pick you follow for this match." in str(event["DESCRIPTION"])
    assert "3.30" not in str(event["DESCRIPTION"])
    # Kept to a league no subscription asks for: empty, and it says why.
    elsewhere = calendar(own(client, token_of(client, headers), leagues="E0"))
    assert list(elsewhere.walk("VEVENT")) == []
    assert "none of them asks for a pick of these leagues" in str(elsewhere["X-WR-CALDESC"])


def test_a_free_subscriber_sees_a_sealed_pick_sealed(client, world):
    headers = world["people"]["free"][1]
    subscribe(client, headers, leagueIds=[world["leagues"]["E0"]])
    text = str(events(calendar(own(client, token_of(client, headers))))[f"{HOME} vs {AWAY}"][
        "DESCRIPTION"
    ])  # fmt: skip
    assert "Match result, rated A: locked until kick-off." in text
    # Sealed with it: the B pick of the same match.
    assert "Both teams score, rated B: locked until kick-off." in text
    for secret in ("win", "3.45", "1.91", "pinnacle", "bet365", "edge", "Both score"):
        assert secret not in text


def test_a_user_without_subscriptions_gets_an_empty_calendar_that_says_how_to_fill_it(
    client, world
):
    headers = world["people"]["pro"][1]
    token = token_of(client, headers)
    response = own(client, token)
    assert response.headers["Cache-Control"] == "no-store"
    parsed = calendar(response)
    assert list(parsed.walk("VEVENT")) == []
    caldesc = str(parsed["X-WR-CALDESC"])
    assert caldesc.startswith("Empty") and ALERTS in caldesc and "&leagues=" in caldesc
    # Subscribing fills it at once, and unsubscribing empties it (never kept).
    made = subscribe(client, headers, leagueIds=[world["leagues"]["SP1"]])
    assert list(events(calendar(own(client, token)))) == ["Sevilla vs Betis"]
    assert client.delete(f"{ALERTS}/{made['id']}", headers=headers).status_code == 204
    assert list(calendar(own(client, token)).walk("VEVENT")) == []


def test_a_users_calendar_costs_the_same_queries_whatever_its_subscriptions(
    client, app, world, third
):
    headers = world["people"]["free"][1]
    token = token_of(client, headers)
    subscribe(client, headers, leagueIds=[world["leagues"]["E0"]], ratings=["A"])
    own(client, token)
    counts = []
    for more in (
        {"markets": ["1x2"], "ratings": ["C"]},
        {"leagueIds": [world["leagues"]["SP1"]], "markets": ["btts"]},
    ):
        subscribe(client, headers, **more)
        with counted_queries() as statements:
            calendar(own(client, token, leagues="E0,SP1,I1"))
        queries = [each for each in statements if each.startswith("(")]
        counts.append(sum("data_version" not in query for query in queries))
    # The account, the leagues of ``leagues``, its subscriptions, the names of the leagues they
    # name, the matches, the locked ones, their picks, the settled picks their stakes are judged
    # by, when they changed.
    assert counts == [9, 9]
