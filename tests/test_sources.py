"""The sources' formats and rules: The Odds API's answers and costs, the monthly budget's pace, and
the fetch policy's Retry-After."""

from datetime import UTC, datetime

import pytest

from engine import oddsapi
from services.feeds import sources
from services.feeds.sources import http

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


def test_an_odds_answer_gives_whole_markets_at_the_2_5_line():
    parsed = oddsapi.parse_odds([EVENT, {"home_team": "A"}], "E0")
    (match,) = parsed.matches
    assert match.kickoff_at == datetime(2024, 3, 30, 12, 30, tzinfo=UTC)
    assert match.season == "2023-24" and match.league.code == "E0"
    prices = {(o.bookmaker, o.market, o.selection): o.price for o in match.odds}
    assert prices == {
        ("pinnacle", "1x2", "home"): 1.9,
        ("pinnacle", "1x2", "draw"): 3.8,
        ("pinnacle", "1x2", "away"): 4.1,
        ("pinnacle", "ou25", "over"): 1.45,
        ("pinnacle", "ou25", "under"): 2.8,
    }  # William Hill's draw at 0.9 drops its whole market
    assert [row.line for row in parsed.rejected] == [2]


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
    assert sources.paced_budget(310, datetime(2024, 3, 1, 9, tzinfo=UTC)) == 10
    assert sources.paced_budget(310, datetime(2024, 3, 31, 23, tzinfo=UTC)) == 310
    assert sources.paced_budget(290, datetime(2024, 2, 10, tzinfo=UTC)) == 100  # 29 days
