"""Importing football-data files: real files, idempotent re-import, bad rows, later updates."""

from datetime import UTC, datetime

import pytest

from models import League, Match, OddsQuote, Team
from services.feeds import imports
from tests import helpers
from tests.data import FOOTBALL_DATA, needs_football_data


def real_files(test):
    """Mark a test that reads the shared football-data files: slow, skipped without them."""
    return pytest.mark.slow(needs_football_data(test))


@real_files
def test_a_season_imports_with_its_league_teams_results_and_odds(ctx):
    summary = imports.import_file(FOOTBALL_DATA / "E0_2324.csv")
    assert (summary.rows_read, summary.matches_new, summary.rows_rejected) == (380, 380, 0)
    assert summary.odds_stored == OddsQuote.select().count() > 380 * 40
    league = League.get(League.code == "E0")
    assert (league.name, league.country, league.competition_type) == (
        "Premier League",
        "England",
        "top-flight",
    )
    assert Team.select().count() == 20
    opener = Match.get(Match.slug == "burnley-vs-man-city-2023-08-11")
    assert (opener.home_goals, opener.away_goals, opener.status, opener.season) == (
        0,
        3,
        "finished",
        "2023-24",
    )
    assert opener.kickoff_at.isoformat() == "2023-08-11T19:00:00+00:00"
    pinnacle = {
        (quote.selection, quote.is_closing): quote.price
        for quote in OddsQuote.select().where(
            (OddsQuote.match == opener)
            & (OddsQuote.bookmaker == "pinnacle")
            & (OddsQuote.market == "1x2")
        )
    }
    assert pinnacle == {
        ("home", False): 8.58,
        ("draw", False): 5.51,
        ("away", False): 1.37,
        ("home", True): 9.62,
        ("draw", True): 5.81,
        ("away", True): 1.33,
    }


@real_files
def test_re_importing_changes_nothing(ctx):
    first = imports.import_file(FOOTBALL_DATA / "D1_1718.csv")  # dd/mm/yy dates, Betbrain averages
    counts = (Match.select().count(), OddsQuote.select().count(), Team.select().count())
    again = imports.import_file(FOOTBALL_DATA / "D1_1718.csv")
    assert first.matches_new == 306
    assert (again.matches_new, again.matches_updated, again.odds_stored) == (0, 0, 0)
    assert (Match.select().count(), OddsQuote.select().count(), Team.select().count()) == counts


@real_files
def test_lf_files_and_a_promoted_team_share_teams_within_a_country(ctx):
    imports.import_file(FOOTBALL_DATA / "E1_2223.csv")
    imports.import_file(FOOTBALL_DATA / "E0_2324.csv")
    burnley = Team.select().where(Team.name == "Burnley")
    assert burnley.count() == 1
    leagues = {
        match.league.code
        for match in Match.select().where(
            (Match.home_team == burnley.get()) | (Match.away_team == burnley.get())
        )
    }
    assert leagues == {"E0", "E1"}


@real_files
def test_a_corrupted_copy_rejects_its_bad_rows_and_loads_the_rest(ctx, tmp_path):
    lines = (FOOTBALL_DATA / "E0_2324.csv").read_text().splitlines()
    header, rows = lines[0], lines[1:]
    cells = [row.split(",") for row in rows[:10]]
    cells[1][1] = "31/02/2023"  # no such date
    cells[3][3] = ""  # no home team
    cells[5][5] = "two"  # goals not a number
    cells[7][7] = "H" if cells[7][7] != "H" else "A"  # result disagrees with the goals
    corrupted = tmp_path / "E0_corrupt.csv"
    corrupted.write_text("\n".join([header, *(",".join(c) for c in cells)]) + "\n")
    summary = imports.import_file(corrupted)
    assert (summary.rows_read, summary.matches_new, summary.rows_rejected) == (10, 6, 4)
    assert [row["line"] for row in summary.rejected] == [3, 5, 7, 9]
    assert all(row["file"] == str(corrupted) and row["reason"] for row in summary.rejected)
    assert Match.select().count() == 6


