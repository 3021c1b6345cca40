"""The premium rule, walked across every public answer: before kick-off nothing an anonymous or
free caller reads gives a locked pick back, alone or in combination; from kick-off all of it
shows.

"Gives back" is tested as non-interference: every public answer about the locked match is read,
then everything the lock hides (the pick's selection, price, bookmaker, probability and edge,
its market's published, sharp and model probabilities and best and sharp prices with their
bookmakers, the other markets' goal-model probabilities made with the pick and the published
ones they pool into, expected goals and strengths) is replaced with other values, and every
answer is read again: what stays visible (the other markets' prices and fair lines) does not
rebuild the pick. Any field, or any combination of fields (an average, a ranking, a distance, a
sentence), that depended on a hidden value would now read differently: its body, its size and
its ETag. The walk runs on the small world of tests/world.py.

The tests after it pin the rule's edges on a few matches of their own: only a pick rated A is
locked, and a cached locked answer lives until the next locked kick-off, no longer and no
shorter.
"""

import json
from datetime import UTC, datetime, timedelta

import pytest

from app import create_app
from models import Match, MatchIntelligence, OddsSummary, Pick, Prediction, bump_data_version
from models.schema import create_tables, drop_tables
from services.market import premium
from store.database import db
from tests import factories, helpers, world
from tests.helpers import UNLIMITED
from web.extensions import limiter

KINDS = ("anonymous", "free")
NOW = world.T0


class Clock:
    """The app's clock, moved by the tests."""

    def __init__(self, now):
        self.now = now

    def __call__(self):
        return self.now

    def rewind(self):
        """Back to NOW. Cached answers expect time to move forward only, so those made later
        are dropped (a new data version)."""
        self.now = NOW
        bump_data_version()


@pytest.fixture(scope="module")
def site(tmp_path_factory, schema_template):
    """The small world of tests/world.py at its NOW, on its own database for this module, with
    a clock the tests move and one signed-in user of each kind."""
    folder = tmp_path_factory.mktemp("premium")
    clock = Clock(NOW)
    if schema_template is not None:
        helpers.copy_sqlite(schema_template, folder / "test.db")
    app = create_app(helpers.settings(folder, CLOCK=clock, **UNLIMITED))
    limiter.reset()
    with app.app_context():
        if schema_template is None:
            drop_tables()
            create_tables()
        world.build(NOW)
        app.people = {kind: headers for kind, (_, headers) in factories.people().items()}
        app.people["anonymous"] = {}
        app.clock = clock
        yield app
    if not db.is_closed():
        db.close()


def locked_pick():
    """The first upcoming pick rated A, with its match."""
    return (
        Pick.select(Pick, Match)
        .join(Match)
        .where((Pick.rating == "A") & (Match.kickoff_at > NOW) & Pick.is_live)
        .order_by(Match.kickoff_at, Pick.id)
        .first()
    )


def answers(client, people, kind, pick) -> dict:
    """Every public answer that shows anything of ``pick``'s match, market or day, as ``kind``
    reads it: path → body (JSON, or the HTML page's text)."""
    match = pick.match
    day = match.kickoff_at.date().isoformat()
    headers = people[kind]
    paths = [
        f"/api/matches/{match.id}",
        f"/api/picks/today?date={day}",
        f"/api/picks/today?date={day}&rating=A&market={pick.market}",
        f"/api/v1/seo/predictions/{match.slug}",
        "/api/track-record/by-competition-type?isLive=true",
        "/api/track-record/by-competition-type?isLive=false",
        "/api/track-record/ledger",
        "/api/track-record/ledger/entries",
    ]
    for market in ("1x2", "ou25", "btts"):
        paths.append(f"/api/explorer/slate?date={day}&market={market}")
        for scope in ("league", "teams", "global"):
            paths.append(
                f"/api/explorer/comparable?matchId={match.id}&market={market}&scope={scope}"
            )
    found = {}
    for path in paths:
        response = client.get(path, headers=headers)
        assert response.status_code == 200, (path, response.get_data(as_text=True))
        found[path] = response.get_json()
        found[f"etag {path}"] = (response.headers.get("ETag"), len(response.get_data()))
    page = client.get(
        f"/api/v1/seo/predictions/{match.slug}", headers={**headers, "Accept": "text/html"}
    )
    assert page.status_code == 200
    found["html"] = page.get_data(as_text=True)
    for path in ("/", "/track-record"):  # the landing page shows the match; the record its pick
        page = client.get(path, headers={**headers, "Accept": "text/html"})
        assert page.status_code == 200
        found[f"html {path}"] = page.get_data(as_text=True)
    if kind != "anonymous":
        body = {"dateFrom": day, "dateTo": day}
        response = client.post("/api/backtest/run", json=body, headers=headers)
        assert response.status_code == 200
        found["backtest"] = response.get_json()
    return found


