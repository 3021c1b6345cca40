"""Benchmark of the HTTP request path: the service on gunicorn beside a bare Flask route.

    .venv/bin/python -m bench.request_path [--mode redis|memory|both] [--rounds N] [--duration S]
        [--warmup S] [--connections N] [--threads N] [--workers N] [--load auto|wrk|python]
        [--no-install] [--database-url URL] [--redis-url URL] [--only TEXT ...] [--proxy]
        [--smoke]

Builds the demo world in a fresh SQLite file (or in --database-url, which it wipes), creates a
Pro user and an admin, then serves the project with gunicorn.conf.py and, under the very same
settings, a one-route Flask app answering {"ok": true}. Each target below is loaded with wrk
(installed with apt-get when missing and running as root; else a Python load generator) and
printed beside the bare route measured in the same run: req/s, p50, p99, their ratio, every
answer that is not 2xx or 304, and its goal. Two configurations: Redis rate-limit storage with
several workers, and the default single process with memory:// storage.

Each target is measured in ``--rounds`` rounds (the bare routes, then the target), each on new
connections, and its line gives the medians, the range of the ratio and the highest p99: with
several workers, how a load's keep-alive connections happen to spread over them moves a single
run by a tenth either way.

``--proxy``: each target is also loaded through the shipped reverse proxy (nginx with
``deploy/nginx.conf``, as ``tools.nginx`` runs it) in front of the same service, in the same
round, right after it is loaded directly: its req/s, p50 and p99 make the columns after the
direct ones. No goal is judged on them.

``--smoke``: the demo world's matches and odds alone (``services.operations.demo_world.load``, no
replayed days), memory mode only, one round of 1 s runs without warm-up, wrk only if it is already
installed (the Redis mode, when asked for, on db 4), through the proxy too where nginx is
installed; no goal judged, and it fails when a target answers anything but 2xx or 304 (or 404
or 405 at warm-up: not served yet).
"""

import argparse
import os
import platform
import secrets
import signal
import statistics
import sys
import tempfile
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
    BARE_APP,
    BARE_MODULE,
    Load,
    Result,
    build_database,
    busy_cores,
    find_wrk,
    gunicorn_settings,
    login,
    request,
    wait_until_up,
)
from engine.ledger import notes
from tools import nginx


class Goal(NamedTuple):
    """What a target must reach: a share of the bare route's req/s, a p99 ceiling, or both."""

    min_ratio: float | None = None
    max_p99_ms: float | None = None


class Target(NamedTuple):
    """One endpoint to load: ``token`` names the account whose bearer token it sends."""

    label: str
    path: str
    token: str | None
    goal: Goal


PUBLIC_READ = Goal(min_ratio=0.6, max_p99_ms=50)

#: Everything measured, in order. ``{match_id}`` is a demo match with picks. A target that
#: answers 404 or 405 at warm-up is not served yet and is skipped.
TARGETS = [
    Target("GET /api/picks/today", "/api/picks/today", None, PUBLIC_READ),
    Target("GET /api/matches/{id}", "/api/matches/{match_id}", None, PUBLIC_READ),
    Target("GET /api/explorer/slate", "/api/explorer/slate", None, PUBLIC_READ),
    Target(
        "GET /api/v1/data/usage", "/api/v1/data/usage", "pro", Goal(min_ratio=0.4, max_p99_ms=50)
    ),
    Target("GET /api/v1/data/catalog", "/api/v1/data/catalog", "pro", Goal(max_p99_ms=50)),
    Target(
        "GET /api/v1/data/matches?limit=100&include=…",
        "/api/v1/data/matches?limit=100&include=odds,predictions,picks",
        "pro",
        Goal(min_ratio=0.25, max_p99_ms=100),
    ),
    Target("GET /problems/not-found", "/problems/not-found", None, Goal(max_p99_ms=50)),
]

