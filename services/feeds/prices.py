"""Price history, the current price across sources, and the service's own closing line.

**The merge rule.** Every pre-match price a sync sees for a match still to kick off is kept in
``price_seen`` as an observation of the source that gave it: one row per run of one price of one
bookmaker's selection at one line (``models.stored_line``: a handicap or goals line is a market
of its own here) *as that source quoted it*, with when it was first and last seen. A price seen
again moves ``last_seen_at``; a new row means that source's own price changed. The same
bookmaker quoted by two sources (football-data's ``fixtures.csv`` and The Odds API both carry
Pinnacle and William Hill) is two observations, so two sources that disagree never collide and,
answering in turn, write nothing new.

A bookmaker's **current price** (the import's pre-match ``odds_quote``, which the model reads) is
the freshest change: of each source's latest run, the one first seen last; two runs that began
at one moment are settled by :data:`SOURCE_ORDER` (the live API over the file published twice a
week). It moves only when some source's own price moves.

Once a match has kicked off, each bookmaker's market at each line whose source gave no closing
price gets one from the history by the same rule: the latest change of each selection first
seen before kick-off, whichever source saw it, stored as closing quotes (``is_closing``) marked
as the service's own line (``closing_line`` ``seen``), so settlement, CLV and fair closing EV
read it as they read a source's closing columns and each settled pick says which line it used.
A source's own closing price, arriving later (football-data's season files), replaces it.
"""

from collections import defaultdict
from datetime import timedelta

from enums import MARKET_SELECTIONS, SEEN_LINE
from models import Match, OddsQuote, PriceSeen, stored_line
from services.market import price_cubes
from store.bulk import insert_rows, update_rows

#: The sources in the order that settles a tie (two runs first seen at one moment): a later
#: one wins. The Odds API answers live; football-data's fixtures file is a snapshot.
SOURCE_ORDER = ("football-data", "the-odds-api")

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


#: A bookmaker's selection at one line of one match: what a price is the price of.
HISTORY_KEY = (
    PriceSeen.match,
    PriceSeen.market,
    PriceSeen.line,
    PriceSeen.bookmaker,
    PriceSeen.selection,
)


def freshest(observations) -> dict[tuple, float]:
    """The merge rule: each key's price from ``observations`` (``(*key, source, price,
    first_seen_at)`` rows of the history) taken from the run first seen last, a tie settled by
    :data:`SOURCE_ORDER`."""
    best = {}
    for *key, source, price, first_seen in observations:
        rank = (first_seen, SOURCE_ORDER.index(source) if source in SOURCE_ORDER else -1)
        key = tuple(key)
        if key not in best or rank >= best[key][0]:
            best[key] = (rank, price)
    return {key: price for key, (_, price) in best.items()}


def current(match_ids, now) -> set[int]:
    """Bring the pre-match quotes (``odds_quote``) of the matches of ``match_ids`` still to kick
    off at ``now`` to the merge rule's current price of each bookmaker's selection; returns the
    ids whose quotes changed (a quote new, or repriced)."""
    upcoming = [
        match_id
        for (match_id,) in Match.select(Match.id)
        .where(Match.id.in_(sorted(match_ids)) & (Match.kickoff_at > now))
        .tuples()
    ]
    if not upcoming:
        return set()
    query = PriceSeen.select(
        *HISTORY_KEY, PriceSeen.source, PriceSeen.price, PriceSeen.first_seen_at
    )
    merged = freshest(query.where(PriceSeen.match.in_(upcoming)).tuples())
    stored = {}
    quotes = OddsQuote.select(
        OddsQuote.id,
        OddsQuote.match,
        OddsQuote.market,
        OddsQuote.line,
        OddsQuote.bookmaker,
        OddsQuote.selection,
        OddsQuote.price,
    ).where(OddsQuote.match.in_(upcoming) & ~OddsQuote.is_closing)
    for quote_id, *key, price in quotes.tuples():
        stored[tuple(key)] = (quote_id, price)
    new, repriced, changed = [], [], set()
    for key, price in sorted(merged.items()):
        before = stored.get(key)
        if before is None:
            new.append((*key, False, price))
        elif before[1] != price:
            repriced.append((before[0], price))
        else:
            continue
        changed.add(key[0])
    insert_rows(
        OddsQuote, ["match", "market", "line", "bookmaker", "selection", "is_closing", "price"], new
    )
    update_rows(OddsQuote, {"price": "float"}, repriced)
    return changed


def record(odds_by_match: dict[int, list], source: str, now) -> set[int]:
    """Keep the pre-match prices of ``odds_by_match`` (match id → its odds records) that
    ``source`` showed at ``now`` for matches still to kick off; returns the ids whose prices,
    as that source quotes them, changed (a new price, or a price never seen before)."""
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
        .where(PriceSeen.match.in_(sorted(upcoming)) & (PriceSeen.source == source))
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
            if before is not None and before[0] is None:
                # given twice in one answer: one run begins now, at the last price given
                new[before[2]] = (*key, quote.price, source, now, now)
                latest[key] = (None, quote.price, before[2])
                continue
            latest[key] = (None, quote.price, len(new))
            new.append((*key, quote.price, source, now, now))
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
    query = PriceSeen.select(
        *HISTORY_KEY, PriceSeen.source, PriceSeen.price, PriceSeen.first_seen_at
    )
    observations = (
        row
        for row in query.where(PriceSeen.match.in_(list(kicked))).tuples()
        if row[-1] < kicked[row[0]] and tuple(row[:4]) not in closed
    )
    last = freshest(observations)
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
