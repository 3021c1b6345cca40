"""One scheduler across workers: the scheduler's lease and its fencing token, two workers on one
database (in one process, and as two real worker processes, the leader killed with SIGKILL),
the worker's first minute, and ledger appends from two processes at once.

Every clock here is one the test moves (a ``factories.Clock``, or a file the worker processes
read): a lease expires when the test says, never after a wait."""

import os
import re
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from huey import SqliteHuey

from app import create_app
from engine.ledger import merkle
from models import LedgerCheckpoint, LedgerEntry, Operation, Pick, SchedulerLease, WorkerBeat
from services.operations import health, lease, schedule
from services.record import signed_log
from store.database import writing
from tests import factories
from tests.helpers import settings
from tests.servers import ROOT, traceback_in
from worker import LEASE_SECONDS, Worker, host_name, make_huey

START = datetime(2026, 11, 23, 9, 17, tzinfo=UTC)  # a Monday; 09:15 is a near-sync instant


@pytest.fixture
def clock():
    return factories.Clock(START)


def queue(tmp_path, name):
    """A worker's own SQLite queue."""
    return SqliteHuey(name, filename=str(tmp_path / f"{name}.queue.db"), results=False, utc=True)


def run_queue(runner, now, keep=()):
    """Run every task ``runner``'s queue holds for ``now`` but those named in ``keep``, which
    stay queued; returns the names of the tasks run."""
    huey, moment = runner.huey, now.replace(tzinfo=None)  # huey keeps naive UTC
    ran, kept = [], []
    while True:
        for task in huey.read_schedule(moment):
            huey.enqueue(task)
        task = huey.dequeue()
        if task is None:
            break
        if task.name in keep:
            kept.append(task)
            continue
        huey.execute(task, moment)
        ran.append(task.name)
    for task in kept:
        huey.enqueue(task)
    return ran


def scheduled(kind=None):
    query = Operation.select().where(Operation.scheduled_for.is_null(False))
    if kind is not None:
        query = query.where(Operation.kind == kind)
    return list(query.order_by(Operation.scheduled_for, Operation.id))


def finished_runs(text):
    """``Counter`` of the operations a worker's log says finished: {(id, kind, status): n}."""
    found = re.findall(r"operation (\d+) (\S+) (succeeded|failed) in", text)
    return Counter(found)


# The lease itself.


def test_one_holder_at_a_time_renewed_taken_after_its_expiry_with_a_new_token(app, clock):
    with app.app_context():
        assert lease.current(lease.SCHEDULER) is None
        assert lease.hold(lease.SCHEDULER, "first", clock(), LEASE_SECONDS) == 1
        assert lease.hold(lease.SCHEDULER, "second", clock(), LEASE_SECONDS) is None
        clock.advance(seconds=LEASE_SECONDS - 1)
        assert lease.hold(lease.SCHEDULER, "first", clock(), LEASE_SECONDS) == 1  # renewed
        clock.advance(seconds=LEASE_SECONDS - 1)
        assert lease.hold(lease.SCHEDULER, "second", clock(), LEASE_SECONDS) is None
        clock.advance(seconds=1)  # the renewal's expiry: the first stopped renewing
        assert lease.hold(lease.SCHEDULER, "second", clock(), LEASE_SECONDS) == 2
        assert lease.hold(lease.SCHEDULER, "first", clock(), LEASE_SECONDS) is None
        held = lease.current(lease.SCHEDULER)
        assert held["holder"] == "second" and held["acquired_at"] == clock()
        assert held["expires_at"] == clock() + timedelta(seconds=LEASE_SECONDS)
        with pytest.raises(lease.LeaseLost), writing():
            lease.fence(lease.SCHEDULER, 1)
        with writing():
            lease.fence(lease.SCHEDULER, 2)
        schedule.beat(clock())
        answer = health.report(app.config, lambda: ("ok", ""), 0, clock())
    (worker,) = [check for check in answer["services"] if check["name"] == "worker"]
    assert worker["detail"].endswith("; second holds the scheduler's lease (token 2)")
    with app.app_context():
        assert lease.release(lease.SCHEDULER, "second", clock())  # a worker that stops
        assert lease.hold(lease.SCHEDULER, "first", clock(), LEASE_SECONDS) == 3  # at once


