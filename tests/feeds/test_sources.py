"""The sources' formats and rules: The Odds API's answers and costs, the monthly budget's pace, and
the fetch policy's Retry-After."""

from datetime import UTC, datetime

import pytest

from services.feeds.formats import oddsapi
from services.feeds.sources import http, odds_api

EVENT = {
    "id": "e1",
    "sport_key": "soccer_epl",
    "sport_title": "EPL",
    "commence_time": "2024-03-30T12:30:00Z",
    "home_team": "Newcastle United",
    "away_team": "West Ham United",
    "bookmakers": [
        {
            "key": "pinnacle",
            "title": "Pinnacle",
            "last_update": "2024-03-29T10:00:00Z",
            "markets": [
                {
                    "key": "h2h",
                    "outcomes": [
                        {"name": "Newcastle United", "price": 1.9},
                        {"name": "West Ham United", "price": 4.1},
                        {"name": "Draw", "price": 3.8},
                    ],
                },
                {
                    "key": "totals",
                    "outcomes": [
                        {"name": "Over", "price": 1.7, "point": 3.5},
                        {"name": "Under", "price": 2.2, "point": 3.5},
                        {"name": "Over", "price": 1.45, "point": 2.5},
                        {"name": "Under", "price": 2.8, "point": 2.5},
                    ],
                },
            ],
        },
        {
            "key": "williamhill",
            "title": "William Hill",
            "markets": [
                {
                    "key": "h2h",
                    "outcomes": [
                        {"name": "Newcastle United", "price": 1.85},
                        {"name": "Draw", "price": 0.9},
                        {"name": "West Ham United", "price": 4.0},
                    ],
                }
            ],
        },
    ],
}


def test_an_odds_answer_gives_whole_markets_at_each_line():
    parsed = oddsapi.parse_odds([EVENT, {"home_team": "A"}], "E0")
    (match,) = parsed.matches
    assert match.kickoff_at == datetime(2024, 3, 30, 12, 30, tzinfo=UTC)
    assert match.season == "2023-24" and match.league.code == "E0"
    prices = {(o.bookmaker, o.market, o.selection, o.line): o.price for o in match.odds}
    assert prices == {
        ("pinnacle", "1x2", "home", None): 1.9,
        ("pinnacle", "1x2", "draw", None): 3.8,
        ("pinnacle", "1x2", "away", None): 4.1,
        ("pinnacle", "ou", "over", 3.5): 1.7,
        ("pinnacle", "ou", "under", 3.5): 2.2,
        ("pinnacle", "ou25", "over", 2.5): 1.45,
        ("pinnacle", "ou25", "under", 2.5): 2.8,
    }  # William Hill's draw at 0.9 drops its whole market
    assert [row.line for row in parsed.rejected] == [2]


def _book(key, markets):
    return {**EVENT, "bookmakers": [{"key": key, "title": key, "markets": markets}]}


def _spread(home_point, away_point, home_price=1.95, away_price=1.9):
    return {
        "key": "spreads",
        "outcomes": [
            {"name": "Newcastle United", "price": home_price, "point": home_point},
            {"name": "West Ham United", "price": away_price, "point": away_point},
        ],
    }


def _quotes(event):
    (match,) = oddsapi.parse_odds([event], "E0").matches
    return [(o.bookmaker, o.market, o.selection, o.line, o.price) for o in match.odds]


def test_spreads_are_the_asian_handicap_at_the_home_teams_point():
    assert _quotes(_book("pinnacle", [_spread(-0.75, 0.75)])) == [
        ("pinnacle", "ah", "home", -0.75, 1.95),
        ("pinnacle", "ah", "away", -0.75, 1.9),
    ]
    # The away outcome listed first, at a positive home line; a level line is 0, not -0.
    event = _book("betfred", [{"key": "spreads", "outcomes": [
        {"name": "West Ham United", "price": 2.1, "point": -1.25},
        {"name": "Newcastle United", "price": 1.75, "point": 1.25},
    ]}])  # fmt: skip
    assert _quotes(event) == [
        ("betfred", "ah", "home", 1.25, 1.75),
        ("betfred", "ah", "away", 1.25, 2.1),
    ]
    level = _quotes(_book("pinnacle", [_spread(0, -0.0)]))
    assert [q[3] for q in level] == [0.0, 0.0] and all(str(q[3]) == "0.0" for q in level)


