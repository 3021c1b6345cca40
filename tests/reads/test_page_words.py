"""What the pages and answers say in words: the next step of a locked pick (``PRO_URL``, or no
word of Pro at all without it), competition types by their names, a way back from the API
reference, and counts in the right number."""

import re
from datetime import UTC, datetime, timedelta

import pytest

from config import ConfigError, config_from_env
from models import Operation
from services.record import signed_log
from tests import factories, world

HTML = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
GRANTED = "On this deployment Pro is granted by an administrator"


@pytest.fixture
def pages(make_app):
    """``pages(**settings)``: a client of an app on the small world, and its slugs."""

    def build(**overrides):
        app = make_app(CLOCK=lambda: world.T0, **overrides)
        with app.app_context():
            slugs = world.build()
        return app.test_client(), slugs

    return build


def text_of(client, path):
    response = client.get(path, headers=HTML)
    assert response.status_code == 200 and response.mimetype == "text/html"
    return response.get_data(as_text=True)


def locked_box(text) -> str:
    """The box of the locked pick on a prediction page."""
    start = text.index('<div class="pick">')
    return text[start : text.index("</div>", start)]


def test_a_locked_pick_links_to_where_pro_is_sold(pages):
    client, slugs = pages(PRO_URL="https://app.example/pro?from=picks")
    box = locked_box(text_of(client, f"/api/v1/seo/predictions/{slugs['locked']}"))
    assert "for Pro subscribers until kick-off" in box
    assert '<a href="https://app.example/pro?from=picks">Get Pro</a>' in box
    assert GRANTED not in box
    landing = text_of(client, "/")
    assert '<a href="https://app.example/pro?from=picks">Get Pro</a>' in landing


def test_a_pro_url_on_this_site_is_linked_from_the_base(pages):
    client, slugs = pages(PRO_URL="/pro")
    box = locked_box(text_of(client, f"/api/v1/seo/predictions/{slugs['locked']}"))
    assert '<a href="http://localhost/pro">Get Pro</a>' in box


def test_without_a_pro_url_no_page_pitches_pro(pages):
    """How an operator grants Pro is for the docs: a visitor of a deployment without a Pro page
    reads that a pick is sealed until kick-off, and nothing of Pro, on any page."""
    client, slugs = pages()
    box = locked_box(text_of(client, f"/api/v1/seo/predictions/{slugs['locked']}"))
    assert "This pick is sealed until kick-off" in box
    for path in ("/", f"/api/v1/seo/predictions/{slugs['locked']}", "/results", "/track-record"):
        text = text_of(client, path)
        assert not re.search(r"\bPro\b", text), path
        assert GRANTED not in text and "administrator" not in text, path


def test_a_public_pick_has_no_step_to_pro(pages):
    client, slugs = pages(PRO_URL="https://app.example/pro")
    text = text_of(client, f"/api/v1/seo/predictions/{slugs['settled']}")
    assert "Get Pro" not in text and GRANTED not in text


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("https://app.example/pro", "https://app.example/pro"),
        ("http://localhost:5173/subscribe?plan=pro", "http://localhost:5173/subscribe?plan=pro"),
        (" /pro ", "/pro"),
        ("", None),
    ],
)
def test_pro_url_takes_an_address_or_a_path(tmp_path, given, kept):
    assert config_from_env({"PRO_URL": given}, tmp_path)["PRO_URL"] == kept


@pytest.mark.parametrize(
    "given",
    [
        "javascript:alert(1)",
        "app.example/pro",
        "//app.example/pro",
        "ftp://app.example/pro",
        "/a b",
    ],
)
def test_pro_url_refuses_what_is_no_link_to_follow(tmp_path, given):
    with pytest.raises(ConfigError, match="PRO_URL"):
        config_from_env({"PRO_URL": given}, tmp_path)


def test_competition_types_are_named_on_the_track_record(pages):
    client, _ = pages()
    text = text_of(client, "/track-record")
    for name in ("Top flights", "Lower leagues", "Cups", "Internationals"):
        assert f'<th scope="row">{name}</th>' in text
    for slug in ("top-flight", "lower-league", ">cup<", ">international<"):
        assert slug not in text


def test_the_api_reference_links_back_to_the_site(client):
    response = client.get("/docs")
    assert response.status_code == 200
    page = response.get_data(as_text=True)
    assert '<a href="/">Sports Pick Service</a>' in page  # on this origin: nothing absolute
    assert '<a href="/track-record">Track record</a>' in page


def test_a_ledger_of_one_entry_is_one_entry(make_app):
    now = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
    app = make_app(CLOCK=lambda: now)
    with app.app_context():
        match = factories.match(kickoff=now + timedelta(hours=6), status="scheduled")
        factories.pick(match, rating="B", is_live=True, created_at=now - timedelta(hours=1))
        signed_log.publish_new([match.id], now - timedelta(hours=1), "test-1")
        signed_log.checkpoint(now - timedelta(hours=1), factories.settings())
    text = text_of(app.test_client(), "/track-record")
    assert "The latest checkpoint signs the first entry of the ledger" in text
    assert "1 entries" not in text


@pytest.mark.parametrize(
    ("minutes", "said"),
    [(0, "0 minutes"), (1, "1 minute"), (2, "2 minutes"), (61, "61 minutes")],
)
def test_the_health_report_counts_minutes_in_the_right_number(make_app, minutes, said):
    now = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)
    app = make_app(CLOCK=lambda: now)
    with app.app_context():
        headers = factories.bearer(factories.token(factories.user("ops@example.com", role="admin")))
        finished = now - timedelta(minutes=minutes, seconds=30)
        Operation.create(kind="settlement-run", status="succeeded", params={}, finished_at=finished)
    body = app.test_client().get("/api/v1/ops/health/services", headers=headers).get_json()
    settlement = next(item for item in body["services"] if item["name"] == "settlement")
    assert settlement["detail"] == f"last succeeded {said} ago (limit 26 h)"
