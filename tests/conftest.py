"""Fixtures: a fresh app and database per test, on SQLite or on TEST_DATABASE_URL."""

import os

import pytest

from app import create_app
from store.database import db
from store.schema import create_tables, drop_tables
from tests import factories
from web.extensions import limiter

SECRET = "test-only-secret-that-is-long-enough-for-hs256-0123456789"
#: The tests' ledger signing key (never a real one): checkpoints are signed test.example/ledger.
LEDGER_KEY = "PRIVATE+KEY+test.example/ledger+cbd80a5f+AQ9reeSsP+qsBMSentkNy+zelPtilYQJsf4X/Ra0VvGr"


def test_database_url(tmp_path):
    """TEST_DATABASE_URL when CI gives one (the suite may wipe it), else a fresh SQLite file."""
    return os.environ.get("TEST_DATABASE_URL") or f"sqlite:///{tmp_path / 'test.db'}"


def settings(tmp_path, **overrides):
    """Test configuration: nothing from a developer's own environment leaks in but the storage."""
    return {
        "APP_ENV": "test",
        "DATABASE_URL": test_database_url(tmp_path),
        "JWT_SECRET_KEY": SECRET,
        "LEDGER_SIGNING_KEY": LEDGER_KEY,
        "PUBLIC_BASE_URL": None,
        "ACCESS_TOKEN_EXPIRES": 3600,
        "PASSWORD_HASH_METHOD": "scrypt:1024:8:1",  # real scrypt, at a cost tests can afford
        "RATELIMIT_ENABLED": True,
        "RATELIMIT_STORAGE_URI": os.environ.get("RATELIMIT_STORAGE_URI", "memory://"),
        "RATELIMIT_STRATEGY": "sliding-window-counter",
        "PROXY_FIX_HOPS": 0,  # tests playing several clients by X-Forwarded-For set 1
        "RATELIMIT_PUBLIC": "120 per minute",
        "RATELIMIT_AUTH": "20 per minute",
        "RATELIMIT_REGISTER": "5 per hour",
        **overrides,
    }


@pytest.fixture
def make_app(tmp_path):
    """Build an app with overrides; its tables are recreated and its rate-limit counts cleared."""

    def build(**overrides):
        app = create_app(settings(tmp_path, **overrides))
        with app.app_context():
            drop_tables()
            create_tables()
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
