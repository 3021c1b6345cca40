"""Stored odds as the engine wants them (price cubes of shape (match, bookmaker, selection)), and
the per-selection summary that match cards show."""

from dataclasses import dataclass

import numpy as np

from clock import utcnow
from engine.betting import odds
from engine.markets import FIXED_MARKETS
from engine.model import lines
from enums import KICKED_OFF_STATUSES, LINE_MARKETS, MARKET_SELECTIONS, OU25_LINE
from models import Match, OddsQuote, OddsSummary, stored_line
from store.bulk import fetch_rows, insert_rows
from store.database import db


@dataclass
class Cube:
    """Decimal prices (n_matches, n_bookmakers, k) with NaN where nobody quoted."""

    prices: np.ndarray
    bookmakers: list[str]


@dataclass
class LineCube:
    """The prices of a market with lines: one row per (match, line) quoted, sorted by
    ``(match_row, line)``; ``match_row`` (m,) indexes the match ids asked for, ``line`` (m,) is
    the home side's handicap ("ah") or the goals line ("ou"), and ``prices`` (m, n_bookmakers,
    2) holds the two selections' decimal prices, NaN where a bookmaker did not quote."""

    match_row: np.ndarray
    line: np.ndarray
    prices: np.ndarray
    bookmakers: list[str]


def _quotes(match_ids, closing: bool, markets, only_listed: bool):
    """The stored quotes of ``markets`` as arrays: each quote's row in ``match_ids`` (a sorted
    search, so a long list costs no dictionary), whether its match is listed at all, and its
    market, line, bookmaker, selection and price."""
    query = OddsQuote.select(
        OddsQuote.match,
        OddsQuote.market,
        OddsQuote.line,
        OddsQuote.bookmaker,
        OddsQuote.selection,
        OddsQuote.price,
    ).where((OddsQuote.is_closing == closing) & OddsQuote.market.in_(list(markets)))
    if only_listed:
        query = query.where(OddsQuote.match.in_(match_ids.tolist()))
    rows = fetch_rows(query)
    columns = list(zip(*rows, strict=True)) if rows else [()] * 6
    quote_match = np.array(columns[0], dtype=np.int64)
    market = np.array(columns[1], dtype=str)
    line = np.array(columns[2], dtype=float)
    bookmaker, selection = (np.array(column, dtype=str) for column in columns[3:5])
    price = np.array(columns[5], dtype=float)
    order = np.argsort(match_ids, kind="stable")
    found = np.searchsorted(match_ids[order], quote_match).clip(max=len(match_ids) - 1)
    listed = match_ids[order][found] == quote_match
    return order[found], listed, market, line, bookmaker, selection, price


def _columns(selection, selections) -> np.ndarray:
    """Each quote's column: its selection's place in the market's order."""
    choice = {value: index for index, value in enumerate(selections)}
    names, chosen = np.unique(selection, return_inverse=True)
    return np.array([choice[value] for value in names], dtype=np.int64)[chosen]


def load(match_ids, closing: bool, only_listed: bool = True) -> dict[str, Cube]:
    """One cube per market without a line (:data:`FIXED_MARKETS`) for ``match_ids`` (rows in
    that order), pre-match or closing prices: "ou25" holds the 2.5 goals line only.

    With ``only_listed=False`` every stored quote is read without an ``IN`` filter (a whole-table
    backfill); quotes of matches not in ``match_ids`` are then skipped.
    """
    match_ids = np.asarray(match_ids, dtype=np.int64)
    if not len(match_ids):
        return {name: Cube(np.empty((0, 0, len(sel))), []) for name, sel in FIXED_MARKETS.items()}
    row, listed, market, _, bookmaker, selection, price = _quotes(
        match_ids, closing, FIXED_MARKETS, only_listed
    )
    cubes = {}
    for name, selections in FIXED_MARKETS.items():
        mine = listed & (market == name)
        bookmakers, book = np.unique(bookmaker[mine], return_inverse=True)
        prices = np.full((len(match_ids), len(bookmakers), len(selections)), np.nan)
        prices[row[mine], book, _columns(selection[mine], selections)] = price[mine]
        cubes[name] = Cube(prices, bookmakers.tolist())
    return cubes


