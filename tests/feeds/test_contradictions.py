"""Contradictions: two sources disagreeing on a finished match's score, through real syncs
against the local football-data and The Odds API servers on a frozen clock. One contradiction,
recorded once, shown in health, holding the match's settlement until an operator resolves it
through the Operations API or the CLI (recorded as an operation naming who); a file repeating
it is asked for conditionally and costs nothing; a result already settled is protected."""

import json
from datetime import timedelta

import pytest

from models import Contradiction, LedgerEntry, Match, Operation, Pick
from services.feeds.formats import footballdata
from services.operations import health, jobs
from tests import factories, sync_world
from tests.data import needs_football_data
from tests.source_servers import OddsApiServer, http_date
from tests.syncing import KEY, serve, source_report, sync_app, sync_result

pytestmark = needs_football_data


@pytest.fixture
def odds():
    with OddsApiServer(credits=500, key=KEY) as server:
        yield server


def _season_score(files, match) -> tuple[int, int]:
    """The score football-data's season file gives ``match``."""
    parsed = footballdata.parse(files[sync_world.SEASON].decode())
    (record,) = [
        r
        for r in parsed.matches
        if Match.slug_for(r.home_team, r.away_team, r.kickoff_at) == match.slug
    ]
    return record.home_goals, record.away_goals


def _scores_event(match, home, away) -> dict:
    """The Odds API's ``/scores`` event of ``match`` finished ``home``-``away``."""
    return {
        "id": f"event-{match.id}",
        "sport_key": "soccer_epl",
        "commence_time": match.kickoff_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "completed": True,
        "home_team": match.home_team.name,
        "away_team": match.away_team.name,
        "scores": [
            {"name": match.home_team.name, "score": str(home)},
            {"name": match.away_team.name, "score": str(away)},
        ],
    }


def _picked_match():
    """The match of the first live pick Friday's sync made."""
    return Pick.select().where(Pick.is_live).order_by(Pick.id).first().match


def _entry(checked, name):
    return next(service for service in checked["services"] if service["name"] == name)


