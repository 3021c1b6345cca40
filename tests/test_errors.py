"""Every error the service answers, formatted in one place; request ids; the problem catalogue."""

import logging

import pytest
from flask.views import MethodView

import access
from errors import PROBLEMS
from tests import asserts, factories


def test_unknown_route_is_a_404_problem(client):
    asserts.problem(client.get("/api/nowhere"), 404, "not-found")


@pytest.mark.parametrize("path", ["/api/v1/ops/operations/abc", "/problems/"])
def test_paths_that_match_no_route_are_404(client, path):
    asserts.problem(client.get(path), 404, "not-found")


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("delete", "/api/auth/login", {"POST", "OPTIONS"}),
        ("get", "/api/auth/register", {"POST", "OPTIONS"}),
        ("post", "/api/admin/users", {"GET", "HEAD", "OPTIONS"}),
    ],
)
def test_wrong_method_is_a_405_keeping_allow(client, method, path, allowed):
    response = getattr(client, method)(path)
    asserts.problem(response, 405, "method-not-allowed")
    assert set(response.headers["Allow"].split(", ")) == allowed


def test_problem_types_use_the_request_host_or_the_public_base_url(make_app):
    local = make_app().test_client().get("/nope", base_url="https://api.example.test")
    assert local.get_json()["type"] == "https://api.example.test/problems/not-found"
    public = make_app(PUBLIC_BASE_URL="https://picks.example.com/").test_client().get("/nope")
    assert public.get_json()["type"] == "https://picks.example.com/problems/not-found"


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_every_problem_type_is_described(client, name):
    response = client.get(f"/problems/{name}")
    assert response.status_code == 200
    body = response.get_json()
    assert body["name"] == name and body["status"] == PROBLEMS[name][0]
    assert body["type"] == f"http://localhost/problems/{name}" and body["description"]


def test_an_unknown_problem_type_is_a_404(client):
    asserts.problem(client.get("/problems/no-such-thing"), 404, "not-found")


def test_request_ids_are_echoed_or_generated(client):
    echoed = client.get("/problems/not-found", headers={"X-Request-ID": "abc-123.x"})
    assert echoed.headers["X-Request-ID"] == "abc-123.x"
    generated = client.get("/problems/not-found")
    assert len(generated.headers["X-Request-ID"]) == 32
    forged = client.get("/nope", headers={"X-Request-ID": "bad id; with spaces"})
    assert forged.headers["X-Request-ID"] != "bad id" and " " not in forged.headers["X-Request-ID"]
    assert forged.get_json()["requestId"] == forged.headers["X-Request-ID"]


def test_an_unexpected_error_is_a_500_with_the_trace_only_in_the_log(make_app, caplog):
    app = make_app()

    @app.get("/boom")
    def boom():
        raise RuntimeError("secret internals: SELECT * FROM user")

    with caplog.at_level(logging.INFO, logger="picks"):
        response = app.test_client().get("/boom", headers={"X-Request-ID": "trace-me"})
    body = asserts.problem(response, 500, "internal-error")
    assert "secret" not in response.get_data(as_text=True) and body["requestId"] == "trace-me"
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert errors and errors[0].exc_info and "trace-me" in errors[0].getMessage()
    assert any("status=500" in r.getMessage() for r in caplog.records)


def test_an_unreachable_database_is_a_503_with_retry_after(make_app, tmp_path):
    app = make_app()
    app.config["DATABASE_URL"] = "unused"
    from models import db, open_database

    db.initialize(open_database("postgresql://nobody@127.0.0.1:9/nowhere?connect_timeout=2"))
    response = app.test_client().post(
        "/api/auth/login", json={"email": "a@example.com", "password": "password-1"}
    )
    asserts.problem(response, 503, "service-unavailable")
    assert int(response.headers["Retry-After"]) >= 1
    assert app.test_client().get("/openapi.json").status_code == 200  # docs need no database


def test_logs_never_carry_passwords_or_tokens(client, caplog):
    with caplog.at_level(logging.DEBUG):
        body = client.post(
            "/api/auth/register", json={"email": "log@example.com", "password": "p4ssw0rd-visible"}
        ).get_json()
        client.post("/api/auth/login", json={"email": "log@example.com", "password": "wrong-p4ss"})
        client.get("/api/v1/data/usage?token=x", headers=factories.bearer(body["accessToken"]))
    text = "\n".join(record.getMessage() for record in caplog.records)
    assert "p4ssw0rd-visible" not in text and "wrong-p4ss" not in text
    assert body["accessToken"] not in text and "token=x" not in text
    assert "path=/api/v1/data/usage status=403" in text


def _viewer():
    viewer = access.current_viewer()
    return {"viewer": viewer.email if viewer else None}


# Test-only routes behind the real PUBLIC and SIGNED_IN rules (those endpoint groups come later).
public_probe = access.Blueprint("probe_public", __name__, url_prefix="/probe-public")
signed_probe = access.Blueprint("probe_signed", __name__, url_prefix="/probe-signed")


@public_probe.route("")
class PublicProbe(MethodView):
    @public_probe.access(access.PUBLIC)
    def get(self):
        return _viewer()


@signed_probe.route("")
class SignedProbe(MethodView):
    @signed_probe.access(access.SIGNED_IN)
    def get(self):
        return _viewer()


@pytest.fixture
def probed(make_app):
    """An app with a public and a signed-in probe route, built from the real access rules."""
    app = make_app(RATELIMIT_PUBLIC="3 per minute")
    app.register_blueprint(public_probe)
    app.register_blueprint(signed_probe)
    return app


def test_public_rule_token_optional_but_valid_if_sent(probed):
    client = probed.test_client()
    with probed.app_context():
        pro = factories.user("pro@example.com", plan="pro")
        gone = factories.user("gone@example.com", status="suspended")
        headers, gone_headers = (
            factories.bearer(factories.token(pro)),
            factories.bearer(factories.token(gone)),
        )
    assert client.get("/probe-public").get_json() == {"viewer": None}
    assert client.get("/probe-public", headers=headers).get_json() == {"viewer": "pro@example.com"}
    assert client.get("/probe-public", headers=gone_headers).get_json() == {"viewer": None}
    asserts.unauthorized(
        client.get("/probe-public", headers=factories.bearer("x.y.z")), invalid_token=True
    )


def test_public_rule_counts_per_client_ip(probed):
    client = probed.test_client()
    first = {"X-Forwarded-For": "203.0.113.1"}
    for remaining in (2, 1, 0):
        response = client.get("/probe-public", headers=first)
        assert response.headers["X-RateLimit-Remaining"] == str(remaining)
        assert response.headers["RateLimit-Policy"] == '"public-read";q=3;w=60'
    limited = client.get("/probe-public", headers=first)
    asserts.problem(limited, 429, "rate-limited")
    assert int(limited.headers["Retry-After"]) >= 1
    other = client.get("/probe-public", headers={"X-Forwarded-For": "203.0.113.2"})
    assert other.status_code == 200


def test_signed_in_rule(probed):
    client = probed.test_client()
    with probed.app_context():
        free = factories.user("free@example.com")
        gone = factories.user("gone@example.com", status="suspended")
        free_headers, gone_headers = (
            factories.bearer(factories.token(free)),
            factories.bearer(factories.token(gone)),
        )
    asserts.unauthorized(client.get("/probe-signed"))
    assert client.get("/probe-signed", headers=free_headers).get_json() == {
        "viewer": "free@example.com"
    }
    asserts.problem(client.get("/probe-signed", headers=gone_headers), 403, "account-suspended")
