"""Replaying a history day by day with a moving clock: the live record the service would have
published had it run then.

Given match records from any source (football-data files, the demo world) and a start, each
day of the replay does what the running service does on that day, with ``now`` set to it:

1. **import what was known that day** (:func:`as_known`): finished matches with their results
   and closing prices, fixtures of the coming ``horizon`` without them, and pre-match prices
   only from ``odds_lead`` before kick-off;
2. **predict the upcoming matches live** (kick-off within the horizon, one forecast per
   country group, as a refresh does): new picks are live and enter the ledger before kick-off;
3. **settle** what has finished, appending the outcomes of live picks to the ledger;
4. **sign one checkpoint** of the ledger at ``now``.

Each day is one transaction. The first day also backfills the history before it walk-forward
(backfilled picks, never in the ledger), as a service starting that day with that history
would. Running a replay twice over the same days changes nothing more.

A replay's clock never runs back over what the database holds (:func:`recorded_until`): a day
before a stored ledger entry, before a prediction or pick of a match still to kick off that day,
or before a stored result was known, would predict as live what was already predicted or played,
and append to the append-only ledger picks dated before what it already signed. So a replay
runs in a database of its own (older imported history aside), goes on with its own from its
last day or later, and is refused anything earlier. Its days are those a football-data file
may hold, 1900-01-01 to 2099-12-31.

Used by ``flask ledger replay`` and the tests; :mod:`services.operations.demo_world` builds the
demo world's live history on it.
"""

import dataclasses
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from pathlib import Path

import numpy as np
from peewee import Case, fn

from engine.records import MatchRecord
from enums import KICKED_OFF_STATUSES
from errors import CommandError
from models import (
    League,
    LedgerCheckpoint,
    LedgerEntry,
    Match,
    MatchIntelligence,
    Pick,
    Prediction,
)
from services.feeds import imports
from services.feeds.formats import footballdata, text
from services.forecasting import forecast, predictions, publication
from services.record import log_reading, publishing, settling

#: How long after kick-off a match's result and closing prices are known.
PLAYED_AFTER = timedelta(hours=2)
#: How far ahead fixtures are known, and picks made.
HORIZON = timedelta(days=7)
#: How long before kick-off pre-match prices are known (football-data's are collected a day or
#: two before the round).
ODDS_LEAD = timedelta(days=2)
#: The days a replay may run on: those a football-data file may hold (four-digit years, as the
#: ledger writes its instants, far from the ends of the calendar a day's horizon could pass).
FIRST_DAY = datetime.combine(footballdata.EARLIEST_DATE, time(), UTC)
#: The first instant after the last day a replay may run on.
AFTER_LAST_DAY = datetime.combine(footballdata.LATEST_DATE + timedelta(days=1), time(), UTC)


@dataclass(frozen=True)
class ReplayDay:
    """What one day of a replay did."""

    now: datetime
    matches_new: int
    matches_updated: int
    predicted: int  # upcoming matches predicted live
    published: int  # live picks entered in the ledger
    settled: int  # picks settled or voided (live and backfilled)
    ledger_size: int  # entries after the day's checkpoint


def read_files(paths) -> list[MatchRecord]:
    """The match records of football-data CSV files (rows that cannot be read are left out:
    ``flask data import`` reports them; a file no encoding reads is an ``UnreadableText``)."""
    records = []
    for path in paths:
        decoded = text.decode(Path(path).read_bytes())  # as the import reads it: never replaced
        records.extend(footballdata.parse(decoded.text).matches)
    return records


