"""Calendars of the coming matches: a league's, and a user's own (its address carrying a
calendar token, :mod:`services.accounts.calendar_tokens`), which follows the user's alert
subscriptions (:mod:`services.alerts.subscriptions`). Each match is an event: kick-off to two
hours later, "Home vs Away", and the picks the reader may see, read through the match cards, so
the premium rule (:mod:`services.market.premium`) decides what of them shows: a locked pick is
its market, its rating and that it is locked, never what to back, at what price or why. What
comes out is plain values; :mod:`services.reads.ical` writes them.

A user's own calendar holds, of the window's matches, those of every league a subscription names
and those with a pick a subscription naming no league (every one) asks for: a subscription to
every league does not fill the calendar with every match the service knows. Each event lists the
picks some subscription asks for (by league, market and rating), whenever they were made (a
calendar shows what is, not what is news). ``leagues`` keeps those of its leagues. An account
without subscriptions gets, with ``leagues``, those leagues' matches and every pick of them (the
address of before keeps working); without, an empty calendar that says how to fill it.
"""

import operator
from datetime import timedelta
from functools import reduce
from urllib.parse import urlsplit

from peewee import fn

from enums import CALENDAR_DAYS, CALENDAR_MATCH_HOURS, CALLED_OFF_STATUSES
from errors import NotFound
from models import League, Match, Pick
from services import routes
from services.accounts import calendar_tokens
from services.alerts import subscriptions
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
    return _calendar(_of_leagues([found]), name, description, viewer, base_url, now, settings)


def mine(token: str, codes, base_url: str, now, settings) -> dict:
    """The calendar of the holder of the calendar token ``token``: the matches and picks their
    alert subscriptions ask for, kept to the leagues ``codes`` when given (see the module's
    docstring), their picks as that account may see them (an account suspended since sees
    what anyone does); NotFound for a token that is not an account's current one, or an
    unknown code."""
    user = calendar_tokens.holder(token, settings)
    if user is None:
        raise NotFound("No calendar has this address: its token was rotated, or never issued.")
    chosen = _leagues(codes) if codes else []
    viewer = user if user.status == "active" else None
    held = subscriptions.held(user)
    if held:
        return _followed(held, chosen, viewer, base_url, now, settings)
    if chosen:
        names = ", ".join(each.name for each in chosen)
        description = (
            f"The coming matches of {names} with their kick-offs and every pick. You have no "
            "alert subscriptions: with some, this calendar keeps to the picks they ask for."
        )
        name = f"{names}: matches and picks"
        return _calendar(_of_leagues(chosen), name, description, viewer, base_url, now, settings)
    description = (
        "Empty: this calendar follows your alert subscriptions (the picks you ask for by "
        f"league, market and rating, {routes.ALERTS}), and you have none. Subscribe to some, "
        "or add &leagues= and league codes (E0,SP1) to this calendar's address for those "
        "leagues' matches and every pick."
    )
    return _document(YOURS, description, [], base_url)


#: A user's own calendar's name.
YOURS = "Your matches and picks"


def _followed(held, chosen, viewer, base_url, now, settings) -> dict:
    """The calendar of the subscriptions ``held``, kept to the leagues ``chosen`` (all when
    empty)."""
    named = sorted({league_id for each in held for league_id in each.leagues})
    kept = {each.id for each in chosen}
    if chosen:
        named = [league_id for league_id in named if league_id in kept]
    scope = Match.league.in_(named)
    asked = _asked([each for each in held if not each.leagues])
    if asked is not None:
        scope |= asked if not chosen else asked & Match.league.in_(sorted(kept))
    names = dict(League.select(League.id, League.name).where(League.id.in_(named)).tuples())
    description = _followed_description(
        [names[league_id] for league_id in sorted(names, key=names.get)],
        asked is not None,
        [each.name for each in chosen],
    )

    def keep(card: dict, pick: dict) -> bool:
        league_id = card["league"]["id"]
        return any(
            subscriptions.wants(each, league_id, pick["market"], pick["rating"]) for each in held
        )

    return _calendar(scope, YOURS, description, viewer, base_url, now, settings, keep)


def _followed_description(leagues, any_league: bool, chosen) -> str:
    """What a calendar following subscriptions holds: the matches of ``leagues`` (names), and
    ``any_league``'s with a pick asked for, kept to ``chosen`` (names; none: every league)."""
    kept = f", kept to {', '.join(chosen)}" if chosen else ""
    if not leagues and not any_league:
        return (
            f"Follows your alert subscriptions{kept}: none of them asks for a pick of these "
            "leagues, so this calendar is empty."
        )
    if leagues:
        scope = f"the leagues they name ({', '.join(leagues)})"
        if any_league:
            scope += " and of any other league where a pick they ask for is made"
    else:
        scope = "any league where a pick they ask for is made"
    return (
        f"Follows your alert subscriptions: the coming matches of {scope}{kept}, with their "
        "kick-offs and the picks your subscriptions ask for (by league, market and rating), "
        "as your account may see them."
    )


