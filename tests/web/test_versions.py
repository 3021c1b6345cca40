"""The data version (``store/database.py``), moved by every transaction that writes the tables
the cached answers are made from as it commits, and its copy on Redis (``web/versions.py``):
read with the rate-limit hit, so a cached answer needs no query; never older than the database
once a change has committed, and never filled with what a change began after."""

import os
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
import redis

from app import create_app
from models import Team, User, bump_data_version, data_version
from models.schema import create_tables
from models.versions import data_version_tag
from store.bulk import insert_rows, update_rows
from store.database import db
from tests import factories
from tests.helpers import counted_queries, redis_commands_sent, settings
from web import versions

REDIS = os.environ.get("RATELIMIT_STORAGE_URI", "")

ON_REDIS = pytest.mark.skipif(
    not REDIS.startswith("redis://"), reason="needs RATELIMIT_STORAGE_URI=redis://"
)

PATH = "/api/picks/today?date=2026-01-01"


@pytest.fixture
def app(make_app):
    return make_app(RATELIMIT_PUBLIC="1000 per minute")


@pytest.fixture
def shared(app):
    return app.extensions["shared_version"]


def held(shared) -> tuple:
    """What Redis holds: the copy (an int or None), the pending changes, the generation."""
    client = redis.Redis.from_url(REDIS)
    value, pending, generation = shared.keys
    copy = client.get(value)
    return (
        None if copy is None else int(copy),
        client.zcard(pending),
        int(client.get(generation) or 0),
    )


@ON_REDIS
def test_a_cache_hit_reads_the_version_with_its_rate_limit_hit_and_no_query(app, shared):
    client = app.test_client()
    first = client.get(PATH)  # made, and the version read from the database left in Redis
    with app.app_context():
        assert held(shared)[:2] == (data_version(), 0)
    with counted_queries() as queries, redis_commands_sent() as sent:
        again = client.get(PATH)
    assert again.status_code == 200 and again.get_data() == first.get_data()
    assert queries == [] and len(sent) == 1


@ON_REDIS
def test_a_committed_change_drops_the_copy_and_the_next_request_sees_it(app, shared):
    client = app.test_client()
    client.get(PATH)
    with app.app_context():
        before, (copy, _, generation) = data_version(), held(shared)
        assert copy == before
        with db.atomic():
            bump_data_version()
            assert held(shared) == (None, 1, generation + 1)  # pending until it ends
        assert held(shared) == (None, 0, generation + 2)  # told it committed
        with counted_queries() as queries:
            assert client.get(PATH).status_code == 200
        assert any("data_version" in query for query in queries)  # asked the database
        assert held(shared)[0] == data_version() == before + 1


@ON_REDIS
def test_while_a_change_is_pending_readers_ask_the_database_and_fill_nothing(app, shared):
    with app.app_context():
        stored = data_version()
        with db.atomic():
            bump_data_version()
            generation = held(shared)[2]
            # What a reader's hit would have read: an old copy, but the change pending.
            assert shared.current((b"999", 1, str(generation).encode())) == stored + 1
            assert held(shared)[0] is None
        assert shared.current((None, 0, str(generation + 1).encode())) == stored + 1
        assert held(shared)[0] == stored + 1  # filled once nothing was pending


@ON_REDIS
def test_a_reader_never_leaves_what_it_read_before_a_change_began(app, shared):
    with app.app_context():
        generation = held(shared)[2]
        with db.atomic():
            bump_data_version()  # begins after the reader saw no copy at ``generation``
        assert shared.current((None, 0, str(generation).encode())) == data_version()
        assert held(shared)[0] is None  # its fill was refused: the generation moved on


@ON_REDIS
def test_a_rolled_back_change_leaves_readers_on_the_database(app, shared):
    with app.app_context():
        stored = data_version()
        with pytest.raises(RuntimeError), db.atomic():
            bump_data_version()
            raise RuntimeError("the change fails")
        assert data_version() == stored
        value, pending, generation = held(shared)
        assert value is None and pending == 0  # its mark taken out as it rolled back
        assert shared.current((None, pending, str(generation).encode())) == stored
        assert held(shared)[0] == stored


