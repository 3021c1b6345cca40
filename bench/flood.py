"""Benchmark of a login flood: what it costs the public reads, from one IPv6 /64 and from many.

    .venv/bin/python -m bench.flood [--seconds S] [--flooders N] [--redis-url URL]
        [--workers N] [--database-url URL] [--smoke]

Builds the demo world in a fresh SQLite file (or in --database-url, which it wipes) and serves it
with gunicorn.conf.py in production mode behind ``PROXY_FIX_HOPS=1``, as behind a PaaS router:
the client is the address ``X-Forwarded-For`` names. Every limit is at its default (sign-ins
``RATELIMIT_AUTH``, 20 a minute per client; public reads ``RATELIMIT_PUBLIC``, 120 a minute per
client). Rate-limit counts in memory with one worker, or with ``--redis-url`` on Redis shared by
``--workers`` workers (the database is flushed before and after).

One reader times ``GET /api/picks/today`` back to back, each read from another address of
203.0.113.0/24 (many readers, none near its own limit), for ``--seconds``:

1. alone;
2. while ``--flooders`` threads POST ``/api/auth/login`` back to back, each with a new unknown
   email (so only the client's budget bounds it: the service hashes a decoy password for an
   unknown email as for a known one) from a new random address of one /64,
   2001:db8:f100:1::/64;
3. while the same threads flood from one /64 each (2001:db8:f2nn::/64): as many clients as
   threads, each with its own budget.

Prints the reads' median and p90 in each phase and their ratio to the reads alone, and the
logins answered 401 (a password was hashed), 429 (refused before any hashing) and anything else.
A flood from one /64 must be limited as one client (at most ``RATELIMIT_AUTH`` passwords
hashed); the reads' median under it is the figure the flood is judged by.

``--smoke``: the demo world's matches and odds alone, 1 s phases; the run fails when a read
answers anything but 200 or the /64 flood hashes more passwords than one client may.
"""

import argparse
import http.client
import os
import platform
import random
import secrets
import signal
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import NamedTuple

import redis
from cryptography.fernet import Fernet

from bench.common import (
    ROOT,
    commit,
    free_port,
    machine,
    parse_arguments,
    start_gunicorn,
    stop_on_sigterm,
)
from bench.serving import (
    build_database,
    busy_cores,
    gunicorn_settings,
    percentile,
    split_url,
    wait_until_up,
)
from config import DEFAULTS
from engine.ledger import notes

READ = "/api/picks/today"
LOGIN = "/api/auth/login"
#: The one /64 of the first flood, and the prefix of the second's (one /64 per thread).
ONE_NETWORK = "2001:db8:f100:1"
MANY_NETWORKS = "2001:db8:f2{:02x}:0"
#: A wrong password of an allowed length: every attempt that is admitted hashes it.
WRONG_PASSWORD = "not-the-password-1"


class Reads(NamedTuple):
    """The reader's timings in one phase."""

    latencies: list  # seconds, ascending
    statuses: Counter

    @property
    def median_ms(self) -> float:
        return statistics.median(self.latencies) * 1000 if self.latencies else 0.0

    @property
    def p90_ms(self) -> float:
        return percentile(self.latencies, 0.90) * 1000


def connection_to(base: str) -> http.client.HTTPConnection:
    host, port, _path = split_url(base)
    return http.client.HTTPConnection(host, port, timeout=30)


def exchange(connection, method, path, headers, body=None) -> int:
    """One request on a kept-alive connection; its status (the body read and dropped)."""
    connection.request(method, path, body=body, headers=headers)
    response = connection.getresponse()
    response.read()
    if response.getheader("Connection", "").lower() == "close":
        connection.close()  # http.client opens it again for the next request
    return response.status


