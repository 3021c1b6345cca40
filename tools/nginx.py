"""The shipped reverse proxy, ``deploy/nginx.conf``, run as it is by whoever calls this (no root
needed) in a temporary folder of its own, in front of one gunicorn: for the tests and the request
path's benchmark.

The folder holds a copy of the configuration and the two files it includes beside it,
``listen.conf`` (a loopback port) and ``upstream.conf`` (the gunicorn given), and is nginx's
prefix: its pid, its error log, what it prints (its access log) and its temporary files.
"""

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "deploy" / "nginx.conf"
START_TIMEOUT = 15  # seconds nginx may take to listen
STOP_TIMEOUT = 10  # seconds it may take to stop before it is killed


class Proxy(NamedTuple):
    """A running proxy: where clients reach it, and its folder (``output.log`` is what it
    printed, ``error.log`` its error log)."""

    base: str
    port: int
    folder: Path

    def output(self) -> str:
        """Its error log, then what it printed (one access line per request)."""
        return "".join(
            (self.folder / name).read_text(errors="replace")
            for name in ("error.log", "output.log")
            if (self.folder / name).exists()
        )


def find() -> str | None:
    """nginx's path, or None where it is not installed (an unprivileged user's PATH may lack
    /usr/sbin, where Debian installs it)."""
    return shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def serving(upstream: str, port: int | None = None) -> Iterator[Proxy]:
    """nginx with ``deploy/nginx.conf`` on ``127.0.0.1:port`` (a free port by default) in front
    of ``upstream`` (``host:port``, where gunicorn listens). Stopped, and its folder removed, on
    exit; a RuntimeError with its error log when it does not start."""
    binary = find()
    if binary is None:
        raise RuntimeError("nginx is not installed (Debian: apt-get install nginx)")
    port = port or free_port()
    folder = Path(tempfile.mkdtemp(prefix="picks-proxy-"))
    try:
        # Run by root, nginx's workers drop to an unprivileged user, which must reach its
        # temporary files inside the folder.
        folder.chmod(0o755)
        shutil.copy(CONFIG, folder / "nginx.conf")
        (folder / "listen.conf").write_text(f"listen 127.0.0.1:{port};\n")
        (folder / "upstream.conf").write_text(f"server {upstream};\n")
        with (folder / "output.log").open("wb") as output:
            process = subprocess.Popen(
                [
                    binary,
                    "-p",
                    f"{folder}/",
                    "-c",
                    str(folder / "nginx.conf"),
                    "-e",
                    str(folder / "error.log"),
                    "-g",
                    f'daemon off; pid "{folder / "nginx.pid"}"; '
                    f'error_log "{folder / "error.log"}" warn;',
                ],
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own group: stopped with its workers, never a Ctrl-C
            )
        proxy = Proxy(f"http://127.0.0.1:{port}", port, folder)
        try:
            _wait_until_listening(process, proxy)
            yield proxy
        finally:
            _stop(process)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _wait_until_listening(process: subprocess.Popen, proxy: Proxy) -> None:
    """Return once nginx accepts connections on its port; RuntimeError if it exits first or
    takes longer than ``START_TIMEOUT``."""
    deadline = time.monotonic() + START_TIMEOUT
    while process.poll() is None and time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", proxy.port), timeout=1).close()
        except OSError:
            time.sleep(0.05)
        else:
            return
    raise RuntimeError(f"nginx did not start:\n{proxy.output()}")


def _stop(process: subprocess.Popen) -> None:
    """Stop nginx at once (its open connections closed; its master waits for its workers), or
    kill it with its workers when it takes longer than ``STOP_TIMEOUT``."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # the master and its workers: one group
        process.wait(timeout=STOP_TIMEOUT)


def version() -> str:
    """nginx's version line (``nginx/1.22.1``), or "" where it is not installed."""
    binary = find()
    if binary is None:
        return ""
    said = subprocess.run([binary, "-v"], capture_output=True, text=True, check=False).stderr
    return said.strip().removeprefix("nginx version: ")
