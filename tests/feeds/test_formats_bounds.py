"""Sane bounds of a quoted market (services.feeds.formats.bounds): prices, lines and overround, and
the whole market refused with a reason when one of them is out."""

import math

import pytest

from engine.records import OddsRecord
from services.feeds.formats import bounds, footballdata
from tests.data import FOOTBALL_DATA, needs_football_data


@pytest.mark.parametrize(
    ("price", "problem"),
    [
        (1.01, None),
        (1000, None),
        (2.5, None),
        (1.0000001, "outside [1.01, 1000]"),
        (1.0, "outside"),
        (1000.5, "outside"),
        (math.nan, "outside"),
        (math.inf, "outside"),
        (-2.0, "outside"),
        (10**400, "is not a number"),  # an int no float holds
        ("2.5", "is not a number"),
        (True, "is not a number"),
        (None, "is not a number"),
        ([2.5], "is not a number"),
    ],
)
def test_a_price_is_a_decimal_within_the_exchange_ladder(price, problem):
    found = bounds.price_problem(price)
    assert found is None if problem is None else problem in found


@pytest.mark.parametrize(
    ("market", "line", "problem"),
    [
        ("ah", -0.75, None),
        ("ah", 10, None),
        ("ah", -10.0, None),
        ("ah", 10.25, "beyond ±10"),
        ("ah", 0.3, "multiple of 0.25"),
        ("ah", math.nan, "multiple of 0.25"),
        ("ah", None, "not a number"),
        ("ou", 0.5, None),
        ("ou", 10.5, None),
        ("ou", 2.25, None),
        ("ou", 0.25, "outside [0.5, 10.5]"),
        ("ou", 11.0, "outside [0.5, 10.5]"),
        ("ou", -2.5, "outside"),
        ("ou25", 2.5, None),
        ("ou25", 3.5, "is 2.5"),
        ("1x2", None, None),
        ("1x2", 0.5, "has no line"),
    ],
)
def test_lines_are_quarter_goals_within_each_markets_range(market, line, problem):
    found = bounds.line_problem(market, line)
    assert found is None if problem is None else problem in found


def test_the_probes_sharp_line_and_an_arbitrage_are_refused():
    assert "1.0000001" in bounds.market_problem("1x2", "pinnacle", None, [1.0000001, 1000, 1000])
    # Within every price bound, but a book paying out whichever way the match goes:
    assert "overround 0.8078" in bounds.market_problem("1x2", "pinnacle", None, [1.6, 1000, 5.5])
    assert "overround 2.5000" in bounds.market_problem("1x2", "bet365", None, [1.2, 1.2, 1.2])
    assert bounds.market_problem("1x2", "pinnacle", None, [1.9, 3.6, 4.4]) is None
    # An aggregate (an average of books at different lines) may sit below 1, down to 0.8.
    assert bounds.market_problem("ah", "market-average", -0.25, [2.3, 2.4]) is None
    assert "overround" in bounds.market_problem("ah", "pinnacle", -0.25, [2.3, 2.4])
    assert "2 prices" in bounds.market_problem("ah", "pinnacle", -0.25, [1.9, 1.9, 1.9])


def test_screen_refuses_whole_markets_and_keeps_the_rest():
    odds = [
        OddsRecord("pinnacle", "1x2", "home", 1.0000001),
        OddsRecord("pinnacle", "1x2", "draw", 1000.0),
        OddsRecord("pinnacle", "1x2", "away", 1000.0),
        OddsRecord("pinnacle", "ou25", "over", 1.9, line=2.5),
        OddsRecord("pinnacle", "ou25", "under", 1.95, line=2.5),
        OddsRecord("bet365", "ah", "home", 1.9, line=12.0),
        OddsRecord("bet365", "ah", "away", 1.9, line=12.0),
        OddsRecord("bet365", "ah", "home", 1.9, line=-0.5, is_closing=True),
        OddsRecord("bet365", "ah", "away", 1.95, line=-0.5, is_closing=True),
        OddsRecord("bwin", "ou", "over", 1.9, line=3.5),  # no under
    ]
    kept, reasons = bounds.screen(odds)
    assert kept == [odds[3], odds[4], odds[7], odds[8]]
    assert reasons == [
        "pinnacle 1x2 refused: the price 1.0000001 is outside [1.01, 1000]",
        "bet365 ah 12 refused: the handicap 12 is beyond ±10 goals",
        "bwin ou 3.5 refused: its selections over are not over, under",
    ]


def test_footballdata_screen_counts_what_it_leaves_out():
    text = (
        "Div,Date,HomeTeam,AwayTeam,PSH,PSD,PSA,B365H,B365D,B365A\n"
        "E0,30/03/2024,Arsenal,Chelsea,1.6,1000,5.5,1.9,3.6,4.4\n"
    )
    parsed = footballdata.parse(text)
    assert len(parsed.matches[0].odds) == 6  # the parser takes each price in range
    (note,) = footballdata.screen(parsed)
    assert note.line == 2 and note.reason.startswith("pinnacle 1x2 refused: its overround 0.8078")
    assert parsed.prices_skipped == 3
    assert {odd.bookmaker for odd in parsed.matches[0].odds} == {"bet365"}


@pytest.mark.slow
@needs_football_data
def test_every_shared_price_set_is_within_the_bounds():
    """The figures the bounds were chosen by (docs/operations.md, Sane bounds): no real set of
    the 30 shared files is left out."""
    files = sorted(FOOTBALL_DATA.glob("*.csv"))
    assert len(files) == 30
    for path in files:
        parsed = footballdata.parse(path.read_text(encoding="utf-8", errors="replace"))
        assert footballdata.screen(parsed) == [], path.name
