"""Calendars of the coming matches: a league's, and the leagues a user chooses (their address
carrying a calendar token, :mod:`services.accounts.calendar_tokens`). Each match is an event:
kick-off to two hours later, "Home vs Away", and the picks the reader may see, read through the
match cards, so the premium rule (:mod:`services.market.premium`) decides what of them shows:
a locked pick is its market, its rating and that it is locked, never what to back, at what
price or why. What comes out is plain values; :mod:`services.reads.ical` writes them.
"""

from datetime import timedelta
from urllib.parse import urlsplit

from enums import CALENDAR_DAYS, CALENDAR_MATCH_HOURS, CALLED_OFF_STATUSES
from errors import NotFound
from models import League, Match
from services import routes
from services.accounts import calendar_tokens
from services.market.names import market_name, selection_name
from services.reads import cards

PRODID = "-//Sports Pick Service//Match calendars 1.0//EN"
#: How often a calendar app should fetch a calendar again (``REFRESH-INTERVAL``).
REFRESH = timedelta(hours=1)
#: The host a match's ``UID`` names where the service knows no public address of its own.
UID_HOST = "sports-pick-service.invalid"
#: Each match status as an event's (a match played or being played took place as planned).
EVENT_STATUS = {
    "scheduled": "CONFIRMED",
    "live": "CONFIRMED",
    "finished": "CONFIRMED",
    "postponed": "TENTATIVE",
    "cancelled": "CANCELLED",
}
#: How a pick's outcome reads.
OUTCOMES = {
    "won": "won",
    "lost": "lost",
    "void": "void (stake back)",
    "half-won": "half won",
    "half-lost": "half lost",
}


def league(code: str, viewer, base_url: str, now, settings) -> dict:
    """The calendar of the league ``code``, its picks as ``viewer`` may see them at ``now``;
    NotFound for an unknown code."""
    (found,) = _leagues((code,))
    name = f"{found.name} ({found.country}): matches and picks"
    description = (
        f"The coming matches of {found.name} with their kick-offs and the picks "
        "rated A, B or C that may be shown."
    )
    return _calendar([found], name, description, viewer, base_url, now, settings)


def chosen(token: str, codes, base_url: str, now, settings) -> dict:
    """The calendar of the leagues ``codes`` for the holder of the calendar token ``token``,
    their picks as that account may see them (an account suspended since sees what anyone
    does); NotFound for a token that is not an account's current one, or an unknown code."""
    user = calendar_tokens.holder(token, settings)
    if user is None:
        raise NotFound("No calendar has this address: its token was rotated, or never issued.")
    found = _leagues(codes)
    viewer = user if user.status == "active" else None
    names = ", ".join(each.name for each in found)
    description = f"The coming matches of {names} with their kick-offs and picks."
    return _calendar(
        found, f"{names}: matches and picks", description, viewer, base_url, now, settings
    )


def _leagues(codes) -> list:
    """The leagues of ``codes``, in that order; NotFound naming the codes of none."""
    found = {each.code: each for each in League.select().where(League.code.in_(list(codes)))}
    unknown = [code for code in codes if code not in found]
    if unknown:
        raise NotFound(f"No league has the code {', '.join(map(repr, unknown))}.")
    return [found[code] for code in codes]


def _calendar(leagues, name, description, viewer, base_url, now, settings) -> dict:
    """The calendar of the matches of ``leagues`` in the window around ``now``: one query for
    the matches, one for their picks, one for when each last changed (and, for a caller
    without premium access, one for the locked matches)."""
    before, after = CALENDAR_DAYS
    query = (
        cards.matches()
        .where(
            Match.league.in_([each.id for each in leagues])
            & (Match.kickoff_at >= now - timedelta(days=before))
            & (Match.kickoff_at < now + timedelta(days=after))
        )
        .order_by(Match.kickoff_at, Match.id)
    )
    found = cards.build(query, viewer, ("picks",), now, settings)
    changed = (
        dict(
            Match.select(Match.id, Match.updated_at)
            .where(Match.id.in_([card["id"] for card in found]))
            .tuples()
        )
        if found
        else {}
    )
    host = urlsplit(base_url).hostname or UID_HOST
    return {
        "prodid": PRODID,
        "name": name,
        "description": description,
        "refresh": REFRESH,
        "events": [_event(card, changed[card["id"]], host, base_url) for card in found],
    }


def _event(card: dict, updated_at, host: str, base_url: str) -> dict:
    """One match's event."""
    home, away = card["home_team"]["name"], card["away_team"]["name"]
    moments = [updated_at]
    for pick in card["picks"]:
        moments += [pick["created_at"], pick["settled_at"]]
    url = f"{base_url}{routes.seo_prediction(card['slug'])}" if base_url else None
    return {
        "uid": f"match-{card['id']}@{host}",
        "stamp": max(moment for moment in moments if moment is not None),
        "start": card["kickoff_at"],
        "end": card["kickoff_at"] + timedelta(hours=CALENDAR_MATCH_HOURS),
        "summary": f"{home} vs {away}",
        "description": _description(card, home, away, url),
        "status": EVENT_STATUS[card["status"]],
        "categories": [card["league"]["name"]],
        "url": url,
    }


def _description(card: dict, home: str, away: str, url: str | None) -> str:
    """The event's text: the league, the score once known, each pick as the reader may see it,
    and where the forecast is."""
    lines = [f"{card['league']['name']} ({card['league']['country']})"]
    if card["status"] in CALLED_OFF_STATUSES:
        lines.append(f"Match {card['status']}.")
    if card["score"]:
        lines.append(f"Result: {home} {card['score']['home']}–{card['score']['away']} {away}")
    picks = card["picks"]
    lines.append("Picks:" if picks else "No pick for this match.")
    lines += [f"- {_pick(pick, home, away)}" for pick in picks]
    if url:
        lines.append(f"Forecast and picks: {url}")
    return "\n".join(lines)


def _pick(pick: dict, home: str, away: str) -> str:
    """One pick as a line: locked, only its market and rating."""
    market = market_name(pick["market"], pick["line"])
    if pick["locked"]:
        return f"{market}, rated {pick['rating']}: locked until kick-off."
    selection = selection_name(pick["selection"], home, away, pick["market"], pick["line"])
    text = (
        f"{market}, rated {pick['rating']}: {selection} at {pick['odds']:.2f} "
        f"({pick['bookmaker']}), edge {pick['edge'] * 100:+.1f} %"
    )
    if pick["status"] in OUTCOMES:
        text += f"; {OUTCOMES[pick['status']]}, {pick['profit']:+.2f} units"
    return text + "."
