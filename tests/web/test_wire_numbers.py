"""Numbers on the wire: money to 2 decimals, probabilities and edges to 6, in answers, exports and
webhook payloads alike, and the OpenAPI description says so."""

from schemas.exports import PickRowSchema
from schemas.matches import PickSchema
from schemas.records import FiguresSchema
from schemas.rows import flat_rows
from schemas.webhooks import PickSettledDataSchema


def test_money_is_written_to_the_cent_and_ratios_to_a_millionth():
    figures = FiguresSchema().dump(
        {
            "profit": -3.9100000000000024,  # what summing -1.0 stakes and prices made
            "staked": 12.000000000000002,
            "max_drawdown": 4.105,
            "roi": -0.32583333333333336,
            "hit_rate": 1 / 3,
            "avg_edge": None,
        }
    )
    assert figures["profit"] == -3.91 and figures["staked"] == 12.0
    assert figures["roi"] == -0.325833 and figures["hitRate"] == 0.333333
    assert figures["avgEdge"] is None
    pick = PickSchema(only=("probability", "edge", "stake", "profit", "odds")).dump(
        {"probability": 0.4123456789, "edge": -0.0000001, "stake": 1, "profit": 1.1, "odds": 2.1}
    )
    assert pick == {"odds": 2.1, "probability": 0.412346, "edge": 0.0, "stake": 1.0, "profit": 1.1}
    assert str(pick["edge"]) == "0.0"  # never "-0.0"


def test_a_mean_of_odds_is_written_to_two_decimals_like_a_price():
    figures = FiguresSchema(only=("avg_odds",)).dump({"avg_odds": 2.7255172413793103})
    assert figures == {"avgOdds": 2.73}
    assert FiguresSchema(only=("avg_odds",)).dump({"avg_odds": None}) == {"avgOdds": None}


def test_every_mean_of_odds_or_money_in_the_track_record_is_rounded(client):
    """No float of the figures (track record, Data API, backtests, exports) is written as it
    was computed: each is money (2), a mean of odds (2) or a ratio (6)."""
    spec = client.get("/openapi.json").get_json()
    figures = spec["components"]["schemas"]["Figures"]["properties"]
    numbers = {name: field for name, field in figures.items() if "number" in field["type"]}
    assert "avgOdds" in numbers and "roi" in numbers
    said = {name: field["description"] for name, field in numbers.items()}
    unrounded = [name for name, description in said.items() if "Rounded to" not in description]
    assert unrounded == []
    assert "Rounded to 2 decimals." in figures["avgOdds"]["description"]


def test_webhook_payloads_round_like_answers():
    data = PickSettledDataSchema(only=("profit",)).dump({"profit": -3.9100000000000024})
    assert data == {"profit": -3.91}


def test_exports_round_like_answers():
    schema = PickRowSchema(only=("profit", "probability", "odds"))
    names, convert = flat_rows(schema)
    row = dict(zip(names, convert([-3.9100000000000024, 0.5000004999, 2.05]), strict=True))
    assert row == {"profit": -3.91, "probability": 0.5, "odds": 2.05}


def test_the_openapi_description_says_how_numbers_are_rounded(client):
    spec = client.get("/openapi.json").get_json()
    figures = spec["components"]["schemas"]["Figures"]["properties"]
    assert "Rounded to 2 decimals." in figures["profit"]["description"]
    assert "Rounded to 6 decimals." in figures["roi"]["description"]
    assert "2 decimals" in spec["info"]["description"]
