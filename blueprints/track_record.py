"""The public track record."""

from flask.views import MethodView

from schemas.records import ByCompetitionTypeSchema, TrackRecordArgsSchema
from services import track_record
from web.access import PUBLIC
from web.blueprint import Blueprint

blp = Blueprint(
    "track-record",
    __name__,
    url_prefix="/api/track-record",
    description="How the picks did: anyone may read it.",
    access=PUBLIC,
)


@blp.route("/by-competition-type")
class ByCompetitionType(MethodView):
    @blp.arguments(TrackRecordArgsSchema, location="query")
    @blp.cached()
    @blp.response(200, ByCompetitionTypeSchema)
    def get(self, query):
        """Live (default) or backfilled picks' figures, one item per competition type"""
        return track_record.by_competition_type(query["is_live"])
