"""The fast path: an anonymous reader's cache hit on a public view, answered before Flask
dispatches the request.

A stored answer (:mod:`web.caching`) of a view under a rule that admits anonymous callers,
counts them by client IP and charges no quota is served from the WSGI environ alone, with
exactly what the full path would spend on it: the schema check's verdict, the data version
(one indexed row), one rate-limit hit and the stored bytes, with the same headers and the
same access-log line. Everything else goes down the full path: a method other than GET, a
request carrying ``Authorization`` or ``Origin`` (CORS answers are flask-cors's), an answer
not stored yet, stale or made at another data version, a database that fails to answer, and
a hit the limit refuses (its 429 is written by the full path, which takes over the refused
hit rather than counting the request again).
"""

import logging
import time

from peewee import PeeweeException
from werkzeug.http import remove_entity_headers

from models import data_version
from store.database import db
from web import caching, hooks, ratelimits
from web.access import POLICY_SETTINGS
from web.extensions import limiter

log = logging.getLogger("picks.fastpath")


class FastPath:
    """WSGI middleware serving ``app``'s stored public answers ahead of ``wsgi_app``."""

    def __init__(self, app, wsgi_app):
        self.app = app
        self.wsgi_app = wsgi_app

    def __call__(self, environ, start_response):
        if (
            environ.get("REQUEST_METHOD") != "GET"
            or "HTTP_AUTHORIZATION" in environ
            or "HTTP_ORIGIN" in environ
        ):
            return self.wsgi_app(environ, start_response)
        answer = self.answer(environ)
        if answer is None:
            return self.wsgi_app(environ, start_response)
        status, headers, body = answer
        start_response(status, headers)
        return [body]

    def answer(self, environ):
        """``(status, headers, body)`` of the stored answer, or None to take the full path."""
        started = time.perf_counter()
        app = self.app
        if not app.extensions["schema_check"].current:
            return None  # the full path asks, and answers 503 while steps are pending
        now = app.extensions["clock"]()
        key = caching.request_key(environ, False, None, now.date())
        entry = app.extensions["answer_cache"].get(key)
        if entry is None or entry.rule is None or entry.expires <= now:
            return None
        opened = db.is_closed()  # left open by whoever opened it (a test's app context)
        try:
            version = data_version()  # read before the answer is sent, as the full path does
        except PeeweeException:
            return None  # the full path meets the same failure and answers its problem
        finally:
            if opened and not db.is_closed():
                db.close()
        if version != entry.version:
            return None
        rule = entry.rule
        ip = environ.get("REMOTE_ADDR")
        rate_headers = []
        if limiter.enabled:
            limit = app.config[POLICY_SETTINGS[rule.policy]]
            # As flask-limiter's get_remote_address names a caller without an address.
            key = f"ip:{ip or '127.0.0.1'}"
            counted, allowed = ratelimits.count(app, rule.policy, limit, key)
            if not allowed:
                environ[ratelimits.REFUSED] = counted
                return None
            rate_headers = ratelimits.header_items(app, counted)
        request_id = hooks.request_id(app, environ.get("HTTP_X_REQUEST_ID", ""))
        headers = caching.answer_headers(entry, False, False, app.config)
        if caching.not_modified(environ.get("HTTP_IF_NONE_MATCH"), entry.etag):
            status, body = 304, b""
            remove_entity_headers(headers)  # as werkzeug sends a 304
        else:
            status, body = 200, entry.body
            headers.append(("Content-Length", str(len(body))))
        headers.extend(hooks.common_headers(request_id))
        headers.extend(rate_headers)
        path = environ.get("PATH_INFO", "").encode("latin-1").decode("utf-8", "replace")
        hooks.log_access("GET", path, status, started, ip, "-", request_id)
        return ("200 OK" if status == 200 else "304 NOT MODIFIED"), headers, body