def test_a_later_file_adds_the_result_of_a_fixture(ctx, tmp_path):
    header = "Div,Date,Time,HomeTeam,AwayTeam,FTHG,FTAG,FTR,PSH,PSD,PSA"
    fixture = tmp_path / "fixtures.csv"
    fixture.write_text(f"{header}\nE0,17/08/2024,15:00,Arsenal,Wolves,,,,1.3,5.5,10\n")
    first = imports.import_file(fixture)
    assert (first.matches_new, Match.get().status) == (1, "scheduled")
    result = tmp_path / "results.csv"
    result.write_text(f"{header}\nE0,17/08/2024,15:00,Arsenal,Wolves,2,0,H,1.3,5.5,10\n")
    second = imports.import_file(result)
    assert (second.matches_new, second.matches_updated, second.odds_stored) == (0, 1, 0)
    match = Match.get()
    assert (match.status, match.home_goals, match.away_goals) == ("finished", 2, 0)
    assert imports.import_file(fixture).matches_updated == 0  # a fixture never erases a result


def test_a_later_price_reprices_only_its_quote(ctx, tmp_path):
    header = "Div,Date,Time,HomeTeam,AwayTeam,FTHG,FTAG,FTR,PSH,PSD,PSA"
    first = tmp_path / "first.csv"
    first.write_text(f"{header}\nE0,17/08/2024,15:00,Arsenal,Wolves,,,,1.3,5.5,10\n")
    imports.import_file(first)
    later = tmp_path / "later.csv"
    later.write_text(f"{header}\nE0,17/08/2024,15:00,Arsenal,Wolves,,,,1.35,5.5,9.5\n")
    summary = imports.import_file(later)
    assert (summary.matches_new, summary.odds_stored) == (0, 2)
    prices = {quote.selection: quote.price for quote in OddsQuote.select()}
    assert prices == {"home": 1.35, "draw": 5.5, "away": 9.5}


