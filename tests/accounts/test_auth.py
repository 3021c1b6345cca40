"""Register and login: the happy path, the bad input, and what login never reveals."""

import gzip
import json
import time

import pytest
from flask_jwt_extended import JWTManager

from models import User
from tests import asserts, factories
from web.sessions import VerifiedTokens

REGISTER = "/api/auth/register"
LOGIN = "/api/auth/login"


def test_register_creates_a_free_user_and_signs_it_in(client):
    response = client.post(
        REGISTER, json={"email": "  New.Person@Example.COM ", "password": "s3cret-pass"}
    )
    assert response.status_code == 200
    body = response.get_json()
    assert body["user"]["email"] == "new.person@example.com"
    assert (body["user"]["role"], body["user"]["plan"], body["user"]["status"]) == (
        "user",
        "free",
        "active",
    )
    assert body["tokenType"] == "Bearer"
    assert body["expiresIn"] == 3600
    assert body["user"]["createdAt"].endswith("Z")
    usage = client.get("/api/v1/data/usage", headers=factories.bearer(body["accessToken"]))
    asserts.problem(usage, 403, "subscription-required")


def test_the_password_is_stored_as_a_slow_hash(app, client):
    client.post(REGISTER, json={"email": "a@example.com", "password": "s3cret-pass"})
    with app.app_context():
        stored = User.get(User.email == "a@example.com").password_hash
    assert stored.startswith("scrypt:") and "s3cret-pass" not in stored


def test_the_default_hash_is_full_cost_scrypt(tmp_path):
    from config import config_from_env

    settings = config_from_env({}, tmp_path, {"JWT_SECRET_KEY": "k" * 40})
    assert settings["PASSWORD_HASH_METHOD"] == "scrypt:32768:8:1"


@pytest.mark.parametrize("email", ["same@example.com", "SAME@Example.com"])
def test_an_email_registers_once_in_any_case(client, email):
    assert (
        client.post(
            REGISTER, json={"email": "same@example.com", "password": "password-1"}
        ).status_code
        == 200
    )
    response = client.post(REGISTER, json={"email": email, "password": "password-2"})
    asserts.problem(response, 409, "email-taken")


@pytest.mark.parametrize(
    ("email", "stored"),
    [("José@Exämple.com", "josé@exämple.com"), ("ÜNICODE@example.org", "ünicode@example.org")],
)
def test_unicode_emails_are_accepted_and_stored_lower_case(client, email, stored):
    response = client.post(REGISTER, json={"email": email, "password": "password-1"})
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["user"]["email"] == stored
    assert (
        client.post(LOGIN, json={"email": stored.upper(), "password": "password-1"}).status_code
        == 200
    )


LONG = "x" * 10_000

#: 254 characters as sent, 325 lower-cased (``İ`` lower-cases to two): past the stored column.
GROWS = "İ" * 71 + "@" + "b" * 63 + "." + "b" * 63 + "." + "c" * 50 + ".com"


def test_an_email_longer_than_the_column_once_lower_cased_is_refused_and_not_stored(client):
    assert len(GROWS) == 254 < len(GROWS.lower())
    response = client.post(REGISTER, json={"email": GROWS, "password": "password-1"})
    problem = asserts.problem(response, 422, "validation-error")
    assert problem["errors"] == {
        "email": ["Longer than 254 characters once lower-cased, as it is stored."]
    }
    assert client.post(LOGIN, json={"email": GROWS, "password": "password-1"}).status_code == 401


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({}, {"email", "password"}),
        ({"email": "a@example.com"}, {"password"}),
        ({"email": None, "password": None}, {"email", "password"}),
        ({"email": 12, "password": ["a"]}, {"email", "password"}),
        ({"email": "not-an-email", "password": "password-1"}, {"email"}),
        ({"email": "a@example.com", "password": "short"}, {"password"}),
        ({"email": "a@example.com", "password": "p" * 129}, {"password"}),
        ({"email": f"{LONG}@example.com", "password": "password-1"}, {"email"}),
        ({"email": "a@example.com", "password": LONG}, {"password"}),
        ({"email": "a@example.com", "password": "password-1", "role": "admin"}, {"role"}),
    ],
)
def test_register_rejects_bad_fields_by_name(client, body, fields):
    response = client.post(REGISTER, json=body)
    problem = asserts.problem(response, 422, "validation-error")
    assert set(problem["errors"]) == fields
    assert all(isinstance(m, str) for messages in problem["errors"].values() for m in messages)


