"""The demo world: synthetic leagues with results and odds, then the whole pipeline over them."""

from clock import utcnow
from engine import demo
from models import League, Team
from services import imports
from store.database import db


def load(now=None) -> dict:
    """Replace the demo leagues with a fresh world around today (deterministic for a given day).

    Only the demo's own leagues and teams are replaced, never imported data.
    """
    now = now or utcnow()
    world = demo.generate(now)
    codes = [league.code for league in world.leagues]
    countries = sorted({league.country for league in world.leagues})
    with db.atomic():
        League.delete().where(League.code.in_(codes)).execute()  # cascades to their matches
        Team.delete().where(Team.country.in_(countries)).execute()
        summary = imports.store(world.matches)
    return {
        "leagues": codes,
        "matches": summary.matches_new,
        "odds": summary.odds_stored,
    }
