"""Calendars (iCalendar, for calendar apps to subscribe to): a league's coming matches, a user's
own (following their alert subscriptions), and the calendar token its address carries."""

from flask import make_response
from flask.views import MethodView

from enums import CALENDAR_DAYS, CALENDAR_MATCH_HOURS
from schemas.calendars import (
    CalendarTokenSchema,
    ChosenCalendarArgsSchema,
    RotatedCalendarTokenSchema,
)
from services import routes
from services.accounts import calendar_tokens
from services.reads import calendars, ical
from web import sessions
from web.access import PUBLIC, SIGNED_IN, current_viewer, now, settings
from web.blueprint import Blueprint
from web.links import base_url

blp = Blueprint(
    "calendars",
    __name__,
    url_prefix=routes.API,
    description="iCalendar (RFC 5545) calendars of the coming matches with their kick-offs and "
    "the picks the reader may see, for Google Calendar, Apple Calendar, Outlook and the like "
    "to subscribe to; and the calendar token a user's own calendar address carries.",
    access=PUBLIC,
)

CALENDAR = "text/calendar"
#: An answer carrying a token, or an account's own calendar, is never kept by a browser or a
#: cache on the way.
NO_STORE = {"Cache-Control": "no-store"}

#: What every calendar holds, as the OpenAPI description says it.
CALENDAR_DOC = (
    "The calendar (`text/calendar; charset=utf-8`, RFC 5545): `METHOD:PUBLISH`, its name as "
    "`NAME` and `X-WR-CALNAME`, a refresh hint of an hour (`REFRESH-INTERVAL`, "
    f"`X-PUBLISHED-TTL`), and one `VEVENT` per match kicking off from {CALENDAR_DAYS[0]} days "
    f"ago to {CALENDAR_DAYS[1]} days ahead: `UID` `match-<id>@<host>` (never changes), "
    "`DTSTAMP` when the match or a pick of it last changed, `DTSTART` the kick-off and `DTEND` "
    f"{CALENDAR_MATCH_HOURS} hours later (both UTC), `SUMMARY` "
    "`Home vs Away`, `STATUS` (`CANCELLED` for a cancelled match, `TENTATIVE` for a postponed "
    "one), `CATEGORIES` the league, `URL` the match's prediction page (where the service knows "
    "its public address), and `DESCRIPTION` the result once known and each pick under the "
    "premium rule (its selection, price, bookmaker, edge, suggested stake and outcome): before "
    "kick-off a pick rated A shows anonymous and free readers only its market, its rating and "
    "that it is locked. Lines are folded at 75 octets and end with CRLF."
)
CALENDAR_CONTENT = {CALENDAR: {"schema": {"type": "string"}}}


def calendar(value: dict):
    """A calendar's response: its iCalendar text."""
    return make_response(ical.document(value), 200, {"Content-Type": f"{CALENDAR}; charset=utf-8"})


@blp.route("/calendars/leagues/<league_code:code>.ics")
class LeagueCalendar(MethodView):
    @blp.cached()
    @blp.doc(
        operationId="getLeagueCalendar",
        responses={200: {"description": CALENDAR_DOC, "content": CALENDAR_CONTENT}},
    )
    @blp.problems(404, "not-found")
    def get(self, code):
        """A league's calendar: its coming matches, kick-offs and the picks you may see"""
        return calendar(calendars.league(code, current_viewer(), base_url(), now(), settings()))


@blp.route("/calendars/mine.ics")
class ChosenCalendar(MethodView):
    # Never from the shared answer cache, nor kept on the way (no-store): the request carries
    # no credentials the cache would key on, yet its answer is its account's (a Pro calendar
    # must not outlive a downgrade or a suspension).
    @blp.arguments(ChosenCalendarArgsSchema, location="query")
    @blp.doc(
        operationId="getChosenCalendar",
        responses={
            200: {
                "description": CALENDAR_DOC + " Here the calendar follows the token's "
                "account's alert subscriptions (`/api/me/alerts`): the matches of every league "
                "a subscription names, and those with a pick that a subscription naming no "
                "league asks for; each event lists only the picks some subscription asks for "
                "(by league, market and rating), whenever they were made, as the account may "
                "see them (in full for Pro; a suspended account sees what anyone does). "
                "`leagues` keeps those of its leagues. An account without subscriptions gets, "
                "with `leagues`, those leagues' matches and every pick; without, an empty "
                "calendar whose `X-WR-CALDESC` says how to fill it. Never cached: "
                "`Cache-Control: no-store`, no `ETag`.",
                "content": CALENDAR_CONTENT,
            }
        },
    )
    @blp.problems(404, "not-found")
    def get(self, query):
        """Your calendar of the matches and picks your alert subscriptions ask for"""
        answer = calendar(
            calendars.mine(query["token"], query.get("leagues"), base_url(), now(), settings())
        )
        answer.headers.update(NO_STORE)
        return answer


@blp.route("/me/calendar-token")
class CalendarToken(MethodView):
    @blp.access(SIGNED_IN)
    @blp.response(200, CalendarTokenSchema)
    @blp.doc(operationId="getCalendarToken")
    def get(self):
        """Your calendar token and your calendar's address"""
        return calendar_tokens.subscription(current_viewer(), base_url(), settings()), NO_STORE

    @blp.access(SIGNED_IN)
    @blp.response(
        200,
        RotatedCalendarTokenSchema,
        description="The new calendar token, and a new session: rotating renews the "
        "account's token stamp, which the access tokens carry too, so the old calendar "
        "address and every access token issued before end at once (use `session`'s).",
    )
    @blp.doc(operationId="rotateCalendarToken")
    def post(self):
        """Rotate your calendar token: the old calendar address stops working"""
        user = current_viewer()
        calendar = calendar_tokens.rotate(user, base_url(), now(), settings())
        return {"calendar": calendar, "session": sessions.session_for(user)}, NO_STORE
