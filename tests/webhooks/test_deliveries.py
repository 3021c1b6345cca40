"""Deliveries to a real receiver on loopback, every one verified with ``standardwebhooks``: the
retry schedule on a moving clock, 410, Retry-After, redirects, the last try, secret rotation,
the address and the owner checked again at delivery, and the outbox committing with its cause or
not at all."""

import http.client
import ssl
from datetime import UTC, datetime, timedelta

import pytest

from config import DEFAULTS, check_worker
from models import Delivery, Event, Pick, WebhookEndpoint
from services import routes
from services.accounts import users
from services.operations import jobs
from services.record import settling
from services.webhooks import deliveries, egress, events
from store.database import db
from tests import factories
from tests.helpers import counted_queries
from tests.receiver import receiving

START = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)
HOOKS = "/api/v1/data/webhooks"


@pytest.fixture
def clock():
    return factories.Clock(START)


@pytest.fixture
def app(make_app, clock):
    return make_app(CLOCK=clock, WEBHOOK_ALLOW_PRIVATE=True, RATELIMIT_AUTH="1000 per minute")


@pytest.fixture
def people_of():
    """A test client of an app and a Pro user's headers there."""

    def make(app):
        with app.app_context():
            _, headers = factories.people()["pro"]
        return app.test_client(), headers

    return make


def deliver(app, clock):
    """One round of the worker's pump at the clock's time."""
    with app.app_context():
        return deliveries.deliver_due(app.config, clock)


def listed(client, headers, endpoint_id):
    response = client.get(f"{HOOKS}/{endpoint_id}/deliveries", headers=headers)
    assert response.status_code == 200
    return response.get_json()["items"]


def ping(client, headers, endpoint_id):
    response = client.post(f"{HOOKS}/{endpoint_id}/test", headers=headers)
    assert response.status_code == 202, response.get_json()
    return response.get_json()


def test_a_ping_is_delivered_signed_and_its_delivery_reads_back(app, client, people, clock):
    _, headers = people["pro"]
    with receiving() as receiver:
        hook = factories.endpoint(client, headers, receiver.url)
        receiver.secrets = [hook["secret"]]
        queued = ping(client, headers, hook["id"])
        assert (queued["status"], queued["attempts"], queued["eventType"]) == ("pending", 0, "ping")
        assert deliver(app, clock)["succeeded"] == 1
        (got,) = receiver.wait_for(1)
    assert got.verified_by == [0]
    assert got.webhook_id == queued["webhookId"] == f"evt_{queued['eventId']}"
    assert got.payload == {
        "type": "ping",
        "timestamp": "2026-11-23T09:00:00Z",
        "data": {"id": hook["id"], "url": f"/api/v1/data/webhooks/{hook['id']}"},
    }
    (delivery,) = listed(client, headers, hook["id"])
    assert delivery["status"] == "succeeded" and delivery["attempts"] == 1
    assert delivery["lastStatusCode"] == 200 and delivery["nextAttemptAt"] is None


def test_failing_twice_then_succeeding_delivers_on_the_third_try_with_the_same_id(
    app, client, people, clock
):
    _, headers = people["pro"]
    with receiving() as receiver:
        hook = factories.endpoint(client, headers, receiver.url)
        receiver.secrets = [hook["secret"]]
        receiver.answers = [500, 500, 200]
        ping(client, headers, hook["id"])
        deliver(app, clock)  # at once: 500
        (delivery,) = listed(client, headers, hook["id"])
        assert delivery["nextAttemptAt"] == "2026-11-23T09:00:05Z"
        clock.advance(seconds=4)
        deliver(app, clock)  # not due yet
        assert len(receiver.received) == 1
        clock.advance(seconds=1)
        deliver(app, clock)  # 5 s after the first failure: 500
        (delivery,) = listed(client, headers, hook["id"])
        assert delivery["nextAttemptAt"] == "2026-11-23T09:05:05Z"  # then 5 minutes
        clock.advance(seconds=299)
        deliver(app, clock)
        assert len(receiver.received) == 2
        clock.advance(seconds=1)
        deliver(app, clock)
        tries = receiver.wait_for(3)
    assert [item.answered for item in tries] == [500, 500, 200]
    assert len({item.webhook_id for item in tries}) == 1
    assert all(item.verified_by == [0] for item in tries)
    (delivery,) = listed(client, headers, hook["id"])
    assert (delivery["status"], delivery["attempts"], delivery["lastStatusCode"]) == (
        "succeeded",
        3,
        200,
    )


