"""Schema migrations: the steps make exactly the models' schema, step 001 exactly the schema of
the release before migrations, a database that release made (with its data) upgrades and then
answers on every endpoint, two runners never race, and a database behind the newest step
answers 503 ``schema-outdated`` rather than 500s.

Each test runs on the suite's database: a temporary SQLite file, or TEST_DATABASE_URL.
"""

import os
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import psycopg2
import pytest

from models import Match, Operation, User
from store import migrate
from store.database import db, is_sqlite
from tests import asserts, factories
from tests.helpers import LEDGER_KEY, SECRET, WEBHOOK_KEY
from tests.schema_state import differences, schema_of, wipe
from web.paths import id_param

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
RELEASE = "4826b13"
#: The instant the release database's world was built around (its demo "today").
RELEASE_NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
PASSWORD = "correct-horse-battery"  # the release fixture's accounts


def load_release(url: str) -> None:
    """The database the release before migrations made, with its data, from the fixture dump
    (see tests/fixtures/make_release_database.py for how it was produced)."""
    wipe(url)
    if url.startswith("sqlite"):
        script = (FIXTURES / f"release_{RELEASE}.sqlite.sql").read_text()
        connection = sqlite3.connect(url.split(":///", 1)[1])
        connection.executescript(script)
        connection.close()
        return
    dump = (FIXTURES / f"release_{RELEASE}.postgres.sql").read_text()
    script = "\n".join(line for line in dump.splitlines() if not line.startswith("\\"))
    connection = psycopg2.connect(url)  # its own session: the dump empties the search path
    with connection, connection.cursor() as cursor:
        cursor.execute(script)
    connection.close()


@pytest.fixture
def url(app):
    return app.config["DATABASE_URL"]


def test_the_migrations_make_exactly_the_models_schema(app, url):
    """A fresh database upgraded to the newest step has the schema ``models/schema.py`` makes
    from the models: columns, types, nullability, defaults, keys, indexes, triggers and
    functions. A model changed without a migration (or the reverse) fails here."""
    models_schema = schema_of(url)  # the app fixture made it with create_tables()
    wipe(url)
    assert migrate.upgrade(url) == migrate.steps()
    found = differences(models_schema, schema_of(url), ("models", "migrations"))
    assert not found, "the migrations and the models disagree:\n" + "\n".join(found)


def test_the_first_step_is_the_release_schema(app, url):
    """Step 001 makes the schema the release before migrations made with its ``db init``."""
    load_release(url)
    release = schema_of(url)
    wipe(url)
    assert migrate.upgrade(url, "001_release_0_1_0") == ["001_release_0_1_0"]
    found = differences(release, schema_of(url), (RELEASE, "step 001"))
    assert not found, f"001 differs from {RELEASE}:\n" + "\n".join(found)


@pytest.mark.skipif(
    "postgres" in os.environ.get("TEST_DATABASE_URL", ""), reason="PostgreSQL never reuses an id"
)
def test_step_004_keeps_the_webhook_rows_and_gives_no_id_twice(app, url):
    """On SQLite the webhook tables are made again with AUTOINCREMENT, their rows and indexes
    kept; then deleting the newest event (an endpoint's ping, with its endpoint) frees no id."""
    models_schema = schema_of(url)
    wipe(url)
    migrate.upgrade(url, "003_worker_beat")
    path = url.split(":///", 1)[1]
    now = "2026-11-20 12:00:00"
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA foreign_keys = ON")
    connection.executescript(
        f"""
        INSERT INTO "user" (id, email, password_hash, role, plan, status, created_at, updated_at)
            VALUES (1, 'pro@example.com', 'x', 'user', 'pro', 'active', '{now}', '{now}');
        INSERT INTO webhook_endpoint (id, user_id, url, description, events, secret, enabled,
            created_at, updated_at) VALUES
            (1, 1, 'https://a.example/h', '', '[]', 's1', 1, '{now}', '{now}'),
            (2, 1, 'https://b.example/h', '', '[]', 's2', 1, '{now}', '{now}');
        INSERT INTO event (id, type, occurred_at, audience, endpoint_id) VALUES
            (1, 'pick.settled', '{now}', 'subscribers', NULL),
            (2, 'ping', '{now}', 'subscribers', 2);
        INSERT INTO delivery (id, event_id, endpoint_id, status, attempts, created_at) VALUES
            (1, 1, 1, 'pending', 0, '{now}'), (2, 2, 2, 'succeeded', 1, '{now}');
        """
    )
    tables = ("webhook_endpoint", "event", "delivery")

    def rows():
        return {
            t: connection.execute(f'SELECT * FROM "{t}" ORDER BY id').fetchall() for t in tables
        }

    before = rows()
    assert migrate.upgrade(url)[0] == "004_ids_never_reused"  # and the steps after it
    assert rows() == before
    assert connection.execute("PRAGMA foreign_key_check").fetchall() == []
    found = differences(models_schema, schema_of(url), ("models", "migrations"))
    assert not found, "\n".join(found)
    connection.execute("DELETE FROM webhook_endpoint WHERE id = 2")  # its ping and delivery too
    assert [row[0] for row in connection.execute("SELECT id FROM event")] == [1]
    new = connection.execute(
        "INSERT INTO event (type, occurred_at, audience) VALUES ('ping', ?, 'subscribers')", (now,)
    ).lastrowid
    assert new == 3  # 2 again before the step
    connection.close()