@real_files
def test_the_cli_reports_rows_files_and_totals(app, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("Div,Date,HomeTeam,AwayTeam,FTHG,FTAG\nXX,01/01/2024,A,B,1,0\n")
    runner = app.test_cli_runner()
    result = runner.invoke(
        args=[
            "data",
            "import",
            str(FOOTBALL_DATA / "E1_2324.csv"),
            str(bad),
            str(tmp_path / "missing.csv"),
        ]
    )
    assert result.exit_code == 1
    assert "E1_2324.csv: 552 rows read, 552 matches new" in result.output
    assert f"{bad}:2: rejected: Div 'XX' is not a known division" in result.stderr
    assert "missing.csv: not imported" in result.stderr
    assert "1 of 3 files could not be imported" in result.output


HEADER = "Div,Date,Time,HomeTeam,AwayTeam,FTHG,FTAG,FTR,PSH,PSD,PSA"


def _file(tmp_path, *rows, name="rows.csv"):
    path = tmp_path / name
    path.write_text("\n".join([HEADER, *rows]) + "\n", encoding="utf-8")
    return path


def test_a_slug_clash_rejects_its_row_and_loads_the_rest(ctx, tmp_path):
    """``Foo FC`` and ``Foo-FC`` against the same side on one day slug alike: the second row is
    rejected with its reason, the rest of the file loads, and a later file that clashes with a
    stored match is rejected the same way."""
    path = _file(
        tmp_path,
        "E0,17/08/2024,15:00,Foo FC,Bar,1,0,H,2,3,4",
        "E0,17/08/2024,15:00,Foo-FC,Bar,0,0,D,2,3,4",
        "E0,17/08/2024,15:00,Arsenal,Wolves,2,0,H,1.3,5.5,10",
    )
    summary = imports.import_file(path)
    assert (summary.rows_read, summary.matches_new, summary.rows_rejected) == (3, 2, 1)
    assert [row["line"] for row in summary.rejected] == [3]
    assert "foo-fc-vs-bar-2024-08-17" in summary.rejected[0]["reason"]
    assert "Foo FC v Bar" in summary.rejected[0]["reason"]
    assert Match.select().count() == 2
    assert Team.select().where(Team.name == "Foo-FC").count() == 0  # nothing of the row stays
    later = imports.import_file(_file(tmp_path, "E0,17/08/2024,15:00,Foo-FC,Bar,,,,2,3,4"))
    assert (later.matches_new, later.rows_rejected) == (0, 1)
    assert "a stored match" in later.rejected[0]["reason"]
    again = imports.import_file(path)  # the stored match keeps its slug: the same row is fine
    assert (again.matches_new, again.rows_rejected) == (0, 1)


def test_all_non_ascii_names_get_distinct_routable_slugs(ctx, tmp_path, client):
    summary = imports.import_file(
        _file(
            tmp_path,
            "E0,17/08/2024,15:00,Динамо,Спартак,1,0,H,2,3,4",
            "E0,17/08/2024,17:30,Зенит,ЦСКА,1,1,D,2,3,4",
        )
    )
    assert (summary.matches_new, summary.rows_rejected) == (2, 0)
    slugs = [match.slug for match in Match.select()]
    assert len(set(slugs)) == 2
    for slug in slugs:
        assert slug.startswith("team-") and "-vs-team-" in slug
        assert client.get(f"/api/v1/seo/predictions/{slug}").status_code == 200


def test_a_team_name_over_100_characters_rejects_its_row_only(ctx, tmp_path):
    long_name = "Long" * 30
    summary = imports.import_file(
        _file(
            tmp_path,
            f"E0,17/08/2024,15:00,{long_name},Bar,1,0,H,2,3,4",
            "E0,17/08/2024,15:00,Arsenal,Wolves,2,0,H,1.3,5.5,10",
        )
    )
    assert (summary.matches_new, summary.rows_rejected) == (1, 1)
    assert summary.rejected[0]["line"] == 2
    assert "HomeTeam is 120 characters long (at most 100)" in summary.rejected[0]["reason"]


def test_every_slug_stays_within_the_route_limit(ctx, tmp_path, client):
    """Names of 100 characters (and characters that spell out long in ASCII) give a slug the
    slug route still matches, and its page answers."""
    wide = "ﷺ" * 100  # one character, 18 ASCII letters under NFKD
    summary = imports.import_file(
        _file(tmp_path, f"E0,17/08/2024,15:00,{'x' * 100},{wide},1,0,H,2,3,4")
    )
    assert (summary.matches_new, summary.rows_rejected) == (1, 0)
    slug = Match.get().slug
    assert len(slug) <= 255
    assert client.get(f"/api/v1/seo/predictions/{slug}").status_code == 200


GOOD_ROWS = (
    "E0,17/08/2024,15:00,Arsenal,Wolves,2,0,H,1.3,5.5,10",
    "E0,24/08/2024,15:00,Wolves,Chelsea,0,2,A,4,3.8,1.9",
)


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ("E0,18/08/2024,15:00,Alpha FC,Beta FC,1e19,0,H,2,3,4", "FTHG '1e19' is not a number"),
        ("E0,18/08/2024,15:00,Alpha FC,Beta FC,1e10,0,H,2,3,4", "FTHG '1e10' is not a number"),
        ("E0,18/08/2024,15:00,Alpha FC,Beta FC,0,10000000000,A,2,3,4", "more goals than 99"),
        ("E0,18/08/2024,15:00,Alpha FC,Beta FC,\u0661,0,H,2,3,4", "is not a number of goals"),
        ("E0,18/08/2024,15:00,Nul\x00Team,Beta FC,1,0,H,2,3,4", "holds U+0000"),
        ("E0,18/08/2024,15:00,Alpha FC,Tab\tTeam,1,0,H,2,3,4", "holds U+0009"),
        ("E\x000,18/08/2024,15:00,Alpha FC,Beta FC,1,0,H,2,3,4", "holds U+0000"),
        ("E0,01/01/0001,15:00,Alpha FC,Beta FC,1,0,H,2,3,4", "outside the dates taken"),
        ("E0,31/12/9999,15:00,Alpha FC,Beta FC,,,,2,3,4", "outside the dates taken"),
        ("E0,19/08/2004,15:00,Alpha FC,Beta FC,1,0,H,2,3,4", "outside the file's season"),
        ("E0,18/08/2024,15:00,Alpha FC,Beta FC,1,0,H,2,1e400,4", None),
        ("E0,18/08/2024,15:00," + "x" * 200_000 + ",Beta FC,1,0,H,2,3,4", "not valid CSV"),
        ('E0,18/08/2024,15:00,"Alpha FC,Beta FC,1,0,H,2,3,4', "AwayTeam is missing"),
    ],
)
def test_a_bad_row_is_rejected_and_the_rest_of_the_file_loads(ctx, tmp_path, bad, reason):
    """Whatever one row holds, it is reported with its line (or, for a bad price, its set is
    dropped) and every other row loads, on SQLite and on PostgreSQL alike: no overflow, NUL or
    date error loses the file's transaction."""
    path = _file(tmp_path, GOOD_ROWS[0], bad, GOOD_ROWS[1])
    summary = imports.import_file(path)
    stored = {(m.home_team.name, m.season, m.home_goals) for m in Match.select()}
    assert {("Arsenal", "2024-25", 2), ("Wolves", "2024-25", 0)} <= stored
    if reason is None:  # a price is no reason to refuse a row: its set is skipped
        assert (summary.matches_new, summary.rows_rejected, summary.prices_skipped) == (3, 0, 3)
        return
    assert (summary.rows_read, summary.matches_new, summary.rows_rejected) == (3, 2, 1)
    (rejected,) = summary.rejected
    assert (rejected["file"], rejected["line"]) == (str(path), 3)
    assert reason in rejected["reason"]
    assert Match.select().count() == 2


