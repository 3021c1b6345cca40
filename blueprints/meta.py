"""About the API itself: where things are, and what each problem type means."""

from flask import current_app
from flask.views import MethodView
from marshmallow import Schema, fields

from blueprints import pages
from errors import PROBLEMS, NotFound, ServiceUnavailable
from schemas.problems import ProblemDescriptionSchema
from web import html
from web.access import now, settings
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
    @blp.page(when=html.wants_html)
    @blp.response(200, IndexSchema)
    @blp.doc(
        operationId="getIndex",
        security=[],
        description=(
            "No token. As JSON (outside every rate limit): links to `/openapi.json` and `/docs`, "
            "absolute when the service knows its public base URL. For `Accept: text/html` (a "
            "browser) the landing page: today's and the coming days' matches with their "
            "forecasts and rated picks, rate limited as the public endpoints are. The page "
            "ignores query parameters (a link's `utm_source`, `fbclid`…); the JSON index answers "
            "one with a 422 naming it."
        ),
        responses={200: {"content": {"text/html": {"schema": {"type": "string"}}}}},
    )
    def get(self):
        """Where the OpenAPI description and the docs are; the landing page for a browser"""
        if html.wants_html():
            return pages.landing()
        index = {
            "name": "Sports Pick Service",
            "openapi": f"{base_url()}/openapi.json",
            "docs": f"{base_url()}/docs",
        }
        return index, 200, {"Vary": "Accept"}  # the same URL is the landing page for a browser


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
            "with `Retry-After`. The verdict is kept for `READINESS_CACHE_SECONDS` (1 s by "
            "default): however often it is asked, a process opens at most one probe connection "
            "in that time."
        ),
    )
    def get(self):
        """Readiness: the database answers a new connection within the configured timeouts"""
        if not current_app.extensions["readiness"].ready(settings(), now):
            raise ServiceUnavailable()
        current_app.extensions["schema_check"].require()  # 503 schema-outdated while behind
        return {"status": "ok"}
