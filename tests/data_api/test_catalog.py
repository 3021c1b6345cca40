"""GET /api/v1/data/catalog: the resources and the leagues with their data."""

from datetime import UTC, datetime

from tests import factories

CATALOG = "/api/v1/data/catalog"


def test_leagues_with_seasons_counts_and_date_ranges(app, client, people):
    with app.app_context():
        first = datetime(2024, 8, 10, 14, 0, tzinfo=UTC)
        factories.match("A", "B", kickoff=first, season="2024-25")
        factories.match(
            "B", "A", kickoff=datetime(2025, 3, 1, 19, 30, tzinfo=UTC), season="2024-25"
        )
        factories.match("A", "B", kickoff=datetime(2025, 8, 9, 15, 0, tzinfo=UTC), season="2025-26")
        factories.match(
            "X", "Y", kickoff=first, league=("CUP", "Test Cup", "Testland", "cup"), season="2024-25"
        )
    body = client.get(CATALOG, headers=people["pro"][1]).get_json()
    leagues = {league["code"]: league for league in body["leagues"]}
    assert leagues["TST"] == {
        "id": leagues["TST"]["id"],
        "code": "TST",
        "name": "Test League",
        "country": "Testland",
        "competitionType": "top-flight",
        "seasons": ["2024-25", "2025-26"],
        "matchCount": 3,
        "firstKickoffAt": "2024-08-10T14:00:00Z",
        "lastKickoffAt": "2025-08-09T15:00:00Z",
    }
    assert (leagues["CUP"]["competitionType"], leagues["CUP"]["matchCount"]) == ("cup", 1)


def test_resources_and_formats(client, people):
    body = client.get(CATALOG, headers=people["admin"][1]).get_json()
    assert body["exportFormats"] == ["csv", "json", "ndjson"]
    resources = {resource["name"]: resource for resource in body["resources"]}
    assert set(resources) == {
        "matches",
        "picks",
        "predictions",
        "odds",
        "teams",
        "leagues",
        "track-record",
    }
    assert resources["matches"]["includes"] == ["odds", "predictions", "picks", "intelligence"]
    assert "rating" in resources["picks"]["filters"] and "clv" in resources["picks"]["fields"]
    assert body["leagues"] == []
