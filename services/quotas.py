"""The monthly Data API quota: per-user counters per calendar month (UTC), counted atomically."""

from datetime import UTC, datetime

from flask import current_app

from errors import QuotaExceeded
from models import UsageCounter, utcnow

#: Counter → (the configuration key of a Pro user's monthly limit, the words for a 429).
COUNTERS = {
    "requests": ("QUOTA_PRO_REQUESTS", "request"),
    "exports": ("QUOTA_PRO_EXPORTS", "export"),
    "export_rows": ("QUOTA_PRO_EXPORT_ROWS", "exported-row"),
}


def period_of(now: datetime) -> tuple[datetime, datetime]:
    """The calendar month (UTC) holding ``now``: its first instant and the next month's."""
    start = datetime(now.year, now.month, 1, tzinfo=UTC)
    end = datetime(now.year + now.month // 12, now.month % 12 + 1, 1, tzinfo=UTC)
    return start, end


def limits_for(user) -> dict[str, int | None]:
    """Each counter's monthly limit for ``user``; None means unlimited (admins)."""
    if user.role == "admin":
        return dict.fromkeys(COUNTERS)
    return {name: current_app.config[key] for name, (key, _) in COUNTERS.items()}


def consume(user, counter: str, amount: int = 1, now: datetime | None = None) -> None:
    """Add ``amount`` to this month's ``counter``, or raise QuotaExceeded and add nothing.

    One conditional UPDATE does the check and the increment, so concurrent requests on any
    number of processes are never lost, double counted or let past the limit.
    """
    now = now or utcnow()
    start, end = period_of(now)
    limit = limits_for(user)[counter]
    UsageCounter.insert(user=user, period=start.date()).on_conflict_ignore().execute()
    column = getattr(UsageCounter, counter)
    query = UsageCounter.update({column: column + amount}).where(
        (UsageCounter.user == user) & (UsageCounter.period == start.date())
    )
    if limit is not None:
        query = query.where(column + amount <= limit)
    if query.execute() == 0:
        raise QuotaExceeded(COUNTERS[counter][1], retry_after=(end - now).total_seconds())


def consume_request(user) -> None:
    """Count one Data API request."""
    consume(user, "requests")


def usage(user, now: datetime | None = None) -> dict:
    """Where ``user`` stands this month: each counter's used/limit/remaining and the state."""
    now = now or utcnow()
    start, end = period_of(now)
    row = UsageCounter.get_or_none(
        (UsageCounter.user == user) & (UsageCounter.period == start.date())
    )
    limits = limits_for(user)
    ratio = current_app.config["QUOTA_WARNING_RATIO"]
    counters, state = {}, "ok"
    for name, limit in limits.items():
        used = getattr(row, name) if row else 0
        remaining = None if limit is None else max(0, limit - used)
        counters[name] = {"used": used, "limit": limit, "remaining": remaining}
        if limit is not None and used >= limit:
            state = "exceeded"
        elif limit is not None and used >= ratio * limit and state == "ok":
            state = "warning"
    return {
        "period": {"start": start, "end": end},
        "plan": user.plan,
        **counters,
        "state": state,
        "resets_at": end,
    }
