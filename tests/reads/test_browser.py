"""The prediction page in a real headless Chromium: its DOM, its JSON-LD, and team names that are
markup rendered as text, never run."""

import json
import os
import shutil
import subprocess
from datetime import timedelta
from html.parser import HTMLParser
from pathlib import Path

import pytest

from clock import utcnow
from models import Match
from services.forecasting import predictions
from tests import factories, world
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
    assert "%" in text and "Match result" in text


def test_the_docs_render_in_a_browser_under_their_policy(app, tmp_path):
    """Swagger UI, from the service's own files, runs under the page's Content-Security-Policy
    and lists the operations of /openapi.json (a blocked script would leave an empty page)."""
    console = []
    with gunicorn(app) as (base, _):
        dom = dump_dom(f"{base}/docs", tmp_path / "profile", console)
    assert not [line for line in console if "Content Security Policy" in line], console
    assert 'class="swagger-ui' in dom
    assert "opblock-summary-path" in dom and "/api/auth/login" in dom


# The public pages, rendered by Chromium through Playwright (its Python package driving the
# system's Chromium: no browser is downloaded).

SCREENSHOTS = Path(__file__).resolve().parents[2] / "screenshots"
WIDTHS = (1280, 390)
#: Each width's screen height: a desktop's, and a phone's (390 × 844, a common phone's CSS px).
HEIGHTS = {1280: 900, 390: 844}
#: The smallest chart text a reader must be able to read, at either width (CSS px).
MIN_TEXT_PX = 12

#: Read from the rendered DOM: each bar's filled width against its share of the track, and
#: each chart's marks against the rows of its table.
MEASURE = """() => {
  const bars = [];
  for (const svg of document.querySelectorAll('svg.bar')) {
    const track = svg.getBoundingClientRect().width;
    for (const rect of svg.querySelectorAll('rect.fill')) {
      bars.push({track, width: rect.getBoundingClientRect().width,
                 share: parseFloat(rect.dataset.share)});
    }
  }
  const charts = [];
  for (const figure of document.querySelectorAll('figure.chart')) {
    const svg = figure.querySelector('svg');
    let marks = svg.querySelectorAll('rect.mark, circle.mark').length;
    for (const line of svg.querySelectorAll('polyline.mark')) marks += line.points.numberOfItems;
    charts.push({title: svg.querySelector('title').textContent, marks,
                 declared: parseInt(svg.dataset.marks),
                 rows: figure.querySelectorAll('table tbody tr').length});
  }
  // Each chart text's size as drawn: its font size scaled by the SVG's viewBox.
  const texts = [...document.querySelectorAll('figure.chart svg text')].map((t) => ({
    text: t.textContent,
    size: parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a,
  }));
  const wide = [...document.querySelectorAll('body *')]
    .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1)
    .map((e) => e.tagName + '.' + e.className);
  // The lines a node's text takes (the distinct bottoms of its text's boxes).
  const lines = (node) => {
    const bottoms = new Set();
    const walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
      if (!walker.currentNode.textContent.trim()) continue;
      const range = document.createRange();
      range.selectNodeContents(walker.currentNode);
      for (const r of range.getClientRects()) bottoms.add(Math.round(r.bottom));
    }
    return bottoms.size;
  };
  const nav = document.querySelector('header.site nav');
  const nowrap = [...document.querySelectorAll('.nowrap')].map((e) => ({
    text: e.textContent, lines: lines(e)}));
  const happened = [...document.querySelectorAll('tr.happened th')].map((e) => e.textContent);
  const days = [...document.querySelectorAll('.grid > section')].map((e) => {
    const box = e.getBoundingClientRect();
    return {left: Math.round(box.left), top: Math.round(box.top)};
  });
  const score = document.querySelector('.score strong');
  // The first match (a slate's first row, a prediction page's first market) and where it ends.
  const first = document.querySelector('table.slate tbody tr')
    || document.querySelector('main section h2');
  const links = [...nav.querySelectorAll('a')].filter((a) => a.getBoundingClientRect().width > 0)
    .map((a) => a.textContent.trim());
  return {bars, charts, texts, width: document.documentElement.scrollWidth, wide,
          navLines: lines(nav), nowrap, happened, days, links,
          firstBottom: first && first.getBoundingClientRect().bottom, fold: window.innerHeight,
          main: document.querySelector('main').getBoundingClientRect().width,
          score: score && parseFloat(getComputedStyle(score).fontSize)};
}"""


@pytest.fixture
def public_pages(app):
    """The small world of tests/world.py around the current hour (the server runs on the real
    clock), and the paths of the pages to read."""
    with app.app_context():
        slugs = world.build(utcnow().replace(minute=0, second=0, microsecond=0))
    return {
        "landing": "/",
        "prediction-settled": f"/api/v1/seo/predictions/{slugs['settled']}",
        "prediction-locked": f"/api/v1/seo/predictions/{slugs['locked']}",
        "prediction-open": f"/api/v1/seo/predictions/{slugs['later']}",
        "track-record": "/track-record",
        "results": "/results",
        "not-found": "/no-such-page",
    }


