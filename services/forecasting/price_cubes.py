"""Stored odds as the engine wants them (price cubes of shape (match, bookmaker, selection)), and
the per-selection summary that match cards show."""

from dataclasses import dataclass

import numpy as np

from clock import utcnow
from engine import odds as odds_engine
from engine.markets import MARKETS
from enums import KICKED_OFF_STATUSES
from models import Match, OddsQuote, OddsSummary
from store.bulk import fetch_rows, insert_rows
from store.database import db


@dataclass
class Cube:
    """Decimal prices (n_matches, n_bookmakers, k) with NaN where nobody quoted."""

    prices: np.ndarray
    bookmakers: list[str]


def load(match_ids, closing: bool, only_listed: bool = True) -> dict[str, Cube]:
    """One cube per market for ``match_ids`` (rows in that order), pre-match or closing prices.

    With ``only_listed=False`` every stored quote is read without an ``IN`` filter (a whole-table
    backfill); quotes of matches not in ``match_ids`` are then skipped.
    """
    match_ids = np.asarray(match_ids, dtype=np.int64)
    if not len(match_ids):
        return {name: Cube(np.empty((0, 0, len(sel))), []) for name, sel in MARKETS.items()}
    query = OddsQuote.select(
        OddsQuote.match,
        OddsQuote.market,
        OddsQuote.bookmaker,
        OddsQuote.selection,
        OddsQuote.price,
    ).where(OddsQuote.is_closing == closing)
    if only_listed:
        query = query.where(OddsQuote.match.in_(match_ids.tolist()))
    rows = fetch_rows(query)
    columns = list(zip(*rows, strict=True)) if rows else [()] * 5
    quote_match = np.array(columns[0], dtype=np.int64)
    market, bookmaker, selection = (np.array(column, dtype=str) for column in columns[1:4])
    price = np.array(columns[4], dtype=float)
    order = np.argsort(match_ids, kind="stable")
    found = np.searchsorted(match_ids[order], quote_match).clip(max=len(match_ids) - 1)
    listed = match_ids[order][found] == quote_match
    row = order[found]
    cubes = {}
    for name, selections in MARKETS.items():
        mine = listed & (market == name)
        bookmakers, book = np.unique(bookmaker[mine], return_inverse=True)
        choice = {value: index for index, value in enumerate(selections)}
        column = np.array([choice[value] for value in np.unique(selection[mine])], dtype=np.int64)
        _, chosen = np.unique(selection[mine], return_inverse=True)
        prices = np.full((len(match_ids), len(bookmakers), len(selections)), np.nan)
        prices[row[mine], book, column[chosen]] = price[mine]
        cubes[name] = Cube(prices, bookmakers.tolist())
    return cubes


SUMMARY_COLUMNS = [
    "match",
    "market",
    "selection",
    "best_price",
    "best_bookmaker",
    "sharp_price",
    "sharp_bookmaker",
    "closing_price",
    "closing_bookmaker",
    "bookmakers",
]


def summarise(match_ids) -> int:
    """Recompute the odds summary (best, sharp and closing price per selection) of ``match_ids``
    from their stored quotes; returns the rows written. The caller owns the transaction.

    Only for matches whose prices are public whatever their picks (those that have kicked off):
    an upcoming match's summary is written by the prediction run, from the prices its picks were
    made from (:func:`summary_rows`), so no price reaches the public before its picks."""
    match_ids = np.unique(np.asarray(list(match_ids), dtype=np.int64))
    if not len(match_ids):
        return 0
    rows = summary_rows(match_ids, load(match_ids, closing=False), load(match_ids, closing=True))
    return write_summaries(match_ids, rows)


def summary_rows(match_ids, pre_match: dict, closing: dict) -> list[tuple]:
    """The summary rows (:data:`SUMMARY_COLUMNS`) of ``match_ids`` from their pre-match and
    closing cubes (one row per match, in that order)."""
    match_ids = np.asarray(match_ids, dtype=np.int64)
    rows = []
    for market, selections in MARKETS.items():
        cube, closed = pre_match[market], closing[market]
        best, best_book = odds_engine.best_prices(cube.prices, cube.bookmakers)
        sharp, sharp_book = odds_engine.sharp_prices(cube.prices, cube.bookmakers)
        close, close_book = odds_engine.closing_prices(closed.prices, closed.bookmakers)
        quoting = odds_engine.quoting_count(cube.prices, cube.bookmakers)
        names = np.array([*cube.bookmakers, None], dtype=object)  # index -1: nobody
        closing_names = np.array([*closed.bookmakers, None], dtype=object)
        priced = np.isfinite(best).any(axis=1) | np.isfinite(close).any(axis=1)
        for row in np.flatnonzero(priced).tolist():
            for column, selection in enumerate(selections):
                rows.append(
                    (
                        int(match_ids[row]),
                        market,
                        selection,
                        _number(best[row, column]),
                        names[best_book[row, column]],
                        _number(sharp[row, column]),
                        names[sharp_book[row]],
                        _number(close[row, column]),
                        closing_names[close_book[row]],
                        int(quoting[row]),
                    )
                )
    return rows


def write_summaries(match_ids, rows) -> int:
    """Replace the summaries of ``match_ids`` with ``rows``; returns how many were written."""
    match_ids = np.unique(np.asarray(list(match_ids), dtype=np.int64))
    for start in range(0, len(match_ids), 500):
        chunk = match_ids[start : start + 500].tolist()
        OddsSummary.delete().where(OddsSummary.match.in_(chunk)).execute()
    insert_rows(OddsSummary, SUMMARY_COLUMNS, rows)
    return len(rows)


def _number(value) -> float | None:
    """A price as a float, None where nobody quotes (NaN)."""
    return float(value) if np.isfinite(value) else None


def summarise_missing(now=None) -> int:
    """Summarise the matches that have kicked off at ``now`` (the current time by default) and
    have quotes but no summary (a database made before summaries existed), in one transaction
    that moves the data version when it writes; returns the rows written. An upcoming match's
    summary waits for its next prediction (see :func:`summarise`)."""
    now = now or utcnow()
    summarised = OddsSummary.select(OddsSummary.match).distinct()
    missing = (
        OddsQuote.select(OddsQuote.match)
        .distinct()
        .join(Match)
        .where(OddsQuote.match.not_in(summarised))
        .where(
            (Match.kickoff_at <= now)
            | Match.status.in_(KICKED_OFF_STATUSES)
            | Match.public_since.is_null(False)
        )
    )
    with db.atomic():
        return summarise([match_id for (match_id,) in missing.tuples()])
