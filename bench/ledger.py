"""What the ledger costs: settling 100,000 live picks with and without their outcome entries and
checkpoint, and verifying a checkpoint against the previous one as the log grows.

    python -m bench.ledger [--database-url URL] [--picks N] [--smoke]

Goals: the ledger adds less than 1 s to the settlement of 100,000 picks; a consistency proof
between two checkpoints is O(log n) hashes and stored-subtree lookups, so its cost hardly moves
while the log grows a thousandfold.

Both settlements (without the ledger, with it) are the best of three runs, so neither side gains
from the noise of a shared machine; the CPU time of this process is printed beside the wall time
(the database's own work shows only in the wall time). ``--smoke``: 1,000 picks, logs of 2,000 and
20,000 entries, five timings of each proof.
"""

import argparse
import hashlib
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from app import create_app
from bench.common import build_picks, commit, machine, parse_arguments
from engine.ledger import merkle, notes
from models import LedgerEntry, Pick
from models.schema import create_tables, drop_tables
from services.record import log_reading, settling, signed_log
from store.database import db
from tools.verify_ledger import verify_consistency

KICKOFF = datetime(2026, 3, 1, 15, 0, tzinfo=UTC)
#: The log sizes a checkpoint is verified at, and the timings of each proof (median), in a full
#: run and in a smoke run.
SIZES, RUNS = (10_000, 100_000, 1_000_000), 201
SMOKE_SIZES, SMOKE_RUNS = (2_000, 20_000), 5


def reset(live: bool) -> None:
    """Every pick pending again, live or not (a settlement sets unpublished live picks apart)."""
    with db.atomic():
        Pick.update(
            status="pending", profit=None, settled_at=None, is_live=live, not_live_reason=None
        ).execute()


def settle(settings, now):
    """One settlement operation: settle, then the ledger's checkpoint (none without entries)."""
    with db.atomic():
        counts = settling.settle_pending(settings, now=now)
        signed_log.checkpoint(now, settings)
    return counts


def measured(work):
    """``(result, wall seconds, CPU seconds of this process)`` of ``work()``: on a shared
    machine the CPU time is what the work itself cost, the wall time adds the others'."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = work()
    return result, time.perf_counter() - wall, time.process_time() - cpu


class Ledgered:
    """Time spent inside the ledger's part of a settlement (its outcome entries)."""

    def __init__(self):
        self.wall = self.cpu = 0.0
        self.inner = signed_log.record_outcomes

    def __call__(self, *args, **kwargs):
        result, wall, cpu = measured(lambda: self.inner(*args, **kwargs))
        self.wall += wall
        self.cpu += cpu
        return result


def bench_settlement(settings, total: int) -> None:
    match_ids = build_picks(total, KICKOFF, is_live=True, created_at=KICKOFF - timedelta(days=1))
    picks = Pick.select().count()
    now = KICKOFF + timedelta(hours=3)
    # Without the ledger: the same picks, not live, so settlement appends nothing (live ones
    # without an entry would be set apart by the live rule).
    baseline = []
    for _ in range(3):
        reset(live=False)
        _, wall, cpu = measured(lambda: settle(settings, now))
        baseline.append((wall, cpu))
    reset(live=True)
    with db.atomic():
        _, publishing, _ = measured(
            lambda: (
                signed_log.publish_new(match_ids, KICKOFF - timedelta(days=1), "bench"),
                signed_log.checkpoint(KICKOFF - timedelta(days=1), settings),
            )
        )
    # With the ledger, as often: each run settles the same picks again (reset to pending), so
    # appends another outcome entry per pick and a checkpoint.
    inside = Ledgered()
    signed_log.record_outcomes = inside
    runs = []
    try:
        for _ in range(len(baseline)):
            reset(live=True)
            inside.wall = inside.cpu = 0.0
            counts, wall, cpu = measured(lambda: settle(settings, now))
            runs.append((wall, cpu, inside.wall, inside.cpu))
    finally:
        signed_log.record_outcomes = inside.inner
    entries = LedgerEntry.select().count()
    floor_wall = min(run[0] for run in baseline)
    floor_cpu = min(run[1] for run in baseline)
    wall, cpu = min(run[0] for run in runs), min(run[1] for run in runs)
    print(
        f"settlement of {picks:,} live picks (won {counts['won']:,}, lost {counts['lost']:,}) "
        f"as one operation, best of {len(baseline)} runs each: without the ledger, then with "
        f"{picks:,} outcome entries and a checkpoint:"
    )
    print(
        f"  wall: {floor_wall:.2f} s -> {wall:.2f} s (+{wall - floor_wall:.2f} s, ratio "
        f"{wall / floor_wall:.2f}); CPU: {floor_cpu:.2f} s -> {cpu:.2f} s "
        f"(+{cpu - floor_cpu:.2f} s, ratio {cpu / floor_cpu:.2f})"
    )
    print(
        f"  appending the entries and their subtrees alone: "
        f"{min(run[2] for run in runs):.2f} s wall, {min(run[3] for run in runs):.2f} s CPU; "
        "goal: the ledger adds under 1 s"
    )
    print(
        "  each run: "
        + "; ".join(f"{wall:.2f} s wall, {cpu:.2f} s CPU" for wall, cpu, *_ in [*baseline, *runs])
        + " (without, then with)"
    )
    print(f"  (publishing the same picks beforehand: {publishing:.2f} s; {entries:,} entries)")
    size = log_reading.size()
    previous = size - picks
    times = []
    for _ in range(21):
        proof, seconds, _ = measured(lambda: log_reading.consistency(previous, size))
        times.append(seconds)
    print(
        f"consistency proof {previous:,} -> {size:,} from the database: "
        f"{len(proof['hashes'])} hashes, median {statistics.median(times) * 1000:.1f} ms"
    )