def test_a_worker_restarted_on_its_host_takes_its_killed_predecessors_lease_at_once(
    app, clock, tmp_path
):
    """A killed worker's lease would block its successor for its expiry; on the same host the
    successor sees the pid gone and takes it at once. Another host's holder only expires."""
    ended = subprocess.Popen([sys.executable, "-c", ""])
    ended.wait()  # a process of this host that no longer runs
    with app.app_context():
        lease.hold(lease.SCHEDULER, f"elsewhere:{ended.pid}:0a", clock(), LEASE_SECONDS)
    restarted = Worker(app.config, queue(tmp_path, "restarted"), clock, pump_seconds=0)
    assert not restarted.lead()  # another host's process: it may well run
    clock.advance(seconds=LEASE_SECONDS)
    with app.app_context():
        lease.hold(lease.SCHEDULER, f"{host_name()}:{ended.pid}:0b", clock(), 30)
    assert restarted.lead() and restarted.token == 3
    clock.advance(seconds=LEASE_SECONDS)
    with app.app_context():  # a host of that name in another PID namespace (another container)
        lease.hold(lease.SCHEDULER, f"{socket.gethostname()}@1:{ended.pid}:0c", clock(), 30)
    assert not restarted.lead()


# Two workers in one process, on one database, each with its own queue.


def test_a_deposed_schedulers_tasks_record_and_run_nothing_each_slot_runs_once(
    app, clock, tmp_path, caplog
):
    """The first worker leads and records the 09:00 settlement and the 03:30 calibration, then
    stalls past its lease with their runs queued; the second takes over. What the first still
    has queued (the runs, a later minute's tick) is refused by its token: the second hands the
    runs back once their grace has passed and runs each once."""
    caplog.set_level("INFO")
    first = Worker(app.config, queue(tmp_path, "first"), clock, pump_seconds=0, holder="first")
    second = Worker(app.config, queue(tmp_path, "second"), clock, pump_seconds=0, holder="second")
    assert first.lead() and not second.lead()
    assert run_queue(first, clock(), keep=("operation",)) == ["schedule", "deliveries"]
    with app.app_context():
        recorded = [(run.kind, run.status) for run in scheduled()]
    assert recorded == [("calibration-run", "queued"), ("settlement-run", "queued")]
    assert len(first.huey.pending()) == 2  # their runs, queued under token 1

    clock.advance(seconds=LEASE_SECONDS)  # the first stalled: its lease expired unrenewed
    assert second.lead() and not first.lead()
    assert second.token == 2 and second.leading and not first.leading
    assert run_queue(first, clock()) == ["operation", "operation"]  # refused: nothing ran
    with app.app_context():
        assert {run.status for run in scheduled()} == {"queued"}

    clock.now = START.replace(hour=10, minute=0, second=30)  # the 10:00 settlement is due
    first.schedule_task(1)  # a tick the deposed worker enqueued before it knew
    assert run_queue(first, clock()) == ["schedule"]
    with app.app_context():
        assert len(scheduled("settlement-run")) == 1  # it recorded nothing
    assert "a deposed scheduler's tick recorded nothing" in caplog.text

    assert second.lead()  # a new minute: its tick records 10:00 and hands the others back
    run_queue(second, clock())
    with app.app_context():
        runs = [(run.kind, run.scheduled_for.hour, run.status) for run in scheduled()]
        ids = {run.id: run.kind for run in scheduled()}
    assert runs == [
        ("calibration-run", 3, "succeeded"),
        ("settlement-run", 9, "succeeded"),
        ("settlement-run", 10, "succeeded"),
    ]
    finished = finished_runs(caplog.text)
    assert finished == Counter({(str(id_), kind, "succeeded"): 1 for id_, kind in ids.items()})


