"""The application factory: configuration, extensions, database, request hooks, errors, routes."""

import json
import logging
import os
import re
import sys
import threading
import time
import uuid
from http import HTTPStatus
from importlib.metadata import version

from flask import Flask, current_app, g, request
from peewee import InterfaceError, OperationalError
from werkzeug.exceptions import HTTPException
from werkzeug.middleware.proxy_fix import ProxyFix
from werkzeug.routing import BaseConverter

import pages
import ratelimits
from caching import AnswerCache
from config import config_from_env
from errors import PROBLEMS, AppError, InvalidCredentials, ServiceUnavailable
from extensions import api, jwt, problem_type
from models import db, discard_connections, open_database, unavailable
from schemas.ops import RESULT_SCHEMAS, result_component
from services.accounts import token_claims, user_for_token

log = logging.getLogger("picks")
access_log = logging.getLogger("picks.access")

REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")

#: Characters a log line never carries as they are: controls (a newline would start a forged
#: line), DEL, C1 controls and Unicode's line and paragraph separators.
LOG_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")

#: How much of a validation problem is echoed: the fields it lists, and the characters of each
#: name and message (a body of a million unknown keys answers a short problem, not a longer one).
MAX_LISTED_ERRORS = 20
MAX_ECHOED_CHARS = 100
MAX_DETAIL_CHARS = 500

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


def create_app(overrides=None):
    """A configured application; ``overrides`` replace settings read from the environment."""
    app = Flask(__name__, instance_relative_config=True)
    app.config.update(config_from_env(os.environ, app.instance_path, overrides))
    app.config.update(
        API_TITLE="Sports Pick Service",
        API_VERSION=version("sports-pick-service"),
        OPENAPI_VERSION="3.1.0",
        OPENAPI_URL_PREFIX="/",
        OPENAPI_JSON_PATH="openapi.json",
        JWT_TOKEN_LOCATION=["headers"],
    )
    app.json.sort_keys = False  # answer fields in the order the schemas document them
    app.extensions["started_at"] = time.monotonic()
    app.extensions["answer_cache"] = AnswerCache(app.config["ANSWER_CACHE_BYTES"])
    # Each scrypt hash holds 128·N·r bytes (32 MiB at the default cost) while it runs.
    app.extensions["password_hashing"] = threading.BoundedSemaphore(
        app.config["PASSWORD_HASH_CONCURRENCY"]
    )
    configure_logging(app.config["LOG_LEVEL"])
    # Forwarded headers are believed only from the proxies that really sit in front: without
    # one, X-Forwarded-For would be whatever address a client chose to be counted under.
    hops = app.config["PROXY_FIX_HOPS"]
    if hops:
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=hops, x_proto=hops, x_host=hops)

    db.initialize(
        open_database(
            app.config["DATABASE_URL"],
            connect_timeout=app.config["DATABASE_CONNECT_TIMEOUT"],
            statement_timeout=app.config["DATABASE_STATEMENT_TIMEOUT"],
        )
    )
    register_request_hooks(app)
    jwt.init_app(app)
    register_token_loaders()
    ratelimits.init_app(app)
    api.init_app(app)
    api.spec.components.security_scheme(
        "bearerAuth", {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}
    )
    register_error_handlers(app)
    register_blueprints(app)

    from cli import register_commands

    register_commands(app)
    return app


class SlugConverter(BaseConverter):
    """A match slug in a path: lower-case letters, digits and hyphens (anything else is 404)."""

    regex = r"[a-z0-9-]{1,255}"


def register_blueprints(app):
    """Every endpoint group."""
    from blueprints import (
        admin,
        auth,
        backtest,
        data,
        docs,
        explorer,
        meta,
        ops,
        picks,
        seo,
        track_record,
    )

    app.url_map.converters["slug"] = SlugConverter
    api.register_converter(
        SlugConverter, lambda _converter: {"type": "string", "pattern": f"^{SlugConverter.regex}$"}
    )
    for module in (meta, auth, picks, explorer, track_record, backtest, seo, data, ops, admin):
        api.register_blueprint(module.blp)
    for kind, schema in RESULT_SCHEMAS.items():  # what an operation's result may be
        api.spec.components.schema(result_component(kind), schema=schema)
    app.register_blueprint(docs.blp)  # pages, not part of the API they describe


