"""Every benchmark once in its smoke mode, one after another, so one that no longer runs fails CI.

    .venv/bin/python -m bench.smoke [NAME ...] [--timeout S]

Runs ``python -m bench.<name> --smoke`` for every module of ``bench/`` (or the NAMEs given), each
in a process group of its own, and prints its output, then its name and time; stops with the
failing one's exit status at the first that fails, or that runs longer than ``--timeout``. A
benchmark that cannot run here (no football-data set) says so and counts as skipped. ``make
bench-smoke`` runs this.
"""

import argparse
import os
import signal
import subprocess
import sys
import threading
import time

from bench.common import ROOT, SKIPPED, stop_on_sigterm

#: Modules of bench/ that are not benchmarks.
NOT_BENCHMARKS = {"__init__", "__main__", "common", "rating_rule", "serving", "smoke"}
TIMEOUT = 300  # seconds one smoke run may take (every one takes well under a minute)
GRACE = 30  # seconds a stopped run has to stop its own servers before it is killed


def benchmarks() -> list[str]:
    """The benchmark modules' names, in order."""
    return sorted(
        path.stem for path in (ROOT / "bench").glob("*.py") if path.stem not in NOT_BENCHMARKS
    )


def stop(process) -> None:
    """Stop a run's process group: SIGTERM first (each benchmark stops its servers then), then
    SIGKILL."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=GRACE)
    except ProcessLookupError:  # the group is gone already
        pass
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def run(name: str, timeout: float) -> tuple[str, int, float]:
    """``(outcome, exit status, seconds)`` of one smoke run, its output printed as it comes;
    the outcome is "ran", "skipped", "failed" or "timed out"."""
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", f"bench.{name}", "--smoke"],
        cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its group is stopped as one, whatever it started
    )
    expired = threading.Event()

    def expire():
        expired.set()
        stop(process)

    timer = threading.Timer(timeout, expire)
    timer.start()
    skipped = False
    try:
        for line in process.stdout:
            skipped = skipped or line.startswith(SKIPPED)
            print(line, end="", flush=True)
        status = process.wait()
    finally:
        timer.cancel()
        stop(process)
    seconds = time.monotonic() - started
    if expired.is_set():
        return "timed out", status or 1, seconds
    if status:
        return "failed", status, seconds
    return ("skipped" if skipped else "ran"), 0, seconds


def main():
    """Run the smoke runs one after another; exit with the first failure's status."""
    names = benchmarks()
    parser = argparse.ArgumentParser(
        prog="python -m bench.smoke", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"of {', '.join(names)}")
    parser.add_argument("--timeout", type=float, default=TIMEOUT, help="seconds per benchmark")
    args = parser.parse_args()
    if unknown := sorted(set(args.names) - set(names)):
        parser.error(f"no such benchmark: {', '.join(unknown)} (there are {', '.join(names)})")
    signal.signal(signal.SIGTERM, stop_on_sigterm)
    started = time.monotonic()
    done = []
    for name in args.names or names:
        print(f"== bench.{name} --smoke", flush=True)
        outcome, status, seconds = run(name, args.timeout)
        print(f"== bench.{name}: {outcome} in {seconds:.1f} s", flush=True)
        if status:
            sys.exit(status)
        done.append(f"{name} {seconds:.1f} s{' (skipped)' if outcome == 'skipped' else ''}")
    print(f"smoke runs in {time.monotonic() - started:.0f} s: {', '.join(done)}")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
