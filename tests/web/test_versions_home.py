"""The data version's home (``web/versions.py``): the web processes record where they keep its
copy as they start, and a worker or a command that writes, whose own home differs, is refused
at start in one line naming the setting, since the web would not hear of its changes."""

import logging
import os

import pytest

import worker
from app import create_app
from models.versions import data_version_home
from store.database import db
from tests.helpers import settings
from web import versions

REDIS = os.environ.get("RATELIMIT_STORAGE_URI", "")

ON_REDIS = pytest.mark.skipif(
    not REDIS.startswith("redis://"), reason="needs RATELIMIT_STORAGE_URI=redis://"
)

#: A Redis no test reaches: another server than the web processes'.
ANOTHER_REDIS = "redis://127.0.0.1:1/5"


def refusal(web) -> str:
    """The one line a worker or a command is refused with, beside the web app ``web``."""
    return (
        f"Error: RATELIMIT_STORAGE_URI: the web processes keep the data version on "
        f"{versions.home(web.config)}; this process would not tell them of its changes. "
        "Start it with the same setting."
    )


@pytest.fixture
def web(make_app):
    """A web process on the suite's storage, started: its home recorded."""
    app = make_app()
    versions.record_home(app)
    return app


@pytest.fixture
def starting(monkeypatch):
    """``starting(app)``: the worker's start-up (``worker.main``) on ``app``, its consumer never
    run; the worker objects it would have run. Its logging set-up is undone after the test."""
    for name in ("huey", "picks"):
        logger = logging.getLogger(name)
        monkeypatch.setattr(logger, "handlers", list(logger.handlers))
        monkeypatch.setattr(logger, "level", logger.level)
    started = []
    monkeypatch.setattr(worker.Worker, "run", lambda self: started.append(self))

    def start(app):
        monkeypatch.setattr("app.create_app", lambda: app)
        worker.main()
        return started

    return start


def beside(tmp_path, **overrides):
    """Another process on the web's database (the one the suite names), with ``overrides``."""
    return create_app(
        settings(tmp_path, WORKER_QUEUE_URL=f"sqlite:///{tmp_path / 'queue.db'}", **overrides)
    )


def config(uri, database="sqlite:///picks.db"):
    return {"RATELIMIT_STORAGE_URI": uri, "DATABASE_URL": database, "RATELIMIT_KEY_PREFIX": "picks"}


@pytest.mark.parametrize(
    ("uri", "home"),
    [
        ("redis://:secret@Cache.Example.com/3", "redis://cache.example.com:6379/3"),
        ("redis://user:secret@cache.example.com:6379?db=3", "redis://cache.example.com:6379/3"),
        ("redis://cache.example.com", "redis://cache.example.com:6379/0"),
        ("rediss://cache.example.com:6380/1", "rediss://cache.example.com:6380/1"),
        ("redis://[::1]/2", "redis://[::1]:6379/2"),
        ("redis+unix:///run/redis.sock?db=2", "redis+unix:///run/redis.sock?db=2"),
        (
            "redis+sentinel://:secret@S2:26380,s1/primary",
            "redis+sentinel://s1:26379,s2:26380/primary",
        ),
    ],
)
def test_a_home_is_spelt_one_way_without_its_password(uri, home):
    assert versions.home(config(uri)) == f"{home} (prefix picks)"


@pytest.mark.parametrize(
    "settings_",
    [
        config("memory://"),
        config("redis+cluster://cache.example.com:7000"),
        config("redis://cache.example.com/0", database="sqlite:///:memory:"),
    ],
    ids=["memory", "cluster", "in-memory database"],
)
def test_a_process_keeping_no_copy_has_no_home(settings_):
    assert versions.home(settings_) is None


@ON_REDIS
@pytest.mark.parametrize("uri", ["memory://", ANOTHER_REDIS], ids=["no redis", "another redis"])
def test_a_worker_without_the_web_processes_redis_is_refused(web, tmp_path, starting, uri):
    with pytest.raises(SystemExit) as refused:
        starting(beside(tmp_path, RATELIMIT_STORAGE_URI=uri))
    assert refused.value.code == refusal(web) and "\n" not in refused.value.code


