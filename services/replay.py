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

Used by ``flask ledger replay`` and the tests; ``services/demo`` can build the demo world's live
history on it.
"""

import dataclasses
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from engine import footballdata
from engine.records import MatchRecord
from models import League, Match
from services import imports, ledger, predictions, settlement
from store.database import db

#: How long after kick-off a match's result and closing prices are known.
PLAYED_AFTER = timedelta(hours=2)
#: How far ahead fixtures are known, and picks made.
HORIZON = timedelta(days=7)
#: How long before kick-off pre-match prices are known (football-data's are collected a day or
#: two before the round).
ODDS_LEAD = timedelta(days=2)


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
    ``flask data import`` reports them)."""
    records = []
    for path in paths:
        text = Path(path).read_bytes().decode("utf-8-sig", errors="replace")
        records.extend(footballdata.parse(text).matches)
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
        status="scheduled" if record.status in ("finished", "live") else record.status,
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
    ``backfill`` predicts every stored match walk-forward first (a replay's first day)."""
    known = [seen for seen in _known(records, now, horizon, odds_lead) if seen is not None]
    return _run_day(known, now, settings, horizon, backfill)


def _known(records, now, horizon, odds_lead) -> list[MatchRecord | None]:
    """``as_known`` of each record at ``now``, aligned with them."""
    return [as_known(record, now, horizon, odds_lead) for record in records]


def _run_day(known, now, settings, horizon, backfill) -> ReplayDay:
    """``run_day`` once what is new that day is known: ``known`` is stored as it is."""
    with db.atomic():
        summary = imports.store(known)
        before = ledger.published_count()
        if backfill:
            predictions.backfill(settings, now=now)
        predicted = _predict_upcoming(now, now + horizon, settings)
        settled = settlement.settle_pending(settings, now=now)
        ledger.checkpoint(now, settings)
        published = ledger.published_count() - before
        size = ledger.size()
    return ReplayDay(
        now=now,
        matches_new=summary.matches_new,
        matches_updated=summary.matches_updated,
        predicted=predicted,
        published=published,
        settled=settled["won"] + settled["lost"] + settled["void"],
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
        fc = predictions.forecast(now, settings, match_ids=match_ids, country=country)
        rows = np.flatnonzero(np.isin(fc.match_id, match_ids))
        predictions.store(fc, rows, now)
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
    day); the first day backfills the history before it. ``progress`` hears of each day."""
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
        day = _run_day(changed, now, settings, horizon, backfill=number == 0)
        before = known
        done.append(day)
        if progress is not None:
            progress(day)
    return done