def test_a_database_newer_than_the_models_is_told_from_one_older(app, url):
    """The comparison sees a missing column, index and trigger (so it can fail at all)."""
    before = schema_of(url)
    with app.app_context():
        db.execute_sql('ALTER TABLE "prediction" DROP COLUMN "margin_method"')
        db.execute_sql('DROP INDEX "operation_kind_scheduled_for"')
        trigger = "ledger_seal_no_update" if is_sqlite() else "ledger_seal_append_only"
        db.execute_sql(f'DROP TRIGGER "{trigger}"' + ("" if is_sqlite() else ' ON "ledger_seal"'))
    found = "\n".join(differences(before, schema_of(url)))
    assert "prediction.columns.margin_method" in found
    assert "operation.indexes.operation_kind_scheduled_for" in found
    assert f"triggers.{trigger}" in found


def _headers(app, email):
    with app.app_context():
        return factories.bearer(factories.token(User.get(User.email == email)))


def _ids(app):
    with app.app_context():
        upcoming = Match.select().where(Match.status == "scheduled").order_by(Match.kickoff_at)
        return {
            "match_id": Match.select().order_by(Match.id).first().id,
            "upcoming": upcoming.first().id,
            "slug": Match.select().order_by(Match.id).first().slug,
            "operation_id": Operation.select().order_by(Operation.id).first().id,
        }


