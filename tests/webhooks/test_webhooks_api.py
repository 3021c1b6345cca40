"""The webhook endpoints of the Data API: who may call them, the secret shown once, the limit,
refused URLs, ownership, the quota, and deliveries listed and retried."""

import os
import time

import pytest

from config import ConfigError
from models import WebhookEndpoint
from tests import factories, helpers

HOOKS = "/api/v1/data/webhooks"
URL = "http://127.0.0.1:9/hooks"


@pytest.fixture
def app(make_app):
    return make_app(WEBHOOK_ALLOW_PRIVATE=True, RATELIMIT_AUTH="1000 per minute")


def problem(response, status, name):
    assert response.status_code == status, response.get_json()
    assert response.mimetype == "application/problem+json"
    assert response.get_json()["type"].endswith(f"/problems/{name}")
    return response.get_json()


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", HOOKS),
        ("post", HOOKS),
        ("get", f"{HOOKS}/1"),
        ("patch", f"{HOOKS}/1"),
        ("delete", f"{HOOKS}/1"),
        ("post", f"{HOOKS}/1/rotate-secret"),
        ("post", f"{HOOKS}/1/test"),
        ("get", f"{HOOKS}/1/deliveries"),
        ("post", f"{HOOKS}/1/deliveries/1/retry"),
    ],
)
def test_only_pro_users_and_admins_manage_webhooks(client, people, method, path):
    anonymous = getattr(client, method)(path)
    assert anonymous.status_code == 401 and anonymous.headers["WWW-Authenticate"] == "Bearer"
    for kind in ("free", "operator"):
        answer = getattr(client, method)(path, headers=people[kind][1])
        problem(answer, 403, "subscription-required")
    problem(getattr(client, method)(path, headers=people["suspended"][1]), 403, "account-suspended")


def test_an_endpoint_is_made_with_its_secret_shown_once(client, people):
    _, headers = people["pro"]
    made = factories.endpoint(
        client, headers, URL, events=["pick.settled", "match.result"], description="mine"
    )
    assert made["secret"].startswith("whsec_") and len(made["secret"]) == 6 + 44
    assert (made["url"], made["events"], made["description"], made["enabled"]) == (
        URL,
        ["pick.settled", "match.result"],
        "mine",
        True,
    )
    shown = client.get(f"{HOOKS}/{made['id']}", headers=headers).get_json()
    assert "secret" not in shown and shown["id"] == made["id"]
    listing = client.get(HOOKS, headers=headers).get_json()
    assert [item["id"] for item in listing["items"]] == [made["id"]] and listing["limit"] == 5
    assert all("secret" not in item for item in listing["items"])


def test_a_user_sees_and_changes_only_their_own_endpoints(client, people):
    mine = factories.endpoint(client, people["pro"][1], URL)
    other = people["admin"][1]
    assert client.get(HOOKS, headers=other).get_json()["items"] == []
    for method, path in (
        ("get", f"{HOOKS}/{mine['id']}"),
        ("patch", f"{HOOKS}/{mine['id']}"),
        ("delete", f"{HOOKS}/{mine['id']}"),
        ("post", f"{HOOKS}/{mine['id']}/rotate-secret"),
        ("post", f"{HOOKS}/{mine['id']}/test"),
        ("get", f"{HOOKS}/{mine['id']}/deliveries"),
    ):
        kwargs = {"json": {"description": "mine now"}} if method == "patch" else {}
        problem(getattr(client, method)(path, headers=other, **kwargs), 404, "not-found")


def test_an_endpoint_changes_and_goes(client, people):
    _, headers = people["pro"]
    made = factories.endpoint(client, headers, URL)
    changed = client.patch(
        f"{HOOKS}/{made['id']}",
        json={"events": ["operation.completed", "pick.published"], "enabled": False},
        headers=headers,
    ).get_json()
    assert changed["events"] == ["operation.completed", "pick.published"]
    assert (changed["enabled"], changed["disabledReason"]) == (False, "disabled by its owner")
    assert client.delete(f"{HOOKS}/{made['id']}", headers=headers).status_code == 204
    problem(client.get(f"{HOOKS}/{made['id']}", headers=headers), 404, "not-found")