def test_two_sources_disagreeing_hold_the_match_until_an_operator_takes_one_through_the_api(
    make_app, football_data, odds
):
    """football-data's season file and The Odds API's scores give one finished match two scores
    in one sync: one contradiction, recorded once over three syncs, the source degraded in
    health, the match's picks unsettled while the others settle; an admin takes The Odds API's
    score through the Operations API (an operation naming them) and the next sync settles the
    match on it."""
    (friday, fri_files), _, (monday, mon_files) = sync_world.week()
    clock = factories.Clock(friday)
    app = sync_app(make_app, football_data, odds, CLOCK=clock)
    with app.app_context():
        serve(football_data, fri_files, friday)
        sync_result(app, friday, "football-data")
        match = _picked_match()
        home, away = _season_score(mon_files, match)
        odds.scores["soccer_epl"] = [_scores_event(match, home + 1, away)]
        serve(football_data, mon_files, monday)

        syncs = [monday + timedelta(minutes=30 * n) for n in range(3)]
        results = [sync_result(app, moment) for moment in syncs]
        first = source_report(results[0], "the-odds-api")
        assert first["contradictions"] == 1
        assert "contradiction opened" in first["rejected_rows"][0]["reason"]
        assert [result["settled"] for result in results] == [0, 0, 0]  # held
        for later in results[1:]:
            report = source_report(later, "the-odds-api")
            assert report["contradictions"] == 0
            assert not any("contradiction" in row["reason"] for row in report["rejected_rows"])
        (row,) = Contradiction.select()
        assert (row.match_id, row.field, row.status, row.source) == (
            match.id,
            "score",
            "open",
            "the-odds-api",
        )
        assert (row.stored_value, row.source_value) == (f"{home}-{away}", f"{home + 1}-{away}")
        assert row.opened_at == row.updated_at == monday
        pending = list(Pick.select().where(Pick.match == match.id))
        assert pending and all(pick.status == "pending" for pick in pending)

        checked = health.report(app.config, lambda: ("ok", "memory"), 1.0, syncs[-1])
        entry = _entry(checked, "the-odds-api")
        assert entry["status"] == "degraded" and checked["status"] == "degraded"
        assert "1 open contradiction holding settlement" in entry["detail"]
        assert f"#{row.id} " in entry["detail"]
        assert "open contradiction" not in _entry(checked, "football-data")["detail"]

        admin, headers = factories.people()["admin"]
    client = app.test_client()
    clock.now = syncs[-1] + timedelta(minutes=5)
    listed = client.get("/api/v1/ops/contradictions?status=open", headers=headers)
    assert listed.status_code == 200
    assert listed.json["total"] == 1
    (item,) = listed.json["items"]
    assert item["id"] == row.id and item["picksHeld"] == len(pending)
    assert (item["storedValue"], item["sourceValue"]) == (f"{home}-{away}", f"{home + 1}-{away}")

    answer = client.post(
        f"/api/v1/ops/contradictions/{row.id}/resolve", json={"value": "source"}, headers=headers
    )
    assert answer.status_code == 200, answer.json
    assert answer.json["status"] == "resolved"
    assert answer.json["chosenValue"] == f"{home + 1}-{away}"
    assert answer.json["resolvedBy"] == f"user:{admin.id}"
    assert answer.json["resolvedAt"] == clock.now.strftime("%Y-%m-%dT%H:%M:%SZ")
    again = client.post(
        f"/api/v1/ops/contradictions/{row.id}/resolve", json={"value": "stored"}, headers=headers
    )
    assert again.status_code == 409 and again.mimetype == "application/problem+json"
    assert again.json["type"].endswith("/problems/contradiction-not-open")
    assert client.get("/api/v1/ops/contradictions", headers=headers).json["total"] == 1
    resolved = client.get("/api/v1/ops/contradictions?status=resolved", headers=headers)
    assert resolved.json["total"] == 1 and resolved.json["items"][0]["picksHeld"] == 0

    with app.app_context():
        operation = Operation.get_by_id(answer.json["operationId"])
        assert (operation.kind, operation.status, operation.created_by_id) == (
            "contradiction-resolve",
            "succeeded",
            admin.id,
        )
        assert operation.params == {
            "contradictionId": row.id,
            "value": "source",
            "by": f"user:{admin.id}",
        }
        stored = Match.get_by_id(match.id)
        assert (stored.home_goals, stored.away_goals) == (home + 1, away)
        checked = health.report(app.config, lambda: ("ok", "memory"), 1.0, clock.now)
        assert "open contradiction" not in _entry(checked, "the-odds-api")["detail"]

        result = sync_result(app, clock.now + timedelta(minutes=5))
        assert result["settled"] == len(pending)
        picks = list(Pick.select().where(Pick.match == match.id))
        assert all(pick.status != "pending" for pick in picks)
        live = [pick.id for pick in picks if pick.is_live]
        assert live
        outcomes = list(
            LedgerEntry.select().where(
                LedgerEntry.pick_id.in_(live) & (LedgerEntry.kind != "pick.published")
            )
        )
        assert len(outcomes) == len(live)
        for entry in outcomes:
            assert json.loads(entry.body)["score"] == {"home": home + 1, "away": away}


