"""Every event type on the demo world, delivered to real receivers that verify each delivery with
``standardwebhooks``: each fires once per cause, operators' events reach only operators and
admins, and an owner who lost Pro receives nothing (so never a locked pick)."""

import contextlib
from datetime import timedelta

import pytest

from app import create_app
from engine.records import LeagueRecord, MatchRecord
from models import Match, Pick, Prediction
from models.schema import create_tables, drop_tables
from services.accounts import users
from services.feeds import imports
from services.forecasting import predictions
from services.operations import demo_world, jobs
from services.record import settling
from services.webhooks import deliveries
from store.database import db
from tests import factories
from tests.helpers import NOW, settings
from tests.receiver import receiving

pytestmark = pytest.mark.slow

EVERYTHING = [
    "pick.published",
    "pick.settled",
    "match.result",
    "prediction.updated",
    "operation.completed",
]
MAX_PAYLOAD = 20_000


def pump(app, clock):
    """Deliver until nothing is due."""
    with app.app_context():
        while any(deliveries.deliver_due(app.config, clock).values()):
            pass


def finish(match_ids, goals=(2, 1)):
    """Store full-time results for ``match_ids`` through the importer, as a results file would."""
    records = []
    for match in Match.select().where(Match.id.in_(match_ids)):
        league = match.league
        records.append(
            MatchRecord(
                league=LeagueRecord(
                    league.code, league.name, league.country, league.competition_type
                ),
                season=match.season,
                kickoff_at=match.kickoff_at,
                home_team=match.home_team.name,
                away_team=match.away_team.name,
                status="finished",
                home_goals=goals[0],
                away_goals=goals[1],
            )
        )
    with db.atomic():
        imports.store_records(records)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """The demo world at NOW with three endpoints subscribed to everything (a Pro user's, an
    admin's, and one of a user who lost Pro), then the work: backfill, settlement, the results
    of the matches with live picks, settlement after the last of them; each receiver holds
    what it got."""
    clock = factories.Clock(NOW)
    with contextlib.ExitStack() as stack:
        receivers = {kind: stack.enter_context(receiving()) for kind in ("pro", "admin", "lapsed")}
        app = create_app(
            settings(
                tmp_path_factory.mktemp("events"),
                CLOCK=clock,
                WEBHOOK_ALLOW_PRIVATE=True,
                RATELIMIT_AUTH="100000 per minute",
                RATELIMIT_PUBLIC="100000 per minute",
                # Stakes from the first pick on: each is then the same read at publication as
                # later (none waits for results the backfill settles after it publishes).
                STAKE_MIN_SETTLED=0,
            )
        )
        client = app.test_client()
        with app.app_context():
            drop_tables()
            create_tables()
            demo_world.load(now=NOW)
            people = factories.people()
            lapsed = factories.user("lapsed@example.com", plan="pro")
            people["lapsed"] = (lapsed, factories.bearer(factories.token(lapsed)))
        for kind, receiver in receivers.items():
            made = factories.endpoint(client, people[kind][1], receiver.url, EVERYTHING)
            receiver.secrets = [made["secret"]]
        with app.app_context():
            users.update("lapsed@example.com", plan="free")
            jobs.backfill(app.config, now=NOW)
            jobs.settle(3650, app.config, now=NOW)
        pump(app, clock)
        with app.app_context():
            app.live_picks = {pick.id: pick.match_id for pick in Pick.select().where(Pick.is_live)}
            app.live_predictions = {
                prediction.id for prediction in Prediction.select().where(Prediction.is_live)
            }
            finish(sorted(set(app.live_picks.values())))
            last = max(Match.get_by_id(match).kickoff_at for match in app.live_picks.values())
            clock.now = last + timedelta(hours=3)
            jobs.settle(3650, app.config, now=clock())
        pump(app, clock)
        app.receivers, app.clock, app.people = receivers, clock, people
        yield app


def test_the_world_has_something_to_tell(world):
    assert len(world.live_picks) >= 3 and len(world.live_predictions) >= 10


def test_every_delivery_is_verified_small_and_has_its_own_id(world):
    for kind in ("pro", "admin"):
        received = world.receivers[kind].received
        assert received and all(item.verified_by == [0] for item in received)
        assert all(len(item.body) < MAX_PAYLOAD for item in received)
        assert len({item.webhook_id for item in received}) == len(received)


