"""A source's credits and standing between syncs: its ``source_state`` row (a pause it asked for,
its last success and error, the credits spent) and the month its credits count in."""

from datetime import date, datetime, timedelta

from models import SourceState


def month_start(now: datetime) -> date:
    """The first day of ``now``'s month: the period credits count in."""
    return now.date().replace(day=1)


def days_in_month(now: datetime) -> int:
    """How many days ``now``'s month has."""
    start = month_start(now)
    return ((start.replace(day=28) + timedelta(days=4)).replace(day=1) - start).days


def state(source: str) -> SourceState:
    """The source's standing row (a blank one before its first sync, not stored)."""
    return SourceState.get_or_none(SourceState.source == source) or SourceState(
        source=source, credits_spent=0
    )


def spent_this_month(row: SourceState, now: datetime) -> int:
    """Credits the service spent on the source in ``now``'s month."""
    return row.credits_spent if row.period == month_start(now) else 0
