"""The schedule: which operations the worker starts, when (cron syntax, UTC, from configuration),
and how nothing is lost while no worker runs.

Every minute the worker calls :func:`tick`. For each job it finds the schedule's latest instant
up to now; unless a run for that instant (or a later one) exists, it records one, queued, with
``scheduled_for`` set (``createdBy: "scheduler"``). A worker that was stopped therefore runs
each job once when it comes back, for the latest instant it missed, and a fresh installation
runs each job at its first minute. Jobs that share a kind (the two data syncs) make one run
per tick: the latest instant of any of their schedules, so a worker's first minute starts one
sync, not a catch-up of each. Only the worker holding the scheduler's lease ticks
(``services.operations.lease``); what it records it records under the lease's fencing token,
so a deposed holder records nothing; and ``(kind, scheduled_for)`` is unique besides.

A run goes through ``services.operations.jobs`` like the Operations API's and the CLI's, under the
worker's lock for its kind, so two runs of one kind never overlap. A scheduled run left queued
or running while nobody holds its kind's lock (its worker died) is handed back by :func:`tick`
to be run again: :func:`execute` runs a run only while it is unfinished.

The jobs: settlement (``SCHEDULE_SETTLEMENT``), calibration (``SCHEDULE_CALIBRATION``), the
ledger's checkpoint (``SCHEDULE_LEDGER_CHECKPOINT``), which runs only when entries were
appended since the latest checkpoint: its ``wanted`` lets an instant pass without a run, and
the data sync of the live sources: regularly (``SCHEDULE_DATA_SYNC``) and, while a stored
match kicks off within ``DATA_SYNC_NEAR_HOURS``, more often (``SCHEDULE_DATA_SYNC_NEAR``); both
only when a source is configured. The two share the ``data-sync`` kind, so they never overlap
and one instant is one run.

**Adding a job**: give it an operation kind (``enums.OPERATION_KINDS`` with its schemas in
``schemas/ops.py``) and append a :class:`Job` to ``JOBS`` naming its schedule setting (in
``config``), its parameters, its work, and, if some instants have nothing to do, ``wanted``.
"""

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from huey import crontab
from peewee import DatabaseError

from models import Operation, WorkerBeat
from schemas.ops import PARAMS_SCHEMAS
from services.feeds import sources, sync
from services.forecasting import calibration_runs
from services.operations import jobs
from services.record import settling, signed_log
from store.database import writing

log = logging.getLogger("picks.schedule")

UNFINISHED = ("queued", "running")

#: How far back a schedule's latest instant is looked for (a monthly job's longest gap).
LOOKBACK = timedelta(days=31)

#: How long a scheduled run may sit queued, with its kind's lock free, before it is taken for
#: one whose task was lost and handed back.
QUEUED_GRACE = timedelta(minutes=2)


@dataclass(frozen=True)
class Job:
    """An operation the worker starts on a schedule."""

    kind: str  # the operation kind it records
    setting: str  # the configuration key of its cron expression
    params: Callable[[dict], dict]  # its parameters, from the settings
    work: Callable[[dict, dict, object], dict]  # (params, settings, now) → its result
    wanted: Callable[[dict, object], bool] | None = None  # (settings, now) → anything to do?
    atomic: bool = True  # False: the work opens its own transactions (a sync's fetches)


def _data_sync(setting: str, when) -> Job:
    """A sync of every configured live source on the schedule ``setting`` names, when some
    source is configured and ``when(settings, now)`` holds."""
    return Job(
        "data-sync",
        setting,
        lambda settings: {"source": None},
        lambda params, settings, now: sync.run(settings, now, params["source"]),
        lambda settings, now: bool(sources.configured(settings)) and when(settings, now),
        atomic=False,
    )


JOBS = (
    Job(
        "settlement-run",
        "SCHEDULE_SETTLEMENT",
        lambda settings: {"last_days": settings["SCHEDULE_SETTLEMENT_LAST_DAYS"]},
        lambda params, settings, now: settling.run(params["last_days"], settings, now),
    ),
    Job(
        "calibration-run",
        "SCHEDULE_CALIBRATION",
        lambda settings: {"window_days": settings["SCHEDULE_CALIBRATION_WINDOW_DAYS"]},
        lambda params, settings, now: calibration_runs.run(params["window_days"], settings, now),
    ),
    Job(
        "ledger-checkpoint",
        "SCHEDULE_LEDGER_CHECKPOINT",
        lambda settings: {},
        lambda params, settings, now: signed_log.scheduled_checkpoint(now, settings),
        # Operations that append sign their own checkpoint; this one signs what any left
        # unsigned (one that failed after appending, a publication outside an operation).
        lambda settings, now: signed_log.unsigned(),
    ),
    _data_sync("SCHEDULE_DATA_SYNC", lambda settings, now: True),
    _data_sync(
        "SCHEDULE_DATA_SYNC_NEAR",
        lambda settings, now: sync.kickoff_near(
            now, timedelta(hours=settings["DATA_SYNC_NEAR_HOURS"])
        ),
    ),
)


