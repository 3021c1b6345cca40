"""The monthly Data API quota: per-user counters per calendar month (UTC), counted atomically."""

import functools
from datetime import UTC, datetime

from clock import utcnow
from errors import QuotaExceeded
from models import UsageCounter
from store.database import db

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


def limits_for(user, settings) -> dict[str, int | None]:
    """Each counter's monthly limit for ``user``; None means unlimited (admins)."""
    if user.role == "admin":
        return dict.fromkeys(COUNTERS)
    return {name: settings[key] for name, (key, _) in COUNTERS.items()}


def consume(user, amounts: dict[str, int], settings, now: datetime | None = None) -> None:
    """Add ``amounts`` (counter → amount) to this month's counters, or raise QuotaExceeded
    naming the first counter that would pass its limit and add nothing.

    One statement does the check and the increments (an insert of the month's row, or an update
    of it guarded by every limit), so concurrent requests on any number of processes are never
    lost, double counted or let past a limit.
    """
    now = now or utcnow()
    start, end = period_of(now)
    limits = limits_for(user, settings)
    if any(limits[name] is not None and amount > limits[name] for name, amount in amounts.items()):
        raise _exceeded(user, amounts, limits, start, end, now)  # more than a whole month holds
    guarded = tuple(counter for counter in amounts if limits[counter] is not None)
    params = [
        user.id,
        UsageCounter.period.db_value(start.date()),
        *(amounts.get(counter, 0) for counter in COUNTERS),
        *amounts.values(),
        *(value for counter in guarded for value in (amounts[counter], limits[counter])),
    ]
    cursor = db.execute_sql(_upsert(tuple(amounts), guarded, db.param), params)
    if cursor.rowcount == 0:
        raise _exceeded(user, amounts, limits, start, end, now)


@functools.cache
def _upsert(counters: tuple[str, ...], guarded: tuple[str, ...], param: str) -> str:
    """The one statement of :func:`consume` adding to ``counters`` only while each of
    ``guarded`` stays within its limit: written once per shape (building it with Peewee at every
    request cost more than running it). Its parameters: the user, the month, a value for every
    counter, each amount added, then (amount, limit) for each guarded counter."""
    table = UsageCounter._meta.table_name
    columns = ", ".join(f'"{name}"' for name in ("user_id", "period", *COUNTERS))
    values = ", ".join([param] * (2 + len(COUNTERS)))
    added = ", ".join(f'"{name}" = ("{table}"."{name}" + {param})' for name in counters)
    sql = (
        f'INSERT INTO "{table}" ({columns}) VALUES ({values}) '
        f'ON CONFLICT ("user_id", "period") DO UPDATE SET {added}'
    )
    if guarded:
        within = " AND ".join(f'(("{table}"."{name}" + {param}) <= {param})' for name in guarded)
        sql += f" WHERE {within}"
    return sql


def _exceeded(user, amounts, limits, start, end, now) -> QuotaExceeded:
    """The 429 for the first counter of ``amounts`` that has no room left for its amount."""
    row = UsageCounter.get_or_none(
        (UsageCounter.user == user) & (UsageCounter.period == start.date())
    )
    for counter, amount in amounts.items():
        limit = limits[counter]
        remaining = None if limit is None else max(0, limit - (getattr(row, counter) if row else 0))
        if remaining is not None and amount > remaining:
            break
    return QuotaExceeded(
        COUNTERS[counter][1], retry_after=(end - now).total_seconds(), remaining=remaining
    )


def consume_request(user, settings, now: datetime | None = None) -> None:
    """Count one Data API request."""
    consume(user, {"requests": 1}, settings, now)


def check_request(user, settings, now: datetime | None = None) -> None:
    """QuotaExceeded when :func:`consume_request` would refuse a request now; counts nothing
    (a ``HEAD``, which sends no data, answers with the status its ``GET`` would have)."""
    now = now or utcnow()
    start, end = period_of(now)
    limits = limits_for(user, settings)
    limit = limits["requests"]
    if limit is not None and _used(user, start)[0] >= limit:
        raise _exceeded(user, {"requests": 1}, limits, start, end, now)


def usage(user, settings, now: datetime | None = None) -> dict:
    """Where ``user`` stands this month: each counter's used/limit/remaining and the state."""
    now = now or utcnow()
    start, end = period_of(now)
    used_this_month = dict(zip(COUNTERS, _used(user, start), strict=True))
    limits = limits_for(user, settings)
    ratio = settings["QUOTA_WARNING_RATIO"]
    counters, state = {}, "ok"
    for name, limit in limits.items():
        used = used_this_month[name]
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


def usage_version(user, now: datetime) -> tuple:
    """What :func:`usage` answers from besides the settings: the month, the user's role and plan
    (their limits) and their counters. An answer made from them holds while they do."""
    start, _ = period_of(now)
    return start, user.role, user.plan, _used(user, start)


def _used(user, start: datetime) -> tuple[int, ...]:
    """What ``user`` used of each counter (in :data:`COUNTERS` order) in the month ``start``."""
    row = UsageCounter.one_where(user=user.id, period=start.date())
    return tuple(getattr(row, name) if row else 0 for name in COUNTERS)
