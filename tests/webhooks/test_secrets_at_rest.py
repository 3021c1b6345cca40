"""Secrets and bounds every process shares: webhook signing secrets encrypted at rest under
``WEBHOOK_SECRETS_KEY`` (never stored as given, rotatable, useless without the key, encrypted by
the upgrade when stored in the clear), and each account's export streams counted on the rate
limits' Redis, so two processes hold no more of one account's streams than one may."""

import os
from datetime import UTC, datetime, timedelta

import pytest
import redis
from cryptography.fernet import Fernet, InvalidToken

from app import create_app
from models import Delivery, Event, WebhookEndpoint
from models.schema import drop_tables
from services.webhooks import deliveries
from services.webhooks.endpoints import new_secret
from store import migrate
from store.database import db
from tests import asserts, factories, helpers
from tests.receiver import receiving
from tests.schema_state import describe, differences
from tests.servers import free_port
from web import streams

START = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)
HOOKS = "/api/v1/data/webhooks"
EXPORTS = "/api/v1/data/exports"
#: Another deployment's key, and the key a rotation puts first.
OTHER_KEY = "zSduAblD2TfW0krHqoj9seuDzjs3bfDg88GXzt7NV5s="
NEW_KEY = "e02ueZ71gUQ751Z-yhOQu-MPbt3_a-CTZFdjd9kLWEA="

REDIS = os.environ.get("RATELIMIT_STORAGE_URI", "")
ON_REDIS = pytest.mark.skipif(
    not REDIS.startswith("redis://"), reason="needs RATELIMIT_STORAGE_URI=redis://"
)


@pytest.fixture
def clock():
    return factories.Clock(START)


@pytest.fixture
def app(make_app, clock):
    return make_app(CLOCK=clock, WEBHOOK_ALLOW_PRIVATE=True, RATELIMIT_AUTH="1000 per minute")


def stored(app, endpoint_id) -> tuple:
    """The endpoint's stored ``(secret, previous_secret)``, as the database holds them."""
    with app.app_context():
        return (
            WebhookEndpoint.select(WebhookEndpoint.secret, WebhookEndpoint.previous_secret)
            .where(WebhookEndpoint.id == endpoint_id)
            .tuples()
            .get()
        )


def opened(value: str, key: str) -> str:
    """A stored secret opened with ``key`` alone."""
    return Fernet(key).decrypt(value.encode()).decode()


def deliver(app, clock):
    with app.app_context():
        return deliveries.deliver_due(app.config, clock)


def ping(client, headers, endpoint_id):
    response = client.post(f"{HOOKS}/{endpoint_id}/test", headers=headers)
    assert response.status_code == 202, response.get_json()
    return response.get_json()


def deliveries_of(client, headers, endpoint_id) -> list:
    response = client.get(f"{HOOKS}/{endpoint_id}/deliveries", headers=headers)
    assert response.status_code == 200
    return response.get_json()["items"]


# Secrets at rest


def test_a_stored_secret_is_never_the_secret_given_nor_any_piece_of_it(app, client, people):
    _, headers = people["pro"]
    hook = factories.endpoint(client, headers, "http://127.0.0.1:9/hooks")
    rotated = client.post(f"{HOOKS}/{hook['id']}/rotate-secret", headers=headers).get_json()
    given = [hook["secret"], rotated["secret"]]
    secret, previous = stored(app, hook["id"])
    for value in (secret, previous):
        for shown in given:
            pieces = {shown[start : start + 12] for start in range(len(shown) - 11)}
            assert not any(piece in value for piece in pieces), "a piece of a secret is stored"
    # What is stored is each secret encrypted under the key, and nothing else.
    assert opened(secret, helpers.WEBHOOK_KEY) == rotated["secret"]
    assert opened(previous, helpers.WEBHOOK_KEY) == hook["secret"]
    for path in (f"{HOOKS}/{hook['id']}", HOOKS):
        assert "whsec_" not in client.get(path, headers=headers).get_data(as_text=True)