class Tree:
    """A tree stored as the service stores it (leaf hashes and perfect subtrees), in memory,
    counting lookups."""

    def __init__(self, size: int):
        self.leaves = [
            merkle.leaf_hash(hashlib.sha256(str(n).encode()).digest()) for n in range(size)
        ]
        made, _ = merkle.append([], 0, self.leaves)
        self.nodes = {(level, index): value for level, index, value in made}
        self.lookups = 0

    def lookup(self, addresses):
        self.lookups += len(addresses)
        return [
            self.leaves[index] if level == 0 else self.nodes[(level, index)]
            for level, index in addresses
        ]


def bench_verification(sizes=SIZES, runs=RUNS) -> None:
    """A checkpoint verified against the previous one (1,000 entries earlier) as n grows."""
    print("checkpoint against the previous one (1,000 entries earlier), as the log grows:")
    print("  entries    proof hashes  lookups  make proof  verify proof")
    first = None
    for size in sizes:
        tree = Tree(size)
        old, new = size - 1000, size
        old_root = merkle.tree_root(old, tree.lookup)
        new_root = merkle.tree_root(new, tree.lookup)
        tree.lookups = 0
        proof = merkle.consistency_proof(old, new, tree.lookup)
        lookups = tree.lookups
        make = median_time(
            lambda tree=tree, old=old, new=new: merkle.consistency_proof(old, new, tree.lookup),
            runs,
        )
        check = median_time(
            lambda old=old, new=new, a=old_root, b=new_root, p=proof: verify_consistency(
                old, new, a, b, p
            ),
            runs,
        )
        assert verify_consistency(old, new, old_root, new_root, proof)
        first = first or (make, check)
        print(
            f"  {size:>9,}  {len(proof):>12}  {lookups:>7}  {make * 1e6:>7.0f} µs  "
            f"{check * 1e6:>9.0f} µs   (x{make / first[0]:.2f}, x{check / first[1]:.2f})"
        )


def median_time(work, runs=201) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url")
    parser.add_argument("--picks", type=int, default=100_000)
    args = parse_arguments(parser, picks=1_000)
    print(f"commit {commit()}; {machine()}")
    with tempfile.TemporaryDirectory() as folder:
        url = args.database_url or f"sqlite:///{Path(folder) / 'bench.db'}"
        settings = {
            "DATABASE_URL": url,
            "JWT_SECRET_KEY": "bench-" + "k" * 40,
            "LEDGER_SIGNING_KEY": notes.generate("bench.example/ledger").encode(),
            "LOG_LEVEL": "WARNING",
            "DATABASE_STATEMENT_TIMEOUT": 0,
        }
        app = create_app(settings)
        with app.app_context():
            print(f"database: {db.obj.__class__.__name__}")
            drop_tables()
            create_tables()
            bench_settlement(app.config, args.picks)
            drop_tables()
    if args.smoke:
        bench_verification(SMOKE_SIZES, SMOKE_RUNS)
    else:
        bench_verification()


if __name__ == "__main__":
    main()