def test_the_cli_rejects_an_overflowing_goal_count_and_loads_the_rest(app, tmp_path):
    big = tmp_path / "big.csv"
    big.write_text(
        "Div,Date,HomeTeam,AwayTeam,FTHG,FTAG,FTR\n"
        "E0,18/08/24,Alpha FC,Beta FC,1e19,0,H\n"
        "E0,19/08/24,Gamma FC,Delta FC,1,0,H\n"
    )
    result = app.test_cli_runner().invoke(args=["data", "import", str(big)])
    assert result.exit_code == 0, result.output
    assert f"{big}:2: rejected: FTHG '1e19' is not a number of goals" in result.stderr
    assert f"{big}: 2 rows read, 1 matches new" in result.output
    with app.app_context():
        gamma = Match.get()
        assert (gamma.home_team.name, gamma.home_goals, gamma.season) == ("Gamma FC", 1, "2024-25")


def test_the_cli_rejects_a_fixture_more_than_a_year_after_the_app_clock(make_app, tmp_path):
    app = make_app(CLOCK=lambda: datetime(2024, 8, 1, 12, tzinfo=UTC))
    path = _file(tmp_path, "E0,17/08/2024,15:00,Arsenal,Wolves,,,,1.3,5.5,10")
    far = _file(tmp_path, "E0,17/08/2026,15:00,Arsenal,Wolves,,,,1.3,5.5,10", name="far.csv")
    result = app.test_cli_runner().invoke(args=["data", "import", str(path), str(far)])
    assert result.exit_code == 0, result.output
    assert f"{far}:2: rejected: Date '17/08/2026' is outside the dates taken" in result.stderr
    with app.app_context():
        assert [m.kickoff_at.year for m in Match.select()] == [2024]


