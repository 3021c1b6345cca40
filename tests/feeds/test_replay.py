"""Replays: a history run day by day with a moving clock, as the live service would have run it,
verified green by the standalone verifier (football-data files and the demo world)."""

import dataclasses
import io
from datetime import UTC, datetime, timedelta

import pytest

from engine.records import LeagueRecord, MatchRecord, OddsRecord
from errors import CommandError
from models import (
    LedgerCheckpoint,
    LedgerEntry,
    LedgerSeal,
    Match,
    MatchIntelligence,
    OddsQuote,
    Pick,
    Prediction,
)
from services.feeds import replay
from services.feeds.formats.footballdata import SOURCE_TIMEZONE
from services.forecasting import predictions
from tests import factories, helpers
from tests.data import FOOTBALL_DATA, needs_football_data
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
    assert verdicts["outcomes"] == verdicts["live rule"] == "PASS", lines
    return key, latest


@pytest.mark.slow
@needs_football_data
def test_an_import_run_day_by_day_is_verified_green(make_app):
    app = make_app(**LEDGER_ONLY)
    # Four leagues: picks are rare where the published line is the sharp one.
    files = [
        FOOTBALL_DATA / f"{league}_{season}.csv"
        for league in ("E0", "SP1", "D1", "F1")
        for season in ("2223", "2324")
    ]
    start = datetime(2023, 9, 15, 6, 0, tzinfo=UTC)
    with app.app_context():
        records = replay.read_files(files)
        days = replay.replay(records, start, 14, factories.settings())
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
        # A week later: the log only grew since the checkpoint the user saved.
        replay.replay(records, start + timedelta(days=14), 7, factories.settings())
        assert LedgerEntry.select().count() > size
    verify_green(client, token, key.text, [latest.note])


@pytest.mark.slow
def test_the_demo_world_replayed_is_verified_green(demo_world):
    """The world ``flask data demo`` builds: its live days replayed, their picks settled."""
    app = demo_world("demo-verified")
    with app.app_context():
        token = factories.token(factories.user("pro@example.com", plan="pro"))
        assert Pick.select().where(Pick.is_live & (Pick.status != "pending")).count() > 0
    verify_green(app.test_client(), token)


def test_a_pair_meeting_twice_at_one_ground_replays_as_two_matches(make_app):
    """Day by day, the second meeting's fixture, prices and result find that meeting, never
    the first one played months before; replaying the same days again is refused, changing
    nothing."""
    first = dataclasses.replace(
        record(datetime(2026, 9, 12, 14, 0, tzinfo=UTC)),
        home_goals=3,
        away_goals=0,
        odds=[OddsRecord("bet365", "1x2", "home", 1.4)],
    )
    second = record(datetime(2027, 3, 13, 15, 0, tzinfo=UTC))  # 2-1, its own prices
    app = make_app(**LEDGER_ONLY)
    with app.app_context():
        start = datetime(2027, 3, 4, 6, 0, tzinfo=UTC)  # its last day the morning after
        days = replay.replay([first, second], start, 11, factories.settings())
        # The first meeting with the history, the second as a fixture, then its result.
        changed = [(day.matches_new, day.matches_updated) for day in days]
        assert [change for change in changed if change != (0, 0)] == [(1, 0), (1, 0), (0, 1)]
        meetings = helpers.meetings("Alpha", "Beta")
        assert [meeting[1:4] for meeting in meetings] == [
            ("2026-09-12 14:00", "finished", "3-0"),
            ("2027-03-13 15:00", "finished", "2-1"),
        ]
        prices = {(quote.match_id, quote.bookmaker): quote.price for quote in OddsQuote.select()}
        (first_id, *_), (second_id, *_) = meetings
        assert prices == {
            (first_id, "bet365"): 1.4,
            (second_id, "bet365"): 2.1,
            (second_id, "pinnacle"): 2.0,
        }
        with pytest.raises(CommandError, match="never runs its clock back"):
            replay.replay([first, second], start, 11, factories.settings())
        assert helpers.meetings("Alpha", "Beta") == meetings


# A replay never runs its clock back over what the database holds.

#: The tiny league's clubs: six, three matches a round.
CLUBS = ("Alpha", "Beta", "Gamma", "Delta", "Epsilon", "Zeta")
#: The tiny league's first round (a Saturday, 15:00 in London).
FIRST_ROUND = datetime(2026, 8, 1, 14, 0, tzinfo=UTC)
#: Everything a replay writes.
WRITTEN = (
    Match,
    OddsQuote,
    Prediction,
    Pick,
    MatchIntelligence,
    LedgerEntry,
    LedgerSeal,
    LedgerCheckpoint,
)


#: These replays are about the ledger, not the model: the tiny league's ten rounds are all the
#: history there is, so the rule that a league needs history before it is picked is off.
LEDGER_ONLY = {"MODEL_MIN_LEAGUE_MATCHES": 0}


