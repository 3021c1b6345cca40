"""The scheduler's lease: which one worker process enqueues the periodic jobs, however many run.

A lease is a row of ``scheduler_lease``: its ``holder`` (a process: host, pid and a random
part), until when it holds it (``expires_at``) and a fencing ``token``. Every worker calls
:func:`hold` each few seconds: its holder renews the expiry; once the expiry has passed unrenewed
(its holder died, or stalled), the next caller takes the lease and the token grows by one. So
at most one process holds a lease at any instant of the clock that both read, and a holder that
dies is replaced within ``seconds`` and one call's interval.

A holder that stalls past its expiry (a paused process, a lost network) may wake up believing
it still leads. :func:`fence` is what stops it: called in the transaction that records what the
holder decided, it refuses (:class:`LeaseLost`) unless the lease's token is still the one the
holder was given, and it locks the lease's row until that transaction ends, so a takeover waits
for a write in progress and a write never follows a takeover. The lease lives in the database,
beside the rows it guards, so the check and the write are one transaction (a lease in Redis
could not fence a database write).

Times are the callers' clocks (the worker's injected clock): hosts whose clocks disagree by
``d`` seconds shorten or lengthen a lease by ``d``; keep them synchronised (NTP).
"""

from datetime import datetime, timedelta

from peewee import Case

from models import SchedulerLease
from store.database import writing

#: The lease of the worker that enqueues the periodic jobs.
SCHEDULER = "scheduler"

#: Before any holder: a row whose expiry has passed and whose first holder gets token 1.
NOBODY = ""
EPOCH = datetime(1970, 1, 1)


class LeaseLost(Exception):
    """The lease's token is no longer the caller's: another holder took it."""


def hold(name: str, holder: str, now: datetime, seconds: float, vacated=None) -> int | None:
    """Take or renew lease ``name`` for ``holder`` until ``now + seconds``; its fencing token
    while ``holder`` holds it, else None (another holder's lease has not expired, and it is not
    ``vacated``: a holder the caller knows is gone, whose lease it may take at once)."""
    expires = now + timedelta(seconds=seconds)
    with writing():
        SchedulerLease.insert(
            name=name, holder=NOBODY, token=0, acquired_at=EPOCH, expires_at=EPOCH
        ).on_conflict_ignore().execute()
        mine = SchedulerLease.holder == holder
        # One conditional UPDATE: on PostgreSQL it waits for the row's lock (a fenced write in
        # progress) and tests the condition again on the row as committed; SQLite has one writer.
        taken = (
            SchedulerLease.update(
                holder=holder,
                token=Case(None, [(mine, SchedulerLease.token)], SchedulerLease.token + 1),
                acquired_at=Case(None, [(mine, SchedulerLease.acquired_at)], now),
                expires_at=expires,
            )
            .where(
                (SchedulerLease.name == name)
                & (mine | (SchedulerLease.expires_at <= now) | (SchedulerLease.holder == vacated))
            )
            .execute()
        )
        if not taken:
            return None
        return (
            SchedulerLease.select(SchedulerLease.token).where(SchedulerLease.name == name).scalar()
        )


def fence(name: str, token: int) -> None:
    """LeaseLost unless lease ``name`` still carries ``token``; call it first in the transaction
    that records what its holder decided: the lease's row stays locked until that transaction
    ends, so no takeover comes between the check and the write."""
    held = (
        SchedulerLease.update(token=SchedulerLease.token)
        .where((SchedulerLease.name == name) & (SchedulerLease.token == token))
        .execute()
    )
    if not held:
        raise LeaseLost(f"the {name} lease is no longer held with token {token}")


def release(name: str, holder: str, now: datetime) -> bool:
    """Give lease ``name`` up at ``now`` if ``holder`` holds it (a worker that stops), so the
    next worker takes it at once rather than after its expiry; whether it was held."""
    with writing():
        return bool(
            SchedulerLease.update(expires_at=now)
            .where((SchedulerLease.name == name) & (SchedulerLease.holder == holder))
            .execute()
        )


def current(name: str) -> dict | None:
    """Who holds lease ``name`` (holder, token, since, until), or None before any holder."""
    row = SchedulerLease.get_or_none(
        (SchedulerLease.name == name) & (SchedulerLease.holder != NOBODY)
    )
    if row is None:
        return None
    return {
        "holder": row.holder,
        "token": row.token,
        "acquired_at": row.acquired_at,
        "expires_at": row.expires_at,
    }
