"""Operations: long-running jobs (refresh, settlement, calibration, backfill) and admins' changes
to accounts, recorded with their outcome. The Operations API, the admin API and the CLI call the
same functions here.

Each run is a row: created queued, marked running, then succeeded with its result or failed with
its error. The work runs in its own transaction, so a failure rolls the work back but the record
of the failure stays. Parameters and results are stored through their schemas, so the stored
JSON is the wire format and reads back as the same Python values.
"""

import contextlib
import logging
import time
from datetime import timedelta

from peewee import IntegrityError

from clock import utcnow
from errors import OperationFailed, OperationNotFinished
from models import Operation
from schemas.common import dump_known
from schemas.ops import PARAMS_SCHEMAS, RESULT_SCHEMAS
from services import routes
from services.accounts import users
from services.feeds import bootstrap, contradictions, sync
from services.forecasting import calibration_runs, predictions
from services.record import settling, signed_log
from services.webhooks import events
from store.database import db, writing

log = logging.getLogger("picks.operations")

UNFINISHED = ("queued", "running")

#: Operations whose result a public answer shows (the track record's calibration): one that
#: succeeds changes the data version, so no stored answer outlives it.
SHOWN_RESULTS = frozenset({"calibration-run"})


def run(
    kind: str, params: dict, work, created_by=None, now=None, atomic=True, settings=None
) -> Operation:
    """Record and run ``work()`` as an operation of ``kind``; returns the finished record.

    ``now`` is when it starts (the system clock's time if None): its timing is measured from it.
    ``atomic=False`` runs work that opens its own transactions (a sync fetches with none open).
    ``settings``, for work that signs ledger checkpoints: they are time-stamped once its
    transaction has committed.
    """
    operation = Operation.create(
        kind=kind,
        status="queued",
        params=dump_known(PARAMS_SCHEMAS[kind](), params),
        created_by=created_by,
        created_at=now or utcnow(),
    )
    return execute(operation, work, now, atomic, settings)


def execute(operation: Operation, work, now=None, atomic=True, settings=None) -> Operation:
    """Run ``work()`` for a queued ``operation`` (in one transaction unless ``atomic`` is
    False) and record how it ended, with the ``operation.completed`` event in the same
    transaction as the record's final state. With ``settings``, the ledger checkpoints the work
    signed are time-stamped after its transaction commits (never inside it: the authority is
    a network call)."""
    clocked = now is not None
    operation.status, operation.started_at = "running", now or utcnow()
    operation.save()
    started = time.perf_counter()
    kind = operation.kind
    try:
        with writing() if atomic else contextlib.nullcontext():
            result = dump_known(RESULT_SCHEMAS[kind](), work())
    except Exception as exc:  # an operation records every failure (and its trace), never loses it
        log.exception("operation %s (%s) failed", operation.id, kind)
        operation.status, operation.error = "failed", f"{type(exc).__name__}: {exc}"
    else:
        operation.status, operation.result = "succeeded", result
    elapsed = time.perf_counter() - started
    operation.finished_at = (
        operation.started_at + timedelta(seconds=elapsed) if clocked else utcnow()
    )
    with writing():
        operation.save()
        events.emit(
            "operation.completed",
            [completed(operation)],
            operation.finished_at,
            audience="operators",
        )
    log.info("operation %s %s %s in %.0f ms", operation.id, kind, operation.status, elapsed * 1000)
    if settings is not None:
        signed_log.stamp(settings, operation.finished_at)
    return operation


def created_by(operation: Operation):
    """Who started an operation: a user's id, ``"scheduler"``, or None (the CLI)."""
    return "scheduler" if operation.scheduled_for is not None else operation.created_by_id


def completed(operation: Operation) -> dict:
    """The ``operation.completed`` event's data."""
    return {
        "id": operation.id,
        "path": routes.operation(operation.id),
        "kind": operation.kind,
        "status": operation.status,
        "created_by": created_by(operation),
        "finished_at": events.moment(operation.finished_at),
        "error": operation.error,
    }


def schedule(kind: str, params: dict, due, now) -> Operation | None:
    """Record a scheduled run of ``kind`` due at ``due`` as queued; None when that run exists
    already (another worker's scheduler claimed it)."""
    try:
        with db.atomic():
            return Operation.create(
                kind=kind,
                status="queued",
                params=dump_known(PARAMS_SCHEMAS[kind](), params),
                created_at=now,
                scheduled_for=due,
            )
    except IntegrityError:
        return None


def describe(operation: Operation) -> dict:
    """The operation's record as the API shows it."""
    started, finished = operation.started_at, operation.finished_at
    duration = None
    if started is not None and finished is not None:
        duration = int((finished - started).total_seconds() * 1000)
    return {
        "id": operation.id,
        "kind": operation.kind,
        "status": operation.status,
        "params": operation.params,
        "created_at": operation.created_at,
        "started_at": started,
        "finished_at": finished,
        "duration_ms": duration,
        "created_by": created_by(operation),
        "error": operation.error,
    }


def settle(last_days: int, settings, by=None, now=None) -> dict:
    """Settle the pending picks of matches that kicked off in the last ``last_days`` days."""
    return describe(
        run(
            "settlement-run",
            {"last_days": last_days},
            lambda: settling.run(last_days, settings, now),
            by,
            now,
            settings=settings,
        )
    )


def calibrate(window_days: int, settings, by=None, now=None) -> dict:
    """Score the published probabilities of the last ``window_days`` days."""
    return describe(
        run(
            "calibration-run",
            {"window_days": window_days},
            lambda: calibration_runs.run(window_days, settings, now),
            by,
            now,
        )
    )


