"""The worker: its schedule on a moving clock through a real huey queue (an SQLite file), and a
real worker process delivering webhooks, killed mid-delivery and started again."""

import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta

import pytest
from huey import SqliteHuey
from peewee import OperationalError

from models import Delivery, LedgerCheckpoint, Operation, Pick, WorkerBeat
from services.operations import schedule
from services.record import signed_log
from store.database import db
from tests import factories
from tests.helpers import SECRET, WEBHOOK_KEY
from tests.receiver import receiving
from tests.servers import ROOT, traceback_in
from worker import Worker, make_huey, queue_path

START = datetime(2026, 11, 23, 9, 20, tzinfo=UTC)  # a Monday; steps of 10 minutes hit each hour
OPS = "/api/v1/ops"


@pytest.fixture
def clock():
    return factories.Clock(START)


@pytest.fixture
def app(make_app, clock):
    return make_app(CLOCK=clock, RATELIMIT_AUTH="100000 per minute")


@pytest.fixture
def worker(app, clock, tmp_path):
    huey = SqliteHuey("picks-test", filename=str(tmp_path / "queue.db"), results=False, utc=True)
    return Worker(app.config, huey, clock, pump_seconds=0)


def drive(worker, now):
    """What the consumer does in the minute at ``now``: take the scheduler's lease and, holding
    it, enqueue the minute's tasks; then run every task queued or scheduled for then, until none
    is left."""
    huey, moment = worker.huey, now.replace(tzinfo=None)  # huey keeps naive UTC
    worker.lead(now)
    while True:
        for task in huey.read_schedule(moment):
            huey.enqueue(task)
        task = huey.dequeue()
        if task is None:
            return
        huey.execute(task, moment)


def scheduled(kind):
    return list(
        Operation.select()
        .where((Operation.kind == kind) & Operation.scheduled_for.is_null(False))
        .order_by(Operation.scheduled_for)
    )


@pytest.mark.slow  # two days of a moving clock, ten minutes a step, through a real huey queue
def test_the_schedule_settles_and_calibrates_on_time_and_health_stays_ok(
    app, client, people, worker, clock
):
    _, operator = people["operator"]
    kickoff = START + timedelta(days=1, hours=5, minutes=40)  # Tuesday 15:00
    with app.app_context():
        match = factories.match(kickoff=kickoff, status="scheduled")
        pick = factories.pick(match, is_live=True)
    health = []
    while clock() < START + timedelta(days=2):
        with app.app_context():
            if clock() == kickoff + timedelta(hours=2):  # the result arrives at 17:00
                factories.match(kickoff=kickoff, status="finished", goals=(1, 0))
        drive(worker, clock())
        answer = client.get(f"{OPS}/health/services", headers=operator).get_json()
        health.append((clock(), answer["status"], answer["services"]))
        clock.advance(minutes=10)
    assert {status for _, status, _ in health} == {"ok"}, [
        item for item in health if item[1] != "ok"
    ][:1]
    with app.app_context():
        settlements, calibrations = scheduled("settlement-run"), scheduled("calibration-run")
        settled = Pick.get_by_id(pick.id)
    # One settlement an hour from the first minute (09:00 was due when the worker started) …
    hours = [START.replace(minute=0) + timedelta(hours=n) for n in range(49)]
    assert [run.scheduled_for for run in settlements] == hours
    # … each started within ten minutes of its instant (but those due before the worker
    # started, which it ran at once), by the scheduler, and succeeded.
    assert all(run.status == "succeeded" for run in settlements + calibrations)
    assert all(
        timedelta(0) <= run.started_at - run.scheduled_for < timedelta(minutes=10)
        for run in settlements + calibrations
        if run.scheduled_for > START
    )
    # Calibration daily at 03:30: the morning's missed one at start, then each morning.
    assert [run.scheduled_for for run in calibrations] == [
        datetime(2026, 11, day, 3, 30, tzinfo=UTC) for day in (23, 24, 25)
    ]
    # The pick settled in the first run once its result had come (17:00, as the hour's run).
    assert settled.status == "won" and settled.settled_at == kickoff + timedelta(hours=2)
    record = client.get(f"{OPS}/operations/{settlements[0].id}", headers=operator).get_json()
    assert record["createdBy"] == "scheduler" and record["params"] == {"lastDays": 7}


def test_a_stopped_worker_runs_what_it_missed_once_when_it_comes_back(app, worker, clock):
    drive(worker, clock())
    clock.advance(hours=5, minutes=10)  # stopped for five hours
    drive(worker, clock())
    with app.app_context():
        runs = [run.scheduled_for for run in scheduled("settlement-run")]
    assert runs == [START.replace(minute=0), START.replace(minute=0) + timedelta(hours=5)]


