"""Every track-record figure that leaves picks out says how many: the settled picks without a
closing price (`clvExcluded`) or a fair closing probability (`closingEvExcluded`), counted
through settlement, in the JSON answer and on the page."""

from datetime import timedelta

from services.record import settling
from tests import factories
from tests.helpers import ok

TRACK_RECORD = "/api/v1/data/track-record"
HTML = {"Accept": "text/html"}

CLOSE_1X2 = [
    ("pinnacle", "1x2", "home", 1.8, True),
    ("pinnacle", "1x2", "draw", 3.9, True),
    ("pinnacle", "1x2", "away", 4.6, True),
]
CLOSE_OU25 = [
    ("pinnacle", "ou25", "over", 1.9, True, 2.5),
    ("pinnacle", "ou25", "under", 1.95, True, 2.5),
]


def test_the_picks_without_a_closing_value_are_counted(client):
    """Four backfilled picks settled: a 1x2 pick at its close (in both averages), an
    over/under 2.75 pick whose close quotes only 2.5 (valued from it: a fair closing
    probability, no closing price), an Asian handicap pick without a handicap close (neither),
    and one still to kick off (pending, left out as pending)."""
    with client.application.app_context():
        kickoff = factories.now() - timedelta(days=1)
        played = [
            factories.match(f"H{i}", f"A{i}", kickoff=kickoff, odds=CLOSE_1X2 + CLOSE_OU25)
            for i in range(3)
        ]
        later = factories.match("L1", "L2", status="scheduled", kickoff=kickoff + timedelta(days=3))
        factories.pick(played[0], "1x2", "home", odds=2.0)
        factories.pick(played[1], "ou", "over", odds=2.2, line=2.75)
        factories.pick(played[2], "ah", "home", odds=1.9, line=-0.25)
        factories.pick(later, "1x2", "home", odds=2.0)
        settling.settle_pending(factories.settings())
        headers = factories.people()["pro"][1]
    record = ok(client.get(TRACK_RECORD, headers=headers))["backfilled"]
    assert (record["picks"], record["pending"]) == (4, 1)
    assert (record["clvExcluded"], record["closingEvExcluded"]) == (2, 1)
    by_market = {row["market"]: row for row in record["byMarket"]}
    counted = {
        market: (row["picks"], row["clvExcluded"], row["closingEvExcluded"])
        for market, row in by_market.items()
        if row["picks"]
    }
    assert counted == {"1x2": (2, 0, 0), "ou": (1, 1, 0), "ah": (1, 1, 1)}
    assert by_market["ou"]["avgClosingEv"] is not None and by_market["ou"]["avgClv"] is None
    assert by_market["ah"]["avgClosingEv"] is None
    text = client.get("/track-record", headers=HTML).get_data(as_text=True)
    backfilled = text.split("<h2>Backfilled record")[1]
    assert "(2 settled picks without a closing price left out)" in backfilled
    assert "(1 settled pick without a fair closing probability left out)" in backfilled
