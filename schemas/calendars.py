"""Calendar shapes: the arguments of a user's own calendar, and the calendar token's answers."""

import re

from marshmallow import ValidationError, fields, validate

from enums import CALENDAR_LEAGUES_MAX, CALENDAR_TOKEN_PATTERN, LEAGUE_CODE_PATTERN
from schemas.auth import SessionSchema
from schemas.common import CamelSchema
from schemas.text import CommaList

TOKEN_PATTERN = CALENDAR_TOKEN_PATTERN


class LeagueCodes(CommaList):
    """One or more league codes, comma-separated (``E0,SP1``), loaded as a tuple of distinct
    codes in the order first given; at most ``CALENDAR_LEAGUES_MAX`` of them."""

    WRITTEN = re.compile(LEAGUE_CODE_PATTERN)

    def __init__(self, **kwargs):
        super().__init__((), **kwargs)

    def description(self) -> str:
        return (
            f"One or more league codes (the catalog's `code`: `E0`, `SP1`), comma-separated; "
            f"at most {CALENDAR_LEAGUES_MAX}, a repeated one counting once. An unknown code is "
            "a 404. Optional: it keeps the calendar to these leagues (with alert subscriptions, "
            "to what they ask for in them; without any, these leagues' matches and every pick)."
        )

    def documented(self) -> dict:
        return {
            "type": "array",
            "items": {"type": "string", "pattern": f"^{LEAGUE_CODE_PATTERN}$"},
            "minItems": 1,
            "maxItems": CALENDAR_LEAGUES_MAX,
        }

    def _deserialize(self, value, attr, data, **kwargs):
        values = list(value) if isinstance(value, list | tuple) else [value]
        if not values or not all(isinstance(item, str) for item in values):
            raise self.make_error("invalid")
        parts = [part for item in values for part in item.split(",")]
        bad = next((part for part in parts if not self.WRITTEN.fullmatch(part)), None)
        if bad is not None:
            raise ValidationError(
                f"Not a league code: {bad[:20]!r}. Codes are 1 to 16 ASCII letters, digits, "
                "`_` or `-`, comma-separated."
            )
        codes = tuple(dict.fromkeys(parts))
        if len(codes) > CALENDAR_LEAGUES_MAX:
            raise ValidationError(f"At most {CALENDAR_LEAGUES_MAX} leagues (got {len(codes)}).")
        return codes


class ChosenCalendarArgsSchema(CamelSchema):
    """A user's own calendar: their calendar token, and the leagues it keeps to (optional)."""

    token = fields.String(
        required=True,
        validate=validate.Regexp(f"{TOKEN_PATTERN}\\Z", error="Not a calendar token."),
        metadata={
            "description": "Your calendar token, as `GET /api/me/calendar-token` gives it "
            "(calendar apps send no `Authorization` header, so the address carries it). A "
            "token rotated since, or never issued, is a 404.",
            "pattern": f"^{TOKEN_PATTERN}$",
        },
    )
    leagues = LeagueCodes()


class CalendarTokenSchema(CamelSchema):
    """Your calendar token and your calendar's address."""

    token = fields.String(
        required=True,
        metadata={
            "description": "Your calendar token: good until you rotate it (or change your "
            "password). Keep it as you keep a password: whoever has it reads your calendar.",
            "pattern": f"^{TOKEN_PATTERN}$",
        },
    )
    url = fields.String(
        required=True,
        metadata={
            "description": "Your calendar's address with the token, to subscribe to in a "
            "calendar app: it follows your alert subscriptions (`/api/me/alerts`), the matches "
            "and picks they ask for. Add `&leagues=E0,SP1` (the leagues' codes, from the catalog "
            "or a league calendar's address) to keep it to those leagues. Relative when the "
            "service knows no public address of its own (`PUBLIC_BASE_URL`)."
        },
    )


class RotatedCalendarTokenSchema(CamelSchema):
    """The new calendar token, and a new session: the old access tokens ended with the old
    calendar token (one account stamp signs both)."""

    calendar = fields.Nested(CalendarTokenSchema, required=True)
    session = fields.Nested(SessionSchema, required=True)
