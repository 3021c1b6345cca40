"""The Flask CLI: db init/upgrade/status and the user commands, idempotent and with clear
errors."""

import io
import logging

import pytest

from cli import progress
from cli.progress import Progress
from models import OddsSummary, User
from store import migrate
from store.database import db
from tests import factories


@pytest.fixture
def run(app):
    runner = app.test_cli_runner()

    def invoke(*args):
        return runner.invoke(args=list(args))

    return invoke


def test_db_init_is_idempotent(run):
    for _ in range(2):
        result = run("db", "init")
        assert result.exit_code == 0 and "database ready" in result.output


def test_users_create_then_again_updates(app, run):
    first = run(
        "users", "create", "Ops@Example.com", "--password", "password-1", "--role", "operator"
    )
    assert (
        first.exit_code == 0 and first.output.strip() == "created ops@example.com (operator, free)"
    )
    again = run(
        "users", "create", "ops@example.com", "--password", "password-2", "--role", "operator"
    )
    assert again.exit_code == 0 and again.output.startswith("updated ops@example.com")
    with app.app_context():
        assert User.select().count() == 1
    login = app.test_client().post(
        "/api/auth/login", json={"email": "ops@example.com", "password": "password-2"}
    )
    assert login.status_code == 200


def test_a_new_password_keeps_the_role_and_plan_unless_told(app, run):
    with app.app_context():
        factories.user("boss@example.com", role="admin", plan="pro")
    again = run("users", "create", "boss@example.com", "--password", "password-2")
    assert again.exit_code == 0 and again.output.strip() == "updated boss@example.com (admin, pro)"
    told = run("users", "create", "boss@example.com", "--password", "password-3", "--plan", "free")
    assert told.exit_code == 0 and told.output.strip() == "updated boss@example.com (admin, free)"
    made = run("users", "create", "new@example.com", "--password", "password-1")
    assert made.exit_code == 0 and made.output.strip() == "created new@example.com (user, free)"


def test_users_update_changes_plan_role_and_status(app, run):
    with app.app_context():
        factories.user("who@example.com")
        factories.user("boss@example.com", role="admin")  # so the suspended one is not the last
    result = run("users", "update", "WHO@example.com", "--plan", "pro", "--role", "admin")
    assert (
        result.exit_code == 0
        and result.output.strip() == "updated who@example.com (admin, pro, active)"
    )
    assert run("users", "update", "who@example.com", "--status", "suspended").exit_code == 0
    with app.app_context():
        user = User.get(User.email == "who@example.com")
        assert (user.role, user.plan, user.status) == ("admin", "pro", "suspended")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("users", "update", "ghost@example.com", "--plan", "pro"),
            "no user has the email 'ghost@example.com'",
        ),
        (
            ("users", "create", "a@example.com", "--password", "short"),
            "the password must be 8 to 128",
        ),
        (
            ("users", "update", "a@example.com", "--plan", "gold"),
            "'gold' is not one of 'free', 'pro'",
        ),
        (("ledger", "replay", "x.csv", "--start", "2026-02-30"), "is not a real date"),
        (
            ("users", "create", "İ" * 240 + "@example.com", "--password", "password-1"),
            "the email is longer than 254 characters once lower-cased",
        ),
        (("users", "create", "", "--password", "password-1"), "email: Not a valid email"),
        (("users", "create", "not-an-email", "--password", "password-1"), "Not a valid email"),
        (("users", "create", "nl\n@x.com", "--password", "password-1"), "Not a valid email"),
        (("users", "create", "\udcff@x.com", "--password", "password-1"), "not valid UTF-8"),
        (("users", "create", "a@example.com", "--password", "pass\udcffword"), "not valid UTF-8"),
        (("users", "update", "\udcff@x.com", "--plan", "pro"), "not valid UTF-8"),
        (("users", "list", "--search", "\udcff"), "not valid UTF-8"),
    ],
)
def test_clear_errors(run, args, message):
    result = run(*args)
    assert result.exit_code != 0
    assert message in result.output


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self):
        return True


def test_progress_is_drawn_on_a_terminal_only():
    screen = Terminal()
    bar = Progress("fitting weeks", screen)
    bar.update(3, 10)
    bar.echo("a line above the bar")
    bar.update(10, 10, "done")
    bar.close()
    drawn = screen.getvalue()
    assert "fitting weeks [#########.....................] 3/10" in drawn
    assert "done [##############################] 10/10" in drawn and drawn.endswith("\n")
    log = io.StringIO()  # a pipe or a log file: nothing but the summary lines elsewhere
    quiet = Progress("fitting weeks", log)
    quiet.update(3, 10)
    quiet.close()
    assert log.getvalue() == ""


def test_model_backfill_through_a_pipe_prints_plain_lines(app):
    result = app.test_cli_runner().invoke(args=["model", "backfill"])
    assert result.exit_code == 0, result.output
    assert "\r" not in result.output and "[#" not in result.output


def test_db_init_summarises_the_odds_of_a_database_made_before_summaries(app):
    """A database made by ``db init`` before migrations and before summaries (no history, no
    summaries) is adopted by the first step, which fills the summaries."""
    with app.app_context():
        match = factories.match(
            odds=[("bet365", "1x2", s, 2.5, False) for s in ("home", "draw", "away")]
        )
        OddsSummary.delete().execute()  # as a database made before summaries has them
        db.execute_sql(f'DROP TABLE "{migrate.HISTORY_TABLE}"')  # and before migrations
    result = app.test_cli_runner().invoke(args=["db", "init"])
    assert result.exit_code == 0, result.output
    assert "applied 001_release_0_1_0" in result.output
    with app.app_context():
        rows = OddsSummary.select().where(OddsSummary.match == match)
        assert {(row.selection, row.best_price, row.best_bookmaker) for row in rows} == {
            ("home", 2.5, "bet365"),
            ("draw", 2.5, "bet365"),
            ("away", 2.5, "bet365"),
        }
    again = app.test_cli_runner().invoke(args=["db", "init"])
    assert again.exit_code == 0 and "applied" not in again.output  # nothing left to do


