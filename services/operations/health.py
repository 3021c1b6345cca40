"""Health of what the service depends on: database, rate-limit storage, fresh results, a
worker running the schedule, and each configured live source."""

import threading
import time
from datetime import timedelta
from importlib.metadata import version

from peewee import SQL, DatabaseError, InterfaceError

from clock import utcnow
from models import Operation, WorkerBeat
from services.feeds import contradictions, kickoffs, names, sources
from services.feeds.sources import credits
from services.operations import lease
from services.record import witnesses
from store.database import db, open_database

#: The operation kinds whose recency the health report watches → their maximum-age setting.
FRESHNESS = {
    "settlement-run": ("settlement", "SETTLEMENT_MAX_AGE_HOURS"),
    "calibration-run": ("calibration", "CALIBRATION_MAX_AGE_HOURS"),
}


def _timed(check):
    """A check's status, detail, latency and fields of its own (a live source's standing)."""
    started = time.perf_counter()
    status, detail, *more = check()
    return status, detail, round((time.perf_counter() - started) * 1000, 2), *more


def _database():
    try:
        db.execute(SQL("SELECT 1")).fetchone()
    except (DatabaseError, InterfaceError) as exc:
        return "down", f"{type(exc).__name__}: {exc}".strip()
    return "ok", type(db.obj).__name__


def _freshness(kind, setting, settings, now):
    last = (
        Operation.select(Operation.finished_at)
        .where((Operation.kind == kind) & (Operation.status == "succeeded"))
        .order_by(Operation.finished_at.desc())
        .first()
    )
    if last is None:
        return "degraded", f"no {kind} has succeeded yet"
    age = now - last.finished_at
    hours = settings[setting]
    word = "ok" if age <= timedelta(hours=hours) else "degraded"
    return (
        word,
        f"last succeeded {counted(int(age.total_seconds() // 60), 'minute')} ago (limit {hours} h)",
    )


