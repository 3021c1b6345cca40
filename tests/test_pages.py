"""The public pages read through the test client: the landing page and the JSON index it sits
beside, the prediction page in full, the track record, the sitemap (by the sitemap protocol's
rules) and robots.txt, the 404 page; all under the pages' Content-Security-Policy."""

import re
import xml.etree.ElementTree as ET
from datetime import datetime
from urllib.parse import urlsplit

import pytest

from services.reads.pages import CURVE_POINTS, _curve, _histogram
from tests import world

HTML = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
SITEMAP_NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
#: W3C Datetime (https://www.w3.org/TR/NOTE-datetime), as the sitemap protocol takes it.
W3C_DATETIME = re.compile(
    r"^\d{4}(-\d{2}(-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?)?)?$"
)


@pytest.fixture
def app(make_app):
    return make_app(CLOCK=lambda: world.T0)


@pytest.fixture
def slugs(app):
    with app.app_context():
        return world.build()


def page(client, path, status=200):
    """The HTML page at ``path``: its text, after the checks every page passes."""
    response = client.get(path, headers=HTML)
    assert response.status_code == status and response.mimetype == "text/html"
    policy = response.headers["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "script-src" not in policy
    text = response.get_data(as_text=True)
    assert " style=" not in text  # only the hashed <style> element is allowed
    assert '<a href="http://localhost/">' in text  # every page links home
    return text


def test_the_landing_page_shows_the_coming_matches(client, slugs):
    text = page(client, "/")
    assert f'href="http://localhost/api/v1/seo/predictions/{slugs["locked"]}"' in text
    assert f'href="http://localhost/api/v1/seo/predictions/{slugs["later"]}"' in text
    assert slugs["settled"] not in text  # yesterday's match is not among the coming days
    assert 'href="http://localhost/track-record"' in text
    assert "Pro until kick-off" in text and "locked" in text  # the A pick's 1x2 is withheld
    assert 'class="bar"' in text  # the other match's published 1x2


def test_api_clients_keep_the_json_index(client, slugs):
    for headers in ({}, {"Accept": "application/json"}, {"Accept": "*/*"}):
        response = client.get("/", headers=headers)
        assert response.status_code == 200 and response.mimetype == "application/json"
        assert response.get_json()["openapi"] == "http://localhost/openapi.json"
        assert response.headers["Vary"] == "Accept"  # a shared cache keeps the two apart
    assert "Accept" in client.get("/", headers=HTML).headers["Vary"]


def test_a_prediction_page_with_a_settled_pick(client, slugs):
    text = page(client, f"/api/v1/seo/predictions/{slugs['settled']}")
    for market in ("Match result", "Over/under 2.5 goals", "Both teams score"):
        assert f"<h2>{market}</h2>" in text
    assert "Market (fair)" in text and "Rovers win" in text
    assert "<td>won</td>" in text and "+1.20 u" in text  # 2.2 odds, one unit staked
    assert "Fair closing EV" in text and "CLV" in text
    assert '<script type="application/ld+json">' in text
    assert "<h2>Form</h2>" in text and "<h2>Head to head</h2>" in text
    assert 'aria-label="Breadcrumb"' in text and "Other Test League matches" in text


def test_a_prediction_page_keeps_a_locked_pick_locked(client, slugs):
    text = page(client, f"/api/v1/seo/predictions/{slugs['locked']}")
    assert "Pick rated A" in text and "for Pro subscribers until kick-off" in text
    assert "City win at" not in text and "2.90" not in text  # nor what to back, nor its price


def test_the_track_record_page(client, slugs):
    text = page(client, "/track-record")
    assert text.index("<h2>Live record</h2>") < text.index("<h2>Backfilled record")
    assert "± one standard error" in text
    for title in (
        "Units won or lost, pick by pick",
        "Return on investment by month, live",
        "Fair closing EV of the live picks",
        "Reliability, Match result",
    ):
        assert f"{title}</title>" in text and f"<caption>{title}</caption>" in text
    assert "Live picks by rating" in text and "Live picks by competition type" in text
    assert "The latest checkpoint signs the first" in text and "verify_ledger.py" in text


def test_the_sitemap_follows_the_protocol_and_lists_pages_that_answer(client, slugs):
    response = client.get("/sitemap.xml")
    assert response.status_code == 200 and response.mimetype == "application/xml"
    root = ET.fromstring(response.data)
    assert root.tag == f"{SITEMAP_NS}urlset"
    urls = root.findall(f"{SITEMAP_NS}url")
    assert 3 <= len(urls) <= 50_000 and len(response.data) <= 50 * 1024 * 1024
    locations = []
    for url in urls:
        location = url.findtext(f"{SITEMAP_NS}loc")
        parts = urlsplit(location)
        assert parts.scheme == "http" and parts.netloc == "localhost", location
        lastmod = url.findtext(f"{SITEMAP_NS}lastmod")
        if lastmod is not None:
            assert W3C_DATETIME.match(lastmod), lastmod
            datetime.fromisoformat(lastmod)
        locations.append(location)
    assert len(set(locations)) == len(locations)
    assert "http://localhost/" in locations and "http://localhost/track-record" in locations
    for slug in slugs.values():
        assert f"http://localhost/api/v1/seo/predictions/{slug}" in locations
    for location in locations:
        assert client.get(urlsplit(location).path, headers=HTML).status_code == 200, location


def test_robots_txt_names_the_sitemap(client, slugs):
    response = client.get("/robots.txt")
    assert response.status_code == 200 and response.mimetype == "text/plain"
    lines = response.get_data(as_text=True).splitlines()
    assert "User-agent: *" in lines and "Sitemap: http://localhost/sitemap.xml" in lines
    assert "Allow: /api/v1/seo/predictions/" in lines


def test_a_sitemap_without_a_known_host_is_refused_not_relative(make_app):
    client = make_app(ALLOWED_HOSTS="picks.example.com").test_client()
    response = client.get("/sitemap.xml")
    assert response.status_code == 404 and "PUBLIC_BASE_URL" in response.get_json()["detail"]


def test_a_browser_gets_a_404_page_that_links_home(client):
    text = page(client, "/no-such-page", status=404)
    assert "the matches of the coming days" in text
    assert 'name="robots"' not in text  # a 404 is kept out of indexes by its status
    api = client.get("/no-such-page")
    assert api.status_code == 404 and api.mimetype == "application/problem+json"


def test_the_pages_are_cached_answers_with_etags(client, slugs):
    for path in ("/", "/track-record", f"/api/v1/seo/predictions/{slugs['settled']}"):
        first = client.get(path, headers=HTML)
        again = client.get(path, headers={**HTML, "If-None-Match": first.headers["ETag"]})
        assert again.status_code == 304, path


def test_the_landing_page_counts_against_the_public_limit(make_app):
    client = make_app(CLOCK=lambda: world.T0, RATELIMIT_PUBLIC="2 per minute").test_client()
    answers = [client.get("/", headers=HTML) for _ in range(3)]
    assert [answer.status_code for answer in answers] == [200, 200, 429]
    assert answers[2].mimetype == "text/html"  # a browser refused gets a page, not JSON
    assert "Rate limited" in answers[2].get_data(as_text=True)
    assert int(answers[2].headers["Retry-After"]) >= 1
    assert client.get("/").status_code == 200  # the JSON index stays outside every limit


def test_the_units_curve_is_thinned_but_ends_on_the_last_pick():
    profits = [1.0 if n % 3 else -1.0 for n in range(500)]
    curve = _curve(profits)
    assert curve[0] == (0, 0.0) and len(curve) == CURVE_POINTS + 1
    assert curve[-1] == (500, sum(profits))
    assert [n for n, _ in curve] == sorted({n for n, _ in curve})
    assert _curve([]) == []
    bins = _histogram([-5.0, 0.0, 0.01, 5.0])  # beyond the range: counted in the outer bins
    assert bins[0]["count"] == 1 and bins[-1]["count"] == 1 and sum(b["count"] for b in bins) == 4
