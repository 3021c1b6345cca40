"""Stored odds as the engine wants them: price cubes of shape (match, bookmaker, selection)."""

from dataclasses import dataclass

import numpy as np

from engine.markets import MARKETS
from models import OddsQuote, fetch_rows


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