def cron(expression: str):
    """A test of datetimes for a five-field cron expression (minute hour day month weekday;
    ``*``, lists, ranges and steps), or ValueError."""
    fields = expression.split()
    if len(fields) != 5:
        raise ValueError(f"{expression!r} is not a cron expression of five fields")
    minute, hour, day, month, weekday = fields
    return crontab(minute, hour, day, month, weekday, strict=True)


def check(settings) -> None:
    """ValueError naming the setting, for a schedule that cannot be read."""
    for job in JOBS:
        try:
            cron(settings[job.setting])
        except ValueError as exc:
            raise ValueError(f"{job.setting}: {exc}") from exc


def latest(matches, now, since=None):
    """The schedule's latest instant (a whole minute) at or before ``now`` and after ``since``,
    or None."""
    moment = now.replace(second=0, microsecond=0)
    floor = max(since, now - LOOKBACK) if since is not None else now - LOOKBACK
    while moment > floor:
        if matches(moment):
            return moment
        moment -= timedelta(minutes=1)
    return None


def _last_scheduled(kind):
    return (
        Operation.select(Operation.scheduled_for)
        .where((Operation.kind == kind) & Operation.scheduled_for.is_null(False))
        .order_by(Operation.scheduled_for.desc())
        .scalar()
    )


def _due(settings, now) -> list[tuple[Job, object]]:
    """``(job, instant)`` per kind: of the kind's jobs that want a run, the one whose schedule's
    latest instant since the kind's last scheduled run is the latest, with that instant."""
    found, last = {}, {}
    for job in JOBS:
        if job.kind not in last:
            last[job.kind] = _last_scheduled(job.kind)
        due = latest(cron(settings[job.setting]), now, last[job.kind])
        if due is None or (job.wanted is not None and not job.wanted(settings, now)):
            continue
        if job.kind not in found or due > found[job.kind][1]:
            found[job.kind] = (job, due)
    return list(found.values())


def tick(
    settings, now, running: Callable[[str], bool], fence: Callable[[], None] | None = None
) -> list[tuple[int, str]]:
    """Record the runs due by ``now``, find those a dead worker left, then the worker's beat;
    returns the ``(operation id, kind)`` of each run the worker should start. ``running(kind)``
    says whether some worker holds that kind's lock; ``fence()``, called first in the
    transaction that records the runs, raises ``LeaseLost`` for a deposed scheduler (nothing is
    recorded, nothing started)."""
    start = []
    with writing():
        if fence is not None:
            fence()
        for job, due in _due(settings, now):
            operation = jobs.schedule(job.kind, job.params(settings), due, now)
            if operation is not None:
                start.append((operation.id, job.kind))
        left = Operation.select(
            Operation.id, Operation.kind, Operation.status, Operation.created_at
        ).where(Operation.scheduled_for.is_null(False) & Operation.status.in_(UNFINISHED))
        for operation in left:
            if (operation.id, operation.kind) in start or running(operation.kind):
                continue
            if operation.status == "running" or now - operation.created_at > QUEUED_GRACE:
                start.append((operation.id, operation.kind))
    try:  # last: a tick that failed before it is not a worker at work
        beat(now)
    except DatabaseError as error:  # the runs found are still started; the next tick beats
        log.warning("the worker's beat was not recorded: %s", error)
    return start


def beat(now) -> None:
    """Record that a worker runs the schedule at ``now`` (the health report reads it)."""
    WorkerBeat.insert(id=1, beat_at=now).on_conflict(
        conflict_target=[WorkerBeat.id], update={WorkerBeat.beat_at: now}
    ).execute()


def execute(
    operation_id: int, settings, now, fence: Callable[[], None] | None = None
) -> dict | None:
    """Run a scheduled operation that is still unfinished (call it holding its kind's lock);
    returns its record, or None when it had already run. ``fence()`` (see :func:`tick`) is
    called first: a deposed scheduler's run is left to its successor, which hands it back."""
    if fence is not None:
        with writing():
            fence()
    operation = Operation.get_or_none(Operation.id == operation_id)
    if operation is None or operation.status not in UNFINISHED:
        return None
    job = next(job for job in JOBS if job.kind == operation.kind)
    params = PARAMS_SCHEMAS[operation.kind]().load(operation.params)
    finished = jobs.execute(
        operation, lambda: job.work(params, settings, now), now, job.atomic, settings
    )
    return jobs.describe(finished)