def test_the_schedule_is_the_specs():
    settings = {
        "WEBHOOK_ALLOW_PRIVATE": False,
        "WEBHOOK_RETRY_SCHEDULE": DEFAULTS["WEBHOOK_RETRY_SCHEDULE"],
        "ALERT_RETRY_SCHEDULE": DEFAULTS["ALERT_RETRY_SCHEDULE"],
        "SMTP_URL": None,
        "WEBHOOK_LEASE_SECONDS": 60.0,
        "WEBHOOK_TIMEOUT": 15.0,
        "WORKER_THREADS": 1,
        "WEBHOOK_MAX_ENDPOINTS": 5,
        "WEBHOOK_CONCURRENCY": 1,
        "WORKER_MAX_SILENCE_SECONDS": 180,
    }
    check_worker(settings, production=False)
    hours = 3600
    assert settings["WEBHOOK_RETRY_SCHEDULE"] == (
        0,
        5,
        5 * 60,
        30 * 60,
        2 * hours,
        5 * hours,
        10 * hours,
        14 * hours,
        20 * hours,
        24 * hours,
    )
    failed = deliveries.Outcome(500, "answered 500")
    waits = [
        deliveries.next_delay(tries, settings["WEBHOOK_RETRY_SCHEDULE"], failed, START)
        for tries in range(1, 11)
    ]
    assert waits == [5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400, None]


def test_410_disables_the_endpoint(app, client, people, clock):
    _, headers = people["pro"]
    with receiving() as receiver:
        hook = factories.endpoint(client, headers, receiver.url)
        receiver.answers = [410]
        ping(client, headers, hook["id"])
        deliver(app, clock)
        receiver.wait_for(1)
    shown = client.get(f"{HOOKS}/{hook['id']}", headers=headers).get_json()
    assert shown["enabled"] is False and "410" in shown["disabledReason"]
    (delivery,) = listed(client, headers, hook["id"])
    assert (delivery["status"], delivery["lastStatusCode"]) == ("failed", 410)
    refused = client.post(f"{HOOKS}/{hook['id']}/test", headers=headers)
    assert refused.status_code == 409
    assert refused.get_json()["type"].endswith("/problems/webhook-disabled")
    again = client.patch(f"{HOOKS}/{hook['id']}", json={"enabled": True}, headers=headers)
    assert again.get_json()["enabled"] is True and again.get_json()["disabledReason"] is None


def test_the_last_failed_try_disables_the_endpoint(make_app, clock):
    app = make_app(CLOCK=clock, WEBHOOK_ALLOW_PRIVATE=True, WEBHOOK_RETRY_SCHEDULE="0,5,10")
    client = app.test_client()
    with app.app_context():
        _, headers = factories.people()["pro"]
    with receiving() as receiver:
        hook = factories.endpoint(client, headers, receiver.url)
        receiver.answers = [502, 502, 502]
        ping(client, headers, hook["id"])
        for wait in (0, 5, 10):
            clock.advance(seconds=wait)
            deliver(app, clock)
        receiver.wait_for(3)
    (delivery,) = listed(client, headers, hook["id"])
    assert (delivery["status"], delivery["attempts"]) == ("failed", 3)
    shown = client.get(f"{HOOKS}/{hook['id']}", headers=headers).get_json()
    assert shown["enabled"] is False and "failed its last try" in shown["disabledReason"]


