"""A small world for the public pages' tests, built through the services at a fixed time: a
league's history, a live pick published before kick-off and settled (with its closing line),
an upcoming match whose pick is rated A (locked for anonymous readers), backfilled picks, a
calibration run and a signed ledger checkpoint."""

from datetime import UTC, datetime, timedelta

from models import Match
from services.forecasting import predictions
from services.operations import jobs
from services.record import settling, signed_log
from tests import factories

T0 = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
TEAMS = ("Rovers", "United", "Athletic", "City")
#: The backfilled picks laid on the history, in turn: (market, selection, price).
BACKFILLED = (
    ("1x2", "home", 2.1),
    ("ou25", "over", 1.95),
    ("btts", "yes", 1.8),
    ("1x2", "draw", 3.4),
)


def odds(home, draw, away, over=1.95, under=1.9, closing=False):
    """Pinnacle's quotes of 1x2 and over/under 2.5 (and BTTS), opening or closing."""
    prices = (
        ("1x2", "home", home),
        ("1x2", "draw", draw),
        ("1x2", "away", away),
        ("ou25", "over", over),
        ("ou25", "under", under),
        ("btts", "yes", 1.8),
        ("btts", "no", 2.0),
    )
    return [("pinnacle", market, selection, price, closing) for market, selection, price in prices]


def build(now=T0) -> dict:
    """The world as it stands at ``now`` (needs an app context); returns the slugs of its
    notable pages."""
    T0 = now  # noqa: N806 (the instant everything is placed around)
    settings = factories.settings()
    goals = [(2, 1), (0, 0), (1, 3), (2, 2), (3, 0), (1, 1)]
    for week in range(16, 0, -1):
        home, away = TEAMS[week % 4], TEAMS[(week + 1 + week // 4) % 4]
        if home == away:
            away = TEAMS[(week + 2) % 4]
        factories.match(
            home,
            away,
            kickoff=T0 - timedelta(days=3 + 7 * week),
            goals=goals[week % len(goals)],
            season="2025-26",  # the history's season: the fixtures below are the next one's
            odds=odds(2.1, 3.4, 3.6) + odds(2.0, 3.5, 3.8, closing=True),
        )
    published_at = T0 - timedelta(days=2)
    settled = factories.match(
        "Rovers",
        "United",
        kickoff=T0 - timedelta(days=1),
        status="scheduled",
        odds=odds(2.2, 3.3, 3.4),
    )
    locked = factories.match(
        "Athletic",
        "City",
        kickoff=T0 + timedelta(hours=6),
        status="scheduled",
        odds=odds(2.5, 3.2, 2.9),
    )
    later = factories.match(
        "City",
        "Rovers",
        kickoff=T0 + timedelta(days=2),
        status="scheduled",
        odds=odds(1.9, 3.6, 4.2),
    )
    predictions.backfill(settings, now=published_at)
    factories.pick(
        settled,
        "1x2",
        "home",
        2.2,
        probability=0.5,
        edge=0.1,
        rating="B",
        is_live=True,
        created_at=published_at,
    )
    factories.pick(
        locked,
        "1x2",
        "away",
        2.9,
        probability=0.4,
        edge=0.16,
        rating="A",
        is_live=True,
        created_at=published_at,
    )
    signed_log.publish_new([settled.id, locked.id], published_at, "test-1")
    signed_log.checkpoint(published_at, settings)
    factories.match(
        "Rovers",
        "United",
        kickoff=settled.kickoff_at,
        goals=(2, 0),
        odds=odds(2.0, 3.4, 3.9, closing=True),
    )
    history = Match.select().where(Match.season == "2025-26").order_by(Match.kickoff_at)
    for index, match in enumerate(history):  # the walk-forward record's picks
        market, selection, price = BACKFILLED[index % len(BACKFILLED)]
        factories.pick(match, market, selection, price, rating="ABC"[index % 3])
    settling.run(200, settings, now=T0 - timedelta(hours=2))
    jobs.calibrate(365, settings, now=T0 - timedelta(hours=1))
    return {
        "settled": Match.get_by_id(settled.id).slug,
        "locked": Match.get_by_id(locked.id).slug,
        "later": Match.get_by_id(later.id).slug,
    }
