"""The demo world: synthetic leagues with results and odds, then the whole pipeline over them.

``build`` makes the database a service that has been running: the world around an instant,
its last ``LIVE_DAYS`` days replayed as the live service would have run them
(:mod:`services.feeds.replay`), so there are live picks made before their kick-offs and settled
since, a ledger with its checkpoints, upcoming picks of every rating, and a calibration run, both
recorded as the schedule's jobs (so it sits with them, above the feeds it builds from).
"""

from datetime import timedelta

from engine.demo import football
from enums import CALIBRATION_DAYS, SETTLEMENT_DAYS
from errors import CommandError
from models import DataVersion, League, Match, Team
from models.schema import create_tables, drop_tables
from services.feeds import imports, replay
from services.operations import jobs
from store.database import db

#: The world's seed: the same instant and seed give the same world, picks and record.
SEED = 7
#: Days before the instant that are replayed day by day, each with its live picks, settlement
#: and signed checkpoint (the first one also backfills the history before it).
LIVE_DAYS = 14
#: The demo's bookmakers price the whole coming week at once, so every upcoming match has its
#: prices (and its pick) on the day the world is built.
ODDS_LEAD = replay.HORIZON


def load(now) -> dict:
    """Replace the demo leagues with the world at ``now`` as it stands, with no prediction (the
    tests' quick world; ``build`` is the demo). Only the demo's own leagues and teams are
    replaced, never imported data."""
    world = football.generate(now, SEED)
    codes = [league.code for league in world.leagues]
    countries = sorted({league.country for league in world.leagues})
    with db.atomic():
        League.delete().where(League.code.in_(codes)).execute()  # cascades to their matches
        Team.delete().where(Team.country.in_(countries)).execute()
        summary = imports.store_records(world.matches)
    return {
        "leagues": codes,
        "matches": summary.matches_new,
        "odds": summary.odds_stored,
    }


def present() -> int:
    """How many matches of the demo world the database holds (0: none)."""
    return Match.select().join(League).where(League.code.in_(list(football.LEAGUES))).count()


def other_leagues() -> list[str]:
    """The codes of the leagues the database holds that are not the demo's (imported ones),
    in order."""
    others = League.select(League.code).where(League.code.not_in(list(football.LEAGUES)))
    return sorted(code for (code,) in others.tuples())


def build(
    now, settings, live_days: int = LIVE_DAYS, seed: int = SEED, progress=None, knobs=None
) -> dict:
    """The demo world at the instant ``now`` in a database that holds none of it, its last
    ``live_days`` days replayed (the last one at ``now`` itself), then a settlement and a
    calibration run.

    ``progress(done, total)`` hears of each replayed day; ``knobs`` (``football.DemoSettings``,
    the defaults without) size the world. Deterministic for a given ``now``, ``seed`` and
    ``knobs`` but for the ledger's secrets (commitment salts) and the operations' timings.
    Returns what was made.
    """
    if present():
        raise CommandError("the database already holds the demo world")
    world = football.generate(now, seed, knobs)
    total = live_days + 1
    seen = []

    def heard(day):
        seen.append(day)
        if progress is not None:
            progress(len(seen), total)

    days = replay.replay(
        world.matches,
        now - timedelta(days=live_days),
        total,
        settings,
        odds_lead=ODDS_LEAD,
        progress=heard,
    )
    # Recorded as the schedule would leave them, so the health check sees both as recent.
    settled = jobs.settle(SETTLEMENT_DAYS[1], settings, now=now)
    calibrated = jobs.calibrate(CALIBRATION_DAYS[1], settings, now=now)
    return {
        "leagues": [league.code for league in world.leagues],
        "matches": present(),
        "days": len(days),
        "published": sum(day.published for day in days),
        "ledger_size": days[-1].ledger_size,
        "operations": [settled, calibrated],
    }


def rebuild(now, settings, live_days: int = LIVE_DAYS, seed: int = SEED, progress=None) -> dict:
    """``build`` on an emptied database. The ledger is append-only, so the only way to build
    the world again is a new database: every table is dropped and made again (users too),
    which is refused when the database holds any league that is not the demo's (the data
    version's tag and home are kept)."""
    if others := other_leagues():
        raise CommandError(
            f"the database holds other leagues than the demo's ({', '.join(others)}): "
            "rebuild the demo world in a database of its own"
        )
    # The data version's tag and home outlive the tables: the web processes, which read the tag
    # once, go on reading the copy this rebuild's changes are told to.
    kept = DataVersion.get_or_none(DataVersion.id == 1)
    drop_tables()
    create_tables()
    if kept is not None and kept.tag is not None:
        DataVersion.update(tag=kept.tag, home=kept.home).where(DataVersion.id == 1).execute()
    return build(now, settings, live_days, seed, progress)
