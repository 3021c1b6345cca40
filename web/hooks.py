"""What every request passes through: its id, the check that the database's schema is current,
the access log, the rate-limit and security headers, closing its database connection; and the
one-line log format."""

import itertools
import logging
import re
import secrets
import sys
import time

from flask import Flask, current_app, g, request

from errors import SchemaOutdated
from store import migrate
from store.database import db
from web import admission, html, links, ratelimits

log = logging.getLogger("picks")
access_log = logging.getLogger("picks.access")

REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")

#: Characters a log line never carries as they are: controls (a newline would start a forged
#: line), DEL, C1 controls and Unicode's line and paragraph separators.
LOG_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


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


class RequestIds:
    """Request ids (32 hex digits) unique across processes and restarts without a system call
    each: a random prefix per process, then a counter (``itertools.count`` is thread-safe)."""

    def __init__(self):
        self.prefix = secrets.token_hex(12)
        self.counter = itertools.count(1)

    def next(self) -> str:
        return f"{self.prefix}{next(self.counter):08x}"


#: Endpoints that answer without the database, so they answer while its schema is behind:
#: liveness (restarting the process would not help), the documentation and the problem pages.
#: Readiness checks the schema itself, after its cached probe (so an unreachable database is
#: not asked again at every probe).
WITHOUT_DATABASE = frozenset(
    {
        "static",
        "api-docs.openapi_json",
        "meta.Index",
        "meta.Problem",
        "meta.Liveness",
        "meta.Readiness",
    }
)


def _reads_database(endpoint) -> bool:
    """Whether the endpoint may read the database (None: no route, a 404 or 405)."""
    if endpoint in html.PAGE_ENDPOINTS:
        return html.wants_html()  # the landing page reads the matches; the JSON index nothing
    return bool(endpoint) and endpoint not in WITHOUT_DATABASE and not endpoint.startswith("docs.")


class SchemaCheck:
    """Whether the database has applied every migration step this version has. Asked at each
    request until the answer is yes (one small query), never again after: a release applies its
    steps (``flask db upgrade``) before or while its processes start, never after them."""

    def __init__(self):
        self.current = False

    def require(self) -> None:
        """Raise SchemaOutdated while steps are pending."""
        if self.current:
            return
        missing = migrate.pending()
        if missing:
            raise SchemaOutdated(missing)
        self.current = True


def request_id(app, given: str) -> str:
    """The request's id: the ``X-Request-ID`` it came with when well-formed, else a new one."""
    return given if REQUEST_ID.match(given) else app.extensions["request_ids"].next()


#: How long a browser that saw the service over https keeps to https (two years), its
#: subdomains included.
STRICT_TRANSPORT = "max-age=63072000; includeSubDomains"

#: A link followed from a page names the service's origin to another site, never a path (a
#: match, a page of the explorer); nothing over http after https.
REFERRER_POLICY = "strict-origin-when-cross-origin"


def common_headers(request_id_: str, config) -> list[tuple[str, str]]:
    """The headers every answer carries besides its rate-limit headers (``config``: the app's),
    whichever path made it: the full path, the fast path, or gunicorn's own refusals."""
    # A browser must take every answer for the type it says it is, never guess another.
    headers = [
        ("X-Request-ID", request_id_),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", REFERRER_POLICY),
    ]
    # Only a service whose public address is https says so: over plain http (development, a
    # test server) the header would pin browsers to an https that does not answer.
    if links.configured_base(config).lower().startswith("https://"):
        headers.append(("Strict-Transport-Security", STRICT_TRANSPORT))
    return headers


def log_access(method, path, status, started, ip, user_id, request_id_) -> None:
    """The access log's line for one request (``started``: its ``time.perf_counter()``)."""
    if access_log.isEnabledFor(logging.INFO):
        access_log.info(
            "method=%s path=%s status=%s duration_ms=%.1f ip=%s user=%s request_id=%s",
            method,
            path,
            status,
            (time.perf_counter() - started) * 1000,
            ip or "-",
            user_id,
            request_id_,
        )


def init_app(app):
    """Request ids, the schema check, the access log, the per-request headers and closing the
    database connection: one hook before each request and one after it."""
    app.extensions["request_ids"] = RequestIds()
    app.extensions["schema_check"] = SchemaCheck()

    @app.before_request
    def start_request():
        g.request_id = request_id(current_app, request.headers.get("X-Request-ID", ""))
        g.started = time.perf_counter()
        if _reads_database(request.endpoint):
            current_app.extensions["schema_check"].require()

    @app.after_request
    def finish_request(response):
        try:
            return _finish(response)
        except BaseException:
            # The answer becomes an error and this response is never sent: close it now (a
            # streamed export's snapshot and place), not whenever the collector finds it.
            response.close()
            raise

    def _finish(response):
        request_id_ = g.get("request_id") or current_app.extensions["request_ids"].next()
        headers = response.headers
        for name, value in common_headers(request_id_, current_app.config):
            headers[name] = value
        headers.update(ratelimits.headers())
        viewer = admission.of(request.environ).viewer
        log_access(
            request.method,
            request.path,
            response.status_code,
            g.get("started", time.perf_counter()),
            request.remote_addr,
            viewer.id if viewer else "-",
            request_id_,
        )
        return response

    @app.teardown_appcontext
    def close_database(_exc):
        if not db.is_closed():
            db.close()


class App(Flask):
    """Flask, whose own answer to OPTIONS (the methods a path allows, no body) carries no
    ``Content-Type``: there is nothing for it to describe; its templates are compiled once per
    process (``html.COMPILED_TEMPLATES``)."""

    jinja_options = {**Flask.jinja_options, "bytecode_cache": html.COMPILED_TEMPLATES}

    def make_default_options_response(self):
        response = super().make_default_options_response()
        del response.headers["Content-Type"]
        return response
