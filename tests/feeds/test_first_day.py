"""The first day: `flask data bootstrap` (and its Operations API twin) brings the earlier seasons
of the configured leagues from a football-data server through the sync, runs the first
backfill walk-forward, says which season files the source does not serve, and changes nothing
when run again."""

from datetime import UTC, datetime, timedelta

import pytest

from models import (
    LedgerCheckpoint,
    LedgerEntry,
    Match,
    OddsQuote,
    Operation,
    Pick,
    Prediction,
    PriceSeen,
    SourceFetch,
    Team,
    TeamAlias,
)
from services.feeds import bootstrap
from services.operations import health, jobs
from store.database import db
from tests import asserts, factories, sync_world
from tests.data import FOOTBALL_DATA, needs_football_data
from tests.helpers import stored_rows
from tests.source_servers import FootballDataServer, http_date

pytestmark = needs_football_data

#: What a bootstrap writes: run again with nothing new, none of it changes.
DATA = (
    Match,
    Team,
    TeamAlias,
    OddsQuote,
    PriceSeen,
    Prediction,
    Pick,
    LedgerEntry,
    LedgerCheckpoint,
    SourceFetch,
)

FRIDAY = sync_world.FRIDAY  # 2024-03-29 15:00 UTC, in the 2023/24 season


@pytest.fixture
def football_data():
    """football-data's files on Friday of the simulated week: the Premier League's 2022/23
    season and this season so far with the weekend's fixtures, the Championship's 2022/23; its
    2023/24 file is not served (404)."""
    with FootballDataServer() as server:
        (friday, files), *_ = sync_world.week()
        files["/mmz4281/2223/E0.csv"] = (FOOTBALL_DATA / "E0_2223.csv").read_bytes()
        files["/mmz4281/2223/E1.csv"] = (FOOTBALL_DATA / "E1_2223.csv").read_bytes()
        for path, body in files.items():
            server.put(path, body, http_date(friday))
        yield server


def _app(make_app, server, now=FRIDAY, **overrides):
    settings = {"FOOTBALL_DATA_LEAGUES": "E0,E1", **overrides}
    return make_app(FOOTBALL_DATA_URL=server.base, CLOCK=lambda: now, **settings)


def test_season_codes_count_back_from_the_season_of_now():
    assert bootstrap.season_codes(FRIDAY, 2) == ["2122", "2223", "2324"]
    assert bootstrap.season_codes(datetime(2024, 7, 1, tzinfo=UTC), 0) == ["2425"]
    assert bootstrap.season_codes(datetime(2000, 3, 1, tzinfo=UTC), 1) == ["9899", "9900"]


def test_the_bootstrap_brings_earlier_seasons_backfills_and_changes_nothing_again(
    make_app, football_data
):
    app = _app(make_app, football_data)
    runner = app.test_cli_runner()
    result = runner.invoke(args=["data", "bootstrap", "--seasons", "1"])
    assert result.exit_code == 0, result.output
    assert "seasons 2223, 2324 of E0, E1: 4 season files, 1 not served" in result.output
    assert "missing: E1 2324: not served" in result.output
    asked = football_data.paths()
    assert sorted(asked) == sorted(
        [
            "/mmz4281/2223/E0.csv",
            "/mmz4281/2223/E1.csv",
            "/mmz4281/2324/E0.csv",
            "/mmz4281/2324/E1.csv",
            "/fixtures.csv",
        ]
    )
    with app.app_context():
        operation = Operation.get(Operation.kind == "data-bootstrap")
        assert operation.status == "succeeded" and operation.params == {"seasons": 1}
        assert [file["url"].rsplit("/", 3)[-3:] for file in operation.result["missing"]] == [
            ["mmz4281", "2324", "E1.csv"]
        ]
        season = Match.select().where(Match.season == "2022-23")
        assert season.count() == 380 + 552  # both leagues' earlier season, every match
        # the earlier seasons are predicted walk-forward: each from fits before its kick-off
        backfilled = (
            Prediction.select(Prediction.fitted_at, Match.kickoff_at)
            .join(Match)
            .where(~Prediction.is_live)
        )
        assert backfilled.count() > 4 * 900
        assert all(fitted <= kickoff for fitted, kickoff in backfilled.tuples())
        unpredicted = Match.select().where(
            (Match.status == "finished") & Match.id.not_in(Prediction.select(Prediction.match))
        )
        assert unpredicted.count() == 0
        # the weekend's fixtures are predicted live: the first day ends with live picks
        assert Pick.select().where(Pick.is_live).count() > 0
        before = stored_rows(*DATA)

    again = runner.invoke(args=["data", "bootstrap", "--seasons", "1"])
    assert again.exit_code == 0, again.output
    assert "0 matches new, 0 updated, 0 odds stored" in again.output
    assert "backfill skipped: nothing new was stored" in again.output
    assert "missing: E1 2324: not served" in again.output
    second = football_data.requests[len(asked) :]
    served = [headers for _, path, headers in second if not path.endswith("2324/E1.csv")]
    assert len(served) == 4 and all("If-None-Match" in headers for headers in served)
    with app.app_context():
        assert stored_rows(*DATA) == before
        assert Operation.select().where(Operation.kind == "data-bootstrap").count() == 2
    db.close()


