"""Query parameters on every operation the OpenAPI description lists: one an endpoint does not know
is a 422 naming it (never ignored, so no spelling of a request is an answer of its own to compute
and cache), and every one it documents is still read."""

import re
import tempfile
from pathlib import Path

import pytest

from app import create_app
from tests import asserts
from tests.helpers import settings

#: A value for each path parameter: the query is refused before anything is looked up by it.
PATH_VALUES = {"name": "not-found", "slug": "alpha-v-beta-2026-11-21"}


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


@pytest.mark.parametrize(("method", "path"), sorted(OPERATIONS))
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


@pytest.mark.parametrize("path", ["/api/picks/today", "/track-record"])  # query, none
def test_a_refused_spelling_is_never_cached(client, path):
    assert client.get(path).status_code == 200
    for _ in range(2):
        asserts.problem(client.get(f"{path}?bogus=1"), 422, "validation-error")
    assert client.get(path).status_code == 200
    assert len(client.application.extensions["answer_cache"].entries) == 1


def test_no_query_at_all_and_an_empty_one_are_answered(client):
    assert client.get("/api/track-record/ledger").status_code == 200
    assert client.get("/api/track-record/ledger?").status_code == 200