def test_a_repeated_contradiction_costs_nothing_and_the_cli_resolves_it(
    make_app, football_data, odds
):
    """football-data corrects a stored score (Man City 1-1 Chelsea rewritten 5-1): one
    contradiction; the next syncs ask for the file conditionally and hear 304 (nothing read,
    nothing listed again); the CLI lists it and accepts the source's score, recorded as an
    operation naming the operator."""
    (friday, files), *_ = sync_world.week()
    clock = factories.Clock(friday)
    app = sync_app(make_app, football_data, odds, CLOCK=clock)
    slug = "man-city-vs-chelsea-2024-02-17"
    with app.app_context():
        serve(football_data, files, friday)
        sync_result(app, friday, "football-data")
        season = files[sync_world.SEASON]
        row = next(line for line in season.split(b"\r\n") if b",Man City,Chelsea,1,1,D" in line)
        edited = season.replace(
            row, row.replace(b",Man City,Chelsea,1,1,D", b",Man City,Chelsea,5,1,H")
        )
        football_data.put(sync_world.SEASON, edited, http_date(friday + timedelta(minutes=1)))
        syncs = [friday + timedelta(minutes=30 * n) for n in range(1, 4)]
        asked = len(football_data.requests)
        reports = [
            source_report(sync_result(app, moment, "football-data"), "football-data")
            for moment in syncs
        ]
        assert reports[0]["contradictions"] == 1 and reports[0]["unchanged"] == 1
        assert "the stored result kept" in reports[0]["rejected_rows"][0]["reason"]
        for report in reports[1:]:
            assert report["unchanged"] == 2  # the season file and the fixtures: 304 both
            assert report["contradictions"] == 0 and report["rejected_rows"] == []
        season_asks = [
            headers
            for _, path, headers in football_data.requests[asked:]
            if path == sync_world.SEASON
        ]
        assert len(season_asks) == 3
        assert all(headers.get("If-None-Match") for headers in season_asks[1:])
        assert season_asks[1]["If-None-Match"] == season_asks[2]["If-None-Match"]
        (contradiction,) = Contradiction.select()
        assert (contradiction.stored_value, contradiction.source_value) == ("1-1", "5-1")
        assert contradiction.source == "football-data" and contradiction.opened_at == syncs[0]

    runner = app.test_cli_runner()
    listed = runner.invoke(args=["data", "contradictions", "list"])
    assert listed.exit_code == 0, listed.output
    assert (
        f"#{contradiction.id} open Man City v Chelsea ({slug}) score: 1-1 stored, "
        "5-1 from football-data" in listed.output
    )
    assert "1 open contradictions" in listed.output
    missing = runner.invoke(args=["data", "contradictions", "resolve", str(contradiction.id)])
    assert missing.exit_code == 2 and "give --keep or --accept" in missing.output
    clock.now = syncs[-1] + timedelta(minutes=1)
    resolved = runner.invoke(
        args=[
            "data",
            "contradictions",
            "resolve",
            str(contradiction.id),
            "--accept",
            "--by",
            "alice",
        ]
    )
    assert resolved.exit_code == 0, resolved.output
    assert "5-1 chosen by cli:alice" in resolved.output
    again = runner.invoke(
        args=["data", "contradictions", "resolve", str(contradiction.id), "--keep"]
    )
    assert again.exit_code == 1 and "was resolved by cli:alice" in again.output
    assert "0 open contradictions" in runner.invoke(args=["data", "contradictions", "list"]).output
    with app.app_context():
        match = Match.get(Match.slug == slug)
        assert (match.home_goals, match.away_goals) == (5, 1)
        operation = Operation.get(Operation.kind == "contradiction-resolve")
        assert operation.created_by_id is None and operation.params["by"] == "cli:alice"
        assert operation.created_at == clock.now
        row = Contradiction.get_by_id(contradiction.id)
        assert (row.status, row.resolved_by, row.chosen_value) == ("resolved", "cli:alice", "5-1")
        assert row.resolved_at == clock.now
        # the file says what was chosen now: nothing new, nothing opened again
        report = source_report(
            sync_result(app, clock.now + timedelta(minutes=5), "football-data"), "football-data"
        )
        assert report["unchanged"] == 2 and Contradiction.select().count() == 1


def test_a_result_settled_before_the_disagreement_can_only_be_kept(make_app, football_data, odds):
    """The Odds API's score settles a match's picks on Sunday evening; football-data's season
    file disagrees on Monday: a contradiction, the settled picks untouched, and the operator may
    keep the stored result but never change it (409 settled-result-protected)."""
    (friday, fri_files), _, (monday, mon_files) = sync_world.week()
    clock = factories.Clock(friday)
    app = sync_app(make_app, football_data, odds, CLOCK=clock)
    with app.app_context():
        serve(football_data, fri_files, friday)
        sync_result(app, friday, "football-data")
        match = _picked_match()
        home, away = _season_score(mon_files, match)
        odds.scores["soccer_epl"] = [_scores_event(match, home, away + 2)]
        evening = match.kickoff_at + timedelta(hours=3)
        sync_result(app, evening, "the-odds-api")
        picks = Pick.select().where(Pick.match == match.id)
        settled = {pick.id: (pick.status, pick.profit) for pick in picks.clone()}
        assert settled and all(status != "pending" for status, _ in settled.values())

        serve(football_data, mon_files, monday)
        report = source_report(sync_result(app, monday, "football-data"), "football-data")
        assert report["contradictions"] == 1
        (row,) = Contradiction.select()
        assert (row.stored_value, row.source_value, row.source) == (
            f"{home}-{away + 2}",
            f"{home}-{away}",
            "football-data",
        )
        assert {pick.id: (pick.status, pick.profit) for pick in picks.clone()} == settled
        _, headers = factories.people()["admin"]
    client = app.test_client()
    clock.now = monday + timedelta(minutes=5)
    refused = client.post(
        f"/api/v1/ops/contradictions/{row.id}/resolve", json={"value": "source"}, headers=headers
    )
    assert refused.status_code == 409 and refused.mimetype == "application/problem+json"
    assert refused.json["type"].endswith("/problems/settled-result-protected")
    own = client.post(
        f"/api/v1/ops/contradictions/{row.id}/resolve", json={"value": "1-0"}, headers=headers
    )
    assert own.status_code == 409
    with app.app_context():
        assert Operation.select().where(Operation.kind == "contradiction-resolve").count() == 0
    kept = client.post(
        f"/api/v1/ops/contradictions/{row.id}/resolve", json={"value": "stored"}, headers=headers
    )
    assert kept.status_code == 200, kept.json
    assert kept.json["chosenValue"] == f"{home}-{away + 2}"
    with app.app_context():
        stored = Match.get_by_id(match.id)
        assert (stored.home_goals, stored.away_goals) == (home, away + 2)
        assert {pick.id: (pick.status, pick.profit) for pick in picks.clone()} == settled


