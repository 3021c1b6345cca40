"""gunicorn's threaded worker, answering the requests gunicorn refuses itself as the app answers
every error.

gunicorn refuses some requests before the app sees them: a request line longer than
``limit_request_line`` (414), too many or too long header fields (431), a malformed request
line, method, version or header (400), an ``Expect`` it cannot meet (417), a transfer coding
it does not know (501); and it answers 500 when the app fails outside Flask before its answer
began (a streamed export's first rows). It answered them with an HTML page and no
``X-Request-ID``; here the answer is the problem+json of :mod:`web.problems` (a relative
``type`` unless ``PUBLIC_BASE_URL`` is set: the request's host is not read), with the request's
own id when gunicorn read its headers (else a new one) and an access-log line; a 500's
traceback is logged under that id. Which status gunicorn picks, and what it logs, stay its
own; an app that is not this service (no request ids) keeps gunicorn's page. HTTP/2, off by
default, answers its stream errors through gunicorn's own path.

A body longer than gunicorn drains when the app leaves it unread (64 KiB) ends the connection
whatever the answer: the answer says ``Connection: close`` rather than ``keep-alive``. A chunked
body has no length to judge in advance: an answer sent before the app read it to its last chunk
(a 413 part-way, a 401 before reading) says ``Connection: close``, so a request pipelined behind
it is sent again by the client rather than lost on a connection that said it stays open.

The service's modules are imported when first needed, in a worker, never by the master, which
loads this class: a reload (``HUP``) forks workers that import the code as it is then.
"""

import json
import logging
import time
from http import HTTPStatus

from gunicorn import util
from gunicorn.http import parser
from gunicorn.workers.gthread import ThreadWorker

log = logging.getLogger("picks")

#: The most of an unread body gunicorn drains to keep a connection alive (gunicorn's own cap).
DRAINED = getattr(parser, "_DRAIN_MAX_BYTES", 64 * 1024)


class _Kept:
    """The client's socket as gunicorn's ``handle_error`` writes to it: what it writes is kept
    (and sent later, or replaced), everything else is the socket's own."""

    def __init__(self, sock):
        self.sock = sock
        self.written = bytearray()

    def gettimeout(self):
        return 0.0  # so gunicorn writes with sendall, here, without changing the socket's mode

    def sendall(self, data):
        self.written += data

    def __getattr__(self, name):
        return getattr(self.sock, name)


class ProblemWorker(ThreadWorker):
    """gunicorn's ``gthread`` worker, whose own error answers are problems (see the module),
    and whose answer to a body longer than gunicorn drains says the connection ends."""

    def handle_request(self, req, conn):
        # The app leaves a body unread when it refuses the request before parsing it (401, 403,
        # 404, 405, 429, 413): gunicorn then closes the connection after an answer that said
        # "keep-alive", and a client's next request on it meets a closed socket.
        if _declared_length(req) > DRAINED:
            req.must_close = True  # the answer says "Connection: close", as it is
        elif _header(req, "TRANSFER-ENCODING") is not None:
            # Asked when the answer's head is written, and again before the next request.
            closes = req.should_close
            req.should_close = lambda: closes() or not _chunks_read(req)
        return super().handle_request(req, conn)

    def handle_error(self, req, client, addr, exc):
        started = time.perf_counter()
        kept = _Kept(client)
        super().handle_error(req, kept, addr, exc)
        answer = bytes(kept.written)
        try:
            status = int(answer.split(b" ", 2)[1])
            answer = refusal(self.wsgi, status, exc, req, addr, started) or answer
        except (ValueError, IndexError, KeyError, TypeError):  # gunicorn's own page still answers
            log.exception("could not make a problem of the server's refusal")
        try:
            util.write_nonblock(client, answer)
        except OSError:  # a client that is gone is gone
            self.log.debug("Failed to send error message.")


def _header(req, name: str) -> str | None:
    """The value of header ``name`` (upper-case, as gunicorn keeps it) of what gunicorn read of
    a request (``req`` may be None, or its headers not read yet); None without one."""
    for header, value in getattr(req, "headers", None) or ():
        if header == name:
            return value
    return None


def _chunks_read(req) -> bool:
    """Whether the app read ``req``'s chunked body to its last chunk (gunicorn's reader drops
    its chunk parser then; a reader it does not know counts as unread)."""
    reader = getattr(getattr(req, "body", None), "reader", None)
    return hasattr(reader, "parser") and reader.parser is None


def _declared_length(req) -> int:
    """The body length ``req``'s Content-Length declares (gunicorn checked it is digits); 0."""
    return int(_header(req, "CONTENT-LENGTH") or 0)


def refusal(app, status, exc, req, addr, started) -> bytes | None:
    """The HTTP answer to a request refused with ``status`` for ``exc``; None for an app that
    is not this service."""
    if "request_ids" not in getattr(app, "extensions", {}):
        return None
    from web import hooks, problems  # in the worker, loaded with the app (see the module)

    read = req if req is not None else getattr(exc, "req", None)  # what gunicorn read of it
    request_id = hooks.request_id(app, _header(read, "X-REQUEST-ID") or "")
    if status == 500:  # the app failed outside Flask, before its answer began
        log.error("unhandled error request_id=%s", request_id, exc_info=exc)
        detail = problems.INTERNAL_ERROR
    else:
        detail = f"The request could not be read: {problems.clipped(str(exc))}."
    name = problems.HTTP_PROBLEMS.get(status)
    body = json.dumps(problems.document(status, name, detail, request_id, config=app.config))
    method, path = getattr(read, "method", None) or "-", getattr(read, "path", None) or "-"
    hooks.log_access(method, path, status, started, (addr or ("",))[0], "-", request_id)
    head = [
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}",
        "Connection: close",
        f"Content-Type: {problems.PROBLEM_JSON}",
        f"Content-Length: {len(body.encode())}",
        *(f"{name}: {value}" for name, value in hooks.common_headers(request_id, app.config)),
    ]
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body.encode()