@pytest.mark.parametrize("enabled", ["yes", "true", 1, 0])
def test_enabled_is_a_json_boolean(client, people, enabled):
    _, headers = people["pro"]
    made = factories.endpoint(client, headers, URL)
    answer = client.patch(f"{HOOKS}/{made['id']}", json={"enabled": enabled}, headers=headers)
    errors = problem(answer, 422, "validation-error")["errors"]
    assert errors == {"enabled": ["Not a valid boolean."]}
    assert client.get(f"{HOOKS}/{made['id']}", headers=headers).get_json()["enabled"] is True


@pytest.mark.parametrize("body", [{}, None])
def test_a_change_of_nothing_is_a_422_and_changes_nothing(client, people, body):
    """An empty body (or none) changes nothing: a 422, never a 200 that reads as done."""
    _, headers = people["pro"]
    made = factories.endpoint(client, headers, URL)
    answer = client.patch(f"{HOOKS}/{made['id']}", json=body, headers=headers)
    errors = problem(answer, 422, "validation-error")["errors"]
    assert errors == {"body": ["Give at least one of url, events, description and enabled."]}
    assert client.get(f"{HOOKS}/{made['id']}", headers=headers).get_json() == made_view(made)


def made_view(made: dict) -> dict:
    """An endpoint as its GET shows it: as made, without the secret shown once."""
    return {name: value for name, value in made.items() if name != "secret"}


def test_at_most_five_endpoints_a_user(client, people):
    _, headers = people["pro"]
    for number in range(5):
        factories.endpoint(client, headers, f"{URL}/{number}")
    answer = client.post(HOOKS, json={"url": URL, "events": ["pick.settled"]}, headers=headers)
    assert "at most 5" in problem(answer, 409, "webhook-limit-reached")["detail"]


@pytest.mark.skipif(
    not os.environ.get("TEST_DATABASE_URL"),
    reason="SQLite's writing transactions take turns whatever the service locks",
)
def test_concurrent_registrations_stop_at_five(app, people, monkeypatch):
    """Each registration counts the owner's endpoints and then adds one: eight at once, each
    pausing between the two, still leave five (without a lock, every one counted fewer)."""
    _, headers = people["pro"]
    create = WebhookEndpoint.create.__func__

    def slow_create(cls, **fields):
        time.sleep(0.05)  # the others reach their count meanwhile
        return create(cls, **fields)

    monkeypatch.setattr(WebhookEndpoint, "create", classmethod(slow_create))
    body = {"events": ["pick.settled"]}
    statuses = helpers.at_once(
        8,
        lambda index: (
            app.test_client()
            .post(HOOKS, json={**body, "url": f"{URL}/{index}"}, headers=headers)
            .status_code
        ),
    )
    assert sorted(statuses) == [201] * 5 + [409] * 3
    with app.app_context():
        assert WebhookEndpoint.select().count() == 5


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"events": ["pick.settled"]}, "url"),
        ({"url": URL}, "events"),
        ({"url": URL, "events": []}, "events"),
        ({"url": URL, "events": ["ping"]}, "events.0"),
        ({"url": URL, "events": ["pick.settled"], "secret": "mine"}, "secret"),
        ({"url": 5, "events": ["pick.settled"]}, "url"),
    ],
)
def test_bad_endpoints_are_422s(client, people, body, field):
    answer = client.post(HOOKS, json=body, headers=people["pro"][1])
    assert field in problem(answer, 422, "validation-error")["errors"]


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost:8080/hook",
        "http://127.0.0.1/hook",
        "http://10.0.0.8/hook",
        "http://169.254.169.254/latest/meta-data/",
        "ftp://93.184.216.34/",
    ],
)
def test_urls_that_reach_inside_are_refused(make_app, url):
    app = make_app(WEBHOOK_ALLOW_PRIVATE=False)
    client = app.test_client()
    with app.app_context():
        _, headers = factories.people()["pro"]
    answer = client.post(HOOKS, json={"url": url, "events": ["pick.settled"]}, headers=headers)
    body = problem(answer, 422, "webhook-url-refused")
    assert body["errors"]["url"] and body["detail"].startswith("The webhook URL is refused: ")
    made = client.post(
        HOOKS,
        json={"url": "http://93.184.216.34/hook", "events": ["pick.settled"]},
        headers=headers,
    )
    assert made.status_code == 201
    changed = client.patch(f"{HOOKS}/{made.get_json()['id']}", json={"url": url}, headers=headers)
    problem(changed, 422, "webhook-url-refused")


