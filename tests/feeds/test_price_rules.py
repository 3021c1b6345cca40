"""The merge rule's own functions (``services.feeds.prices``) on rows the tests write: the freshest
change wins, ties by the source order; the history keeps runs; the closing line from before
kick-off only, a whole market at a time, never over a source's own."""

from datetime import timedelta

from engine.records import OddsRecord
from models import OddsQuote, PriceSeen
from services.feeds import prices
from tests import factories, helpers

T = helpers.NOW
KEY = (1, "1x2", 0.0, "bet365", "home")


def test_the_run_first_seen_last_wins_whatever_the_order_of_the_rows():
    rows = [
        (*KEY, "the-odds-api", 2.0, T),
        (*KEY, "football-data", 2.2, T + timedelta(minutes=5)),
        (*KEY, "the-odds-api", 2.1, T - timedelta(minutes=5)),
    ]
    assert prices.freshest(rows) == {KEY: 2.2}
    assert prices.freshest(list(reversed(rows))) == {KEY: 2.2}


def test_a_tie_goes_to_the_later_source_in_the_order_then_to_the_later_row():
    api, file = (*KEY, "the-odds-api", 2.0, T), (*KEY, "football-data", 2.5, T)
    assert prices.freshest([api, file]) == prices.freshest([file, api]) == {KEY: 2.0}
    unknown = (*KEY, "elsewhere", 3.0, T)
    assert prices.freshest([unknown, file]) == {KEY: 2.5}  # an unknown source ranks first
    assert prices.freshest([file, unknown]) == {KEY: 2.5}
    assert prices.freshest([(*KEY, "football-data", 2.6, T), file]) == {KEY: 2.5}
    other = (1, "1x2", 0.0, "bet365", "away")
    assert prices.freshest([api, (*other, "football-data", 4.0, T)]) == {KEY: 2.0, other: 4.0}
    assert prices.freshest([]) == {}


def quotes(*prices_, bookmaker="bet365", closing=False):
    """1x2 quotes of ``bookmaker`` at home, draw, away prices."""
    return [
        OddsRecord(bookmaker, "1x2", selection, price, is_closing=closing)
        for selection, price in zip(("home", "draw", "away"), prices_, strict=True)
    ]


def history():
    """The history as (source, selection, price, first seen, last seen), sorted."""
    rows = PriceSeen.select(
        PriceSeen.source,
        PriceSeen.selection,
        PriceSeen.price,
        PriceSeen.first_seen_at,
        PriceSeen.last_seen_at,
    )
    return sorted(rows.tuples())


def test_the_history_keeps_runs_of_one_price_per_source(ctx):
    kickoff = T + timedelta(days=1)
    match = factories.match(kickoff=kickoff, status="scheduled")
    later = T + timedelta(hours=1)
    seen = quotes(2.0, 3.4, 3.9) + quotes(9.0, 9.0, 9.0, closing=True)
    assert prices.record({match.id: seen}, "the-odds-api", T) == {match.id}
    assert prices.record({match.id: quotes(2.0, 3.4, 3.9)}, "the-odds-api", later) == set()
    assert history() == [
        ("the-odds-api", selection, price, T, later)
        for selection, price in sorted({"away": 3.9, "draw": 3.4, "home": 2.0}.items())
    ]
    back = T + timedelta(hours=3)
    prices.record({match.id: quotes(2.1, 3.4, 3.9)}, "the-odds-api", T + timedelta(hours=2))
    assert prices.record({match.id: quotes(2.0, 3.4, 3.9)}, "the-odds-api", back) == {match.id}
    homes = [row[2:] for row in history() if row[1] == "home"]
    assert homes == [(2.0, T, later), (2.0, back, back), (2.1, *[T + timedelta(hours=2)] * 2)]
    # another source's equal price is an observation of its own
    assert prices.record({match.id: quotes(2.0, 3.4, 3.9)}, "football-data", back) == {match.id}
    assert PriceSeen.select().where(PriceSeen.source == "football-data").count() == 3