def test_two_runs_of_one_kind_never_overlap(app, worker, clock):
    lock = worker.lock(worker.lock_name("settlement-run"), 900)
    lock.acquire()  # a settlement is running somewhere
    drive(worker, clock())
    with app.app_context():
        (run,) = scheduled("settlement-run")
        assert run.status == "queued"  # waits for the lock, huey retries it
        clock.advance(minutes=3)
        drive(worker, clock())  # still locked: nothing starts, nothing is recorded twice
        assert [item.status for item in scheduled("settlement-run")] == ["queued"]
    lock.release()
    clock.advance(minutes=1)
    drive(worker, clock())  # the run waiting past its grace is started again, once
    with app.app_context():
        assert [item.status for item in scheduled("settlement-run")] == ["succeeded"]


def test_a_run_a_dead_worker_left_running_is_run_again(app, worker, clock):
    with app.app_context():
        run = Operation.create(
            kind="settlement-run",
            status="running",
            params={"lastDays": 7},
            created_at=clock(),
            started_at=clock(),
            scheduled_for=clock().replace(minute=0),
        )
    drive(worker, clock())  # nobody holds the lock: the worker that ran it is gone
    with app.app_context():
        assert Operation.get_by_id(run.id).status == "succeeded"
        assert len(scheduled("settlement-run")) == 1


def publish(kickoff, home):
    """A live pick on a match at ``kickoff`` entered into the ledger as a store of picks outside
    an operation would: appended, no checkpoint."""
    match = factories.match(home, "Visitors", kickoff=kickoff, status="scheduled")
    factories.pick(match, is_live=True)
    with db.atomic():
        assert signed_log.publish_new([match.id], START, "test-1") == 1


def test_the_ledger_checkpoint_runs_once_per_ten_minutes_only_when_entries_wait(
    app, client, people, worker, clock
):
    """An instant with nothing to sign passes without a run; entries appended later are signed
    at the next minute if their ten minutes have had no run yet, else at the next mark."""
    operator = people["operator"][1]
    minute = START.replace(minute=0)
    appended = {minute + timedelta(minutes=m) for m in (23, 45, 47)}
    for _ in range(60):  # 09:20 to 10:19, minute by minute
        with app.app_context():
            if clock() in appended:
                publish(START + timedelta(days=1), f"Home {clock():%H%M}")
        drive(worker, clock())
        clock.advance(minutes=1)
    with app.app_context():
        runs = [(run.scheduled_for, run.started_at) for run in scheduled("ledger-checkpoint")]
        statuses = {run.status for run in scheduled("ledger-checkpoint")}
        signed = [(row.size, row.published_at) for row in LedgerCheckpoint.select()]
        last = scheduled("ledger-checkpoint")[-1].id
    at = [minute + timedelta(minutes=m) for m in (20, 23, 40, 45, 50)]
    assert runs == [(at[0], at[1]), (at[2], at[3]), (at[4], at[4])] and statuses == {"succeeded"}
    assert signed == [(1, at[1]), (2, at[3]), (3, at[4])]  # none at 10:00 or 10:10
    record = client.get(f"{OPS}/operations/{last}", headers=operator).get_json()
    assert record["createdBy"] == "scheduler" and record["params"] == {}
    result = client.get(f"{OPS}/operations/{last}/result", headers=operator).get_json()
    assert result["size"] == 3 and result["publishedAt"] == "2026-11-23T09:50:00Z"
    assert result["signedNote"].startswith("test.example/ledger\n3\n")


def test_a_checkpoint_already_signed_is_the_result_of_a_late_run(app, worker, clock):
    with app.app_context():
        publish(START + timedelta(days=1), "Early")
        signed_log.checkpoint(clock(), app.config)
        run = Operation.create(
            kind="ledger-checkpoint",
            status="queued",
            params={},
            created_at=clock() - timedelta(minutes=5),
            scheduled_for=clock().replace(minute=10),
        )
    drive(worker, clock())  # handed back past its grace: nothing new to sign, none signed twice
    with app.app_context():
        finished = Operation.get_by_id(run.id)
        assert finished.status == "succeeded" and finished.result["size"] == 1
        assert LedgerCheckpoint.select().count() == 1


def test_a_tick_records_the_beat_last_and_a_failed_beat_keeps_its_runs(
    app, clock, monkeypatch, caplog
):
    def idle(_kind):
        return False  # no kind's lock is held

    with app.app_context():
        first = {operation for operation, _ in schedule.tick(app.config, clock.now, idle)}
        assert first and WorkerBeat.get_by_id(1).beat_at == clock.now

        def locked(_now):
            raise OperationalError("database is locked")

        monkeypatch.setattr(schedule, "beat", locked)
        clock.now += timedelta(hours=1)
        due = schedule.tick(app.config, clock.now, idle)
        new = [kind for operation, kind in due if operation not in first]
        assert new == ["settlement-run"]  # the hour's run, found and still started
        assert "the worker's beat was not recorded: database is locked" in caplog.text


