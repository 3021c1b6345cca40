"""The picks of a day, each with its match."""

from engine.markets import market_line
from enums import MARKETS, PICK_RATINGS
from models import Match
from services.queries import within
from services.reads import cards


def for_day(
    day, ratings=None, markets=None, line=None, viewer=None, now=None, settings=None
) -> dict:
    """The picks of matches kicking off on ``day`` (a span; its UTC day counts), ordered by
    kick-off, then rating (A first), market and id; filtered by rating, market and line (as
    the answer writes it: see ``engine.markets.market_line``); stakes by ``settings``'s rule."""
    day = day.whole_day()
    query = within(cards.matches(), Match.kickoff_at, day, day)
    items = []
    for card in cards.build(query, viewer, ("picks",), now, settings):
        for pick in card.pop("picks"):
            if (
                (ratings and pick["rating"] not in ratings)
                or (markets and pick["market"] not in markets)
                or (line is not None and market_line(pick["market"], pick["line"]) != line)
            ):
                continue
            items.append({**pick, "match": card})
    items.sort(
        key=lambda item: (
            item["match"]["kickoff_at"],
            PICK_RATINGS.index(item["rating"]),
            item["match"]["id"],
            MARKETS.index(item["market"]),
            item["id"],
        )
    )
    return {"date": day.day, "items": items}
