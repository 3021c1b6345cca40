"""Cached answers: a read that is recomputed on every call is served from memory until the data
changes, with a strong ETag, 304s and ``Cache-Control``.

An answer is keyed by the endpoint, its path and parsed arguments, what the caller may see
(premium or not), its representation, the base of its links, and the **data version**, a
counter that every import, backfill, settlement and refresh bumps in its own transaction. So an
answer is never served after the data it was made from has changed, on any process: each reads
the version from the database (one indexed row) before looking in its own cache.
"""

import hashlib
import threading
from collections import OrderedDict
from functools import wraps

from flask import current_app, g, request
from werkzeug.wrappers import Response

from models import data_version
from services.premium import has_premium
from web.links import base_url

#: Headers of the view's own response that a cached answer replays.
KEPT = ("Content-Type", "Content-Security-Policy")


class AnswerCache:
    """A thread-safe LRU of serialised answers, bounded by their total size in bytes."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self.entries = OrderedDict()
        self.size = 0
        self.lock = threading.Lock()

    def get(self, key):
        """The entry stored under ``key`` (most recently used from now on), or None."""
        with self.lock:
            entry = self.entries.get(key)
            if entry is not None:
                self.entries.move_to_end(key)
            return entry

    def put(self, key, entry) -> None:
        """Store ``entry`` (a ``(body, etag, headers)`` tuple), evicting the least recent."""
        body = entry[0]
        if len(body) > self.max_bytes:
            return
        with self.lock:
            previous = self.entries.pop(key, None)
            if previous is not None:
                self.size -= len(previous[0])
            self.entries[key] = entry
            self.size += len(body)
            while self.size > self.max_bytes:
                _, evicted = self.entries.popitem(last=False)
                self.size -= len(evicted[0])


def cached(view, variant=None):
    """``view`` (returning a response) served through the app's answer cache."""

    @wraps(view)
    def answer(*args, **kwargs):
        premium = has_premium(g.get("viewer"))
        key = (
            request.endpoint,
            repr(args[1:]),  # args[0] is the MethodView instance, new on every request
            repr(sorted(kwargs.items())),
            premium,
            variant() if variant else None,
            base_url(),  # links in the answer (a prediction page's canonical URL) name it
            data_version(),  # read before the data, so an answer is never older than its key
        )
        cache = current_app.extensions["answer_cache"]
        entry = cache.get(key)
        if entry is None:
            response = view(*args, **kwargs)
            if response.status_code != 200:
                return response
            body = response.get_data()
            headers = [(name, response.headers[name]) for name in KEPT if name in response.headers]
            entry = (body, hashlib.sha256(body).hexdigest()[:32], headers)
            cache.put(key, entry)
        body, etag, headers = entry
        response = Response(body, headers=headers)
        response.set_etag(etag)
        response.headers["Vary"] = "Authorization, Accept" if variant else "Authorization"
        if "Authorization" in request.headers:
            response.headers["Cache-Control"] = "private, no-cache"
        else:
            response.headers["Cache-Control"] = (
                f"public, max-age={current_app.config['PUBLIC_MAX_AGE']}"
            )
        return response.make_conditional(request)

    return answer
