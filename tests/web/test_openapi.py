"""/openapi.json and /docs: every endpoint with its security, schemas and problem responses."""

import json
import re
from concurrent.futures import ThreadPoolExecutor

import pytest

from errors import PROBLEMS
from web.extensions import api


@pytest.fixture
def spec(client):
    response = client.get("/openapi.json")
    assert response.status_code == 200
    return response.get_json()


def test_docs_are_served(client):
    response = client.get("/docs")
    assert response.status_code == 200 and b"swagger" in response.data.lower()


def test_every_api_route_is_documented(app, spec):
    documented = {(path, method.upper()) for path, ops in spec["paths"].items() for method in ops}
    for rule in app.url_map.iter_rules():
        if rule.endpoint.startswith(("api-docs", "static", "docs.")):  # the description itself
            continue
        path = re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", r"{\1}", rule.rule)
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            assert (path, method) in documented, (path, method)


PROTECTED = {
    ("/api/v1/data/catalog", "get"): 403,
    ("/api/v1/data/usage", "get"): 403,
    ("/api/v1/ops/health/services", "get"): 403,
    ("/api/admin/users", "get"): 403,
}


@pytest.mark.parametrize(("path", "method"), list(PROTECTED))
def test_protected_operations_document_bearer_auth_and_their_problems(spec, path, method):
    operation = spec["paths"][path][method]
    assert operation["security"] == [{"bearerAuth": []}]
    responses = operation["responses"]
    assert {"200", "401", "403", "429", "default"} <= set(responses)
    assert "Access:" in operation["description"]
    assert list(responses["403"]["content"]) == ["application/problem+json"]
    assert "`account-suspended`" in responses["403"]["description"]
    assert "Retry-After" in responses["429"]["headers"]


