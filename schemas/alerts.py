"""Alert shapes: a subscription as made and as shown, the caller's list, and what an
unsubscribe link answers."""

import re

from marshmallow import ValidationError, fields, post_load, validate

from enums import ALERT_CHANNELS, ALERT_MOMENTS, ALERT_STATUSES, MARKETS, PICK_RATINGS
from schemas.auth import EMAIL_MAX
from schemas.common import CamelSchema, UTCDateTime, enum_of, id_field, one_of, page_of
from schemas.numbers import Integer

#: A Telegram chat id: a signed 64-bit integer (a group's is negative), in decimal digits.
CHAT_ID = re.compile(r"-?[1-9][0-9]{0,18}")

#: Leagues one subscription may name at most.
LEAGUES_MAX = 100


def _unique_list(field, most, description):
    return fields.List(
        field,
        load_default=list,
        validate=validate.Length(max=most),
        metadata={"description": description, "uniqueItems": True},
    )


class AlertCreateSchema(CamelSchema):
    """A new alert subscription: where to send, and which picks (an empty or missing list is
    every one)."""

    channel = one_of(
        ALERT_CHANNELS,
        required=True,
        metadata={"description": "`email` (SMTP) or `telegram` (the service's bot)."},
    )
    address = fields.String(
        required=True,
        validate=validate.Length(min=1, max=EMAIL_MAX),
        metadata={
            "description": "For `email` an email address; for `telegram` the numeric chat id "
            "the service's bot told you when you sent it `/start` (a group's is negative).",
            "example": "reader@example.com",
        },
    )
    league_ids = _unique_list(
        id_field(), LEAGUES_MAX, "Leagues (their ids, as the catalog lists them); all if empty."
    )
    markets = _unique_list(one_of(MARKETS), len(MARKETS), "Markets; all if empty.")
    ratings = _unique_list(one_of(PICK_RATINGS), len(PICK_RATINGS), "Ratings; all if empty.")

    @post_load
    def checked_address(self, data, **kwargs):
        """The address trimmed, and checked for its channel: an email address that is not one,
        or a chat id that is not a number, is a 422 naming ``address``."""
        address = data["address"].strip()
        if data["channel"] == "email":
            try:
                validate.Email()(address)
            except ValidationError:
                raise ValidationError("Not a valid email address.", "address") from None
        elif not CHAT_ID.fullmatch(address):
            raise ValidationError(
                "Not a Telegram chat id: a whole number, as the bot answers /start.", "address"
            )
        data["address"] = address
        return data


class AlertSchema(CamelSchema):
    """An alert subscription."""

    id = Integer(required=True)
    channel = enum_of(ALERT_CHANNELS, required=True)
    address = fields.String(required=True)
    league_ids = fields.List(Integer(), required=True, metadata={"description": "All if empty."})
    markets = fields.List(
        enum_of(MARKETS), required=True, metadata={"description": "All if empty."}
    )
    ratings = fields.List(
        enum_of(PICK_RATINGS), required=True, metadata={"description": "All if empty."}
    )
    created_at = UTCDateTime(
        required=True,
        metadata={"description": "It tells of the picks published from this instant on."},
    )


class AlertListSchema(CamelSchema):
    """The caller's alert subscriptions."""

    items = fields.List(fields.Nested(AlertSchema), required=True)
    limit = Integer(
        required=True, metadata={"description": "How many subscriptions the account may have."}
    )


class AlertMessageSchema(CamelSchema):
    """One message of a subscription: the pick it tells of, when, and how its sending went."""

    id = Integer(required=True)
    pick_id = Integer(required=True)
    moment = enum_of(
        ALERT_MOMENTS,
        required=True,
        metadata={
            "description": "`publication`: sent when the pick was published; `kickoff`: sent "
            "when its match kicked off and the pick unlocked for the subscriber."
        },
    )
    status = enum_of(ALERT_STATUSES, required=True)
    attempts = Integer(required=True, metadata={"description": "Tries made so far."})
    last_attempt_at = UTCDateTime(required=True, allow_none=True)
    last_error = fields.String(
        required=True,
        allow_none=True,
        metadata={
            "description": "Why the last try failed: the mail server's reply (`SMTP 451: …`), "
            "Telegram's (`Telegram 429: …`), no answer, `not sent: …` (the account suspended, "
            "the channel no longer configured), or `interrupted: …` (the worker stopped during "
            "the try, which is not made again, as the message may have gone out)."
        },
    )
    next_attempt_at = UTCDateTime(
        required=True,
        allow_none=True,
        metadata={
            "description": "When it is tried next (a message about a pick locked for its "
            "reader waits for the kick-off); null once it is over."
        },
    )
    created_at = UTCDateTime(required=True)
    finished_at = UTCDateTime(required=True, allow_none=True)


AlertMessagePageSchema = page_of(AlertMessageSchema, "AlertMessage")


class UnsubscribeSchema(CamelSchema):
    """What an unsubscribe link names: its subscription, and whether it still exists."""

    id = Integer(required=True)
    subscribed = fields.Boolean(
        required=True, metadata={"description": "False once unsubscribed (then the rest is null)."}
    )
    channel = enum_of(ALERT_CHANNELS, required=True, allow_none=True)
    address = fields.String(required=True, allow_none=True)