def read_for(base: str, seconds: float, stop: threading.Event | None = None) -> Reads:
    """``GET /api/picks/today`` back to back for ``seconds``, each from another reader."""
    latencies, statuses = [], Counter()
    connection = connection_to(base)
    deadline = time.perf_counter() + seconds
    n = 0
    try:
        while time.perf_counter() < deadline:
            n += 1
            headers = {"X-Forwarded-For": f"203.0.113.{n % 254 + 1}"}
            started = time.perf_counter()
            try:
                status = exchange(connection, "GET", READ, headers)
            except (OSError, http.client.HTTPException):
                connection.close()
                statuses["error"] += 1
                continue
            latencies.append(time.perf_counter() - started)
            statuses[status] += 1
    finally:
        connection.close()
        if stop is not None:
            stop.set()
    return Reads(sorted(latencies), statuses)


def flood(base: str, network: str, stop: threading.Event, counts: Counter, lock) -> None:
    """POST a failing login back to back until ``stop``, each from a new address of the /64
    ``network`` (its first four groups)."""
    connection = connection_to(base)
    mine = Counter()
    try:
        while not stop.is_set():
            body = f'{{"email":"flood-{secrets.token_hex(6)}@example.com",'
            body += f'"password":"{WRONG_PASSWORD}"}}'
            headers = {
                "Content-Type": "application/json",
                "X-Forwarded-For": f"{network}:{interface_id()}",
            }
            try:
                mine[exchange(connection, "POST", LOGIN, headers, body)] += 1
            except (OSError, http.client.HTTPException):
                connection.close()
                mine["error"] += 1
                time.sleep(0.01)  # a refused connection must not spin
    finally:
        connection.close()
        with lock:
            counts.update(mine)


def interface_id() -> str:
    """The last 64 bits of an IPv6 address, at random."""
    return ":".join(f"{random.getrandbits(16):x}" for _ in range(4))


def under_flood(base: str, seconds: float, flooders: int, network_of) -> tuple[Reads, Counter]:
    """The reads while ``flooders`` threads flood logins, thread ``k`` from addresses of
    ``network_of(k)`` (a /64's first four groups); the reads and the logins' statuses (with
    ``"seconds"``: how long the flood lasted)."""
    stop, counts, lock = threading.Event(), Counter(), threading.Lock()
    started = time.perf_counter()
    threads = [
        threading.Thread(target=flood, args=(base, network_of(k), stop, counts, lock), daemon=True)
        for k in range(flooders)
    ]
    for thread in threads:
        thread.start()
    time.sleep(min(1.0, seconds / 4))  # the flood is under way before the first read
    reads = read_for(base, seconds, stop)
    for thread in threads:
        thread.join(60)
    counts["seconds"] = time.perf_counter() - started
    return reads, counts


def logins(counts: Counter) -> str:
    """The logins' statuses as the report says them."""
    answers = {status: count for status, count in counts.items() if status != "seconds"}
    others = {status: count for status, count in answers.items() if status not in (401, 429)}
    total = sum(answers.values())
    return (
        f"{total:,} logins in {counts['seconds']:.1f} s ({total / counts['seconds']:,.0f}/s): "
        f"{counts[401]:,} answered 401 (a password hashed), {counts[429]:,} answered 429, "
        f"{sum(others.values()):,} other" + (f" {others}" if others else "")
    )


def phase_line(label: str, reads: Reads, alone: Reads | None) -> str:
    ratio = f", median x{reads.median_ms / alone.median_ms:.1f} alone's" if alone else ""
    return (
        f"{label}: {len(reads.latencies):,} reads, median {reads.median_ms:.1f} ms, "
        f"p90 {reads.p90_ms:.1f} ms{ratio}"
    )


