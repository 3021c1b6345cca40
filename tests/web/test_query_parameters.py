"""Query parameters on every operation the OpenAPI description lists: one an endpoint does not know
is a 422 naming it (never ignored, so no spelling of a request is an answer of its own to compute
and cache), and every one it documents is still read. The pages for people and crawlers are the
exception: a link to them carries what campaigns append (``utm_source``, ``fbclid``), which they
ignore, keyed in the answer cache by their path alone."""

import re
import tempfile
from pathlib import Path

import pytest

from app import create_app
from services.reads import pages
from tests import asserts, world
from tests.helpers import settings

#: A value for each path parameter: the query is refused before anything is looked up by it.
PATH_VALUES = {"name": "not-found", "slug": "alpha-v-beta-2026-11-21", "day": "2026-03-09"}


def _spec() -> dict:
    """The app's OpenAPI description, read when the tests are collected."""
    with tempfile.TemporaryDirectory() as folder:
        return create_app(settings(Path(folder))).test_client().get("/openapi.json").get_json()


def _operations(spec: dict) -> dict[tuple[str, str], list[dict]]:
    """``{(method, path): its documented query parameters}`` for every operation of ``spec``."""
    return {
        (method, path): [each for each in op.get("parameters", ()) if each["in"] == "query"]
        for path, operations in spec["paths"].items()
        for method, op in operations.items()
        if method != "parameters"
    }


SPEC = _spec()
OPERATIONS = _operations(SPEC)
WITH_QUERY = {key: parameters for key, parameters in OPERATIONS.items() if parameters}
#: The operations that are pages whatever the client asks: they ignore a query parameter.
PAGES = {
    ("get", "/track-record"),
    ("get", "/results"),
    ("get", "/results/{day}"),
    ("get", "/sitemap.xml"),
    ("get", "/robots.txt"),
}
#: What a campaign or a social site appends to a link.
DECORATIONS = [
    "utm_source=newsletter&utm_medium=email&utm_campaign=november",
    "fbclid=IwAR2x_Fq0abc",
    "utm_source=a&utm_source=b&gclid=xyz",
]
HTML = {"Accept": "text/html"}


def _url(path: str, query: str) -> str:
    filled = re.sub(r"{(\w+)}", lambda found: PATH_VALUES.get(found[1], "1"), path)
    return f"{filled}?{query}"


def _value(schema: dict) -> str:
    """A value ``schema`` (a query parameter's, as documented) takes."""
    if schema.get("type") == "array":
        return _value(schema["items"])
    if "enum" in schema:
        return (
            str(schema["enum"][0]).lower() if schema.get("type") == "boolean" else schema["enum"][0]
        )
    kind, shape = schema.get("type"), schema.get("format")
    if kind == "boolean":
        return "true"
    if kind == "integer":
        return str(max(schema.get("minimum", 1), 1))
    if shape == "date":
        return "2026-11-20"
    if shape == "date-time":
        return "2026-11-20T00:00:00Z"
    return "a"


def test_the_operations_are_read_from_the_description():
    assert ("get", "/api/v1/data/matches") in WITH_QUERY
    assert ("get", "/api/v1/data/catalog") in OPERATIONS
    assert len(WITH_QUERY) >= 10


@pytest.mark.parametrize(("method", "path"), sorted(set(OPERATIONS) - PAGES))
def test_an_unknown_parameter_is_a_422_naming_it(client, people, method, path):
    response = client.open(_url(path, "bogus=1"), method=method, headers=people["admin"][1])
    body = asserts.problem(response, 422, "validation-error")
    assert body["errors"]["bogus"] == ["Unknown field."]  # beside any required one missing
    assert "bogus" in body["detail"]
    assert "422" in SPEC["paths"][path][method]["responses"]  # documented, for conformance


@pytest.mark.parametrize(("method", "path"), sorted(WITH_QUERY))
def test_an_unknown_parameter_beside_known_ones_is_refused_alone(client, people, method, path):
    known = "&".join(
        f"{each['name']}={_value(each['schema'])}" for each in WITH_QUERY[method, path]
    )
    response = client.open(
        _url(path, f"{known}&Bogus=1&bogus=2"), method=method, headers=people["admin"][1]
    )
    body = asserts.problem(response, 422, "validation-error")
    assert body["errors"]["Bogus"] == ["Unknown field."]
    assert body["errors"]["bogus"] == ["Unknown field."]


