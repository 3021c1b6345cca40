"""Settlement: pending picks become won, lost or void, with their profit, closing odds and CLV.

A pick stored as live is checked against the live rule as it settles
(:func:`engine.ledger.entries.not_live_reasons`): made before its match's kick-off as finally known,
and its ``pick.published`` entry first signed before that kick-off. One that fails (a fixture moved
before the pick was made, an entry appended late, a row written without one) is settled but set
apart with the reason, in the same transaction, whichever path brought its match here.
The kick-off is the earliest the live sources report (``Match.kickoff_at``; see
:mod:`services.feeds.kickoffs`): one source moving it later never makes a pick live.
"""

from datetime import UTC, datetime, timedelta

import numpy as np
from peewee import JOIN

from clock import utcnow
from engine.betting import odds, settlement
from engine.ledger import entries
from engine.markets import FIXED_MARKETS
from engine.model import lines
from enums import LINE_MARKETS, MARKET_SELECTIONS, SEEN_LINE, SETTLED_STATUSES, SOURCE_LINE
from models import Contradiction, LedgerSeal, Match, OddsQuote, Pick
from services.market import price_cubes
from services.record import log_reading, publishing, signed_log
from services.webhooks import events
from store.bulk import epoch_seconds, fetch_rows, update_rows
from store.database import db

#: The counts a settlement returns, one per settled status (``half-won`` counts as ``half_won``).
COUNTED = tuple(status.replace("-", "_") for status in SETTLED_STATUSES)
#: Picks set apart per statement (SQLite takes at most 32,766 parameters).
BATCH = 5000

SETTLED_COLUMNS = {
    "status": "text",
    "profit": "float",
    "closing_odds": "float",
    "closing_bookmaker": "text",
    "closing_probability": "float",
    "closing_line": "text",
    "clv": "float",
}


def settle_pending(settings, now=None, kickoff_from=None) -> dict:
    """Settle every pending pick whose match kicked off before ``now`` (and after kickoff_from);
    ``settings`` give ``VOID_AFTER_HOURS`` and ``MARGIN_METHOD``.

    Idempotent: a settled pick is never read again, and a pick whose match has no result yet,
    or an open contradiction (:func:`held`), stays pending. A live pick's outcome enters the
    ledger in the same transaction. Returns the counts of what it decided.
    """
    now = now or utcnow()
    with db.atomic():
        return _settle(settings, now, kickoff_from)


def _settle(settings, now, kickoff_from) -> dict:
    query = (
        Pick.select(
            Pick.id,
            Pick.market,
            Pick.line,
            Pick.selection,
            Pick.odds,
            Pick.stake,
            Match.id,
            Match.status,
            Match.home_goals,
            Match.away_goals,
            Match.kickoff_at,
            Pick.is_live,
            Pick.created_at,
            LedgerSeal.published_hash,  # a live pick's entry, which its outcome cites
            log_reading.PUBLISHED_ENTRY.position,  # where it is, for when it was first signed
        )
        .join(Match)
        .join_from(Pick, LedgerSeal, on=(LedgerSeal.pick_id == Pick.id), join_type=JOIN.LEFT_OUTER)
        .join_from(
            Pick,
            log_reading.PUBLISHED_ENTRY,
            on=log_reading.PUBLISHED_ON,
            join_type=JOIN.LEFT_OUTER,
        )
        .where((Pick.status == "pending") & (Match.kickoff_at < now))
        .where(Match.id.not_in(held()))
        # While its sources disagree on the kick-off (services.feeds.kickoffs), a match settles
        # once the latest has passed: a settled pick is revealed, and only then does it open.
        .where(Match.unlock_at.is_null() | (Match.unlock_at < now))
    )
    if kickoff_from is not None:
        query = query.where(Match.kickoff_at >= kickoff_from)
    rows = fetch_rows(query)
    counts = {"examined": len(rows), **dict.fromkeys(COUNTED, 0), "pending": len(rows)}
    if not rows:
        return counts
    *columns, made_at, cited, position = zip(*rows, strict=True)
    pick_id, market, line, selection, price, stake, match_id, status, home, away, kickoff, live = (
        np.array(column) for column in columns
    )
    kickoff_seconds = epoch_seconds(kickoff)
    price = price.astype(float)
    line = line.astype(float)
    decided, profit = settlement.settle(
        market,
        selection,
        price,
        stake.astype(float),
        status,
        home.astype(float),
        away.astype(float),
        kickoff_seconds,
        now.timestamp(),
        void_after_hours=settings["VOID_AFTER_HOURS"],
        line=line,
    )
    done = decided != "pending"
    closing, closing_book, closing_probability, closing_line = _closing(
        match_id.astype(np.int64), market, line, selection, done, settings["MARGIN_METHOD"]
    )
    clv = settlement.clv(price, closing)
    updates = zip(
        pick_id[done].tolist(),
        decided[done].tolist(),
        profit[done].tolist(),
        _nullable(closing[done]),
        closing_book[done].tolist(),
        _nullable(closing_probability[done]),
        closing_line[done].tolist(),
        _nullable(clv[done]),
        strict=True,
    )
    update_rows(Pick, SETTLED_COLUMNS, list(updates), constants={"settled_at": now})
    # Live picks were published; the backfill was not. One small row each: their data is read
    # when the worker sends them (a settled pick never changes again).
    published = done & live.astype(bool)
    events.emit_subjects("pick.settled", pick_id[published].astype(np.int64).tolist(), now)
    published = np.array([value is not None for value in cited], dtype=bool)
    reasons = _not_live(
        pick_id,
        done & live.astype(bool),
        epoch_seconds(made_at),
        kickoff_seconds,
        (published, np.array(position, dtype=object)),
    )
    # Live picks are those the ledger published: their outcomes follow them into it.
    recorded = done & published
    at = np.flatnonzero(recorded).tolist()
    signed_log.record_outcomes(
        pick_id[recorded].tolist(),
        list(map(cited.__getitem__, at)),
        decided[recorded].tolist(),
        profit[recorded].tolist(),
        _nullable(closing[recorded]),
        _nullable(clv[recorded]),
        now,
        kickoff_at=_instants(kickoff_seconds[recorded]),
        match_status=status[recorded].tolist(),
        home_goals=_goals(home[recorded]),
        away_goals=_goals(away[recorded]),
        closing_bookmaker=closing_book[recorded].tolist(),
        closing_probability=_nullable(closing_probability[recorded]),
        closing_line=closing_line[recorded].tolist(),
        margin_method=settings["MARGIN_METHOD"],
        not_live_reason=reasons[recorded].tolist(),
        line=np.where(
            np.isin(market[recorded], LINE_MARKETS), line[recorded].astype(object), None
        ).tolist(),
    )
    for state, name in zip(SETTLED_STATUSES, COUNTED, strict=True):
        counts[name] = int((decided == state).sum())
    counts["pending"] = int((~done).sum())
    return counts


