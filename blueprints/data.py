"""Data API endpoints for Pro subscribers and admins."""

from flask.views import MethodView

from schemas.data import CatalogSchema, MatchesArgsSchema, MatchesPageSchema, UsageSchema
from schemas.exports import ExportJSONSchema, ExportRequestSchema
from schemas.records import TrackRecordSchema
from schemas.spans import KickoffRangeSchema
from services import routes
from services.accounts import quotas
from services.data_api import catalog, exports, feed
from services.reads import track_record
from web import streams
from web.access import DATA, DATA_USAGE, current_viewer, now, settings
from web.blueprint import Blueprint

blp = Blueprint(
    "data",
    __name__,
    url_prefix=routes.DATA,
    description="Catalog, matches, track record, exports and usage: plan `pro` or role `admin`.",
    access=DATA,
)


@blp.route("/catalog")
class Catalog(MethodView):
    @blp.cached()
    @blp.response(200, CatalogSchema)
    @blp.doc(operationId="getDataCatalog")
    def get(self):
        """Resources with their fields, filters, includes and formats; leagues with their data"""
        return catalog.catalog()


@blp.route("/matches")
class Matches(MethodView):
    @blp.arguments(MatchesArgsSchema, location="query")
    @blp.cached()
    @blp.response(200, MatchesPageSchema)
    @blp.doc(operationId="listDataMatches")
    def get(self, query):
        """Matches by kick-off, a page at a time, with the relations asked for"""
        return feed.matches(viewer=current_viewer(), settings=settings(), **query)


@blp.route("/track-record")
class TrackRecord(MethodView):
    @blp.arguments(KickoffRangeSchema, location="query")
    @blp.cached()
    @blp.response(200, TrackRecordSchema)
    @blp.doc(operationId="getDataTrackRecord")
    def get(self, query):
        """Live and backfilled picks apart: overall, by month, market, rating and type"""
        return track_record.report(query.get("date_from"), query.get("date_to"), settings(), now())


@blp.route("/exports")
class Exports(MethodView):
    @blp.arguments(ExportRequestSchema)
    @blp.response(
        200,
        description="The export, streamed in its format: `csv` (`text/csv`) with a header row "
        "and one flat row per line, `ndjson` (`application/x-ndjson`) one JSON object per line, "
        "`json` (`application/json`) as the object below. Every format carries `X-Export-Id` "
        "and `X-Row-Count`. The text types come first: a generated client reads the body as "
        "text, whatever the format. In CSV, a text cell that a spreadsheet would run as a "
        "formula (one starting with `=`, `+`, `-`, `@`, a tab or a carriage return) is written "
        "with a `'` before it, as OWASP advises; JSON and NDJSON carry text as stored. An "
        "account streams at most `EXPORT_STREAMS_PER_USER` exports at once (2 by default) and "
        "each server process `EXPORT_STREAMS_PER_PROCESS` (4): past that the answer is a 429 "
        "`too-many-exports` before anything is charged. A reader that leaves a 64 KiB chunk "
        "unread for `EXPORT_SEND_TIMEOUT` seconds (30) has its connection cut, so read the body "
        "as it comes.",
        headers={
            "X-Export-Id": {"description": "The export's id.", "schema": {"type": "integer"}},
            "X-Row-Count": {"description": "Rows in the export.", "schema": {"type": "integer"}},
        },
    )
    @blp.doc(
        responses={
            200: {
                "content": {
                    "text/csv": {
                        "schema": {"type": "string", "description": "A header row, then rows."}
                    },
                    "application/x-ndjson": {
                        "schema": {"type": "string", "description": "One JSON object a line."}
                    },
                    "application/json": {"schema": ExportJSONSchema},
                }
            }
        }
    )
    @blp.problems(406, "not-acceptable")
    @blp.problems(429, "rate-limited", "quota-exceeded", "too-many-exports")
    @blp.doc(operationId="createExport")
    def post(self, body):
        """Export a resource's rows, filtered, as CSV, JSON or NDJSON (streamed)"""
        streams.check_accept(body["format"])
        viewer = current_viewer()
        return streams.stream(
            viewer,
            lambda: exports.prepare(
                viewer, body["resource"], body["filters"], body["format"], settings(), now()
            ),
        )


@blp.route("/usage")
class Usage(MethodView):
    @blp.access(DATA_USAGE)
    @blp.cached(own=quotas.usage_version)
    @blp.response(200, UsageSchema)
    @blp.doc(operationId="getUsage")
    def get(self):
        """This month's consumption and quota state (this call is not counted)"""
        return quotas.usage(current_viewer(), settings(), now())
