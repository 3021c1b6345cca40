"""Benchmark of the match feed's largest allowed requests: what one Data API call may cost.

    .venv/bin/python -m bench.feed_cost [--requests N] [--database-url URL] [--smoke]

Builds the demo world (``flask data demo``) in a fresh SQLite file (or in --database-url, which
it wipes) with an admin (no quota), then asks ``GET /api/v1/data/matches`` for the largest page
the service allows, bare and with each include alone and all of them, ``--requests`` times each
through the app in this process. The answer cache keeps nothing, so each request is computed
as a new spelling of it would be: the query, the cards and their relations, the dump. Printed per
request: its limit, the matches and bytes of its answer, and the p50 and p99 of its time.
Goal: a p99 under 1 s for each.

``--smoke``: the demo world's matches and odds alone (``services.operations.demo_world.load``, no
replayed days), 3 requests each, no goal judged; it fails when a request is not a 200.
"""

import argparse
import math
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

from app import create_app
from bench.common import commit, machine, parse_arguments
from enums import CARD_RELATIONS
from models.schema import create_tables, drop_tables
from schemas.data import max_limit
from services.operations import demo_world
from store.database import db, open_database

GOAL_P99_MS = 1000
ADMIN = "bench-feed-admin@example.com"
PATH = "/api/v1/data/matches"


def include_sets() -> list[tuple[str, ...]]:
    """Bare, each relation alone, then every relation."""
    return [(), *((relation,) for relation in CARD_RELATIONS), CARD_RELATIONS]


def build(url: str, smoke: bool) -> tuple:
    """The app on ``url`` holding the demo world (its matches and odds alone in a smoke run) and
    the admin's auth headers."""
    db.initialize(open_database(url))
    drop_tables()  # a --database-url may hold anything: start from nothing, as a fresh file does
    db.close()
    app = create_app(
        {
            "DATABASE_URL": url,
            "JWT_SECRET_KEY": "bench-" + secrets.token_hex(24),
            "LOG_LEVEL": "WARNING",
            "RATELIMIT_ENABLED": False,
            "RATELIMIT_HEADERS_ENABLED": False,
            "ANSWER_CACHE_BYTES": 1,  # keeps nothing: every request computes its answer
        }
    )
    with app.app_context():
        create_tables()
        if smoke:
            demo_world.load(app.extensions["clock"]())
    runner = app.test_cli_runner()
    if not smoke:
        run(runner, "data", "demo")
    password = secrets.token_urlsafe(18)
    run(runner, "users", "create", ADMIN, "--password", password, "--role", "admin")
    answer = app.test_client().post("/api/auth/login", json={"email": ADMIN, "password": password})
    if answer.status_code != 200:
        sys.exit(f"login failed: {answer.status_code} {answer.get_data(as_text=True)}")
    return app, {"Authorization": f"Bearer {answer.get_json()['accessToken']}"}


def run(runner, *arguments) -> None:
    """``flask ARGUMENTS`` in the app, exiting on failure."""
    result = runner.invoke(args=list(arguments))
    if result.exit_code:
        sys.exit(f"flask {' '.join(arguments)} failed:\n{result.output}")


def percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile ``share`` (0–1) of ``values``."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def measure(client, headers, includes, requests) -> dict:
    """Time the largest page allowed with ``includes``, ``requests`` times."""
    limit = max_limit(includes)
    query = f"limit={limit}" + (f"&include={','.join(includes)}" if includes else "")
    times, size, count = [], 0, 0
    for _ in range(requests):
        started = time.perf_counter()
        answer = client.get(f"{PATH}?{query}", headers=headers)
        body = answer.get_data()
        times.append((time.perf_counter() - started) * 1000)
        if answer.status_code != 200:
            sys.exit(f"{query}: {answer.status_code} {answer.get_data(as_text=True)[:500]}")
        size, count = len(body), len(answer.get_json()["items"])
    return {
        "query": query,
        "matches": count,
        "bytes": size,
        "p50": statistics.median(times),
        "p99": percentile(times, 0.99),
    }


def main():
    """Build, measure every include set, print, and exit non-zero when a goal is missed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=30, help="requests per include set")
    parser.add_argument("--database-url", help="a database the benchmark may wipe")
    args = parse_arguments(parser, requests=3)
    print(f"commit {commit()} · {machine()}", flush=True)
    with tempfile.TemporaryDirectory() as folder:
        url = args.database_url or f"sqlite:///{Path(folder) / 'bench.db'}"
        started = time.perf_counter()
        app, headers = build(url, args.smoke)
        print(f"demo world built in {time.perf_counter() - started:.0f} s", flush=True)
        client = app.test_client()
        client.get(f"{PATH}?limit=10", headers=headers)  # warm-up: imports, first connection
        missed = []
        print(f"{'request':58} {'matches':>7} {'bytes':>10} {'p50 ms':>8} {'p99 ms':>8}")
        for includes in include_sets():
            found = measure(client, headers, includes, args.requests)
            print(
                f"{found['query']:58} {found['matches']:7} {found['bytes']:10,} "
                f"{found['p50']:8.0f} {found['p99']:8.0f}",
                flush=True,
            )
            if found["p99"] >= GOAL_P99_MS:
                missed.append(found["query"])
        if not db.is_closed():
            db.close()
    if args.smoke:
        return
    if missed:
        sys.exit(f"p99 at or over {GOAL_P99_MS} ms: {', '.join(missed)}")
    print(f"every p99 under {GOAL_P99_MS} ms")


if __name__ == "__main__":
    main()