@pytest.mark.parametrize(
    ("method", "path", "parameter"),
    [(*key, each) for key, parameters in sorted(WITH_QUERY.items()) for each in parameters],
    ids=lambda value: value["name"] if isinstance(value, dict) else value,
)
def test_every_documented_parameter_is_read(client, people, method, path, parameter):
    required = [each for each in WITH_QUERY[method, path] if each.get("required")]
    query = "&".join(
        f"{each['name']}={_value(each['schema'])}"
        for each in {parameter["name"]: parameter, **{r["name"]: r for r in required}}.values()
    )
    response = client.open(_url(path, query), method=method, headers=people["admin"][1])
    if response.status_code == 422:
        assert "Unknown field." not in str(response.get_json()["errors"])
    else:
        assert response.status_code in (200, 404), response.get_data(as_text=True)


@pytest.fixture
def paged(make_app):
    """An app over the pages' small world; its settled match's prediction page."""
    app = make_app(CLOCK=lambda: world.T0, RATELIMIT_PUBLIC="1000 per minute")
    with app.app_context():
        slugs = world.build()
    app.prediction = f"/api/v1/seo/predictions/{slugs['settled']}"
    return app


def _path(app, path: str) -> str:
    return app.prediction if path == "prediction" else path


@pytest.mark.parametrize(
    "path",
    ["/api/picks/today", "prediction"],  # with query arguments, without any
)
def test_a_refused_spelling_is_never_cached(paged, path):
    client, path = paged.test_client(), _path(paged, path)
    assert client.get(path).status_code == 200
    for _ in range(2):
        asserts.problem(client.get(f"{path}?bogus=1"), 422, "validation-error")
        asserts.problem(client.get(f"{path}?utm_source=newsletter"), 422, "validation-error")
    assert client.get(path).status_code == 200
    assert len(paged.extensions["answer_cache"].entries) == 1


def test_the_pages_document_no_422():
    for method, path in PAGES:
        assert "422" not in SPEC["paths"][path][method]["responses"], path
        assert "ignored" in SPEC["paths"][path][method]["responses"]["200"]["description"]
    for path in ("/", "/api/v1/seo/predictions/{slug}"):  # their JSON still refuses one
        assert "422" in SPEC["paths"][path]["get"]["responses"]


@pytest.mark.parametrize(
    ("path", "headers"),
    [
        ("/", HTML),
        ("/track-record", {}),
        ("/track-record", HTML),
        ("/results", HTML),
        ("/results/2026-03-09", {}),
        ("prediction", HTML),
        ("/sitemap.xml", {}),
        ("/robots.txt", {}),
    ],
)
def test_a_page_ignores_a_links_decoration_in_one_cache_entry(paged, path, headers):
    """Each spelling of a link to a page answers the page itself: 200, the same bytes and ETag
    (a 304 for it), and no answer of its own in the cache."""
    client, path = paged.test_client(), _path(paged, path)
    cache = paged.extensions["answer_cache"]
    bare = client.get(path, headers=headers)
    assert bare.status_code == 200
    stored = len(cache)
    for decoration in DECORATIONS:
        decorated = client.get(f"{path}?{decoration}", headers=headers)
        assert decorated.status_code == 200, decorated.get_data(as_text=True)[:300]
        assert decorated.mimetype == bare.mimetype
        assert decorated.get_data() == bare.get_data()
        assert decorated.headers.get("ETag") == bare.headers.get("ETag")
        if "ETag" in bare.headers:
            held = {**headers, "If-None-Match": bare.headers["ETag"]}
            assert client.get(f"{path}?{decoration}", headers=held).status_code == 304
    assert len(cache) == stored


def test_a_page_is_made_once_for_every_spelling_and_served_fast(paged, monkeypatch):
    """The decorated spellings are the bare page's cache hits, served by the fast path (before
    Flask dispatches them) as the bare path's are."""
    client, made, dispatched = paged.test_client(), [], []
    make, view = pages.track_record_page, paged.view_functions["pages.TrackRecordPage"]
    monkeypatch.setattr(pages, "track_record_page", lambda *a: made.append(1) or make(*a))
    monkeypatch.setitem(
        paged.view_functions,
        "pages.TrackRecordPage",
        lambda *a, **k: dispatched.append(1) or view(*a, **k),
    )
    for query in ("", *DECORATIONS, "", *DECORATIONS):
        assert client.get(f"/track-record?{query}").status_code == 200
    assert (len(made), len(dispatched)) == (1, 1)


@pytest.mark.parametrize(
    ("path", "headers"),
    [("/", {}), ("prediction", {}), ("/api/picks/today", HTML), ("/api/track-record/ledger", {})],
)
def test_the_json_api_still_refuses_a_links_decoration(paged, path, headers):
    response = paged.test_client().get(
        f"{_path(paged, path)}?utm_source=newsletter", headers=headers
    )
    body = asserts.problem(response, 422, "validation-error")
    assert body["errors"]["utm_source"] == ["Unknown field."]


def test_no_query_at_all_and_an_empty_one_are_answered(client):
    assert client.get("/api/track-record/ledger").status_code == 200
    assert client.get("/api/track-record/ledger?").status_code == 200
