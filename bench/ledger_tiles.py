"""What an audit of a season costs: ``tools/verify_ledger.py`` reading the ledger of N live picks
from its tiles over HTTP, cold (an empty cache) and warm (a re-check of the same log, and one
after a day more), and what serving tiles costs beside a bare Flask route.

    python -m bench.ledger_tiles [--picks N] [--days D] [--seconds S] [--season DIR] [--smoke]

Builds a season in a fresh SQLite file: N live picks on matches spread over D days, each day's
picks published (and a checkpoint signed) the day before and settled (another checkpoint) three
hours after kick-off, so 2N entries and 2D checkpoints; serves it with gunicorn.conf.py under the
default limits (the public 120 a minute, ``RATELIMIT_TILES`` for tiles and bulk answers); runs
the verifier as a user would, its pacing included. Goals at 100,000 picks: ≤ 1,000 requests and
≤ 60 s cold, ≤ 10 requests warm. Then loads a full level-0 tile, a full entry bundle (gzipped)
and the checkpoint with the Python load generator of ``bench.serving``, beside its bare
route, limits lifted. ``--smoke``: 1,000 picks over 5 days, 1 s loads. ``--season DIR`` keeps the
season built (its SQLite file and signing key) in DIR and reuses it on a later run of the same
size, to measure the verifier again without building it again.
"""

import argparse
import importlib.util
import io
import os
import sys
import tempfile
import time
from contextlib import ExitStack, redirect_stdout
from datetime import UTC, datetime, timedelta
from pathlib import Path

from app import create_app
from bench.common import (
    ROOT,
    build_picks,
    commit,
    free_port,
    machine,
    parse_arguments,
    start_gunicorn,
)
from bench.serving import BARE_APP, BARE_MODULE, run_python_load, wait_until_up
from engine.ledger import notes
from models import LedgerCheckpoint, Match
from models.schema import create_tables, drop_tables
from services.record import log_reading, settling, signed_log
from store.database import db

START = datetime(2025, 8, 9, 15, 0, tzinfo=UTC)
GOALS = {"cold requests": 1000, "cold seconds": 60, "warm requests": 10}


