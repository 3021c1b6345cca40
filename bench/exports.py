"""Benchmark of streamed Data API exports: odds exports of about 100,000 and 1,000,000 rows
through a real gunicorn, their speed and the worker's memory.

    .venv/bin/python -m bench.exports [--database-url URL] [--sizes 100000,1000000]
        [--formats csv,ndjson,json] [--repeat N] [--smoke]

Builds the demo world in a fresh SQLite file (or in --database-url, which it wipes), adds
synthetic bookmakers' quotes until the odds pass 1,000,000 rows, creates an admin (unlimited
quota), then serves the project with gunicorn.conf.py and one worker. For each size an odds
export filtered by kick-off (``{"to": day}``) selecting about that many rows is requested in
each format; the client reads the streamed body in 64 KiB chunks without keeping it (counting
bytes and rows). Printed per export: rows, seconds, rows/s, and the worker's peak RSS growth:
``/proc/PID/clear_refs`` resets the peak before the export, and VmHWM after it minus VmRSS
before it is the growth (VmRSS sampled every 2 ms in a thread is printed beside it).

Baselines measured in the same run: the very same SQL read straight from the database with the
driver's cursor (no HTTP, no serialisation; on PostgreSQL a server-side cursor planned as the
export's snapshot plans it), and a bare Flask app on gunicorn streaming as many fixed lines of
the CSV rows' length (HTTP and chunking alone). Goals: at least 50,000 rows/s for CSV and
NDJSON; the 1,000,000-row export's RSS growth within 20 % of the 100,000-row one (or 1 MiB, what
a few pages of noise are) and under 50 MiB.

``--smoke``: the demo world's matches and odds alone (``services.operations.demo_world.load``, no
replayed days), exports of about 1,000 and 5,000 rows after 1,000 rows of warm-up, no goal judged;
it fails when an export's rows differ from the driver's.
"""

import argparse
import http.client
import json
import math
import os
import platform
import secrets
import signal
import socket
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from pathlib import Path
from typing import NamedTuple

from cryptography.fernet import Fernet
from peewee import fn

from app import create_app
from bench.common import (
    ROOT,
    START_TIMEOUT,
    commit,
    free_port,
    machine,
    parse_arguments,
    start_gunicorn,
    stop_on_sigterm,
)
from engine.ledger import notes
from engine.markets import MARKETS
from enums import EXPORT_FORMATS
from models import Match, OddsQuote
from models.schema import create_tables, drop_tables
from schemas.exports import load_filters
from services.accounts import users
from services.data_api import exports
from services.operations import demo_world
from store.bulk import insert_rows
from store.database import db, discard_connections, open_database

CHUNK = 64 * 1024
ROWS_GOAL = 50_000  # rows/s, CSV and NDJSON
GROWTH_RATIO = 1.20  # the large export's RSS growth over the small one's
GROWTH_SLACK_MB = 1.0  # page-level noise allowed on top of the ratio
GROWTH_MAX_MB = 50.0
ADMIN = "bench-exports-admin@example.com"
WARM_UP = 10_000  # rows exported in each format before measuring
SMOKE_WARM_UP = 1_000

BARE_MODULE = "bench_bare_stream"
BARE_APP = '''"""The baseline: one route streaming N fixed lines of one length in 64 KiB chunks."""

from flask import Flask, Response, request

app = Flask(__name__)


@app.get("/lines")
def lines():
    count, width = int(request.args["count"]), int(request.args["width"])
    line = "x" * (width - 1) + "\\n"
    per_chunk = max(1, 65536 // width)

    def body():
        chunk = (line * per_chunk).encode()
        whole, rest = divmod(count, per_chunk)
        for _ in range(whole):
            yield chunk
        if rest:
            yield (line * rest).encode()

    return Response(body(), content_type="text/plain")
'''