@pytest.mark.parametrize(
    ("body", "status"),
    [({"value": "maybe"}, 422), ({"value": "1-"}, 422), ({}, 422), ({"value": "stored"}, 404)],
)
def test_a_resolution_names_an_open_contradiction_and_a_choice(app, people, body, status):
    client = app.test_client()
    _, headers = people["admin"]
    answer = client.post("/api/v1/ops/contradictions/99/resolve", json=body, headers=headers)
    assert answer.status_code == status and answer.mimetype == "application/problem+json"


def test_only_operators_and_admins_see_contradictions(app, people):
    client = app.test_client()
    assert client.get("/api/v1/ops/contradictions").status_code == 401
    _, headers = people["pro"]
    answer = client.get("/api/v1/ops/contradictions", headers=headers)
    assert answer.status_code == 403
    _, headers = people["operator"]
    answer = client.get("/api/v1/ops/contradictions?status=open", headers=headers)
    assert answer.status_code == 200 and answer.json["items"] == []


def test_a_value_an_operator_ruled_on_opens_nothing_again(make_app, football_data, odds):
    """Kept 1-1 against football-data's 5-1: when the file changes again (another row's
    referee) and still says 5-1, nothing is opened or listed; a third score opens a new one."""
    (friday, files), *_ = sync_world.week()
    clock = factories.Clock(friday)
    app = sync_app(make_app, football_data, odds, CLOCK=clock)
    season = files[sync_world.SEASON]
    row = next(line for line in season.split(b"\r\n") if b",Man City,Chelsea,1,1,D" in line)
    with app.app_context():
        serve(football_data, files, friday)
        sync_result(app, friday, "football-data")
        corrected = season.replace(row, row.replace(b",1,1,D,", b",5,1,H,"))
        football_data.put(sync_world.SEASON, corrected, http_date(friday))
        sync_result(app, friday + timedelta(minutes=30), "football-data")
        (first,) = Contradiction.select()
        jobs.resolve_contradiction(first.id, "stored", operator="bob", now=clock.now)

        refereed = corrected.replace(b",A Madley,", b",M Oliver,")
        assert refereed != corrected
        football_data.put(sync_world.SEASON, refereed, http_date(friday))
        report = source_report(
            sync_result(app, friday + timedelta(minutes=60), "football-data"), "football-data"
        )
        assert report["unchanged"] == 1  # the season file was read again, the fixtures 304
        assert report["contradictions"] == 0 and report["rejected_rows"] == []
        assert Contradiction.select().count() == 1

        third = refereed.replace(b",Man City,Chelsea,5,1,H,", b",Man City,Chelsea,2,1,H,")
        football_data.put(sync_world.SEASON, third, http_date(friday))
        report = source_report(
            sync_result(app, friday + timedelta(minutes=90), "football-data"), "football-data"
        )
        assert report["contradictions"] == 1
        opened = Contradiction.get(Contradiction.status == "open")
        assert (opened.stored_value, opened.source_value) == ("1-1", "2-1")
        match = Match.get(Match.slug == "man-city-vs-chelsea-2024-02-17")
        assert (match.home_goals, match.away_goals) == (1, 1)
