"""gunicorn settings, overridable from the environment (PORT, WEB_CONCURRENCY, GUNICORN_THREADS,
GUNICORN_REUSE_PORT, GUNICORN_TIMEOUT).

With the default in-memory rate-limit storage every count lives in one process, so the service
runs one worker with threads. With RATELIMIT_STORAGE_URI=redis://… the counts are shared and
WEB_CONCURRENCY may start several workers.
"""

import os
import sys

_shared_limits = not os.environ.get("RATELIMIT_STORAGE_URI", "memory://").startswith("memory://")

bind = f"{os.environ.get('HOST', '0.0.0.0')}:{os.environ.get('PORT', '8000')}"
workers = int(os.environ.get("WEB_CONCURRENCY", "2")) if _shared_limits else 1
worker_class = "gthread"
# With several workers on Linux, each listens on a socket of its own (SO_REUSEPORT) and the kernel
# spreads new connections over them by hash. On one shared socket, whichever worker wakes first
# takes them: a client's pool of keep-alive connections (a load balancer's, a benchmark's) could
# all land on one worker, which then served at one process's speed while the others idled. The
# price: a worker that stops (a reload, a timeout, a crash) resets the connections still waiting
# in its own queue, where a shared socket left them to the others (Linux 5.14+ hands them over
# with the sysctl net.ipv4.tcp_migrate_req=1); and a second server started on the same port by
# the same user shares it rather than failing to start. GUNICORN_REUSE_PORT=0 turns it off.
reuse_port = (
    workers > 1
    and sys.platform.startswith("linux")
    and os.environ.get("GUNICORN_REUSE_PORT", "1") != "0"
)
# Exports stream on at most EXPORT_STREAMS_PER_PROCESS threads (config.py, 4 by default): at
# least two more always serve probes and every other request.
_export_streams = int(os.environ.get("EXPORT_STREAMS_PER_PROCESS") or "4")
threads = max(int(os.environ.get("GUNICORN_THREADS", "8")), _export_streams + 2)
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "120"))
accesslog = None  # the app writes one access line per request itself
errorlog = "-"
# gunicorn refuses longer request lines itself, with an HTML page the API cannot make a problem
# of: its maximum leaves room for every query the API accepts (a 254-character search of
# four-byte characters, percent-encoded, is over 3 KiB) so the app answers them, 422s included.
limit_request_line = 8190
# gunicorn 25 added a control socket, shared by default by every instance a user runs
# ($XDG_RUNTIME_DIR/gunicorn.ctl): a second instance replaced the first one's socket and removed
# it on exit. Nothing here uses gunicornc, so no instance opens one.
control_socket_disable = True