def test_a_corrected_date_re_imports_into_its_season(ctx, tmp_path):
    """A mistyped year is refused, not taken for the file's season; the corrected file then
    loads the row, and the rows already stored stay as they were."""
    good = "E0,18/08/2024,15:00,Alpha FC,Beta FC,1,0,H,2,3,4"
    typo = _file(tmp_path, good, "E0,19/08/2004,15:00,Gamma FC,Delta FC,1,0,H,2,3,4")
    first = imports.import_file(typo)
    assert (first.matches_new, first.rows_rejected) == (1, 1)
    fixed = _file(tmp_path, good, "E0,19/08/2024,15:00,Gamma FC,Delta FC,1,0,H,2,3,4")
    again = imports.import_file(fixed)
    assert (again.matches_new, again.matches_updated, again.rows_rejected) == (1, 0, 0)
    assert {(m.slug, m.season) for m in Match.select()} == {
        ("alpha-fc-vs-beta-fc-2024-08-18", "2024-25"),
        ("gamma-fc-vs-delta-fc-2024-08-19", "2024-25"),
    }


# A pair meeting more than once a season at the same ground (the Scottish divisions): each
# meeting is a match of its own, found again by its day, or as a fixture moved to another day.

#: Celtic v Rangers at Celtic Park twice in 2023/24, and Rangers v Celtic once between.
FIRST = "SC0,30/09/2023,12:00,Celtic,Rangers,2,1,H,1.5,4.5,6"
RETURN = "SC0,07/10/2023,15:00,Rangers,Celtic,1,1,D,2.6,3.5,2.7"
SECOND = "SC0,16/03/2024,12:30,Celtic,Rangers,0,0,D,1.8,3.9,4.2"


def _fixture(row):
    """The row as a fixture list gives it: no score."""
    cells = row.split(",")
    cells[5:8] = ["", "", ""]
    return ",".join(cells)


def _moved(row, date, time):
    """The row kicking off at another ``date`` and ``time``."""
    cells = row.split(",")
    cells[1:3] = [date, time]
    return ",".join(cells)


def test_a_pair_meeting_twice_at_one_ground_keeps_both_meetings(ctx, tmp_path):
    """Each meeting keeps its own day, score and odds, and the same file again changes nothing."""
    path = _file(tmp_path, FIRST, RETURN, SECOND)
    summary = imports.import_file(path)
    assert (summary.rows_read, summary.matches_new, summary.rows_rejected) == (3, 3, 0)
    first, second = helpers.meetings("Celtic", "Rangers")
    assert first[1:] == ("2023-09-30 11:00", "finished", "2-1", (1.5, 4.5, 6.0))
    assert second[1:] == ("2024-03-16 12:30", "finished", "0-0", (1.8, 3.9, 4.2))
    assert {match.slug for match in Match.select()} == {
        "celtic-vs-rangers-2023-09-30",
        "rangers-vs-celtic-2023-10-07",
        "celtic-vs-rangers-2024-03-16",
    }
    counts = (Match.select().count(), OddsQuote.select().count())
    again = imports.import_file(path)
    assert (again.matches_new, again.matches_updated, again.odds_stored) == (0, 0, 0)
    assert (Match.select().count(), OddsQuote.select().count()) == counts
    assert helpers.meetings("Celtic", "Rangers") == [first, second]