#: Every limit far above what 2 cores can serve, so the figures measure work, not 429s.
UNTHROTTLED = {
    "RATELIMIT_PUBLIC": "1000000 per minute",
    "RATELIMIT_AUTH": "1000000 per minute",
    "RATELIMIT_DATA": "1000000 per minute",
    "QUOTA_PRO_REQUESTS": "100000000",
}

DRIFT_WARNING = 0.20  # the bare route's req/s, before and after the targets, may differ this much


def headers_for(target, tokens) -> dict[str, str]:
    """The request headers a target sends."""
    return {"Authorization": f"Bearer {tokens[target.token]}"} if target.token else {}


def goal_text(goal) -> str:
    """A goal as the table shows it."""
    parts = []
    if goal.min_ratio is not None:
        parts.append(f"ratio >= {goal.min_ratio:.2f}")
    if goal.max_p99_ms is not None:
        parts.append(f"p99 < {goal.max_p99_ms:.0f} ms")
    return ", ".join(parts)


def goal_met(goal, summary) -> str:
    """yes or no, with why when no: the median ratio of the rounds, the highest p99 of any."""
    misses = []
    if summary.bad or summary.errors:
        misses.append("failures")
    if goal.min_ratio is not None and summary.ratio < goal.min_ratio:
        misses.append("ratio")
    if goal.max_p99_ms is not None and summary.p99_ms >= goal.max_p99_ms:
        misses.append("p99")
    return "no (" + ", ".join(misses) + ")" if misses else "yes"


class Round(NamedTuple):
    """One round of a target: the bare route, the same-size bare route, then the target (and
    with ``--proxy`` the target again, through the proxy)."""

    bare: Result
    sized: Result
    target: Result
    proxied: Result | None = None


class Proxied(NamedTuple):
    """A target's rounds through the proxy: the median req/s and p50, the highest p99, every
    failure."""

    rate: float
    p50_ms: float
    p99_ms: float
    bad: int
    statuses: dict[str, int]
    errors: int


class Summary(NamedTuple):
    """A target's rounds in one line: medians of the rates and ratios, the range of the ratio
    to the 12-byte route, the median p50, the highest p99, every failure."""

    rate: float
    bare: float
    sized: float
    ratio: float
    ratios: str  # "lowest–highest"
    sized_ratio: float
    p50_ms: float
    p99_ms: float
    bad: int
    statuses: dict[str, int]
    errors: int


def measure_round(load, url, headers, bare_base, size, args, proxied_url=None) -> Round:
    """The bare routes, then the target, right after each other: each ratio compares runs a few
    seconds apart, so a machine that speeds up or slows down moves both. Each run opens its
    connections anew, so each round is a new draw of how they spread over the workers. With
    ``proxied_url``, the target once more through the proxy."""
    bare = load.run(f"{bare_base}/", {}, args.duration)
    sized = load.run(f"{bare_base}/sized/{size}", {}, args.duration)
    target = load.run(url, headers, args.duration)
    proxied = load.run(proxied_url, headers, args.duration) if proxied_url else None
    return Round(bare, sized, target, proxied)


def summarise(rounds) -> Summary:
    """The rounds of one target as one line of the table."""
    ratios = [one.target.rate / one.bare.rate if one.bare.rate else 0.0 for one in rounds]
    sized = [one.target.rate / one.sized.rate if one.sized.rate else 0.0 for one in rounds]
    statuses = Counter()
    for one in rounds:
        statuses.update(one.target.statuses)
    return Summary(
        rate=statistics.median(one.target.rate for one in rounds),
        bare=statistics.median(one.bare.rate for one in rounds),
        sized=statistics.median(one.sized.rate for one in rounds),
        ratio=statistics.median(ratios),
        ratios=f"{min(ratios):.2f}–{max(ratios):.2f}",
        sized_ratio=statistics.median(sized),
        p50_ms=statistics.median(one.target.p50_ms for one in rounds),
        p99_ms=max(one.target.p99_ms for one in rounds),
        bad=sum(one.target.bad for one in rounds),
        statuses=dict(statuses),
        errors=sum(one.target.errors for one in rounds),
    )


