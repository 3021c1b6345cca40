"""The fast path: a cache hit answered before Flask dispatches the request.

A stored answer (:mod:`web.caching`) of a view with one representation is served from the
WSGI environ: admitted as the full path admits it (:mod:`web.admission`: the caller, the view's
access rule, one rate-limit hit, the quota, the version the answer must have been made at),
then sent as the full path sends it (:func:`web.caching.stored_response`), with the same
headers and the same access-log line (:mod:`web.hooks`).

Everything else goes down the full path, which answers it as it always does: a method other
than GET, a request carrying ``Origin`` (CORS answers are flask-cors's), an ``Authorization``
header that is not one bearer token verified before, an account that is gone or may not call,
an answer not stored yet, stale or made at another version, a database that fails to answer,
and a request the limit or the quota refuses. The full path takes over what admission decided
here rather than deciding it again: each request is counted and charged once.
"""

import logging
import time

from peewee import PeeweeException

from errors import AppError
from services.market.premium import has_premium
from store.database import db
from web import admission, caching, hooks, sessions

log = logging.getLogger("picks.fastpath")

#: The status lines of a stored answer, as werkzeug writes them.
STATUS = {200: "200 OK", 304: "304 NOT MODIFIED"}


class Refused(Exception):
    """The fast path does not answer this request: the full path does."""


class FastPath:
    """WSGI middleware serving ``app``'s stored answers ahead of ``wsgi_app``."""

    def __init__(self, app, wsgi_app):
        self.app = app
        self.wsgi_app = wsgi_app

    def __call__(self, environ, start_response):
        if environ.get("REQUEST_METHOD") != "GET" or "HTTP_ORIGIN" in environ:
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
        opened = db.is_closed()  # left open by whoever opened it (a test's app context)
        try:
            return self._answer(app, environ, started)
        except (Refused, AppError, PeeweeException):
            return None  # the full path meets the same and answers it
        except Exception:
            log.exception("the fast path failed; the full path answers the request")
            return None
        finally:
            if opened and not db.is_closed():
                db.close()

    def _answer(self, app, environ, started):
        now = app.extensions["clock"]()
        stored = _stored(app, environ, now.date())
        rule = next(iter(stored.values())).rule if stored else None
        if rule is None:
            raise Refused
        admitted = admission.admit(app, environ, rule, now, _unverified)
        entry = stored.get(None if None in stored else has_premium(admitted.viewer))
        if (
            entry is None
            or entry.expires <= now
            or admitted.version(app, entry.own, now) != entry.version
        ):
            raise Refused  # the full path makes it again, taking admission over
        request_id = hooks.request_id(app, environ.get("HTTP_X_REQUEST_ID", ""))
        code, headers, body = caching.stored_response(entry, environ, False, app)
        headers += hooks.common_headers(request_id, app.config) + admitted.rate_limit_headers(app)
        path = environ.get("PATH_INFO", "").encode("latin-1").decode("utf-8", "replace")
        ip, user_id = environ.get("REMOTE_ADDR"), admitted.viewer.id if admitted.viewer else "-"
        hooks.log_access("GET", path, code, started, ip, user_id, request_id)
        return STATUS[code], headers, body


def _stored(app, environ, day) -> dict:
    """The answers stored for this request, by whether they are for a caller with premium access
    (both looked up for a request sending a token; a page's under its path alone when the
    request's query finds none), before the token or the account are read,
    so a request with none costs next to nothing here; else the caller's own answer, by None,
    under the account the token names (stored under the user's id, so only their token finds
    it, and only once it was verified before)."""
    cache, authorization = app.extensions["answer_cache"], environ.get("HTTP_AUTHORIZATION")
    found = {}
    for premium in (True, False) if authorization is not None else (False,):
        entry = cache.get(caching.request_key(environ, premium, None, day))
        if entry is None and environ.get("QUERY_STRING"):
            # A page ignores its query: its answer is stored under its path alone (an answer
            # stored there for a view that reads its query answers only the bare path).
            entry = cache.get(caching.request_key(environ, premium, None, day, query=False))
            entry = entry if entry is not None and entry.page else None
        if entry is not None:
            found[premium] = entry
    if found or authorization is None:
        return found
    claims = sessions.remembered_claims(app, authorization)
    entry = claims and cache.get(caching.own_key(environ, None, day, claims.get("sub")))
    return {None: entry} if entry else {}


def _unverified():
    """A token not verified before is flask-jwt-extended's to judge, on the full path."""
    raise Refused
