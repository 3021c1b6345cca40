"""Today's figures of the test suite, measured and written into docs/testing.md.

    python -m tools.test_figures                 # time the fast loop (make test-fast), print
    python -m tools.test_figures --write         # ... and write the figures into docs/testing.md
    python -m tools.test_figures --ci-log FILE   # add a CI run's figures, read from its log

The fast loop is timed here, on this machine. A CI run's figures (the suite on SQLite, on
PostgreSQL with Redis, each phase and the whole) are read from the log `.ci/run` printed, since a
run takes the better part of a quarter of an hour. What is written replaces the block between
the two markers in docs/testing.md, with the commit and the machine they were measured on (as
the benches name them: ``bench.common``); the rest of the document is left as it is.
"""

import argparse
import re
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from bench.common import commit, machine

ROOT = Path(__file__).resolve().parents[1]
DOCUMENT = ROOT / "docs" / "testing.md"
START, END = "<!-- figures: written by tools/test_figures.py -->", "<!-- /figures -->"
#: What `make test-fast` runs: the tests not marked slow, on every core.
FAST = ["-m", "pytest", "-m", "not slow", "-q", "-p", "no:cacheprovider", "-n", "auto"]

#: pytest's last line: "2378 passed, 16 skipped, 343 deselected in 179.34s (0:02:59)".
SUMMARY = re.compile(r"^=*\s*(?P<counts>\d+ passed.*?) in (?P<seconds>[\d.]+)s")
#: .ci/run's phase lines: "-- suites and static checks: 612 s (CI at 790 s)".
PHASE = re.compile(r"^-- (?P<phase>.+?): (?P<seconds>\d+) s \(CI at \d+ s\)$")
PASSED = re.compile(r"^CI passed in (?P<seconds>\d+) s$")
COMMIT = re.compile(r"^== commit (?P<commit>\S+)$")
#: .ci/run's job titles, each followed by that job's log.
JOBS = {
    "== suite on SQLite": "the suite on SQLite, in-memory rate limits",
    "== suite on PostgreSQL": "the suite on PostgreSQL with Redis",
}


def counts(text: str) -> tuple[str, float] | None:
    """pytest's counts and its own seconds, from the last summary line in ``text``."""
    found = None
    for line in text.splitlines():
        match = SUMMARY.match(line.strip())
        if match:
            found = (match["counts"], float(match["seconds"]))
    return found


def fast_loop() -> tuple[str, float]:
    """Run the fast loop once; its counts and wall-clock seconds."""
    started = time.monotonic()
    run = subprocess.run(
        [sys.executable, *FAST], cwd=ROOT, capture_output=True, text=True, check=False
    )
    seconds = time.monotonic() - started
    found = counts(run.stdout)
    if run.returncode != 0 or found is None:
        sys.stdout.write(run.stdout[-4000:])
        raise SystemExit(f"the fast loop failed (exit {run.returncode}); nothing written")
    return found[0], seconds


def ci_figures(log: str) -> list[str]:
    """The lines of a CI run's figures, read from its log: each suite, each phase, the whole."""
    header, items, job = "- a CI run (`.ci/run` on a clean clone):", [], None
    for line in log.splitlines():
        run_of = COMMIT.match(line)
        if run_of:
            header = f"- a CI run (`.ci/run` on a clean clone) at commit `{run_of['commit']}`:"
        for title, name in JOBS.items():
            if line.startswith(title):
                job = name
        found = SUMMARY.match(line.strip())
        if job and found:
            items.append(f"  - {job}: {found['counts']} in {float(found['seconds']):.0f} s")
            job = None
        phase = PHASE.match(line)
        if phase:
            items.append(f"  - phase \u201c{phase['phase']}\u201d: {phase['seconds']} s")
        passed = PASSED.match(line)
        if passed:
            seconds = int(passed["seconds"])
            items.append(f"  - **the whole run: {seconds} s** ({seconds / 60:.1f} min)")
    if not any("the whole run" in item for item in items):
        raise SystemExit("the log holds no passed CI run (no 'CI passed in N s' line)")
    return [header, *items]


def block(fast, ci_lines, previous_ci: list[str]) -> str:
    counted, seconds = fast
    today = datetime.now(UTC).date().isoformat()
    lines = [
        START,
        f"Measured on {today} at commit `{commit()}`, on {machine()}:",
        "",
        f"- **`make test-fast`: {seconds:.0f} s** ({counted}); the goal is under 180 s",
    ]
    lines += ci_lines or previous_ci
    lines.append(END)
    return "\n".join(lines)


def written(document: str, new_block: str) -> str:
    if START not in document or END not in document:
        raise SystemExit(f"{DOCUMENT} lacks the markers {START} … {END}")
    head, rest = document.split(START, 1)
    _, tail = rest.split(END, 1)
    return head + new_block + tail


def previous_ci_lines(document: str) -> list[str]:
    """The CI figures the block holds now, kept when no new log is given."""
    if START not in document or END not in document:
        return []
    inside = document.split(START, 1)[1].split(END, 1)[0]
    kept = inside.splitlines()[1:]  # the first line is the one saying when and where
    return [line for line in kept if line.lstrip().startswith("- ") and "test-fast" not in line]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="write the figures into the doc")
    parser.add_argument("--ci-log", type=Path, help="a log .ci/run printed, read for its figures")
    args = parser.parse_args(argv)
    document = DOCUMENT.read_text(encoding="utf-8")
    ci_lines = ci_figures(args.ci_log.read_text(encoding="utf-8")) if args.ci_log else []
    new_block = block(fast_loop(), ci_lines, previous_ci_lines(document))
    print(new_block)
    if args.write:
        DOCUMENT.write_text(written(document, new_block), encoding="utf-8")
        print(f"written into {DOCUMENT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
