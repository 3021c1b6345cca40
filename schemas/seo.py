"""SEO shapes: a prediction page and its schema.org SportsEvent."""

from marshmallow import Schema, fields

from schemas.common import CamelSchema, UTCDateTime
from schemas.matches import MatchSchema, PickSchema, PredictionSchema


class SportsTeamSchema(Schema):
    """schema.org SportsTeam."""

    type_ = fields.Constant("SportsTeam", data_key="@type", dump_only=True)
    name = fields.String(required=True)


class SportsEventSchema(Schema):
    """schema.org SportsEvent, as JSON-LD (its names are schema.org's own)."""

    context = fields.Constant("https://schema.org", data_key="@context", dump_only=True)
    type_ = fields.Constant("SportsEvent", data_key="@type", dump_only=True)
    name = fields.String(required=True)
    description = fields.String(required=True)
    url = fields.String(required=True)
    start_date = UTCDateTime(required=True, data_key="startDate")
    event_status = fields.String(required=True, data_key="eventStatus")
    sport = fields.String(required=True)
    home_team = fields.Nested(SportsTeamSchema, required=True, data_key="homeTeam")
    away_team = fields.Nested(SportsTeamSchema, required=True, data_key="awayTeam")


class PredictionPageSchema(CamelSchema):
    """A match's prediction page: what search engines and link previews read."""

    slug = fields.String(required=True)
    title = fields.String(required=True)
    description = fields.String(required=True)
    canonical_url = fields.String(required=True)
    match = fields.Nested(MatchSchema, required=True)
    prediction = fields.Nested(
        PredictionSchema,
        required=True,
        allow_none=True,
        metadata={"description": "The 1x2 prediction; null before one is made."},
    )
    pick = fields.Nested(
        PickSchema,
        required=True,
        allow_none=True,
        metadata={"description": "The best-rated pick of the match, under the premium rule."},
    )
    structured_data = fields.Nested(SportsEventSchema, required=True)