def test_the_operations_api_bootstraps_for_operators_only(make_app, football_data):
    app = _app(make_app, football_data, FOOTBALL_DATA_LEAGUES="E0")
    client = app.test_client()
    with app.app_context():
        people = factories.people()
    path = "/api/v1/ops/operations/data-bootstraps"
    asserts.unauthorized(client.post(path, json={}))
    asserts.problem(client.post(path, json={}, headers=people["pro"][1]), 403, "role-required")
    asserts.problem(
        client.post(path, json={"seasons": 31}, headers=people["operator"][1]),
        422,
        "validation-error",
    )
    answer = client.post(path, json={"seasons": 0}, headers=people["operator"][1])
    assert answer.status_code == 200, answer.json
    assert answer.json["kind"] == "data-bootstrap" and answer.json["status"] == "succeeded"
    assert answer.json["params"] == {"seasons": 0}
    found = client.get(
        f"/api/v1/ops/operations/{answer.json['id']}/result", headers=people["operator"][1]
    )
    assert found.status_code == 200
    assert found.json["seasons"] == ["2324"] and found.json["missing"] == []
    assert found.json["sync"]["sources"][0]["matchesNew"] > 290
    assert found.json["backfill"]["matches"] > 290 and found.json["backfillSkipped"] is None


def test_the_bootstrap_needs_football_data(make_app):
    app = make_app(FOOTBALL_DATA_URL=None)
    with app.app_context():
        operator = factories.people()["operator"][1]
    answer = app.test_client().post(
        "/api/v1/ops/operations/data-bootstraps", json={}, headers=operator
    )
    asserts.problem(answer, 409, "source-not-configured")
    result = app.test_cli_runner().invoke(args=["data", "bootstrap"])
    assert result.exit_code == 1 and "not configured" in result.output
    with app.app_context():
        assert Operation.select().count() == 0


def test_a_league_the_source_does_not_serve_is_asked_for_once_a_day(make_app, football_data):
    app = _app(make_app, football_data, FOOTBALL_DATA_SEASONS="2324")
    now = FRIDAY
    with app.app_context():
        for hours in (0, 1):
            operation = jobs.data_sync(
                "football-data", app.config, now=now + timedelta(hours=hours)
            )
            _kind, result = jobs.result(operation["id"], app.config)
            (report,) = result["sources"]
            assert report["errors"] == []
            assert any("2324/E1.csv: not served" in line for line in report["skipped"])
        assert football_data.paths().count("/mmz4281/2324/E1.csv") == 1  # not again within a day
        (source,) = [
            row
            for row in health.report(app.config, lambda: ("ok", ""), 1.0, now)["services"]
            if row["name"] == "football-data"
        ]
        assert "last error" not in source["detail"]
        jobs.data_sync("football-data", app.config, now=now + timedelta(hours=25))
        assert football_data.paths().count("/mmz4281/2324/E1.csv") == 2  # a day later: asked
