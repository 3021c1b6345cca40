"""The live sources' sync against real local HTTP servers on a frozen clock: a week of
football-data's files (fixtures with prices on Friday, moved prices on Saturday, results on
Monday), an Odds-API-shaped server counting credits, and each way a source fails."""

import hashlib
import json
import subprocess
import sys
import time
import urllib.request
from datetime import timedelta

import pytest

from models import (
    League,
    LedgerCheckpoint,
    LedgerEntry,
    LedgerTimestamp,
    Match,
    OddsQuote,
    Operation,
    Pick,
    Prediction,
    PriceSeen,
    SourceFetch,
    SourceState,
    Team,
    TeamAlias,
)
from models.schema import create_tables
from services.feeds import names, sources
from services.feeds.sources import http
from services.operations import health, schedule
from services.record import timestamps
from store.database import db
from tests import factories, servers, sync_world
from tests.data import needs_football_data
from tests.helpers import stored_rows
from tests.source_servers import OddsApiServer, http_date
from tests.syncing import (
    KEY,
    odds_events,
    run_sync,
    serve,
    source_report,
    sync_app,
)

pytestmark = needs_football_data

#: The tables a sync's data lands in: a sync with nothing new leaves them as they were.
DATA = (
    Match,
    Team,
    OddsQuote,
    PriceSeen,
    Prediction,
    Pick,
    LedgerEntry,
    LedgerCheckpoint,
    LedgerTimestamp,
)


def _signed_before_kickoff(pick) -> bool:
    """Whether a checkpoint dated before the pick's kick-off covers its ledger entry."""
    entry = (
        LedgerEntry.select(LedgerEntry.position)
        .where((LedgerEntry.pick_id == pick.id) & (LedgerEntry.kind == "pick.published"))
        .scalar()
    )
    return (
        entry is not None
        and LedgerCheckpoint.select()
        .where(
            (LedgerCheckpoint.size > entry)
            & (LedgerCheckpoint.published_at < pick.match.kickoff_at)
        )
        .exists()
    )


def test_a_week_of_fixtures_prices_and_results_makes_signs_and_settles_live_picks(
    make_app, football_data, waits
):
    """Friday's fixture list is predicted live, its picks signed before kick-off; Saturday's
    moved prices enter the history; Monday's results settle the picks against the service's
    own closing line (the season file carries no closing columns)."""
    app = sync_app(make_app, football_data)
    (friday, fri_files), (saturday, sat_files), (monday, mon_files) = sync_world.week()
    with app.app_context():
        serve(football_data, fri_files, friday)
        _, result = run_sync(app, friday, waits)
        assert source_report(result)["matches_new"] == 293 and result["predicted"] == 10
        live = list(Pick.select().where(Pick.is_live))
        assert live and result["published"] == len(live)
        assert all(_signed_before_kickoff(pick) for pick in live)

        serve(football_data, sat_files, saturday)
        _, result = run_sync(app, saturday, waits)
        assert source_report(result)["prices_changed"] == 10
        moved = PriceSeen.select().where(PriceSeen.first_seen_at == saturday).count()
        assert moved > 0
        assert (
            PriceSeen.select()
            .where((PriceSeen.first_seen_at == friday) & (PriceSeen.last_seen_at == friday))
            .count()
            >= moved
        )
        live = list(Pick.select().where(Pick.is_live))
        assert all(_signed_before_kickoff(pick) for pick in live)

        serve(football_data, mon_files, monday)
        _, result = run_sync(app, monday, waits)
        assert result["closing_lines"] == 10 and result["settled"] >= 1
        for pick in Pick.select().where(Pick.is_live & (Pick.status != "pending")):
            assert pick.closing_bookmaker is not None
            own = (
                PriceSeen.select(PriceSeen.price)
                .where(
                    (PriceSeen.match == pick.match_id)
                    & (PriceSeen.market == pick.market)
                    & (PriceSeen.bookmaker == pick.closing_bookmaker)
                    & (PriceSeen.selection == pick.selection)
                    & (PriceSeen.first_seen_at < pick.match.kickoff_at)
                )
                .order_by(PriceSeen.first_seen_at.desc())
                .scalar()
            )
            assert pick.closing_odds == own  # Saturday's price: the service's own close
            assert pick.clv is not None
            assert pick.closing_line == "seen"  # and the pick says so, as its outcome does
            (outcome,) = LedgerEntry.select(LedgerEntry.body).where(
                (LedgerEntry.pick_id == pick.id) & (LedgerEntry.kind != "pick.published")
            )
            assert json.loads(outcome.body)["closingLine"] == "seen"