def test_a_delivery_verifies_with_the_secret_shown_at_creation(app, client, people, clock):
    _, headers = people["pro"]
    with receiving() as receiver:
        hook = factories.endpoint(client, headers, receiver.url)
        receiver.secrets = [hook["secret"]]
        ping(client, headers, hook["id"])
        assert deliver(app, clock)["succeeded"] == 1
        (got,) = receiver.wait_for(1)
    assert got.verified_by == [0]


def test_rotating_the_key_encrypts_every_secret_again_and_deliveries_still_verify(
    app, client, people, clock
):
    """A new key first, the old after it: ``webhooks rotate-key`` encrypts the secret and the
    rotation's previous one under the new key (a second run finds nothing left to move); with
    the old key gone, both still sign for the rotation's overlap."""
    _, headers = people["pro"]
    with receiving() as receiver:
        hook = factories.endpoint(client, headers, receiver.url)
        rotated = client.post(f"{HOOKS}/{hook['id']}/rotate-secret", headers=headers).get_json()
        before = stored(app, hook["id"])
        app.config["WEBHOOK_SECRETS_KEY"] = (NEW_KEY, helpers.WEBHOOK_KEY)
        runner = app.test_cli_runner()
        result = runner.invoke(args=["webhooks", "rotate-key"])
        assert result.exit_code == 0, result.output
        assert "resealed 2 webhook signing secrets under the newest key; 0 already were" in (
            result.output
        )
        secret, previous = moved = stored(app, hook["id"])
        again = runner.invoke(args=["webhooks", "rotate-key"])
        assert again.exit_code == 0 and "resealed 0" in again.output and "2 already" in again.output
        assert moved != before and stored(app, hook["id"]) == moved  # the second run moved none
        assert opened(secret, NEW_KEY) == rotated["secret"]
        assert opened(previous, NEW_KEY) == hook["secret"]
        with pytest.raises(InvalidToken):
            opened(secret, helpers.WEBHOOK_KEY)
        app.config["WEBHOOK_SECRETS_KEY"] = (NEW_KEY,)  # the old key leaves the list
        receiver.secrets = [hook["secret"], rotated["secret"]]
        ping(client, headers, hook["id"])
        assert deliver(app, clock)["succeeded"] == 1
        (got,) = receiver.wait_for(1)
    assert got.verified_by == [0, 1]


def test_a_database_copy_under_another_key_signs_nothing(app, client, people, clock):
    """The same rows under another deployment's key: nothing is sent, the try is recorded as
    failed saying why (retried on the schedule), the API answers as ever, and the rotation
    names the endpoint it cannot open."""
    _, headers = people["pro"]
    with receiving() as receiver:
        hook = factories.endpoint(client, headers, receiver.url)
        app.config["WEBHOOK_SECRETS_KEY"] = (OTHER_KEY,)
        ping(client, headers, hook["id"])
        counts = deliver(app, clock)
    assert receiver.received == []
    assert (counts["succeeded"], counts["pending"]) == (0, 1)
    (delivery,) = deliveries_of(client, headers, hook["id"])
    assert delivery["status"] == "pending" and delivery["attempts"] == 1
    assert delivery["lastStatusCode"] is None
    assert delivery["lastError"].startswith(
        "not signed: its signing secret cannot be decrypted with WEBHOOK_SECRETS_KEY"
    )
    result = app.test_cli_runner().invoke(args=["webhooks", "rotate-key"])
    assert result.exit_code == 1
    assert f"opens the secrets of webhook endpoints {hook['id']}:" in result.output
    with app.app_context():
        assert opened(WebhookEndpoint.get_by_id(hook["id"]).secret, helpers.WEBHOOK_KEY)