@pytest.mark.parametrize("path", [REGISTER, LOGIN])
@pytest.mark.parametrize(
    ("kwargs", "status", "name"),
    [
        (
            {"data": "email=a@example.com", "content_type": "application/x-www-form-urlencoded"},
            415,
            "unsupported-media-type",
        ),
        ({"data": "hello", "content_type": "text/plain"}, 415, "unsupported-media-type"),
        ({"data": "{not json", "content_type": "application/json"}, 400, "malformed-request"),
        ({"data": b"\xff\xfe", "content_type": "application/json"}, 400, "malformed-request"),
        ({"json": ["a@example.com", "password-1"]}, 400, "malformed-request"),
        (
            {
                "data": '{"email": "a@example.com", "password": "password-1", "email": "b@x.io"}',
                "content_type": "application/json",
            },
            400,
            "malformed-request",
        ),
        (
            {"data": '{"a": {"b": 1, "b": 2}}', "content_type": "application/json"},
            400,
            "malformed-request",
        ),
        (
            {"data": '{"a": 1}'.encode("utf-16"), "content_type": "application/json"},
            400,
            "malformed-request",
        ),
        ({"json": "a string"}, 400, "malformed-request"),
        ({"json": 42}, 400, "malformed-request"),
        (
            {
                "data": '{"email": "' + "a" * (1024 * 1024) + '"}',
                "content_type": "application/json",
            },
            413,
            "payload-too-large",
        ),
    ],
)
def test_bodies_that_are_not_json_objects(client, path, kwargs, status, name):
    asserts.problem(client.post(path, **kwargs), status, name)


def test_a_415_echoes_a_long_media_type_or_coding_clipped(client):
    long = "x" * 5000
    for headers in ({"Content-Type": f"text/{long}"}, {"Content-Encoding": long}):
        response = client.post(
            REGISTER, data=b'{"a": 1}', headers={"Content-Type": "application/json", **headers}
        )
        problem = asserts.problem(response, 415, "unsupported-media-type")
        assert "…" in problem["detail"] and len(problem["detail"]) < 300


def test_a_content_coded_body_is_refused_with_the_coding_the_api_reads(app, client):
    body = json.dumps({"email": "zipped@example.com", "password": "password-1"}).encode()
    response = client.post(
        REGISTER,
        data=gzip.compress(body),
        headers={"Content-Type": "application/json", "Content-Encoding": "gzip"},
    )
    problem = asserts.problem(response, 415, "unsupported-media-type")
    assert "gzip" in problem["detail"]
    assert response.headers["Accept-Encoding"] == "identity"
    with app.app_context():
        assert not User.select().where(User.email == "zipped@example.com").exists()
    sent_as_is = client.post(
        REGISTER,
        data=body,
        headers={"Content-Type": "application/json", "Content-Encoding": "Identity"},
    )
    assert sent_as_is.status_code == 200


def test_bad_input_loses_nothing(app, client):
    client.post(REGISTER, json={"email": "keep@example.com", "password": "password-1"})
    client.post(REGISTER, json=[{"email": "x@example.com"}])
    client.post(REGISTER, json={"email": "keep@example.com", "password": "other-pass"})
    with app.app_context():
        assert [u.email for u in User.select()] == ["keep@example.com"]
    assert (
        client.post(LOGIN, json={"email": "keep@example.com", "password": "password-1"}).status_code
        == 200
    )


def test_login_answers_the_same_session_shape(client, ctx):
    user = factories.user("me@example.com")
    response = client.post(LOGIN, json={"email": "ME@example.com", "password": factories.PASSWORD})
    assert response.status_code == 200
    body = response.get_json()
    assert body["user"]["id"] == user.id and body["tokenType"] == "Bearer"
    assert (
        client.get("/api/admin/users", headers=factories.bearer(body["accessToken"])).status_code
        == 403
    )


@pytest.mark.parametrize(
    "body",
    [
        {"email": "me@example.com", "password": "wrong-password"},
        {"email": "nobody@example.com", "password": factories.PASSWORD},
        {"email": None, "password": None},
        {"email": "me@example.com", "password": None},
        {},
    ],
)
def test_failed_logins_are_one_bare_401(client, ctx, body):
    factories.user("me@example.com")
    asserts.unauthorized(client.post(LOGIN, json=body))


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({"email": 5, "password": "x"}, {"email"}),
        ({"email": "me@example.com", "password": LONG}, {"password"}),
        ({"email": "me@example.com", "password": "x", "remember": True}, {"remember"}),
    ],
)
def test_login_rejects_malformed_fields(client, body, fields):
    assert (
        set(asserts.problem(client.post(LOGIN, json=body), 422, "validation-error")["errors"])
        == fields
    )