def hide_otherwise(pick) -> None:
    """Replace everything the lock hides with other values, as another pick would have had:
    the pick, and every price and probability of its match, in every market."""
    others = {"1x2": ("home", "draw", "away"), "ou25": ("over", "under"), "btts": ("yes", "no")}
    selections = others[pick.market]
    other = selections[(selections.index(pick.selection) + 1) % len(selections)]
    Pick.update(
        selection=other,
        odds=pick.odds + 1.37,
        bookmaker="another-bookmaker",
        probability=pick.probability / 2,
        edge=pick.edge + 0.21,
    ).where(Pick.id == pick.id).execute()
    even = {market: {name: 1.0 / len(names) for name in names} for market, names in others.items()}
    mine = (Prediction.match == pick.match_id) & (Prediction.market == pick.market)
    Prediction.update(
        probabilities=even[pick.market],
        model_probabilities=even[pick.market],
        market_probabilities=even[pick.market],
    ).where(mine).execute()
    # The other markets' goal-model numbers, made with the pick (and the published ones they
    # pool into, where the published ones are not the market's own line).
    for market, shifted in even.items():
        if market == pick.market:
            continue
        theirs = (Prediction.match == pick.match_id) & (Prediction.market == market)
        Prediction.update(model_probabilities=shifted).where(theirs).execute()
        Prediction.update(probabilities=shifted).where(
            theirs & (Prediction.source != "market")
        ).execute()
    OddsSummary.update(
        best_price=OddsSummary.best_price + 0.55,
        best_bookmaker="another-bookmaker",
        sharp_price=OddsSummary.sharp_price + 0.45,
        sharp_bookmaker="another-sharp",
    ).where((OddsSummary.match == pick.match_id) & (OddsSummary.market == pick.market)).execute()
    intelligence = MatchIntelligence.get(MatchIntelligence.match == pick.match_id)
    payload = json.loads(json.dumps(intelligence.payload))
    model = payload["model"]
    model["probabilities"] = even
    model["strengths"] = {
        "home": {"attack": 0.31, "defence": -0.12},
        "away": {"attack": -0.07, "defence": 0.22},
        "homeAdvantage": 0.19,
    }
    model["expectedGoals"] = {"home": 2.07, "away": 0.61}
    if model.get("marketRatings"):
        model["marketRatings"]["probabilities"] = even
        model["marketRatings"]["expectedGoals"] = {"home": 1.93, "away": 0.77}
    MatchIntelligence.update(payload=payload).where(
        MatchIntelligence.id == intelligence.id
    ).execute()


def differences(before: dict, after: dict) -> list[str]:
    """The answers that read differently."""
    return [path for path in before if before[path] != after[path]]


def test_no_public_answer_gives_a_locked_pick_back(site):
    """The walk: every answer, as anonymous and free callers, reads the same whatever the
    locked pick and its market's hidden figures are; a Pro caller's answers do change (so the
    walk would see a leak), and from kick-off everyone's do."""
    client = site.test_client()
    pick = locked_pick()
    assert pick is not None, "the world needs an upcoming pick rated A"
    before = {kind: answers(client, site.people, kind, pick) for kind in (*KINDS, "pro")}
    card = before["anonymous"][f"/api/matches/{pick.match_id}"]
    (shown,) = [item for item in card["picks"] if item["id"] == pick.id]
    assert shown["locked"] and shown["selection"] is None

    hide_otherwise(pick)
    after = {kind: answers(client, site.people, kind, pick) for kind in (*KINDS, "pro")}
    for kind in KINDS:
        assert differences(before[kind], after[kind]) == [], kind
    changed = differences(before["pro"], after["pro"])
    assert f"/api/matches/{pick.match_id}" in changed and "html" in changed

    site.clock.now = pick.match.kickoff_at  # kick-off: the pick is public in full
    try:
        kicked_off = answers(client, site.people, "anonymous", pick)
        card = kicked_off[f"/api/matches/{pick.match_id}"]
        (shown,) = [item for item in card["picks"] if item["id"] == pick.id]
        assert not shown["locked"] and shown["selection"] is not None
        assert shown["odds"] == pytest.approx(pick.odds + 1.37)
        assert f"/api/matches/{pick.match_id}" in differences(before["anonymous"], kicked_off)
    finally:
        site.clock.rewind()


def test_a_cached_locked_answer_unlocks_at_kick_off(site):
    client = site.test_client()
    pick = locked_pick()
    path = f"/api/matches/{pick.match_id}"
    first = client.get(path).get_json()
    assert [item["locked"] for item in first["picks"] if item["id"] == pick.id] == [True]
    site.clock.now = pick.match.kickoff_at + timedelta(seconds=1)
    try:  # the data did not change, the clock did: the cached answer must not outlive it
        later = client.get(path).get_json()
        assert [item["locked"] for item in later["picks"] if item["id"] == pick.id] == [False]
    finally:
        site.clock.rewind()


