"""Price history and the service's own closing line.

Every pre-match price a sync sees for a match still to kick off is kept in ``price_seen``: one
row per run of one price of one bookmaker's selection at one line (``models.stored_line``: a
handicap or goals line is a market of its own here), with when it was first and last seen
(a price seen again moves ``last_seen_at``; a new price starts a row). The import's
``odds_quote`` keeps only the latest price.

Once a match has kicked off, each bookmaker's market at each line whose source gave no closing
price gets one
from the history: the latest price of each selection first seen before kick-off, stored as
closing quotes (``is_closing``) marked as the service's own line (``closing_line`` ``seen``), so
settlement, CLV and fair closing EV read it as they read a source's closing columns and each
settled pick says which line it used. A source's own closing price, arriving later
(football-data's season files), replaces it.
"""

from collections import defaultdict
from datetime import timedelta

from enums import MARKET_SELECTIONS, SEEN_LINE
from models import Match, OddsQuote, PriceSeen, stored_line
from services.forecasting import price_cubes
from store.bulk import insert_rows, update_rows

#: How long after kick-off a match still gets its closing line from the history (a sync that
#: did not run for longer leaves it to the season files' closing columns).
CLOSE_WITHIN = timedelta(days=7)

HISTORY_FIELDS = [
    "match",
    "market",
    "line",
    "bookmaker",
    "selection",
    "price",
    "source",
    "first_seen_at",
    "last_seen_at",
]


def record(odds_by_match: dict[int, list], source: str, now) -> set[int]:
    """Keep the pre-match prices of ``odds_by_match`` (match id → its odds records) seen at
    ``now`` for matches still to kick off; returns the ids whose prices changed (a new price,
    or a price never seen before)."""
    upcoming = set(
        Match.select(Match.id)
        .where(Match.id.in_(list(odds_by_match)) & (Match.kickoff_at > now))
        .tuples()
    )
    upcoming = {match_id for (match_id,) in upcoming}
    if not upcoming:
        return set()
    latest = {}
    query = (
        PriceSeen.select(
            PriceSeen.id,
            PriceSeen.match,
            PriceSeen.market,
            PriceSeen.line,
            PriceSeen.bookmaker,
            PriceSeen.selection,
            PriceSeen.price,
        )
        .where(PriceSeen.match.in_(sorted(upcoming)))
        .order_by(PriceSeen.first_seen_at)
    )
    for row_id, match_id, market, line, bookmaker, selection, price in query.tuples():
        latest[(match_id, market, line, bookmaker, selection)] = (row_id, price)
    new, seen_again, changed = [], [], set()
    for match_id in sorted(upcoming):
        for quote in odds_by_match[match_id]:
            if quote.is_closing:
                continue
            line = stored_line(quote.market, quote.line)
            key = (match_id, quote.market, line, quote.bookmaker, quote.selection)
            before = latest.get(key)
            if before is not None and before[1] == quote.price:
                if before[0] is not None:
                    seen_again.append((before[0], now))
                continue
            new.append((*key, quote.price, source, now, now))
            latest[key] = (None, quote.price)
            changed.add(match_id)
    insert_rows(PriceSeen, HISTORY_FIELDS, new)
    update_rows(PriceSeen, {"last_seen_at": "timestamp"}, sorted(set(seen_again)))
    return changed


def close(now) -> set[int]:
    """Give the matches that kicked off in the last CLOSE_WITHIN their closing line from the
    history where no source gave one; returns the ids of the matches given one."""
    kicked = dict(
        Match.select(Match.id, Match.kickoff_at)
        .where((Match.kickoff_at <= now) & (Match.kickoff_at > now - CLOSE_WITHIN))
        .where(Match.id.in_(PriceSeen.select(PriceSeen.match).distinct()))
        .tuples()
    )
    if not kicked:
        return set()
    closed = set(
        OddsQuote.select(OddsQuote.match, OddsQuote.market, OddsQuote.line, OddsQuote.bookmaker)
        .where(OddsQuote.match.in_(list(kicked)) & OddsQuote.is_closing)
        .distinct()
        .tuples()
    )
    last = {}
    query = (
        PriceSeen.select(
            PriceSeen.match,
            PriceSeen.market,
            PriceSeen.line,
            PriceSeen.bookmaker,
            PriceSeen.selection,
            PriceSeen.price,
            PriceSeen.first_seen_at,
        )
        .where(PriceSeen.match.in_(list(kicked)))
        .order_by(PriceSeen.first_seen_at)
    )
    for match_id, market, line, bookmaker, selection, price, first_seen in query.tuples():
        if first_seen < kicked[match_id] and (match_id, market, line, bookmaker) not in closed:
            last[(match_id, market, line, bookmaker, selection)] = price
    books = defaultdict(dict)
    for (match_id, market, line, bookmaker, selection), price in last.items():
        books[(match_id, market, line, bookmaker)][selection] = price
    rows, given = [], set()
    for (match_id, market, line, bookmaker), prices in sorted(books.items()):
        selections = MARKET_SELECTIONS[market]
        if set(prices) != set(selections):
            continue  # a closing line is a whole market at one line
        for selection in selections:
            rows.append(
                (match_id, market, line, True, bookmaker, selection, prices[selection], SEEN_LINE)
            )
        given.add(match_id)
    insert_rows(
        OddsQuote,
        [
            "match",
            "market",
            "line",
            "is_closing",
            "bookmaker",
            "selection",
            "price",
            "closing_line",
        ],
        rows,
    )
    price_cubes.summarise(given)
    return given
