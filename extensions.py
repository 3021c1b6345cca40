"""The unbound extension singletons: the API (documenting problem+json), JWT and the limiter."""

import http
from pathlib import Path

from flask import current_app, request
from flask_jwt_extended import JWTManager
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from flask_smorest import Api

from schemas.common import ProblemSchema

PROBLEM_JSON = "application/problem+json"

DESCRIPTION = (Path(__file__).parent / "docs" / "openapi.md").read_text(encoding="utf-8")

RETRY_AFTER = {
    "description": "Whole seconds to wait before trying again (at least 1).",
    "schema": {"type": "integer", "minimum": 1},
}


class ProblemApi(Api):
    """flask-smorest's Api, documenting every error as problem+json and 401 as a bare challenge."""

    ERROR_SCHEMA = ProblemSchema

    def _register_responses(self):
        for status in http.HTTPStatus:
            if status < 400:
                continue
            self.spec.components.response(status.name, error_response(status), lazy=True)
        self.spec.components.response(
            self.DEFAULT_ERROR_RESPONSE_NAME,
            error_response(
                http.HTTPStatus.INTERNAL_SERVER_ERROR,
                "Problem details: `internal-error` (500), `service-unavailable` (503, with "
                "`Retry-After`).",
            ),
            lazy=True,
        )


def error_response(status, description=None):
    """The OpenAPI response object for an error status."""
    if status == http.HTTPStatus.UNAUTHORIZED:
        return {
            "description": "Missing, invalid or expired token, or wrong credentials at login. "
            "Empty body.",
            "headers": {
                "WWW-Authenticate": {
                    "description": '`Bearer`, or `Bearer error="invalid_token"` when a token '
                    "was sent but is not valid.",
                    "schema": {"type": "string"},
                }
            },
        }
    response = {
        "description": description or status.phrase,
        "content": {PROBLEM_JSON: {"schema": ProblemSchema}},
    }
    if status in (http.HTTPStatus.TOO_MANY_REQUESTS, http.HTTPStatus.SERVICE_UNAVAILABLE):
        response["headers"] = {"Retry-After": RETRY_AFTER}
    return response


api = ProblemApi(
    spec_kwargs={
        "info": {"description": DESCRIPTION},
        "servers": [{"url": "/", "description": "This deployment"}],
    }
)
jwt = JWTManager()
limiter = Limiter(key_func=get_remote_address)


def base_url() -> str:
    """The base of every link the service writes: ``PUBLIC_BASE_URL`` when set, else the
    request's own scheme and host when that host is one of ``ALLOWED_HOSTS``, else ``""`` (links
    are then relative, which a client resolves against the URL it asked, the same place).

    The ``Host`` header and, behind a trusted proxy, ``X-Forwarded-Host`` and ``-Proto`` are
    whatever the client sent: written into a problem type, the index or a cached prediction page
    they would point readers (or a shared cache's later readers) wherever the sender chose.
    """
    configured = current_app.config["PUBLIC_BASE_URL"]
    if configured:
        return configured.rstrip("/")
    host = request.host.lower()
    name = host[1:].partition("]")[0] if host.startswith("[") else host.partition(":")[0]
    if request.scheme in ("http", "https") and name in current_app.config["ALLOWED_HOSTS"]:
        return request.host_url.rstrip("/")
    return ""


def problem_type(name: str) -> str:
    """The URI naming a problem type: ``{base_url}/problems/<name>``."""
    return f"{base_url()}/problems/{name}"
