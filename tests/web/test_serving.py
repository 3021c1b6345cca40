"""Serving: gunicorn's settings and cross-origin calls from browsers."""

import pytest

from tests.servers import call, gunicorn

ORIGIN = "https://app.example"


@pytest.mark.slow
def test_gunicorn_opens_no_shared_control_socket(app, tmp_path):
    # gunicorn 25+ puts its control socket in $XDG_RUNTIME_DIR, shared by every instance of the
    # user: a second instance replaced the first one's and removed it on exit.
    with gunicorn(app, XDG_RUNTIME_DIR=tmp_path, HOME=tmp_path) as (base, _):
        assert call(base, "GET", "/healthz")[0] == 200
        assert not list(tmp_path.rglob("*.ctl"))


@pytest.mark.parametrize("path", ["/api/picks/today", "/api/auth/login", "/api/v1/data/usage"])
def test_options_lists_the_methods_with_no_body_and_no_type(client, path):
    answer = client.options(path)
    assert answer.status_code == 200 and answer.content_length == 0
    assert "Content-Type" not in answer.headers and "OPTIONS" in answer.headers["Allow"]


def test_cors_is_off_by_default(client):
    response = client.get("/api/picks/today", headers={"Origin": ORIGIN})
    assert response.status_code == 200
    assert "Access-Control-Allow-Origin" not in response.headers
    preflight = client.options(
        "/api/auth/login",
        headers={"Origin": ORIGIN, "Access-Control-Request-Method": "POST"},
    )
    assert "Access-Control-Allow-Origin" not in preflight.headers


def test_cors_origins_may_call_the_api_from_a_browser(make_app):
    client = make_app(CORS_ORIGINS=f"{ORIGIN}, http://localhost:5173").test_client()
    preflight = client.options(
        "/api/auth/login",
        headers={
            "Origin": ORIGIN,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "Content-Type, Authorization",
        },
    )
    assert preflight.status_code == 200
    assert preflight.headers["Access-Control-Allow-Origin"] == ORIGIN
    allowed = preflight.headers["Access-Control-Allow-Headers"].lower()
    assert "authorization" in allowed and "content-type" in allowed
    assert "Access-Control-Allow-Credentials" not in preflight.headers
    response = client.get("/api/picks/today", headers={"Origin": ORIGIN})
    assert response.headers["Access-Control-Allow-Origin"] == ORIGIN
    exposed = response.headers["Access-Control-Expose-Headers"]
    assert "ETag" in exposed and "X-Request-ID" in exposed and "Retry-After" in exposed
    other = client.get("/api/picks/today", headers={"Origin": "https://evil.example"})
    assert "Access-Control-Allow-Origin" not in other.headers


@pytest.mark.parametrize("value", ["app.example", "https://app.example/path", "ftp://x.example"])
def test_cors_origins_that_no_browser_sends_stop_the_service(make_app, value):
    with pytest.raises(RuntimeError, match="CORS_ORIGINS"):
        make_app(CORS_ORIGINS=value)
