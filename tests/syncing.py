"""What the tests of a sync share: an app on the local sources, a sync run as the Operations API
runs it, its report of one source, and The Odds API's events made from football-data's fixture
file (the fixtures ``football_data`` and ``waits`` are in ``conftest.py``)."""

from services.feeds.formats import footballdata
from services.feeds.sources import http
from services.operations import jobs
from tests import sync_world
from tests.source_servers import http_date, odds_api_event

#: The Odds API key the tests' server takes.
KEY = "k" * 32


class Waits:
    """A policy's sleep: records what it was asked to wait, never waits (a frozen clock)."""

    def __init__(self):
        self.asked = []

    def __call__(self, seconds):
        self.asked.append(seconds)


def sync_app(make_app, server=None, odds=None, **overrides):
    """An app syncing the Premier League 2023/24 from ``server`` (football-data) and ``odds``
    (The Odds API), each where given."""
    settings = {"FOOTBALL_DATA_LEAGUES": "E0", "FOOTBALL_DATA_SEASONS": "2324", **overrides}
    if server is not None:
        settings["FOOTBALL_DATA_URL"] = server.base
    if odds is not None:
        settings |= {
            "ODDS_API_URL": odds.base,
            "ODDS_API_KEY": KEY,
            "ODDS_API_SPORTS": "soccer_epl:E0",
            "ODDS_API_REGIONS": "uk",
        }
    return make_app(**settings)


def serve(server, files, now):
    """Put ``files`` (path → bytes) on the football-data server, modified at ``now``."""
    for path, body in files.items():
        server.put(path, body, http_date(now))


def run_sync(app, now, waits, source=None):
    """One sync as the Operations API runs it: (operation record, its result)."""
    operation = jobs.data_sync(
        source, app.config, now=now, policy=http.Policy.from_settings(app.config, sleep=waits)
    )
    assert operation["status"] == "succeeded", operation["error"]
    return operation, jobs.result(operation["id"], app.config, now)[1]


def sync_result(app, now, source=None):
    """One sync as the Operations API runs it, its policy never waiting: its result."""
    return run_sync(app, now, Waits(), source)[1]


def source_report(result, source="football-data"):
    """A sync result's report of ``source``."""
    return next(report for report in result["sources"] if report["source"] == source)


def odds_events(friday_files, renamed=None):
    """The Odds API's events of the fixture file in ``friday_files``, teams named as
    ``renamed`` maps them."""
    parsed = footballdata.parse(friday_files[sync_world.FIXTURES].decode())
    return [odds_api_event(match, renamed) for match in parsed.matches]