def test_the_upgrade_encrypts_the_secrets_stored_in_the_clear(app, clock):
    """A database at step 004 holds an endpoint's secrets as given: ``db upgrade`` applies 005
    and encrypts them, and a delivery verifies with both, as before."""
    url = app.config["DATABASE_URL"]
    with app.app_context():
        drop_tables()
    db.close()
    assert migrate.upgrade(url, "004_ids_never_reused")[-1] == "004_ids_never_reused"
    with receiving() as receiver:
        plain = [new_secret(), new_secret()]
        with app.app_context():
            user = factories.user("pro@example.com", plan="pro")
            headers = factories.bearer(factories.token(user))
            endpoint = WebhookEndpoint.create(
                user=user,
                url=receiver.url,
                events=["pick.settled"],
                secret=plain[1],
                previous_secret=plain[0],
                previous_secret_expires_at=START + timedelta(hours=1),
            )
        result = app.test_cli_runner().invoke(args=["db", "upgrade"])
        assert result.exit_code == 0, result.output
        assert "applied 005_sealed_webhook_secrets" in result.output
        assert "sealed 2 webhook signing secrets stored in the clear" in result.output
        secret, previous = stored(app, endpoint.id)
        assert plain[1] not in secret and plain[0] not in previous
        assert (opened(secret, helpers.WEBHOOK_KEY), opened(previous, helpers.WEBHOOK_KEY)) == (
            plain[1],
            plain[0],
        )
        again = app.test_cli_runner().invoke(args=["db", "upgrade"])
        assert again.exit_code == 0 and "sealed" not in again.output
        receiver.secrets = plain
        client = app.test_client()
        ping(client, headers, endpoint.id)
        assert deliver(app, clock)["succeeded"] == 1
        (got,) = receiver.wait_for(1)
    assert got.verified_by == [0, 1]


@pytest.mark.skipif(bool(os.environ.get("TEST_DATABASE_URL")), reason="SQLite's rebuild")
def test_step_005_on_sqlite_keeps_the_rows_and_never_gives_an_id_again(app):
    """SQLite makes the webhook tables again: their rows stay, their references hold, and an id
    given before the step (its row deleted since) is not given again after it."""
    url = app.config["DATABASE_URL"]
    with app.app_context():
        models_schema = describe(db.obj)
        drop_tables()
    db.close()
    migrate.upgrade(url, "004_ids_never_reused")
    with app.app_context():
        user = factories.user("pro@example.com", plan="pro")
        endpoint = WebhookEndpoint.create(
            user=user, url="http://127.0.0.1:9/", events=["ping"], secret=new_secret()
        )
        kept = Event.create(type="ping", endpoint=endpoint)
        Delivery.create(event=kept, endpoint=endpoint)
        gone = Event.create(type="ping", endpoint=endpoint)
        gone.delete_instance()
        before = [list(model.select().tuples()) for model in (WebhookEndpoint, Event, Delivery)]
    db.close()
    assert migrate.upgrade(url, "005_sealed_webhook_secrets") == ["005_sealed_webhook_secrets"]
    migrate.upgrade(url)  # the later steps, so the schema is the models' again
    with app.app_context():
        assert not differences(models_schema, describe(db.obj), ("models", "migrations"))
        after = [list(model.select().tuples()) for model in (WebhookEndpoint, Event, Delivery)]
        assert after == before
        assert db.execute_sql("PRAGMA foreign_key_check").fetchall() == []
        assert Event.create(type="ping").id == gone.id + 1
        endpoint.delete_instance()  # its events and deliveries go with it, nothing else
        assert [event.id for event in Event.select()] == [gone.id + 1]


# Export streams counted where the rate limits are


def export(client, headers, **options):
    return client.post(
        EXPORTS, json={"resource": "teams", "format": "csv"}, headers=headers, **options
    )


def exporters(app, *emails) -> list:
    """Pro users of ``app`` with their headers, and a match so that an export has rows."""
    with app.app_context():
        factories.match("Alpha", "Beta")
        users = [factories.user(email, plan="pro") for email in emails]
        return [(user, factories.bearer(factories.token(user))) for user in users]