def held():
    """The matches whose settlement waits for an operator: those with an open contradiction
    (two sources disagreeing on the result; see ``services.feeds.contradictions``)."""
    return Contradiction.select(Contradiction.match).where(Contradiction.status == "open")


def settled_count(counts: dict) -> int:
    """How many picks a settlement's ``counts`` settled, whatever their status."""
    return sum(counts[name] for name in COUNTED)


def _not_live(pick_id, checked, made_at, kickoff_at, ledger) -> np.ndarray:
    """The live rule for the ``checked`` picks (settling live ones; instants in epoch seconds;
    ``ledger``: whether each was published, and its entry's position, None without one); those
    that fail it are set apart with their reason (no longer live). Returns each pick's reason
    (None: live, or not checked)."""
    reasons = np.full(len(pick_id), None, dtype=object)
    if not checked.any():
        return reasons
    published, position = ledger
    ids = pick_id[checked].astype(np.int64).tolist()
    reasons[checked] = entries.not_live_reasons(
        made_at[checked],
        log_reading.first_signed_at(position[checked].tolist()),
        kickoff_at[checked],
        published[checked],
    )
    by_reason = {}
    for value, reason in zip(ids, reasons[checked].tolist(), strict=True):
        if reason is not None:
            by_reason.setdefault(reason, []).append(value)
    for reason, chosen in by_reason.items():
        for start in range(0, len(chosen), BATCH):
            Pick.update(is_live=False, not_live_reason=reason).where(
                Pick.id.in_(chosen[start : start + BATCH])
            ).execute()
    return reasons


def _instants(seconds) -> list[datetime]:
    """Epoch seconds as aware datetimes, each distinct instant made once (kick-offs repeat)."""
    distinct, index = np.unique(seconds, return_inverse=True)
    made = np.array(
        [datetime.fromtimestamp(value, UTC) for value in distinct.tolist()], dtype=object
    )
    return made[index].tolist()


def _goals(values) -> list:
    """Goals as ints, None where unknown (NaN)."""
    goals = values.astype(float)
    known = np.isfinite(goals)
    return np.where(known, np.where(known, goals, 0).astype(np.int64).astype(object), None).tolist()