def test_webhook_calls_count_against_the_quota(client, people):
    _, headers = people["pro"]
    made = factories.endpoint(client, headers, URL)
    client.get(HOOKS, headers=headers)
    client.post(f"{HOOKS}/{made['id']}/test", headers=headers)
    usage = client.get("/api/v1/data/usage", headers=headers).get_json()
    assert usage["requests"]["used"] == 3


def test_no_webhook_id_is_sent_twice_once_its_endpoint_is_gone(client, people):
    """Receivers drop repeats by webhook-id: deleting the endpoint whose ping was the newest
    event frees neither that event's id nor its delivery's (SQLite gave both again)."""
    _, headers = people["pro"]
    kept, gone = (factories.endpoint(client, headers, f"{URL}/{n}") for n in (1, 2))
    ping = client.post(f"{HOOKS}/{gone['id']}/test", headers=headers).get_json()
    assert client.delete(f"{HOOKS}/{gone['id']}", headers=headers).status_code == 204
    after = client.post(f"{HOOKS}/{kept['id']}/test", headers=headers).get_json()
    assert after["eventId"] > ping["eventId"] and after["id"] > ping["id"]
    assert after["webhookId"] != ping["webhookId"]
    again = factories.endpoint(client, headers, f"{URL}/3")
    assert again["id"] > gone["id"]


def test_deliveries_are_listed_and_retried(client, people):
    _, headers = people["pro"]
    made = factories.endpoint(client, headers, URL)
    first = client.post(f"{HOOKS}/{made['id']}/test", headers=headers).get_json()
    second = client.post(f"{HOOKS}/{made['id']}/test", headers=headers).get_json()
    page = client.get(f"{HOOKS}/{made['id']}/deliveries?pageSize=1", headers=headers).get_json()
    assert (page["total"], [item["id"] for item in page["items"]]) == (2, [second["id"]])
    none = client.get(f"{HOOKS}/{made['id']}/deliveries?status=failed", headers=headers)
    assert none.get_json()["items"] == []
    problem(
        client.get(f"{HOOKS}/{made['id']}/deliveries?status=lost", headers=headers),
        422,
        "validation-error",
    )
    retried = client.post(f"{HOOKS}/{made['id']}/deliveries/{first['id']}/retry", headers=headers)
    assert retried.status_code == 202
    assert (retried.get_json()["status"], retried.get_json()["attempts"]) == ("pending", 0)
    problem(
        client.post(f"{HOOKS}/{made['id']}/deliveries/999/retry", headers=headers), 404, "not-found"
    )


@pytest.mark.parametrize(
    ("ports", "url", "allowed"),
    [
        (None, "https://93.184.216.34/hook", True),
        (None, "http://93.184.216.34:80/hook", True),
        (None, "https://93.184.216.34:8443/hook", False),
        (None, "http://93.184.216.34:22/", False),
        (None, "http://93.184.216.34:6379/", False),
        ("443,8443", "https://93.184.216.34:8443/hook", True),
        ("443,8443", "http://93.184.216.34/hook", False),
    ],
)
def test_a_webhook_url_names_an_allowed_port(make_app, ports, url, allowed):
    """A public host's other ports (SSH, Redis, anything) are never a webhook's: 443 and 80
    only, unless WEBHOOK_ALLOWED_PORTS says otherwise; at registration and at every change."""
    app = make_app(**({"WEBHOOK_ALLOWED_PORTS": ports} if ports else {}))
    client = app.test_client()
    with app.app_context():
        _, headers = factories.people()["pro"]
    answer = client.post(HOOKS, json={"url": url, "events": ["pick.settled"]}, headers=headers)
    if allowed:
        assert answer.status_code == 201, answer.get_json()
        return
    body = problem(answer, 422, "webhook-url-refused")
    assert body["errors"]["url"][0].startswith("its port must be one of ")
    made = factories.endpoint(client, headers, "https://93.184.216.34/hook")
    changed = client.patch(f"{HOOKS}/{made['id']}", json={"url": url}, headers=headers)
    problem(changed, 422, "webhook-url-refused")


@pytest.mark.parametrize("value", ["", "0", "443,65536", "https", "80;443"])
def test_webhook_allowed_ports_that_are_not_ports_stop_the_service(make_app, value):
    with pytest.raises(ConfigError, match="WEBHOOK_ALLOWED_PORTS"):
        make_app(WEBHOOK_ALLOWED_PORTS=value)