def refresh(match_id: int, settings, by=None, now=None) -> dict:
    """Refresh one open match: NotFound and MatchNotOpen are raised before anything is
    recorded; a failure of the work itself is recorded."""
    match = predictions.check_open(match_id)
    return describe(
        run(
            "intelligence-refresh",
            {"match_id": match_id},
            lambda: predictions.refresh(match, settings, now),
            by,
            now,
            settings=settings,
        )
    )


def backfill(settings, rebuild=False, by=None, progress=None, now=None) -> dict:
    """Predict every match walk-forward, make the picks and settle what has finished;
    ``rebuild`` re-predicts the backfilled history with the current model (never a live
    prediction or pick); ``progress(done, total)`` hears of the model's fits."""
    return describe(
        run(
            "model-backfill",
            {"rebuild": rebuild},
            lambda: predictions.backfill(settings, now=now, rebuild=rebuild, progress=progress),
            by,
            now,
            settings=settings,
        )
    )


def update_user(user_id: int, changes: dict, by=None, now=None):
    """Change an account's role, plan or status (``changes``: any of them), recorded as a
    ``user-update`` operation with who asked; the user as changed. NotFound, and LastAdmin for
    a change that would leave no active admin, are raised before anything is recorded; a change
    that fails is recorded, then OperationFailed."""
    user = users.get(user_id)
    users.keep_an_admin(user, role=changes.get("role"), status=changes.get("status"))
    operation = run(
        "user-update",
        {"user_id": user_id, **changes},
        lambda: users.change(user, **changes, now=now),
        by,
        now,
    )
    if operation.status == "failed":
        raise OperationFailed(f"Operation {operation.id} failed: {operation.error}")
    return user  # as the change saved it


def data_sync(source, settings, by=None, now=None, policy=None) -> dict:
    """Sync the live sources (one, or every configured one): CommandError for a source not
    configured, before anything is recorded; a failure of the sync itself is recorded."""
    sync.check_source(source, settings)
    return describe(
        run(
            "data-sync",
            {"source": source},
            lambda: sync.run(settings, now or utcnow(), source, policy),
            by,
            now,
            atomic=False,
        )
    )


def data_bootstrap(seasons, settings, by=None, now=None, policy=None, progress=None) -> dict:
    """The first day: the current and ``seasons`` earlier seasons of the configured leagues
    through the sync, then the backfill (``services.feeds.bootstrap``). SourceNotConfigured
    without football-data, before anything is recorded; a failure of the work is recorded."""
    sync.check_source("football-data", settings)
    return describe(
        run(
            "data-bootstrap",
            {"seasons": seasons},
            lambda: bootstrap.run(settings, now or utcnow(), seasons, policy, progress),
            by,
            now,
            atomic=False,
        )
    )


def resolve_contradiction(contradiction_id: int, value: str, by=None, operator=None, now=None):
    """Resolve an open contradiction with ``value`` (``stored``, ``source`` or a score), recorded
    as a ``contradiction-resolve`` operation naming who chose: ``by`` (a user, the API) or
    ``operator`` (a name, the CLI). NotFound, ContradictionNotOpen and SettledResultProtected
    are raised before anything is recorded; a resolution that fails is recorded, then
    OperationFailed. Returns the contradiction as resolved, with the operation's id."""
    contradictions.choose(contradiction_id, value)
    who = f"user:{by.id}" if by is not None else f"cli:{operator or 'unknown'}"
    now = now or utcnow()
    operation = run(
        "contradiction-resolve",
        {"contradiction_id": contradiction_id, "value": value, "by": who},
        lambda: contradictions.resolve(contradiction_id, value, who, now),
        by,
        now,
    )
    if operation.status == "failed":
        raise OperationFailed(f"Operation {operation.id} failed: {operation.error}")
    return {**contradictions.get(contradiction_id), "operation_id": operation.id}


def get(operation_id: int, settings, now=None) -> dict:
    """The operation's record, or NotFound (see :func:`_current`)."""
    return describe(_current(operation_id, settings, now or utcnow()))


def _current(operation_id: int, settings, now) -> Operation:
    """The operation record, or NotFound. One left running by a process that died is marked
    failed once it is older than ``OPERATION_STALE_SECONDS``, so none stays running forever."""
    operation = Operation.get_or_raise(operation_id, "Operation")
    if operation.status in UNFINISHED:
        limit = timedelta(seconds=settings["OPERATION_STALE_SECONDS"])
        since = operation.started_at or operation.created_at
        if now - since > limit:
            Operation.update(
                status="failed",
                error=f"interrupted: still {operation.status} after {int(limit.total_seconds())} s",
                finished_at=now,
            ).where((Operation.id == operation.id) & Operation.status.in_(UNFINISHED)).execute()
            operation = Operation.get_by_id(operation.id)
    return operation


def result(operation_id: int, settings, now=None) -> tuple[str, dict]:
    """``(kind, result)`` of a succeeded operation; 409 while it runs or when it failed."""
    operation = _current(operation_id, settings, now or utcnow())
    if operation.status in UNFINISHED:
        raise OperationNotFinished(f"Operation {operation_id} is still {operation.status}.")
    if operation.status == "failed":
        raise OperationFailed(f"Operation {operation_id} failed: {operation.error}")
    return operation.kind, RESULT_SCHEMAS[operation.kind]().load(operation.result)