@pytest.mark.parametrize(
    "spread",
    [
        _spread(-0.75, -0.75),  # the away point must be the home point's negative
        _spread(-0.5, 0.25),
        _spread(-0.3, 0.3),  # not a quarter-goal line
        _spread(-0.5, None),  # a point missing
        _spread("-0.5", 0.5),  # a point as text
        _spread(-0.5, 0.5, home_price=1.0),  # not a price above 1.0
        {"key": "spreads", "outcomes": [{"name": "Newcastle United", "price": 1.9, "point": -0.5}]},
    ],
)
def test_a_spread_whose_legs_do_not_fit_is_left_out(spread):
    assert _quotes(_book("pinnacle", [spread])) == []


def test_totals_at_every_point_with_both_sides():
    totals = {"key": "totals", "outcomes": [
        {"name": "Over", "price": 1.8, "point": 2.25},
        {"name": "Under", "price": 2.0, "point": 2.25},
        {"name": "Over", "price": 2.3, "point": 3.0},  # no under at 3.0: left out
        {"name": "Under", "price": 1.6, "point": 2.75},  # no over at 2.75: left out
        {"name": "Over", "price": 0.5, "point": 4.0},  # not a price: 4.0 left out
        {"name": "Under", "price": 1.2, "point": 4.0},
        {"name": "Over", "price": 1.5, "point": 2.5},
        {"name": "Under", "price": 2.6, "point": 2.5},
    ]}  # fmt: skip
    assert _quotes(_book("pinnacle", [totals])) == [
        ("pinnacle", "ou", "over", 2.25, 1.8),
        ("pinnacle", "ou", "under", 2.25, 2.0),
        ("pinnacle", "ou25", "over", 2.5, 1.5),
        ("pinnacle", "ou25", "under", 2.5, 2.6),
    ]


def test_a_bookmakers_first_quote_at_a_line_is_kept():
    event = _book("pinnacle", [_spread(-0.5, 0.5), _spread(-0.5, 0.5, 2.5, 1.5), _spread(0, 0)])
    assert [(q[3], q[4]) for q in _quotes(event)] == [
        (-0.5, 1.95),
        (-0.5, 1.9),
        (0.0, 1.95),
        (0.0, 1.9),
    ]


def test_the_markets_a_call_may_request():
    assert set(oddsapi.MARKETS) == {"h2h", "spreads", "totals"}


def test_a_scores_answer_gives_finished_matches_only():
    finished = {**EVENT, "completed": True, "scores": [
        {"name": "West Ham United", "score": "3"}, {"name": "Newcastle United", "score": "4"}
    ]}  # fmt: skip
    playing = {**EVENT, "id": "e2", "completed": False, "scores": None}
    (match,) = oddsapi.parse_scores([finished, playing], "E0").matches
    assert (match.status, match.home_goals, match.away_goals) == ("finished", 4, 3)


@pytest.mark.parametrize("payload", [{"message": "quota"}, "text", None])
def test_an_answer_not_a_list_is_refused(payload):
    with pytest.raises(oddsapi.OddsApiError):
        oddsapi.parse_odds(payload, "E0")


def test_costs_and_sports():
    assert oddsapi.odds_cost(2, 3) == 6 and oddsapi.scores_cost(3) == 2
    assert oddsapi.scores_cost(None) == 1
    assert oddsapi.sports("soccer_epl:E0, soccer_x:SP1") == {"soccer_epl": "E0", "soccer_x": "SP1"}
    with pytest.raises(ValueError, match="known division"):
        oddsapi.sports("soccer_epl:XX")


def test_retry_after_reads_seconds_and_dates():
    now = datetime(2024, 3, 29, 15, 0, tzinfo=UTC)
    assert http.retry_after("120", now) == 120.0
    assert http.retry_after("Fri, 29 Mar 2024 15:02:00 GMT", now) == 120.0
    assert http.retry_after("soon", now) is None and http.retry_after(None, now) is None


def test_the_monthly_budget_is_paced_over_the_days():
    assert odds_api.paced_budget(310, datetime(2024, 3, 1, 9, tzinfo=UTC)) == 10
    assert odds_api.paced_budget(310, datetime(2024, 3, 31, 23, tzinfo=UTC)) == 310
    assert odds_api.paced_budget(290, datetime(2024, 2, 10, tzinfo=UTC)) == 100  # 29 days
