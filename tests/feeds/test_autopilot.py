"""A few days of the month on autopilot (``tests.month``): two web processes and two workers on
one database, football-data and The Odds API served locally on the clock the test advances,
every planned event met once (a moved kick-off, a postponement, a cancellation, a renamed team,
a source down, a 429, a 502, a timeout, a contradicting score, a corrected result), then every
end-of-month rule checked. ``python -m bench.autopilot`` plays the whole month."""

import os
from datetime import timedelta

import pytest

from tests import autopilot, month
from tests.data import needs_football_data
from tests.month_clock import FileClock

pytestmark = [needs_football_data, pytest.mark.slow]

#: Monday noon to Thursday noon: the midweek round's first two days (2-3 April 2024), a fixture
#: file and a season file published, every planned event and incident.
DAYS = 3


def test_a_few_days_on_autopilot_keep_every_rule(make_app, tmp_path):
    clock = FileClock(tmp_path / "clock.txt")
    clock.set(month.START)
    app = make_app(CLOCK=clock, LOG_LEVEL="WARNING")
    storage = os.environ.get("RATELIMIT_STORAGE_URI", "")
    queue = storage if storage.startswith("redis://") else None
    played = autopilot.Month(
        app,
        clock,
        tmp_path,
        month.Plan(days=DAYS),
        regular=timedelta(hours=3),
        near=timedelta(hours=1),
        say=lambda line: None,
        queue_url=queue,
    )
    played.run()
    checks = played.checks()
    figures = played.figures()
    print(autopilot.summary(figures, checks))
    assert figures["syncs"] >= len(played.steps) - 1 and figures["live_picks"] > 0
    assert figures["incidents"] == len(played.plan.incidents)  # each event was met
    broken = {rule: problems for rule, problems in checks.items() if problems}
    assert not broken, autopilot.summary(figures, checks)
