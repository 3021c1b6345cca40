"""Picks and matches: the picks of a day and one match in full."""

from flask.views import MethodView

from schemas.matches import MatchCardSchema
from schemas.picks import PicksOfDaySchema, PicksTodayArgsSchema
from services import routes
from services.reads import cards, daily
from web.access import PUBLIC, current_viewer, now, settings
from web.blueprint import Blueprint
from web.paths import id_param

blp = Blueprint(
    "picks",
    __name__,
    url_prefix=routes.API,
    description="The picks of a day and one match in full: anyone may read them.",
    access=PUBLIC,
)


@blp.route("/picks/today")
class PicksToday(MethodView):
    @blp.arguments(PicksTodayArgsSchema, location="query")
    @blp.cached()
    @blp.response(200, PicksOfDaySchema)
    @blp.doc(operationId="listTodayPicks")
    def get(self, query):
        """The picks of a UTC day (default today), each with its match"""
        return daily.for_day(viewer=current_viewer(), now=now(), settings=settings(), **query)


@blp.route(f"/matches/{id_param('match_id')}")
class MatchById(MethodView):
    @blp.cached()
    @blp.response(200, MatchCardSchema)
    @blp.problems(404, "not-found")
    @blp.doc(operationId="getMatch")
    def get(self, match_id):
        """One match with its odds summary, predictions, picks and intelligence"""
        return cards.one(match_id, current_viewer(), now=now(), settings=settings())
