"""Test data, built through the same services the app uses."""

from datetime import timedelta

from flask import current_app
from flask_jwt_extended import create_access_token

from engine.records import LeagueRecord, MatchRecord, OddsRecord
from models import Match, Pick, stored_line
from services.accounts import users
from services.feeds import imports

PASSWORD = "correct-horse-battery"


def now():
    """The app's clock (frozen where a test froze it; needs an app context)."""
    return current_app.extensions["clock"]()


def settings():
    """The app's settings, as the services take them (needs an app context)."""
    return current_app.config


def hasher():
    """The app's password hasher (needs an app context)."""
    return current_app.extensions["password_hasher"]


def user(email="user@example.com", password=PASSWORD, role="user", plan="free", status=None):
    """A stored user (needs an app context)."""
    record, _ = users.create(email, password, hasher(), role=role, plan=plan)
    if status:
        record = users.update(email, status=status)
    return record


def token(record) -> str:
    """A valid access token for ``record`` (needs an app context)."""
    return create_access_token(identity=str(record.id))


def bearer(value) -> dict:
    """Authorization headers carrying ``value``."""
    return {"Authorization": f"Bearer {value}"}


#: kind → (role, plan, status)
KINDS = {
    "free": ("user", "free", None),
    "pro": ("user", "pro", None),
    "operator": ("operator", "free", None),
    "admin": ("admin", "free", None),
    "suspended": ("user", "pro", "suspended"),
    "suspended-admin": ("admin", "free", "suspended"),
}


def people() -> dict:
    """One user of each kind with their auth headers (needs an app context)."""
    found = {}
    for kind, (role, plan, status) in KINDS.items():
        record = user(f"{kind}@example.com", role=role, plan=plan, status=status)
        found[kind] = (record, bearer(token(record)))
    return found


def match(*args, **fields):
    """A stored match with its odds, through the importer (needs an app context); the
    arguments are :func:`match_record`'s. Many at once: ``imports.store_records`` of records."""
    record = match_record(*args, **fields)
    imports.store_records([record])
    return Match.get(
        Match.slug == Match.slug_for(record.home_team, record.away_team, record.kickoff_at)
    )


def match_record(
    home="Alpha",
    away="Beta",
    kickoff=None,
    status="finished",
    goals=(2, 1),
    odds=(),
    league=("TST", "Test League", "Testland", "top-flight"),
    season="2026-27",
) -> MatchRecord:
    """A match as a source gives it, with its odds: ``odds`` are ``(bookmaker, market,
    selection, price, is_closing)`` tuples; ``kickoff`` defaults to a day before the app's
    clock. What :func:`match` stores; many at once in one import:
    ``imports.store_records([...])``."""
    kickoff = kickoff or now() - timedelta(days=1)
    home_goals, away_goals = goals if status == "finished" else (None, None)
    return MatchRecord(
        league=LeagueRecord(*league),
        season=season,
        kickoff_at=kickoff,
        home_team=home,
        away_team=away,
        status=status,
        home_goals=home_goals,
        away_goals=away_goals,
        odds=[OddsRecord(*quote) for quote in odds],
    )


def played_days(now, days, odds) -> None:
    """Played matches of Testland's six clubs in one import, one a day ``days`` days before
    ``now`` (``T<day % 6>`` at home to ``T<(day + 1) % 6>``), each priced by ``odds``."""
    imports.store_records(
        [
            match_record(
                f"T{day % 6}",
                f"T{(day + 1) % 6}",
                kickoff=now - timedelta(days=day),
                goals=(day % 3, 1),
                odds=odds,
            )
            for day in days
        ]
    )


def pick(
    match_record, market="1x2", selection="home", odds=2.0, bookmaker="bet365", line=None, **fields
):
    """A pending pick on ``match_record`` (needs an app context), at ``line`` for a market with
    lines (the stored line of the others: ``models.stored_line``)."""
    values = {"probability": 0.55, "edge": 0.1, "rating": "B", "data_quality": 0.9, **fields}
    return Pick.create(
        match=match_record,
        market=market,
        line=stored_line(market, line),
        selection=selection,
        odds=odds,
        bookmaker=bookmaker,
        **values,
    )


class Clock:
    """A clock a test moves by hand: pass it as ``CLOCK`` to ``create_app`` or to the worker."""

    def __init__(self, now):
        self.now = now

    def __call__(self):
        return self.now

    def advance(self, **delta):
        """Move the clock forward by ``timedelta(**delta)``; returns the new time."""
        self.now += timedelta(**delta)
        return self.now


def endpoint(client, headers, url, events=("pick.settled",), description="") -> dict:
    """A webhook endpoint registered through the API (its answer, with the secret)."""
    response = client.post(
        "/api/v1/data/webhooks",
        json={"url": url, "events": list(events), "description": description},
        headers=headers,
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()
