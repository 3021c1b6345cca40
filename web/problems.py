"""Every error the service answers, formatted here and nowhere else: problem+json (RFC 9457)
for API clients, a small page for a browser on an HTML page, the bare 401 with its challenge; and
how the OpenAPI description documents them."""

import http
import json
import logging
import threading
from http import HTTPStatus

from flask import current_app, g, request
from flask_smorest import Api
from gunicorn.http.errors import ParseException
from peewee import InterfaceError, OperationalError
from werkzeug.exceptions import HTTPException

from errors import PROBLEMS, AppError, InvalidCredentials, ServiceUnavailable
from schemas.problems import ProblemSchema
from store.database import discard_connections, unavailable
from web import html
from web.links import problem_type

log = logging.getLogger("picks")

PROBLEM_JSON = "application/problem+json"

RETRY_AFTER = {
    "description": "Whole seconds to wait before trying again (at least 1).",
    "schema": {"type": "integer", "minimum": 1},
}


class ProblemApi(Api):
    """flask-smorest's Api, documenting every error as problem+json and 401 as a bare challenge.

    The description of the operations is written when it is first read (``/openapi.json``,
    ``flask openapi``, a test), not when an app is made: turning every schema into JSON Schema is
    most of what ``create_app`` would cost, and a serving process may never be asked for it. The
    steps run in the order they were registered, so the description is the same either way."""

    ERROR_SCHEMA = ProblemSchema

    def __init__(self, *args, **kwargs):
        self._undocumented = []
        self._documenting = threading.RLock()
        self._writing = False
        self._starting = False
        super().__init__(*args, **kwargs)

    def init_app(self, app, *, spec_kwargs=None):
        self._undocumented = []  # what an earlier app left unwritten is not this app's
        self._starting = True  # flask-smorest reads the description as it sets it up
        try:
            super().init_app(app, spec_kwargs=spec_kwargs)
        finally:
            self._starting = False

    @property
    def spec(self):
        """The OpenAPI description, complete: the steps still waiting are written first (but
        for flask-smorest's own reads while an app is made)."""
        if self._undocumented and not self._starting:
            self._write_pending()
        return self._spec

    @spec.setter
    def spec(self, value):
        self._spec = value

    def document(self, step) -> None:
        """Add ``step(spec)`` to the description, run when it is first read."""
        self._undocumented.append(step)

    def register_blueprint(self, blp, *, parameters=None, **options):
        """flask-smorest's registration, with the blueprint's documentation left for later."""
        name = options.get("name", blp.name)
        self._app.extensions["flask-smorest"]["blp_name_to_api"][name] = self
        self._app.register_blueprint(blp, **options)
        app = self._app

        def document(spec):
            blp.register_views_in_doc(self, app, spec, name=name, parameters=parameters)
            spec.tag({"name": name, "description": blp.description})

        self.document(document)

    def _write_pending(self) -> None:
        with self._documenting:
            if self._writing:  # a step reading the description it is writing
                return
            self._writing = True
            try:
                # A step leaves the queue only once written, so another thread reading the
                # description meanwhile waits for it rather than reading half of it.
                while self._undocumented:
                    self._undocumented[0](self._spec)
                    self._undocumented.pop(0)
            finally:
                self._writing = False

    def _register_pagination_header(self):
        """Nothing: lists page in their bodies (never ``@blp.paginate``), so flask-smorest's
        pagination header and its ``PaginationMetadata`` would be documented for no operation."""

    def _register_responses(self):
        """flask-smorest's error responses, written with the rest of the description when it is
        first read: resolving the problem schema for each of forty statuses was most of what
        making an app cost."""
        self.document(self._write_error_responses)

    def _write_error_responses(self, spec):
        for status in http.HTTPStatus:
            if status < 400:
                continue
            spec.components.response(status.name, error_response(status), lazy=True)
        spec.components.response(
            self.DEFAULT_ERROR_RESPONSE_NAME,
            error_response(
                http.HTTPStatus.INTERNAL_SERVER_ERROR,
                "Problem details: `internal-error` (500), `service-unavailable` (503, with "
                "`Retry-After`), `schema-outdated` (503, with `Retry-After`: the database awaits "
                "`flask db upgrade`).",
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


#: How much of a validation problem is echoed: the fields it lists, and the characters of each
#: name and message (a body of a million unknown keys answers a short problem, not a longer one).
MAX_LISTED_ERRORS = 20
MAX_ECHOED_CHARS = 100
MAX_DETAIL_CHARS = 500

#: The detail of a 500: what failed is in the log, under the request id, never in the answer.
INTERNAL_ERROR = "Something went wrong on our side."

#: HTTP statuses raised by Flask, Werkzeug or webargs → our problem names.
HTTP_PROBLEMS = {
    400: "malformed-request",
    404: "not-found",
    405: "method-not-allowed",
    413: "payload-too-large",
    415: "unsupported-media-type",
    422: "validation-error",
    429: "rate-limited",
    500: "internal-error",
}


def unauthorized(invalid=False):
    """The 401: an empty body (so no ``Content-Type``) and a Bearer challenge."""
    challenge = 'Bearer error="invalid_token"' if invalid else "Bearer"
    response = current_app.response_class(status=401, headers={"WWW-Authenticate": challenge})
    del response.headers["Content-Type"]
    return response


def problem(status, name, detail, *, errors=None, headers=None):
    """A problem+json response: the only way this service answers an error with a body.

    ``name`` is one of our problem types, or None for a status we give no meaning of our own
    (RFC 9457's ``about:blank``, titled by the HTTP reason phrase); ``errors`` come as
    :func:`listed_errors` gives them. A browser asking one of the
    HTML pages gets the same title and detail as a small page.
    """
    # A browser gets a page on the HTML pages (the landing page too), and on a path that is no
    # page at all (a 404).
    if (request.blueprint is None or html.page_request()) and html.wants_html():
        title = title_of(status, name)
        response = html.render(
            "error.html",
            status,
            title=title,
            detail=detail,
            error_status=status,
            description=f"{title}: {detail}",
        )
        response.headers.update(headers or {})
        return response
    body = document(status, name, detail, g.get("request_id"), errors=errors)
    return json.dumps(body), status, {"Content-Type": PROBLEM_JSON, **(headers or {})}


def title_of(status, name) -> str:
    """A problem's title: its type's, or the HTTP reason phrase for ``about:blank``."""
    return PROBLEMS[name][1] if name else HTTPStatus(status).phrase


def document(status, name, detail, request_id, *, errors=None, config=None) -> dict:
    """A problem+json body (see :func:`problem`); ``config`` for one made outside a request
    (:func:`web.links.problem_type`)."""
    if len(detail) > MAX_DETAIL_CHARS:
        detail = detail[: MAX_DETAIL_CHARS - 1] + "…"
    body = {
        "type": problem_type(name, config) if name else "about:blank",
        "title": title_of(status, name),
        "status": status,
        "detail": detail,
        "requestId": request_id,
    }
    if errors:
        body["errors"] = errors
    return body


def clipped(text: str) -> str:
    """``text`` cut to ``MAX_ECHOED_CHARS`` characters, keeping its start and its end (where
    long names differ) around an ellipsis."""
    if len(text) <= MAX_ECHOED_CHARS:
        return text
    tail = MAX_ECHOED_CHARS // 3
    return f"{text[: MAX_ECHOED_CHARS - tail - 1]}…{text[-tail:]}"


def listed_errors(errors: dict[str, list[str]]) -> tuple[dict[str, list[str]], str]:
    """At most ``MAX_LISTED_ERRORS`` fields with their clipped names and messages, and the
    problem's detail naming them (and how many more there were)."""
    names = sorted(errors)
    shown = {
        clipped(name): [clipped(message) for message in errors[name][:MAX_LISTED_ERRORS]]
        for name in names[:MAX_LISTED_ERRORS]
    }
    named = []
    for name in shown:  # as many as the detail has room for
        if sum(len(each) + 2 for each in [*named, name]) > MAX_DETAIL_CHARS // 2:
            break
        named.append(name)
    detail = f"Invalid input: {', '.join(named)}"
    if len(names) > len(named):
        detail += f" and {len(names) - len(named)} more"
    return shown, detail + "."


def flatten_messages(messages, prefix="") -> dict[str, list[str]]:
    """Flatten webargs' ``{"json": {"field": [...]}}`` into ``{"field": [...]}``."""
    flat = {}
    for key, value in messages.items():
        if not prefix and key in ("json", "query", "path", "view_args", "headers", "form"):
            name = ""
        elif key == "_schema":
            name = prefix.rstrip(".") or "body"
        else:
            name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten_messages(value, f"{name}." if name else ""))
        else:
            listed = value if isinstance(value, list) else [value]
            flat.setdefault(name or "body", []).extend(str(message) for message in listed)
    return flat


def register_error_handlers(app):
    """Every error the service answers, formatted here and nowhere else."""

    @app.errorhandler(AppError)
    def handle_app_error(error):
        errors = listed_errors(error.errors)[0] if error.errors else None
        return problem(
            error.status, error.problem, error.detail, errors=errors, headers=error.headers
        )

    @app.errorhandler(InvalidCredentials)
    def handle_invalid_credentials(_error):
        return unauthorized()

    @app.errorhandler(HTTPException)
    def handle_http_exception(error):
        name = HTTP_PROBLEMS.get(error.code)
        data = getattr(error, "data", None) or {}
        if error.code == 422 and "messages" in data:
            errors, detail = listed_errors(flatten_messages(data["messages"]))
            return problem(422, name, detail, errors=errors)
        headers = {}
        if error.code == 405:
            headers["Allow"] = ", ".join(error.valid_methods or ())
        return problem(error.code, name, error.description, headers=headers)

    @app.errorhandler(ParseException)
    def handle_unreadable_body(error):
        # gunicorn reads a chunked body as the app does, so a malformed chunk is met only then.
        # Its message quotes what it met (b'zz'), clipped as every echo of a request is.
        detail = f"The body could not be read as sent ({clipped(str(error))})."
        return problem(400, "malformed-request", detail)

    @app.errorhandler(OperationalError)
    @app.errorhandler(InterfaceError)
    def handle_database_error(error):
        if not unavailable(error):
            return handle_unexpected(error)  # a wrong statement (SQLite's are OperationalError)
        log.error("database unavailable request_id=%s: %s", g.get("request_id"), error)
        discard_connections()  # the others may point at the server that went away too
        return handle_app_error(ServiceUnavailable())

    @app.errorhandler(Exception)
    def handle_unexpected(error):
        log.exception("unhandled error request_id=%s", g.get("request_id"))
        return problem(500, "internal-error", INTERNAL_ERROR)