def test_a_release_database_with_data_upgrades_and_every_endpoint_answers(make_app):
    """The release before migrations made this database and its data; before ``db upgrade``
    the service answers 503 ``schema-outdated`` (it answered 500s on new columns), after it
    every endpoint answers as it should, with the release's accounts and rows."""
    app = make_app(
        CLOCK=lambda: RELEASE_NOW,
        RATELIMIT_PUBLIC="1000 per minute",
        RATELIMIT_AUTH="1000 per minute",
        WEBHOOK_ALLOW_PRIVATE=True,
    )
    url = app.config["DATABASE_URL"]
    load_release(url)
    client = app.test_client()

    body = asserts.problem(client.get("/api/picks/today"), 503, "schema-outdated")
    assert "flask db upgrade" in body["detail"]
    assert int(client.get("/api/picks/today").headers["Retry-After"]) >= 1
    asserts.problem(client.get("/readyz"), 503, "schema-outdated")
    browser = {"Accept": "text/html"}
    assert client.get("/", headers=browser).status_code == 503  # the landing page reads matches
    assert client.get("/").status_code == 200  # the JSON index reads nothing
    assert client.get("/healthz").status_code == 200
    assert client.get("/openapi.json").status_code == 200

    result = app.test_cli_runner().invoke(args=["db", "upgrade"])
    assert result.exit_code == 0, result.output
    assert "applied 001_release_0_1_0" in result.output
    assert "applied 002_since_release" in result.output

    login = {"email": "pro@example.com", "password": PASSWORD}
    assert client.post("/api/auth/login", json=login).status_code == 200  # the release's hash
    pro, admin = _headers(app, "pro@example.com"), _headers(app, "admin@example.com")
    ids = _ids(app)
    match_path = f"/api/matches/{ids['match_id']}"
    gets = {
        "/readyz": None,
        "/api/picks/today": pro,
        match_path: pro,
        f"/api/matches/{ids['upcoming']}": None,
        "/api/explorer/slate": pro,
        f"/api/explorer/comparable?matchId={ids['match_id']}": pro,
        "/api/track-record/by-competition-type": None,
        "/api/track-record/ledger": None,
        "/api/track-record/ledger/entries": None,
        f"/api/v1/seo/predictions/{ids['slug']}": None,
        "/api/v1/data/catalog": pro,
        "/api/v1/data/matches": pro,
        "/api/v1/data/matches?include=odds,predictions,picks,intelligence": pro,
        "/api/v1/data/track-record": pro,
        "/api/v1/data/usage": pro,
        "/api/v1/data/webhooks": pro,
        "/api/v1/ops/health/services": admin,
        f"/api/v1/ops/operations/{ids['operation_id']}": admin,
        f"/api/v1/ops/operations/{ids['operation_id']}/result": admin,
        "/api/admin/users": admin,
    }
    for path, headers in gets.items():
        response = client.get(path, headers=headers)
        assert response.status_code == 200, (path, response.get_data(as_text=True)[:500])
    for page in ("/", "/track-record", "/results"):
        assert client.get(page, headers=browser).status_code == 200, page
    posts = {
        "/api/backtest/run": ({}, pro),
        "/api/v1/data/exports": ({"resource": "matches", "format": "json"}, pro),
        "/api/v1/ops/operations/settlement-runs": ({"lastDays": 30}, admin),
        "/api/v1/ops/operations/calibration-runs": ({"windowDays": 90}, admin),
        "/api/v1/ops/operations/intelligence-refreshes": ({"matchId": ids["upcoming"]}, admin),
    }
    for path, (json, headers) in posts.items():
        response = client.post(path, json=json, headers=headers)
        assert response.status_code in (200, 201, 202), (path, response.get_data(as_text=True))
        response.get_data()  # an export streams: read it to the end
    # A new account, and the tables the upgrade added, written and read.
    account = {"email": "new@example.com", "password": PASSWORD}
    assert client.post("/api/auth/register", json=account).status_code in (200, 201)
    hook = {"url": "http://127.0.0.1:9/hooks", "events": ["pick.settled"]}
    made = client.post("/api/v1/data/webhooks", json=hook, headers=pro)
    assert made.status_code == 201, made.get_data(as_text=True)
    endpoint_id = made.get_json()["id"]
    # Every route answers without a 500 (ids that do not exist are 404s); deletions last.
    calls = []
    for rule in app.url_map.iter_rules():
        path = (
            rule.rule.replace(id_param("match_id"), str(ids["match_id"]))
            .replace(id_param("operation_id"), str(ids["operation_id"]))
            .replace(id_param("endpoint_id"), str(endpoint_id))
            .replace(id_param("delivery_id"), "1")
            .replace(id_param("user_id"), "1")
            .replace(id_param("contradiction_id"), "1")
            .replace(id_param("subscription_id"), "1")
            .replace("<token>", "1.not-a-signature")
            .replace("<slug:slug>", ids["slug"])
            .replace("<day:day>", "2026-11-20")
            .replace("<name>", "not-found")
            .replace("<league_code:code>", "E0")
            .replace("<path:filename>", "none.css")
            .replace("<path:tile>", "0/000")
        )
        calls += [(method, path) for method in rule.methods - {"HEAD", "OPTIONS"}]
    assert not [path for _method, path in calls if "<" in path]  # every parameter filled
    for method, path in sorted(calls, key=lambda call: (call[0] == "DELETE", call)):
        headers = admin if "/ops" in path or "/admin" in path else pro
        response = client.open(path, method=method, json={}, headers=headers)
        response.get_data()
        assert response.status_code < 500, (method, path, response.get_data(as_text=True))


def _cli(url, *args, **popen):
    """``flask --app app ARGS`` in a process of its own, on the database at ``url``."""
    env = {
        **os.environ,
        "APP_ENV": "test",
        "DATABASE_URL": url,
        "JWT_SECRET_KEY": SECRET,
        "LEDGER_SIGNING_KEY": LEDGER_KEY,
        "WEBHOOK_SECRETS_KEY": WEBHOOK_KEY,
        "RATELIMIT_STORAGE_URI": "memory://",
        "LOG_LEVEL": "WARNING",
    }
    return subprocess.Popen(
        [sys.executable, "-m", "flask", "--app", "app", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        **popen,
    )


@pytest.mark.slow  # two runner processes
def test_two_runners_at_once_apply_each_step_once(app, url):
    """Two release steps started together: one applies the steps, the other waits for its
    lock and then finds nothing left to do; the history holds each step once."""
    wipe(url)
    runners = [_cli(url, "db", "upgrade") for _ in range(2)]
    outputs = [runner.communicate(timeout=120)[0] for runner in runners]
    assert [runner.returncode for runner in runners] == [0, 0], outputs
    applied = [line for output in outputs for line in output.splitlines() if "applied" in line]
    assert sorted(applied) == [f"applied {name}" for name in migrate.steps()], outputs
    with app.app_context():
        assert migrate.applied() == migrate.steps()


@pytest.mark.slow  # a runner process
def test_a_runner_waits_for_the_lock_another_holds(app, url):
    """While the migration lock is held (by another runner), ``db upgrade`` waits and changes
    nothing; once it is released, it applies the steps."""
    wipe(url)
    if url.startswith("sqlite"):
        import fcntl

        path = url.split(":///", 1)[1]
        sqlite3.connect(path).close()
        handle = open(f"{path}.migrate-lock", "a")  # noqa: SIM115 - held across the wait
        fcntl.flock(handle, fcntl.LOCK_EX)
        runner = _cli(url, "db", "upgrade")
        inode = os.fstat(handle.fileno()).st_ino
        _wait_until(lambda: _waiting_for_file_lock(inode), runner)
        assert not migrate.applied(_open(url))
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()
    else:
        holder = psycopg2.connect(url)
        holder.autocommit = True
        with holder.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s)", (migrate.ADVISORY_LOCK,))
            runner = _cli(url, "db", "upgrade")
            _wait_until(lambda: _waiting_for_advisory_lock(cursor), runner)
            assert not migrate.applied(_open(url))
            cursor.execute("SELECT pg_advisory_unlock(%s)", (migrate.ADVISORY_LOCK,))
        holder.close()
    output = runner.communicate(timeout=120)[0]
    assert runner.returncode == 0 and "applied 001_release_0_1_0" in output, output
    assert migrate.applied(_open(url)) == migrate.steps()


