"""Cached answers: a read that is recomputed on every call is served from memory until the data
changes, with a strong ETag, 304s and ``Cache-Control``.

An answer is keyed by the request as it came (path and query string, before anything parses
them; a page for people or crawlers, which ignores its query, by its path alone), what the
caller may see (premium or not), its representation, the scheme and host its links are made
from and the UTC day (an argument left out may default to today), and it is kept
with the **data version** it was made at: a counter the database moves as every transaction
that wrote the tables the answers are made from commits (``models.VERSIONED``). Each request
reads the version from the database (one indexed row), or on Redis from its copy there in the
rate-limit hit's own round trip (:mod:`web.versions`), before looking in its own process's
cache, so an answer is never served after the data it was made from has changed, on any
process. An answer also lives at most ``PUBLIC_MAX_AGE`` seconds, so what turns with the clock
alone is never older than that; and one for a caller without premium access, which may hide a
pick until its kick-off, lives only until the next kick-off of a match with such a pick, so a
pick shows as soon as it may.

An answer made of the caller's own data (their quota usage) is the caller's own: keyed by their
account too, and kept with what it was made from instead of the data version (for the usage,
the month, the caller's role and plan, and their counters), read again at every request, so it
is served only while that still holds.

A stored answer of a view with one representation is kept with the view's access rule, so the
fast path (:mod:`web.fastpath`) can serve it before Flask dispatches the request, admitted as the
full path admits it (:mod:`web.admission`) and sent as it sends it (:func:`stored_response`).
"""

import hashlib
import sys
import threading
from collections import OrderedDict
from datetime import timedelta
from functools import wraps
from typing import NamedTuple

from flask import current_app, request
from werkzeug.http import parse_etags, remove_entity_headers, unquote_etag
from werkzeug.wrappers import Response

from services.market.premium import has_premium, next_unlock
from web import admission

#: Headers of the view's own response that a cached answer replays.
KEPT = ("Content-Type", "Content-Security-Policy")


class Entry(NamedTuple):
    """A stored answer: the version (the data version, or the caller's own) and time it holds
    for, and what to send."""

    version: object
    expires: object  # an aware datetime: the app clock's
    body: bytes
    etag: str  # quoted, as the header carries it
    headers: tuple
    rule: object = None  # the access rule the fast path applies when it may serve it
    #: For a caller's own answer, ``own(viewer, now)`` gives the version it holds for (the
    #: ``version`` it was made at must still equal it); None: the data version.
    own: object = None
    #: A page that ignores its query (:meth:`web.blueprint.Blueprint.page`): stored under the
    #: key of its path alone, and the answer to that path whatever query follows it.
    page: bool = False


#: What the cache's ordered mapping spends on each entry besides its key and value: a slot of
#: its hash table and a node of its recency list (about 100 bytes on CPython 3.11).
MAPPING_BYTES_PER_ENTRY = 128


def _deep_size(value) -> int:
    """Bytes ``value`` holds: a tuple's own size and its items', recursively; anything else its
    own size. Objects shared between entries are counted in each, so the count errs high."""
    if isinstance(value, tuple):
        return sys.getsizeof(value) + sum(_deep_size(item) for item in value)
    return sys.getsizeof(value)


def footprint(key, entry: Entry) -> int:
    """The memory one stored answer really takes: its key (the path, a query string of up to
    8 KiB, the link base…), its entry with the body, ETag and replayed headers, and the
    mapping's own share. Counting the body alone charged a 33-byte answer 33 bytes when it
    cost about 900."""
    return MAPPING_BYTES_PER_ENTRY + _deep_size(key) + _deep_size(entry)


class AnswerCache:
    """A thread-safe LRU of serialised answers, bounded by the memory they take (each counted
    by :func:`footprint`) and by their number."""

    def __init__(self, max_bytes: int, max_entries: int | None = None):
        self.max_bytes = max_bytes
        self.max_entries = max_entries
        self.entries = OrderedDict()  # key → (entry, its footprint)
        self.size = 0
        self.lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, key):
        """The entry stored under ``key`` (most recently used from now on), or None."""
        with self.lock:
            stored = self.entries.get(key)
            if stored is None:
                return None
            self.entries.move_to_end(key)
            return stored[0]

    def put(self, key, entry: Entry) -> None:
        """Store ``entry`` under ``key`` (replacing an older one), evicting the least recent
        until the entries fit both bounds."""
        size = footprint(key, entry)
        if size > self.max_bytes or self.max_entries == 0:
            return
        with self.lock:
            previous = self.entries.pop(key, None)
            if previous is not None:
                self.size -= previous[1]
            self.entries[key] = (entry, size)
            self.size += size
            while self.size > self.max_bytes or (
                self.max_entries is not None and len(self.entries) > self.max_entries
            ):
                _, (_, evicted) = self.entries.popitem(last=False)
                self.size -= evicted


