"""The prediction page in a real headless Chromium: its DOM, its JSON-LD, and team names that are
markup rendered as text, never run."""

import json
import os
import shutil
import subprocess
from datetime import timedelta
from html.parser import HTMLParser

import pytest

from clock import utcnow
from models import Match
from services import predictions
from tests import factories
from tests.servers import gunicorn

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: CI installs Chromium and sets this, so the test cannot be skipped there by accident.
REQUIRED = os.environ.get("REQUIRE_CHROMIUM") == "1"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM and not REQUIRED, reason="Chromium is not installed"),
]

EVIL_HOME = "<script>alert(1)</script>"
EVIL_AWAY = "</script><script>document.title='pwned'</script>"


class Page(HTMLParser):
    """What the test reads from a DOM: title, links, meta tags, scripts and visible text."""

    def __init__(self):
        super().__init__()
        self.title, self.links, self.meta, self.scripts, self.text = "", {}, {}, [], []
        self._in = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "link":
            self.links[attrs.get("rel")] = attrs.get("href")
        elif tag == "meta":
            self.meta[attrs.get("name") or attrs.get("property")] = attrs.get("content")
        elif tag == "script":
            self.scripts.append({"type": attrs.get("type"), "body": ""})
        self._in = tag

    def handle_endtag(self, tag):
        self._in = None

    def handle_data(self, data):
        if self._in == "title":
            self.title += data
        elif self._in == "script":
            self.scripts[-1]["body"] += data
        elif self._in != "style":
            self.text.append(data)


def dump_dom(url: str, profile, console=None) -> str:
    """The DOM of ``url`` after Chromium has loaded it (and run whatever it would run); the
    browser's console lines are appended to ``console`` when given."""
    if not CHROMIUM:
        pytest.fail("REQUIRE_CHROMIUM=1 but Chromium is not installed")
    done = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            "--virtual-time-budget=2000",
            *(["--enable-logging=stderr"] if console is not None else []),
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    if console is not None:
        console.extend(line for line in done.stderr.splitlines() if "CONSOLE" in line)
    return done.stdout


def test_the_page_in_a_browser_is_whole_and_inert(app, tmp_path):
    with app.app_context():
        now = utcnow()
        for day in range(12, 0, -1):
            factories.match("Rovers", "United", kickoff=now - timedelta(days=7 * day))
        match = factories.match(
            EVIL_HOME, EVIL_AWAY, status="scheduled", kickoff=now + timedelta(days=3)
        )
        predictions.backfill(factories.settings(), now=now)
        slug = Match.get_by_id(match.id).slug
    with gunicorn(app) as (base, _):
        url = f"{base}/api/v1/seo/predictions/{slug}"
        page = Page()
        page.feed(dump_dom(url, tmp_path / "profile"))
    assert page.title != "pwned"  # the away team's script never ran
    assert page.title.startswith(f"{EVIL_HOME} vs {EVIL_AWAY} prediction")
    assert page.links["canonical"] == url
    assert page.meta["og:url"] == url and page.meta["description"].startswith(EVIL_HOME)
    # One script element, the JSON-LD data block: the names did not become elements.
    assert [script["type"] for script in page.scripts] == ["application/ld+json"]
    event = json.loads(page.scripts[0]["body"])
    assert event["@type"] == "SportsEvent" and event["url"] == url
    assert event["homeTeam"] == {"@type": "SportsTeam", "name": EVIL_HOME}
    assert event["awayTeam"] == {"@type": "SportsTeam", "name": EVIL_AWAY}
    text = " ".join(page.text)
    assert f"{EVIL_HOME} vs {EVIL_AWAY}" in text  # shown as text
    assert "%" in text and "Prediction" in text


def test_the_docs_render_in_a_browser_under_their_policy(app, tmp_path):
    """Swagger UI, from the service's own files, runs under the page's Content-Security-Policy
    and lists the operations of /openapi.json (a blocked script would leave an empty page)."""
    console = []
    with gunicorn(app) as (base, _):
        dom = dump_dom(f"{base}/docs", tmp_path / "profile", console)
    assert not [line for line in console if "Content Security Policy" in line], console
    assert 'class="swagger-ui' in dom
    assert "opblock-summary-path" in dom and "/api/auth/login" in dom
