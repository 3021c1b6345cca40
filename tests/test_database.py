"""The database under the service: timeouts, a database that stops answering, a file that goes."""

import os
import time

import pytest

from store.database import db
from store.schema import create_tables
from tests import asserts, factories

ON_SQLITE = not os.environ.get("TEST_DATABASE_URL")
ON_POSTGRES = not ON_SQLITE


@pytest.mark.skipif(not ON_SQLITE, reason="the SQLite file")
def test_a_deleted_sqlite_file_is_a_503_and_no_new_database(make_app, tmp_path):
    app = make_app()
    client = app.test_client()
    with app.app_context():
        factories.user("me@example.com")
    body = {"email": "me@example.com", "password": factories.PASSWORD}
    assert client.post("/api/auth/login", json=body).status_code == 200  # a pooled connection
    path = tmp_path / "test.db"
    for suffix in ("", "-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)
    response = client.post("/api/auth/login", json=body)
    asserts.problem(response, 503, "service-unavailable")
    assert int(response.headers["Retry-After"]) >= 1
    asserts.problem(client.get("/readyz"), 503, "service-unavailable")
    assert not path.exists()  # nothing made a new, empty database
    with app.app_context():
        create_tables()  # as `db upgrade` would: the only ways a database comes into being
    assert path.exists() and client.get("/readyz").status_code == 200
    asserts.unauthorized(client.post("/api/auth/login", json=body))  # an empty database now


@pytest.mark.skipif(not ON_SQLITE, reason="the SQLite file")
def test_only_db_init_creates_the_sqlite_file(make_app, tmp_path):
    app = make_app()
    app.config["DATABASE_URL"] = f"sqlite:///{tmp_path / 'fresh.db'}"
    from store.database import open_database

    db.initialize(open_database(app.config["DATABASE_URL"]))
    asserts.problem(app.test_client().get("/api/picks/today"), 503, "service-unavailable")
    assert not (tmp_path / "fresh.db").exists()


@pytest.mark.skipif(not ON_POSTGRES, reason="PostgreSQL's statement timeout")
def test_a_statement_past_the_timeout_is_a_503(make_app):
    app = make_app(DATABASE_STATEMENT_TIMEOUT=0.3)

    @app.get("/slow")
    def slow():
        db.execute_sql("SELECT pg_sleep(5)")
        return {}

    client = app.test_client()
    started = time.monotonic()
    response = client.get("/slow")
    assert time.monotonic() - started < 3
    asserts.problem(response, 503, "service-unavailable")
    assert int(response.headers["Retry-After"]) >= 1
    assert client.get("/readyz").status_code == 200  # the database itself is fine


@pytest.mark.skipif(not ON_SQLITE, reason="SQLite's lock wait")
def test_a_write_lock_held_past_the_timeout_is_a_503(make_app, tmp_path):
    import sqlite3

    app = make_app(DATABASE_STATEMENT_TIMEOUT=0.2)
    holder = sqlite3.connect(tmp_path / "test.db")
    holder.execute("BEGIN IMMEDIATE")
    try:
        response = app.test_client().post(
            "/api/auth/register", json={"email": "w@example.com", "password": "password-1"}
        )
    finally:
        holder.rollback()
        holder.close()
    asserts.problem(response, 503, "service-unavailable")


def test_a_wrong_statement_is_still_a_500(make_app):
    app = make_app()

    @app.get("/wrong")
    def wrong():
        db.execute_sql("SELECT no_such_column FROM data_version")
        return {}

    asserts.problem(app.test_client().get("/wrong"), 500, "internal-error")