def test_db_status_lists_the_steps_and_fails_while_some_are_pending(app, run):
    assert run("db", "status").exit_code == 0
    with app.app_context():
        db.execute_sql(f"DELETE FROM \"{migrate.HISTORY_TABLE}\" WHERE name = '002_since_release'")
    result = run("db", "status")
    assert result.exit_code == 1
    assert "applied 001_release_0_1_0" in result.output
    assert "pending 002_since_release" in result.output
    assert "flask db upgrade" in result.output


def test_users_create_asks_for_a_hidden_confirmed_password(app):
    runner = app.test_cli_runner()
    result = runner.invoke(
        args=["users", "create", "asked@example.com"],
        input="password-1\nnot-the-same\npassword-1\npassword-1\n",
    )
    assert result.exit_code == 0, result.output
    assert "Password: " in result.output and "Repeat for confirmation: " in result.output
    assert "do not match" in result.output
    assert "password-1" not in result.output  # never echoed
    assert result.output.strip().endswith("created asked@example.com (user, free)")
    login = app.test_client().post(
        "/api/auth/login", json={"email": "asked@example.com", "password": "password-1"}
    )
    assert login.status_code == 200


def test_an_account_stored_with_an_odd_email_still_gets_a_new_password(app, run):
    """Emails are checked when an account is made; one stored before the check keeps working."""
    with app.app_context():
        User.create(email="ops", password_hash="-", token_stamp="-", role="admin", plan="free")
    result = run("users", "create", "ops", "--password", "password-2")
    assert result.exit_code == 0 and result.output.strip() == "updated ops (admin, free)"


def test_a_refused_email_is_said_before_the_password_is_asked_for(app):
    result = app.test_cli_runner().invoke(args=["users", "create", "not-an-email"], input="")
    assert result.exit_code == 1 and "Not a valid email" in result.output
    assert "Password" not in result.output


def test_users_create_without_a_terminal_or_password_fails(run):
    result = run("users", "create", "a@example.com")
    assert result.exit_code != 0


def test_users_list_filters_by_search_plan_and_status(app, run):
    with app.app_context():
        factories.user("ann@example.com", plan="pro")
        factories.user("bob@example.com")
        factories.user("cat@other.example", plan="pro", status="suspended")
    everyone = run("users", "list")
    assert everyone.exit_code == 0, everyone.output
    lines = everyone.output.strip().splitlines()
    assert [line.split()[1] for line in lines[:-1]] == [
        "cat@other.example",
        "bob@example.com",
        "ann@example.com",
    ]
    assert lines[-1] == "3 users"
    pro = run("users", "list", "--plan", "pro", "--status", "active").output
    assert "ann@example.com" in pro and "cat@" not in pro and pro.strip().endswith("1 user")
    found = run("users", "list", "--search", "EXAMPLE.COM").output
    assert found.strip().endswith("2 users") and "other.example" not in found
    assert "suspended" in run("users", "list", "--status", "suspended").output


def test_a_log_line_never_lands_on_the_bar():
    screen = Terminal()
    logger = logging.getLogger("picks.test-bar")
    handler = logging.StreamHandler(screen)
    logger.addHandler(handler)
    try:
        bar = Progress("fitting weeks", screen)
        bar.update(3, 10)
        logger.warning("a warning while the bar is drawn")
        bar.update(4, 10)
        bar.close()
        logger.warning("after the bar")
    finally:
        logger.removeHandler(handler)
    drawn = screen.getvalue()
    # What stands on the warning's line before it is only erased space, ended by a return.
    before = drawn[: drawn.index("a warning")]
    assert before.endswith("\r") and before.rsplit("\r", 1)[-1] == ""
    after = drawn.split("a warning")[1]
    assert "\rfitting weeks [#########.....................] 3/10" in after  # drawn again
    assert "fitting weeks [############..................] 4/10" in after
    assert "emit" not in vars(handler)  # the handler is given back
    assert drawn.endswith("\nafter the bar\n")


def test_the_import_bar_counts_rows(app, tmp_path, monkeypatch):
    header = "Div,Date,Time,HomeTeam,AwayTeam,FTHG,FTAG,FTR,PSH,PSD,PSA"
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    first.write_text(
        f"{header}\nE0,17/08/2024,15:00,Arsenal,Wolves,2,0,H,1.3,5.5,10\n"
        "E0,17/08/2024,15:00,Chelsea,Fulham,1,1,D,2.0,3.5,4\n"
    )
    second.write_text(f"{header}\nE0,31/02/2024,15:00,Leeds,Hull,,,,2.0,3.4,4\n")
    screen = Terminal()
    monkeypatch.setattr(progress, "Progress", lambda *a, **k: Progress(*a, stream=screen, **k))
    result = app.test_cli_runner().invoke(args=["data", "import", str(first), str(second)])
    assert result.exit_code == 0, result.output
    drawn = screen.getvalue()
    assert "importing first.csv [" in drawn and "] 0/3 rows" in drawn
    assert "importing second.csv [" in drawn and "] 2/3 rows" in drawn
    assert "imported [##############################] 3/3 rows" in drawn
    assert "second.csv:2: rejected: Date '31/02/2024' is not a real date" in result.stderr
