"""The odds columns of football-data.co.uk's CSVs: which columns hold which bookmaker's prices of
which market, pre-match and closing, and reading a row's price sets as odds records, a set with any
leg that is not a price (or not at a line) dropped whole."""

import re
from dataclasses import dataclass

from engine.records import OddsRecord
from enums import MARKET_SELECTIONS, OU25_LINE
from services.feeds.formats import bounds

#: Column prefixes of the 1x2 prices and the canonical bookmaker each stands for. Earlier entries
#: win when two prefixes give the same bookmaker (``Avg`` over the older Betbrain ``BbAv``).
PREFIXES_1X2: dict[str, str] = {
    "B365": "bet365",
    "BW": "bwin",
    "IW": "interwetten",
    "PS": "pinnacle",
    "WH": "william-hill",
    "VC": "vc-bet",
    "LB": "ladbrokes",
    "BFD": "betfred",
    "BMGM": "betmgm",
    "BV": "betvictor",
    "CL": "coral",
    "1XB": "1xbet",
    "Avg": "market-average",
    "BbAv": "market-average",
}

#: Column prefixes of the over/under 2.5 goals prices (Pinnacle is ``P`` here, not ``PS``).
PREFIXES_OU25: dict[str, str] = {**PREFIXES_1X2, "P": "pinnacle"}
del PREFIXES_OU25["PS"]

#: Column prefixes of the Asian handicap prices: as over/under 2.5's (``PAHH`` is Pinnacle's).
#: ``Max`` and Betbrain's ``BbMx`` (best of the market, like the 1x2 ``Max``) are not prices
#: anyone can take at once and are not read.
PREFIXES_AH: dict[str, str] = PREFIXES_OU25

#: Column suffix of each selection, per market.
SUFFIXES: dict[str, dict[str, str]] = {
    "1x2": {"home": "H", "draw": "D", "away": "A"},
    "ou25": {"over": ">2.5", "under": "<2.5"},
    "ah": {"home": "AHH", "away": "AHA"},
}

#: The column of the Asian handicap line (the home side's handicap, in goals) each price set is
#: quoted at, by (Betbrain's prefix or not, closing): one line per row for all bookmakers.
AH_LINE_COLUMNS: dict[tuple[bool, bool], str] = {
    (False, False): "AHh",
    (False, True): "AHCh",
    (True, False): "BbAHh",  # files before 2019/20
}

#: A handicap line as written: ASCII digits, an optional sign and decimal part.
LINE_TEXT = re.compile(r"[+-]?[0-9]+(?:\.[0-9]+)?")

#: The largest handicap taken (goals, either side); lines are whole, half or quarter goals.
LINE_MAX = bounds.HANDICAP_MAX

#: A decimal price as written: ASCII digits with an optional decimal part (``float`` also reads
#: ``nan``, ``inf``, ``1e400``, ``1_5`` and other scripts' digits).
PRICE_TEXT = re.compile(r"[0-9]+(?:\.[0-9]+)?")

#: The lowest and highest price taken (``bounds``): no bookmaker or exchange quotes
#: outside them (the real files: 1.02 to 61.0), so a price beyond is a typo.
PRICE_MIN = bounds.PRICE_MIN
PRICE_MAX = bounds.PRICE_MAX


@dataclass(frozen=True)
class PriceSet:
    """Where one bookmaker's prices for one market (pre-match or closing) sit in the row."""

    bookmaker: str
    market: str
    is_closing: bool
    legs: tuple[tuple[int, str], ...]  # (column index, selection) in MARKETS order
    line: int | None = None  # column index of the line, for a market quoted at one ("ah")


