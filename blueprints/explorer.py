"""The explorer: a day's slate of one market, and comparable past matches."""

from flask import current_app
from flask.views import MethodView

from schemas.explorer import ComparableArgsSchema, ComparableSchema, SlateArgsSchema, SlateSchema
from services.reads import explorer
from web.access import PUBLIC, current_viewer, now, settings
from web.blueprint import Blueprint

blp = Blueprint(
    "explorer",
    __name__,
    url_prefix="/api/explorer",
    description="The day's slate and comparable past matches: anyone may read them.",
    access=PUBLIC,
)


@blp.route("/slate")
class Slate(MethodView):
    @blp.arguments(SlateArgsSchema, location="query")
    @blp.cached()
    @blp.response(200, SlateSchema)
    @blp.doc(operationId="getSlate")
    def get(self, query):
        """A day's matches with one market's prediction, best prices, edges and pick"""
        return explorer.slate(viewer=current_viewer(), now=now(), settings=settings(), **query)


@blp.route("/comparable")
class Comparable(MethodView):
    @blp.arguments(ComparableArgsSchema, location="query")
    @blp.cached()
    @blp.response(200, ComparableSchema)
    @blp.problems(404, "not-found")
    @blp.doc(operationId="listComparableMatches")
    def get(self, query):
        """Finished earlier matches whose forecasts were nearest to this match's"""
        return explorer.comparable(
            viewer=current_viewer(),
            now=now(),
            index=current_app.extensions["comparable_index"],
            **query,
        )