def test_a_suspended_user_cannot_log_in_but_a_wrong_password_reveals_nothing(client, ctx):
    factories.user("gone@example.com", status="suspended")
    right = client.post(LOGIN, json={"email": "gone@example.com", "password": factories.PASSWORD})
    asserts.problem(right, 403, "account-suspended")
    wrong = client.post(LOGIN, json={"email": "gone@example.com", "password": "not-the-password"})
    asserts.unauthorized(wrong)


def test_login_does_the_same_work_for_an_unknown_email(make_app, monkeypatch):
    """An unknown email costs one password check at the configured cost, as a known one does, so
    the time an answer takes tells nothing (counted exactly rather than timed)."""
    import werkzeug.security

    app = make_app(PASSWORD_HASH_METHOD="scrypt:2048:8:1")
    client = app.test_client()
    with app.app_context():
        factories.user("known@example.com")
    checked = []
    original = werkzeug.security.check_password_hash

    def counting(stored, password):
        checked.append(stored.split("$", 1)[0])  # the method and its cost
        return original(stored, password)

    monkeypatch.setattr("services.accounts.credentials.check_password_hash", counting)
    for email in ("known@example.com", "unknown@example.com"):
        asserts.unauthorized(client.post(LOGIN, json={"email": email, "password": "wrong-pass"}))
    assert checked == ["scrypt:2048:8:1", "scrypt:2048:8:1"]


def test_tokens_carry_a_string_subject_and_the_configured_lifetime(make_app):
    app = make_app(ACCESS_TOKEN_EXPIRES=120)
    client = app.test_client()
    body = client.post(
        REGISTER, json={"email": "t@example.com", "password": "password-1"}
    ).get_json()
    import jwt as pyjwt

    claims = pyjwt.decode(body["accessToken"], app.config["JWT_SECRET_KEY"], algorithms=["HS256"])
    assert claims["sub"] == str(body["user"]["id"])
    assert claims["exp"] - claims["iat"] == 120 == body["expiresIn"]


def test_token_answers_are_never_stored(client, ctx):
    factories.user("me@example.com")
    registered = client.post(REGISTER, json={"email": "new@example.com", "password": "password-1"})
    logged_in = client.post(LOGIN, json={"email": "me@example.com", "password": factories.PASSWORD})
    for response in (registered, logged_in):
        assert response.status_code == 200 and response.headers["Cache-Control"] == "no-store"


def _sign_in(client, email, password=factories.PASSWORD):
    response = client.post(LOGIN, json={"email": email, "password": password})
    assert response.status_code == 200, response.get_data(as_text=True)
    return factories.bearer(response.get_json()["accessToken"])


def test_a_new_password_ends_the_tokens_issued_before_it(app, client):
    with app.app_context():
        factories.user("me@example.com")
    before = _sign_in(client, "me@example.com")
    assert client.post("/api/backtest/run", json={}, headers=before).status_code == 200
    with app.app_context():
        factories.users.create("me@example.com", "a-brand-new-password", factories.hasher())
    asserts.unauthorized(client.post("/api/backtest/run", json={}, headers=before), True)
    after = _sign_in(client, "me@example.com", "a-brand-new-password")
    assert client.post("/api/backtest/run", json={}, headers=after).status_code == 200


def test_a_token_never_names_a_later_holder_of_its_id(app, client):
    """SQLite gives a deleted last row's id to the next row: a token of the deleted account must
    not sign in as whoever gets the id next (simulated on PostgreSQL by reusing it outright)."""
    with app.app_context():
        admin = factories.user("admin@example.com", role="admin")
    old_token = _sign_in(client, "admin@example.com")
    with app.app_context():
        User.delete_by_id(admin.id)
        User.create(id=admin.id, email="next@example.com", password_hash="x", role="admin")
    asserts.unauthorized(client.get("/api/admin/users", headers=old_token), invalid_token=True)


def test_a_registration_after_a_deletion_gets_no_older_token(app, client):
    first = client.post(REGISTER, json={"email": "first@example.com", "password": "password-1"})
    old = factories.bearer(first.get_json()["accessToken"])
    with app.app_context():
        User.delete_by_id(first.get_json()["user"]["id"])
    second = client.post(REGISTER, json={"email": "second@example.com", "password": "password-1"})
    assert second.status_code == 200
    asserts.unauthorized(client.post("/api/backtest/run", json={}, headers=old), True)
    new = factories.bearer(second.get_json()["accessToken"])
    assert client.post("/api/backtest/run", json={}, headers=new).status_code == 200