def test_the_first_minute_queues_one_data_sync(make_app, clock, tmp_path):
    """A source is configured and a match kicks off within three hours: the regular sync's
    latest instant (09:00) and the near one's (09:15) are one run, at 09:15, not two; and at
    09:30, where both schedules meet, one again."""
    app = make_app(CLOCK=clock, FOOTBALL_DATA_URL="http://127.0.0.1:9/never-called")
    with app.app_context():
        factories.match(kickoff=START + timedelta(hours=2), status="scheduled")
    runner = Worker(app.config, queue(tmp_path, "only"), clock, pump_seconds=0)
    assert runner.lead()
    run_queue(runner, clock(), keep=("operation",))
    queued = [task.args[1] for task in runner.huey.pending()]
    assert queued.count("data-sync") == 1  # the first minute: one sync to run, not two
    made = []
    for minute in (START.replace(minute=20), START.replace(minute=30)):
        runner.huey.flush()  # the runs are not made here: no source is called
        clock.now = minute
        with app.app_context():
            Operation.update(status="succeeded").execute()
        assert runner.lead()
        run_queue(runner, clock(), keep=("operation",))
        made.append([task.args[1] for task in runner.huey.pending()].count("data-sync"))
    with app.app_context():
        instants = [run.scheduled_for for run in scheduled("data-sync")]
    assert made == [1, 1]
    assert instants == [START.replace(minute=m) for m in (15, 20, 30)]


# Two real worker processes.