def main():
    """Parse the options, build the database, serve it and measure the three phases."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=8.0, help="seconds of each phase")
    parser.add_argument("--flooders", type=int, default=16, help="threads flooding the logins")
    parser.add_argument("--redis-url", help="count the limits on Redis (this db is flushed)")
    parser.add_argument("--workers", type=int, default=2, help="WEB_CONCURRENCY with Redis")
    parser.add_argument("--database-url", help="a database this may wipe (default: SQLite)")
    args = parse_arguments(parser, seconds=1.0)
    if args.seconds <= 0 or args.flooders < 1 or args.workers < 1:
        parser.error("seconds, flooders and workers must be positive")
    signal.signal(signal.SIGTERM, stop_on_sigterm)
    allowed = int(DEFAULTS["RATELIMIT_AUTH"].split()[0])  # "20 per minute": one client's budget
    with tempfile.TemporaryDirectory(prefix="bench-flood-") as name, ExitStack() as stack:
        folder = Path(name)
        database_url = args.database_url or f"sqlite:///{folder / 'bench.db'}"
        environment = {
            **os.environ,
            "DATABASE_URL": database_url,
            "JWT_SECRET_KEY": secrets.token_urlsafe(48),
            "LOG_LEVEL": "WARNING",
        }
        print(f"machine: {machine()}; Python {platform.python_version()}")
        print(f"commit: {commit()}")
        build_database(database_url, environment, secrets.token_urlsafe(16), args.smoke)
        storage = args.redis_url or "memory://"
        if args.redis_url:
            flush = redis.Redis.from_url(storage, socket_timeout=5).flushdb
            flush()
            stack.callback(flush)  # once the server is stopped, however the run ends
        service_env = {
            **environment,
            "APP_ENV": "production",
            "LEDGER_SIGNING_KEY": notes.generate("bench.example/ledger").encode(),
            "WEBHOOK_SECRETS_KEY": Fernet.generate_key().decode(),
            "RATELIMIT_STORAGE_URI": storage,
            "PROXY_FIX_HOPS": "1",
            "HOST": "127.0.0.1",
            "PORT": str(free_port()),
            "WEB_CONCURRENCY": str(args.workers),
        }
        settings = gunicorn_settings(service_env)
        print(
            f"serving: RATELIMIT_STORAGE_URI={storage}, PROXY_FIX_HOPS=1, "
            f"{settings['workers']} worker(s) x {settings['threads']} threads, limits at their "
            f"defaults (RATELIMIT_AUTH={DEFAULTS['RATELIMIT_AUTH']}, RATELIMIT_PUBLIC="
            f"{DEFAULTS['RATELIMIT_PUBLIC']}, RATELIMIT_IPV6_PREFIX="
            f"{DEFAULTS['RATELIMIT_IPV6_PREFIX']}); {busy_cores()}"
        )
        log = folder / "service.log"
        service = start_gunicorn(stack, "wsgi:app", service_env, ROOT, log)
        base = f"http://127.0.0.1:{service_env['PORT']}"
        wait_until_up(base, READ, service, log)
        read_for(base, min(1.0, args.seconds))  # warm up: the first reads pay for imports
        print(
            f"reads: GET {READ} back to back from one thread, each from another address of "
            f"203.0.113.0/24; floods: {args.flooders} threads POST {LOGIN} with a new unknown "
            f"email each, for {args.seconds:g} s per phase"
        )
        alone = read_for(base, args.seconds)
        print(phase_line("alone", alone, None))
        one, one_logins = under_flood(base, args.seconds, args.flooders, lambda _k: ONE_NETWORK)
        print(phase_line(f"under a flood from one /64 ({ONE_NETWORK}::/64)", one, alone))
        print(f"  {logins(one_logins)}")
        many, many_logins = under_flood(base, args.seconds, args.flooders, MANY_NETWORKS.format)
        print(phase_line(f"under a flood from {args.flooders} /64s", many, alone))
        print(f"  {logins(many_logins)}")
        failures = []
        for label, reads in (("alone", alone), ("one /64", one), (f"{args.flooders} /64s", many)):
            if set(reads.statuses) - {200}:
                failures.append(f"reads {label} answered {dict(reads.statuses)}")
        if one_logins[401] > allowed:
            failures.append(
                f"the flood from one /64 hashed {one_logins[401]} passwords, more than one "
                f"client's {allowed}"
            )
        for failure in failures:
            print(f"  ! {failure}")
    if failures and args.smoke:
        sys.exit(f"the smoke run failed: {'; '.join(failures)}")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit("interrupted: the server stopped, temporary files removed")