def as_known(
    record: MatchRecord,
    now: datetime,
    horizon: timedelta = HORIZON,
    odds_lead: timedelta = ODDS_LEAD,
    played_after: timedelta = PLAYED_AFTER,
) -> MatchRecord | None:
    """What was known of ``record`` at ``now``: everything once it has been played; before,
    the fixture (from ``horizon`` ahead) with its pre-match prices (from ``odds_lead`` ahead)
    and no result or closing price; None before the fixture is known."""
    if record.kickoff_at + played_after <= now:
        return record
    if record.kickoff_at - horizon > now:
        return None
    quotes = []
    if record.kickoff_at - odds_lead <= now:
        quotes = [quote for quote in record.odds if not quote.is_closing]
    return dataclasses.replace(
        record,
        status="scheduled" if record.status in KICKED_OFF_STATUSES else record.status,
        home_goals=None,
        away_goals=None,
        ht_home_goals=None,
        ht_away_goals=None,
        odds=quotes,
    )


def run_day(
    records: Iterable[MatchRecord],
    now: datetime,
    settings,
    *,
    horizon: timedelta = HORIZON,
    odds_lead: timedelta = ODDS_LEAD,
    backfill: bool = False,
) -> ReplayDay:
    """One day of a replay at ``now`` (see the module's docstring), in one transaction;
    ``backfill`` predicts every stored match walk-forward first (a replay's first day).
    CommandError (nothing written) for a day outside 1900–2099 or before what the database
    holds (see :func:`recorded_until`)."""
    _check_days(now, 1)
    known = [seen for seen in _known(records, now, horizon, odds_lead) if seen is not None]
    return _run_day(known, now, settings, horizon, backfill, check_clock=True)


def _known(records, now, horizon, odds_lead) -> list[MatchRecord | None]:
    """``as_known`` of each record at ``now``, aligned with them."""
    return [as_known(record, now, horizon, odds_lead) for record in records]


def _run_day(known, now, settings, horizon, backfill, check_clock) -> ReplayDay:
    """``run_day`` once what is new that day is known: ``known`` is stored as it is;
    ``check_clock``: first refuse a day before what the database holds (a replay's later days
    follow what its first wrote, never before it)."""
    with publishing.publish(settings, now):
        if check_clock:
            _check_clock(now)
        summary = imports.store_records(known, now)
        before = log_reading.published_count()
        if backfill:
            predictions.backfill(settings, now=now)
        predicted = _predict_upcoming(now, now + horizon, settings)
        settled = settling.settle_pending(settings, now=now)
        # Read as the day's checkpoint, signed at the end of the unit, leaves them: it appends
        # no entry, and the day's appends hold the ledger's lock until the commit.
        published = log_reading.published_count() - before
        size = log_reading.size()
    return ReplayDay(
        now=now,
        matches_new=summary.matches_new,
        matches_updated=summary.matches_updated,
        predicted=predicted,
        published=published,
        settled=settling.settled_count(settled),
        ledger_size=size,
    )


def _predict_upcoming(now: datetime, until: datetime, settings) -> int:
    """Predict live every match kicking off in ``(now, until]``, one forecast per country
    (fitting only what those matches need); returns how many."""
    groups = defaultdict(list)
    query = (
        Match.select(Match.id, League.country)
        .join(League)
        .where((Match.kickoff_at > now) & (Match.kickoff_at <= until))
        .where(Match.status.in_(("scheduled", "postponed")))
        .order_by(Match.kickoff_at, Match.id)
    )
    for match_id, country in query.tuples():
        groups[country].append(match_id)
    predicted = 0
    for country, match_ids in sorted(groups.items()):
        group_forecast = forecast.forecast(now, settings, match_ids=match_ids, country=country)
        rows = np.flatnonzero(np.isin(group_forecast.match_id, match_ids))
        publication.write_forecast(group_forecast, rows, now, settings)
        predicted += len(rows)
    return predicted