class Measured(NamedTuple):
    """One streamed download: what came, how long it took, the worker's memory meanwhile."""

    rows: int  # X-Row-Count (the lines counted, for the bare app)
    counted: int  # rows counted in the body
    bytes: int
    seconds: float
    growth_mb: float | None  # VmHWM after − VmRSS before
    sampled_mb: float | None  # peak of VmRSS sampled every 2 ms − VmRSS before

    @property
    def rate(self) -> float:
        """Rows per second."""
        return self.rows / self.seconds if self.seconds else 0.0


# Building the database


def build(url: str, password: str, target: int, smoke=False) -> dict:
    """Wipe ``url``, build the demo world (in a smoke run its matches and odds alone), add
    synthetic quotes until the odds hold at least ``target`` rows, create the admin; returns
    what was built."""
    app = create_app(
        {"DATABASE_URL": url, "JWT_SECRET_KEY": secrets.token_urlsafe(48), "LOG_LEVEL": "WARNING"}
    )
    with app.app_context():
        drop_tables()
        create_tables()
    started = time.perf_counter()
    if smoke:
        with app.app_context():
            demo_world.load(app.extensions["clock"]())
    else:
        result = app.test_cli_runner().invoke(args=["data", "demo"])
        if result.exit_code:
            sys.exit(f"flask data demo failed:\n{result.output}")
    demo_seconds = time.perf_counter() - started
    with app.app_context():
        started = time.perf_counter()
        demo_odds = OddsQuote.select().count()
        match_ids = [match_id for (match_id,) in Match.select(Match.id).tuples()]
        per_book = len(match_ids) * sum(len(names) for names in MARKETS.values()) * 2
        books = max(0, math.ceil((target - demo_odds) / per_book))
        for book in range(books):
            rows = [
                (match_id, f"synthetic-{book:02d}", market, selection, 1.2 + index * 0.37, closing)
                for match_id in match_ids
                for closing in (False, True)
                for market, names in MARKETS.items()
                for index, selection in enumerate(names)
            ]
            with db.atomic():
                insert_rows(
                    OddsQuote,
                    ["match", "bookmaker", "market", "selection", "price", "is_closing"],
                    rows,
                )
        users.create(ADMIN, password, app.extensions["password_hasher"], role="admin")
        total = OddsQuote.select().count()
        discard_connections()
    return {
        "demo_seconds": demo_seconds,
        "demo_odds": demo_odds,
        "books": books,
        "synthetic_seconds": time.perf_counter() - started,
        "odds": total,
        "matches": len(match_ids),
    }


def filters_for(url: str, sizes: list[int]) -> dict[int, dict]:
    """For each size, the ``{"to": day}`` filter whose rows come nearest above it (``{}`` when
    it is at least every row): kick-off days in order, with their cumulative quote counts."""
    db.initialize(open_database(url, pooled=False))
    try:
        per_kickoff = (
            OddsQuote.select(Match.kickoff_at, fn.COUNT(OddsQuote.id))
            .join(Match)
            .group_by(Match.kickoff_at)
            .tuples()
        )
        per_day = {}
        for kickoff, count in per_kickoff:
            per_day[kickoff.date()] = per_day.get(kickoff.date(), 0) + count
    finally:
        db.close()
    chosen, running = {}, 0
    days = sorted(per_day)
    for day in days:
        running += per_day[day]
        for size in sizes:
            if size not in chosen and running >= size:
                chosen[size] = {} if day == days[-1] else {"to": day.isoformat()}
    for size in sizes:
        chosen.setdefault(size, {})
    return chosen


# Baselines


def driver_read(url: str, parameters: dict) -> tuple[int, float]:
    """(rows, seconds) of the export's very SQL read with the driver's cursor, batch by batch
    (a server-side cursor on PostgreSQL), nothing kept."""
    database = open_database(url, pooled=False)
    db.initialize(database)
    try:
        query = exports.QUERIES["odds"](load_filters("odds", json.dumps(parameters)))
        sql, params = query.sql()
        database.connect()
        connection = database.connection()
        started = time.perf_counter()
        if url.startswith("sqlite"):
            cursor = connection.cursor()
        else:
            connection.autocommit = False
            with connection.cursor() as setting:  # planned as the export's snapshot plans it
                setting.execute("SET LOCAL cursor_tuple_fraction = 1.0")
            cursor = connection.cursor(name="bench_rows")
            cursor.itersize = exports.BATCH
        cursor.execute(sql, params)
        rows = 0
        while batch := cursor.fetchmany(exports.BATCH):
            rows += len(batch)
        seconds = time.perf_counter() - started
        cursor.close()
        if not url.startswith("sqlite"):
            connection.rollback()
        return rows, seconds
    finally:
        database.close()


