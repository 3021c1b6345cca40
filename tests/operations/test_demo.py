"""The demo world as ``make run`` builds it, at a fixed instant: every feature shows on the day it
is built, a second ``make run`` keeps it (same ids), and the API guide's example flow runs line by
line against gunicorn serving it. Built once for the module, on an SQLite file."""

import json
import os
import re
import shlex
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from app import create_app
from engine.demo import football
from models import League, LedgerCheckpoint, LedgerEntry, Match, Pick
from services.operations import demo_world
from tests.helpers import settings
from tests.servers import ROOT, gunicorn

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        bool(os.environ.get("TEST_DATABASE_URL")),
        reason="runs on its own SQLite file: the SQLite run of the suite covers it",
    ),
]

#: The instant the world is built at: an evening, so today has finished and upcoming matches.
NOW = datetime(2026, 11, 24, 21, 45, tzinfo=UTC)
#: The document holding the block that the flow test runs, marked by this comment just before it.
FLOW_DOCUMENT = ROOT / "docs" / "api-guide.md"
FLOW_MARK = "<!-- example-flow:"


def setup_commands() -> list[list[str]]:
    """The ``$(FLASK)`` commands ``make run`` runs before serving, read from the Makefile: their
    arguments after ``flask --app app``."""
    makefile = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^run:.*\n((?:\t.*\n)+)", makefile, re.MULTILINE).group(1)
    return [
        shlex.split(line.strip())[1:]
        for line in recipe.splitlines()
        if line.strip().startswith("$(FLASK)")
    ]


def run_setup(app) -> list[str]:
    """``make run``'s setup through the app's CLI (so its clock): each command's output."""
    outputs = []
    for args in setup_commands():
        result = app.test_cli_runner().invoke(args=args)
        assert result.exit_code == 0, result.output
        outputs.append(result.output)
    return outputs


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    folder = tmp_path_factory.mktemp("demo")
    app = create_app(
        settings(
            folder,
            DATABASE_URL=f"sqlite:///{folder / 'demo.db'}",  # the example flow's temp SQLite file
            RATELIMIT_STORAGE_URI="memory://",
            RATELIMIT_PUBLIC="100000 per minute",
            CLOCK=lambda: NOW,
        )
    )
    app.setup_output = run_setup(app)
    with app.app_context():
        yield app


def ids():
    """Every match's id and slug, and every pick's id and match: what links and examples use."""
    return (
        sorted(Match.select(Match.id, Match.slug).tuples()),
        sorted(Pick.select(Pick.id, Pick.match).tuples()),
    )


def test_the_demo_is_built_at_the_clock_instant_and_only_invented_leagues(world):
    assert "demo world at 2026-11-24 21:45 UTC" in world.setup_output[-1]
    assert {league.code for league in League.select()} == set(football.LEAGUES)
    countries = {league.country for league in League.select()}
    assert countries == {"Northland", "Southland", "International"}


def test_matches_today_and_on_each_of_the_next_days(world):
    days = {kickoff.date() for (kickoff,) in Match.select(Match.kickoff_at).tuples()}
    for ahead in range(8):
        assert NOW.date() + timedelta(days=ahead) in days
    finished_today = Match.select().where(
        (Match.kickoff_at >= NOW.replace(hour=0, minute=0)) & (Match.status == "finished")
    )
    assert finished_today.count() > 0


def test_upcoming_picks_of_every_rating_made_live(world):
    upcoming = Pick.select(Pick.rating, Pick.is_live, Pick.status).join(Match)
    upcoming = upcoming.where(Match.kickoff_at > NOW)
    assert {rating for rating, _, _ in upcoming.tuples()} == {"A", "B", "C"}
    assert all(live and status == "pending" for _, live, status in upcoming.tuples())


def test_settled_live_picks_a_ledger_and_a_live_track_record(world, client):
    settled = Pick.select().where(Pick.is_live & Pick.status.in_(("won", "lost")))
    assert settled.count() >= 20
    for pick in settled.join(Match).select(Pick.created_at, Match.kickoff_at).objects():
        assert pick.created_at < pick.kickoff_at  # made at their time, before kick-off
    assert LedgerEntry.select().count() > settled.count()
    assert LedgerCheckpoint.select().count() >= demo_world.LIVE_DAYS
    latest = client.get("/api/track-record/ledger").get_json()
    assert latest["publishedAt"] == "2026-11-24T21:45:00Z"
    record = client.get("/api/track-record/by-competition-type?isLive=true").get_json()
    assert sum(item["won"] + item["lost"] for item in record["items"]) == settled.count()
    backfilled = client.get("/api/track-record/by-competition-type?isLive=false").get_json()
    assert sum(item["picks"] for item in backfilled["items"]) > 1000


@pytest.fixture
def client(world):
    return world.test_client()


def test_a_second_make_run_keeps_the_world_and_its_ids(world):
    before = ids()
    outputs = run_setup(world)
    assert "demo world kept" in outputs[-1]
    assert ids() == before


def example_flow() -> list[str]:
    """The commands of the API guide's marked block, continuation lines joined, comments left."""
    text = FLOW_DOCUMENT.read_text()
    block = text[text.index(FLOW_MARK) :]
    block = block[block.index("```sh\n") + 6 :]
    block = block[: block.index("```")]
    commands, pending = [], ""
    for line in block.splitlines():
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        if line.strip() and not line.lstrip().startswith("#"):
            commands.append(line)
    return commands


def test_the_example_flow_runs_line_by_line_after_a_second_make_run(world):
    before = ids()
    run_setup(world)  # a second ``make run`` on the same database
    assert ids() == before
    commands = example_flow()
    assert len(commands) >= 10
    venv = f"{Path(sys.executable).parent}/"
    with gunicorn(
        world,
        target="tests.frozen_wsgi:app",
        FROZEN_NOW=NOW.isoformat(),
        RATELIMIT_STORAGE_URI="memory://",
    ) as (base, env):
        script = ["set -euo pipefail"]
        for number, command in enumerate(commands):
            command = command.replace("http://127.0.0.1:8000", base).replace(".venv/bin/", venv)
            script += [command, f"printf '\\n::done {number}\\n'"]
        result = subprocess.run(
            ["bash", "-c", "\n".join(script)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    outputs = re.split(r"\n::done \d+\n", result.stdout)
    done = len(outputs) - 1
    assert result.returncode == 0, (
        f"failed at: {commands[done]}\n{outputs[-1]}\n{result.stderr[-3000:]}"
    )
    answers = {}
    for command, output in zip(commands, outputs, strict=False):
        if "json.tool" in command:
            body = json.loads(output)
            assert not (isinstance(body, dict) and "type" in body and "status" in body), (
                command,
                body,
            )
            answers[command] = body
    rated_a = [body for command, body in answers.items() if "rating=A" in command]
    anonymous, pro = rated_a
    assert any(pick["locked"] for pick in anonymous["items"])
    assert anonymous["date"] == pro["date"] >= NOW.date().isoformat()
    assert all(not pick["locked"] and pick["selection"] for pick in pro["items"])
    assert ids() == before
