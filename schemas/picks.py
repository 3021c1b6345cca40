"""Picks of the day: arguments and answer."""

from marshmallow import fields

from enums import MARKETS, PICK_RATINGS
from schemas.common import CamelSchema
from schemas.matches import MatchSchema, PickSchema
from schemas.numbers import line_filter
from schemas.spans import day_field
from schemas.text import CommaList


class PicksTodayArgsSchema(CamelSchema):
    """Which day's picks, of which ratings and markets."""

    day = day_field()
    ratings = CommaList(PICK_RATINGS, data_key="rating")
    markets = CommaList(MARKETS, data_key="market")
    line = line_filter()


class PickWithMatchSchema(PickSchema):
    """A pick and the match it is on."""

    match = fields.Nested(MatchSchema, required=True)


class PicksOfDaySchema(CamelSchema):
    """The picks of one UTC day, by kick-off, then rating."""

    date = fields.Date(required=True)
    items = fields.List(fields.Nested(PickWithMatchSchema), required=True)