def ids(receiver, event_type):
    return [item.payload["data"]["id"] for item in receiver.of_type(event_type)]


@pytest.mark.parametrize("kind", ["pro", "admin"])
def test_each_live_pick_is_published_once(world, kind):
    published = ids(world.receivers[kind], "pick.published")
    assert sorted(published) == sorted(world.live_picks)
    with world.app_context():
        for item in world.receivers[kind].of_type("pick.published"):
            data, pick = item.payload["data"], Pick.get_by_id(item.payload["data"]["id"])
            assert (data["selection"], data["odds"], data["rating"]) == (
                pick.selection,
                pick.odds,
                pick.rating,
            )
            assert data["url"] == f"/api/matches/{pick.match_id}"


@pytest.mark.parametrize("kind", ["pro", "admin"])
def test_each_published_pick_carries_its_suggested_stake_as_its_card_does(world, kind):
    client, headers = world.test_client(), world.people[kind][1]
    cards, stakes = {}, []
    for item in world.receivers[kind].of_type("pick.published"):
        data = item.payload["data"]
        if data["matchId"] not in cards:
            path = f"/api/matches/{data['matchId']}"
            cards[data["matchId"]] = {
                pick["id"]: pick for pick in client.get(path, headers=headers).get_json()["picks"]
            }
        stakes.append(data["suggestedStake"])
        assert data["suggestedStake"] == pytest.approx(
            cards[data["matchId"]][data["id"]]["suggestedStake"], abs=1e-6
        )
    assert stakes and all(0 <= stake <= world.config["STAKE_CAP"] for stake in stakes)
    assert any(stake > 0 for stake in stakes)


@pytest.mark.parametrize("kind", ["pro", "admin"])
def test_each_live_prediction_is_announced_once(world, kind):
    """Once each, saying whose numbers it publishes, with the goal model's own beside them."""
    assert sorted(ids(world.receivers[kind], "prediction.updated")) == sorted(
        world.live_predictions
    )
    with world.app_context():
        for item in world.receivers[kind].of_type("prediction.updated"):
            data, stored = item.payload["data"], Prediction.get_by_id(item.payload["data"]["id"])
            assert data["source"] == stored.source
            assert data["modelProbabilities"] == pytest.approx(stored.model_probabilities, abs=1e-6)


@pytest.mark.parametrize("kind", ["pro", "admin"])
def test_each_result_and_each_settled_pick_once(world, kind):
    receiver = world.receivers[kind]
    assert sorted(ids(receiver, "match.result")) == sorted(set(world.live_picks.values()))
    for item in receiver.of_type("match.result"):
        assert item.payload["data"]["score"] == {"home": 2, "away": 1}
    assert sorted(ids(receiver, "pick.settled")) == sorted(world.live_picks)
    with world.app_context():
        for item in receiver.of_type("pick.settled"):
            pick = Pick.get_by_id(item.payload["data"]["id"])
            assert item.payload["data"]["status"] == pick.status != "pending"
            assert item.payload["data"]["profit"] == pytest.approx(pick.profit)
            assert item.payload["data"]["closingLine"] == pick.closing_line


def test_operations_are_told_to_operators_and_admins_only(world):
    completed = sorted(
        world.receivers["admin"].of_type("operation.completed"),
        key=lambda item: item.payload["data"]["id"],
    )  # sent side by side, so they may arrive in any order
    assert [
        (item.payload["data"]["kind"], item.payload["data"]["status"]) for item in completed
    ] == [
        ("model-backfill", "succeeded"),
        ("settlement-run", "succeeded"),
        ("settlement-run", "succeeded"),
    ]
    assert world.receivers["pro"].of_type("operation.completed") == []


def test_an_owner_without_pro_receives_nothing(world):
    assert world.receivers["lapsed"].received == []


def test_the_same_causes_again_tell_nobody_anything(world):
    clock = world.clock

    def everything_again():
        with world.app_context():
            finish(sorted(set(world.live_picks.values())))  # the same results again
            predictions.backfill(world.config, now=clock())
            settling.run(3650, world.config, clock())
        pump(world, clock)
        return {kind: len(receiver.received) for kind, receiver in world.receivers.items()}

    # Later, upcoming matches are predicted from newer results (a cause of its own) …
    once = everything_again()
    # … but with nothing new, nothing is told.
    assert everything_again() == once