def summarise_proxied(rounds) -> Proxied | None:
    """The rounds' runs through the proxy as the table's columns (None without the proxy)."""
    runs = [one.proxied for one in rounds if one.proxied is not None]
    if not runs:
        return None
    statuses = Counter()
    for run in runs:
        statuses.update(run.statuses)
    return Proxied(
        rate=statistics.median(run.rate for run in runs),
        p50_ms=statistics.median(run.p50_ms for run in runs),
        p99_ms=max(run.p99_ms for run in runs),
        bad=sum(run.bad for run in runs),
        statuses=dict(statuses),
        errors=sum(run.errors for run in runs),
    )


def warm_up(load, url, headers, seconds):
    """Load ``url`` for ``seconds`` and forget the figures: first requests pay for imports."""
    if seconds:
        load.run(url, headers, seconds)


def measure_mode(mode, args, load, database_url, password, match_id, folder) -> list[str]:
    """Serve the project and the bare app in one configuration, load each target, print;
    returns what failed (a target answering other than 2xx or 304, a socket error)."""
    storage = args.redis_url if mode == "redis" else "memory://"
    failures = []
    if mode == "redis":
        try:
            # db 15 by default: a benchmark's counts never meet the tests' (db 0)
            redis.Redis.from_url(storage, socket_timeout=5).flushdb()
        except redis.RedisError as error:
            print(f"\n== redis: skipped, {storage} does not answer ({error})")
            return failures
    base_environment = {
        **os.environ,
        **UNTHROTTLED,
        "APP_ENV": "production",
        "DATABASE_URL": database_url,
        "JWT_SECRET_KEY": args.jwt_secret,
        "LEDGER_SIGNING_KEY": args.ledger_key,  # production refuses to start without one
        "WEBHOOK_SECRETS_KEY": args.webhook_key,  # … or this one
        "RATELIMIT_STORAGE_URI": storage,
        "LOG_LEVEL": "WARNING",  # one access line per request would measure the logging
        "HOST": "127.0.0.1",
        "WEB_CONCURRENCY": str(args.workers),
    }
    service_env = {**base_environment, "PORT": str(free_port())}
    bare_env = {**base_environment, "PORT": str(free_port()), "PYTHONPATH": str(folder)}
    settings = gunicorn_settings(service_env)
    print(
        f"\n== {mode}: RATELIMIT_STORAGE_URI={storage}; gunicorn.conf.py gives "
        f"{settings['workers']} worker(s) x {settings['threads']} threads "
        f"({settings['worker_class']}), the same for the bare route; {busy_cores()}"
    )
    with ExitStack() as stack:
        if mode == "redis":
            # runs last, once the servers are stopped, however the run ends
            stack.callback(redis.Redis.from_url(storage, socket_timeout=5).flushdb)
        service_log, bare_log = folder / f"service-{mode}.log", folder / f"bare-{mode}.log"
        service = start_gunicorn(stack, "wsgi:app", service_env, ROOT, service_log)
        bare = start_gunicorn(stack, f"{BARE_MODULE}:app", bare_env, folder, bare_log)
        service_base = f"http://127.0.0.1:{service_env['PORT']}"
        bare_base = f"http://127.0.0.1:{bare_env['PORT']}"
        wait_until_up(service_base, "/", service, service_log)
        wait_until_up(bare_base, "/", bare, bare_log)
        tokens = login(service_base, password)
        proxy_base = None
        if args.proxy:
            proxy = stack.enter_context(nginx.serving(f"127.0.0.1:{service_env['PORT']}"))
            proxy_base = proxy.base
            print(f"proxy: {nginx.version()} with deploy/nginx.conf in front of the service")

        warm_up(load, f"{bare_base}/", {}, args.warmup)
        baseline = load.run(f"{bare_base}/", {}, args.duration)
        print(
            f"bare Flask route GET /: {baseline.rate:,.0f} req/s, p50 {baseline.p50_ms:.1f} ms, "
            f"p99 {baseline.p99_ms:.1f} ms, non-2xx {baseline.bad}, errors {baseline.errors}"
        )
        width = max(len(target.label) for target in args.targets)
        through = f"  {'proxy':>8}  {'p50 ms':>7}  {'p99 ms':>7}" if proxy_base else ""
        print(
            f"{'target':<{width}}  {'bytes':>6}  {'req/s':>8}  {'p50 ms':>7}  {'p99 ms':>7}"
            f"{through}  {'bare':>7}  {'ratio':>6}  {'range':>9}  {'sized':>7}  {'ratio':>6}  "
            f"{'non-2xx':>8}  {'goal':<28}  met"
        )
        notes = []
        for target in args.targets:
            path = target.path.format(match_id=match_id)
            headers = headers_for(target, tokens)
            status, body = request(service_base, "GET", path, token=tokens.get(target.token))
            if status in (404, 405):
                print(f"{target.label:<{width}}  skipped: not served ({status} at warm-up)")
                continue
            if not (200 <= status < 300 or status == 304):
                detail = body.get("detail") if isinstance(body, dict) else body
                notes.append(f"{target.label}: warm-up answered {status}: {detail}")
                failures.append(notes[-1])
            size = len(
                request(service_base, "GET", path, token=tokens.get(target.token), raw=True)[1]
            )
            warm_up(load, f"{service_base}{path}", headers, args.warmup)
            proxied_url = f"{proxy_base}{path}" if proxy_base else None
            if proxied_url:
                warm_up(load, proxied_url, headers, args.warmup)
            rounds = [
                measure_round(
                    load, f"{service_base}{path}", headers, bare_base, size, args, proxied_url
                )
                for _ in range(args.rounds)
            ]
            summary, proxied = summarise(rounds), summarise_proxied(rounds)
            through = (
                f"  {proxied.rate:>8,.0f}  {proxied.p50_ms:>7.1f}  {proxied.p99_ms:>7.1f}"
                if proxied
                else ""
            )
            print(
                f"{target.label:<{width}}  {size:>6}  {summary.rate:>8,.0f}  "
                f"{summary.p50_ms:>7.1f}  {summary.p99_ms:>7.1f}{through}  {summary.bare:>7,.0f}  "
                f"{summary.ratio:>6.2f}  {summary.ratios:>9}  {summary.sized:>7,.0f}  "
                f"{summary.sized_ratio:>6.2f}  {summary.bad:>8}  {goal_text(target.goal):<28}  "
                f"{'not judged' if args.smoke else goal_met(target.goal, summary)}"
            )
            if summary.bad:
                codes = ", ".join(f"{code} x{count}" for code, count in summary.statuses.items())
                notes.append(f"{target.label}: {summary.bad} answers not 2xx/304 ({codes})")
                failures.append(notes[-1])
            if summary.errors:
                notes.append(f"{target.label}: {summary.errors} socket errors or timeouts")
                failures.append(notes[-1])
            if proxied and proxied.bad:
                codes = ", ".join(f"{code} x{count}" for code, count in proxied.statuses.items())
                notes.append(
                    f"{target.label}: {proxied.bad} not 2xx/304 through the proxy ({codes})"
                )
                failures.append(notes[-1])
            if proxied and proxied.errors:
                notes.append(f"{target.label}: {proxied.errors} socket errors through the proxy")
                failures.append(notes[-1])
        # the same route again: a drift means the machine changed under the run
        again = load.run(f"{bare_base}/", {}, args.duration)
        drift = again.rate / baseline.rate - 1 if baseline.rate else 0.0
        print(
            f"bare route again after the targets: {again.rate:,.0f} req/s ({drift:+.0%}), "
            f"p50 {again.p50_ms:.1f} ms, p99 {again.p99_ms:.1f} ms; 'ratio' is the median of the "
            "rounds' ratios, each to the bare run just before the target; 'bare' and 'sized' are "
            "the medians of those runs"
            + ("; 'proxy' is the target through nginx, right after it" if proxy_base else "")
        )
        if abs(drift) > DRIFT_WARNING:
            notes.append(
                f"the bare route moved by more than {DRIFT_WARNING:.0%} between its two runs: "
                "the ratios are uncertain (other work on the cores?)"
            )
        for note in notes:
            print(f"  ! {note}")
    return failures


