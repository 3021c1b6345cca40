"""Sane bounds of a quoted market: the prices, lines and overround a source's market must keep to
be taken; outside them the whole market (one bookmaker's prices of one market at one line) is
refused with a reason, never priced.

The figures (measured over the 30 shared football-data files, 2017/18–2023/24: 136,803 1x2,
51,735 over/under 2.5 and 51,826 Asian handicap price sets, pre-match and closing):

- a decimal price lies within [``PRICE_MIN``, ``PRICE_MAX``] = [1.01, 1000], the Betfair
  exchange's price ladder, which no bookmaker quotes beyond (the files: 1.02 to 61.0);
- a bookmaker's overround Σ 1/price lies within ``OVERROUND`` = [0.97, 1.5] in every market
  (the files: 1x2 1.0005–1.3095, over/under 2.5 0.9960–1.3390, Asian handicap 0.9998–1.2197 for
  the bookmakers); below 1 a book pays whichever way the match goes, above 1.5 no bookmaker
  prices a football market. An aggregate (``market-average``) is an average of books, not a
  book: its floor is ``AGGREGATE_OVERROUND_MIN`` = 0.8 (the files: 0.854, Betbrain's Asian
  handicap average of 2017/18, over bookmakers quoting different lines);
- an Asian handicap line is a multiple of 0.25 within ±``HANDICAP_MAX`` = 10 goals (the files:
  −3.75 to 3.0), an over/under line a multiple of 0.25 within [``TOTAL_MIN``, ``TOTAL_MAX``] =
  [0.5, 10.5].

Plain Python: the parsers of both sources (``oddsapi``, ``footballdata``) and the sync's
collection (``services.feeds.sources``) call it.
"""

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence

from engine.records import AGGREGATE_BOOKMAKERS, OddsRecord
from enums import MARKET_SELECTIONS, OU25_LINE

PRICE_MIN = 1.01
PRICE_MAX = 1000.0
OVERROUND = (0.97, 1.5)
AGGREGATE_OVERROUND_MIN = 0.8
HANDICAP_MAX = 10.0
TOTAL_MIN = 0.5
TOTAL_MAX = 10.5


def _number(value) -> float | None:
    """A JSON or Python number as a float (never a bool), or None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return float(value)
    except OverflowError:  # an int too large for a float
        return None


def price_problem(value) -> str | None:
    """Why ``value`` is not a decimal price to take, or None."""
    price = _number(value)
    if price is None:
        return f"the price {_shown(value)} is not a number"
    if not math.isfinite(price) or not PRICE_MIN <= price <= PRICE_MAX:
        return f"the price {_shown(value)} is outside [{PRICE_MIN:g}, {PRICE_MAX:g}]"
    return None


def line_problem(market: str, value) -> str | None:
    """Why ``value`` is not a line of ``market`` ("ah": a handicap; "ou", "ou25": a total), or
    None; a market without a line takes None only."""
    if market not in ("ah", "ou", "ou25"):
        return None if value is None else f"a {market} market has no line"
    line = _number(value)
    if line is None:
        return f"the line {_shown(value)} is not a number"
    if not math.isfinite(line) or (line * 4) % 1:
        return f"the line {_shown(value)} is not a multiple of 0.25 goals"
    if market == "ah" and abs(line) > HANDICAP_MAX:
        return f"the handicap {line:g} is beyond ±{HANDICAP_MAX:g} goals"
    if market == "ou25" and line != OU25_LINE:
        return f"an ou25 line is {OU25_LINE:g}, not {line:g}"
    if market != "ah" and not TOTAL_MIN <= line <= TOTAL_MAX:
        return f"the total {line:g} is outside [{TOTAL_MIN:g}, {TOTAL_MAX:g}] goals"
    return None


def overround_range(bookmaker: str) -> tuple[float, float]:
    """The overround a bookmaker's market may have (an aggregate's floor is lower)."""
    low, high = OVERROUND
    return (AGGREGATE_OVERROUND_MIN if bookmaker in AGGREGATE_BOOKMAKERS else low), high


def market_problem(market: str, bookmaker: str, line, prices: Sequence) -> str | None:
    """Why one bookmaker's complete market (its prices in ``MARKET_SELECTIONS`` order, at
    ``line``) is refused: a price or the line out of bounds, or its overround; else None."""
    for price in prices:
        problem = price_problem(price)
        if problem is not None:
            return problem
    problem = line_problem(market, line)
    if problem is not None:
        return problem
    if len(prices) != len(MARKET_SELECTIONS.get(market, ())):
        return f"a {market} market has {len(MARKET_SELECTIONS.get(market, ()))} prices"
    booksum = sum(1.0 / price for price in prices)
    low, high = overround_range(bookmaker)
    if not low <= booksum <= high:
        return f"its overround {booksum:.4f} is outside [{low:g}, {high:g}]"
    return None


def screen(odds: Iterable[OddsRecord]) -> tuple[list[OddsRecord], list[str]]:
    """The records of the markets within bounds (in their order), and a reason for each market
    refused (a market: one bookmaker's prices of one market at one line, pre-match or closing;
    one with a selection missing or given twice is refused too)."""
    odds = list(odds)
    sets = defaultdict(list)
    for record in odds:
        sets[record.bookmaker, record.market, record.is_closing, record.line].append(record)
    refused, reasons = set(), []
    for key, records in sets.items():
        bookmaker, market, closing, line = key
        wanted = MARKET_SELECTIONS.get(market, ())
        given = [record.selection for record in records]
        if sorted(given) != sorted(wanted):
            problem = f"its selections {', '.join(given)} are not {', '.join(wanted)}"
        else:
            by_selection = {record.selection: record.price for record in records}
            problem = market_problem(market, bookmaker, line, [by_selection[s] for s in wanted])
        if problem is not None:
            refused.add(key)
            reasons.append(f"{describe(bookmaker, market, line, closing)} refused: {problem}")
    kept = [r for r in odds if (r.bookmaker, r.market, r.is_closing, r.line) not in refused]
    return kept, reasons


def describe(bookmaker: str, market: str, line=None, closing: bool = False) -> str:
    """A market as a reason names it: ``pinnacle ah -0.25 (closing)``."""
    shown = f"{bookmaker} {market}"
    if line is not None and market != "ou25":
        shown += f" {line:g}" if isinstance(line, int | float) else f" {_shown(line)}"
    return shown + (" (closing)" if closing else "")


def _shown(value, limit: int = 40) -> str:
    """A value as a reason quotes it: ``repr``, clipped."""
    text = repr(value)
    return text[:limit] + ("…" if len(text) > limit else "")