def tiny_league(folder, first=FIRST_ROUND) -> str:
    """A football-data file of a six-club league playing a round a week from ``first`` (ten
    rounds), each match priced by Pinnacle before kick-off and at the close, and by bet365,
    generous on home wins (so there are picks); its path."""
    lines = [
        "Div,Date,Time,HomeTeam,AwayTeam,FTHG,FTAG,FTR,B365H,B365D,B365A,PSH,PSD,PSA,PSCH,PSCD,PSCA"
    ]
    for week, matches in enumerate(helpers.round_robin_rounds(CLUBS)):
        for slot, (home, away) in enumerate(matches):
            kickoff = (first + timedelta(weeks=week, hours=2 * slot)).astimezone(SOURCE_TIMEZONE)
            home_goals, away_goals = (week + slot) % 3, (week * slot) % 2
            result = "H" if home_goals > away_goals else "A" if home_goals < away_goals else "D"
            lines.append(
                f"E0,{kickoff:%d/%m/%Y},{kickoff:%H:%M},{home},{away},{home_goals},{away_goals},"
                f"{result},2.60,3.30,3.30,2.00,3.60,3.90,2.05,3.50,3.80"
            )
    path = folder / "tiny.csv"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def run_replay(app, path, start, days):
    """``flask ledger replay PATH --start START --days DAYS`` on ``app``."""
    return app.test_cli_runner().invoke(
        args=["ledger", "replay", path, "--start", start, "--days", str(days)]
    )


def refused(result):
    """The CLI's error line of a refused command (not a traceback), without its prefix."""
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    return result.output.removeprefix("Error: ").strip()


def test_a_replay_goes_on_from_its_last_day_and_never_back(make_app, tmp_path):
    app = make_app(**LEDGER_ONLY)
    path = tiny_league(tmp_path)
    result = run_replay(app, path, "2026-08-28T06:00:00", 3)  # a fresh database: it runs
    assert result.exit_code == 0, result.output
    with app.app_context():
        live = Pick.select().where(Pick.is_live)
        assert live.count() > 0 and live.where(Pick.status != "pending").count() > 0
        before = helpers.stored_rows(*WRITTEN)

    for start in ("2026-08-29T06:00:00", "2026-08-30T05:59:59", "2026-08-01T06:00:00"):
        message = refused(run_replay(app, path, start, 1))
        assert message.startswith(
            f"cannot replay from {start} UTC: the database already holds records up to "
            "2026-08-30T06:00:00 UTC"
        )
        assert message.endswith(
            "start at 2026-08-30T06:00:00 UTC or later, or replay into a database of its own"
        )
        with app.app_context():
            assert helpers.stored_rows(*WRITTEN) == before

    result = run_replay(app, path, "2026-08-30T06:00:00", 7)  # from its last day on
    assert result.exit_code == 0, result.output
    with app.app_context():
        assert LedgerEntry.select().count() > len(before["ledger_entry"])
        times = [entry.created_at for entry in LedgerEntry.select().order_by(LedgerEntry.position)]
        assert times == sorted(times)


def test_older_history_does_not_hold_a_replay_back_but_a_later_result_does(make_app, tmp_path):
    app = make_app(**LEDGER_ONLY)
    path = tiny_league(tmp_path)
    with app.app_context():
        for day in range(10):  # last season's, backfilled since
            factories.match(
                f"Old {day}", f"Older {day}", kickoff=FIRST_ROUND - timedelta(days=300 - day)
            )
        predictions.backfill(factories.settings(), now=datetime(2026, 11, 1, tzinfo=UTC))
        factories.match("Later", "Latest", kickoff=datetime(2026, 9, 10, 19, 0, tzinfo=UTC))
        before = helpers.stored_rows(*WRITTEN)
    message = refused(run_replay(app, path, "2026-08-28T06:00:00", 1))
    assert "already holds records up to 2026-09-10T21:00:00 UTC (a result)" in message
    with app.app_context():
        assert helpers.stored_rows(*WRITTEN) == before
        Match.delete().where(Match.kickoff_at > FIRST_ROUND).execute()
    result = run_replay(app, path, "2026-08-28T06:00:00", 1)
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    ("start", "days", "what"),
    [
        ("0001-01-01", 1, "1 day from 0001-01-01T00:00:00"),  # its ledger instants were "1-01-01…"
        ("1899-12-31T23:59:59", 1, "1 day from 1899-12-31T23:59:59"),
        ("2099-12-31T06:00:00", 2, "2 days from 2099-12-31T06:00:00"),
        ("9999-12-31T06:00:00", 5, "5 days from 9999-12-31T06:00:00"),  # was an OverflowError
    ],
)
def test_days_a_football_data_file_cannot_hold_are_refused(make_app, tmp_path, start, days, what):
    app = make_app(**LEDGER_ONLY)
    message = refused(run_replay(app, tiny_league(tmp_path), start, days))
    assert message == (
        f"cannot replay {what} UTC: a replay runs on the days a football-data file may hold, "
        "1900-01-01 to 2099-12-31 (UTC)"
    )
    with app.app_context():
        assert not any(helpers.stored_rows(*WRITTEN).values())


@pytest.mark.slow  # the demo world
def test_a_replay_over_the_demo_world_is_refused_and_writes_nothing(demo_world, tmp_path):
    """The review's case: a replay of 2023 over the demo world would have made its played
    matches' predictions live and published new live picks of them in the ledger."""
    app = demo_world("replay-over-demo")
    path = tiny_league(tmp_path, first=datetime(2023, 8, 12, 14, 0, tzinfo=UTC))
    with app.app_context():
        before = helpers.stored_rows(*WRITTEN)
        assert Prediction.select().where(Prediction.is_live).count() > 0
    message = refused(run_replay(app, path, "2023-09-15T06:00:00", 1))
    assert "already holds records up to 2026-11-23T09:00:00 UTC" in message
    with app.app_context():
        assert helpers.stored_rows(*WRITTEN) == before
