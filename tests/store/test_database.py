"""The database under the service: timeouts, a database that stops answering, a file that goes."""

import os
import time

import pytest

from models.schema import create_tables
from store.database import db
from tests import asserts, factories

ON_SQLITE = not os.environ.get("TEST_DATABASE_URL")
ON_POSTGRES = not ON_SQLITE


@pytest.mark.skipif(not ON_SQLITE, reason="the SQLite file")
def test_a_deleted_sqlite_file_is_a_503_and_no_new_database(make_app, tmp_path):
    app = make_app(READINESS_CACHE_SECONDS=0)  # every probe asks the database
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
    app = make_app(DATABASE_STATEMENT_TIMEOUT=2.0)  # creating the tables fits in it, busy or not

    @app.get("/slow")
    def slow():
        db.execute_sql("SELECT pg_sleep(60)")
        return {}

    client = app.test_client()
    started = time.monotonic()
    response = client.get("/slow")
    assert time.monotonic() - started < 30  # cancelled, not slept out, however busy the machine
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


@pytest.mark.skipif(not ON_SQLITE, reason="SQLite's write lock")
def test_a_write_transaction_is_not_refused_after_another_connection_writes(make_app, tmp_path):
    """A transaction that reads, then writes, while another connection writes (a Pro client's
    usage counter, say): deferred, its snapshot could not become a write and SQLite refused it
    at once ("database is locked"). Every transaction begins IMMEDIATE: the other writer waits
    for it instead, and both writes land."""
    import sqlite3

    from models import DataVersion

    app = make_app()
    other = sqlite3.connect(tmp_path / "test.db", timeout=0)
    try:
        with app.app_context(), db.atomic():
            DataVersion.select().count()  # the transaction has read
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                other.execute("INSERT INTO data_version (id, value) VALUES (99, 1)")
            DataVersion.create(id=98, value=1)
        other.execute("INSERT INTO data_version (id, value) VALUES (99, 1)")
        other.commit()
    finally:
        other.close()
    with app.app_context():
        assert {row.id for row in DataVersion.select()} >= {98, 99}


@pytest.mark.skipif(not ON_SQLITE, reason="SQLite's write lock")
@pytest.mark.parametrize("pooled", [True, False])
def test_every_sqlite_database_begins_its_transactions_immediate(tmp_path, pooled):
    """The request path (pooled), CLI commands and the worker open the same kind of database."""
    import sqlite3

    from store.database import open_database

    path = tmp_path / "any.db"
    sqlite3.connect(path).close()
    database = open_database(f"sqlite:///{path}", pooled=pooled)
    other = sqlite3.connect(path, timeout=0)
    try:
        with database.atomic(), pytest.raises(sqlite3.OperationalError, match="locked"):
            other.execute("CREATE TABLE t (x)")
    finally:
        other.close()
        database.close()


def test_a_rollback_runs_what_was_left_for_it_and_a_commit_forgets_it(ctx):
    """``after_rollback`` (store.versioning.TransactionEnds), peewee's ``after_commit``'s
    counterpart: called once if the transaction rolls back, never once it commits, nor outside
    a transaction; a savepoint's rollback is not the transaction's."""
    ran = []
    with pytest.raises(RuntimeError), db.atomic():
        db.after_rollback(lambda: ran.append("rolled back"))
        with db.atomic():  # a savepoint, released
            db.after_rollback(lambda: ran.append("inner, rolled back"))
        raise RuntimeError("the change fails")
    assert ran == ["rolled back", "inner, rolled back"]
    with db.atomic():
        db.after_rollback(lambda: ran.append("committed"))
        with pytest.raises(RuntimeError), db.atomic():  # a savepoint rolled back
            raise RuntimeError("a part fails")
    with pytest.raises(RuntimeError), db.atomic():
        raise RuntimeError("a later transaction fails")
    db.after_rollback(lambda: ran.append("outside"))
    assert ran == ["rolled back", "inner, rolled back"]