def _asked(every):
    """Whether a match has a pick one of the subscriptions ``every`` (each naming no league)
    asks for by market and rating, as a condition on ``Match``; None without any."""
    if not every:
        return None
    wanted = Pick.alias("wanted")
    conditions = []
    for each in every:
        parts = []
        if each.markets:
            parts.append(wanted.market.in_(each.markets))
        if each.ratings:
            parts.append(wanted.rating.in_(each.ratings))
        if not parts:  # every pick
            conditions = []
            break
        conditions.append(reduce(operator.and_, parts))
    query = wanted.select(wanted.id).where(wanted.match == Match.id)
    if conditions:
        query = query.where(reduce(operator.or_, conditions))
    return fn.EXISTS(query)


def _of_leagues(leagues):
    """The matches of ``leagues``, as a condition on ``Match``."""
    return Match.league.in_([each.id for each in leagues])


def _leagues(codes) -> list:
    """The leagues of ``codes``, in that order; NotFound naming the codes of none."""
    found = {each.code: each for each in League.select().where(League.code.in_(list(codes)))}
    unknown = [code for code in codes if code not in found]
    if unknown:
        raise NotFound(f"No league has the code {', '.join(map(repr, unknown))}.")
    return [found[code] for code in codes]


def _calendar(scope, name, description, viewer, base_url, now, settings, keep=None) -> dict:
    """The calendar of the matches in ``scope`` (a condition on ``Match``) in the window around
    ``now``, with their picks (those ``keep(card, pick)`` keeps, when given): one query for the
    matches, one for their picks, one for the settled picks their stakes are judged by, one
    for when each last changed (and, for a caller without premium access, one for the locked
    matches)."""
    before, after = CALENDAR_DAYS
    query = (
        cards.matches()
        .where(
            scope
            & (Match.kickoff_at >= now - timedelta(days=before))
            & (Match.kickoff_at < now + timedelta(days=after))
        )
        .order_by(Match.kickoff_at, Match.id)
    )
    found = cards.build(query, viewer, ("picks",), now, settings)
    if keep is not None:
        for card in found:
            card["picks"] = [pick for pick in card["picks"] if keep(card, pick)]
    changed = (
        dict(
            Match.select(Match.id, Match.updated_at)
            .where(Match.id.in_([card["id"] for card in found]))
            .tuples()
        )
        if found
        else {}
    )
    none = "No pick you follow for this match." if keep else "No pick for this match."
    events = [_event(card, changed[card["id"]], base_url, none) for card in found]
    return _document(name, description, events, base_url)


def _document(name, description, events, base_url) -> dict:
    """A calendar of ``events`` (made with :func:`_event`)."""
    host = urlsplit(base_url).hostname or UID_HOST
    return {
        "prodid": PRODID,
        "name": name,
        "description": description,
        "refresh": REFRESH,
        "events": [{**event, "uid": f"{event['uid']}@{host}"} for event in events],
    }


def _event(card: dict, updated_at, base_url: str, none: str) -> dict:
    """One match's event (its ``uid`` still without its host); ``none`` says there is no
    pick."""
    home, away = card["home_team"]["name"], card["away_team"]["name"]
    moments = [updated_at]
    for pick in card["picks"]:
        moments += [pick["created_at"], pick["settled_at"]]
    url = f"{base_url}{routes.seo_prediction(card['slug'])}" if base_url else None
    return {
        "uid": f"match-{card['id']}",
        "stamp": max(moment for moment in moments if moment is not None),
        "start": card["kickoff_at"],
        "end": card["kickoff_at"] + timedelta(hours=CALENDAR_MATCH_HOURS),
        "summary": f"{home} vs {away}",
        "description": _description(card, home, away, url, none),
        "status": EVENT_STATUS[card["status"]],
        "categories": [card["league"]["name"]],
        "url": url,
    }


def _description(card: dict, home: str, away: str, url: str | None, none: str) -> str:
    """The event's text: the league, the score once known, each pick as the reader may see it,
    and where the forecast is."""
    lines = [f"{card['league']['name']} ({card['league']['country']})"]
    if card["status"] in CALLED_OFF_STATUSES:
        lines.append(f"Match {card['status']}.")
    if card["score"]:
        lines.append(f"Result: {home} {card['score']['home']}–{card['score']['away']} {away}")
    picks = card["picks"]
    lines.append("Picks:" if picks else none)
    lines += [f"- {_pick(pick, home, away)}" for pick in picks]
    if url:
        lines.append(f"Forecast and picks: {url}")
    return "\n".join(lines)


def _pick(pick: dict, home: str, away: str) -> str:
    """One pick as a line: locked, only its market and rating; else what to back, at what price,
    its edge and suggested stake, and how it did."""
    market = market_name(pick["market"], pick["line"])
    if pick["locked"]:
        return f"{market}, rated {pick['rating']}: locked until kick-off."
    selection = selection_name(pick["selection"], home, away, pick["market"], pick["line"])
    text = (
        f"{market}, rated {pick['rating']}: {selection} at {pick['odds']:.2f} "
        f"({pick['bookmaker']}), edge {pick['edge'] * 100:+.1f} %, "
    )
    if pick["suggested_stake"]:
        text += f"suggested stake {pick['suggested_stake'] * 100:.2f} % of the bankroll"
    else:
        text += "no stake suggested (the evidence behind it is thin)"
    if pick["status"] in OUTCOMES:
        text += f"; {OUTCOMES[pick['status']]}, {pick['profit']:+.2f} units"
    return text + "."
