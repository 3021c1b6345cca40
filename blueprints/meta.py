"""About the API itself: where things are, and what each problem type means."""

from flask.views import MethodView
from marshmallow import Schema, fields

from errors import PROBLEMS, NotFound, ServiceUnavailable
from schemas.common import ProblemDescriptionSchema
from services import health
from web.access import settings
from web.blueprint import Blueprint
from web.links import base_url, problem_type

blp = Blueprint(
    "meta",
    __name__,
    description="The API's own documentation, and probes for the platform that runs it. "
    "No token, outside every rate limit.",
)


class IndexSchema(Schema):
    """Where to start."""

    name = fields.String(required=True)
    openapi = fields.String(required=True)
    docs = fields.String(required=True)


class ProbeSchema(Schema):
    """A probe's answer: nothing beyond that the service is fine."""

    status = fields.String(required=True, metadata={"enum": ["ok"]})


@blp.route("/")
class Index(MethodView):
    @blp.response(200, IndexSchema)
    @blp.doc(
        operationId="getIndex",
        security=[],
        description=(
            "No token, no rate limit. Links to `/openapi.json` and `/docs`, absolute when the "
            "service knows its public base URL."
        ),
    )
    def get(self):
        """Where the OpenAPI description and the docs are"""
        return {
            "name": "Sports Pick Service",
            "openapi": f"{base_url()}/openapi.json",
            "docs": f"{base_url()}/docs",
        }


@blp.route("/problems/<name>")
class Problem(MethodView):
    @blp.response(200, ProblemDescriptionSchema)
    @blp.problems(404, "not-found")
    @blp.doc(
        operationId="getProblemType",
        security=[],
        description=(
            "No token, no rate limit. What the problem type `name` (the last segment of a "
            "problem's `type`) means: its status, title and description."
        ),
    )
    def get(self, name):
        """What a problem type means"""
        if name not in PROBLEMS:
            raise NotFound(f"There is no problem type {name!r}.")
        status, title, description = PROBLEMS[name]
        return {
            "name": name,
            "type": problem_type(name),
            "title": title,
            "status": status,
            "description": description,
        }


@blp.route("/healthz")
class Liveness(MethodView):
    @blp.response(200, ProbeSchema)
    @blp.doc(
        operationId="checkLiveness",
        security=[],
        description=(
            "No token, no rate limit: for the platform's liveness probe. 200 while the "
            "process answers; nothing else is checked."
        ),
    )
    def get(self):
        """Liveness: the process answers (nothing else is checked)"""
        return {"status": "ok"}


@blp.route("/readyz")
class Readiness(MethodView):
    @blp.response(200, ProbeSchema)
    @blp.problems(503, "service-unavailable")
    @blp.doc(
        operationId="checkReadiness",
        security=[],
        description=(
            "No token, no rate limit: for the platform's readiness probe. 200 when the "
            "database answers within the configured timeouts, else 503 `service-unavailable` "
            "with `Retry-After`."
        ),
    )
    def get(self):
        """Readiness: the database answers a new connection within the configured timeouts"""
        if not health.database_answers(settings()):
            raise ServiceUnavailable()
        return {"status": "ok"}
