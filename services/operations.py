"""Operations: long-running jobs (refresh, settlement, calibration) recorded with their outcome.

Each run is a row: created queued, marked running, then succeeded with its result or failed with
its error. The work runs in its own transaction, so a failure rolls the work back but the record
of the failure stays.
"""

import logging
import time
from datetime import UTC, datetime

from errors import OperationFailed, OperationNotFinished
from models import Operation, db

log = logging.getLogger("picks.operations")


def run(kind: str, params: dict, work, created_by=None) -> Operation:
    """Record and run ``work()`` as an operation of ``kind``; returns the finished record."""
    operation = Operation.create(kind=kind, status="queued", params=params, created_by=created_by)
    operation.status, operation.started_at = "running", datetime.now(UTC)
    operation.save()
    started = time.perf_counter()
    try:
        with db.atomic():
            result = work()
    except Exception as exc:  # an operation records every failure (and its trace), never loses it
        log.exception("operation %s (%s) failed", operation.id, kind)
        operation.status, operation.error = "failed", f"{type(exc).__name__}: {exc}"
    else:
        operation.status, operation.result = "succeeded", result
    operation.finished_at = datetime.now(UTC)
    operation.save()
    log.info(
        "operation %s %s %s in %.0f ms",
        operation.id,
        kind,
        operation.status,
        (time.perf_counter() - started) * 1000,
    )
    return operation


def get(operation_id: int) -> Operation:
    """The operation record, or NotFound."""
    return Operation.get_or_raise(operation_id, "Operation")


def result(operation_id: int):
    """The stored result of a succeeded operation; 409 while it runs or when it failed."""
    operation = get(operation_id)
    if operation.status in ("queued", "running"):
        raise OperationNotFinished(f"Operation {operation_id} is still {operation.status}.")
    if operation.status == "failed":
        raise OperationFailed(f"Operation {operation_id} failed: {operation.error}")
    return operation.result