def main():
    """Parse the options, build the database, run each configuration."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=("redis", "memory", "both"), default="both")
    parser.add_argument("--duration", type=int, default=3, help="seconds per run")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each target (median)")
    parser.add_argument("--warmup", type=int, default=1, help="seconds of load before each")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2, help="wrk threads")
    parser.add_argument("--workers", type=int, default=2, help="WEB_CONCURRENCY in redis mode")
    parser.add_argument("--load", choices=("auto", "wrk", "python"), default="auto")
    parser.add_argument("--no-install", action="store_true", help="never apt-get install wrk")
    parser.add_argument("--database-url", help="a database this may wipe (default: SQLite)")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/15")
    parser.add_argument(
        "--only", nargs="+", metavar="TEXT", help="load only the targets whose label has TEXT"
    )
    parser.add_argument(
        "--proxy",
        action="store_true",
        help="load each target through nginx with deploy/nginx.conf in front of the service too",
    )
    args = parse_arguments(
        parser,
        mode="memory",
        duration=1,
        rounds=1,
        warmup=0,
        no_install=True,
        redis_url="redis://127.0.0.1:6379/4",
        proxy=True,
    )
    if args.proxy and not nginx.find():
        if not args.smoke:
            parser.error("--proxy: nginx is not installed (Debian: apt-get install nginx)")
        print("nginx is not installed: the smoke run loads the service without the proxy")
        args.proxy = False
    if min(args.duration, args.rounds, args.connections, args.threads, args.workers) < 1:
        parser.error("duration, rounds, connections, threads and workers must be positive")
    if args.warmup < 0:
        parser.error("warmup must not be negative")
    args.targets = [
        target
        for target in TARGETS
        if not args.only or any(text in target.label for text in args.only)
    ]
    if not args.targets:
        parser.error(f"--only: no target's label has any of {args.only}")
    signal.signal(signal.SIGTERM, stop_on_sigterm)

    wrk = None if args.load == "python" else find_wrk(install=not args.no_install)
    if args.load == "wrk" and not wrk:
        parser.error("--load wrk: wrk is not installed")
    password = secrets.token_urlsafe(16)
    args.jwt_secret = secrets.token_urlsafe(48)
    args.ledger_key = notes.generate("bench.example/ledger").encode()
    args.webhook_key = Fernet.generate_key().decode()
    with tempfile.TemporaryDirectory(prefix="bench-http-") as name:
        folder = Path(name)
        (folder / f"{BARE_MODULE}.py").write_text(BARE_APP)
        database_url = args.database_url or f"sqlite:///{folder / 'bench.db'}"
        load = Load(wrk, folder, args.connections, args.threads)
        print(f"machine: {machine()}; Python {platform.python_version()}")
        print(f"commit: {commit()}")
        print(
            f"load: {load.description}; {args.rounds} rounds of {args.duration} s per target, "
            f"after {args.warmup} s"
        )
        print(f"database: {'--database-url' if args.database_url else 'a fresh SQLite file'}")
        environment = {
            **os.environ,
            "DATABASE_URL": database_url,
            "JWT_SECRET_KEY": args.jwt_secret,
            "LOG_LEVEL": "WARNING",
        }
        match_id = build_database(database_url, environment, password, args.smoke)
        failures = []
        for mode in ("redis", "memory") if args.mode == "both" else (args.mode,):
            failures += measure_mode(mode, args, load, database_url, password, match_id, folder)
        if args.smoke and failures:
            sys.exit(f"the smoke run failed: {'; '.join(failures)}")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit("interrupted: every server stopped, temporary files removed")
