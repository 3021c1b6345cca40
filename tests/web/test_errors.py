"""Every error the service answers, formatted in one place; request ids; the problem catalogue."""

import logging

import pytest
from flask.views import MethodView
from werkzeug.test import EnvironBuilder

from config import ConfigError
from errors import PROBLEMS
from tests import asserts, factories
from web import access
from web.blueprint import Blueprint


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


def test_problem_types_use_an_allowed_request_host_or_the_public_base_url(make_app):
    allowed = make_app(ALLOWED_HOSTS="api.example.test").test_client()
    local = allowed.get("/nope", base_url="https://api.example.test")
    assert local.get_json()["type"] == "https://api.example.test/problems/not-found"
    public = make_app(PUBLIC_BASE_URL="https://picks.example.com/").test_client().get("/nope")
    assert public.get_json()["type"] == "https://picks.example.com/problems/not-found"


@pytest.mark.parametrize(
    ("allowed", "base", "absolute"),
    [
        ("localhost:8000", "http://localhost:8000", True),
        ("localhost:8000", "http://localhost:9999", False),
        ("localhost:8000", "http://localhost", False),
        ("localhost", "http://localhost", True),
        ("localhost", "https://localhost", True),
        ("localhost", "http://localhost:8000", False),
        ("localhost", "https://localhost:80", False),
        ("[::1]:8000", "http://[::1]:8000", True),
        ("::1", "http://[::1]:8000", False),
        ("::1", "http://[::1]", True),
        ("localhost:8000", "http://localhost:8000x", False),
    ],
)
def test_an_allowed_host_names_its_port_too(make_app, allowed, base, absolute):
    """``ALLOWED_HOSTS`` matches host and port: ``localhost:8000`` does not make
    ``localhost:9999`` a link base, and a bare host allows only the scheme's default port."""
    client = make_app(ALLOWED_HOSTS=allowed).test_client()
    host = base.partition("://")[2]
    answer = client.get("/nope", base_url=base.replace(host, "x"), headers={"Host": host})
    expected = f"{base}/problems/not-found" if absolute else "/problems/not-found"
    assert answer.get_json()["type"] == expected


@pytest.mark.parametrize("entry", ["localhost:http", "localhost:0", "[::1]x", "host:65536"])
def test_an_allowed_host_with_a_port_that_is_none_stops_the_service(make_app, entry):
    with pytest.raises(ConfigError, match="ALLOWED_HOSTS"):
        make_app(ALLOWED_HOSTS=entry)


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
    from store.database import db, open_database

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
public_probe = Blueprint("probe_public", __name__, url_prefix="/probe-public")
signed_probe = Blueprint("probe_signed", __name__, url_prefix="/probe-signed")


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
    # The moving window counts exactly (see test_rate_limits.EXACT); one proxy in front lets
    # X-Forwarded-For play several clients.
    app = make_app(
        RATELIMIT_PUBLIC="3 per minute", RATELIMIT_STRATEGY="moving-window", PROXY_FIX_HOPS=1
    )
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


def _formatted_lines(caplog):
    """The log as the service writes it: each record through the service's own formatter."""
    from web import problems

    (handler,) = [handler for handler in problems.log.handlers if getattr(handler, "is_picks", 0)]
    return "\n".join(handler.formatter.format(record) for record in caplog.records).splitlines()


def test_a_logged_path_cannot_forge_a_log_line(client, caplog):
    forged = "/x%0A2026-11-23 00:00:00,000 INFO picks.access method=GET path=/ status=200 FORGED"
    with caplog.at_level(logging.INFO, logger="picks"):
        client.get(forged)
        client.get("/y%0D%0Aok%E2%80%A8also%1B[31mred")
    lines = _formatted_lines(caplog)
    assert len(lines) == 2
    assert not any(line.startswith("2026-11-23 00:00:00,000") for line in lines)
    assert "path=/x\\x0a2026-11-23 00:00:00,000 INFO" in lines[0]
    assert "\\x0d\\x0aok\\x2028also\\x1b[31mred" in lines[1]


def test_the_access_log_names_the_client_address(make_app, caplog):
    client = make_app().test_client()
    with caplog.at_level(logging.INFO, logger="picks.access"):
        client.get("/problems/not-found", environ_base={"REMOTE_ADDR": "192.0.2.44"})
        client.get("/problems/not-found", headers={"X-Forwarded-For": "198.51.100.1"})
    messages = [record.getMessage() for record in caplog.records]
    assert " ip=192.0.2.44 " in messages[0]
    assert " ip=127.0.0.1 " in messages[1]  # no proxy trusted: its own header changes nothing


def test_every_answer_says_nosniff(client):
    for response in (client.get("/"), client.get("/nope"), client.get("/docs")):
        assert response.headers["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize(
    ("base", "strict"),
    [("https://picks.example", True), ("http://picks.example", False), (None, False)],
)
def test_every_answer_says_its_referrer_policy_and_https_when_served_so(make_app, base, strict):
    """Every answer, whichever path makes it (a view, a problem, an HTML page, /docs, the fast
    path's cached answer), says its Referrer-Policy; Strict-Transport-Security only when the
    public address is https (over http it would pin browsers to an https that is not there)."""
    app = make_app(PUBLIC_BASE_URL=base)
    client = app.test_client()
    answers = [
        client.get("/"),
        client.get("/", headers={"Accept": "text/html"}),
        client.get("/track-record", headers={"Accept": "text/html"}),
        client.get("/nope"),
        client.post("/api/auth/login", data="{", content_type="application/json"),
        client.get("/docs"),
        client.get("/api/picks/today"),
    ]
    environ = EnvironBuilder(
        path="/api/picks/today", environ_base={"REMOTE_ADDR": "127.0.0.1"}
    ).get_environ()
    fast = app.wsgi_app.answer(environ)
    assert fast is not None  # the cached answer, before Flask dispatches it
    responses = [dict(answer.headers) for answer in answers] + [dict(fast[1])]
    for headers in responses:
        assert headers["Referrer-Policy"] == "strict-origin-when-cross-origin"
        if strict:
            assert headers["Strict-Transport-Security"] == "max-age=63072000; includeSubDomains"
        else:
            assert "Strict-Transport-Security" not in headers
