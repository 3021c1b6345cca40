"""A month on autopilot: April 2024 of the Premier League played by two web processes and two
workers on one database, football-data and The Odds API served locally on a clock the bench
advances (``tests.month``, the harness ``tests/feeds/test_autopilot.py`` plays a few days of).

    python -m bench.autopilot [--days N] [--database-url URL] [--redis-url URL]
                              [--regular MIN] [--near MIN] [--verbose] [--smoke]

Printed: the matches, picks, syncs, failures met, credits charged by The Odds API and counted
by the service, the wall time of each simulated day, and each end-of-month rule with what broke
it. Goal: every rule held, and a simulated day in under a minute of wall time on 2 cores.
``--database-url``: a database the bench may wipe (PostgreSQL too; a temporary SQLite file by
default); ``--redis-url``: rate limits and the workers' queue on Redis (else memory and an
SQLite queue). ``--smoke``: two days, a sync every 3 hours (every hour near a kick-off).
The defaults (a sync every 2 hours, every 30 minutes near a kick-off) keep the month near 20
minutes; ``--regular 30 --near 5`` is the schedule's own pace.
"""

import argparse
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from app import create_app
from bench.common import commit, data_arguments, machine, parse_arguments, skip_smoke
from models.schema import create_tables, drop_tables
from store.database import db, is_sqlite
from tests import autopilot, month
from tests.helpers import settings
from tests.month_clock import FileClock


def main():
    """Play the month and print what it measured."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    data_arguments(parser)
    parser.add_argument("--days", type=float, default=month.MONTH_DAYS)
    parser.add_argument("--redis-url")
    parser.add_argument("--regular", type=int, default=120, help="minutes between syncs")
    parser.add_argument("--near", type=int, default=30, help="minutes, near a kick-off")
    parser.add_argument("--verbose", action="store_true", help="print every step")
    args = parse_arguments(parser, days=2, regular=180, near=60)
    if not (args.data / "E0_2324.csv").is_file():
        if args.smoke:
            skip_smoke(f"no E0_2324.csv at {args.data}")
        parser.error(f"no E0_2324.csv at {args.data}")
    print(f"commit {commit()}; {machine()}", flush=True)
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        clock = FileClock(folder / "clock.txt")
        clock.set(month.START)
        config = settings(
            folder,
            DATABASE_URL=args.database_url or f"sqlite:///{folder / 'month.db'}",
            RATELIMIT_STORAGE_URI=args.redis_url or "memory://",
            CLOCK=clock,
            LOG_LEVEL="WARNING",
        )
        app = create_app(config)
        with app.app_context():
            drop_tables()
            create_tables()
            engine = "SQLite" if is_sqlite() else "PostgreSQL"
        db.close()
        plan = month.Plan(days=args.days)
        print(
            f"{args.days:g} days from {plan.start:%a %d %b %Y %H:%M} UTC ({engine}), a sync every "
            f"{args.regular} min ({args.near} min within 3 h of a kick-off):",
            flush=True,
        )
        played = autopilot.Month(
            app,
            clock,
            folder,
            plan,
            regular=timedelta(minutes=args.regular),
            near=timedelta(minutes=args.near),
            say=lambda line: print(line, flush=True),
            queue_url=args.redis_url,
            verbose=args.verbose,
        )
        started = time.monotonic()
        played.run()
        seconds = time.monotonic() - started
        checks = played.checks()
        figures = played.figures()
        print(autopilot.summary(figures, checks))
        per_day = seconds / max(1, figures["days"])
        held = not any(checks.values())
        print(
            f"wall time {seconds:.0f} s, {per_day:.1f} s per simulated day; goal (every rule, "
            "under 60 s a day): "
            + (
                "not judged (smoke run)"
                if args.smoke
                else "met"
                if held and per_day < 60
                else "missed"
            ),
            flush=True,
        )
        with app.app_context():
            drop_tables()
        db.close()


if __name__ == "__main__":
    main()