# Serving and measuring


def worker_pid(process, port) -> int:
    """The one worker of a gunicorn master, once the server answers on ``port``."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline and process.poll() is None:
        children = Path(f"/proc/{process.pid}/task/{process.pid}/children")
        pids = children.read_text().split() if children.exists() else []
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                if len(pids) == 1:
                    return int(pids[0])
        except OSError:
            pass
        time.sleep(0.2)
    sys.exit(f"gunicorn on port {port} did not start (or has more than one worker)")


def status_kb(pid: int, field: str) -> int:
    """A ``kB`` field of /proc/PID/status (VmRSS, VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/{pid}/status")


class Sampler(threading.Thread):
    """VmRSS of ``pid`` every 2 ms until stopped; its peak in kB."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.peak, self.done = pid, 0, threading.Event()

    def run(self):
        while not self.done.is_set():
            self.peak = max(self.peak, status_kb(self.pid, "VmRSS"))
            self.done.wait(0.002)


def download(port, method, path, pid, body=None, token=None, pattern=None) -> Measured:
    """Request ``path`` and read the body in 64 KiB chunks, counting bytes and rows (newlines,
    or occurrences of ``pattern``), measuring the worker's memory meanwhile."""
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    before = status_kb(pid, "VmRSS")
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")  # VmHWM := VmRSS
        reset = True
    except OSError:
        reset = False
    sampler = Sampler(pid)
    sampler.start()
    started = time.perf_counter()
    connection.request(method, path, json.dumps(body) if body is not None else None, headers)
    response = connection.getresponse()
    if response.status != 200:
        sys.exit(f"{method} {path} answered {response.status}: {response.read()[:500]!r}")
    size = counted = 0
    tail = b""
    while chunk := response.read(CHUNK):
        size += len(chunk)
        if pattern is None:
            counted += chunk.count(b"\n")
        else:  # the pattern may straddle two chunks
            joined = tail + chunk
            counted += joined.count(pattern)
            tail = joined[-(len(pattern) - 1) :]
            counted -= tail.count(pattern)
    seconds = time.perf_counter() - started
    sampler.done.set()
    sampler.join()
    connection.close()
    peak = status_kb(pid, "VmHWM") if reset else None
    rows = int(response.headers.get("X-Row-Count", counted))
    return Measured(
        rows,
        counted,
        size,
        seconds,
        None if peak is None else (peak - before) / 1024,
        (sampler.peak - before) / 1024,
    )


def export_path_body(format_, parameters):
    """The export request."""
    return {"resource": "odds", "format": format_, "parametersJson": json.dumps(parameters)}


def login(port, password) -> str:
    """The admin's bearer token."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.request(
        "POST",
        "/api/auth/login",
        json.dumps({"email": ADMIN, "password": password}),
        {"Content-Type": "application/json"},
    )
    response = connection.getresponse()
    body = response.read()
    connection.close()
    if response.status != 200:
        sys.exit(f"login answered {response.status}: {body[:300]!r}")
    return json.loads(body)["accessToken"]


def rows_in_body(format_, measured) -> int:
    """The rows a body held, from its count of lines or objects."""
    return measured.counted - 1 if format_ == "csv" else measured.counted


def memory_goal(small, large) -> tuple[bool, str]:
    """Whether the large export's growth is flat against the small one's, and under the cap."""
    if small is None or large is None:
        return False, "unknown"
    flat = large <= small * GROWTH_RATIO + GROWTH_SLACK_MB
    capped = large < GROWTH_MAX_MB
    misses = [word for word, met in (("not flat", flat), ("over 50 MiB", capped)) if not met]
    return not misses, ", ".join(misses) or "flat"


def main():
    """Parse the options, build the database, serve, measure, print."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", help="a database this may wipe (default: SQLite)")
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--formats", default="csv,ndjson,json")
    parser.add_argument("--repeat", type=int, default=1, help="runs per export; the best kept")
    args = parse_arguments(parser, sizes="1000,5000")
    sizes = sorted(int(size) for size in args.sizes.split(","))
    formats = args.formats.split(",")
    if any(format_ not in EXPORT_FORMATS for format_ in formats) or args.repeat < 1:
        parser.error("formats are csv, ndjson, json; --repeat is at least 1")
    warm_up = SMOKE_WARM_UP if args.smoke else WARM_UP
    mismatches = 0
    signal.signal(signal.SIGTERM, stop_on_sigterm)
    password = secrets.token_urlsafe(16)
    secret = secrets.token_urlsafe(48)
    with tempfile.TemporaryDirectory(prefix="bench-exports-") as name, ExitStack() as stack:
        folder = Path(name)
        (folder / f"{BARE_MODULE}.py").write_text(BARE_APP)
        url = args.database_url or f"sqlite:///{folder / 'bench.db'}"
        print(f"machine: {machine()}; Python {platform.python_version()}")
        print(f"commit: {commit()}")
        print(f"database: {'--database-url' if args.database_url else 'a fresh SQLite file'}")
        built = build(url, password, max(sizes) + max(sizes) // 50, args.smoke)
        print(
            f"demo world in {built['demo_seconds']:.1f} s ({built['matches']} matches, "
            f"{built['demo_odds']:,} odds); {built['books']} synthetic bookmakers added in "
            f"{built['synthetic_seconds']:.1f} s: {built['odds']:,} odds"
        )
        chosen = filters_for(url, [warm_up, *sizes])
        environment = {
            **os.environ,
            "APP_ENV": "production",
            "DATABASE_URL": url,
            "JWT_SECRET_KEY": secret,
            "LEDGER_SIGNING_KEY": notes.generate("bench.example/ledger").encode(),
            "WEBHOOK_SECRETS_KEY": Fernet.generate_key().decode(),  # production needs one
            "RATELIMIT_STORAGE_URI": "memory://",  # gunicorn.conf.py: then one worker
            "RATELIMIT_AUTH": "100000 per minute",
            "RATELIMIT_DATA": "100000 per minute",
            "LOG_LEVEL": "WARNING",
            "HOST": "127.0.0.1",
            "GUNICORN_TIMEOUT": "600",
        }
        service_port, bare_port = free_port(), free_port()
        service = start_gunicorn(
            stack,
            "wsgi:app",
            {**environment, "PORT": str(service_port)},
            ROOT,
            folder / "service.log",
        )
        bare = start_gunicorn(
            stack,
            f"{BARE_MODULE}:app",
            {**environment, "PORT": str(bare_port), "PYTHONPATH": str(folder)},
            folder,
            folder / "bare.log",
        )
        service_pid = worker_pid(service, service_port)
        bare_pid = worker_pid(bare, bare_port)
        token = login(service_port, password)
        print(
            "gunicorn.conf.py, one worker (gthread); RSS growth = VmHWM after the export − "
            "VmRSS before it, the peak reset through /proc/PID/clear_refs; 'sampled' = the peak "
            "of VmRSS read every 2 ms"
        )
        # Warm-up: the first exports pay for imports and first allocations, so each format
        # first exports about WARM_UP rows (SMOKE_WARM_UP in a smoke run) unmeasured.
        for format_ in formats:
            download(
                service_port,
                "POST",
                "/api/v1/data/exports",
                service_pid,
                export_path_body(format_, chosen[warm_up]),
                token,
            )
        download(bare_port, "GET", f"/lines?count={warm_up}&width=40", bare_pid)

        results = {}
        baselines = {}
        for size in sizes:
            parameters = chosen[size]
            driver_rows, driver_seconds = min(
                (driver_read(url, parameters) for _ in range(args.repeat)), key=lambda r: r[1]
            )
            for format_ in formats:
                runs = [
                    download(
                        service_port,
                        "POST",
                        "/api/v1/data/exports",
                        service_pid,
                        export_path_body(format_, parameters),
                        token,
                        b'{"matchId":' if format_ == "json" else None,
                    )
                    for _ in range(args.repeat)
                ]
                best = min(runs, key=lambda run: run.seconds)
                if rows_in_body(format_, best) != best.rows or best.rows != driver_rows:
                    mismatches += 1
                    print(
                        f"  ! {format_} {size:,}: X-Row-Count {best.rows:,}, body "
                        f"{rows_in_body(format_, best):,}, driver {driver_rows:,}"
                    )
                results[size, format_] = best
            # The bare lines are as long as the rows of the first format measured (CSV's).
            first = results[size, formats[0]]
            width = max(2, round(first.bytes / max(1, first.rows)))
            bare_run = min(
                (
                    download(
                        bare_port, "GET", f"/lines?count={driver_rows}&width={width}", bare_pid
                    )
                    for _ in range(args.repeat)
                ),
                key=lambda run: run.seconds,
            )
            baselines[size] = (driver_rows, driver_seconds, bare_run, width)

        print()
        for size in sizes:
            rows, seconds, bare_run, width = baselines[size]
            print(
                f"baselines for {size:,} ({json.dumps(chosen[size])}): driver cursor "
                f"{rows:,} rows in {seconds:.2f} s = {rows / seconds:,.0f} rows/s; bare "
                f"gunicorn stream of {rows:,} lines of {width} bytes in {bare_run.seconds:.2f} s"
                f" = {bare_run.rate:,.0f} lines/s (RSS growth {bare_run.growth_mb:.1f} MiB)"
            )
        print()
        header = (
            f"{'size':>9}  {'format':<6}  {'rows':>9}  {'MB':>6}  {'seconds':>7}  {'rows/s':>8}"
            f"  {'/driver':>7}  {'/bare':>6}  {'RSS+ MiB':>8}  {'sampled':>7}  goal met"
        )
        print(header)
        print("-" * len(header))
        for size in sizes:
            rows, seconds, bare_run, _ = baselines[size]
            for format_ in formats:
                run = results[size, format_]
                misses = []
                if format_ in ("csv", "ndjson") and run.rate < ROWS_GOAL:
                    misses.append(f"< {ROWS_GOAL:,} rows/s")
                if size == sizes[-1] and len(sizes) > 1:
                    met, why = memory_goal(results[sizes[0], format_].growth_mb, run.growth_mb)
                    if not met:
                        misses.append(f"memory {why}")
                elif run.growth_mb is not None and run.growth_mb >= GROWTH_MAX_MB:
                    misses.append("over 50 MiB")
                growth = "n/a" if run.growth_mb is None else f"{run.growth_mb:.1f}"
                met = "yes" if not misses else "no (" + "; ".join(misses) + ")"
                print(
                    f"{size:>9,}  {format_:<6}  {run.rows:>9,}  {run.bytes / 1e6:>6.1f}  "
                    f"{run.seconds:>7.2f}  {run.rate:>8,.0f}  "
                    f"{run.rate / (rows / seconds):>7.2f}  {run.rate / bare_run.rate:>6.2f}  "
                    f"{growth:>8}  {run.sampled_mb:>7.1f}  {'not judged' if args.smoke else met}"
                )
        print(
            f"\ngoals: CSV and NDJSON >= {ROWS_GOAL:,} rows/s; the {sizes[-1]:,}-row export's "
            f"RSS growth <= {GROWTH_RATIO:.2f} x the {sizes[0]:,}-row one's + "
            f"{GROWTH_SLACK_MB:.0f} MiB, and < {GROWTH_MAX_MB:.0f} MiB"
        )
    if args.smoke and mismatches:
        sys.exit(f"{mismatches} export(s) did not hand over the rows the database holds")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
