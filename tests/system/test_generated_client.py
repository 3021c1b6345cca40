"""A client generated from the live /openapi.json by openapi-python-client drives the API guide's
flow against a real gunicorn on a temporary SQLite file, typed: what an integrator gets.

Skipped when the generator is not installed, unless ``REQUIRE_CLIENT_GENERATOR`` is set (CI
installs it and sets it, so there it must run).
"""

import csv
import importlib
import io
import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from clock import utcnow
from tests import factories
from tests.servers import flask, gunicorn

GENERATOR = Path(sys.executable).parent / "openapi-python-client"
PACKAGE = "spc_client"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not GENERATOR.exists() and not os.environ.get("REQUIRE_CLIENT_GENERATOR"),
        reason="openapi-python-client is not installed (CI installs it)",
    ),
    pytest.mark.skipif(
        bool(os.environ.get("TEST_DATABASE_URL")),
        reason="runs on its own SQLite file: the SQLite run of the suite covers it",
    ),
]


def generate(base: str, folder: Path):
    """The client package generated from ``base``'s live description, imported."""
    config = folder / "generator.yaml"
    # The generator knows JSON, text and bytes, not XML: the sitemap is read as the text it is.
    config.write_text(
        f"package_name_override: {PACKAGE}\npost_hooks: []\n"
        "content_type_overrides:\n  application/xml: text/plain\n"
    )
    done = subprocess.run(
        [
            str(GENERATOR),
            "generate",
            "--url",
            f"{base}/openapi.json",
            "--meta",
            "none",
            "--output-path",
            str(folder / PACKAGE),
            "--config",
            str(config),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # The generator warns about what it could not type; the description must leave it nothing.
    assert "Warning" not in done.stdout + done.stderr, done.stdout + done.stderr
    sys.path.insert(0, str(folder))
    try:
        return importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(folder))


@pytest.fixture
def world(make_app, tmp_path):
    """An app on a temporary SQLite file: three upcoming matches, one with a pick."""
    app = make_app(DATABASE_URL=f"sqlite:///{tmp_path / 'client.db'}")
    kickoff = (utcnow() + timedelta(days=2)).replace(hour=15, minute=0, second=0, microsecond=0)
    odds = [
        ("bet365", "1x2", "home", 2.1, False),
        ("bet365", "1x2", "draw", 3.4, False),
        ("bet365", "1x2", "away", 3.6, False),
    ]
    with app.app_context():
        matches = [
            factories.match(home, away, kickoff=kickoff, status="scheduled", odds=odds)
            for home, away in (("Rovers", "United"), ("Athletic", "City"), ("Wanderers", "Town"))
        ]
        factories.pick(matches[0], probability=0.52, edge=0.092)
    return app, matches[0].id, kickoff


def test_the_example_flow_through_a_generated_client(world, tmp_path):
    app, match_id, kickoff = world
    with gunicorn(app) as (base, env):
        spc = generate(base, tmp_path)
        from spc_client import models
        from spc_client.api.auth import log_in, register

        credentials = {"email": "fan@example.com", "password": "a-long-password"}
        with spc.Client(base_url=base, raise_on_unexpected_status=True) as anonymous:
            session = register.sync(client=anonymous, body=models.Register(**credentials))
            assert isinstance(session, models.Session)
            assert session.user.email == "fan@example.com"
            session = log_in.sync(client=anonymous, body=models.Login(**credentials))
        assert isinstance(session, models.Session)
        with spc.AuthenticatedClient(
            base_url=base, token=session.access_token, raise_on_unexpected_status=True
        ) as fan:
            example_flow(models, fan, env, match_id, kickoff)
        for name in [name for name in sys.modules if name.split(".")[0] == PACKAGE]:
            del sys.modules[name]


def example_flow(models, fan, env, match_id, kickoff):
    """The API guide's calls, one by one, each answer a typed model (or text for an export)."""
    from spc_client.api.backtest import run_backtest
    from spc_client.api.data import create_export, get_usage, list_data_matches
    from spc_client.api.picks import get_match, list_today_picks
    from spc_client.api.track_record import get_ledger_checkpoint

    picks = list_today_picks.sync(
        client=fan,
        date=kickoff.date().isoformat(),
        market=[models.ListTodayPicksMarketItem.ONE_X_TWO],
    )
    assert isinstance(picks, models.PicksOfDay) and len(picks.items) == 1
    match = get_match.sync(match_id, client=fan)
    assert isinstance(match, models.MatchCard) and match.id == match_id
    backtest = run_backtest.sync(
        client=fan,
        body=models.BacktestRequest(rating=[models.BacktestRequestRatingType0Item.A]),
    )
    assert isinstance(backtest, models.Backtest) and backtest.params.rating == "A"

    # The Data API needs plan pro: a 403 problem, typed, until an operator upgrades.
    refused = get_usage.sync(client=fan)
    assert isinstance(refused, models.Problem) and refused.status == 403
    upgraded = flask(env, "users", "update", "fan@example.com", "--plan", "pro")
    assert upgraded.returncode == 0, upgraded.stderr

    first = list_data_matches.sync(client=fan, limit=2)
    assert isinstance(first, models.MatchesPage) and len(first.items) == 2
    assert isinstance(first.next_cursor, str)
    second = list_data_matches.sync(client=fan, limit=2, cursor=first.next_cursor)
    assert isinstance(second, models.MatchesPage) and len(second.items) == 1
    assert second.next_cursor is None
    assert len({item.id for item in first.items + second.items}) == 3

    odds_csv = create_export.sync(
        client=fan,
        body=models.ExportRequest(
            resource=models.ExportRequestResource.ODDS,
            format_=models.ExportRequestFormat.CSV,
        ),
    )
    assert isinstance(odds_csv, str)
    rows = list(csv.DictReader(io.StringIO(odds_csv)))
    assert len(rows) == 9 and {row["market"] for row in rows} == {"1x2"}
    picks_ndjson = create_export.sync(
        client=fan,
        body=models.ExportRequest(
            resource=models.ExportRequestResource.PICKS,
            format_=models.ExportRequestFormat.NDJSON,
        ),
    )
    assert isinstance(picks_ndjson, str)
    (pick,) = [json.loads(line) for line in picks_ndjson.splitlines()]
    assert pick["matchId"] == match_id and pick["edge"] == 0.092

    usage = get_usage.sync(client=fan)
    assert isinstance(usage, models.Usage) and usage.exports.used == 2
    assert usage.export_rows.used == 10

    ledger = get_ledger_checkpoint.sync(client=fan)
    assert isinstance(ledger, models.LedgerHead) and ledger.origin