def test_the_public_pages_in_a_browser(app, public_pages):
    """Each page at 1280 and 390 px: bars as wide as their probabilities (within 2 px), as many
    marks in each chart as figures in its table, no CSP violation or other console error (but
    the 404 page's own status), no request leaving the origin; screenshots for a person."""
    if REQUIRED:  # CI installs the dev dependencies: a missing Playwright is a failure there
        from playwright.sync_api import sync_playwright
    else:
        sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright
    if not CHROMIUM:
        pytest.fail("REQUIRE_CHROMIUM=1 but Chromium is not installed")
    SCREENSHOTS.mkdir(exist_ok=True)
    seen = {}
    with gunicorn(app, RATELIMIT_PUBLIC="1000 per minute") as (base, _), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            for name, path in public_pages.items():
                for width in WIDTHS:
                    viewport = {"width": width, "height": HEIGHTS[width]}
                    context = browser.new_context(viewport=viewport)
                    page = context.new_page()
                    console, requests = [], []
                    page.on("console", lambda message, log=console: log.append(message))
                    page.on("request", lambda request, log=requests: log.append(request.url))
                    response = page.goto(f"{base}{path}", wait_until="load")
                    assert response.status == (404 if name == "not-found" else 200)
                    page.screenshot(path=SCREENSHOTS / f"{name}-{width}.png", full_page=True)
                    found = page.evaluate(MEASURE)
                    context.close()
                    texts = [message.text for message in console]
                    assert not [t for t in texts if "Content Security Policy" in t], texts
                    errors = [m.text for m in console if m.type == "error"]
                    if name == "not-found":  # Chromium reports the page's own 404, nothing else
                        errors = [t for t in errors if "404" not in t]
                    assert not errors, errors
                    assert all(url.startswith(base) for url in requests), requests
                    assert found["width"] <= width, (name, found["wide"][:8])  # no sideways scroll
                    for bar in found["bars"]:
                        assert abs(bar["width"] - bar["share"] * bar["track"]) <= 2, bar
                    for chart in found["charts"]:
                        assert chart["marks"] == chart["rows"] == chart["declared"], chart
                    small = [t for t in found["texts"] if t["size"] < MIN_TEXT_PX]
                    assert not small, (name, width, small[:5])
                    assert found["navLines"] == 1, (name, width)  # the navigation never wraps
                    # ...and is complete at every width.
                    assert found["links"][1:] == ["Matches", "Results", "Track record"], found
                    if name != "not-found":  # the first match on the first screen
                        assert found["firstBottom"] <= found["fold"], (name, width, found)
                    wrapped = [each for each in found["nowrap"] if each["lines"] != 1]
                    assert not wrapped, (name, width, wrapped)  # "−1.00 u" stays whole
                    seen[name, width] = found
        finally:
            browser.close()
    # What each page must show: the bars of the forecasts, and every chart of the record.
    assert all(seen["landing", width]["bars"] for width in WIDTHS)
    # The landing page uses a desktop's width: its two days side by side at 1280 px (a column
    # wider than the 48rem of the other pages), one under the other on a phone.
    desktop, phone = seen["landing", 1280], seen["landing", 390]
    assert desktop["main"] > 1000 and len(desktop["days"]) == 2
    assert desktop["days"][0]["top"] == desktop["days"][1]["top"]
    assert desktop["days"][0]["left"] < desktop["days"][1]["left"]
    assert phone["days"][0]["left"] == phone["days"][1]["left"]
    assert seen["prediction-settled", 1280]["main"] <= 48 * 16  # text pages keep their measure
    # The settled match's result marked on the forecast it settles, its score prominent.
    for width in WIDTHS:
        settled = seen["prediction-settled", width]
        assert settled["happened"] == [
            "✓ Rovers win happened",
            "✓ Under 2.5 happened",
            "✓ Not both happened",
        ]
        assert settled["score"] >= 20
        assert any(each["text"].endswith("u") for each in settled["nowrap"])
    assert all(len(seen["results", width]["bars"]) == 3 for width in WIDTHS)  # the 1x2 forecast
    assert len(seen["prediction-settled", 1280]["bars"]) >= 7  # 3 + 2 + 2 selections, ours
    titles = [chart["title"] for chart in seen["track-record", 390]["charts"]]
    # The live record's one settled pick has no standard error: no month or rating bar of it.
    assert titles[:2] == [
        "Units won or lost, pick by pick, live",
        "Fair closing EV of the live picks",
    ]
    assert "Return on investment by rating, backfilled" in titles
    assert "Units won or lost, pick by pick, backfilled" in titles
    assert any(title.startswith("Reliability") for title in titles)
    assert seen["track-record", 390]["texts"]  # the sizes above were measured