def _open(url):
    from store.database import open_database

    return open_database(url, pooled=False)


def _wait_until(condition, runner, limit=120.0) -> None:
    """Poll ``condition`` while ``runner`` runs (it must not end first), giving up after
    ``limit`` seconds: a bound on a hang, not a measurement."""
    deadline = time.monotonic() + limit
    while not condition():
        assert runner.poll() is None, runner.communicate()[0]
        assert time.monotonic() < deadline, "the runner never waited for the lock"
        time.sleep(0.05)


def _waiting_for_file_lock(inode: int) -> bool:
    """Whether a process waits for a lock on the file ``inode`` (Linux lists the waiters in
    /proc/locks as lines with ``->``, the file as ``major:minor:inode``)."""
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if "->" in fields and any(field.endswith(f":{inode}") for field in fields):
            return True
    return False


def _waiting_for_advisory_lock(cursor) -> bool:
    cursor.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
    return cursor.fetchone()[0] > 0


def test_the_service_answers_again_once_the_database_is_upgraded(app, url):
    """A database one step behind: 503 ``schema-outdated`` naming the command, not 500s; once
    upgraded, the same process answers without a restart."""
    with app.app_context():
        db.execute_sql(f"DELETE FROM \"{migrate.HISTORY_TABLE}\" WHERE name = '002_since_release'")
    client = app.test_client()
    body = asserts.problem(client.get("/api/picks/today"), 503, "schema-outdated")
    assert "002_since_release" in body["detail"] and "flask db upgrade" in body["detail"]
    assert migrate.upgrade(url) == ["002_since_release"]  # adopts what exists already
    assert client.get("/api/picks/today").status_code == 200


def test_the_worker_refuses_to_start_on_a_database_behind(app, url, monkeypatch):
    """The worker's tasks would fail on what an old schema lacks: it exits naming the command
    (the platform starts it again after the release step)."""
    import worker

    with app.app_context():
        db.execute_sql(f"DELETE FROM \"{migrate.HISTORY_TABLE}\" WHERE name = '002_since_release'")
    environment = {
        "APP_ENV": "test",
        "DATABASE_URL": url,
        "JWT_SECRET_KEY": SECRET,
        "LEDGER_SIGNING_KEY": LEDGER_KEY,
        "RATELIMIT_STORAGE_URI": "memory://",
    }
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(
        SystemExit, match=r"pending migration steps: 002_since_release\): run `flask db upgrade`"
    ):
        worker.main()


def test_step_016_gives_the_data_version_a_tag_of_its_own_and_keeps_its_value(app, url):
    """The tag the copy on Redis is keyed by: written once, random per database, the version
    kept; a database whose data version was never written gets its row."""
    tags = []
    for version in (7, None):
        wipe(url)
        migrate.upgrade(url, "015_witness_cosignatures")
        with app.app_context():
            db.execute_sql('DELETE FROM "data_version"')
            if version is not None:
                db.execute_sql(f'INSERT INTO "data_version" ("id", "value") VALUES (1, {version})')
        assert migrate.upgrade(url, "016_data_version_home") == ["016_data_version_home"]
        with app.app_context():
            rows = db.execute_sql('SELECT "value", "tag", "home" FROM "data_version"').fetchall()
        ((value, tag, home),) = rows
        assert value == (version or 0) and home is None
        assert len(tag) == 32 and int(tag, 16) >= 0
        tags.append(tag)
    assert tags[0] != tags[1]


def test_the_operations_guide_lists_every_step_in_order():
    """docs/operations.md's table of steps names each file of store/migrations/, in order."""
    steps = sorted(path.stem for path in (ROOT / "store" / "migrations").glob("[0-9]*.py"))
    guide = (ROOT / "docs" / "operations.md").read_text()
    listed = [line.split("`")[1] for line in guide.splitlines() if line.startswith("| `0")]
    assert listed == steps