@ON_REDIS
def test_a_change_outside_a_transaction_is_told_at_once(app, shared):
    app.test_client().get(PATH)  # fills the copy
    with app.app_context():
        value, _, generation = held(shared)
        assert value == data_version()
        bump_data_version()
        assert held(shared) == (None, 0, generation + 2) and data_version() == value + 1


def other_spelling(url: str, tmp_path) -> str:
    """Another address of the database at ``url``: PostgreSQL's host by another name, an SQLite
    file by another path (a hard link), neither of which the real path of a file tells apart."""
    if url.startswith("sqlite"):
        path = Path(url.split(":///", 1)[1])
        link = tmp_path / "another-name.db"
        os.link(path, link)
        return f"sqlite:///{link}"
    parsed = urlsplit(url)
    host = "localhost" if parsed.hostname in ("127.0.0.1", "::1") else "127.0.0.1"
    netloc = parsed.netloc.rpartition("@")
    place = f"{host}:{parsed.port}" if parsed.port else host
    return urlunsplit(parsed._replace(netloc=f"{netloc[0]}{netloc[1]}{place}"))


@ON_REDIS
def test_the_copy_is_named_by_the_database_however_its_address_is_spelt(app, tmp_path):
    """Every process finds the same keys from the tag the database holds, whatever spelling of
    its address it was given; another database has keys of its own."""
    keys = app.extensions["shared_version"].keys
    assert keys and all("/data-version/" in key for key in keys)
    url = app.config["DATABASE_URL"]
    elsewhere = create_app(settings(tmp_path, DATABASE_URL=other_spelling(url, tmp_path)))
    assert versions.database_name(elsewhere.config["DATABASE_URL"]) != versions.database_name(url)
    assert elsewhere.extensions["shared_version"].keys == keys
    if url.startswith("sqlite"):  # (one PostgreSQL database for the suite)
        other = tmp_path / "other"
        other.mkdir()
        another = create_app(settings(other, DATABASE_URL=f"sqlite:///{other / 'other.db'}"))
        with another.app_context():
            create_tables()
        assert another.extensions["shared_version"].keys not in ((), keys)
    db.close()


def test_a_copy_retagged_by_the_cli_names_its_own_keys_and_keeps_its_version(app, tmp_path):
    """`flask db retag` (for a restored copy served beside its original): a new tag, so a
    process started after it reads other keys; the data version itself is kept."""
    with app.app_context():
        before = (data_version_tag(), data_version())
    shared = app.extensions["shared_version"]  # (None where no copy is kept: memory://)
    keys = shared and shared.keys  # read once by each process, here before the retag
    result = app.test_cli_runner().invoke(args=["db", "retag"])
    assert result.exit_code == 0, result.output
    with app.app_context():
        assert result.output == f"data version tag {data_version_tag()}\n"
        assert data_version_tag() != before[0] and data_version() == before[1]
    db.close()
    if shared is not None:
        restarted = create_app(settings(tmp_path, DATABASE_URL=app.config["DATABASE_URL"]))
        assert restarted.extensions["shared_version"].keys not in ((), keys)