def request_key(
    environ, premium: bool | None, variant, day, caller: str | None = None, query: bool = True
) -> tuple:
    """The cache key of a request, from its WSGI environ as it came: its path and query string
    before anything parses them (its path alone without ``query``: a page ignoring its query),
    what the caller may see, its representation, what the base of its links is made of (scheme
    and host: see :func:`web.links.base_url`) and the UTC day; for a caller's own answer, their
    account id as their token names it (``premium`` None).

    The full request path and the fast path (:mod:`web.fastpath`) both key answers with it."""
    return (
        caller,
        environ.get("PATH_INFO", ""),
        environ.get("QUERY_STRING", "") if query else "",
        premium,
        variant,
        environ.get("wsgi.url_scheme"),
        environ.get("HTTP_HOST"),
        environ.get("SERVER_NAME"),
        environ.get("SERVER_PORT"),
        day,
    )


def own_key(environ, variant, day, account) -> tuple:
    """The cache key of a caller's own answer to a request: :func:`request_key` under the
    ``account`` id (a user's, or the subject their token names)."""
    return request_key(environ, None, variant, day, str(account))


def cached(view, variant=None, rule=None, own=None, page=None):
    """``view`` (returning a response) served through the app's answer cache; ``rule`` is its
    access rule, which the fast path applies itself when it serves an answer stored here (for
    a view with one representation). With ``own``, each caller's answer is their own, kept with
    the version ``own(viewer, now)`` gives (see :class:`Entry`). ``page()`` tells whether the
    request asks for a page that ignores its query: its answer is keyed by its path alone, so
    every spelling of a link to it shares one entry and one ETag."""
    fast = rule if variant is None else None

    @wraps(view)
    def answer(*args, **kwargs):
        app = current_app._get_current_object()
        now = app.extensions["clock"]()
        admitted = admission.of(request.environ)
        viewer = admitted.viewer
        premium = has_premium(viewer)
        representation = variant() if variant else None
        ignores_query = page is not None and page()
        if own is None:
            key = request_key(
                request.environ, premium, representation, now.date(), query=not ignores_query
            )
        else:
            key = own_key(request.environ, representation, now.date(), viewer.id)
        # Read before the data it versions (the rate-limit hit read it from Redis, if it did).
        version = admitted.version(app, own, now)
        cache = app.extensions["answer_cache"]
        entry = cache.get(key)
        if entry is None or entry.version != version or entry.expires <= now:
            expires = now + timedelta(seconds=app.config["PUBLIC_MAX_AGE"])
            if not premium:  # read before the answer: a pick unlocking meanwhile only shortens it
                expires = min(expires, next_unlock(now) or expires)
            response = view(*args, **kwargs)
            if response.status_code != 200:
                return response
            body = response.get_data()
            headers = tuple(
                (name, response.headers[name]) for name in KEPT if name in response.headers
            )
            etag = f'"{hashlib.sha256(body).hexdigest()[:32]}"'
            entry = Entry(version, expires, body, etag, headers, fast, own, ignores_query)
            cache.put(key, entry)
        status, headers, body = stored_response(entry, request.environ, variant is not None, app)
        return Response(body, status=status, headers=headers)

    return answer


def stored_response(entry: Entry, environ, varies_by_accept: bool, app) -> tuple:
    """``(status, headers, body)`` of the stored answer ``entry`` to the request of ``environ``:
    a 304 without its body (nor the headers describing one, as werkzeug sends a 304) when the
    request holds its ETag, else a 200 with it. The full path and the fast path both send it."""
    authorized = "HTTP_AUTHORIZATION" in environ
    headers = answer_headers(entry, varies_by_accept, authorized, app.config)
    if not_modified(environ.get("HTTP_IF_NONE_MATCH"), entry.etag):
        remove_entity_headers(headers)
        return 304, headers, b""
    headers.append(("Content-Length", str(len(entry.body))))
    return 200, headers, entry.body


def answer_headers(entry: Entry, varies_by_accept: bool, authorized: bool, config) -> list:
    """The headers a stored answer is sent with: its own, its ETag, Vary and Cache-Control."""
    headers = list(entry.headers)
    headers.append(("ETag", entry.etag))
    headers.append(("Vary", "Authorization, Accept" if varies_by_accept else "Authorization"))
    if authorized:
        headers.append(("Cache-Control", "private, no-cache"))
    else:
        headers.append(("Cache-Control", f"public, max-age={config['PUBLIC_MAX_AGE']}"))
    return headers


def not_modified(if_none_match: str | None, etag: str) -> bool:
    """Whether a client sending ``If-None-Match: if_none_match`` holds the answer ``etag``: by
    the weak comparison RFC 9110 (13.1.2) asks of it, so ``W/"…"`` of the tag matches too (a
    proxy that compresses an answer may weaken its tag), as does ``*``."""
    if not if_none_match:
        return False
    return parse_etags(if_none_match).contains_weak(unquote_etag(etag)[0])