def counted(count: int, noun: str) -> str:
    """``1 minute``, ``2 minutes``, ``0 minutes``: a count with its noun in the right number."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _worker(settings, now):
    beat = WorkerBeat.get_or_none(WorkerBeat.id == 1)
    if beat is None:
        return "degraded", "no worker has run the schedule yet"
    age = int((now - beat.beat_at).total_seconds())
    limit = settings["WORKER_MAX_SILENCE_SECONDS"]
    if age < -limit:  # a worker's clock ahead of ours could keep a dead worker "ok"
        return "degraded", f"a worker's last beat is dated {-age} s ahead of this clock"
    age = max(0, age)
    word = "ok" if age <= limit else "degraded"
    detail = f"a worker last ran the schedule {age} s ago (limit {limit} s)"
    held = lease.current(lease.SCHEDULER)
    if held is not None:  # which of several workers schedules (see docs/operations.md)
        detail += f"; {held['holder']} holds the scheduler's lease (token {held['token']})"
    return word, detail


def _source(source, settings, now):
    """A live source: its last success against ``SOURCE_MAX_AGE_HOURS``, its last error, its
    credits (with the month's projection), the team names it gave that map to no team and its
    open contradictions; ``failing`` while its last attempt failed (no success since)."""
    row = credits.state(source)
    limit = timedelta(hours=settings["SOURCE_MAX_AGE_HOURS"])
    parts, word = [], "ok"
    if row.last_success_at is None:
        word = "degraded"
        parts.append("no sync has succeeded yet")
    else:
        age = now - row.last_success_at
        if age > limit:
            word = "degraded"
        parts.append(
            f"last success {counted(int(age.total_seconds() // 60), 'minute')} ago "
            f"(limit {settings['SOURCE_MAX_AGE_HOURS']} h)"
        )
    failing = row.last_error_at is not None and (
        row.last_success_at is None or row.last_error_at >= row.last_success_at
    )
    if row.last_error_at is not None:
        minutes = int((now - row.last_error_at).total_seconds() // 60)
        parts.append(f"last error {counted(minutes, 'minute')} ago: {row.last_error[:300]}")
    if source == "the-odds-api":
        budget = settings["ODDS_API_MONTHLY_CREDITS"]
        spent = credits.spent_this_month(row, now)
        projected = _projection(spent, now)
        left = "unknown" if row.credits_remaining is None else row.credits_remaining
        parts.append(
            f"credits: {spent} of {budget} spent this month, {left} left on the account, "
            f"{projected} projected by the month's end"
        )
        if projected > budget:
            parts.append("the budget stops the calls before then")
    if row.backoff_until is not None and row.backoff_until > now:
        word = "degraded"
        parts.append(f"asked to wait until {row.backoff_until.isoformat()}")
    unmatched = len(names.unmatched(source))
    if unmatched:
        word = "degraded"
        parts.append(f"{counted(unmatched, 'team name')} unmatched (flask data teams)")
    disputed, oldest = contradictions.open_for(source)
    if disputed:
        word = "degraded"
        parts.append(_disputed(disputed, oldest))
    kickoffs_disputed = [row for row in kickoffs.disagreements() if source in row["reports"]]
    if kickoffs_disputed:
        word = "degraded"
        parts.append(_kickoffs_disputed(source, kickoffs_disputed))
    standing = {
        "last_success_at": row.last_success_at,
        "last_error_at": row.last_error_at,
        "last_error": row.last_error,
    }
    return ("failing" if failing else word), "; ".join(parts), standing


def _witnesses(settings, now):
    """Each witness's last cosigned size and how long ago it was asked it, and its latest
    answer's error; ``degraded`` while one has cosigned nothing or last refused."""
    parts, word = [], "ok"
    for row in witnesses.standing(settings, now):
        if row["size"] is None:
            word = "degraded"
            text = f"{row['name']}: nothing cosigned yet"
        else:
            minutes = counted(row["age_seconds"] // 60, "minute")
            text = f"{row['name']}: cosigned size {row['size']} {minutes} ago"
        if row["error"] is not None:
            word = "degraded"
            text += f", then answered: {row['error'][:300]}"
        parts.append(text)
    return word, "; ".join(parts)


def _disputed(count: int, oldest: list[dict]) -> str:
    """The open contradictions of a source: how many, and the oldest few."""
    listed = ", ".join(
        f"#{row['id']} {row['match']} {row['field']}: {row['stored_value']} stored, "
        f"{row['source_value']} from this source since {row['opened_at'].isoformat()}, "
        f"{counted(row['picks_held'], 'pick')} held"
        for row in oldest
    )
    return (
        f"{counted(count, 'open contradiction')} holding settlement "
        f"(flask data contradictions; GET /api/v1/ops/contradictions): {listed}"
    )


def _kickoffs_disputed(source: str, rows: list[dict], listed: int = 3) -> str:
    """The kick-offs the sources disagree on: how many, and the first few with this source's
    and the governing ones."""
    shown = ", ".join(
        f"match {row['match_id']}: {row['reports'][source][0].isoformat()} from this source, "
        f"picks until {row['kickoff_at'].isoformat()}, sealed until {row['unlock_at'].isoformat()}"
        for row in rows[:listed]
    )
    return (
        f"{counted(len(rows), 'kick-off')} disputed between the sources (the earliest governs "
        f"picks and the live rule, the latest the unlock, until they agree): {shown}"
    )


def _projection(spent: int, now) -> int:
    """Credits spent by the month's end at this month's pace so far."""
    elapsed = (now.day - 1) + now.hour / 24 + now.minute / 1440
    return spent if elapsed <= 0 else round(spent * credits.days_in_month(now) / elapsed)


def report(settings, rate_limit_storage, uptime_seconds: float, now=None) -> dict:
    """Each dependency's status and latency, and the overall status: ok, degraded or down.

    ``rate_limit_storage()`` answers ``(status, detail)`` of the rate-limit storage, which the
    web layer owns; ``uptime_seconds`` is the serving process's.
    """
    now = now or utcnow()
    services = []
    checks = [("database", _database), ("rate-limit-storage", rate_limit_storage)]
    checks += [
        (name, lambda kind=kind, setting=setting: _freshness(kind, setting, settings, now))
        for kind, (name, setting) in FRESHNESS.items()
    ]
    checks.append(("worker", lambda: _worker(settings, now)))
    if settings.get("LEDGER_WITNESSES"):
        checks.append(("witnesses", lambda: _witnesses(settings, now)))
    checks += [
        (source, lambda source=source: _source(source, settings, now))
        for source in sources.configured(settings)
    ]
    for name, check in checks:
        status, detail, latency, *more = _timed(check)
        entry = {"name": name, "status": status, "latency_ms": latency, "detail": detail}
        services.append({**entry, **(more[0] if more else {})})
        if name == "database" and status == "down":
            break  # the freshness and worker checks need the database
    statuses = {service["name"]: service["status"] for service in services}
    if statuses["database"] == "down":
        overall = "down"
    elif all(status == "ok" for status in statuses.values()):
        overall = "ok"
    else:
        overall = "degraded"
    return {
        "status": overall,
        "services": services,
        "version": version("sports-pick-service"),
        "uptime_seconds": round(uptime_seconds, 1),
    }


def database_answers(settings) -> bool:
    """Whether a new connection to the database answers a trivial query within the configured
    timeouts. A new one, not the pool's: a pooled connection may predate a restart, and the
    question is whether the service can reach the database now."""
    database = open_database(
        settings["DATABASE_URL"],
        pooled=False,
        connect_timeout=settings["DATABASE_CONNECT_TIMEOUT"],
        statement_timeout=settings["DATABASE_STATEMENT_TIMEOUT"],
    )
    try:
        database.connect()
        database.execute_sql("SELECT 1").fetchone()
    except (DatabaseError, InterfaceError):
        return False
    finally:
        database.close()
    return True


class Readiness:
    """The readiness verdict of one process, probed at most once per ``seconds`` of the clock
    it is given: a probe opens a new connection, so probes looped by many clients (a load
    balancer's, a platform's, an attacker's) would otherwise open one each. One caller probes
    at a time; meanwhile the others answer the last verdict (or, before the first one, wait for
    it) rather than queueing behind a slow database or opening connections of their own."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self._lock = threading.Lock()
        self._verdict = None
        self._probed_at = None
        self._probes = 0

    def ready(self, settings, clock) -> bool:
        """Whether the database answers: the last verdict when it is younger than the interval
        at ``clock()``, else a new probe (:func:`database_answers`), its verdict dated when it
        ends (a probe may take the whole connect timeout)."""
        seen = self._probes
        if not self._lock.acquire(blocking=self._verdict is None):
            return self._verdict  # a probe is under way: the last verdict until it ends
        try:
            if self._probes != seen or self._fresh(clock()):
                return self._verdict  # a probe ended while this caller waited, or is recent
            self._verdict = database_answers(settings)
            self._probed_at = clock()
            self._probes += 1
            return self._verdict
        finally:
            self._lock.release()

    def _fresh(self, now) -> bool:
        return self._probed_at is not None and (
            timedelta(0) <= now - self._probed_at < timedelta(seconds=self.seconds)
        )