def test_a_price_given_twice_in_one_answer_begins_one_run_at_the_last_price(ctx):
    """A source naming one match twice (a duplicate event) with two prices of a bookmaker's
    selection: one run, at the last price (two rows of one instant broke the history's key,
    and with it that source's whole part of the sync)."""
    match = factories.match(kickoff=T + timedelta(days=1), status="scheduled")
    twice = quotes(2.0, 3.4, 3.9) + quotes(2.1, 3.4, 3.9)
    assert prices.record({match.id: twice}, "the-odds-api", T) == {match.id}
    assert [row[1:3] for row in history()] == [("away", 3.9), ("draw", 3.4), ("home", 2.1)]


def test_nothing_is_kept_of_a_match_that_has_kicked_off(ctx):
    match = factories.match(kickoff=T, status="scheduled")
    assert prices.record({match.id: quotes(2.0, 3.4, 3.9)}, "the-odds-api", T) == set()
    assert prices.current([match.id], T) == set()
    assert PriceSeen.select().count() == 0


def test_the_current_quote_follows_the_freshest_change(ctx):
    kickoff = T + timedelta(days=1)
    match = factories.match(kickoff=kickoff, status="scheduled", odds=())
    prices.record({match.id: quotes(2.0, 3.4, 3.9)}, "the-odds-api", T)
    assert prices.current([match.id], T) == {match.id}
    assert prices.current([match.id], T) == set()  # nothing moved: nothing written
    prices.record({match.id: quotes(2.2, 3.4, 3.9)}, "football-data", T + timedelta(hours=1))
    assert prices.current([match.id], T + timedelta(hours=1)) == {match.id}
    current = OddsQuote.select(OddsQuote.selection, OddsQuote.price, OddsQuote.is_closing)
    assert sorted(current.tuples()) == [
        ("away", 3.9, False),
        ("draw", 3.4, False),
        ("home", 2.2, False),
    ]
    assert prices.current([match.id], kickoff) == set()  # kicked off: left as it was


def test_the_closing_line_comes_from_before_kick_off_a_whole_market_at_a_time(ctx):
    kickoff = T + timedelta(hours=3)
    match = factories.match(kickoff=kickoff, status="scheduled")
    prices.record({match.id: quotes(2.0, 3.4, 3.9)}, "the-odds-api", T)
    prices.record({match.id: quotes(2.1, 3.3, 3.8)}, "football-data", T + timedelta(hours=1))
    # william-hill quoted home and draw only: no closing line of its own
    partial = [OddsRecord("william-hill", "1x2", s, 2.0) for s in ("home", "draw")]
    prices.record({match.id: partial}, "the-odds-api", T)
    # seen after kick-off (a late row): not the close
    assert prices.close(kickoff - timedelta(minutes=1)) == set()
    assert prices.close(kickoff + prices.CLOSE_WITHIN + timedelta(minutes=1)) == set()
    assert prices.close(kickoff + timedelta(hours=1)) == {match.id}
    closing = OddsQuote.select(
        OddsQuote.bookmaker, OddsQuote.selection, OddsQuote.price, OddsQuote.closing_line
    ).where(OddsQuote.is_closing)
    assert sorted(closing.tuples()) == [
        ("bet365", "away", 3.8, "seen"),
        ("bet365", "draw", 3.3, "seen"),
        ("bet365", "home", 2.1, "seen"),
    ]
    assert prices.close(kickoff + timedelta(hours=2)) == set()  # closed: never twice


def test_a_price_first_seen_after_kick_off_is_not_the_close(ctx):
    kickoff = T + timedelta(hours=3)
    match = factories.match(kickoff=kickoff, status="scheduled")
    prices.record({match.id: quotes(2.0, 3.4, 3.9)}, "the-odds-api", T)
    PriceSeen.insert(
        match=match.id,
        market="1x2",
        line=0.0,
        bookmaker="bet365",
        selection="home",
        price=5.0,
        source="the-odds-api",
        first_seen_at=kickoff,
        last_seen_at=kickoff,
    ).execute()
    assert prices.close(kickoff + timedelta(hours=1)) == {match.id}
    home = OddsQuote.get(OddsQuote.is_closing & (OddsQuote.selection == "home"))
    assert home.price == 2.0