def test_a_signed_token_without_the_stamp_is_refused(app, client):
    import jwt as pyjwt

    with app.app_context():
        user = factories.user("me@example.com")
    token = _sign_in(client, "me@example.com")["Authorization"].split()[1]
    claims = pyjwt.decode(token, app.config["JWT_SECRET_KEY"], algorithms=["HS256"])
    assert claims["stamp"]
    del claims["stamp"]
    stampless = pyjwt.encode(claims, app.config["JWT_SECRET_KEY"], algorithm="HS256")
    assert claims["sub"] == str(user.id)
    asserts.unauthorized(
        client.post("/api/backtest/run", json={}, headers=factories.bearer(stampless)), True
    )


@pytest.mark.parametrize("scheme", ["bearer", "BEARER", "beArer"])
def test_the_bearer_scheme_is_case_insensitive(client, people, scheme):
    token = people["admin"][1]["Authorization"].split()[1]
    response = client.get("/api/admin/users", headers={"Authorization": f"{scheme} {token}"})
    assert response.status_code == 200


def test_accounts_made_before_token_stamps_sign_in_once_the_column_is_added(app, client):
    """A database made (by ``db init``, before migrations) before the stamp existed gains the
    column at ``db upgrade``; its users, stamp null, sign in and use their tokens."""
    from store import migrate
    from store.database import db

    with app.app_context():
        factories.user("old@example.com")
        db.execute_sql('ALTER TABLE "user" DROP COLUMN "token_stamp"')
        db.execute_sql(f'DROP TABLE "{migrate.HISTORY_TABLE}"')
        db.close()
        assert "001_release_0_1_0" in migrate.upgrade(app.config["DATABASE_URL"])
        db.execute_sql('UPDATE "user" SET "token_stamp" = NULL')
    token = _sign_in(client, "old@example.com")
    assert client.post("/api/backtest/run", json={}, headers=token).status_code == 200


