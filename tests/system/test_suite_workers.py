"""The suite under pytest-xdist: each worker's PostgreSQL database and Redis database are its own,
made from the ones the run was given (``helpers.worker_settings``); what they share, such as
the demo world, is made once (``helpers.built_once``)."""

import os

import psycopg2
import pytest

from models import DataVersion, Match
from store import migrate
from store.database import db
from tests import factories, helpers


def test_a_worker_takes_the_redis_databases_after_the_one_given():
    given = {"RATELIMIT_STORAGE_URI": "redis://127.0.0.1:6379/2"}
    assert helpers.worker_settings("gw0", given) == {
        "RATELIMIT_STORAGE_URI": "redis://127.0.0.1:6379/2"
    }
    assert helpers.worker_settings("gw3", given) == {
        "RATELIMIT_STORAGE_URI": "redis://127.0.0.1:6379/5"
    }
    bare = {"RATELIMIT_STORAGE_URI": "redis://127.0.0.1:6379"}
    assert helpers.worker_settings("gw1", bare)["RATELIMIT_STORAGE_URI"].endswith(":6379/1")


def test_nothing_is_changed_where_nothing_is_shared():
    assert helpers.worker_settings("gw1", {"RATELIMIT_STORAGE_URI": "memory://"}) == {}
    assert helpers.worker_settings("gw1", {}) == {}


@pytest.mark.skipif(
    not os.environ.get("TEST_DATABASE_URL"), reason="needs TEST_DATABASE_URL (PostgreSQL)"
)
def test_a_worker_gets_a_postgresql_database_of_its_own_made_when_missing():
    url = os.environ["TEST_DATABASE_URL"]
    made = helpers.worker_settings("gw7", {"TEST_DATABASE_URL": url})["TEST_DATABASE_URL"]
    assert made.rsplit("/", 1)[1] == f"{url.rsplit('/', 1)[1]}_gw7"
    connection = psycopg2.connect(made)  # it exists
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_database()")
            assert cursor.fetchone()[0].endswith("_gw7")
    finally:
        connection.close()
    assert helpers.worker_settings("gw7", {"TEST_DATABASE_URL": url})["TEST_DATABASE_URL"] == made


def test_what_workers_share_is_made_once_and_read_by_the_others(tmp_path):
    made = []

    def make(folder):
        made.append(folder)
        (folder / "world.db").write_text("the world")
        return {"path": folder / "world.db", "rows": b"\x00rows"}

    first = helpers.built_once(tmp_path, "world", make)
    second = helpers.built_once(tmp_path, "world", make)
    assert made == [tmp_path / "world"]
    assert second == first and second is not first  # read back, not made again
    assert second["path"].read_text() == "the world"


def test_each_test_starts_on_empty_tables_whose_ids_start_at_one(make_app):
    """The reset between tests (``helpers.reset_tables`` on PostgreSQL, a copy of the empty
    schema on SQLite) leaves no row behind and restarts every table's ids."""
    for _ in range(2):
        app = make_app()
        with app.app_context():
            assert all(
                model.select().count() == 0 for model in helpers.TABLES if model is not DataVersion
            )
            first = factories.user("first@example.com")
            factories.match()
            assert first.id == 1 and Match.select(Match.id).scalar() == 1
            # The migration history is kept, and numbers its next row after its last.
            history = f'"{migrate.HISTORY_TABLE}"'
            row = f"INSERT INTO {history} (name, migrated_at) VALUES ('999_next', {db.param})"
            db.execute_sql(row, (helpers.NOW,))
            db.execute_sql(f"DELETE FROM {history} WHERE name = '999_next'")


@pytest.fixture(scope="module")
def made_once():
    return object()


def test_a_module_with_a_module_fixture_is_one_unit_of_work_and_other_tests_one_each(
    request, made_once
):
    shared = helpers.modules_with_module_fixtures(request.config.rootpath / "tests")
    assert shared >= {
        "tests/system/test_suite_workers.py",  # this one (made_once)
        "tests/webhooks/test_events.py",
        "tests/operations/test_demo.py",
    }
    assert "tests/accounts/test_auth.py" not in shared
    here = "tests/system/test_suite_workers.py::test_nothing_is_changed_where_nothing_is_shared"
    assert helpers.work_unit(here, shared) == "tests/system/test_suite_workers.py"
    elsewhere = "tests/accounts/test_auth.py::test_the_bearer_scheme_is_case_insensitive[bearer]"
    assert helpers.work_unit(elsewhere, shared) == elsewhere
