"""Who may call what: every row of the access table, every token failure, the check order."""

import base64
import json
import time
from datetime import UTC, datetime, timedelta

import jwt as pyjwt
import pytest
from flask_jwt_extended import create_access_token, create_refresh_token

from models import User
from tests import asserts, factories
from web.access import ADMIN, PUBLIC, SIGNED_IN, Rule
from web.paths import id_param

DATA = "/api/v1/data/catalog"
USAGE = "/api/v1/data/usage"
OPS = "/api/v1/ops/health/services"
ADMIN_USERS = "/api/admin/users"
PROTECTED = [DATA, USAGE, OPS, ADMIN_USERS]

SUBSCRIPTION = ("subscription-required", "A Pro subscription or admin role is required.")
OPS_ROLE = ("role-required", "The admin or operator role is required.")
ADMIN_ROLE = ("role-required", "The admin role is required.")

#: (kind, path) → None for 200, else (problem, detail)
EXPECTED = {
    ("free", DATA): SUBSCRIPTION,
    ("free", USAGE): SUBSCRIPTION,
    ("free", OPS): OPS_ROLE,
    ("free", ADMIN_USERS): ADMIN_ROLE,
    ("pro", DATA): None,
    ("pro", USAGE): None,
    ("pro", OPS): OPS_ROLE,
    ("pro", ADMIN_USERS): ADMIN_ROLE,
    ("operator", DATA): SUBSCRIPTION,
    ("operator", USAGE): SUBSCRIPTION,
    ("operator", OPS): None,
    ("operator", ADMIN_USERS): ADMIN_ROLE,
    ("admin", DATA): None,
    ("admin", USAGE): None,
    ("admin", OPS): None,
    ("admin", ADMIN_USERS): None,
}


@pytest.mark.parametrize(("kind", "path"), list(EXPECTED))
def test_access_table(client, people, kind, path):
    response = client.get(path, headers=people[kind][1])
    expected = EXPECTED[(kind, path)]
    if expected is None:
        assert response.status_code == 200, response.get_data(as_text=True)
        assert response.mimetype == "application/json"
    else:
        body = asserts.problem(response, 403, expected[0])
        assert body["detail"] == expected[1]


@pytest.mark.parametrize("kind", ["suspended", "suspended-admin"])
@pytest.mark.parametrize("path", PROTECTED)
def test_suspended_accounts_are_refused_everywhere(client, people, kind, path):
    asserts.problem(client.get(path, headers=people[kind][1]), 403, "account-suspended")


@pytest.mark.parametrize("path", PROTECTED)
def test_no_token_is_a_bare_401(client, path):
    asserts.unauthorized(client.get(path))


@pytest.mark.parametrize("path", PROTECTED)
def test_a_non_bearer_authorization_header_is_a_bare_401(client, path):
    asserts.unauthorized(client.get(path, headers={"Authorization": "Basic dXNlcjpwYXNz"}))


@pytest.mark.parametrize(
    "form", ["Token {}", "JWT {}", "{}", "Basic dXNlcjpwYXNz", "Bearer", "Bearer {}, Bearer {}"]
)
def test_a_public_endpoint_refuses_a_header_holding_no_bearer_token(client, people, form):
    """Read as anonymous, a Pro client's mistake would only show as locked picks."""
    token = people["pro"][1]["Authorization"].removeprefix("Bearer ")
    header = {"Authorization": form.format(token, token)}
    response = client.get("/api/picks/today?date=2026-01-01", headers=header)
    assert response.status_code == 401 and response.get_data() == b""
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


def test_the_html_pages_read_another_scheme_as_anonymous(client):
    """A browser behind a password-protected proxy sends its Basic credentials to every page."""
    response = client.get(
        "/", headers={"Authorization": "Basic dXNlcjpwYXNz", "Accept": "text/html"}
    )
    assert response.status_code == 200 and response.mimetype == "text/html"


def _segment(data):
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def _claims(user_id):
    now = int(time.time())
    return {
        "sub": str(user_id),
        "type": "access",
        "fresh": False,
        "iat": now,
        "nbf": now,
        "exp": now + 600,
        "jti": "test",
    }


def bad_tokens(app, user):
    """Each way a token can be wrong, by name."""
    with app.app_context():
        expired = create_access_token(str(user.id), expires_delta=timedelta(seconds=-30))
        refresh = create_refresh_token(str(user.id))
    claims = _claims(user.id)
    return {
        "garbage": "not-a-token",
        "three-dots": "a.b.c",
        "alg-none": f"{_segment({'alg': 'none', 'typ': 'JWT'})}.{_segment(claims)}.",
        "other-key": pyjwt.encode(
            claims, "another-secret-that-is-long-enough-0123456789", algorithm="HS256"
        ),
        "expired": expired,
        "refresh-token": refresh,
        "tampered-subject": expired.rsplit(".", 1)[0] + "." + "A" * 43,
        "subject-not-an-id": pyjwt.encode(
            {**claims, "sub": "admin"}, app.config["JWT_SECRET_KEY"], algorithm="HS256"
        ),
    }


