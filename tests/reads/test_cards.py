"""Match cards: a fixed number of queries whatever the number of matches, the premium rule, the
stored intelligence read back through its schema, and answers that never outlive their data."""

from datetime import UTC, datetime, timedelta

import pytest

from app import create_app
from models import Match, MatchIntelligence, OddsSummary, Pick, data_version
from services.feeds import imports
from services.forecasting import predictions
from services.market import premium
from services.reads import cards
from services.record import settling
from tests import asserts, factories
from tests.helpers import counted_queries, settings

DAY_ONE = datetime(2026, 3, 2, tzinfo=UTC)  # a Monday
DAY_MANY = datetime(2026, 3, 4, tzinfo=UTC)
SELECTIONS = {"1x2": ("home", "draw", "away"), "ou25": ("over", "under")}


def quotes(bookmaker, market, prices, closing=False):
    """One bookmaker's quote of every selection of ``market``."""
    return [
        (bookmaker, market, selection, price, closing)
        for selection, price in zip(SELECTIONS[market], prices, strict=True)
    ]


ODDS = [
    *quotes("pinnacle", "1x2", (2.1, 3.4, 3.6)),
    *quotes("bet365", "1x2", (2.3, 3.3, 3.5)),
    *quotes("pinnacle", "ou25", (1.9, 1.95)),
    *quotes("pinnacle", "1x2", (2.0, 3.5, 3.8), closing=True),
]


@pytest.fixture
def two_days(ctx):
    """One match on one day and forty on another, all with odds, predictions and picks; the
    history before them is a few weeks of results between the same teams."""
    history = [
        factories.match_record(
            f"T{day % 7}",
            f"T{(day + 3) % 7}",
            kickoff=DAY_ONE - timedelta(days=day),
            goals=(day % 3, day % 2),
            odds=ODDS,
        )
        for day in range(60, 0, -1)
    ]
    upcoming = [
        factories.match_record(
            f"H{index}",
            f"A{index}",
            kickoff=DAY_MANY + timedelta(hours=12, minutes=index),
            status="scheduled",
            odds=ODDS,
        )
        for index in range(40)
    ]
    alone = factories.match_record(
        "T1", "T2", kickoff=DAY_ONE + timedelta(hours=15), status="scheduled", odds=ODDS
    )
    imports.store_records([*history, alone, *upcoming])
    # Sixty results are the league's whole history: it counts as seen (the picks are the point).
    seen = {**factories.settings(), "MODEL_MIN_LEAGUE_MATCHES": 10}
    predictions.backfill(seen, now=DAY_ONE)
    assert Pick.select().join(Match).where(Match.kickoff_at >= DAY_MANY).count() >= 40


def test_a_card_list_costs_the_same_queries_for_one_match_or_forty(two_days):
    one = [m.id for m in Match.select().where(Match.kickoff_at.between(DAY_ONE, DAY_MANY))]
    many = [m.id for m in Match.select().where(Match.kickoff_at >= DAY_MANY)]
    assert (len(one), len(many)) == (1, 40)
    counts = []
    for ids in (one, many):
        with counted_queries() as statements:
            loaded = cards.load(ids, include=cards.RELATIONS, settings=factories.settings())
        assert all(card["odds"] and card["predictions"] and card["intelligence"] for card in loaded)
        counts.append(len(statements))
    # The matches, one query per relation, and the settled picks the stakes are sized by.
    assert counts[0] == counts[1] == 2 + len(cards.RELATIONS)


def test_a_card_from_a_select_in_another_column_order_is_the_same_card(two_days, monkeypatch):
    """Rows are read by name: every card query's columns, reversed, give the same cards."""
    ids = [m.id for m in Match.select().where(Match.kickoff_at >= DAY_ONE).order_by(Match.id)]
    original = cards.load(ids, include=cards.RELATIONS, now=DAY_ONE, settings=factories.settings())
    assert all(card["odds"] and card["predictions"] and card["picks"] for card in original[1:])
    for name in ("PICK_FIELDS", "PREDICTION_FIELDS", "SUMMARY_FIELDS"):
        monkeypatch.setattr(cards, name, tuple(reversed(getattr(cards, name))))
    reordered = cards.matches(*reversed(cards.named(cards.MATCH_COLUMNS)))
    rebuilt = cards.build(
        reordered.where(Match.id.in_(ids)).order_by(Match.id),
        include=cards.RELATIONS,
        now=DAY_ONE,
        settings=factories.settings(),
    )
    assert rebuilt == original