def test_the_schedule_is_configuration(make_app):
    app = make_app(SCHEDULE_SETTLEMENT="15 */2 * * *", SCHEDULE_CALIBRATION="0 4 * * 1")
    assert schedule.latest(schedule.cron("15 */2 * * *"), START) == START.replace(hour=8, minute=15)
    assert schedule.latest(schedule.cron("0 4 * * 1"), START) == START.replace(hour=4, minute=0)
    with pytest.raises(ValueError, match="SCHEDULE_SETTLEMENT"):
        Worker(
            {**app.config, "SCHEDULE_SETTLEMENT": "every hour"},
            SqliteHuey("x", filename=":memory:"),
        )


def test_the_queue_lives_beside_an_sqlite_database_or_in_redis(tmp_path):
    beside = {"WORKER_QUEUE_URL": None, "DATABASE_URL": f"sqlite:///{tmp_path}/app.db"}
    assert queue_path(beside, tmp_path / "instance") == tmp_path / "app.queue.db"
    postgres = {"WORKER_QUEUE_URL": None, "DATABASE_URL": "postgresql://db/picks"}
    assert queue_path(postgres, tmp_path / "instance") == tmp_path / "instance" / "queue.db"
    redis = {"WORKER_QUEUE_URL": "redis://127.0.0.1:6379/5", "DATABASE_URL": "sqlite:///x"}
    assert type(make_huey(redis, tmp_path)).__name__ == "RedisExpireHuey"


# A real worker process.


def start_worker(app, tmp_path, **settings):
    env = {
        **os.environ,
        "APP_ENV": "test",
        "DATABASE_URL": app.config["DATABASE_URL"],
        "JWT_SECRET_KEY": SECRET,
        "WEBHOOK_SECRETS_KEY": WEBHOOK_KEY,  # the key the test app encrypted the secrets with
        "WORKER_QUEUE_URL": f"sqlite:///{tmp_path / 'worker-queue.db'}",
        "WEBHOOK_ALLOW_PRIVATE": "true",
        "WEBHOOK_POLL_SECONDS": "0.1",
        **{name: str(value) for name, value in settings.items()},
    }
    return subprocess.Popen(
        [sys.executable, "-m", "worker"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def stop(process, kill=False):
    process.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
    return process.communicate(timeout=30)[0].decode()


def until(check, timeout=30.0):
    """Wait for ``check()`` to hold (polling); fails after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


@pytest.mark.slow
def test_a_worker_process_delivers_and_schedules(make_app, tmp_path):
    app = make_app(WEBHOOK_ALLOW_PRIVATE=True)
    client = app.test_client()
    with app.app_context():
        people = factories.people()
    with receiving() as receiver:
        hook = factories.endpoint(client, people["pro"][1], receiver.url)
        receiver.secrets = [hook["secret"]]
        process = start_worker(app, tmp_path)
        try:
            client.post(f"/api/v1/data/webhooks/{hook['id']}/test", headers=people["pro"][1])
            (got,) = receiver.wait_for(1, timeout=60)

            def ran():
                with app.app_context():
                    return {run.kind for run in Operation.select() if run.status == "succeeded"}

            until(lambda: ran() == {"settlement-run", "calibration-run"})
        finally:
            output = stop(process)
    assert got.verified_by == [0] and got.payload["type"] == "ping"
    assert not traceback_in(output), traceback_in(output)
    health = client.get("/api/v1/ops/health/services", headers=people["operator"][1]).get_json()
    assert health["status"] == "ok", health
    with app.app_context():
        assert {run.created_by_id for run in Operation.select()} == {None}


@pytest.mark.slow
def test_a_worker_killed_mid_delivery_delivers_it_when_it_comes_back(make_app, tmp_path):
    app = make_app(WEBHOOK_ALLOW_PRIVATE=True)
    client = app.test_client()
    with app.app_context():
        people = factories.people()
    settings = {"WEBHOOK_TIMEOUT": 2, "WEBHOOK_LEASE_SECONDS": 3}
    with receiving() as receiver:
        hook = factories.endpoint(client, people["pro"][1], receiver.url)
        receiver.secrets = [hook["secret"]]
        receiver.answers = ["hang"]  # the first try never gets its answer
        process = start_worker(app, tmp_path, **settings)
        client.post(f"/api/v1/data/webhooks/{hook['id']}/test", headers=people["pro"][1])
        receiver.wait_for(1, timeout=60)
        stop(process, kill=True)  # mid-delivery
        with app.app_context():
            assert Delivery.get().status == "pending"  # nothing was recorded, nothing lost
        process = start_worker(app, tmp_path, **settings)
        try:
            first, second = receiver.wait_for(2, timeout=60)

            def delivered():
                with app.app_context():
                    return Delivery.get().status == "succeeded"

            until(delivered)
        finally:
            output = stop(process)
    assert first.webhook_id == second.webhook_id
    assert first.verified_by == second.verified_by == [0]
    assert not traceback_in(output), traceback_in(output)
    with app.app_context():
        assert Delivery.get().attempts == 1