def escape_controls(text: str) -> str:
    """``text`` with every control character written as an escape (a newline as ``\\x0a``)."""
    return LOG_CONTROLS.sub(lambda found: f"\\x{ord(found.group()):02x}", text)


class OneLineFormatter(logging.Formatter):
    """Each record's message on one line: values a client sent (a path, an error's text) cannot
    start a line of their own and pass for another record. A traceback keeps its lines."""

    def formatMessage(self, record):  # noqa: N802 - logging's name
        record.message = escape_controls(record.message)
        return super().formatMessage(record)


def configure_logging(level):
    """One line per record on stdout, as a PaaS collects it (set up once per process)."""
    if not any(getattr(handler, "is_picks", False) for handler in log.handlers):
        handler = logging.StreamHandler(sys.stdout)
        handler.setFormatter(OneLineFormatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
        handler.is_picks = True
        log.addHandler(handler)
    log.setLevel(level)


def register_request_hooks(app):
    """Request ids, rate-limit headers, the access log and closing the database connection."""

    @app.before_request
    def start_request():
        given = request.headers.get("X-Request-ID", "")
        g.request_id = given if REQUEST_ID.match(given) else uuid.uuid4().hex
        g.started = time.perf_counter()

    @app.after_request
    def finish_request(response):
        request_id = g.get("request_id") or uuid.uuid4().hex
        response.headers["X-Request-ID"] = request_id
        if not access_log.isEnabledFor(logging.INFO):
            return response
        viewer = g.get("viewer")
        access_log.info(
            "method=%s path=%s status=%s duration_ms=%.1f ip=%s user=%s request_id=%s",
            request.method,
            request.path,
            response.status_code,
            (time.perf_counter() - g.get("started", time.perf_counter())) * 1000,
            request.remote_addr or "-",
            viewer.id if viewer else "-",
            request_id,
        )
        return response

    @app.after_request
    def add_rate_limit_headers(response):
        response.headers.update(ratelimits.headers())
        return response

    @app.after_request
    def add_security_headers(response):
        # A browser must take every answer for the type it says it is, never guess another.
        response.headers["X-Content-Type-Options"] = "nosniff"
        return response

    @app.teardown_appcontext
    def close_database(_exc):
        if not db.is_closed():
            db.close()


def register_token_loaders():
    """Every flask-jwt-extended failure becomes our bare 401 (its default is a 422 with JSON)."""
    jwt.additional_claims_loader(token_claims)
    jwt.user_lookup_loader(lambda _header, data: user_for_token(data))
    jwt.unauthorized_loader(lambda _reason: unauthorized())
    jwt.invalid_token_loader(lambda _reason: unauthorized(invalid=True))
    for loader in (
        jwt.expired_token_loader,
        jwt.user_lookup_error_loader,
        jwt.token_verification_failed_loader,
        jwt.revoked_token_loader,
        jwt.needs_fresh_token_loader,
    ):
        loader(lambda _header, _data: unauthorized(invalid=True))


def unauthorized(invalid=False):
    """The 401: an empty body and a Bearer challenge."""
    challenge = 'Bearer error="invalid_token"' if invalid else "Bearer"
    return "", 401, {"WWW-Authenticate": challenge}


def problem(status, name, detail, *, errors=None, headers=None):
    """A problem+json response: the only way this service answers an error with a body.

    ``name`` is one of our problem types, or None for a status we give no meaning of our own
    (RFC 9457's ``about:blank``, titled by the HTTP reason phrase); ``errors`` come as
    :func:`listed_errors` gives them. A browser asking one of the
    HTML pages gets the same title and detail as a small page.
    """
    title = PROBLEMS[name][1] if name else HTTPStatus(status).phrase
    blueprint = current_app.blueprints.get(request.blueprint)
    if getattr(blueprint, "html_pages", False) and pages.wants_html():
        response = pages.render("error.html", status, title=title, detail=detail)
        response.headers.update(headers or {})
        return response
    if len(detail) > MAX_DETAIL_CHARS:
        detail = detail[: MAX_DETAIL_CHARS - 1] + "…"
    body = {
        "type": problem_type(name) if name else "about:blank",
        "title": title,
        "status": status,
        "detail": detail,
        "requestId": g.get("request_id"),
    }
    if errors:
        body["errors"] = errors
    return json.dumps(body), status, {"Content-Type": "application/problem+json", **(headers or {})}


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
        return problem(500, "internal-error", "Something went wrong on our side.")