def test_fixtures_then_results_update_each_meeting_even_moved(ctx, tmp_path):
    """The results find the fixtures they are, one brought forward to the Friday and one
    postponed, each with its own score and its own new price."""
    fixtures = _file(tmp_path, _fixture(FIRST), _fixture(SECOND), name="fixtures.csv")
    assert imports.import_file(fixtures).matches_new == 2
    before = [match_id for match_id, *_ in helpers.meetings("Celtic", "Rangers")]
    results = _file(
        tmp_path,
        _moved(FIRST, "29/09/2023", "19:45"),
        _moved(SECOND, "03/04/2024", "19:45").replace(",1.8,", ",1.85,"),
        name="results.csv",
    )
    summary = imports.import_file(results)
    assert (summary.matches_new, summary.matches_updated, summary.odds_stored) == (0, 2, 1)
    assert helpers.meetings("Celtic", "Rangers") == [
        (before[0], "2023-09-29 18:45", "finished", "2-1", (1.5, 4.5, 6.0)),
        (before[1], "2024-04-03 18:45", "finished", "0-0", (1.85, 3.9, 4.2)),
    ]
    assert Match.get_by_id(before[1]).slug == "celtic-vs-rangers-2024-04-03"
    again = imports.import_file(results)
    assert (again.matches_new, again.matches_updated, again.odds_stored) == (0, 0, 0)


def test_a_first_half_then_the_whole_season_adds_the_second_meeting(ctx, tmp_path):
    first_half = _file(tmp_path, FIRST, RETURN, name="first-half.csv")
    imports.import_file(first_half)
    (first,) = helpers.meetings("Celtic", "Rangers")
    season = imports.import_file(_file(tmp_path, FIRST, RETURN, SECOND, name="season.csv"))
    assert (season.matches_new, season.matches_updated, season.rows_rejected) == (1, 0, 0)
    assert helpers.meetings("Celtic", "Rangers")[0] == first
    assert helpers.meetings("Celtic", "Rangers")[1][1:4] == ("2024-03-16 12:30", "finished", "0-0")
    again = imports.import_file(first_half)  # the first half again changes nothing
    assert (again.matches_new, again.matches_updated, again.odds_stored) == (0, 0, 0)
    assert Match.select().count() == 3


def test_the_next_fixture_after_a_played_meeting_is_a_new_match(ctx, tmp_path):
    """The weekly round: results so far, then a fixture list holding the pair's next meeting
    at the same ground, then its result."""
    imports.import_file(_file(tmp_path, FIRST, RETURN, name="results.csv"))
    (first,) = helpers.meetings("Celtic", "Rangers")
    fixtures = imports.import_file(_file(tmp_path, _fixture(SECOND), name="fixtures.csv"))
    assert (fixtures.matches_new, fixtures.matches_updated, fixtures.rows_rejected) == (1, 0, 0)
    played, upcoming = helpers.meetings("Celtic", "Rangers")
    assert played == first
    assert upcoming[1:4] == ("2024-03-16 12:30", "scheduled", None)
    results = imports.import_file(_file(tmp_path, FIRST, RETURN, SECOND, name="season.csv"))
    assert (results.matches_new, results.matches_updated) == (0, 1)
    assert helpers.meetings("Celtic", "Rangers")[1][:4] == (
        upcoming[0],
        "2024-03-16 12:30",
        "finished",
        "0-0",
    )


def test_results_sent_one_by_one_keep_each_meeting(ctx, tmp_path):
    """A source that sends each result alone: the second meeting, months after the first, is a
    match of its own, and the first keeps its day, score and odds."""
    imports.import_file(_file(tmp_path, FIRST, name="first.csv"))
    (first,) = helpers.meetings("Celtic", "Rangers")
    summary = imports.import_file(_file(tmp_path, SECOND, name="second.csv"))
    assert (summary.matches_new, summary.matches_updated, summary.rows_rejected) == (1, 0, 0)
    assert helpers.meetings("Celtic", "Rangers")[0] == first
    assert helpers.meetings("Celtic", "Rangers")[1][1:] == (
        "2024-03-16 12:30",
        "finished",
        "0-0",
        (1.8, 3.9, 4.2),
    )