def load_verifier():
    """The verifier script as a module, as a user runs it."""
    spec = importlib.util.spec_from_file_location("verify_ledger", ROOT / "tools/verify_ledger.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build_season(settings, picks: int, days: int) -> int:
    """The season's live picks, published and settled day by day; returns its entries."""
    build_picks(picks, START, is_live=True, created_at=START - timedelta(days=2))
    ids = [match_id for (match_id,) in Match.select(Match.id).order_by(Match.id).tuples()]
    with db.atomic():
        for day in range(1, days):
            chosen = ids[day::days]
            for at in range(0, len(chosen), 5000):
                Match.update(kickoff_at=START + timedelta(days=day)).where(
                    Match.id.in_(chosen[at : at + 5000])
                ).execute()
    by_day = {}
    for match_id, kickoff in Match.select(Match.id, Match.kickoff_at).tuples():
        by_day.setdefault(kickoff, []).append(match_id)
    for kickoff in sorted(by_day):
        published = kickoff - timedelta(days=1)
        with db.atomic():
            signed_log.publish_new(by_day[kickoff], published, "bench")
            signed_log.checkpoint(published, settings)
        settled = kickoff + timedelta(hours=3)
        with db.atomic():
            settling.settle_pending(settings, now=settled)
            signed_log.checkpoint(settled, settings)
    return log_reading.size()


def season(folder: Path, args) -> tuple[str, str]:
    """``(database URL, signing key)`` of the season of ``args``: built in ``folder``, or in
    ``args.season`` when given (and reused from there when a run of this size left it)."""
    keep = Path(args.season) if args.season else folder
    keep.mkdir(parents=True, exist_ok=True)
    url = f"sqlite:///{keep / f'season-{args.picks}-{args.days}.db'}"
    key_file = keep / f"season-{args.picks}-{args.days}.key"
    if key_file.exists():
        print(f"season: reused from {keep}", flush=True)
        return url, key_file.read_text()
    key = notes.generate("bench.example/ledger").encode()
    settings = {
        "DATABASE_URL": url,
        "JWT_SECRET_KEY": "bench-" + "k" * 40,
        "LEDGER_SIGNING_KEY": key,
        "LOG_LEVEL": "WARNING",
        "DATABASE_STATEMENT_TIMEOUT": 0,
    }
    app = create_app(settings)
    started = time.perf_counter()
    with app.app_context():
        drop_tables()
        create_tables()
        entries = build_season(app.config, args.picks, args.days)
        checkpoints = LedgerCheckpoint.select().count()
    db.close()
    key_file.write_text(key)  # written last: a season half built is built again
    print(
        f"season: {entries:,} entries ({entries // 2:,} live picks over {args.days} days), "
        f"{checkpoints:,} checkpoints, built in {time.perf_counter() - started:.0f} s",
        flush=True,
    )
    return url, key


def audit(verifier, base, saved, cache_dir):
    """One verifier run as the command line makes it: (failed?, requests, seconds, CPU seconds
    of the verifier (this process; the service runs in its own), output, its requests line)."""
    out = io.StringIO()
    started, cpu = time.perf_counter(), time.process_time()
    with redirect_stdout(out):
        status = verifier.main([base, "--checkpoints", str(saved), "--cache", str(cache_dir)])
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    text = out.getvalue()
    requests = int(text.strip().splitlines()[-1].split()[0]) if "requests (" in text else -1
    line = next(line for line in text.splitlines() if "requests (" in line)
    return status != 0, requests, seconds, cpu, text, line


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--picks", type=int, default=100_000)
    parser.add_argument("--days", type=int, default=280)
    parser.add_argument("--seconds", type=float, default=5.0, help="each tile load's length")
    parser.add_argument("--season", help="a folder keeping the season built, reused if there")
    args = parse_arguments(parser, picks=1000, days=5, seconds=1.0)
    print(f"commit {commit()}; {machine()}", flush=True)
    verifier = load_verifier()
    with tempfile.TemporaryDirectory() as folder, ExitStack() as stack:
        folder = Path(folder)
        url, key = season(folder, args)
        environment = {
            **os.environ,
            "APP_ENV": "production",
            "DATABASE_URL": url,
            "JWT_SECRET_KEY": "bench-" + "k" * 40,
            "LEDGER_SIGNING_KEY": key,
            "WEBHOOK_SECRETS_KEY": "hMxqNzTWyJZQlbjSU7P-LHqkPEHfOZ6IAR3w9da_2ns=",
            "LOG_LEVEL": "WARNING",
            "HOST": "127.0.0.1",
            "PORT": str(free_port()),
        }
        process = start_gunicorn(stack, "wsgi:app", environment, ROOT, folder / "service.log")
        base = f"http://127.0.0.1:{environment['PORT']}"
        wait_until_up(base, "/api/track-record/ledger", process, folder / "service.log")
        saved, cache_dir = folder / "saved.json", folder / "cache"
        print("verifier, default limits (public 120/min, tiles 3000/min), its pacing included:")
        results = {}
        for name in ("cold", "warm"):
            failed, requests, seconds, cpu, text, line = audit(verifier, base, saved, cache_dir)
            results[name] = (requests, seconds)
            print(
                f"  {name}: {requests} requests, {seconds:.1f} s wall, the verifier's CPU "
                f"{cpu:.1f} s ({line.strip()})"
            )
            if failed:
                print(text)
                sys.exit(f"the verifier failed on an honest season ({name})")
        size = sum(p.stat().st_size for p in cache_dir.rglob("*") if p.is_file())
        print(f"  cache: {size / 1e6:.1f} MB in {cache_dir.name}/")
        if not args.smoke:
            for goal, value in (
                ("cold requests", results["cold"][0]),
                ("cold seconds", results["cold"][1]),
                ("warm requests", results["warm"][0]),
            ):
                verdict = "met" if value <= GOALS[goal] else "NOT met"
                print(f"  goal {goal} <= {GOALS[goal]}: {value:.0f}, {verdict}")
        bench_serving(stack, folder, environment, args.seconds)


def bench_serving(stack, folder, environment, seconds):
    """Tiles served per second, beside the bare Flask route under the same gunicorn settings."""
    unthrottled = {
        **environment,
        "RATELIMIT_TILES": "100000000 per minute",
        "RATELIMIT_PUBLIC": "100000000 per minute",
        "PORT": str(free_port()),
    }
    (folder / f"{BARE_MODULE}.py").write_text(BARE_APP)
    bare_env = {**environment, "PORT": str(free_port()), "PYTHONPATH": str(folder)}
    service = start_gunicorn(stack, "wsgi:app", unthrottled, ROOT, folder / "tiles.log")
    bare = start_gunicorn(stack, f"{BARE_MODULE}:app", bare_env, folder, folder / "bare.log")
    base = f"http://127.0.0.1:{unthrottled['PORT']}"
    bare_base = f"http://127.0.0.1:{bare_env['PORT']}"
    wait_until_up(base, "/api/track-record/ledger", service, folder / "tiles.log")
    wait_until_up(bare_base, "/", bare, folder / "bare.log")
    prefix = "/api/track-record/ledger/tiles"
    print(f"tile serving, {seconds:.0f} s each, 4 keep-alive connections (Python load generator):")
    targets = [
        ("bare Flask route GET /", f"{bare_base}/", {}),
        ("GET tile/0/000 (8 KB)", f"{base}{prefix}/tile/0/000", {}),
        (
            "GET tile/entries/000, gzip",
            f"{base}{prefix}/tile/entries/000",
            {"Accept-Encoding": "gzip"},
        ),
        ("GET checkpoint", f"{base}{prefix}/checkpoint", {}),
        ("bare Flask route GET / again", f"{bare_base}/", {}),
    ]
    bare_rate = None
    for label, url, headers in targets:
        result = run_python_load(url, headers, 4, seconds)
        bare_rate = bare_rate or result.rate
        print(
            f"  {label:<32} {result.rate:>7,.0f} req/s (x{result.rate / bare_rate:.2f} of bare), "
            f"p50 {result.p50_ms:.1f} ms, p99 {result.p99_ms:.1f} ms, not 2xx: {result.bad}"
        )
        if result.bad or result.errors:
            sys.exit(f"{label}: {result.bad} bad answers, {result.errors} errors")


if __name__ == "__main__":
    main()