@pytest.mark.parametrize(
    "path",
    [
        "/api/picks/today?date={day}",
        "/api/explorer/slate?date={day}",
        "/api/explorer/slate?date={day}&market=ou25",
    ],
)
def test_day_endpoints_cost_the_same_queries_for_one_match_or_forty(client, two_days, path):
    client.get("/api/track-record/by-competition-type")  # the app's one schema check, done
    counts = []
    for day in (DAY_ONE, DAY_MANY):
        with counted_queries() as statements:
            response = client.get(path.format(day=day.date()))
        assert response.status_code == 200 and response.get_json()["items"]
        counts.append(len(statements))
    assert counts[0] == counts[1]


def test_stored_intelligence_is_the_wire_format(two_days):
    stored = MatchIntelligence.select().join(Match).where(Match.kickoff_at >= DAY_MANY).first()
    assert stored.payload["model"]["fittedAt"] == "2026-03-02T00:00:00Z"
    assert "fitted_at" not in stored.payload["model"] and "headToHead" in stored.payload
    read = cards.intelligence_of([stored.match_id])[stored.match_id]
    assert read["model"]["fitted_at"] == DAY_ONE


def test_odds_summaries_follow_the_quotes(two_days):
    match = Match.select().where(Match.kickoff_at >= DAY_MANY).first()
    rows = {
        (row.market, row.selection): row
        for row in OddsSummary.select().where(OddsSummary.match == match)
    }
    home = rows[("1x2", "home")]
    assert (home.best_price, home.best_bookmaker) == (2.3, "bet365")
    assert (home.sharp_price, home.sharp_bookmaker) == (2.1, "pinnacle")
    assert (home.closing_price, home.closing_bookmaker) == (2.0, "pinnacle")
    assert home.bookmakers == 2 and rows[("ou25", "over")].bookmakers == 1
    assert ("btts", "yes") not in rows  # nobody quotes it
    # A new price reaches the summary when it is imported.
    factories.match(
        match.home_team.name,
        match.away_team.name,
        kickoff=match.kickoff_at,
        status="scheduled",
        odds=quotes("unibet", "1x2", (2.45, 3.2, 3.3)),
    )
    home = OddsSummary.get(
        (OddsSummary.match == match)
        & (OddsSummary.market == "1x2")
        & (OddsSummary.selection == "home")
    )
    assert (home.best_price, home.best_bookmaker) == (2.45, "unibet")


@pytest.fixture
def second_process(app, tmp_path):
    """Another app on the same database, with its own answer cache (as another worker has)."""
    return create_app(settings(tmp_path))


def test_no_answer_outlives_an_operation(app, second_process, two_days):
    reader, other = app.test_client(), second_process.test_client()
    match = Match.select().where(Match.kickoff_at.between(DAY_ONE, DAY_MANY)).get()
    path = f"/api/matches/{match.id}"
    before = reader.get(path)
    assert before.status_code == 200 and before.get_json()["status"] == "scheduled"
    assert other.get(path).headers["ETag"] == before.headers["ETag"]
    version = data_version()
    # The match is played: a result arrives and a settlement runs.
    factories.match("T1", "T2", kickoff=match.kickoff_at, goals=(2, 0), odds=ODDS)
    assert data_version() > version
    settling.run(30, factories.settings(), now=DAY_MANY)
    for client in (reader, other):  # both processes' caches see it at once
        after = client.get(path, headers={"If-None-Match": before.headers["ETag"]})
        assert after.status_code == 200 and after.headers["ETag"] != before.headers["ETag"]
        body = after.get_json()
        assert body["status"] == "finished" and body["score"] == {"home": 2, "away": 0}
        assert all(pick["status"] in ("won", "lost") for pick in body["picks"])