def test_a_season_file_finds_a_postponed_fixture_among_its_new_meetings(ctx, tmp_path):
    """A fixture stored and then played a week later: the whole season's file, holding it and
    a meeting never stored, moves the fixture to its day (the least move) and adds the other."""
    imports.import_file(_file(tmp_path, _fixture(FIRST), name="fixtures.csv"))
    (fixture,) = helpers.meetings("Celtic", "Rangers")
    postponed = _moved(FIRST, "07/10/2023", "12:00")
    summary = imports.import_file(_file(tmp_path, postponed, SECOND, name="season.csv"))
    assert (summary.matches_new, summary.matches_updated, summary.rows_rejected) == (1, 1, 0)
    first, second = helpers.meetings("Celtic", "Rangers")
    assert first[:4] == (fixture[0], "2023-10-07 11:00", "finished", "2-1")
    assert second[1:4] == ("2024-03-16 12:30", "finished", "0-0")


def test_a_result_that_could_be_another_meetings_fixture_is_reported_not_stored_over_it(
    app, tmp_path
):
    """The next meeting's fixture is stored first; a results file holding only the first
    meeting, months earlier, cannot be that fixture brought forward: its row is reported and
    the fixture kept. Once the fixture's own result is in, the first meeting loads."""
    runner = app.test_cli_runner()
    runner.invoke(args=["data", "import", str(_file(tmp_path, _fixture(SECOND), name="f.csv"))])
    path = _file(tmp_path, FIRST, RETURN, name="so-far.csv")
    result = runner.invoke(args=["data", "import", str(path)])
    assert f"{path}:2: rejected: Celtic v Rangers on 30/09/2023: cannot tell which" in (
        result.stderr
    )
    assert f"{path}: 2 rows read, 1 matches new" in result.output
    with app.app_context():
        ((fixture_id, *fixture),) = helpers.meetings("Celtic", "Rangers")
        assert fixture == ["2024-03-16 12:30", "scheduled", None, (1.8, 3.9, 4.2)]
    season = _file(tmp_path, FIRST, RETURN, SECOND, name="season.csv")
    result = runner.invoke(args=["data", "import", str(season)])
    assert result.exit_code == 0 and "rejected" not in result.stderr, result.stderr
    with app.app_context():
        first, second = helpers.meetings("Celtic", "Rangers")
        assert first[1:4] == ("2023-09-30 11:00", "finished", "2-1")
        assert second[:4] == (fixture_id, "2024-03-16 12:30", "finished", "0-0")


@pytest.mark.parametrize(
    ("stored", "row", "reason"),
    [
        # A result a day after the stored one: its date corrected, or another meeting?
        ([FIRST], _moved(FIRST, "01/10/2023", "12:00"), "may be the one played on 30/09/2023"),
        # A fixture before a meeting already played: stale, or another meeting?
        ([SECOND], _fixture(FIRST), "may be the one played on 16/03/2024"),
        # A result exactly between two stored fixtures: which one moved?
        (
            [_fixture(_moved(FIRST, "10/03/2024", "15:00")), _fixture(SECOND)],
            _moved(FIRST, "13/03/2024", "13:45"),  # 70 h 45 min from each
            "the stored fixtures it could be (10/03/2024, 16/03/2024)",
        ),
    ],
    ids=["a corrected day", "a stale fixture", "between two fixtures"],
)
def test_a_row_that_cannot_be_told_from_another_meeting_is_rejected(
    ctx, tmp_path, stored, row, reason
):
    imports.import_file(_file(tmp_path, *stored, name="stored.csv"))
    before = helpers.meetings("Celtic", "Rangers")
    summary = imports.import_file(_file(tmp_path, row, RETURN))
    assert (summary.matches_new, summary.matches_updated, summary.rows_rejected) == (1, 0, 1)
    assert summary.rejected[0]["line"] == 2
    assert reason in summary.rejected[0]["reason"]
    assert helpers.meetings("Celtic", "Rangers") == before
