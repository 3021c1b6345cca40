"""Operations: recorded runs, failures kept with their error, results, and the ops CLI."""

from datetime import UTC, datetime, timedelta

import pytest

from clock import utcnow
from errors import MatchNotOpen, NotFound, OperationFailed, OperationNotFinished
from models import Operation, Pick, User
from services.forecasting import predictions
from services.operations import jobs
from tests import factories

SETTLED = {
    "examined": 0,
    "won": 0,
    "lost": 0,
    "void": 0,
    "half_won": 0,
    "half_lost": 0,
    "pending": 0,
}


def test_a_succeeded_operation_keeps_params_result_and_times(ctx):
    at = datetime(2026, 11, 21, 19, 45, tzinfo=UTC)
    result = {"last_days": 3, "settled_at": at, **SETTLED}
    operation = jobs.run("settlement-run", {"last_days": 3}, lambda: result)
    stored = Operation.get_by_id(operation.id)
    # Stored through the schemas: the JSON is the wire format, camelCase with Z datetimes.
    assert (stored.kind, stored.status, stored.params) == (
        "settlement-run",
        "succeeded",
        {"lastDays": 3},
    )
    counts = {
        "halfWon" if k == "half_won" else "halfLost" if k == "half_lost" else k: v
        for k, v in SETTLED.items()
    }
    assert stored.result == {"lastDays": 3, "settledAt": "2026-11-21T19:45:00Z", **counts}
    assert stored.started_at <= stored.finished_at and stored.error is None
    # … and it reads back as the Python values the service returned.
    assert jobs.result(operation.id, factories.settings()) == ("settlement-run", result)


def test_a_result_the_schema_does_not_know_fails_the_operation(ctx, caplog):
    operation = jobs.run("settlement-run", {"last_days": 3}, lambda: {"settled": 0})
    assert operation.status == "failed" and "settled" in operation.error


def test_a_failure_is_recorded_and_its_work_rolled_back(ctx, caplog):
    def work():
        User.create(email="half@example.com", password_hash="x")
        raise RuntimeError("the feed timed out")

    operation = jobs.run("calibration-run", {"window_days": 30}, work)
    stored = Operation.get_by_id(operation.id)
    assert (stored.status, stored.error, stored.result) == (
        "failed",
        "RuntimeError: the feed timed out",
        None,
    )
    assert User.select().where(User.email == "half@example.com").count() == 0
    assert "the feed timed out" in caplog.text
    with pytest.raises(OperationFailed, match="the feed timed out"):
        jobs.result(operation.id, factories.settings())


def test_results_of_unfinished_and_unknown_operations(ctx):
    running = Operation.create(kind="settlement-run", status="running", params={})
    with pytest.raises(OperationNotFinished):
        jobs.result(running.id, factories.settings())
    with pytest.raises(NotFound):
        jobs.get(running.id + 1, factories.settings())


def test_refresh_refuses_unknown_and_finished_matches(ctx):
    with pytest.raises(NotFound):
        predictions.check_open(999)
    finished = factories.match()
    with pytest.raises(MatchNotOpen):
        predictions.check_open(finished.id)


@pytest.fixture
def run(app):
    runner = app.test_cli_runner()
    return lambda *args: runner.invoke(args=list(args))


def test_cli_settle_and_calibrate_record_operations(app, run):
    with app.app_context():
        match = factories.match(goals=(1, 0))
        factories.pick(match)
    settle = run("ops", "settle", "--last-days", "2")
    assert settle.exit_code == 0, settle.output
    assert "settlement-run: succeeded" in settle.output and '"won": 1' in settle.output
    calibrate = run("ops", "calibrate", "--window-days", "30")
    assert calibrate.exit_code == 0 and "calibration-run: succeeded" in calibrate.output
    with app.app_context():
        assert [(op.kind, op.status) for op in Operation.select().order_by(Operation.id)] == [
            ("settlement-run", "succeeded"),
            ("calibration-run", "succeeded"),
        ]
        assert Pick.get().status == "won"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("ops", "settle", "--last-days", "0"), "0 is not in the range 1<=x<=3650"),
        (("ops", "calibrate", "--window-days", "3"), "3 is not in the range 7<=x<=3650"),
        (("ops", "refresh", "12345"), "Match 12345 does not exist."),
    ],
)
def test_cli_refuses_bad_requests_without_recording_them(app, run, args, message):
    result = run(*args)
    assert result.exit_code != 0 and message in result.output
    with app.app_context():
        assert Operation.select().count() == 0


def test_cli_refresh_of_a_finished_match(app, run):
    with app.app_context():
        match = factories.match(kickoff=utcnow() - timedelta(days=3))
    result = run("ops", "refresh", str(match.id))
    assert result.exit_code == 1 and f"Match {match.id} is finished" in result.output


def test_cli_model_backfill_records_its_operation(app, run):
    with app.app_context():
        for day in range(10, 0, -1):
            factories.match(f"H{day % 3}", f"A{day % 4}", kickoff=utcnow() - timedelta(days=day))
    result = run("model", "backfill")
    assert result.exit_code == 0, result.output
    assert "model-backfill: succeeded" in result.output and '"matches": 10' in result.output
    with app.app_context():
        operation = Operation.get()
        assert (operation.kind, operation.result["predictions"]) == ("model-backfill", 30)