def test_a_refresh_reaches_cached_answers(client, two_days):
    match = Match.select().where(Match.kickoff_at >= DAY_MANY).order_by(Match.id).first()
    first = client.get(f"/api/matches/{match.id}").get_json()
    assert first["predictions"][0]["madeAt"] == "2026-03-02T00:00:00Z"
    predictions.refresh(
        predictions.check_open(match.id), factories.settings(), now=DAY_MANY - timedelta(hours=6)
    )
    second = client.get(f"/api/matches/{match.id}").get_json()
    assert second["predictions"][0]["madeAt"] == "2026-03-03T18:00:00Z"
    assert second["intelligence"]["updatedAt"] == "2026-03-03T18:00:00Z"


def test_a_renamed_league_reaches_cached_answers(client, two_days):
    match = Match.select().where(Match.kickoff_at >= DAY_MANY).order_by(Match.id).first()
    before = client.get(f"/api/matches/{match.id}").get_json()["league"]["name"]
    factories.match(
        "H0",
        "A0",
        kickoff=match.kickoff_at,
        status="scheduled",
        league=("TST", "Test League Renamed", "Testland", "top-flight"),
    )
    after = client.get(f"/api/matches/{match.id}").get_json()["league"]["name"]
    assert (before, after) == ("Test League", "Test League Renamed")


def test_a_locked_pick_hides_exactly_the_premium_fields(ctx):
    match = factories.match(kickoff=datetime(2026, 1, 1, tzinfo=UTC), goals=(2, 1))
    factories.pick(
        match,
        rating="A",
        edge=0.12,
        odds=3.1,
        bookmaker="bet365",
        status="won",
        profit=2.1,
        closing_odds=2.8,
        closing_bookmaker="pinnacle",
        clv=3.1 / 2.8 - 1,
        closing_probability=0.34,
    )
    people = factories.people()
    shown = {
        "selection": "home",
        "odds": 3.1,
        "bookmaker": "bet365",
        "probability": 0.55,
        "edge": 0.12,
        "profit": 2.1,
        "closing_odds": 2.8,
        "closing_bookmaker": "pinnacle",
        "clv": pytest.approx(3.1 / 2.8 - 1),
        "closing_ev": pytest.approx(3.1 * 0.34 - 1),
        # A quarter of Kelly, (0.55 × 3.1 − 1) / 2.1 / 4 = 0.084, capped at 0.02.
        "suggested_stake": 0.02,
    }
    assert set(shown) == set(premium.HIDDEN_FIELDS)
    staking = {**factories.settings(), "STAKE_MIN_SETTLED": 0}  # no settled picks needed
    before = match.kickoff_at - timedelta(seconds=1)
    for kind, locked in (("free", True), ("pro", False), ("admin", False), (None, True)):
        viewer = people[kind][0] if kind else None
        (pick,) = cards.one(match.id, viewer, now=before, settings=staking)["picks"]
        assert pick["locked"] is locked
        hidden = {name: pick[name] for name in premium.HIDDEN_FIELDS}
        assert hidden == (dict.fromkeys(shown) if locked else shown)
        # What stays visible to all: that it exists, its rating, market and outcome.
        assert (pick["rating"], pick["market"], pick["status"]) == ("A", "1x2", "won")
        # From kick-off every pick is public in full.
        (pick,) = cards.one(match.id, viewer, now=match.kickoff_at, settings=staking)["picks"]
        assert not pick["locked"]
        assert {name: pick[name] for name in premium.HIDDEN_FIELDS} == shown


def test_an_unknown_card_is_not_found(client, ctx):
    asserts.problem(client.get("/api/matches/12345"), 404, "not-found")


def test_a_repeated_answer_is_served_from_the_cache(client, two_days):
    path = f"/api/explorer/slate?date={DAY_MANY.date()}"
    with counted_queries() as first:
        answer = client.get(path)
    with counted_queries() as again:
        repeated = client.get(path)
    # Only the data version is read: from the database, or on Redis with the rate-limit hit.
    on_redis = client.application.extensions["shared_version"] is not None
    assert len(first) > 3 and len(again) == (0 if on_redis else 1)
    assert repeated.get_data() == answer.get_data()
    assert repeated.headers["ETag"] == answer.headers["ETag"]
    # What a Pro subscriber sees is its own entry.
    headers = factories.people()["pro"][1]
    with counted_queries() as premium:
        client.get(path, headers=headers)
    assert len(premium) > 3
