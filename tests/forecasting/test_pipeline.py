"""The demo world through the whole pipeline: import, walk-forward model, picks, settlement,
calibration, intelligence, operations. Built once for the module; each test reads it."""

from collections import Counter

import pytest

from config import DEFAULTS
from engine.betting.picks import growth
from engine.markets import MARKETS
from engine.model import lines
from enums import LINE_MARKETS, MARKET_SELECTIONS, PICK_RATINGS
from models import League, Match, MatchIntelligence, Operation, Pick, Prediction
from services.operations import schedule
from tests import factories

pytestmark = pytest.mark.slow  # the demo world: built once per run, copied per module


@pytest.fixture(scope="module")
def world(demo_world):
    app = demo_world("pipeline")
    with app.app_context():
        yield app


def test_every_competition_type_has_matches(world):
    types = Counter(
        league.competition_type for league in League.select().join(Match).group_by(League.id)
    )
    assert set(types) == {"top-flight", "lower-league", "cup", "international"}
    statuses = Counter(match.status for match in Match.select())
    assert statuses["finished"] > 3000 and statuses["scheduled"] > 20
    assert statuses["postponed"] == statuses["cancelled"] == 1


def test_every_match_has_a_prediction_per_market_made_walk_forward(world):
    # The demo world quotes each market with lines at one line a match.
    assert Prediction.select().count() == Match.select().count() * len(MARKET_SELECTIONS)
    for prediction in Prediction.select(Prediction, Match).join(Match).iterator():
        assert sum(prediction.probabilities.values()) == pytest.approx(1.0)
        assert list(prediction.probabilities) == list(MARKET_SELECTIONS[prediction.market])
        assert prediction.fitted_at <= prediction.match.kickoff_at  # fitted on the past only
        assert 0.0 <= prediction.pool_weight <= 1.0
        assert 0.0 <= prediction.data_quality <= 1.0
        assert set(prediction.data_quality_parts) == {"history", "bookmakers", "sharp_line"}
        assert prediction.model_name == "goal-chain-market-pool"
        assert prediction.margin_method == "power"
        assert prediction.source in ("market", "pool", "market-ratings", "dixon-coles")


def test_picks_take_the_largest_edge_and_are_rated_by_the_rules(world):
    picks = list(
        Pick.select(Pick, Prediction).join(
            Prediction,
            on=(Prediction.match == Pick.match)
            & (Prediction.market == Pick.market)
            & (Prediction.line == Pick.line),
        )
    )
    assert len(picks) > 500
    assert sum(pick.prediction.made_at == pick.created_at for pick in picks) > 500
    ratings = Counter()
    for pick in picks:
        assert pick.edge >= 0.02
        assert pick.edge == pytest.approx(pick.probability * pick.odds - 1)
        if pick.prediction.made_at == pick.created_at:  # a live pick stands as made when its
            # prediction is refreshed before kick-off, whatever the refresh's pool weight
            assert pick.probability == pytest.approx(pick.prediction.probabilities[pick.selection])
        kelly = growth(pick.probability, pick.odds)
        expected = (
            "A"
            if kelly >= DEFAULTS["RATING_A_GROWTH"] and pick.data_quality >= 0.8
            else "B"
            if kelly >= DEFAULTS["RATING_B_GROWTH"] and pick.data_quality >= 0.6
            else "C"
        )
        # Rated by the growth at the probability the rule trusts (engine.betting.trust): a share
        # of the edge at most 1, so never above the whole edge's rating (nor a line bet, which
        # grows on the share of its stake at risk only). tests/forecasting/test_trusted.py
        # checks the trusted rating itself.
        assert PICK_RATINGS.index(pick.rating) >= PICK_RATINGS.index(expected)
        ratings[pick.rating] += 1
        assert pick.bookmaker != "market-average"
    assert set(ratings) == set(PICK_RATINGS)  # every rating is given


def test_upcoming_fixtures_have_live_picks_and_the_past_backfilled_ones(world):
    for pick in Pick.select(Pick, Match).join(Match):
        assert pick.is_live == (pick.match.kickoff_at > pick.created_at)
    assert Pick.select().where(Pick.is_live).count() > 0
    assert Pick.select().where(~Pick.is_live).count() > 500


def test_finished_matches_are_settled_with_clv(world):
    pending = (
        Pick.select().join(Match).where((Pick.status == "pending") & (Match.status == "finished"))
    )
    assert pending.count() == 0
    for pick in Pick.select().where(Pick.status.in_(["won", "lost", "half-won", "half-lost"])):
        share = 0.5 if pick.status.startswith("half") else 1.0
        won = pick.status.endswith("won")
        assert pick.profit == pytest.approx(share * (pick.odds - 1 if won else -1))
        assert pick.clv == pytest.approx(pick.odds / pick.closing_odds - 1)
    voids = Pick.select(Pick, Match).join(Match).where(Pick.status == "void")
    # A match that was not played voids its picks; a played one only a pushed line bet.
    for pick in voids:
        if pick.match.status == "finished":
            result = lines.results(
                pick.market,
                [pick.selection],
                [pick.line],
                [pick.match.home_goals],
                [pick.match.away_goals],
            )
            assert pick.market in LINE_MARKETS and result[0] == 0.0
        else:
            assert pick.match.status in ("postponed", "cancelled")


def test_intelligence_for_every_match(world):
    assert MatchIntelligence.select().count() == Match.select().count()
    latest = MatchIntelligence.select().join(Match).order_by(Match.kickoff_at.desc()).get()
    payload = latest.payload
    assert set(payload) == {"home", "away", "headToHead", "model"}
    assert len(payload["home"]["form"]) == 5 and payload["home"]["formPoints"] >= 0
    assert set(payload["model"]["probabilities"]) == set(MARKETS)
    assert payload["model"]["strengths"]["home"]["attack"] is not None


def test_operations_are_recorded_and_health_is_ok(world):
    kinds = [(op.kind, op.status) for op in Operation.select().order_by(Operation.id)]
    # The demo's replay predicts and settles day by day; then one recorded run of each.
    assert kinds == [
        ("settlement-run", "succeeded"),
        ("calibration-run", "succeeded"),
    ]
    calibration = Operation.get(Operation.kind == "calibration-run").result
    one_x_two = calibration["markets"]["1x2"]
    assert one_x_two["count"] > 2000 and one_x_two["rps"] < one_x_two["reference"]["rps"] * 1.1
    admin = factories.user("admin@example.com", role="admin")
    schedule.beat(world.extensions["clock"]())  # as a worker running the schedule does
    health = world.test_client().get(
        "/api/v1/ops/health/services", headers=factories.bearer(factories.token(admin))
    )
    assert health.get_json()["status"] == "ok"


def test_running_the_demo_again_gives_the_same_world(world):
    before = (Match.select().count(), Prediction.select().count(), Pick.select().count())
    result = world.test_cli_runner().invoke(args=["data", "demo"])
    assert result.exit_code == 0
    assert (Match.select().count(), Prediction.select().count(), Pick.select().count()) == before