def test_password_hashes_run_at_most_the_configured_number_at_once(make_app, monkeypatch):
    """Each scrypt hash holds 32 MiB at the default cost: a flood of logins computes at most
    PASSWORD_HASH_CONCURRENCY of them at once per process, the others wait their turn."""
    import hashlib
    import threading

    app = make_app(
        PASSWORD_HASH_CONCURRENCY=2,
        PASSWORD_HASH_QUEUE=6,  # room for all eight: they wait, none is refused
        RATELIMIT_AUTH="100 per minute",
        RATELIMIT_LOGIN_FAILURES="100 per minute",  # eight attempts at once on one account
    )
    with app.app_context():
        factories.user("me@example.com")
    running, most = [0], [0]
    lock = threading.Lock()
    original = hashlib.scrypt

    def watched(*args, **kwargs):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        try:
            time.sleep(0.05)  # long enough for the other threads to pile up
            return original(*args, **kwargs)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(hashlib, "scrypt", watched)
    statuses = []
    start = threading.Barrier(8)

    def one_login():
        start.wait()
        body = {"email": "me@example.com", "password": factories.PASSWORD}
        statuses.append(app.test_client().post(LOGIN, json=body).status_code)

    threads = [threading.Thread(target=one_login) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert statuses == [200] * 8
    assert most[0] == 2


def test_a_token_is_verified_once_then_remembered_while_it_holds(app, client, people, monkeypatch):
    """The second request with a token skips PyJWT's decoding; a remembered token whose ``exp``
    has passed is verified again; the account is read at every request all the same."""
    decoded = []
    real = JWTManager._decode_jwt_from_config

    def counting(self, *args, **kwargs):
        decoded.append(args[0])
        return real(self, *args, **kwargs)

    monkeypatch.setattr(JWTManager, "_decode_jwt_from_config", counting)
    user, headers = people["pro"]
    for _ in range(3):
        assert client.get("/api/v1/data/usage", headers=headers).status_code == 200
    assert len(decoded) == 1
    remembered = app.extensions["verified_tokens"].claims
    (claims,) = remembered.values()
    claims["exp"] = 0  # as if its lifetime had passed since
    assert client.get("/api/v1/data/usage", headers=headers).status_code == 200
    assert len(decoded) == 2  # verified afresh (and still valid by the real clock)
    with app.app_context():
        User.update(status="suspended").where(User.id == user.id).execute()
    asserts.problem(client.get("/api/v1/data/usage", headers=headers), 403, "account-suspended")


def test_only_verified_tokens_are_remembered(app, client, people):
    _, headers = people["pro"]
    token = headers["Authorization"].split()[1]
    forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    for _ in range(2):
        response = client.get("/api/v1/data/usage", headers=factories.bearer(forged))
        assert response.status_code == 401
    assert not app.extensions["verified_tokens"].claims


def test_remembered_tokens_are_bounded():
    tokens, config = VerifiedTokens(max_entries=2), {"JWT_SECRET_KEY": "key"}
    for name in "abc":
        tokens.put(name, config, {"sub": name, "exp": 2**40})
    assert len(tokens.claims) == 2 and tokens.get("a", config) is None
    assert tokens.get("b", config) == {"sub": "b", "exp": 2**40}
    assert tokens.get("b", {"JWT_SECRET_KEY": "another key"}) is None


def test_a_token_without_exp_is_refused_and_never_remembered(app, client, people):
    """A token signed with the service's key but without ``exp`` (good for ever were it
    accepted) is a 401 wherever it is sent, every time: it is never remembered either."""
    import jwt as pyjwt

    token = people["pro"][1]["Authorization"].split()[1]
    claims = pyjwt.decode(token, app.config["JWT_SECRET_KEY"], algorithms=["HS256"])
    del claims["exp"]
    endless = factories.bearer(pyjwt.encode(claims, app.config["JWT_SECRET_KEY"], "HS256"))
    for _ in range(2):
        asserts.unauthorized(client.get("/api/v1/data/usage", headers=endless), True)
        asserts.unauthorized(client.get("/api/picks/today", headers=endless), True)
    assert not app.extensions["verified_tokens"].claims
    tokens, config = VerifiedTokens(), {"JWT_SECRET_KEY": "key"}
    tokens.put("a", config, {"sub": "1", "type": "access"})
    assert tokens.get("a", config) is None and not tokens.claims


def test_a_sign_in_past_the_hashing_queue_is_refused_at_once(make_app):
    """With every hashing turn taken and the queue full, one more sign-in or registration is a
    503 before its password is read, so a flood from many clients never holds every serving
    thread; once a turn frees, sign-ins go through again."""
    app = make_app(PASSWORD_HASH_CONCURRENCY=1, PASSWORD_HASH_QUEUE=1)
    client = app.test_client()
    with app.app_context():
        factories.user("me@example.com")
    hasher = app.extensions["password_hasher"]
    body = {"email": "me@example.com", "password": factories.PASSWORD}
    hasher.places.acquire()  # one sign-in hashing
    hasher.places.acquire()  # one waiting for its turn
    try:
        for path, sent in ((LOGIN, body), (REGISTER, {**body, "email": "new@example.com"})):
            response = client.post(path, json=sent)
            assert response.status_code == 503, response.get_data(as_text=True)
            assert response.mimetype == "application/problem+json"
            assert response.get_json()["type"].endswith("/problems/sign-ins-busy")
            assert response.headers["Retry-After"] == "1"
    finally:
        hasher.places.release()
    assert client.post(LOGIN, json=body).status_code == 200  # a place free again: it goes
    hasher.places.release()
    assert client.post(LOGIN, json=body).status_code == 200
    with app.app_context():
        assert not User.select().where(User.email == "new@example.com").exists()


def test_a_sign_in_refused_for_load_never_spends_its_owners_budget(make_app):
    """During a flood every sign-in of the account is refused for load (503): none of them
    counts against its 5-a-minute budget, so once a place frees its owner signs in at once
    (it got 5 × 503 and then 429s)."""
    app = make_app(
        PASSWORD_HASH_CONCURRENCY=1, PASSWORD_HASH_QUEUE=1, RATELIMIT_LOGIN_FAILURES="5 per minute"
    )
    client = app.test_client()
    with app.app_context():
        factories.user("me@example.com")
    hasher = app.extensions["password_hasher"]
    body = {"email": "me@example.com", "password": factories.PASSWORD}
    hasher.places.acquire()
    hasher.places.acquire()
    try:
        for _ in range(8):
            asserts.problem(client.post(LOGIN, json=body), 503, "sign-ins-busy")
    finally:
        hasher.places.release()
        hasher.places.release()
    assert client.post(LOGIN, json=body).status_code == 200
