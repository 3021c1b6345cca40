"""gunicorn settings, overridable from the environment (PORT, WEB_CONCURRENCY, GUNICORN_THREADS,
GUNICORN_REUSE_PORT, GUNICORN_TIMEOUT).

With the default in-memory rate-limit storage every count lives in one process, so the service
runs one worker with threads. With RATELIMIT_STORAGE_URI=redis://… the counts are shared and
WEB_CONCURRENCY may start several workers.
"""

import errno
import os
import shlex
import socket
import subprocess
import sys

from gunicorn.util import is_ipv6


def _check_configuration() -> None:
    """Exit with status 1, the app's own one line said on stderr, when the app refuses this
    environment's configuration (a secret missing in production…): before the master listens, or
    starts a worker that would fail the same way (wsgi.py).

    ``python -m config`` checks it in a process of its own, so the master imports none of the
    service's modules (a reload, HUP, forks workers that import the code as it is then). Values
    given with ``-e``/``--env`` reach the environment only after this file is read: with them
    the workers check alone.
    """
    options = sys.argv[1:] + shlex.split(os.environ.get("GUNICORN_CMD_ARGS", ""))
    if any(option.startswith(("-e", "--env")) for option in options):
        return
    checked = subprocess.run(
        [sys.executable, "-m", "config"],
        cwd=os.path.dirname(os.path.abspath(__file__)),
        stdout=subprocess.DEVNULL,
        check=False,
    )
    if checked.returncode:
        sys.exit(1)


_check_configuration()
_shared_limits = not os.environ.get("RATELIMIT_STORAGE_URI", "memory://").startswith("memory://")

bind = f"{os.environ.get('HOST', '0.0.0.0')}:{os.environ.get('PORT', '8000')}"
workers = int(os.environ.get("WEB_CONCURRENCY", "2")) if _shared_limits else 1
# gunicorn's gthread worker, answering the requests it refuses itself (a request line or headers
# too long, a malformed one) with a problem+json and an X-Request-ID, not an HTML page.
worker_class = "web.gunicorn_worker.ProblemWorker"
# With several workers on Linux, each listens on a socket of its own (SO_REUSEPORT) and the kernel
# spreads new connections over them by hash. On one shared socket, whichever worker wakes first
# takes them: a client's pool of keep-alive connections (a load balancer's, a benchmark's) could
# all land on one worker, which then served at one process's speed while the others idled. The
# price: a worker that stops (a reload, a timeout, a crash) resets the connections still waiting
# in its own queue, where a shared socket left them to the others (Linux 5.14+ hands them over
# with the sysctl net.ipv4.tcp_migrate_req=1). A second server started on the same port by the
# same user could bind beside it and share its connections; on_starting refuses to start instead
# (below). GUNICORN_REUSE_PORT=0 turns it off.
reuse_port = (
    workers > 1
    and sys.platform.startswith("linux")
    and os.environ.get("GUNICORN_REUSE_PORT", "1") != "0"
)
# Exports stream on at most EXPORT_STREAMS_PER_PROCESS threads (config/, 4 by default): at
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
# X-Forwarded-Proto and its kind are read by the app alone, through PROXY_FIX_HOPS (werkzeug's
# ProxyFix): gunicorn's own reading trusted them from any client on the same host (its default
# forwarded_allow_ips), so a local client could make the links in answers https with
# PROXY_FIX_HOPS=0.
forwarded_allow_ips = ""
# gunicorn 25 added a control socket, shared by default by every instance a user runs
# ($XDG_RUNTIME_DIR/gunicorn.ctl): a second instance replaced the first one's socket and removed
# it on exit. Nothing here uses gunicornc, so no instance opens one.
control_socket_disable = True


def on_starting(server):
    """With ``reuse_port``, fail to start on an address another server listens on already, as
    gunicorn does without it: the workers' own SO_REUSEPORT sockets would bind beside that
    server's, and the two would share its connections, each answering some with its own code.

    Not for a master re-executed to upgrade (USR2), whose parent's workers listen there on
    purpose, nor for sockets systemd hands over.
    """
    if not _workers_bind(server.cfg):
        return  # gunicorn binds without it, and fails itself on a port in use
    if "GUNICORN_PID" in os.environ or "LISTEN_FDS" in os.environ:
        return
    for address in server.cfg.address:
        if isinstance(address, tuple):  # not a UNIX socket's path, nor fd://
            refuse_if_in_use(address)


def when_ready(server):
    """Say where the workers listen: with ``reuse_port`` the master binds nothing itself, and
    gunicorn's own "Listening at:" line is empty."""
    if _workers_bind(server.cfg):
        scheme = "https" if server.cfg.is_ssl else "http"
        places = ", ".join(_url(scheme, address) for address in server.cfg.address)
        server.log.info("Workers listen at: %s, each on a socket of its own", places)


def _workers_bind(cfg) -> bool:
    """Whether each worker binds a socket of its own (``reuse_port`` where the system has it)."""
    return cfg.reuse_port and hasattr(socket, "SO_REUSEPORT")


def _url(scheme, address) -> str:
    """Where ``address`` (host and port, or a UNIX socket's path) is reached, as gunicorn says."""
    if not isinstance(address, tuple):
        return str(address)
    host, port = address
    return f"{scheme}://[{host}]:{port}" if is_ipv6(host) else f"{scheme}://{host}:{port}"


def refuse_if_in_use(address) -> None:
    """RuntimeError (gunicorn's "Error: …", exit status 1) when a socket listens on ``address``:
    a plain bind of it (SO_REUSEADDR, so the TIME_WAIT a stopped server leaves does not count)
    fails only then. Any other failure to bind is left to the workers, which report it."""
    host, port = address
    with socket.socket(socket.AF_INET6 if is_ipv6(host) else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                raise RuntimeError(
                    f"{host}:{port} is in use already: another server listens there "
                    "(set PORT to another port, or stop that server)"
                ) from None