def _closing(match_ids, market, handicap, selection, rows, method):
    """Sharp closing price, its bookmaker, the selection's de-margined closing probability and
    the closing line it comes from (``CLOSING_LINES``: the source's closing columns, or the
    service's own line from the prices it saw) for each pick in ``rows`` (NaN and None
    elsewhere). A pick of a market with a line is valued at its own line (see
    :func:`_closing_at_lines`)."""
    price = np.full(len(match_ids), np.nan)
    probability = np.full(len(match_ids), np.nan)
    bookmaker = np.full(len(match_ids), None, dtype=object)
    line = np.full(len(match_ids), None, dtype=object)
    wanted = np.unique(match_ids[rows])
    position = np.searchsorted(wanted, match_ids)
    cubes = price_cubes.load(wanted, closing=True)
    seen = _seen_lines(wanted.tolist())
    closed = (price, bookmaker, probability, line)
    if (rows & np.isin(market, LINE_MARKETS)).any():
        _closing_at_lines(
            (match_ids, market, handicap, selection, rows), wanted, cubes, seen, method, closed
        )
    for name, selections in FIXED_MARKETS.items():
        cube = cubes[name]
        mine = rows & (market == name)
        if not mine.any():
            continue
        prices, source = odds.closing_prices(cube.prices, cube.bookmakers)
        fair = odds.remove_margin(prices, method=method)  # the same close, fair
        at = position[mine]
        column = np.array([selections.index(value) for value in selection[mine]])
        price[mine] = prices[at, column]
        probability[mine] = fair[at, column]
        names = np.array([*cube.bookmakers, None], dtype=object)
        bookmaker[mine] = np.where(np.isfinite(price[mine]), names[source[at]], None)
        line[mine] = [
            None if book is None else SEEN_LINE if (match, name, book) in seen else SOURCE_LINE
            for match, book in zip(match_ids[mine].tolist(), bookmaker[mine], strict=True)
        ]
    return price, bookmaker, probability, line


def _closing_at_lines(picks, wanted, cubes, seen, method, closed) -> None:
    """The close of each line-market pick in ``picks`` (match ids, markets, lines, selections,
    which rows), written into ``closed`` (price, bookmaker, probability, closing line): at the
    pick's own line (``engine.model.lines.closing_at``), through a score model whose goal rates
    reproduce the close's 1x2 and over/under 2.5, from the nearest line it quotes where the line
    moved (over/under's 2.5 goals close, stored as "ou25", among them)."""
    match_ids, market, handicap, selection, rows = picks
    price, bookmaker, probability, source_line = closed
    rates = price_cubes.closing_rates(cubes, method)
    line_cubes = price_cubes.closing_lines(wanted, cubes)
    for name in LINE_MARKETS:
        mine = np.flatnonzero(rows & (market == name))
        if not len(mine):
            continue
        cube = line_cubes[name]
        prices, source = odds.closing_prices(cube.prices, cube.bookmakers)
        fair = odds.remove_margin(prices, method=method)
        side = np.array([MARKET_SELECTIONS[name].index(value) for value in selection[mine]])
        price[mine], probability[mine], row = lines.closing_at(
            name,
            (np.searchsorted(wanted, match_ids[mine]), handicap[mine], side),
            (cube.match_row, cube.line, prices, fair),
            rates,
        )
        # Where the line moved there is no closing price at the pick's line: no bookmaker and
        # no closing line to name, only the carried fair probability.
        found = (row >= 0) & np.isfinite(price[mine])
        bookmaker[mine[found]] = np.array(cube.bookmakers, dtype=object)[source[row[found]]]
        source_line[mine] = [
            None if book is None else SEEN_LINE if (match, name, book) in seen else SOURCE_LINE
            for match, book in zip(match_ids[mine].tolist(), bookmaker[mine], strict=True)
        ]


def _seen_lines(match_ids) -> set:
    """``(match_id, market, bookmaker)`` of each closing line of ``match_ids`` the service took
    from the prices it saw (a whole market at a time), not from a source's closing columns."""
    found = set()
    for start in range(0, len(match_ids), BATCH):
        found.update(
            OddsQuote.select(OddsQuote.match, OddsQuote.market, OddsQuote.bookmaker)
            .where(
                OddsQuote.match.in_(match_ids[start : start + BATCH])
                & OddsQuote.is_closing
                & (OddsQuote.closing_line == SEEN_LINE)
            )
            .distinct()
            .tuples()
        )
    return found


def _nullable(values) -> list:
    """Floats as a list, with None where a value is missing (NaN)."""
    return np.where(np.isfinite(values), values, None).tolist()


def run(last_days: int, settings, now=None) -> dict:
    """The settlement-run operation: settle picks of matches from the last ``last_days`` days."""
    now = now or utcnow()
    with publishing.publish(settings, now):
        counts = settle_pending(settings, now=now, kickoff_from=now - timedelta(days=last_days))
    return {"last_days": last_days, "settled_at": now, **counts}