def test_every_error_response_is_problem_json_or_the_bare_401(spec):
    components = spec["components"]["responses"]
    assert "content" not in components["UNAUTHORIZED"]
    assert "WWW-Authenticate" in components["UNAUTHORIZED"]["headers"]
    assert spec["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            if method == "parameters":
                continue
            for status, response in operation["responses"].items():
                if status.startswith(("2", "3")):
                    continue
                ref = response.get("$ref", "").rsplit("/", 1)[-1]
                if ref == "UNAUTHORIZED":
                    continue
                resolved = components[ref] if ref else response
                assert list(resolved["content"]) == ["application/problem+json"], (
                    path,
                    method,
                    status,
                )


def test_body_endpoints_document_malformed_and_media_type_errors(spec):
    register = spec["paths"]["/api/auth/register"]["post"]
    assert {"200", "400", "409", "413", "415", "422", "429"} <= set(register["responses"])
    assert register["security"] == []
    assert register["requestBody"]["content"]["application/json"]
    assert "`email-taken`" in register["responses"]["409"]["description"]
    assert "`malformed-request`" in register["responses"]["400"]["description"]


def test_the_description_names_every_problem_type(spec):
    description = spec["info"]["description"]
    for name in PROBLEMS:
        if name != "unauthorized":
            assert f"`{name}`" in description, name


def test_the_docs_page_has_its_own_content_security_policy(client):
    response = client.get("/docs")
    assert response.status_code == 200 and response.mimetype == "text/html"
    policy = response.headers["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy
    assert "connect-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert "unsafe" not in policy
    page = response.get_data(as_text=True)
    assert "<script>" not in page  # no inline script: the policy allows none
    assert "http://" not in page and "https://" not in page  # nothing from another site


def test_the_docs_are_served_from_the_pinned_package(client):
    from importlib.metadata import version

    from swagger_ui_bundle import swagger_ui_path

    assert version("swagger-ui-bundle-v2") == "5.31.0"
    with client.get("/docs/assets/swagger-ui-bundle.js") as bundle:
        assert bundle.status_code == 200
        assert bundle.get_data() == (swagger_ui_path / "swagger-ui-bundle.js").read_bytes()
    with client.get("/docs/assets/swagger-ui.css") as css:
        assert css.mimetype == "text/css"
    script = client.get("/docs/docs.js")
    assert script.mimetype == "text/javascript" and b"/openapi.json" in script.get_data()
    for name in ("index.html", "../../__init__.py", "swagger-initializer.js"):
        assert client.get(f"/docs/assets/{name}").status_code == 404


def test_every_html_answer_has_a_content_security_policy(app, client):
    from datetime import timedelta

    from clock import utcnow
    from tests import factories

    with app.app_context():
        match = factories.match("Rovers", "United", kickoff=utcnow() + timedelta(days=2))
    html = {"Accept": "text/html"}
    answers = [
        client.get("/docs"),
        client.get(f"/api/v1/seo/predictions/{match.slug}", headers=html),
        client.get("/api/v1/seo/predictions/no-such-match-2026-01-01", headers=html),
    ]
    for response in answers:
        assert response.mimetype == "text/html"
        assert "default-src 'none'" in response.headers["Content-Security-Policy"]


def test_every_operation_has_a_readable_unique_operation_id(spec):
    ids = [
        operation["operationId"]
        for operations in spec["paths"].values()
        for method, operation in operations.items()
        if method != "parameters"
    ]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[a-z][A-Za-z]+", name) for name in ids), ids
    assert spec["paths"]["/api/picks/today"]["get"]["operationId"] == "listTodayPicks"


@pytest.mark.parametrize("path", ["/", "/problems/{name}", "/healthz", "/readyz"])
def test_operations_without_a_token_say_so(spec, path):
    assert spec["paths"][path]["get"]["security"] == []
    assert spec["paths"][path]["get"]["description"]


def test_every_operation_and_event_states_its_security(spec):
    for operations in (*spec["paths"].values(), *spec["webhooks"].values()):
        for method, operation in operations.items():
            if method != "parameters":
                assert "security" in operation, operation.get("operationId")


def test_dates_are_one_string_type_with_a_pattern(spec):
    (date,) = [
        p for p in spec["paths"]["/api/picks/today"]["get"]["parameters"] if p["name"] == "date"
    ]
    assert date["schema"]["type"] == "string" and "anyOf" not in date["schema"]
    assert re.fullmatch(date["schema"]["pattern"], "2026-11-21")
    assert re.fullmatch(date["schema"]["pattern"], "2026-11-21T19:45:00Z")
    assert not re.fullmatch(date["schema"]["pattern"], "21/11/2026")
    assert "YYYY-MM-DD" in date["description"]


def test_comma_lists_are_arrays_of_enums_sent_comma_separated(spec):
    parameters = {p["name"]: p for p in spec["paths"]["/api/v1/data/matches"]["get"]["parameters"]}
    for name in ("include", "status"):
        parameter = parameters[name]
        assert parameter["schema"]["type"] == "array" and parameter["schema"]["items"]["enum"]
        assert (parameter["style"], parameter["explode"]) == ("form", False)
    market = {p["name"]: p for p in spec["paths"]["/api/picks/today"]["get"]["parameters"]}
    items = market["market"]["schema"]["items"]
    assert items["enum"] == ["1x2", "ou25", "btts", "ah", "ou"]
    assert items["x-enum-varnames"] == ["ONE_X_TWO", "OU25", "BTTS", "AH", "OU"]  # not VALUE_0


def test_no_component_is_unused(spec):
    assert "PaginationMetadata" not in spec["components"]["schemas"]
    assert "PAGINATION" not in spec["components"].get("headers", {})


def test_a_backtest_takes_its_lists_as_arrays_or_comma_separated(client, people):
    headers = people["free"][1]
    as_list = client.post("/api/backtest/run", json={"rating": ["A", "B"]}, headers=headers)
    as_text = client.post("/api/backtest/run", json={"rating": "A,B"}, headers=headers)
    assert as_list.status_code == as_text.status_code == 200
    assert as_list.get_json()["params"]["rating"] == as_text.get_json()["params"]["rating"] == "A,B"
    for bad in (["A", "Z"], [], [1], "A,Z"):
        response = client.post("/api/backtest/run", json={"rating": bad}, headers=headers)
        assert response.status_code == 422, bad


def test_a_comma_list_may_also_repeat_its_parameter(client):
    for query in ("rating=A&rating=B,C", "rating=A,B,C", "rating=C&rating=A&rating=B"):
        assert client.get(f"/api/picks/today?{query}").status_code == 200, query
    bad = client.get("/api/picks/today?rating=A&rating=Z")
    assert bad.status_code == 422 and "rating" in bad.get_json()["errors"]


def test_the_description_written_on_first_read_is_whole_whoever_reads_it_first(make_app):
    """The operations are documented when the description is first read, not when the app is
    made: eight threads reading it at once from a new app all get the whole description, the
    same as a new app read alone (and as the same app read again)."""
    alone = make_app().test_client().get("/openapi.json").get_data()
    client = make_app().test_client()
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: client.get("/openapi.json").get_data(), range(8)))
    assert set(answers) == {alone}
    assert client.get("/openapi.json").get_data() == alone
    assert len(json.loads(alone)["paths"]) > 30


def test_making_an_app_writes_none_of_its_description(make_app):
    """Nothing of the description is written when an app is made (flask-smorest's error
    responses, the bearer scheme and the converters included), and nothing of one app's is kept
    for the next; the first read writes it whole."""
    for _ in range(2):
        app = make_app()
        assert api._spec.to_dict().get("components", {}) == {}
        assert api._converters == []
    described = app.test_client().get("/openapi.json").get_json()
    assert described["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"
    assert "DEFAULT_ERROR" in described["components"]["responses"]
    (match_id,) = described["paths"]["/api/matches/{match_id}"]["parameters"]
    assert match_id["schema"] == {"type": "integer", "maximum": 2**31 - 1, "minimum": 1}
