"""The fast path: a cache hit answered before Flask dispatches the request.

A stored answer (:mod:`web.caching`) of a view with one representation is served from the
WSGI environ with exactly what the full path would spend on it: the caller (anonymous, or a
bearer token this process has verified already, whose account is read at every request), the
view's access rule, one rate-limit hit, the data version (on Redis read in the hit's own round
trip, see :mod:`web.versions`, else one indexed row; for a caller's own answer, their usage,
what it was made from: their counters), the quota when the rule charges one, and the stored
bytes, with the same headers and the same access-log line.

Everything else goes down the full path, which answers it as it always does: a method other
than GET, a request carrying ``Origin`` (CORS answers are flask-cors's), an ``Authorization``
header that is not one bearer token verified before, an account that is gone, suspended or
not allowed, an answer not stored yet, stale or made at another data version, a database that
fails to answer, and a hit the limit or the quota refuses. Once the rate limit has counted the
request, the full path takes that count over (:data:`web.ratelimits.COUNTED`) rather than
counting it again; nothing else the fast path does is counted.
"""

import logging
import time

from peewee import PeeweeException
from werkzeug.http import remove_entity_headers

from errors import AppError
from services import quotas
from services.premium import has_premium
from store.database import db
from web import caching, hooks, ratelimits, sessions
from web.extensions import limiter

log = logging.getLogger("picks.fastpath")


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
        authorization = environ.get("HTTP_AUTHORIZATION")
        # The answers stored for this request, for a caller with premium access or without:
        # looked up before the token and the account are read, so a request with none (a view
        # whose answers are not stored) costs next to nothing here.
        cache, day = app.extensions["answer_cache"], now.date()
        stored = {
            premium: cache.get(caching.request_key(environ, premium, None, day))
            for premium in ((True, False) if authorization is not None else (False,))
        }
        if any(stored.values()):
            user = _caller(_claims(app, authorization))
            entry = stored[has_premium(user)]
        else:
            user, entry = _own_answer(app, environ, authorization, day)
        if entry is None or entry.rule is None or entry.expires <= now:
            raise Refused
        rule = entry.rule
        if user is None and (rule.token == "required" or rule.per == "user"):
            raise Refused  # the full path's 401
        if user is not None:
            rule.authorise(user)  # the full path's 403, raised
        ip = environ.get("REMOTE_ADDR")
        counted = _count(app, environ, rule, user, ip)
        if caching.current_version(app, entry.own, user, now, counted) != entry.version:
            raise Refused  # the full path makes it again, taking the count over
        if rule.quota:  # refused or failing, the full path takes the count over (see _count)
            quotas.consume_request(user, app.config, now)
        environ.pop(ratelimits.COUNTED, None)  # answered here: nothing to hand over
        request_id = hooks.request_id(app, environ.get("HTTP_X_REQUEST_ID", ""))
        headers = caching.answer_headers(entry, False, user is not None, app.config)
        if caching.not_modified(environ.get("HTTP_IF_NONE_MATCH"), entry.etag):
            status, body = "304 NOT MODIFIED", b""
            remove_entity_headers(headers)  # as werkzeug sends a 304
        else:
            status, body = "200 OK", entry.body
            headers.append(("Content-Length", str(len(body))))
        headers.extend(hooks.common_headers(request_id))
        if counted is not None:
            headers.extend(ratelimits.header_items(app, counted))
        path = environ.get("PATH_INFO", "").encode("latin-1").decode("utf-8", "replace")
        code = int(status[:3])
        hooks.log_access("GET", path, code, started, ip, user.id if user else "-", request_id)
        return status, headers, body


def _own_answer(app, environ, authorization, day):
    """``(user, entry)``: the caller and their own stored answer to this request (their usage),
    looked up under the account their token names (stored under the user's id, so only the
    account's own id finds it); Refused when there is none."""
    claims = _claims(app, authorization)
    subject = claims and claims.get("sub")
    entry = subject and app.extensions["answer_cache"].get(
        caching.own_key(environ, None, day, subject)
    )
    if not entry:
        raise Refused
    return _caller(claims), entry


def _claims(app, authorization) -> dict | None:
    """The claims of the bearer token in ``authorization`` when this process verified it
    already; None without the header; Refused for any other header."""
    if authorization is None:
        return None
    claims = sessions.remembered_claims(app, authorization)
    if claims is None:
        raise Refused  # verified (or refused) by flask-jwt-extended on the full path
    return claims


def _caller(claims):
    """The active account the token's ``claims`` name (None for no token); Refused for one
    that is gone, renewed its password since, or is suspended."""
    if claims is None:
        return None
    user = sessions.caller(claims)
    if user is None or user.status != "active":
        raise Refused  # the full path's 401, 403 or anonymous reading
    return user


def _count(app, environ, rule, user, ip):
    """One hit on ``rule``'s rate limit, handed to the full path should this request go there
    (refused here, by the data version or by the quota): what it was counted against (None
    with limits off)."""
    if not limiter.enabled:
        return None
    limit, key = rule.limit_value(app.config), rule.rate_key(user, ip)
    counted, allowed = ratelimits.count(app, rule.policy, limit, key)
    environ[ratelimits.COUNTED] = (counted, allowed)
    if not allowed:
        raise Refused
    return counted
