"""Kick-offs from two sources: each live source's latest report of a match's kick-off, and the
side each promise takes while they disagree.

Each source's kick-off for a match is kept as that source's report (``KickoffReport``: one row
per match and source, written only when the source's kick-off changes). A match's governing
kick-offs follow from its reports:

- ``Match.kickoff_at`` is the **earliest** kick-off a source reports: it governs the pick
  cut-off (no prediction or pick is made, no price taken into one, from that instant) and the
  live rule (a pick is live only if made and signed before it). A source moving its kick-off
  later cannot make an in-play pick, nor make one live, while another source says earlier.
- ``Match.unlock_at`` is the **latest** kick-off a source reports, while it differs from the
  earliest (null while the sources agree): a locked match opens only then, so a source's
  kick-off in the past never unlocks a match another source says has not started.

A disagreement lasts until the sources report the same kick-off again (or a source-less
import, ``data import``, sets the kick-off outright). :func:`disagreements` lists them.
"""

from collections import defaultdict
from datetime import datetime

from peewee import EXCLUDED

from models import KickoffReport, Match

#: Matches per query (SQLite takes at most 32,766 parameters).
CHUNK = 500


def report(source: str, kickoffs: dict[int, datetime], now) -> dict[int, tuple]:
    """Store the kick-off ``source`` reports for each match of ``kickoffs`` (``{match_id:
    kickoff_at}``; the caller owns the transaction), writing only what changed, and return
    each match's earliest and latest kick-off over every source's report."""
    reports = _reports(kickoffs)
    new, moved = [], []
    for match_id, kickoff_at in kickoffs.items():
        known = reports[match_id].get(source)
        if known is None:
            new.append(
                {
                    "match": match_id,
                    "source": source,
                    "kickoff_at": kickoff_at,
                    "reported_at": now,
                }
            )
        elif known != kickoff_at:
            moved.append((match_id, kickoff_at))
        reports[match_id][source] = kickoff_at
    for start in range(0, len(new), CHUNK):
        KickoffReport.insert_many(new[start : start + CHUNK]).on_conflict(
            conflict_target=[KickoffReport.match, KickoffReport.source],
            update={
                KickoffReport.kickoff_at: EXCLUDED.kickoff_at,
                KickoffReport.reported_at: EXCLUDED.reported_at,
            },
        ).execute()
    for match_id, kickoff_at in moved:
        KickoffReport.update(kickoff_at=kickoff_at, reported_at=now).where(
            (KickoffReport.match == match_id) & (KickoffReport.source == source)
        ).execute()
    return {match_id: span(by_source) for match_id, by_source in reports.items()}


def span(by_source: dict) -> tuple:
    """The earliest and the latest of the kick-offs ``by_source`` reports."""
    values = list(by_source.values())
    return min(values), max(values)


def governing(earliest, latest) -> tuple:
    """``(kickoff_at, unlock_at)`` a match stores for the span of its reports: the earliest,
    and the latest while it differs (None when the sources agree)."""
    return earliest, (latest if latest != earliest else None)


def unlocks_at(kickoff_at, unlock_at):
    """When a match stored with ``kickoff_at`` and ``unlock_at`` opens its locked picks."""
    return kickoff_at if unlock_at is None or unlock_at < kickoff_at else unlock_at


def disagreements(match_ids=None) -> list[dict]:
    """The matches (of ``match_ids``, or all) whose sources report different kick-offs: each
    with its id, every source's kick-off and since when (``{source: (kickoff_at,
    reported_at)}``), the earliest (``kickoff_at``, governing the cut-off and the live rule)
    and the latest (``unlock_at``, governing the unlock); by match id."""
    query = Match.select(Match.id).where(Match.unlock_at.is_null(False))
    if match_ids is not None:
        query = query.where(Match.id.in_(sorted(set(match_ids))))
    ids = [match_id for (match_id,) in query.order_by(Match.id).tuples()]
    found = defaultdict(dict)
    for chunk in _chunks(ids):
        rows = KickoffReport.select(
            KickoffReport.match,
            KickoffReport.source,
            KickoffReport.kickoff_at,
            KickoffReport.reported_at,
        ).where(KickoffReport.match.in_(chunk))
        for match_id, source, kickoff_at, reported_at in rows.tuples():
            found[match_id][source] = (kickoff_at, reported_at)
    listed = []
    for match_id in ids:
        reports = found[match_id]
        earliest, latest = span({source: value[0] for source, value in reports.items()})
        if earliest != latest:
            listed.append(
                {
                    "match_id": match_id,
                    "reports": reports,
                    "kickoff_at": earliest,
                    "unlock_at": latest,
                }
            )
    return listed


def _reports(kickoffs) -> dict[int, dict]:
    """Every source's stored kick-off for each match of ``kickoffs``."""
    reports = {match_id: {} for match_id in kickoffs}
    for chunk in _chunks(kickoffs):
        query = KickoffReport.select(
            KickoffReport.match, KickoffReport.source, KickoffReport.kickoff_at
        ).where(KickoffReport.match.in_(chunk))
        for match_id, source, kickoff_at in query.tuples():
            reports[match_id][source] = kickoff_at
    return reports


def _chunks(items):
    items = list(items)
    for start in range(0, len(items), CHUNK):
        yield items[start : start + CHUNK]