def find_price_sets(positions: dict[str, int]) -> list[PriceSet]:
    """The complete price sets a header offers, one per (bookmaker, market, closing)."""
    layout: dict[tuple[str, str, bool], PriceSet] = {}
    for market, prefixes in (("1x2", PREFIXES_1X2), ("ou25", PREFIXES_OU25), ("ah", PREFIXES_AH)):
        suffixes = SUFFIXES[market]
        for prefix, bookmaker in prefixes.items():
            for closing in (False, True):
                key = (bookmaker, market, closing)
                stem = prefix + ("C" if closing else "")
                columns = [positions.get(stem + suffixes[s]) for s in MARKET_SELECTIONS[market]]
                line = None
                if market == "ah":
                    name = AH_LINE_COLUMNS.get((prefix.startswith("Bb"), closing))
                    line = positions.get(name, -1) if name else -1
                # A set the header only half offers is useless for de-margining; ignore it.
                if key in layout or None in columns or line == -1:
                    continue
                legs = tuple(zip(columns, MARKET_SELECTIONS[market], strict=True))
                layout[key] = PriceSet(bookmaker, market, closing, legs, line)
    return list(layout.values())


class OddsReader:
    """Reads a row's price sets through a per-leg cache of records built once per file.

    Records are immutable and a file repeats the same prices over and over, so
    each distinct (leg, cell text) is parsed once; a row whose every leg is a valid price (most
    rows) then costs one dictionary look-up per cell.
    """

    def __init__(self, layout: list[PriceSet]):
        self.layout = layout
        self.legs = [
            (price_set, selection) for price_set in layout for _, selection in price_set.legs
        ]
        self.columns = [
            (index, price_set.line) for price_set in layout for index, _ in price_set.legs
        ]
        # A leg's key is its cell's text, or (line text, price text) for a market with a line.
        self.caches: list[dict[str | tuple[str, str], OddsRecord | None]] = [{} for _ in self.legs]

    def read(self, row: list[str], odds: list[OddsRecord]) -> int:
        """Append the row's valid price sets to ``odds``; the number of non-blank cells dropped."""
        texts = [
            row[index] if line is None else (row[line], row[index]) for index, line in self.columns
        ]
        # False: a cell text not seen yet in this leg; None: seen, and not a valid price.
        records = [cache.get(text, False) for cache, text in zip(self.caches, texts, strict=True)]
        if all(records):
            odds.extend(records)
            return 0
        for position in [i for i, record in enumerate(records) if record is False]:
            price_set, selection = self.legs[position]
            record = _price(texts[position], price_set, selection)
            self.caches[position][texts[position]] = record
            records[position] = record
        if all(records):
            odds.extend(records)
            return 0
        skipped = 0
        start = 0
        for price_set in self.layout:
            stop = start + len(price_set.legs)
            if all(records[start:stop]):
                odds.extend(records[start:stop])
            else:
                skipped += sum(1 for text in texts[start:stop] if _price_text(text).strip())
            start = stop
        return skipped


def _price_text(key: str | tuple[str, str]) -> str:
    """The price cell's text of a leg's key."""
    return key if isinstance(key, str) else key[1]


def _line(text: str) -> float | None:
    """A handicap line from a cell, or None unless a multiple of 0.25 within ±LINE_MAX."""
    written = text.strip()
    if not LINE_TEXT.fullmatch(written):
        return None
    line = float(written)
    if abs(line) > LINE_MAX or (4 * line) % 1 != 0:
        return None
    return line + 0.0  # "-0" is the line 0


def _price(key: str | tuple[str, str], price_set: PriceSet, selection: str) -> OddsRecord | None:
    """The record of one odds cell (with its line's cell for a market with a line), or None
    when the price is blank, not a decimal number in ASCII digits, below PRICE_MIN or above
    PRICE_MAX, or the line is not one (``_line``)."""
    written = _price_text(key).strip()
    if not PRICE_TEXT.fullmatch(written):
        return None
    price = float(written)
    if not PRICE_MIN <= price <= PRICE_MAX:
        return None
    if price_set.line is not None:
        line = _line(key[0])
        if line is None:
            return None
    else:
        line = OU25_LINE if price_set.market == "ou25" else None
    return OddsRecord(
        bookmaker=price_set.bookmaker,
        market=price_set.market,
        selection=selection,
        price=price,
        is_closing=price_set.is_closing,
        line=line,
    )
