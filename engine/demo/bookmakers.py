"""The demo world's bookmakers: each match's true market probabilities at its most balanced lines,
and the noisy pre-match and closing odds the books quote around them, each with its margin."""

from dataclasses import dataclass, field

import numpy as np

from engine.markets import MARKETS
from engine.model import lines
from engine.model.scores import market_probabilities, score_matrix
from engine.records import OddsRecord
from enums import LINE_MARKETS, MARKET_SELECTIONS

#: The lines a demo bookmaker may quote, of which each match gets its most balanced: Asian
#: handicaps from −3 to +3 in quarter goals, and over/under totals beside the 2.5 of "ou25".
DEMO_LINES = {
    "ah": tuple(np.arange(-12, 13) / 4),
    "ou": (1.5, 1.75, 2.0, 2.25, 2.75, 3.0, 3.25, 3.5),
}


@dataclass(frozen=True)
class MatchTruth:
    """The process behind one match: its true goal rates and market probabilities."""

    home_rate: float
    away_rate: float
    probabilities: dict[str, tuple[float, ...]]  # market → selections in MARKETS order
    #: The line each market with one is quoted at ("ah": the home side's handicap; "ou"), the
    #: most balanced of :data:`DEMO_LINES` (its probabilities are in ``probabilities``).
    lines: dict[str, float] = field(default_factory=dict)


def _main_lines(matrix) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per market with a line, each match's most balanced line of :data:`DEMO_LINES` (the one a
    bookmaker would quote) and the true fair probabilities there: ``{market: (line, probs)}``."""
    found = {}
    for market, candidates in DEMO_LINES.items():
        fair = np.stack([lines.fair_probabilities(market, matrix, line)[0] for line in candidates])
        best = np.abs(fair[:, :, 0] - 0.5).argmin(axis=0)
        rows = np.arange(matrix.shape[0])
        found[market] = (np.asarray(candidates)[best], fair[best, rows])
    return found


def compute_truths(fixtures, rho: float) -> list[MatchTruth]:
    """The true rates and market probabilities of every fixture (at its main lines): each
    fixture has its true ``home_rate`` and ``away_rate``."""
    home_rate = np.array([f.home_rate for f in fixtures])
    away_rate = np.array([f.away_rate for f in fixtures])
    matrix = score_matrix(home_rate, away_rate, rho)
    probabilities = market_probabilities(matrix)
    columns = {market: probabilities[market].tolist() for market in MARKETS}
    main = _main_lines(matrix)
    for market, (_, fair) in main.items():
        columns[market] = fair.tolist()
    line_of = {market: line.tolist() for market, (line, _) in main.items()}
    return [
        MatchTruth(
            home_rate=home,
            away_rate=away,
            probabilities={market: tuple(values[i]) for market, values in columns.items()},
            lines={market: values[i] for market, values in line_of.items()},
        )
        for i, (home, away) in enumerate(zip(home_rate.tolist(), away_rate.tolist(), strict=True))
    ]


def quote_odds(rng, truths, closed, settings) -> list[list[OddsRecord]]:
    """Every match's pre-match odds, and closing odds where ``closed``, from noisy truth, with the
    bookmakers, margins and noises of ``settings`` (the world's ``DemoSettings``).

    Each book prices log(true probability) + a shared market error + its own error, takes its
    margin by the power method (implied probabilities q**k summing to 1 + margin) and rounds
    the price down to two decimals. At the close the errors keep ``closing_carry`` of their
    pre-match value and add smaller fresh ones, so closing prices are nearer the truth and the
    line really moves between the two.
    """
    size = len(truths)
    books = settings.bookmakers
    margins = np.array([margin for _, margin, _ in books])
    noises = np.array([noise for _, _, noise in books])
    quotes: list[list[OddsRecord]] = [[] for _ in range(size)]
    for market, selections in MARKET_SELECTIONS.items():
        truth = np.array([t.probabilities[market] for t in truths]).reshape(size, 1, -1)
        legs = len(selections)
        shared = rng.normal(0.0, settings.market_noise, (size, 1, legs))
        own = rng.normal(0.0, 1.0, (size, len(books), legs)) * noises[:, None]
        shared_close = settings.closing_carry * shared + rng.normal(
            0.0, settings.closing_noise, (size, 1, legs)
        )
        own_close = settings.closing_carry * own + rng.normal(
            0.0, 1.0, (size, len(books), legs)
        ) * (settings.closing_book_factor * noises[:, None])
        for is_closing, error in ((False, shared + own), (True, shared_close + own_close)):
            prices = _prices(np.log(truth) + error, margins, settings.min_price)
            if market in LINE_MARKETS:
                _line_quotes(quotes, truths, closed, market, prices, books, is_closing)
                continue
            # Records are immutable: one per distinct price of each (book, selection), shared.
            table = np.empty((size, len(books) * legs), dtype=object)
            for b, (slug, _, _) in enumerate(books):
                for leg, selection in enumerate(selections):
                    distinct, where = np.unique(prices[:, b, leg], return_inverse=True)
                    made = np.empty(len(distinct), dtype=object)
                    made[:] = [
                        OddsRecord(slug, market, selection, price, is_closing)
                        for price in distinct.tolist()
                    ]
                    table[:, b * legs + leg] = made[where]
            for i, row in enumerate(table.tolist()):
                if closed[i] or not is_closing:
                    quotes[i].extend(row)
    return quotes


def _line_quotes(quotes, truths, closed, market, prices, books, is_closing) -> None:
    """Append each match's quotes of a market with a line, at the match's main line."""
    selections = MARKET_SELECTIONS[market]
    for i, truth in enumerate(truths):
        if is_closing and not closed[i]:
            continue
        line = truth.lines[market]
        quotes[i].extend(
            OddsRecord(slug, market, selection, float(prices[i, b, leg]), is_closing, line)
            for b, (slug, _, _) in enumerate(books)
            for leg, selection in enumerate(selections)
        )


def _prices(log_probability, margins, min_price: float) -> np.ndarray:
    """Decimal prices (…, legs) from noisy log-probabilities, with each book's margin."""
    fair = np.exp(log_probability)
    fair /= fair.sum(axis=-1, keepdims=True)
    target = (1.0 + margins)[None, :, None]
    log_fair = np.log(fair)
    # Power method: find k in (0, 1] with sum(fair**k) = 1 + margin, by bisection (to ~1e-9).
    low = np.full((*fair.shape[:-1], 1), 0.05)
    high = np.ones_like(low)
    for _ in range(30):
        middle = (low + high) / 2
        over = np.exp(middle * log_fair).sum(axis=-1, keepdims=True) > target
        low = np.where(over, middle, low)
        high = np.where(over, high, middle)
    price = np.exp(-(low + high) / 2 * log_fair)
    # Books round prices down, which only ever adds to their margin.
    return np.maximum(np.floor(price * 100 + 1e-9) / 100, min_price)