def start_worker(app, tmp_path, name, clock_file, queue_url, queue_name):
    """``python -m tests.frozen_worker`` on the test's clock file; its output in a file."""
    env = {
        **os.environ,
        **{key: str(value) for key, value in settings(tmp_path).items() if value is not None},
        "DATABASE_URL": app.config["DATABASE_URL"],
        "FROZEN_CLOCK_FILE": str(clock_file),
        "FROZEN_LEASE_POLL_SECONDS": "0.2",
        "FROZEN_QUEUE_NAME": queue_name,
        "FROZEN_HOST": f"host-{name}",  # as if on hosts of their own: only the expiry tells
        "PYTHONUNBUFFERED": "1",  # its log as it goes: the leader is killed with SIGKILL
        "WORKER_QUEUE_URL": queue_url,
        "WORKER_THREADS": "2",
    }
    with (tmp_path / f"{name}.log").open("wb") as log:  # the process writes its own copy
        return subprocess.Popen(
            [sys.executable, "-m", "tests.frozen_worker"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )


def set_clock(clock_file, now):
    """Move the worker processes' clock (written whole, then renamed: never read half)."""
    partial = clock_file.with_suffix(".partial")
    partial.write_text(now.isoformat())
    partial.replace(clock_file)


def until(check, timeout=60.0):
    """Wait for ``check()`` to hold (it waits on the processes' work, never on the clock)."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def output(tmp_path, name):
    return (tmp_path / f"{name}.log").read_text()


def enqueued(text):
    return re.findall(r"enqueues the tasks of (\S+ \S+)", text)


@pytest.mark.slow
def test_two_worker_processes_one_schedules_and_a_killed_leader_is_replaced(app, tmp_path):
    """Two workers on one database: one holds the lease and enqueues each minute's tasks, the
    other follows; the leader killed with SIGKILL, the follower takes the lease at its expiry
    (the clock moved there, no wait) and schedules from then on; each slot's run ran once."""
    clock_file = tmp_path / "clock"
    set_clock(clock_file, START)
    redis = os.environ.get("RATELIMIT_STORAGE_URI", "")
    name = f"picks-test-{uuid.uuid4().hex[:8]}"
    shared = redis if redis.startswith("redis://") else None  # one queue both workers read
    processes = {}

    def url(worker_name):
        return shared or f"sqlite:///{tmp_path / worker_name}.queue.db"

    def holder():
        with app.app_context():
            return lease.current(lease.SCHEDULER)

    def pid_of(held):
        return held and int(held["holder"].split(":")[1])

    def beat():
        with app.app_context():
            found = WorkerBeat.get_or_none(WorkerBeat.id == 1)
            return found and found.beat_at

    def done():
        with app.app_context():
            return all(run.status == "succeeded" for run in scheduled()) and scheduled()

    try:
        processes["a"] = start_worker(app, tmp_path, "a", clock_file, url("a"), name)
        until(lambda: pid_of(holder()) == processes["a"].pid)
        until(done)
        processes["b"] = start_worker(app, tmp_path, "b", clock_file, url("b"), name)
        until(lambda: "follows: another worker holds" in output(tmp_path, "b"))

        # To the next minute in steps shorter than the lease, each renewed by the leader before
        # the next: a jump past its expiry would let the follower take it first.
        lease_time = timedelta(seconds=LEASE_SECONDS)
        for seconds in (20, 40, 60):
            moment = START + timedelta(seconds=seconds)
            set_clock(clock_file, moment)
            until(lambda moment=moment: holder()["expires_at"] == moment + lease_time)
            assert pid_of(holder()) == processes["a"].pid
        until(lambda: beat() == START + timedelta(minutes=1))  # the leader's tick ran
        processes["a"].send_signal(signal.SIGKILL)  # the leader dies, holding the lease
        processes["a"].wait(timeout=30)
        expiry = holder()["expires_at"]

        set_clock(clock_file, expiry)  # the moment its lease runs out unrenewed
        until(lambda: pid_of(holder()) == processes["b"].pid)
        taken = holder()
        until(lambda: beat() == expiry)  # the new leader's first tick ran
        set_clock(clock_file, START.replace(hour=10, minute=0))
        until(lambda: beat() == START.replace(hour=10, minute=0))
        until(done)
        processes["b"].send_signal(signal.SIGTERM)
        processes["b"].wait(timeout=30)
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.kill()
                process.wait(timeout=30)
        if shared:
            make_huey({"WORKER_QUEUE_URL": shared}, tmp_path, name).flush()
    a, b = output(tmp_path, "a"), output(tmp_path, "b")
    assert not traceback_in(a) and not traceback_in(b), traceback_in(a) or traceback_in(b)
    assert enqueued(a) == ["2026-11-23 09:17:00+00:00", "2026-11-23 09:18:00+00:00"]
    assert enqueued(b) == ["2026-11-23 09:18:00+00:00", "2026-11-23 10:00:00+00:00"], b
    assert taken["token"] == 2 and taken["acquired_at"] == expiry
    assert taken["acquired_at"] - START - timedelta(minutes=1) == timedelta(seconds=LEASE_SECONDS)
    with app.app_context():
        runs = [(run.kind, run.scheduled_for) for run in scheduled()]
        ids = {str(run.id): run.kind for run in scheduled()}
        released = SchedulerLease.get_by_id(lease.SCHEDULER)
    assert len(runs) == len(set(runs)) == 3  # 03:30 calibration, 09:00 and 10:00 settlements
    finished = finished_runs(a) + finished_runs(b)
    assert finished == Counter({(id_, kind, "succeeded"): 1 for id_, kind in ids.items()})
    assert released.expires_at == START.replace(hour=10, minute=0)  # B gave it up, stopping


# Ledger appends from two processes.

APPENDS = 12


def append(url, go, parity):
    """Publish this process's half of the stored live picks (``parity``: 0 or 1), one
    transaction each with its checkpoint, as the worker's operations append (subprocess)."""
    app = create_app(settings(Path(go).parent, DATABASE_URL=url))
    with app.app_context():
        ids = [pick.match_id for pick in Pick.select().order_by(Pick.id)][int(parity) :: 2]
        while not Path(go).exists():
            time.sleep(0.01)
        for match_id in ids:
            with writing():
                assert signed_log.publish_new([match_id], START, "test-1") == 1
                signed_log.checkpoint(START, app.config)


@pytest.mark.slow
def test_two_processes_appending_at_once_sign_one_root_per_size(app, tmp_path):
    with app.app_context():
        for number in range(APPENDS * 2):
            match = factories.match(
                f"Home {number}", "Away", kickoff=START + timedelta(days=1), status="scheduled"
            )
            factories.pick(match, is_live=True)
    go = tmp_path / "go"
    code = "import sys; from tests.operations.test_scheduler import append; append(*sys.argv[1:])"
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", code, app.config["DATABASE_URL"], str(go), str(parity)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        for parity in (0, 1)
    ]
    go.touch()
    outputs = [process.communicate(timeout=120)[0].decode() for process in processes]
    assert [process.returncode for process in processes] == [0, 0], outputs
    with app.app_context():
        bodies = [
            body
            for (body,) in LedgerEntry.select(LedgerEntry.body)
            .order_by(LedgerEntry.position)
            .tuples()
        ]
        positions = [row.position for row in LedgerEntry.select().order_by(LedgerEntry.position)]
        checkpoints = list(LedgerCheckpoint.select().order_by(LedgerCheckpoint.size))
    assert positions == list(range(APPENDS * 2))
    leaves = [merkle.leaf_hash(body.encode()) for body in bodies]
    assert [row.size for row in checkpoints] == list(range(1, APPENDS * 2 + 1))
    for row in checkpoints:
        assert row.root_hash == merkle.root(leaves[: row.size]).hex(), row.size
