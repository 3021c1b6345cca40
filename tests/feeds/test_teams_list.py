"""The teams an operator maps names to: `flask data teams list` and `GET /api/v1/ops/teams` show
each team's id, country and every source's name of it, and the names no team maps yet; the id
the listing shows is the one `data teams map --team` takes."""

import re
from datetime import UTC, datetime, timedelta

import pytest

from models import Team, TeamAlias
from services.feeds import names
from tests import asserts, factories
from tests.helpers import counted_queries

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
ENGLAND = ("E0", "Premier League", "England", "top-flight")
SPAIN = ("SP1", "La Liga", "Spain", "top-flight")
PATH = "/api/v1/ops/teams"


@pytest.fixture
def app(make_app):
    return make_app(CLOCK=lambda: NOW)


@pytest.fixture
def teams(app):
    """Three English and two Spanish teams; football-data's and The Odds API's names of
    Arsenal; The Odds API's `Spurs`, mapped to no team yet. Name → team id."""
    with app.app_context():
        day = NOW - timedelta(days=3)
        factories.match("Arsenal", "Chelsea", kickoff=day, league=ENGLAND)
        factories.match("Tottenham", "Arsenal", kickoff=day + timedelta(hours=3), league=ENGLAND)
        factories.match("Real Madrid", "Barcelona", kickoff=day, league=SPAIN)
        found = {team.name: team.id for team in Team.select()}
        names.map_name("football-data", "England", "Arsenal", found["Arsenal"], False, NOW)
        names.map_name("the-odds-api", "England", "Arsenal FC", found["Arsenal"], False, NOW)
        TeamAlias.create(source="the-odds-api", country="England", name="Spurs", first_seen_at=NOW)
        return found


def _listed(output: str) -> dict[str, str]:
    """The team lines of `data teams list`: id → the line."""
    return {m[1]: m[0] for m in re.finditer(r"^ *(\d+)  .*$", output, re.MULTILINE)}


def test_the_cli_lists_teams_with_ids_and_aliases_and_the_id_maps_a_name(app, teams):
    runner = app.test_cli_runner()
    result = runner.invoke(args=["data", "teams", "list"])
    assert result.exit_code == 0, result.output
    lines = _listed(result.output)
    assert sorted(lines) == sorted(str(team_id) for team_id in teams.values())
    arsenal = lines[str(teams["Arsenal"])]
    assert "Arsenal" in arsenal and "England" in arsenal
    assert "football-data: Arsenal; the-odds-api: Arsenal FC" in arsenal
    assert "5 teams" in result.output
    assert "unmatched: the-odds-api England 'Spurs'" in result.output
    assert "1 unmatched" in result.output

    spain = runner.invoke(args=["data", "teams", "list", "--country", "Spain"])
    assert sorted(_listed(spain.output)) == sorted(
        [str(teams["Real Madrid"]), str(teams["Barcelona"])]
    )
    assert "2 teams" in spain.output and "0 unmatched" in spain.output

    unmapped = runner.invoke(args=["data", "teams", "list", "--unmapped"])
    assert _listed(unmapped.output) == {} and "5 teams" not in unmapped.output
    assert "unmatched: the-odds-api England 'Spurs'" in unmapped.output

    # the id the listing shows is the one `map` takes
    spurs = next(i for i, line in lines.items() if "Tottenham" in line)
    mapped = runner.invoke(
        args=["data", "teams", "map", "the-odds-api", "England", "Spurs", "--team", spurs]
    )
    assert mapped.exit_code == 0, mapped.output
    after = runner.invoke(args=["data", "teams", "list"])
    assert "the-odds-api: Spurs" in _listed(after.output)[spurs]
    assert "0 unmatched" in after.output


def test_the_ops_api_pages_teams_with_aliases_and_unmapped_names(app, teams):
    client = app.test_client()
    with app.app_context():
        admin = factories.people()["admin"][1]
    answer = client.get(PATH, headers=admin)
    assert answer.status_code == 200 and answer.mimetype == "application/json"
    body = answer.json
    assert (body["page"], body["pageSize"], body["total"]) == (1, 20, 5)
    assert [(team["country"], team["name"]) for team in body["items"]] == [
        ("England", "Arsenal"),
        ("England", "Chelsea"),
        ("England", "Tottenham"),
        ("Spain", "Barcelona"),
        ("Spain", "Real Madrid"),
    ]
    assert body["items"][0] == {
        "id": teams["Arsenal"],
        "name": "Arsenal",
        "country": "England",
        "aliases": [
            {"source": "football-data", "name": "Arsenal"},
            {"source": "the-odds-api", "name": "Arsenal FC"},
        ],
    }
    assert body["unmapped"] == [
        {
            "source": "the-odds-api",
            "country": "England",
            "name": "Spurs",
            "firstSeenAt": "2026-03-02T12:00:00Z",
        }
    ]

    second = client.get(PATH, query_string={"page": 2, "pageSize": 2}, headers=admin).json
    assert [team["name"] for team in second["items"]] == ["Tottenham", "Barcelona"]
    assert second["total"] == 5

    spain = client.get(PATH, query_string={"country": "Spain"}, headers=admin).json
    assert [team["name"] for team in spain["items"]] == ["Barcelona", "Real Madrid"]
    assert spain["unmapped"] == [] and spain["total"] == 2


def test_the_team_listing_runs_the_same_queries_whatever_its_length(app, teams):
    client = app.test_client()
    with app.app_context():
        admin = factories.people()["admin"][1]
    client.get(PATH, headers=admin)  # the first request also checks the schema
    counts = []
    for size in (1, 5):
        with counted_queries() as statements:
            answer = client.get(PATH, query_string={"pageSize": size}, headers=admin)
        assert len(answer.json["items"]) == size
        counts.append(len(statements))
    assert counts[0] == counts[1]


@pytest.mark.parametrize("kind", ["free", "pro", "operator"])
def test_only_admins_list_teams(app, kind):
    with app.app_context():
        headers = factories.people()[kind][1]
    client = app.test_client()
    asserts.unauthorized(client.get(PATH))
    asserts.problem(client.get(PATH, headers=headers), 403, "role-required")


@pytest.mark.parametrize("query", [{"pageSize": 101}, {"page": 0}, {"country": ""}, {"x": 1}])
def test_the_team_listing_refuses_bad_arguments(app, query):
    with app.app_context():
        admin = factories.people()["admin"][1]
    answer = app.test_client().get(PATH, query_string=query, headers=admin)
    asserts.problem(answer, 422, "validation-error")