@pytest.mark.parametrize(
    "retry_after", ["120", (START + timedelta(seconds=120)).strftime("%a, %d %b %Y %H:%M:%S GMT")]
)
@pytest.mark.parametrize("status", [429, 503])
def test_retry_after_is_honoured(app, client, people, clock, status, retry_after):
    _, headers = people["pro"]
    with receiving() as receiver:
        hook = factories.endpoint(client, headers, receiver.url)
        receiver.answers = [(status, {"Retry-After": retry_after}), 200]
        ping(client, headers, hook["id"])
        deliver(app, clock)
        (delivery,) = listed(client, headers, hook["id"])
        assert delivery["nextAttemptAt"] == "2026-11-23T09:02:00Z"  # not the schedule's 5 s
        clock.advance(seconds=119)
        deliver(app, clock)
        assert len(receiver.received) == 1
        clock.advance(seconds=1)
        deliver(app, clock)
        assert [item.answered for item in receiver.wait_for(2)] == [status, 200]


def test_redirects_are_never_followed(app, client, people, clock):
    _, headers = people["pro"]
    with receiving() as elsewhere, receiving() as receiver:
        hook = factories.endpoint(client, headers, receiver.url)
        receiver.answers = [(307, {"Location": elsewhere.url})]
        ping(client, headers, hook["id"])
        deliver(app, clock)
        receiver.wait_for(1)
    assert elsewhere.received == []
    (delivery,) = listed(client, headers, hook["id"])
    assert delivery["status"] == "pending" and delivery["lastStatusCode"] == 307
    assert delivery["lastError"] == "answered 307: redirects are not followed"


def test_rotation_signs_with_both_secrets_for_the_overlap(app, client, people, clock):
    _, headers = people["pro"]
    with receiving() as receiver:
        hook = factories.endpoint(client, headers, receiver.url)
        rotated = client.post(f"{HOOKS}/{hook['id']}/rotate-secret", headers=headers).get_json()
        assert rotated["secret"].startswith("whsec_") and rotated["secret"] != hook["secret"]
        assert rotated["secretRotatingUntil"] == "2026-11-24T09:00:00Z"
        receiver.secrets = [hook["secret"], rotated["secret"]]
        ping(client, headers, hook["id"])
        deliver(app, clock)
        clock.advance(hours=23, minutes=59)
        ping(client, headers, hook["id"])
        deliver(app, clock)
        clock.advance(minutes=1)  # the overlap is over
        ping(client, headers, hook["id"])
        deliver(app, clock)
        tries = receiver.wait_for(3)
    assert [item.verified_by for item in tries] == [[0, 1], [0, 1], [1]]
    assert all(
        len(item.headers["webhook-signature"].split(" ")) == n
        for item, n in zip(tries, (2, 2, 1), strict=True)
    )
    assert "secret" not in client.get(f"{HOOKS}/{hook['id']}", headers=headers).get_json()


def test_the_address_is_checked_again_at_delivery(app, client, people, clock):
    _, headers = people["pro"]
    with receiving() as receiver:
        hook = factories.endpoint(client, headers, receiver.url.replace("127.0.0.1", "localhost"))
        ping(client, headers, hook["id"])
        app.config["WEBHOOK_ALLOW_PRIVATE"] = False  # as if the name now resolved to loopback
        deliver(app, clock)
    assert receiver.received == []
    (delivery,) = listed(client, headers, hook["id"])
    assert delivery["status"] == "pending" and delivery["lastStatusCode"] is None
    assert delivery["lastError"].startswith("refused: ")
    assert "is a loopback address (localhost resolves to it)" in delivery["lastError"]