def test_the_database_is_named_by_its_address_for_the_export_streams(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    name = versions.database_name
    assert name("sqlite:///picks.db") == name(f"sqlite:///{tmp_path}/picks.db")
    assert name("sqlite:///picks.db") != name("sqlite:///other.db")
    assert name("sqlite:///:memory:") is None
    assert name("postgresql://a:secret@DB.example.com:5432/picks?sslmode=require") == name(
        "postgres://b@db.example.com:5432/picks"
    )
    assert name("postgres://db.example.com/picks") == name("postgres://db.example.com:5432/picks")
    assert name("postgres://db.example.com/picks") != name("postgres://db.example.com/staging")


@ON_REDIS
def test_a_request_the_version_sends_down_the_full_path_is_counted_once(app):
    client = app.test_client()
    remaining = [client.get(PATH).headers["X-RateLimit-Remaining"]]
    with app.app_context(), db.atomic():
        bump_data_version()  # the stored answer is now out of date
    with counted_queries() as queries:
        remaining.append(client.get(PATH).headers["X-RateLimit-Remaining"])
    assert len(queries) > 1  # made again by the full path
    remaining.append(client.get(PATH).headers["X-RateLimit-Remaining"])
    assert remaining == ["999", "998", "997"]


@ON_REDIS
def test_a_process_counting_no_limits_still_tells_redis_of_its_changes(make_app):
    """A worker serves nothing and may run with the limits off: the web's copy hears of its
    changes all the same."""
    app = make_app(RATELIMIT_ENABLED=False)
    shared = app.extensions["shared_version"]
    assert shared is not None
    generation = held(shared)[2]
    with app.app_context(), db.atomic():
        bump_data_version()
    assert held(shared)[1:] == (0, generation + 2)


def test_without_redis_there_is_no_copy(make_app):
    app = make_app(RATELIMIT_STORAGE_URI="memory://")
    assert app.extensions["shared_version"] is None


class Told:
    """A stand-in for the copy on Redis, recording what it is told and the data version the
    database holds, on the writer's own connection, at that moment."""

    def __init__(self):
        self.said = []

    def changing(self):
        self.said.append(("changing", data_version()))
        return f"token-{len(self.said)}"

    def changed(self, token):
        self.said.append(("changed", token, data_version()))


@pytest.fixture
def told(app, monkeypatch):
    """What the database tells the data version's copy from now on (in an app context)."""
    with app.app_context():
        copy = Told()
        monkeypatch.setattr(db.obj.versioning, "copy", copy)
        yield copy.said


def test_a_transaction_writing_a_followed_table_moves_the_version_once_as_it_commits(told):
    stored = data_version()
    with db.atomic():
        Team.create(name="Rovers", country="Testland")
        Team.create(name="United", country="Testland")
        Team.update(country="Elsewhere").where(Team.name == "United").execute()
        assert data_version() == stored and told == []  # nothing moves before the commit
    assert data_version() == stored + 1
    # Pending before the next version is written, no longer once its transaction committed.
    assert told == [("changing", stored), ("changed", "token-1", stored + 1)]


def test_a_rolled_back_transaction_leaves_the_version_and_tells_nothing(told):
    stored = data_version()
    with pytest.raises(RuntimeError), db.atomic():
        Team.create(name="Rovers", country="Testland")
        raise RuntimeError("the change fails")
    assert data_version() == stored and told == []


def test_a_write_outside_a_transaction_moves_the_version_at_once(told):
    stored = data_version()
    Team.create(name="Rovers", country="Testland")
    assert data_version() == stored + 1
    assert told == [("changing", stored), ("changed", "token-1", stored + 1)]


def test_bulk_writes_of_a_followed_table_move_the_version(told):
    stored = data_version()
    with db.atomic():
        insert_rows(Team, ["name", "country"], [("Rovers", "Testland"), ("United", "Testland")])
    assert data_version() == stored + 1
    (rovers,) = Team.select(Team.id).where(Team.name == "Rovers").tuples()
    with db.atomic():
        update_rows(Team, {"country": "text"}, [(rovers[0], "Elsewhere")])
    assert data_version() == stored + 2 and len(told) == 4


def test_writes_to_tables_the_answers_are_not_made_from_leave_the_version(told):
    stored = data_version()
    with db.atomic():
        account = factories.user("reader@example.com")
    User.update(plan="pro").where(User.id == account.id).execute()
    assert data_version() == stored and told == []


def test_a_cached_answer_is_made_again_after_a_write_with_no_call_to_remember(app):
    client = app.test_client()
    client.get(PATH)
    with counted_queries() as queries:
        assert client.get(PATH).status_code == 200
    statements = [query for query in queries if query.startswith("(")]  # not the pool's
    assert all("data_version" in query for query in statements)  # served from the cache
    with app.app_context():
        factories.match(kickoff=datetime(2026, 1, 1, 15, tzinfo=UTC))
    with counted_queries() as queries:
        assert client.get(PATH).status_code == 200
    assert any('FROM "match"' in query for query in queries)  # made again