def test_a_locked_markets_ledger_entry_seals_its_pick_until_kick_off(site):
    client = site.test_client()
    pick = locked_pick()
    items = client.get("/api/track-record/ledger/entries").get_json()["items"]
    (entry,) = [item for item in items if json.loads(item["entry"])["pickId"] == pick.id]
    body = json.loads(entry["entry"])
    assert body["type"] == "pick.published" and entry["reveal"] is None
    assert not {"selection", "odds", "bookmaker", "probability", "edge"} & set(body)
    site.clock.now = pick.match.kickoff_at
    try:
        items = client.get("/api/track-record/ledger/entries").get_json()["items"]
        (entry,) = [item for item in items if item["index"] == entry["index"]]
        assert entry["reveal"]["pick"]["id"] == pick.id
    finally:
        site.clock.rewind()


#: An instant of the fast tests below, on their own small data: a Saturday noon.
NOON = datetime(2026, 5, 9, 12, 0, tzinfo=UTC)


def picks_by_market(card: dict) -> dict:
    """A match card's picks by market."""
    return {pick["market"]: pick for pick in card["picks"]}


def test_b_and_c_picks_stay_visible_before_kick_off(make_app):
    """Only a pick rated A locks its match, and only before its own kick-off: the B and C picks
    of a match still to come without one show in full, and so does an A pick of a match that
    has already kicked off on the same day; beside an A pick still to come, a B pick of the
    same match made with it is locked too (its probability is the same fit's)."""
    app = make_app(CLOCK=lambda: NOON)
    with app.app_context():
        started = factories.match(
            "Early", "Birds", kickoff=NOON - timedelta(hours=1), status="live"
        )
        plain = factories.match(
            "Late", "Comers", kickoff=NOON + timedelta(hours=2), status="scheduled"
        )
        coming = factories.match(
            "Night", "Owls", kickoff=NOON + timedelta(hours=3), status="scheduled"
        )
        factories.pick(started, "1x2", "home", rating="A")
        factories.pick(plain, "1x2", "away", 3.2, rating="B")
        factories.pick(plain, "ou25", "over", 1.9, rating="C")
        factories.pick(coming, "1x2", "draw", 3.5, rating="B")
        factories.pick(coming, "btts", "yes", 1.8, rating="A")
    client = app.test_client()

    shown = picks_by_market(helpers.ok(client.get(f"/api/matches/{plain.id}")))
    assert {market: pick["locked"] for market, pick in shown.items()} == {
        "1x2": False,
        "ou25": False,
    }
    assert (shown["1x2"]["selection"], shown["1x2"]["odds"]) == ("away", 3.2)
    assert (shown["ou25"]["selection"], shown["ou25"]["odds"]) == ("over", 1.9)
    shown = picks_by_market(helpers.ok(client.get(f"/api/matches/{coming.id}")))
    assert {market: (pick["locked"], pick["selection"]) for market, pick in shown.items()} == {
        "1x2": (True, None),
        "btts": (True, None),
    }
    assert [pick["rating"] for pick in shown.values()] == ["B", "A"]

    day = helpers.ok(client.get(f"/api/picks/today?date={NOON.date()}"))["items"]
    found = {(item["match"]["id"], item["market"]): item for item in day}
    assert {key: (item["locked"], item["selection"]) for key, item in found.items()} == {
        (started.id, "1x2"): (False, "home"),
        (plain.id, "1x2"): (False, "away"),
        (plain.id, "ou25"): (False, "over"),
        (coming.id, "1x2"): (True, None),
        (coming.id, "btts"): (True, None),
    }


def test_a_cached_locked_answer_unlocks_at_kick_off_within_its_lifetime(make_app):
    """A locked answer is cached only until the next locked kick-off, not for the cache's
    whole lifetime: two matches kick off 10 s and 20 s after the first read, well inside
    PUBLIC_MAX_AGE, and each match's answer unlocks at its own kick-off."""
    clock = factories.Clock(NOON)
    app = make_app(CLOCK=clock)
    assert app.config["PUBLIC_MAX_AGE"] > 20  # else the cache's own expiry would unlock them
    with app.app_context():
        # The later one is stored first: the next unlock is the soonest kick-off, not the first
        # row found.
        later = factories.match(
            "Twenty", "Seconds", kickoff=NOON + timedelta(seconds=20), status="scheduled"
        )
        sooner = factories.match(
            "Ten", "Seconds", kickoff=NOON + timedelta(seconds=10), status="scheduled"
        )
        for match in (later, sooner):
            factories.pick(match, "1x2", "home", rating="A")
    client = app.test_client()

    def locked(match):
        (pick,) = helpers.ok(client.get(f"/api/matches/{match.id}"))["picks"]
        return pick["locked"]

    assert (locked(sooner), locked(later)) == (True, True)
    clock.advance(seconds=10)
    assert (locked(sooner), locked(later)) == (False, True)
    clock.advance(seconds=10)
    assert (locked(sooner), locked(later)) == (False, False)