def load_lines(match_ids, closing: bool, only_listed: bool = True) -> dict[str, LineCube]:
    """One :class:`LineCube` per market with lines (``LINE_MARKETS``) for ``match_ids``,
    pre-match or closing prices: a row per (match, line) quoted. ``only_listed`` as in
    :func:`load`."""
    match_ids = np.asarray(match_ids, dtype=np.int64)
    if not len(match_ids):
        return {name: _empty_lines() for name in LINE_MARKETS}
    row, listed, market, line, bookmaker, selection, price = _quotes(
        match_ids, closing, LINE_MARKETS, only_listed
    )
    cubes = {}
    for name in LINE_MARKETS:
        mine = listed & (market == name)
        if not mine.any():
            cubes[name] = _empty_lines()
            continue
        # np.unique over (row, line) pairs sorts them by row, then line.
        keys, at = np.unique(
            np.column_stack([row[mine].astype(float), line[mine]]), axis=0, return_inverse=True
        )
        bookmakers, book = np.unique(bookmaker[mine], return_inverse=True)
        prices = np.full((len(keys), len(bookmakers), 2), np.nan)
        prices[at.reshape(-1), book, _columns(selection[mine], MARKET_SELECTIONS[name])] = price[
            mine
        ]
        cubes[name] = LineCube(
            keys[:, 0].astype(np.int64), keys[:, 1].copy(), prices, bookmakers.tolist()
        )
    return cubes


def closing_rates(closing: dict[str, Cube], method: str):
    """Per row of the closing cubes ``closing`` (:func:`load`), the score model's goal rates
    reproducing the close's 1x2 and over/under 2.5, de-margined by ``method``
    (``engine.model.lines.close_rates``): what carries a line's closing probability to another
    line."""
    fair = {
        name: odds.remove_margin(
            odds.closing_prices(closing[name].prices, closing[name].bookmakers)[0],
            method=method,
        )
        for name in ("1x2", "ou25")
    }
    return lines.close_rates(fair["1x2"], fair["ou25"])


def closing_lines(match_ids, closing: dict[str, Cube], only_listed: bool = True):
    """The closing :class:`LineCube` per market with lines for ``match_ids`` (as
    :func:`load_lines`), over/under's with the 2.5 goals close added as its 2.5 line: that
    line is stored as "ou25" (``closing``, :func:`load`'s closing cubes of the same
    ``match_ids``), and it is often the only total a close quotes, which a pick at another
    line is valued from (``engine.model.lines.closing_at``)."""
    found = load_lines(match_ids, closing=True, only_listed=only_listed)
    found["ou"] = with_line(found["ou"], closing["ou25"], OU25_LINE)
    return found


def with_line(cube: LineCube, fixed: Cube, line: float) -> LineCube:
    """``cube`` with a row at ``line`` for each match a two-way ``fixed`` cube (rows in the
    line cube's match order) prices, its bookmakers joined to the line cube's; rows stay
    sorted by match, then line."""
    rows = np.flatnonzero(np.isfinite(fixed.prices).any(axis=(1, 2)))
    if not len(rows):
        return cube
    bookmakers = sorted(set(cube.bookmakers) | set(fixed.bookmakers))
    column = {name: at for at, name in enumerate(bookmakers)}
    prices = np.full((len(cube.line) + len(rows), len(bookmakers), 2), np.nan)
    prices[: len(cube.line), [column[name] for name in cube.bookmakers]] = cube.prices
    prices[len(cube.line) :, [column[name] for name in fixed.bookmakers]] = fixed.prices[rows]
    match_row = np.concatenate([cube.match_row, rows.astype(np.int64)])
    lines_of = np.concatenate([cube.line, np.full(len(rows), float(line))])
    order = np.lexsort((lines_of, match_row))
    return LineCube(match_row[order], lines_of[order], prices[order], bookmakers)


def _empty_lines() -> LineCube:
    return LineCube(np.empty(0, np.int64), np.empty(0), np.empty((0, 0, 2)), [])


