"""The application factory: configuration, extensions, hooks, blueprints and the CLI."""

import os
import time
from importlib.metadata import version

from werkzeug.middleware.proxy_fix import ProxyFix

from clock import utcnow
from config import ConfigError, config_from_env
from schemas.ops import RESULT_SCHEMAS, result_component
from services.accounts.credentials import PasswordHasher
from services.operations.health import Readiness
from services.reads.explorer import ComparableIndex
from store.database import db, open_database
from web import cors, hooks, openapi, paths, problems, ratelimits, sessions, versions, wire
from web.caching import AnswerCache
from web.extensions import api
from web.fastpath import FastPath
from web.streams import ExportStreams


def create_app(overrides=None):
    """A configured application; ``overrides`` replace settings read from the environment.

    ``overrides`` may also give ``CLOCK``, a callable answering the current UTC time, which the
    web layer reads instead of the system clock (tests freeze time with it).

    A configuration refused raises ``config.ConfigError``, whose one line the entry points print
    (wsgi.py, the worker); under the ``flask`` command, ``cli.unconfigured`` answers instead.
    """
    overrides = dict(overrides or {})
    clock = overrides.pop("CLOCK", utcnow)
    app = hooks.App(__name__, instance_relative_config=True)
    try:
        app.config.update(config_from_env(os.environ, app.instance_path, overrides))
    except ConfigError as error:
        from cli import unconfigured

        return unconfigured(app, error)
    app.config.update(
        API_TITLE="Sports Pick Service",
        API_VERSION=version("sports-pick-service"),
        OPENAPI_VERSION="3.1.0",
        OPENAPI_URL_PREFIX="/",
        OPENAPI_JSON_PATH="openapi.json",
        JWT_TOKEN_LOCATION=["headers"],
    )
    app.json.sort_keys = False  # answer fields in the order the schemas document them
    app.extensions.update(
        started_at=time.monotonic(),
        clock=clock,
        answer_cache=AnswerCache(
            app.config["ANSWER_CACHE_BYTES"], app.config["ANSWER_CACHE_ENTRIES"]
        ),
        readiness=Readiness(app.config["READINESS_CACHE_SECONDS"]),
        comparable_index=ComparableIndex(),
        export_streams=ExportStreams(
            app.config["EXPORT_STREAMS_PER_USER"],
            app.config["EXPORT_STREAMS_PER_PROCESS"],
            app.config["EXPORT_SEND_TIMEOUT"],
            app.config["EXPORT_MIN_RATE"],
        ),
        password_hasher=PasswordHasher(
            app.config["PASSWORD_HASH_METHOD"],
            app.config["PASSWORD_HASH_CONCURRENCY"],
            app.config["PASSWORD_HASH_QUEUE"],
        ),
    )
    hooks.configure_logging(app.config["LOG_LEVEL"])
    app.wsgi_app = FastPath(app, app.wsgi_app)
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
    hooks.init_app(app)
    wire.init_app(app)
    cors.init_app(app)
    sessions.init_app(app)
    ratelimits.init_app(app)
    versions.init_app(app)  # the data version's watch, and its copy on the rate limits' Redis
    paths.init_app(app)  # before any rule: /openapi.json's too
    api.init_app(app)
    openapi.init_app(api)
    api.document(_document_bearer)
    problems.register_error_handlers(app)
    register_blueprints(app)

    from cli import register_commands

    register_commands(app)
    return app


def _document_bearer(spec):
    """The one security scheme: a JWT access token as a bearer."""
    spec.components.security_scheme(
        "bearerAuth", {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}
    )


def _document_results(spec):
    """What an operation's result may be, one component per kind."""
    for kind, schema in RESULT_SCHEMAS.items():
        spec.components.schema(result_component(kind), schema=schema)


def register_blueprints(app):
    """Every endpoint group."""
    from blueprints import (
        admin,
        alerts,
        auth,
        backtest,
        calendars,
        data,
        docs,
        explorer,
        meta,
        ops,
        pages,
        picks,
        seo,
        track_record,
        webhooks,
    )

    paths.document(api)
    for module in (
        meta,
        auth,
        picks,
        explorer,
        track_record,
        backtest,
        seo,
        calendars,
        data,
        webhooks,
        ops,
        admin,
        alerts,
        pages,
    ):
        api.register_blueprint(module.blp)
    api.register_blueprint(alerts.links)
    api.document(webhooks.document_events)
    api.document(_document_results)
    app.register_blueprint(docs.blp)  # pages, not part of the API they describe