def selects(statements) -> int:
    """How many of the logged statements read the database."""
    return sum("SELECT" in statement for statement in statements)


def test_a_locked_answer_is_cached_until_the_next_locked_kick_off(make_app):
    """Locked answers are still served from the cache: until the next kick-off of a locked pick
    still to come, whatever kicked off before, or kicks off at this very instant."""
    clock = factories.Clock(NOON)
    app = make_app(CLOCK=clock)
    with app.app_context():
        played = factories.match("Long", "Gone", kickoff=NOON - timedelta(days=1))
        starting = factories.match("Right", "Now", kickoff=NOON, status="scheduled")
        coming = factories.match(
            "Still", "Coming", kickoff=NOON + timedelta(seconds=20), status="scheduled"
        )
        for match in (played, starting, coming):
            factories.pick(match, "1x2", "home", rating="A")
    client = app.test_client()
    path = f"/api/matches/{coming.id}"
    # Only the data version is read again: from the database, or on Redis with the rate limit.
    again = 0 if app.extensions.get("shared_version") is not None else 1

    def read():
        with helpers.counted_queries() as statements:
            (pick,) = helpers.ok(client.get(path))["picks"]
        return pick["locked"], selects(statements)

    locked, first = read()
    assert locked and first > 3
    assert read() == (True, again)
    clock.advance(seconds=19)
    assert read() == (True, again)
    clock.advance(seconds=1)
    locked, fresh = read()
    assert not locked and fresh > 3


def test_a_forecast_shown_to_everyone_stays_shown_when_a_later_pick_locks_another_market(
    make_app,
):
    """The world's later match has been public for two days (its forecasts, prices and no pick);
    an A pick on over/under made now seals that market alone: its numbers and prices go, the
    1x2 forecast and prices everyone saw stay exactly as they were shown, on the card and on
    the page, which names the sealed market and its rating."""
    app = make_app(CLOCK=lambda: NOW, **UNLIMITED)
    with app.app_context():
        slugs = world.build(NOW)
        match = Match.get(Match.slug == slugs["later"])
    client = app.test_client()
    path = f"/api/matches/{match.id}"

    def by_market(card, part):
        return {row["market"]: row for row in card[part] if row["market"] in ("1x2", "ou25")}

    before = helpers.ok(client.get(path))
    assert before["picks"] == []
    with app.app_context():
        factories.pick(match, "ou25", "over", 1.95, rating="A", is_live=True, created_at=NOW)
        bump_data_version()
    after = helpers.ok(client.get(path))
    assert [p["locked"] for p in after["picks"]] == [True]
    for part in ("predictions", "odds"):
        shown, now_shown = by_market(before, part), by_market(after, part)
        assert now_shown["1x2"] == shown["1x2"]  # public before: never hidden again
        assert now_shown["ou25"] != shown["ou25"]
    assert by_market(after, "predictions")["ou25"]["probabilities"] is None
    assert {row["bestPrice"] for row in by_market(after, "odds")["ou25"]["selections"]} == {None}
    page = client.get(
        f"/api/v1/seo/predictions/{match.slug}", headers={"Accept": "text/html"}
    ).get_data(as_text=True)
    one = page.split("<h2>Match result</h2>")[1].split("</section>")[0]
    sealed = page.split("<h2>Over/under 2.5 goals</h2>")[1].split("</section>")[0]
    assert "%" in one and "–" not in one  # the 1x2 forecast in full
    assert "Pick rated A" in sealed and "%" not in sealed.split('<div class="pick">')[0]


def test_a_locked_over_under_pick_seals_both_goal_total_markets(make_app):
    """One over/under pick is made across over/under 2.5 and the other goal lines, and the lines
    either side of a sealed one would bracket it: an A pick on either seals both, and nothing
    else."""
    app = make_app(CLOCK=lambda: NOON)
    with app.app_context():
        coming = factories.match(
            "Night", "Owls", kickoff=NOON + timedelta(hours=3), status="scheduled"
        )
        factories.pick(coming, "ou25", "over", 1.9, rating="A")
        (lock,) = premium.locked_matches({coming.id: coming.kickoff_at}, None, NOON).values()
    sealed = {market: lock.seals_market(market) for market in ("ou25", "ou", "1x2", "ah", "btts")}
    assert sealed == {"ou25": True, "ou": True, "1x2": False, "ah": False, "btts": False}
