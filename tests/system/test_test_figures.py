"""The suite's figures in docs/testing.md are written by tools/test_figures.py, from a timed run
and from a CI run's log: the parsing of both, and the block replaced with nothing else touched."""

from pathlib import Path

import pytest

from tests.verifier import load_tool

ROOT = Path(__file__).resolve().parents[2]
figures = load_tool("test_figures", ROOT / "tools" / "test_figures.py")

LOG = """\
== commit 1a2b3c4
-- installs: 95 s (CI at 95 s)
== the suite on SQLite and on PostgreSQL + Redis side by side, the static checks beside them
== static checks: requirements, lint, links, OpenAPI lint (exit 0)
All checks passed!
== suite on SQLite, in-memory rate limits (exit 0)
........ [100%]
2721 passed, 19 skipped in 501.20s (0:08:21)
== suite on PostgreSQL, Redis rate limits (exit 0)
........ [100%]
========= 2733 passed, 7 skipped in 640.75s (0:10:40) =========
-- suites and static checks: 652 s (CI at 747 s)
-- benches and conformance: 170 s (CI at 917 s)
-- Lighthouse: 60 s (CI at 977 s)
CI passed in 977 s
"""


def test_a_ci_log_gives_each_suite_each_phase_and_the_whole():
    assert figures.ci_figures(LOG) == [
        "- a CI run (`.ci/run` on a clean clone) at commit `1a2b3c4`:",
        "  - phase \u201cinstalls\u201d: 95 s",
        "  - the suite on SQLite, in-memory rate limits: 2721 passed, 19 skipped in 501 s",
        "  - the suite on PostgreSQL with Redis: 2733 passed, 7 skipped in 641 s",
        "  - phase \u201csuites and static checks\u201d: 652 s",
        "  - phase \u201cbenches and conformance\u201d: 170 s",
        "  - phase \u201cLighthouse\u201d: 60 s",
        "  - **the whole run: 977 s** (16.3 min)",
    ]


def test_a_log_of_a_failed_run_is_refused():
    with pytest.raises(SystemExit, match="no passed CI run"):
        figures.ci_figures(LOG.replace("CI passed in 977 s", "failed: sqlite"))


def test_the_block_is_replaced_and_nothing_else():
    document = f"# Testing\n\nbefore\n\n{figures.START}\nold\n{figures.END}\n\nafter\n"
    new = f"{figures.START}\nnew\n{figures.END}"
    assert figures.written(document, new) == f"# Testing\n\nbefore\n\n{new}\n\nafter\n"
    with pytest.raises(SystemExit, match="lacks the markers"):
        figures.written("# Testing\n", new)


def test_the_ci_figures_are_kept_when_only_the_fast_loop_is_measured_again():
    inside = "\n".join(
        ["Measured on …:", "", "- **`make test-fast`: 170 s**", *figures.ci_figures(LOG)]
    )
    document = f"{figures.START}\n{inside}\n{figures.END}"
    assert figures.previous_ci_lines(document) == figures.ci_figures(LOG)


def test_the_document_holds_the_block_the_tool_writes():
    """The markers the tool writes between, and inside them only what it writes: a line saying
    when, at which commit and on which machine, then the figures."""
    document = (ROOT / "docs" / "testing.md").read_text(encoding="utf-8")
    assert document.count(figures.START) == 1 and document.count(figures.END) == 1
    inside = document.split(figures.START, 1)[1].split(figures.END, 1)[0].strip()
    if inside:  # empty until the tool first writes it (it refuses to while a test fails)
        first, *rest = inside.splitlines()
        assert first.startswith("Measured on ") and " at commit `" in first, first
        assert all(line.lstrip().startswith("- ") for line in rest if line), rest