def test_a_second_sync_with_nothing_new_asks_conditionally_and_writes_nothing(
    make_app, football_data, waits
):
    app = sync_app(make_app, football_data)
    (friday, files), *_ = sync_world.week()
    with app.app_context():
        serve(football_data, files, friday)
        run_sync(app, friday, waits)
        before = stored_rows(*DATA, SourceFetch)
        asked = len(football_data.requests)
        _, result = run_sync(app, friday + timedelta(minutes=30), waits)
        assert source_report(result)["unchanged"] == 2
        assert stored_rows(*DATA, SourceFetch) == before
        again = football_data.requests[asked:]
        assert all(headers.get("If-None-Match") for _, _, headers in again)
        assert all(headers.get("If-Modified-Since") for _, _, headers in again)


def _broken(files, how):
    body = files[sync_world.FIXTURES]
    if how == "html":
        return 200, {"Content-Type": "text/html"}, b"<!DOCTYPE html><html>Server busy</html>"
    if how == "cut-short":
        return 200, {"Content-Type": "text/csv", "X-Cut-To": str(len(body) // 2)}, body
    if how == "last-line-cut":
        return 200, {"Content-Type": "text/csv"}, body[: body.rindex(b",")]
    if how == "renamed-column":
        return 200, {"Content-Type": "text/csv"}, body.replace(b"HomeTeam", b"Home", 1)
    if how == "server-error":
        return 500, {"Content-Type": "text/html"}, b"<html>Internal Server Error</html>"
    raise AssertionError(how)


@pytest.mark.parametrize(
    "how", ["html", "cut-short", "last-line-cut", "renamed-column", "server-error"]
)
def test_a_failing_source_is_recorded_and_loses_nothing(make_app, football_data, waits, how):
    """Saturday's fixture file comes back broken: Friday's data stays as stored, the error is
    in the operation's result, the source's standing and the health report, and the next sync
    reads the file again in full."""
    app = sync_app(make_app, football_data, SOURCE_RETRIES=1)
    (friday, fri_files), (saturday, sat_files), _ = sync_world.week()
    with app.app_context():
        serve(football_data, fri_files, friday)
        run_sync(app, friday, waits)
        before = stored_rows(*DATA)
        serve(football_data, sat_files, saturday)
        answer = _broken(sat_files, how)
        # an answer the server cut short, or a server error, is tried again (SOURCE_RETRIES=1):
        # it fails both tries
        tries = 2 if how in ("server-error", "cut-short") else 1
        status, headers, body = answer
        football_data.script[sync_world.FIXTURES] = [
            (status, dict(headers), body) for _ in range(tries)
        ]
        _, result = run_sync(app, saturday, waits)
        report = source_report(result)
        assert report["errors"] and sync_world.FIXTURES in report["errors"][0]
        assert stored_rows(*DATA) == before
        state = SourceState.get(SourceState.source == "football-data")
        assert state.last_error_at == saturday
        checked = health.report(app.config, lambda: ("ok", "memory"), 1.0, saturday)
        entry = next(s for s in checked["services"] if s["name"] == "football-data")
        assert entry["status"] == "failing" and "last error 0 minutes ago" in entry["detail"]

        _, result = run_sync(app, saturday + timedelta(minutes=5), waits)
        assert (
            source_report(result)["errors"] == [] and source_report(result)["prices_changed"] == 10
        )
        kept = SourceFetch.get(SourceFetch.url == football_data.base + sync_world.FIXTURES)
        assert kept.digest == hashlib.sha256(sat_files[sync_world.FIXTURES]).hexdigest()


def test_retries_back_off_with_jitter_and_obey_retry_after(make_app, football_data, waits):
    app = sync_app(make_app, football_data, SOURCE_RETRIES=3, SOURCE_BACKOFF=2.0)
    (friday, files), *_ = sync_world.week()
    with app.app_context():
        serve(football_data, files, friday)
        football_data.script[sync_world.SEASON] = [
            (503, {"Content-Type": "text/html"}, b"<html>busy</html>"),
            (429, {"Retry-After": "7"}, b""),
        ]
        _, result = run_sync(app, friday, waits)
        assert source_report(result)["errors"] == []
        assert 2.0 <= waits.asked[0] <= 4.0  # backoff × (1 + jitter)
        assert waits.asked[1] == 7.0


def test_a_429_asking_longer_than_allowed_pauses_the_source(make_app, football_data, waits):
    app = sync_app(make_app, football_data, SOURCE_MAX_WAIT=60.0)
    (friday, files), *_ = sync_world.week()
    with app.app_context():
        serve(football_data, files, friday)
        football_data.script[sync_world.SEASON] = [(429, {"Retry-After": "3600"}, b"")]
        run_sync(app, friday, waits)
        state = SourceState.get(SourceState.source == "football-data")
        assert state.backoff_until == friday + timedelta(hours=1)
        asked = len(football_data.requests)
        _, result = run_sync(app, friday + timedelta(minutes=30), waits)
        assert len(football_data.requests) == asked  # no call before the hour is up
        assert "asked to wait" in source_report(result)["skipped"][0]
        assert waits.asked == []
        paused = SourceState.get(SourceState.source == "football-data")
        assert paused.backoff_until == friday + timedelta(hours=1)  # still paused
        assert paused.last_success_at is None
        run_sync(app, friday + timedelta(minutes=59), waits)
        assert len(football_data.requests) == asked
        _, result = run_sync(app, friday + timedelta(hours=1), waits)
        assert len(football_data.requests) == asked + 2 and source_report(result)["errors"] == []
        assert SourceState.get(SourceState.source == "football-data").backoff_until is None


def test_a_row_contradicting_a_stored_result_is_reported_and_the_result_kept(
    make_app, football_data, waits
):
    app = sync_app(make_app, football_data)
    (friday, files), *_ = sync_world.week()
    with app.app_context():
        serve(football_data, files, friday)
        run_sync(app, friday, waits)
        season = files[sync_world.SEASON]
        # Man City 1-1 Chelsea (17/02/2024) rewritten as 5-1
        row = next(line for line in season.split(b"\r\n") if b",Man City,Chelsea,1,1,D" in line)
        edited = season.replace(
            row, row.replace(b",Man City,Chelsea,1,1,D", b",Man City,Chelsea,5,1,H")
        )
        football_data.put(sync_world.SEASON, edited, http_date(friday))
        _, result = run_sync(app, friday + timedelta(minutes=30), waits)
        report = source_report(result)
        assert report["contradictions"] == 1
        assert "the stored result kept" in report["rejected_rows"][0]["reason"]
        match = Match.get(Match.slug == "man-city-vs-chelsea-2024-02-17")
        assert (match.home_goals, match.away_goals) == (1, 1)


def test_odds_api_names_are_mapped_never_a_silent_duplicate_and_credits_stay_in_budget(
    make_app, football_data, waits
):
    """The Odds API spells Forest its own way: its events are held back and the name listed
    until an operator maps it; every call is paid for in credits and none passes the budget."""
    (friday, files), *_ = sync_world.week()
    with OddsApiServer(credits=100, key=KEY) as odds:
        odds.events["soccer_epl"] = odds_events(files, {"Nott'm Forest": "Nottingham Forest"})
        app = sync_app(make_app, football_data, odds, ODDS_API_MONTHLY_CREDITS=5)
        with app.app_context():
            serve(football_data, files, friday)
            run_sync(app, friday, waits, "football-data")
            teams = Team.select().count()
            _, result = run_sync(app, friday, waits, "the-odds-api")
            report = source_report(result, "the-odds-api")
            assert report["unmatched"] == [
                {"source": "the-odds-api", "country": "England", "name": "Nottingham Forest"}
            ]
            assert report["held_back"] == 1 and Team.select().count() == teams
            assert report["credits_spent"] == 2 and report["credits_remaining"] == 98
            checked = health.report(app.config, lambda: ("ok", "memory"), 1.0, friday)
            entry = next(s for s in checked["services"] if s["name"] == "the-odds-api")
            assert "1 team name unmatched" in entry["detail"]
            assert "credits: 2 of 5 spent this month" in entry["detail"]

            forest = Team.get(Team.name == "Nott'm Forest")
            names.map_name("the-odds-api", "England", "Nottingham Forest", forest.id, False, friday)
            later = friday + timedelta(minutes=5)
            quotes = stored_rows(OddsQuote)
            _, result = run_sync(app, later, waits, "the-odds-api")
            report = source_report(result, "the-odds-api")
            assert report["held_back"] == 0 and report["unmatched"] == []

            def pinnacle(source):
                query = PriceSeen.select().where(
                    (PriceSeen.source == source) & (PriceSeen.bookmaker == "pinnacle")
                )
                return {(p.match_id, p.market, p.line, p.selection): p.price for p in query}

            # The same prices football-data gave: observations of The Odds API's own, and the
            # current quotes they merge into unchanged.
            odds_api = pinnacle("the-odds-api")
            assert odds_api and odds_api.items() <= pinnacle("football-data").items()
            assert stored_rows(OddsQuote) == quotes
            assert Team.select().count() == teams

            _, result = run_sync(app, later + timedelta(minutes=5), waits, "the-odds-api")
            report = source_report(result, "the-odds-api")
            assert report["calls"] == 0 and "budget" in report["skipped"][0]
            assert odds.used == 4 <= 5


def test_odds_api_scores_finish_matches_awaiting_a_result(make_app, football_data, waits):
    (friday, files), *_ = sync_world.week()
    with OddsApiServer(credits=100, key=KEY) as odds:
        app = sync_app(make_app, football_data, odds)
        with app.app_context():
            serve(football_data, files, friday)
            run_sync(app, friday, waits, "football-data")
            match = Match.get(Match.slug == "newcastle-vs-west-ham-2024-03-30")
            odds.scores["soccer_epl"] = [
                {
                    "id": "x",
                    "sport_key": "soccer_epl",
                    "commence_time": "2024-03-30T12:30:00Z",
                    "completed": True,
                    "home_team": "Newcastle",
                    "away_team": "West Ham",
                    "scores": [
                        {"name": "Newcastle", "score": "4"},
                        {"name": "West Ham", "score": "3"},
                    ],
                }
            ]
            evening = match.kickoff_at + timedelta(hours=3)
            run_sync(app, evening, waits, "the-odds-api")
            assert any("/scores" in path for path in odds.paths())
            match = Match.get_by_id(match.id)
            assert (match.status, match.home_goals, match.away_goals) == ("finished", 4, 3)


def test_the_operations_api_runs_a_data_sync(make_app, football_data, people_for):
    app = sync_app(make_app, football_data)
    (friday, files), *_ = sync_world.week()
    serve(football_data, files, friday)
    client, headers = people_for(app)
    answer = client.post("/api/v1/ops/operations/data-syncs", json={}, headers=headers)
    assert answer.status_code == 200, answer.json
    assert answer.json["kind"] == "data-sync" and answer.json["status"] == "succeeded"
    answer = client.post(
        "/api/v1/ops/operations/data-syncs", json={"source": "the-odds-api"}, headers=headers
    )
    assert answer.status_code == 409
    assert answer.mimetype == "application/problem+json"
    assert answer.json["type"].endswith("/problems/source-not-configured")
    answer = client.post(
        "/api/v1/ops/operations/data-syncs", json={"source": "elsewhere"}, headers=headers
    )
    assert answer.status_code == 422


@pytest.fixture
def people_for():
    def build(app):
        with app.app_context():
            people = factories.people()
        return app.test_client(), people["operator"][1]

    return build


def test_a_fixture_naming_an_unmapped_team_is_a_poison_row_set_aside_once(
    make_app, football_data, waits
):
    """The fixture file spells Newcastle its own way: the fixture is held back and the name
    listed once; the file keeps its validators, so the syncs after ask conditionally (it was
    read in full at every sync); once the name is mapped the next sync reads it and stores the
    fixture."""
    (friday, files), *_ = sync_world.week()
    files = dict(files)
    files[sync_world.FIXTURES] = files[sync_world.FIXTURES].replace(b"Newcastle", b"Newcastle Utd")
    app = sync_app(make_app, football_data)
    with app.app_context():
        serve(football_data, {sync_world.SEASON: files[sync_world.SEASON]}, friday)
        run_sync(app, friday - timedelta(hours=1), waits, "football-data")  # the league known
        serve(football_data, files, friday)
        _, result = run_sync(app, friday, waits, "football-data")
        report = source_report(result)
        assert report["held_back"] == 1 and report["errors"] == []
        assert [row["name"] for row in report["unmatched"]] == ["Newcastle Utd"]
        fixture = football_data.base + sync_world.FIXTURES
        assert SourceFetch.get(SourceFetch.url == fixture).etag is not None
        for minutes in (5, 10):
            _, result = run_sync(app, friday + timedelta(minutes=minutes), waits, "football-data")
            report = source_report(result)
            assert report["unchanged"] == report["calls"] == 2 and report["held_back"] == 0
        assert [row["name"] for row in names.unmatched("football-data")] == ["Newcastle Utd"]
        assert not Match.select().where(Match.slug == "newcastle-vs-west-ham-2024-03-30").exists()

        newcastle = Team.get(Team.name == "Newcastle").id
        names.map_name("football-data", "England", "Newcastle Utd", newcastle, False, friday)
        _, result = run_sync(app, friday + timedelta(minutes=15), waits, "football-data")
        report = source_report(result)
        assert report["unchanged"] == 0 and report["held_back"] == 0
        assert Match.select().where(Match.slug == "newcastle-vs-west-ham-2024-03-30").exists()
        assert names.unmatched("football-data") == []


def test_the_cli_syncs_and_lists_and_maps_unmatched_names(make_app, football_data):
    app = sync_app(make_app, football_data, FOOTBALL_DATA_SEASONS="2324")
    (friday, files), *_ = sync_world.week()
    serve(football_data, files, friday)
    runner = app.test_cli_runner()
    result = runner.invoke(args=["data", "sync", "--source", "football-data"])
    assert result.exit_code == 0, result.output
    assert "football-data: 2 calls, 0 unchanged, 293 matches new" in result.output
    with app.app_context():
        TeamAlias.create(
            source="the-odds-api", country="England", name="Spurs", first_seen_at=friday
        )
        spurs = Team.get(Team.name == "Tottenham").id
    result = runner.invoke(args=["data", "teams"])
    assert "unmatched: the-odds-api England 'Spurs'" in result.output
    result = runner.invoke(
        args=["data", "teams", "map", "the-odds-api", "England", "Spurs", "--team", str(spurs)]
    )
    assert result.exit_code == 0, result.output
    assert "0 unmatched" in runner.invoke(args=["data", "teams"]).output


def test_the_schedule_syncs_regularly_and_more_often_before_kickoff(make_app, football_data, waits):
    app = sync_app(make_app, football_data)
    (friday, files), *_ = sync_world.week()
    with app.app_context():
        serve(football_data, files, friday)
        due = schedule.tick(app.config, friday, lambda kind: False)
        assert "data-sync" in [kind for _, kind in due]
        for operation_id, kind in due:
            if kind == "data-sync":
                schedule.execute(operation_id, app.config, friday)
        # Friday afternoon: the next kick-off is Saturday 12:30, no run before the half hour
        assert not [
            k
            for _, k in schedule.tick(app.config, friday + timedelta(minutes=5), lambda k: False)
            if k == "data-sync"
        ]
        # Saturday: the regular half hour, then every five minutes within 3 h of 12:30
        saturday = friday.replace(day=30, hour=10, minute=0)
        near = saturday + timedelta(minutes=5)
        for moment in (saturday, near):
            due = schedule.tick(app.config, moment, lambda kind: False)
            syncs = [operation for operation, kind in due if kind == "data-sync"]
            assert len(syncs) == 1
            schedule.execute(syncs[0], app.config, moment)
        scheduled = Operation.select(Operation.scheduled_for).where(Operation.kind == "data-sync")
        assert sorted(row.scheduled_for for row in scheduled) == [friday, saturday, near]


def test_no_source_configured_means_no_scheduled_sync(app):
    with app.app_context():
        assert sources.configured(app.config) == []
        due = schedule.tick(app.config, sync_world.FRIDAY, lambda kind: False)
        assert "data-sync" not in [kind for _, kind in due]


def test_the_odds_api_same_answer_writes_nothing(make_app, football_data, waits):
    """The Odds API sends no validators: an answer identical to the last one stored is nothing
    new (its credits are still counted)."""
    (friday, files), *_ = sync_world.week()
    with OddsApiServer(credits=100, key=KEY) as odds:
        odds.events["soccer_epl"] = odds_events(files)
        for event in odds.events["soccer_epl"]:
            for book in event["bookmakers"]:
                for market in book["markets"]:
                    for outcome in market["outcomes"]:
                        outcome["price"] = round(outcome["price"] * 1.05, 2)
        app = sync_app(make_app, football_data, odds)
        with app.app_context():
            serve(football_data, files, friday)
            run_sync(app, friday, waits, "football-data")
            _, result = run_sync(app, friday + timedelta(minutes=5), waits, "the-odds-api")
            assert source_report(result, "the-odds-api")["prices_changed"] == 10
            before = stored_rows(*DATA, SourceFetch)
            _, result = run_sync(app, friday + timedelta(minutes=10), waits, "the-odds-api")
            report = source_report(result, "the-odds-api")
            assert report["unchanged"] == 1 and report["credits_spent"] == 2
            assert stored_rows(*DATA, SourceFetch) == before
            state = SourceState.get(SourceState.source == "the-odds-api")
            assert state.credits_spent == 4 and state.credits_remaining == 96


@pytest.mark.slow
def test_gunicorn_and_the_worker_show_upcoming_matches_with_the_syncs_picks(
    app, football_data, tmp_path
):
    """Real processes: gunicorn and the worker on one frozen Friday, football-data and The Odds
    API served locally; the worker's first minute syncs both, and the landing page shows the
    weekend's matches with the picks the sync alone made."""
    (friday, files), *_ = sync_world.week()
    serve(football_data, files, friday)
    with app.app_context():
        create_tables()
    with OddsApiServer(key=KEY) as odds:
        odds.events["soccer_epl"] = odds_events(files)
        sources_env = {
            "FROZEN_NOW": friday.isoformat(),
            "FOOTBALL_DATA_URL": football_data.base,
            "FOOTBALL_DATA_LEAGUES": "E0",
            "FOOTBALL_DATA_SEASONS": "2324",
            "ODDS_API_URL": odds.base,
            "ODDS_API_KEY": KEY,
            "ODDS_API_SPORTS": "soccer_epl:E0",
            "ODDS_API_REGIONS": "uk",
            "WORKER_QUEUE_URL": f"sqlite:///{tmp_path / 'queue.db'}",
        }
        with servers.gunicorn(app, target="tests.frozen_wsgi:app", **sources_env) as (base, env):
            worker_process = subprocess.Popen(
                [sys.executable, "-m", "tests.frozen_worker"],
                cwd=servers.ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
            )
            try:
                deadline = time.monotonic() + 150  # the worker's first minute, then the sync
                while time.monotonic() < deadline:
                    with app.app_context():
                        if Pick.select().where(Pick.is_live).exists():
                            break
                    time.sleep(1)
                request = urllib.request.Request(f"{base}/", headers={"Accept": "text/html"})
                with urllib.request.urlopen(request, timeout=30) as answer:
                    page = answer.read().decode()
            finally:
                worker_process.terminate()
                output = worker_process.communicate(timeout=30)[0].decode()
            assert not servers.traceback_in(output), servers.traceback_in(output)
        assert odds.used > 0  # the worker's sync asked The Odds API too, and paid for it
    assert "No match is scheduled" not in page
    assert "Newcastle vs West Ham" in page
    assert 'class="rating r' in page  # a pick the sync made, shown (A sealed as "locked")
    with app.app_context():
        operation = Operation.get(Operation.kind == "data-sync")
        assert operation.status == "succeeded" and operation.scheduled_for == friday
        reports = {report["source"]: report for report in operation.result["sources"]}
        assert set(reports) == {"football-data", "the-odds-api"}
        assert all(not report["errors"] for report in reports.values()), reports
        assert reports["the-odds-api"]["creditsSpent"] > 0  # stored as the wire writes it
        live = list(Pick.select().where(Pick.is_live))
        assert live and all(_signed_before_kickoff(pick) for pick in live)


def test_the_odds_api_alone_never_makes_a_team(make_app, waits):
    """A league nothing is stored of: The Odds API's names are listed for an operator, never
    made into teams (football-data's spelling may come later)."""
    (_, files), *_ = sync_world.week()
    friday = sync_world.FRIDAY
    with OddsApiServer(credits=100, key=KEY) as odds:
        odds.events["soccer_epl"] = odds_events(files)
        app = sync_app(make_app, None, odds)
        with app.app_context():
            _, result = run_sync(app, friday, waits, "the-odds-api")
            report = source_report(result, "the-odds-api")
            assert report["held_back"] == 10 and len(report["unmatched"]) == 20
            assert Team.select().count() == 0 and Match.select().count() == 0


def test_no_source_is_called_inside_a_transaction(make_app, football_data, waits, monkeypatch):
    """Neither a source nor the time-stamping authority (asked for the checkpoints the sync
    signs) is called with a transaction open."""
    calls, stamps = [], []
    fetch = http.get

    def watched(*args, **kwargs):
        calls.append(db.in_transaction())
        return fetch(*args, **kwargs)

    def stamp(*args, **kwargs):
        stamps.append(db.in_transaction())
        raise timestamps.TimestampError("the time-stamping authority did not answer")

    monkeypatch.setattr(http, "get", watched)
    monkeypatch.setattr(timestamps, "stamp", stamp)
    app = sync_app(make_app, football_data, LEDGER_TSA_URL="http://127.0.0.1:9/")
    (friday, files), *_ = sync_world.week()
    with app.app_context():
        serve(football_data, files, friday)
        _, result = run_sync(app, friday, waits)
        assert result["published"] > 0
        assert [row.size for row in LedgerTimestamp.select()] == [result["checkpoint_size"]]
    assert calls == [False, False]
    assert stamps == [False]


NEW_LEAGUES = (
    "\ufeffCountry,League,Date,Time,Home,Away,PSH,PSD,PSA,MaxH,MaxD,MaxA,AvgH,AvgD,AvgA\r\n"
    "USA,MLS,30/03/2024,19:30,Columbus Crew,Atlanta Utd,1.8,3.9,4.4,1.85,4.0,4.6,1.78,3.8,4.3\r\n"
    "USA,MLS,31/03/2024,22:30,LA Galaxy,Seattle Sounders,2.1,3.6,3.4,2.15,3.7,3.5,2.05,3.5,3.3\r\n"
    "Chile,Primera,30/03/2024,20:00,Colo Colo,U. de Chile,2.0,3.3,3.9,2.1,3.4,4.0,1.9,3.2,3.8\r\n"
)


def test_new_league_fixtures_are_stored_under_their_country_code_and_year(
    make_app, football_data, waits
):
    app = sync_app(make_app, football_data, FOOTBALL_DATA_NEW_LEAGUES="USA")
    (friday, files), *_ = sync_world.week()
    with app.app_context():
        serve(football_data, {**files, "/new_league_fixtures.csv": NEW_LEAGUES.encode()}, friday)
        _, result = run_sync(app, friday, waits)
        assert source_report(result)["errors"] == []
        mls = list(Match.select().join(League).where(League.code == "USA"))
        assert sorted(match.slug for match in mls) == [
            "columbus-crew-vs-atlanta-utd-2024-03-30",
            "la-galaxy-vs-seattle-sounders-2024-03-31",  # 22:30 in London (BST): 21:30 UTC
        ]
        assert {match.season for match in mls} == {"2024"}
        league = League.get(League.code == "USA")
        assert (league.name, league.country) == ("MLS", "USA")
        pinnacle = PriceSeen.select().where(
            (PriceSeen.match == mls[0].id) & (PriceSeen.bookmaker == "pinnacle")
        )
        assert sorted(row.price for row in pinnacle) == [1.8, 3.9, 4.4]
        assert not League.select().where(League.code == "Chile").exists()


def test_a_row_the_import_refuses_is_listed_with_its_file_and_line(make_app, football_data, waits):
    app = sync_app(make_app, football_data)
    (friday, files), *_ = sync_world.week()
    fixtures = files[sync_world.FIXTURES].decode()
    header = fixtures.split("\r\n", 1)[0].split(",")
    # Man City v Chelsea two days after the meeting played on 17/02: which meeting is it?
    row = dict.fromkeys(header, "") | {
        "Div": "E0", "Date": "19/02/2024", "Time": "20:00", "HomeTeam": "Man City",
        "AwayTeam": "Chelsea",
    }  # fmt: skip
    edited = fixtures + ",".join(row[name] for name in header) + "\r\n"
    with app.app_context():
        serve(football_data, {**files, sync_world.FIXTURES: edited.encode()}, friday)
        _, result = run_sync(app, friday, waits)
        (refused,) = source_report(result)["rejected_rows"]
        assert refused["url"] == football_data.base + sync_world.FIXTURES
        assert refused["line"] == 12 and "cannot tell which meeting" in refused["reason"]
