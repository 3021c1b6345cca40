"""Fixtures: a fresh app and database per test, on SQLite or on TEST_DATABASE_URL; the demo world
built once and copied for each module that reads it."""

import gc
import os

import pytest

from app import create_app
from models.schema import create_tables
from store.database import db
from tests import factories, helpers
from tests.helpers import LEDGER_KEY, SECRET, settings, test_database_url  # noqa: F401 (old homes)
from tests.source_servers import FootballDataServer
from tests.syncing import Waits
from web.extensions import limiter


def pytest_configure(config):
    """Under pytest-xdist (``-n``), each worker gets a database and a Redis database of its own,
    made from TEST_DATABASE_URL and RATELIMIT_STORAGE_URI (``test`` → ``test_gw1``, Redis
    ``/0`` → ``/1``): the suite empties them between tests, so workers never share one."""
    worker = getattr(config, "workerinput", {}).get("workerid")
    if worker is not None:
        os.environ.update(helpers.worker_settings(worker, os.environ))
    # A test run makes millions of short-lived objects; at Python's default threshold (a
    # collection every 700 more allocations than frees) the cyclic collector ran about 9,000
    # times in 400 tests, one in a hundred of them a full collection walking every module: a
    # tenth of the run. Every 100,000 here, the older generations after 10 of the one below as
    # by default (so about 140 times less often). Tests that measure memory call gc.collect().
    gc.set_threshold(100_000, 10, 10)


def pytest_collection_finish(session):
    """Every object made by then (the modules, their constants, the collected tests) lives until
    the run ends: set them apart, so no collection (the tests' own ``gc.collect()`` included)
    walks them again."""
    gc.collect()
    gc.freeze()


@pytest.hookimpl(optionalhook=True)  # known only where pytest-xdist is loaded
def pytest_xdist_make_scheduler(config, log):
    """Under pytest-xdist (``-n``), the tests of a module with a module-scoped fixture (a demo
    world's copy, a model run, servers) run on one worker, which makes the fixture once; every
    other test goes to whichever worker is free (``helpers.SharedFixtureScheduling``)."""
    if config.getvalue("dist") == "load":
        return helpers.SharedFixtureScheduling(config, log)
    return None


@pytest.fixture(scope="session")
def schema_template(tmp_path_factory):
    """An SQLite file holding the empty schema, made once per run and copied for each test
    (None on TEST_DATABASE_URL, where each test empties the tables of the one database: see
    ``helpers.reset_tables``)."""
    if os.environ.get("TEST_DATABASE_URL"):
        return None
    folder = tmp_path_factory.mktemp("schema-template")
    with create_app(settings(folder)).app_context():
        create_tables()
    db.close()
    return folder / "test.db"


@pytest.fixture
def make_app(tmp_path, schema_template):
    """Build an app with overrides on empty tables (on SQLite a copy of the schema made once,
    else the tables emptied), its rate-limit counts cleared."""

    def build(**overrides):
        config = settings(tmp_path, **overrides)
        if schema_template and config["DATABASE_URL"] == test_database_url(tmp_path):
            helpers.copy_sqlite(schema_template, tmp_path / "test.db")
            app = create_app(config)
        else:
            app = create_app(config)
            with app.app_context():
                helpers.reset_tables()
        limiter.reset()
        return app

    yield build
    if not db.is_closed():
        db.close()


@pytest.fixture
def app(make_app):
    """The app with the default configuration."""
    return make_app()


@pytest.fixture
def client(app):
    """A test client for ``app``."""
    return app.test_client()


@pytest.fixture
def ctx(app):
    """An application context, for tests that build data through the services."""
    with app.app_context():
        yield


@pytest.fixture
def people(app):
    """One signed-in user of each kind, as {kind: (user, auth headers)}."""
    with app.app_context():
        return factories.people()


@pytest.fixture(scope="session")
def demo_template(request, tmp_path_factory):
    """The demo world at ``helpers.NOW``, built once for the whole run, however many workers run
    it (``helpers.built_once``): a SQLite file, or on TEST_DATABASE_URL a snapshot of the one
    database's rows (``helpers.Snapshot``), which each worker restores into its own database."""
    shared = tmp_path_factory.getbasetemp()
    if hasattr(request.config, "workerinput"):
        shared = shared.parent  # each worker's base folder sits in the run's
    return helpers.built_once(shared, "demo-template", helpers.demo_template)


@pytest.fixture(scope="session")
def demo_world(tmp_path_factory, demo_template):
    """``demo_world(name, clock=None, **overrides)``: an app on its own copy of the demo world at
    ``helpers.NOW`` (see ``helpers.demo_world``); for module-scoped fixtures."""

    def build(name, clock=None, **overrides):
        return helpers.demo_world(tmp_path_factory.mktemp(name), demo_template, clock, **overrides)

    return build


@pytest.fixture
def waits():
    """A sync policy's sleep that records what it was asked to wait and never waits."""
    return Waits()


@pytest.fixture
def football_data():
    """football-data.co.uk's files, served by a local server the test fills."""
    with FootballDataServer() as server:
        yield server
