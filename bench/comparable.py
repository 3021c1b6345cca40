"""Benchmark of comparable matches on the whole shared football-data set.

    .venv/bin/python -m bench.comparable [--data DIR] [--database-url URL] [--calls N] [--smoke]

Imports every file and backfills the predictions (as bench.engine does), then answers
``explorer.comparable`` for N (default 60) different finished-and-upcoming targets, each with a
new ``limit`` from 1 to 100 and one of the three scopes: every call is one the answer cache has
never seen. Printed beside the baseline measured in the same run: the same calls each reading
the market's whole history afresh (what every uncached call cost before the index: a read and
decoding of every past forecast). Goal: each indexed call under 20 ms (median and p95), with
the one read per data version printed apart. ``--smoke``: one file, 3 calls, no goal judged.
"""

import argparse
import statistics
import time

import numpy as np

from bench.common import commit, data_arguments, fresh_app, machine, parse_arguments, timed
from models import Match, Prediction
from services.feeds import imports
from services.forecasting import predictions
from services.reads.explorer import ComparableIndex, comparable
from store.database import db

SCOPES = ("league", "teams", "global")
GOAL_MS = 20.0


def _targets(count):
    """``count`` matches with a 1x2 forecast, spread over the whole history."""
    ids = [
        match_id
        for (match_id,) in Prediction.select(Prediction.match)
        .where(Prediction.market == "1x2")
        .order_by(Prediction.match)
        .tuples()
    ]
    picks = np.linspace(len(ids) // 10, len(ids) - 1, count).astype(int)
    return [ids[i] for i in picks]


def _calls(targets):
    """(match, scope, limit) per call: every one new to a cache keyed by them."""
    return [
        (match_id, SCOPES[i % len(SCOPES)], 1 + (i * 37) % 100)
        for i, match_id in enumerate(targets)
    ]


def _times(calls, index_for):
    """Seconds of each call, its index from ``index_for()``."""
    seconds = []
    for match_id, scope, limit in calls:
        index = index_for()
        started = time.perf_counter()
        comparable(match_id, "1x2", scope, limit, index=index)
        seconds.append(time.perf_counter() - started)
    return seconds


def _summary(seconds) -> str:
    ms = sorted(s * 1000 for s in seconds)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return f"median {statistics.median(ms):.1f} ms, p95 {p95:.1f} ms, max {ms[-1]:.1f} ms"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    data_arguments(parser)
    parser.add_argument("--calls", type=int, default=60)
    args = parse_arguments(parser, calls=3)
    with fresh_app(parser, args) as (app, files):
        print(f"commit {commit()}; {machine()}")
        print(f"database: {db.obj.__class__.__name__}; {len(files)} files from {args.data}")
        for path in files:
            imports.import_file(path)
        _, backfill = timed(lambda: predictions.backfill(app.config))
        finished = Match.select().where(Match.status == "finished").count()
        print(f"{finished} finished matches; backfill {backfill:.0f} s")
        calls = _calls(_targets(args.calls))
        baseline = _times(calls, ComparableIndex)  # a fresh read of the history each call
        index = ComparableIndex()
        _, build = timed(lambda: index.history("1x2"))
        indexed = _times(calls, lambda: index)
        ratio = statistics.median(baseline) / statistics.median(indexed)
        print(f"{len(calls)} uncached calls (new match, scope or limit each):")
        print(f"  baseline, whole history read per call: {_summary(baseline)}")
        print(f"  indexed (read once per data version, {build * 1000:.0f} ms): {_summary(indexed)}")
        p95 = sorted(indexed)[min(len(indexed) - 1, round(0.95 * (len(indexed) - 1)))]
        met = statistics.median(indexed) * 1000 < GOAL_MS and p95 * 1000 < GOAL_MS
        judged = "not judged in a smoke run" if args.smoke else "met" if met else "NOT met"
        print(f"  median speed-up {ratio:.0f}x; goal median and p95 < {GOAL_MS:.0f} ms: {judged}")


if __name__ == "__main__":
    main()