@ON_REDIS
def test_two_processes_on_one_redis_hold_at_most_an_accounts_streams_together(make_app, tmp_path):
    """Two apps on one Redis and one database (two processes' view): the account's two places
    are shared, so its third stream is refused in either; the bound per process stays each
    one's own; a place given back in one is free in the other."""
    bounds = {"EXPORT_STREAMS_PER_USER": 2, "EXPORT_STREAMS_PER_PROCESS": 3}
    first = make_app(**bounds)
    (_, headers), (_, others) = exporters(first, "pro@example.com", "other@example.com")
    second = create_app(helpers.settings(tmp_path, **bounds))
    one, two = first.test_client(), second.test_client()
    held = [export(one, headers, buffered=False), export(two, headers, buffered=False)]
    assert [response.status_code for response in held] == [200, 200]
    for client in (one, two):  # each process holds one of the account's streams: Redis says no
        body = asserts.problem(export(client, headers), 429, "too-many-exports")
        assert "account" in body["detail"]
    held.append(export(two, others, buffered=False))  # the second process's own bound: 2 of 3
    assert held[-1].status_code == 200
    # Closed last first: each unread body holds its request context on this one thread.
    held.pop().close()
    held.pop().close()
    response = export(one, headers)
    assert response.status_code == 200 and response.get_data(as_text=True).count("\n") == 3
    held.pop().close()


@ON_REDIS
def test_a_place_a_killed_process_held_runs_out_with_its_lease(make_app):
    """Places whose process died (never given back) count while their lease runs, by Redis's
    clock, and no longer once it has run out; a stream's own place is renewed while it is
    open, given back when it ends, and a renewal never brings a given-back place back."""
    app = make_app(EXPORT_STREAMS_PER_USER=2)
    ((user, headers),) = exporters(app, "pro@example.com")
    client = app.test_client()
    shared = streams.shared_streams(app)
    key = shared.key(user.id)
    server = redis.Redis.from_url(REDIS)
    seconds, micros = server.time()
    now = seconds * 1000 + micros // 1000
    server.zadd(key, {"killed-1": now + 60_000, "killed-2": now + 60_000})
    asserts.problem(export(client, headers), 429, "too-many-exports")
    server.zadd(key, {"killed-1": now - 1, "killed-2": now - 1})  # their leases have run out
    response = export(client, headers, buffered=False)
    assert response.status_code == 200
    ((token, _),) = server.zrange(key, 0, -1, withscores=True)
    server.zadd(key, {token: now + 1_000})  # as if its lease were about to run out
    app.extensions["export_streams"].renew()
    assert server.zscore(key, token) >= now + streams.LEASE_SECONDS * 1000
    assert 0 < server.pttl(key) <= streams.LEASE_SECONDS * 1000
    response.close()
    assert server.zcard(key) == 0
    shared.renew(user.id, token.decode())
    assert server.zcard(key) == 0


def test_while_redis_does_not_answer_each_process_counts_its_own(make_app, tmp_path):
    """Rate limits on a Redis that refuses connections: exports still stream, bounded by the
    process's own count (not a 500), and the rate limits' fallback knows Redis is down."""
    make_app(EXPORT_STREAMS_PER_USER=2)
    down = create_app(
        helpers.settings(
            tmp_path,
            EXPORT_STREAMS_PER_USER=2,
            RATELIMIT_STORAGE_URI=f"redis://127.0.0.1:{free_port()}/5",
        )
    )
    ((_, headers),) = exporters(down, "pro@example.com")
    client = down.test_client()
    held = [export(client, headers, buffered=False) for _ in range(2)]
    assert [response.status_code for response in held] == [200, 200]
    asserts.problem(export(client, headers), 429, "too-many-exports")
    assert down.extensions["rate_fallback"].dead_until is not None
    held.pop().close()
    held.pop().close()