@ON_REDIS
def test_a_worker_with_the_web_processes_settings_starts(web, tmp_path, starting):
    assert len(starting(beside(tmp_path))) == 1


@ON_REDIS
@pytest.mark.parametrize("uri", ["memory://", ANOTHER_REDIS], ids=["no redis", "another redis"])
def test_a_command_that_writes_without_the_web_processes_redis_is_refused(web, tmp_path, uri):
    runner = beside(tmp_path, RATELIMIT_STORAGE_URI=uri).test_cli_runner()
    result = runner.invoke(args=["ops", "settle", "--last-days", "1"])
    assert result.exit_code == 1
    assert result.output == refusal(web) + "\n"
    assert "Traceback" not in result.output


@ON_REDIS
@pytest.mark.parametrize(
    "command",
    [["db", "status"], ["db", "upgrade"], ["users", "list"], ["ledger", "new-key"]],
    ids=" ".join,
)
def test_the_migrations_and_what_writes_nothing_are_never_refused(web, tmp_path, command):
    runner = beside(tmp_path, RATELIMIT_STORAGE_URI="memory://").test_cli_runner()
    result = runner.invoke(args=command)
    assert result.exit_code == 0, result.output
    assert "RATELIMIT_STORAGE_URI" not in result.output


@ON_REDIS
def test_a_command_with_the_web_processes_settings_runs(web):
    result = web.test_cli_runner().invoke(args=["ops", "settle", "--last-days", "1"])
    assert result.exit_code == 0, result.output


def test_a_web_keeping_no_copy_refuses_nothing(make_app, tmp_path, starting):
    web = make_app(RATELIMIT_STORAGE_URI="memory://")
    versions.record_home(web)
    with web.app_context():
        assert data_version_home() is None
    other = beside(tmp_path, RATELIMIT_STORAGE_URI=ANOTHER_REDIS, RATELIMIT_ENABLED=False)
    assert versions.home_refusal(other) is None
    result = other.test_cli_runner().invoke(args=["ops", "settle", "--last-days", "1"])
    assert result.exit_code == 0, result.output
    assert len(starting(other)) == 1


def test_the_latest_web_to_start_says_where_the_copy_is(make_app):
    web = make_app(RATELIMIT_STORAGE_URI="memory://")
    with web.app_context():
        web.config["RATELIMIT_STORAGE_URI"] = "redis://:secret@cache.example.com:6379/0"
        versions.record_home(web)
        assert data_version_home() == "redis://cache.example.com:6379/0 (prefix picks)"
        web.config["RATELIMIT_STORAGE_URI"] = "memory://"
        versions.record_home(web)
        assert data_version_home() is None


def test_a_database_not_migrated_yet_records_nothing_and_refuses_nothing(make_app, caplog):
    """A web process may start before its release's ``flask db upgrade``: it starts all the
    same, and the copy is neither read nor told until the database holds its tag."""
    web = make_app()
    with web.app_context():
        for column in ("tag", "home"):
            db.execute_sql(f'ALTER TABLE "data_version" DROP COLUMN "{column}"')
    with caplog.at_level(logging.WARNING, logger="picks.versions"):
        versions.record_home(web)
    assert "the database awaits its migration steps" in caplog.text
    assert versions.home_refusal(web) is None
    retag = web.test_cli_runner().invoke(args=["db", "retag"])
    assert retag.exit_code == 1 and "not migrated yet" in retag.output
    shared = web.extensions["shared_version"]
    if shared is not None:
        assert shared.keys == ()
        with web.app_context(), db.atomic():
            db.data_changed()  # told to nobody, and no failure


def test_an_unavailable_database_fails_no_web_start(tmp_path, caplog):
    web = create_app(settings(tmp_path, DATABASE_URL="postgresql://nobody@127.0.0.1:1/nothing"))
    with caplog.at_level(logging.WARNING, logger="picks.versions"):
        versions.record_home(web)
    assert "the data version's home was not recorded" in caplog.text