@pytest.mark.parametrize(
    "kind",
    [
        "garbage",
        "three-dots",
        "alg-none",
        "other-key",
        "expired",
        "refresh-token",
        "tampered-subject",
        "subject-not-an-id",
    ],
)
@pytest.mark.parametrize("path", PROTECTED)
def test_invalid_tokens_are_a_401_invalid_token(app, client, people, kind, path):
    token = bad_tokens(app, people["admin"][0])[kind]
    asserts.unauthorized(client.get(path, headers=factories.bearer(token)), invalid_token=True)


def test_a_token_for_a_deleted_user_is_a_401(app, client, people):
    user, headers = people["admin"]
    with app.app_context():
        User.delete_by_id(user.id)
    asserts.unauthorized(client.get(ADMIN_USERS, headers=headers), invalid_token=True)


def test_role_plan_and_status_changes_apply_at_once(app, client, people):
    user, headers = people["free"]
    assert client.get(DATA, headers=headers).status_code == 403
    with app.app_context():
        factories.users.update(user.email, plan="pro")
    assert client.get(DATA, headers=headers).status_code == 200
    with app.app_context():
        factories.users.update(user.email, status="suspended")
    asserts.problem(client.get(DATA, headers=headers), 403, "account-suspended")


def test_403_comes_before_validation(client, people):
    """A caller without the role learns nothing about the parameters."""
    response = client.get(f"{ADMIN_USERS}?page=0&pageSize=1000", headers=people["pro"][1])
    asserts.problem(response, 403, "role-required")


def test_401_comes_before_everything(client):
    asserts.unauthorized(client.get(f"{ADMIN_USERS}?page=0"))


def test_every_api_route_has_an_access_rule(app):
    """A blueprint's default rule covers its views, so no endpoint is ever left open by
    forgetting a decorator."""
    checked = 0
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith("/api"):
            continue
        view = app.view_functions[rule.endpoint].view_class
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            handler = getattr(view, method.lower())
            assert isinstance(getattr(handler, "access_rule", None), Rule), (rule.rule, method)
            checked += 1
    assert checked >= 13


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        ("/api/picks/today", PUBLIC),
        (f"/api/matches/{id_param('match_id')}", PUBLIC),
        ("/api/explorer/slate", PUBLIC),
        ("/api/track-record/by-competition-type", PUBLIC),
        ("/api/v1/seo/predictions/<slug:slug>", PUBLIC),
        ("/api/backtest/run", SIGNED_IN),
        ("/api/admin/users", ADMIN),
    ],
)
def test_routes_follow_the_access_table(app, path, rule):
    (found,) = [r for r in app.url_map.iter_rules() if r.rule == path]
    view = app.view_functions[found.endpoint].view_class
    method = next(iter(found.methods - {"HEAD", "OPTIONS"})).lower()
    assert getattr(view, method).access_rule is rule


def test_head_is_refused_as_its_get_once_the_quota_is_spent(make_app):
    frozen = datetime(2026, 11, 10, 12, tzinfo=UTC)  # so both say the same Retry-After
    app = make_app(QUOTA_PRO_REQUESTS=2, RATELIMIT_AUTH="100 per minute", CLOCK=lambda: frozen)
    client = app.test_client()
    with app.app_context():
        headers = {"Authorization": f"Bearer {factories.token(factories.user(plan='pro'))}"}
    for _ in range(2):
        assert client.head("/api/v1/data/catalog", headers=headers).status_code == 200
        assert client.get("/api/v1/data/catalog", headers=headers).status_code == 200
    refused = client.get("/api/v1/data/catalog", headers=headers)
    head = client.head("/api/v1/data/catalog", headers=headers)
    assert refused.status_code == head.status_code == 429
    assert head.headers["Retry-After"] == refused.headers["Retry-After"]
    usage = client.get("/api/v1/data/usage", headers=headers).get_json()
    assert usage["requests"] == {"used": 2, "limit": 2, "remaining": 0}


def test_head_is_not_charged_to_the_data_api_quota(client, people):
    headers = people["pro"][1]
    for _ in range(3):
        assert client.head("/api/v1/data/catalog", headers=headers).status_code == 200
    assert client.get("/api/v1/data/catalog", headers=headers).status_code == 200
    usage = client.get("/api/v1/data/usage", headers=headers).get_json()
    assert usage["requests"]["used"] == 1
