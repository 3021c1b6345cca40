"""gunicorn's threaded worker, answering the requests gunicorn refuses itself as the app answers
every error.

gunicorn refuses some requests before the app sees them: a request line longer than
``limit_request_line`` (414), too many or too long header fields (431), a malformed request
line, method, version or header (400), an ``Expect`` it cannot meet (417), a transfer coding
it does not know (501). It answered them with an HTML page and no ``X-Request-ID``; here the
answer is the problem+json of :mod:`web.problems` (a relative ``type`` unless
``PUBLIC_BASE_URL`` is set: the request's host was not read), with a request id and an
access-log line. Which status gunicorn picks, and what it logs, stay its own; an app that is
not this service (no request ids) keeps gunicorn's page.
"""

import json
import logging
import time
from http import HTTPStatus

from gunicorn import util
from gunicorn.workers.gthread import ThreadWorker

from web import hooks, problems

log = logging.getLogger("picks")


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
    and whose answer to a body longer than the app reads ends the connection saying so."""

    def handle_request(self, req, conn):
        # The app answers 413 without reading a body over MAX_CONTENT_LENGTH, and gunicorn, which
        # drains at most 64 KiB left unread, would close the connection after an answer saying
        # "keep-alive": a client's next request on it would meet a closed socket.
        limit = getattr(self.wsgi, "config", {}).get("MAX_CONTENT_LENGTH")
        if limit is not None and _declared_length(req) > limit:
            req.must_close = True  # the answer says "Connection: close", as it is
        return super().handle_request(req, conn)

    def handle_error(self, req, client, addr, exc):
        started = time.perf_counter()
        kept = _Kept(client)
        super().handle_error(req, kept, addr, exc)
        answer = bytes(kept.written)
        try:
            status = int(answer.split(b" ", 2)[1])
            answer = refusal(self.wsgi, status, exc, req, addr, started) or answer
        except Exception:  # gunicorn's own answer is still an answer
            log.exception("could not make a problem of the server's refusal")
        try:
            util.write_nonblock(client, answer)
        except OSError:  # a client that is gone is gone
            self.log.debug("Failed to send error message.")


def _declared_length(req) -> int:
    """The body length ``req``'s Content-Length declares (gunicorn checked it is digits); 0."""
    for name, value in req.headers:
        if name == "CONTENT-LENGTH":
            return int(value)
    return 0


def refusal(app, status, exc, req, addr, started) -> bytes | None:
    """The HTTP answer to a request refused with ``status`` for ``exc``; None for an app that
    is not this service."""
    request_ids = getattr(app, "extensions", {}).get("request_ids")
    if request_ids is None:
        return None
    # A new id: gunicorn refuses a request before it has its headers (so no X-Request-ID).
    request_id = request_ids.next()
    if status == 500:  # the app failed outside Flask: the log has it
        detail = problems.INTERNAL_ERROR
    else:
        detail = f"The request could not be read: {problems.clipped(str(exc))}."
    name = problems.HTTP_PROBLEMS.get(status)
    body = json.dumps(problems.document(status, name, detail, request_id, config=app.config))
    read = req if req is not None else getattr(exc, "req", None)  # its request line, if read
    method, path = getattr(read, "method", None) or "-", getattr(read, "path", None) or "-"
    hooks.log_access(method, path, status, started, (addr or ("",))[0], "-", request_id)
    head = [
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}",
        "Connection: close",
        "Content-Type: application/problem+json",
        f"Content-Length: {len(body.encode())}",
        *(f"{name}: {value}" for name, value in hooks.common_headers(request_id)),
    ]
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body.encode()