def test_a_worker_that_died_mid_delivery_leaves_a_lease_that_runs_out(app, client, people, clock):
    _, headers = people["pro"]
    with receiving() as receiver:
        hook = factories.endpoint(client, headers, receiver.url)
        ping(client, headers, hook["id"])
        with app.app_context():
            (claimed,) = deliveries.claim(clock(), app.config["WEBHOOK_LEASE_SECONDS"])
        # ... and the worker dies before it records anything.
        assert deliver(app, clock)["succeeded"] == 0  # leased: nobody sends it twice at once
        clock.advance(seconds=app.config["WEBHOOK_LEASE_SECONDS"])
        assert deliver(app, clock)["succeeded"] == 1
        (got,) = receiver.wait_for(1)
    assert got.webhook_id == claimed.message_id


def test_events_commit_with_their_cause_or_not_at_all(app, client, people, clock):
    _, headers = people["pro"]
    factories.endpoint(client, headers, "http://127.0.0.1:9/hook", events=["pick.settled"])
    with app.app_context():
        match = factories.match(kickoff=START - timedelta(days=1), goals=(2, 0))
        pick = factories.pick(match, is_live=True)
        with pytest.raises(RuntimeError), db.atomic():
            settling.settle_pending(app.config, now=START)
            assert Event.select().count() == 1  # written beside the picks' new state …
            raise RuntimeError("the transaction fails after settling")
        assert Event.select().count() == 0  # … and gone with it
        assert Pick.get_by_id(pick.id).status == "pending"
        settling.settle_pending(app.config, now=START)
        assert Pick.get_by_id(pick.id).status == "won"
        (event,) = Event.select()
        assert (event.type, event.subjects) == ("pick.settled", [pick.id])
        assert events.settled_picks([pick.id])[pick.id]["status"] == "won"


def test_a_failed_operation_is_an_operation_completed_event_too(app, client, people, clock):
    _, headers = people["admin"]
    factories.endpoint(client, headers, "http://127.0.0.1:9/", events=["operation.completed"])

    def broken():
        raise ValueError("no")

    with app.app_context():
        done = jobs.run("settlement-run", {"last_days": 7}, broken, now=START)
        (event,) = Event.select()
    assert done.status == "failed"
    assert event.data["status"] == "failed" and event.data["error"] == "ValueError: no"
    assert event.audience == "operators"


def test_no_endpoint_no_event(app, clock):
    with app.app_context():
        match = factories.match(kickoff=START - timedelta(days=1))
        factories.pick(match, is_live=True)
        settling.settle_pending(app.config, now=START)
        assert Event.select().count() == 0


def test_a_disabled_endpoints_waiting_deliveries_go_out_once_it_is_enabled(
    app, client, people, clock
):
    _, headers = people["pro"]
    with receiving() as receiver:
        hook = factories.endpoint(client, headers, receiver.url)
        ping(client, headers, hook["id"])
        with app.app_context():
            WebhookEndpoint.update(enabled=False).execute()
        deliver(app, clock)
        assert receiver.received == []
        client.patch(f"{HOOKS}/{hook['id']}", json={"enabled": True}, headers=headers)
        deliver(app, clock)
        receiver.wait_for(1)
    with app.app_context():
        assert Delivery.get().status == "succeeded"


def test_a_port_no_longer_allowed_is_refused_at_delivery(make_app, clock, people_of):
    app = make_app(CLOCK=clock, WEBHOOK_ALLOWED_PORTS="443,8443")
    client, headers = people_of(app)
    hook = factories.endpoint(client, headers, "https://93.184.216.34:8443/hook")
    ping(client, headers, hook["id"])
    app.config["WEBHOOK_ALLOWED_PORTS"] = frozenset({443, 80})  # as after a new configuration
    deliver(app, clock)
    (delivery,) = listed(client, headers, hook["id"])
    assert delivery["lastError"] == "refused: its port must be one of 443, 80 (it is 8443)"


