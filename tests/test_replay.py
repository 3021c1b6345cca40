"""Replays: a history run day by day with a moving clock, as the live service would have run it,
verified green by the standalone verifier (football-data files and the demo world)."""

import io
from datetime import UTC, datetime, timedelta

import pytest

from engine import demo as demo_engine
from engine.records import LeagueRecord, MatchRecord, OddsRecord
from models import LedgerCheckpoint, LedgerEntry, Pick
from services import replay
from tests import factories
from tests.data import FOOTBALL_DATA, needs_football_data
from tests.helpers import NOW
from tests.verifier import client_fetcher, load_verifier

verifier = load_verifier()


def record(kickoff):
    return MatchRecord(
        league=LeagueRecord("TST", "Test League", "Testland", "top-flight"),
        season="2026-27",
        kickoff_at=kickoff,
        home_team="Alpha",
        away_team="Beta",
        status="finished",
        home_goals=2,
        away_goals=1,
        odds=[
            OddsRecord("bet365", "1x2", "home", 2.1),
            OddsRecord("pinnacle", "1x2", "home", 2.0, is_closing=True),
        ],
    )


def test_what_was_known_of_a_match_on_a_day():
    kickoff = datetime(2026, 3, 10, 15, 0, tzinfo=UTC)
    played = record(kickoff)
    assert replay.as_known(played, kickoff - timedelta(days=8)) is None  # beyond the horizon
    fixture = replay.as_known(played, kickoff - timedelta(days=5))
    assert (fixture.status, fixture.home_goals, fixture.odds) == ("scheduled", None, [])
    priced = replay.as_known(played, kickoff - timedelta(days=1))
    assert [quote.bookmaker for quote in priced.odds] == ["bet365"]  # pre-match only
    assert priced.home_goals is None
    assert replay.as_known(played, kickoff + timedelta(hours=1)).home_goals is None
    assert replay.as_known(played, kickoff + timedelta(hours=2)) == played


def verify_green(client, token, saved_key=None, saved=()):
    report, key, latest = verifier.verify(
        client_fetcher(client, token), saved_key, list(saved), token, out=io.StringIO()
    )
    lines = "\n".join(f"{verdict} {name}: {detail}" for verdict, name, detail in report.verdicts)
    verdicts = {name: verdict for verdict, name, _ in report.verdicts}
    assert not report.failed, lines
    assert verdicts["track record"] == verdicts["data api track record"] == "PASS", lines
    assert verdicts["published before kick-off"] == verdicts["reveals"] == "PASS", lines
    return key, latest


@pytest.mark.slow
@needs_football_data
def test_an_import_run_day_by_day_is_verified_green(make_app):
    app = make_app()
    # Four leagues: picks are rare where the published line is the sharp one.
    files = [
        FOOTBALL_DATA / f"{league}_{season}.csv"
        for league in ("E0", "SP1", "D1", "F1")
        for season in ("2223", "2324")
    ]
    start = datetime(2023, 9, 15, 6, 0, tzinfo=UTC)
    with app.app_context():
        records = replay.read_files(files)
        days = replay.replay(records, start, 28, factories.settings())
        token = factories.token(factories.user("pro@example.com", plan="pro"))
        live = Pick.select().where(Pick.is_live)
        assert sum(day.published for day in days) == live.count() > 0
        assert live.where(Pick.status.in_(("won", "lost"))).count() > 0
        # One checkpoint per day that appended, each signed at that day's time.
        stamps = [row.published_at for row in LedgerCheckpoint.select()]
        assert stamps == sorted(stamps) and set(stamps) <= {day.now for day in days}
    client = app.test_client()
    key, latest = verify_green(client, token)

    with app.app_context():  # the same days again change nothing
        size = LedgerEntry.select().count()
        replay.run_day(records, days[-1].now, factories.settings())
        assert LedgerEntry.select().count() == size
        # Two weeks later: the log only grew since the checkpoint the user saved.
        replay.replay(records, start + timedelta(days=28), 14, factories.settings())
        assert LedgerEntry.select().count() > size
    verify_green(client, token, key.text, [latest.note])


@pytest.mark.slow
def test_the_demo_world_replayed_is_verified_green(make_app):
    now = NOW
    app = make_app()
    world = demo_engine.generate(now)
    with app.app_context():
        replay.replay(world.matches, now - timedelta(days=10), 11, factories.settings())
        token = factories.token(factories.user("pro@example.com", plan="pro"))
        assert Pick.select().where(Pick.is_live & (Pick.status != "pending")).count() > 0
    verify_green(app.test_client(), token)