def replay(
    records: Iterable[MatchRecord],
    start: datetime,
    days: int,
    settings,
    *,
    horizon: timedelta = HORIZON,
    odds_lead: timedelta = ODDS_LEAD,
    progress: Callable[[ReplayDay], None] | None = None,
) -> list[ReplayDay]:
    """Replay ``days`` days from ``start`` (an aware datetime: each day runs at that time of
    day); the first day backfills the history before it. ``progress`` hears of each day.
    CommandError (nothing written) unless every day lies in 1900–2099 and the first is not
    before what the database holds (see :func:`recorded_until`)."""
    _check_days(start, days)
    records = list(records)
    done = []
    # Each day stores only what changed since the day before (a new fixture, its prices, its
    # result): storing a record again as it is changes nothing, and costs a read of its odds.
    before: list[MatchRecord | None] = [None] * len(records)
    for number in range(days):
        now = start + timedelta(days=number)
        known = _known(records, now, horizon, odds_lead)
        changed = [
            seen
            for seen, old in zip(known, before, strict=True)
            if seen is not None and seen != old
        ]
        first = number == 0
        day = _run_day(changed, now, settings, horizon, backfill=first, check_clock=first)
        before = known
        done.append(day)
        if progress is not None:
            progress(day)
    return done


def recorded_until() -> tuple[datetime, str] | None:
    """The earliest instant a replay may run at over what the database holds, and what sets it
    (None when any instant will do): the latest of

    - a ledger entry appended or a checkpoint signed (the log only grows forward in time);
    - a prediction, pick or match intelligence made, or its match's kick-off if it was made
      after it (a day before both would make it again, earlier, and live);
    - a match stored as played or in play (``PLAYED_AFTER`` after its kick-off: a day before
      then would take it as still to play).

    What the replay itself stores on a day is never later than that day, so a replay may go on
    from its last day, or later."""
    found = [
        (LedgerEntry.select(fn.MAX(LedgerEntry.created_at)).scalar(), "a ledger entry"),
        (
            LedgerCheckpoint.select(fn.MAX(LedgerCheckpoint.published_at)).scalar(),
            "a ledger checkpoint",
        ),
    ]
    for model, made, what in (
        (Prediction, Prediction.made_at, "a prediction"),
        (Pick, Pick.created_at, "a pick"),
        (MatchIntelligence, MatchIntelligence.updated_at, "match intelligence"),
    ):
        earlier = Case(None, [(Match.kickoff_at < made, Match.kickoff_at)], made)
        query = model.select(fn.MAX(earlier).python_value(made.python_value)).join(Match)
        found.append((query.scalar(), what))  # aware: the fields' own conversion
    played = Match.select(fn.MAX(Match.kickoff_at)).where(Match.status.in_(KICKED_OFF_STATUSES))
    kickoff = played.scalar()
    found.append((kickoff + PLAYED_AFTER if kickoff is not None else None, "a result"))
    found = [(moment, what) for moment, what in found if moment is not None]
    return max(found, key=lambda item: item[0]) if found else None


def _check_clock(now: datetime) -> None:
    """CommandError if a replay's day at ``now`` would be earlier than what is stored."""
    recorded = recorded_until()
    if recorded is None or now >= recorded[0]:
        return
    until, what = recorded
    raise CommandError(
        f"cannot replay from {_shown(now)}: the database already holds records up to "
        f"{_shown(until)} ({what}), and a replay never runs its clock back over what is stored; "
        f"start at {_shown(until)} or later, or replay into a database of its own"
    )


def _check_days(start: datetime, days: int) -> None:
    """CommandError unless each of ``days`` days from ``start`` lies in the years a replay
    may run on."""
    if FIRST_DAY <= start < AFTER_LAST_DAY and AFTER_LAST_DAY - start > timedelta(days=days - 1):
        return
    last = AFTER_LAST_DAY - timedelta(days=1)
    raise CommandError(
        f"cannot replay {days} day{'s' if days != 1 else ''} from {_shown(start)}: a replay runs "
        f"on the days a football-data file may hold, {FIRST_DAY:%Y-%m-%d} to {last:%Y-%m-%d} (UTC)"
    )


def _shown(moment: datetime) -> str:
    """An instant as ``YYYY-MM-DDTHH:MM:SS UTC``, with four digits of year at any year."""
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="seconds") + " UTC"