@pytest.mark.parametrize(
    "failure",
    [
        ConnectionRefusedError(111, "Connection refused"),
        TimeoutError("timed out"),
        ConnectionResetError(104, "Connection reset by peer"),
        ssl.SSLError(1, "[SSL: WRONG_VERSION_NUMBER] wrong version number"),
        http.client.BadStatusLine("SSH-2.0-OpenSSH_9.6"),
    ],
)
def test_a_public_hosts_failure_is_recorded_as_unreachable(
    make_app, clock, people_of, monkeypatch, failure
):
    """How a public host failed (refused, reset, timed out, spoke no HTTP) would tell the
    endpoint's owner what listens on its ports: the record says "unreachable" and nothing more."""
    app = make_app(CLOCK=clock)
    client, headers = people_of(app)
    hook = factories.endpoint(client, headers, "http://93.184.216.34/hook")
    ping(client, headers, hook["id"])

    def fails(*_args, **_kwargs):
        raise failure

    monkeypatch.setattr(egress, "post", fails)
    deliver(app, clock)
    (delivery,) = listed(client, headers, hook["id"])
    assert (delivery["lastError"], delivery["lastStatusCode"]) == ("unreachable", None)


def publish_locked_pick(app, clock) -> int:
    """A live A pick before its kick-off, announced as publishing announces it (``pick.published``
    for owners who may see a locked pick); its id."""
    with app.app_context(), db.atomic():
        match = factories.match(kickoff=START + timedelta(days=2), status="scheduled", goals=None)
        pick = factories.pick(match, rating="A", odds=2.4, probability=0.5, edge=0.2, is_live=True)
        data = {
            "id": pick.id,
            "path": routes.match(match.id),
            "match_id": match.id,
            "kickoff_at": events.moment(match.kickoff_at),
            "market": "1x2",
            "rating": "A",
            "selection": "home",
            "odds": 2.4,
            "bookmaker": "bet365",
            "probability": 0.5,
            "edge": 0.2,
        }
        assert events.emit("pick.published", [(data, "premium")], clock()) == 1
    return pick.id


def set_owner(app, owner, **change):
    """Change the endpoint owner's plan or status, as an admin or the CLI does."""
    with app.app_context():
        users.update(owner.email, **change)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"plan": "free"}, "not sent: its owner has neither a Pro plan nor the admin role"),
        ({"status": "suspended"}, "not sent: its owner's account is suspended"),
    ],
    ids=["downgraded", "suspended"],
)
def test_a_retry_after_the_owner_lost_access_is_never_sent(
    app, client, people, clock, change, reason
):
    """A locked pick's selection and odds must not reach an owner who may no longer see them:
    the owner is read again at the retry, not taken from the fan-out."""
    owner, headers = people["pro"]
    with receiving() as receiver:
        hook = factories.endpoint(client, headers, receiver.url, events=["pick.published"])
        receiver.secrets = [hook["secret"]]
        receiver.answers = [500, 200]
        publish_locked_pick(app, clock)
        deliver(app, clock)  # the first try, while the owner is Pro: 500
        (first,) = receiver.wait_for(1)
        assert first.payload["data"]["selection"] == "home" and first.verified_by == [0]
        set_owner(app, owner, **change)
        clock.advance(seconds=5)
        counts = deliver(app, clock)  # the retry is due
        assert (counts["failed"], counts["succeeded"]) == (1, 0)
        clock.advance(days=2)
        deliver(app, clock)
        assert len(receiver.received) == 1  # the retry went nowhere, and nothing is left to try
    set_owner(app, owner, plan="pro", status="active")  # so the owner may read the API again
    (delivery,) = listed(client, headers, hook["id"])
    assert (delivery["status"], delivery["attempts"]) == ("failed", 2)
    assert (delivery["lastError"], delivery["lastStatusCode"]) == (reason, None)
    assert delivery["nextAttemptAt"] is None
    shown = client.get(f"{HOOKS}/{hook['id']}", headers=headers).get_json()
    assert shown["enabled"] is True  # the endpoint is not the owner's fault


