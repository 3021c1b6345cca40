"""Operations API endpoints for admins and operators."""

import time

from flask.views import MethodView

from schemas.ops import (
    RESULT_SCHEMAS,
    CalibrationRequestSchema,
    ContradictionPageSchema,
    ContradictionQuerySchema,
    ContradictionResolutionSchema,
    ContradictionResolveSchema,
    DataBootstrapRequestSchema,
    DataSyncRequestSchema,
    HealthSchema,
    OperationResultSchema,
    OperationSchema,
    RefreshRequestSchema,
    SettlementRequestSchema,
    TeamPageSchema,
    TeamQuerySchema,
    result_component,
)
from services import routes
from services.feeds import contradictions, teams
from services.operations import health, jobs
from web import ratelimits
from web.access import ADMIN, OPS, current_viewer, now, settings, started_at
from web.blueprint import Blueprint
from web.paths import id_param

blp = Blueprint(
    "ops",
    __name__,
    url_prefix=routes.OPS,
    description="Health and long-running operations: role `admin` or `operator`.",
    access=OPS,
)


@blp.route("/health/services")
class ServiceHealth(MethodView):
    @blp.response(200, HealthSchema)
    @blp.doc(operationId="getServiceHealth")
    def get(self):
        """Database, rate-limit storage, result freshness, the worker and each live source"""
        return health.report(
            settings(), ratelimits.storage_health, time.monotonic() - started_at(), now()
        )


@blp.route("/operations/intelligence-refreshes")
class IntelligenceRefreshes(MethodView):
    @blp.arguments(RefreshRequestSchema)
    @blp.response(200, OperationSchema)
    @blp.problems(404, "not-found")
    @blp.problems(409, "match-not-open")
    @blp.doc(operationId="startIntelligenceRefresh")
    def post(self, body):
        """Refresh one open match's prediction, pick and intelligence"""
        return jobs.refresh(body["match_id"], settings(), current_viewer(), now())


@blp.route("/operations/settlement-runs")
class SettlementRuns(MethodView):
    @blp.arguments(SettlementRequestSchema, required=False)
    @blp.response(200, OperationSchema)
    @blp.doc(operationId="startSettlementRun")
    def post(self, body):
        """Settle the pending picks of matches from the last N days"""
        return jobs.settle(body["last_days"], settings(), current_viewer(), now())


@blp.route("/operations/calibration-runs")
class CalibrationRuns(MethodView):
    @blp.arguments(CalibrationRequestSchema, required=False)
    @blp.response(200, OperationSchema)
    @blp.doc(operationId="startCalibrationRun")
    def post(self, body):
        """Score the published probabilities of the last N days against the closing odds"""
        return jobs.calibrate(body["window_days"], settings(), current_viewer(), now())


@blp.route("/operations/data-syncs")
class DataSyncs(MethodView):
    @blp.arguments(DataSyncRequestSchema, required=False)
    @blp.response(200, OperationSchema)
    @blp.problems(409, "source-not-configured")
    @blp.doc(operationId="startDataSync")
    def post(self, body):
        """Sync the live sources now: fetch, store, predict and publish, settle"""
        return jobs.data_sync(body["source"], settings(), current_viewer(), now())


@blp.route("/operations/data-bootstraps")
class DataBootstraps(MethodView):
    @blp.arguments(DataBootstrapRequestSchema, required=False)
    @blp.response(200, OperationSchema)
    @blp.problems(409, "source-not-configured")
    @blp.doc(operationId="startDataBootstrap")
    def post(self, body):
        """The first day: earlier seasons of the configured leagues, then the first backfill"""
        return jobs.data_bootstrap(body["seasons"], settings(), current_viewer(), now())


@blp.route("/teams")
class Teams(MethodView):
    @blp.access(ADMIN)
    @blp.arguments(TeamQuerySchema, location="query")
    @blp.response(200, TeamPageSchema)
    @blp.doc(operationId="listTeams")
    def get(self, query):
        """Teams with their ids and each source's names, and the names no team maps yet"""
        return teams.listing(**query)


@blp.route("/contradictions")
class Contradictions(MethodView):
    @blp.arguments(ContradictionQuerySchema, location="query")
    @blp.response(200, ContradictionPageSchema)
    @blp.doc(operationId="listContradictions")
    def get(self, query):
        """Sources disagreeing with a stored result, the oldest open first, a page at a time"""
        return contradictions.listing(**query)


@blp.route(f"/contradictions/{id_param('contradiction_id')}/resolve")
class ContradictionResolution(MethodView):
    @blp.arguments(ContradictionResolveSchema)
    @blp.response(200, ContradictionResolutionSchema)
    @blp.problems(404, "not-found")
    @blp.problems(409, "contradiction-not-open", "settled-result-protected", "operation-failed")
    @blp.doc(operationId="resolveContradiction")
    def post(self, body, contradiction_id):
        """Resolve a contradiction: keep the stored value, take the source's, or give a score"""
        return jobs.resolve_contradiction(
            contradiction_id, body["value"], by=current_viewer(), now=now()
        )


@blp.route(f"/operations/{id_param('operation_id')}")
class OperationById(MethodView):
    @blp.response(200, OperationSchema)
    @blp.problems(404, "not-found")
    @blp.doc(operationId="getOperation")
    def get(self, operation_id):
        """An operation's record: kind, parameters, state, timing, who started it"""
        return jobs.get(operation_id, settings(), now())


#: The result's documented shape: one of the kinds' result schemas (see create_app).
RESULT_DOC = {
    "200": {
        "description": "The stored result, in the shape of the operation's kind.",
        "content": {
            "application/json": {
                "schema": {
                    "oneOf": [
                        {"$ref": f"#/components/schemas/{result_component(kind)}"}
                        for kind in RESULT_SCHEMAS
                    ]
                }
            }
        },
    }
}


@blp.route(f"/operations/{id_param('operation_id')}/result")
class OperationResult(MethodView):
    @blp.response(200)
    @blp.doc(responses=RESULT_DOC)
    @blp.problems(404, "not-found")
    @blp.problems(409, "operation-not-finished", "operation-failed")
    @blp.doc(operationId="getOperationResult")
    def get(self, operation_id):
        """What a succeeded operation found, shaped by its kind"""
        return OperationResultSchema().dump(jobs.result(operation_id, settings(), now()))