SUMMARY_COLUMNS = [
    "match",
    "market",
    "line",
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
    """Recompute the odds summary (best, sharp and closing price per selection, and per line of
    the markets with lines) of ``match_ids`` from their stored quotes; returns the rows written.
    The caller owns the transaction.

    Only for matches whose prices are public whatever their picks (those that have kicked off):
    an upcoming match's summary is written by the prediction run, from the prices its picks were
    made from (:func:`summary_rows`), so no price reaches the public before its picks."""
    match_ids = np.unique(np.asarray(list(match_ids), dtype=np.int64))
    if not len(match_ids):
        return 0
    rows = summary_rows(
        match_ids,
        load(match_ids, closing=False),
        load(match_ids, closing=True),
        lines=(load_lines(match_ids, closing=False), load_lines(match_ids, closing=True)),
    )
    return write_summaries(match_ids, rows)


def summary_rows(match_ids, pre_match: dict, closing: dict, lines=None) -> list[tuple]:
    """The summary rows (:data:`SUMMARY_COLUMNS`) of ``match_ids`` from their pre-match and
    closing cubes (one row per match, in that order) and, with ``lines`` (the pre-match and
    closing :class:`LineCube` by market, as :func:`load_lines` gives them for the same
    ``match_ids``), one row per selection at each line quoted before kick-off or at the close."""
    match_ids = np.asarray(match_ids, dtype=np.int64)
    rows = []
    for market, selections in FIXED_MARKETS.items():
        cube, closed = pre_match[market], closing[market]
        line = np.full(len(match_ids), stored_line(market, None))
        rows += _summaries(
            market, selections, match_ids, line, (cube.prices, cube.bookmakers), closed
        )
    for market, (cube, closed) in _aligned_lines(lines).items():
        rows += _summaries(
            market,
            MARKET_SELECTIONS[market],
            match_ids[cube.match_row],
            cube.line,
            (cube.prices, cube.bookmakers),
            closed,
        )
    return rows


def _aligned_lines(lines) -> dict[str, tuple[LineCube, Cube]]:
    """Each line market's pre-match and closing line cubes on the same rows: every (match,
    line) either quotes, NaN where the other does not."""
    if lines is None:
        return {}
    pre_match, closing = lines
    aligned = {}
    for market in LINE_MARKETS:
        pre, closed = pre_match[market], closing[market]
        pairs = np.concatenate(
            [
                np.column_stack([cube.match_row.astype(float), cube.line]).reshape(-1, 2)
                for cube in (pre, closed)
            ]
        )
        keys, at = np.unique(pairs, axis=0, return_inverse=True)
        at = at.reshape(-1)
        spread = []
        for cube, rows in ((pre, at[: len(pre.line)]), (closed, at[len(pre.line) :])):
            prices = np.full((len(keys), len(cube.bookmakers), 2), np.nan)
            prices[rows] = cube.prices
            spread.append(prices)
        aligned[market] = (
            LineCube(keys[:, 0].astype(np.int64), keys[:, 1], spread[0], pre.bookmakers),
            Cube(spread[1], closed.bookmakers),
        )
    return aligned


def _summaries(market, selections, match_ids, line, pre_match, closed: Cube) -> list[tuple]:
    """The summary rows of one market: ``match_ids`` and ``line`` per row of the cubes."""
    prices, books = pre_match
    best, best_book = odds.best_prices(prices, books)
    sharp, sharp_book = odds.sharp_prices(prices, books)
    close, close_book = odds.closing_prices(closed.prices, closed.bookmakers)
    quoting = odds.quoting_count(prices, books)
    names = np.array([*books, None], dtype=object)  # index -1: nobody
    closing_names = np.array([*closed.bookmakers, None], dtype=object)
    priced = np.isfinite(best).any(axis=1) | np.isfinite(close).any(axis=1)
    rows = []
    for row in np.flatnonzero(priced).tolist():
        for column, selection in enumerate(selections):
            rows.append(
                (
                    int(match_ids[row]),
                    market,
                    float(line[row]),
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