def test_a_pro_owners_retry_still_goes(app, client, people, clock):
    owner, headers = people["pro"]
    with receiving() as receiver:
        hook = factories.endpoint(client, headers, receiver.url, events=["pick.published"])
        receiver.secrets = [hook["secret"]]
        receiver.answers = [500, 200]
        publish_locked_pick(app, clock)
        deliver(app, clock)
        set_owner(app, owner, role="user")  # a change that leaves the owner Pro and active
        clock.advance(seconds=5)
        assert deliver(app, clock)["succeeded"] == 1
        tries = receiver.wait_for(2)
    assert [item.answered for item in tries] == [500, 200]
    assert tries[1].payload["data"]["odds"] == 2.4 and tries[1].verified_by == [0]


def test_a_manual_retry_checks_the_owner_when_it_is_sent(app, client, people, clock):
    owner, headers = people["pro"]
    with receiving() as receiver:
        hook = factories.endpoint(client, headers, receiver.url, events=["pick.published"])
        receiver.answers = [200, 200]
        publish_locked_pick(app, clock)
        deliver(app, clock)
        receiver.wait_for(1)
        (delivery,) = listed(client, headers, hook["id"])
        retried = client.post(
            f"{HOOKS}/{hook['id']}/deliveries/{delivery['id']}/retry", headers=headers
        )
        assert retried.status_code == 202 and retried.get_json()["status"] == "pending"
        set_owner(app, owner, status="suspended")  # after asking, before the worker sends it
        assert deliver(app, clock)["failed"] == 1
        assert len(receiver.received) == 1
        set_owner(app, owner, status="active")
        client.post(f"{HOOKS}/{hook['id']}/deliveries/{delivery['id']}/retry", headers=headers)
        assert deliver(app, clock)["succeeded"] == 1  # once the owner qualifies again, it goes
        receiver.wait_for(2)
    (delivery,) = listed(client, headers, hook["id"])
    assert (delivery["status"], delivery["lastError"]) == ("succeeded", None)


def test_an_operators_event_is_not_sent_to_an_owner_no_longer_an_operator(make_app, clock):
    app = make_app(CLOCK=clock, WEBHOOK_ALLOW_PRIVATE=True)
    client = app.test_client()
    with app.app_context():
        owner = factories.user("ops@example.com", role="operator", plan="pro")
        headers = factories.bearer(factories.token(owner))
    with receiving() as receiver:
        hook = factories.endpoint(client, headers, receiver.url, events=["operation.completed"])
        receiver.answers = [500, 200]
        with app.app_context():
            settled = jobs.run(
                "settlement-run",
                {"last_days": 7},
                lambda: settling.run(7, app.config, now=START),
                now=START,
            )
        assert settled.status == "succeeded"
        deliver(app, clock)
        receiver.wait_for(1)
        set_owner(app, owner, role="user")  # still Pro, no longer an operator
        clock.advance(seconds=5)
        assert deliver(app, clock)["failed"] == 1
        assert len(receiver.received) == 1
    (delivery,) = listed(client, headers, hook["id"])
    assert delivery["lastError"] == "not sent: its owner is neither an operator nor an admin"


def test_a_batchs_owners_are_read_in_the_query_that_claims_it(app, client, clock):
    """However many owners a batch has, the owners cost no query of their own."""
    with app.app_context():
        owners = [factories.user(f"pro{n}@example.com", plan="pro") for n in range(3)]
        tokens = [factories.bearer(factories.token(owner)) for owner in owners]
    for headers in tokens:
        factories.endpoint(client, headers, "http://127.0.0.1:9/hook", events=["pick.published"])
    publish_locked_pick(app, clock)
    with app.app_context():
        assert events.dispatch(clock()) == 1
    set_owner(app, owners[1], plan="free")
    set_owner(app, owners[2], status="suspended")
    with app.app_context(), counted_queries() as statements:
        claimed = deliveries.claim(clock(), app.config["WEBHOOK_LEASE_SECONDS"])
    assert sorted(job.refused or "" for job in claimed) == [
        "",
        "its owner has neither a Pro plan nor the admin role",
        "its owner's account is suspended",
    ]
    assert len(statements) == 2  # the batch with its owners, then its leases
