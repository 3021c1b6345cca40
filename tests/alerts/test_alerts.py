"""Pick alerts over a real SMTP server and a server answering as Telegram's Bot API, both started
here: subscribing (and what is refused), each message made and sent once however often the
worker's round runs, retries after a Telegram 429 and an SMTP 4xx, failures recorded, the
one-click unsubscribe, and nothing told early: a locked pick reaches a free subscriber only
at kick-off."""

from datetime import UTC, datetime, timedelta

import pytest

from models import AlertMessage, AlertSubscription
from services.alerts import outbox
from services.webhooks import deliveries
from tests import factories
from tests.alert_servers import BotApi, SmtpServer

START = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)
KICKOFF = START + timedelta(hours=6)
ALERTS = "/api/me/alerts"
BOT_TOKEN = "123456:test-token-of-the-alerts-bot"
BASE = "https://picks.example"


@pytest.fixture
def clock():
    return factories.Clock(START)


@pytest.fixture
def smtp():
    with SmtpServer() as server:
        yield server


@pytest.fixture
def bot():
    with BotApi(BOT_TOKEN) as server:
        yield server


@pytest.fixture
def app(make_app, clock, smtp, bot):
    return make_app(
        CLOCK=clock,
        PUBLIC_BASE_URL=BASE,
        SMTP_URL=smtp.url,
        SMTP_FROM="Picks <alerts@picks.example>",
        TELEGRAM_BOT_TOKEN=BOT_TOKEN,
        TELEGRAM_API_BASE=bot.base,
        ALERT_TIMEOUT=5.0,
        RATELIMIT_AUTH="1000 per minute",
    )


def subscribe(client, headers, channel="email", address="reader@example.com", **filters):
    response = client.post(
        ALERTS, json={"channel": channel, "address": address, **filters}, headers=headers
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def fixture(rating="B", market="1x2", selection="home", kickoff=KICKOFF, match=None, **fields):
    """A live pick made now on a match kicking off at ``kickoff`` (needs an app context)."""
    match = match or factories.match(
        "Rovers", "United", kickoff=kickoff, status="scheduled", odds=()
    )
    return factories.pick(
        match,
        market=market,
        selection=selection,
        rating=rating,
        is_live=True,
        created_at=factories.now(),
        **fields,
    )


def run(app, clock):
    """One round of the worker's alerts."""
    with app.app_context():
        return outbox.deliver_due(app.config, clock)


def messages():
    return list(AlertMessage.select().order_by(AlertMessage.id).dicts())


def test_subscriptions_are_the_callers_own(app, client, people):
    _, headers = people["free"]
    _, other = people["pro"]
    made = subscribe(client, headers, ratings=["B", "A"], markets=["1x2"])
    assert made["channel"] == "email" and made["address"] == "reader@example.com"
    assert made["ratings"] == ["A", "B"] and made["leagueIds"] == []
    assert made["createdAt"] == "2026-11-23T09:00:00Z"
    listing = client.get(ALERTS, headers=headers).get_json()
    assert [item["id"] for item in listing["items"]] == [made["id"]]
    assert client.get(f"{ALERTS}/{made['id']}", headers=headers).status_code == 200
    foreign = client.get(f"{ALERTS}/{made['id']}", headers=other)
    assert foreign.status_code == 404 and foreign.mimetype == "application/problem+json"
    assert client.delete(f"{ALERTS}/{made['id']}", headers=other).status_code == 404
    assert client.delete(f"{ALERTS}/{made['id']}", headers=headers).status_code == 204
    assert client.get(ALERTS, headers=headers).get_json()["items"] == []
    assert client.get(ALERTS).status_code == 401


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"channel": "email", "address": "not an address"}, "address"),
        ({"channel": "email", "address": "reader@"}, "address"),
        ({"channel": "telegram", "address": "@somebody"}, "address"),
        ({"channel": "telegram", "address": "12ab"}, "address"),
        ({"channel": "sms", "address": "+441234"}, "channel"),
        ({"channel": "email", "address": "a@example.com", "ratings": ["D"]}, "ratings"),
        ({"channel": "email", "address": "a@example.com", "leagueIds": [999]}, "leagueIds"),
    ],
)
def test_an_address_or_filter_that_is_not_one_is_a_422(app, client, people, body, field):
    _, headers = people["free"]
    response = client.post(ALERTS, json=body, headers=headers)
    assert response.status_code == 422, response.get_json()
    assert response.mimetype == "application/problem+json"
    problem = response.get_json()
    assert problem["type"].endswith("/problems/validation-error")
    assert [name.split(".")[0] for name in problem["errors"]] == [field]


def test_a_channel_the_deployment_does_not_send_by_is_a_409(make_app, clock):
    app = make_app(CLOCK=clock, PUBLIC_BASE_URL=BASE)
    with app.app_context():
        _, headers = factories.people()["free"]
    response = app.test_client().post(
        ALERTS, json={"channel": "telegram", "address": "42"}, headers=headers
    )
    assert response.status_code == 409
    assert response.get_json()["type"].endswith("/problems/alert-channel-unavailable")
    assert "TELEGRAM_BOT_TOKEN" in response.get_json()["detail"]


def test_a_published_pick_is_emailed_once_however_often_the_round_runs(
    app, client, people, clock, smtp
):
    _, headers = people["free"]
    made = subscribe(client, headers, markets=["1x2"])
    clock.advance(minutes=1)
    with app.app_context():
        pick = fixture(rating="B", odds=2.35, bookmaker="bet365")
        fixture(rating="B", market="btts", selection="yes", match=pick.match)
    assert run(app, clock)["alerts sent"] == 1  # the btts pick is not asked for
    assert run(app, clock) == {"alerts made": 0, "alerts sent": 0, "alerts failed": 0}
    with app.app_context():
        assert outbox.fan_out(clock()) == 0
        assert [(m["moment"], m["status"], m["attempts"]) for m in messages()] == [
            ("publication", "sent", 1)
        ]
    (email,) = smtp.messages
    assert smtp.envelopes == [("<alerts@picks.example>", ["<reader@example.com>"])]
    assert email["Subject"] == "New B pick: Rovers v United"
    assert email["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    link = email["List-Unsubscribe"].strip("<>")
    assert link.startswith(f"{BASE}/api/alerts/unsubscribe/{made['id']}.")
    body = email.get_content()
    assert "Match result: Rovers win at 2.35 (bet365)" in body
    assert f"Stop these alerts: {link}" in body


def test_the_worker_pump_sends_each_message_once_when_two_run(app, client, people, clock, bot):
    _, headers = people["pro"]
    subscribe(client, headers, channel="telegram", address="-1001234567")
    clock.advance(minutes=1)
    with app.app_context():
        fixture(rating="A")
        rounds = (deliveries.deliver_due, outbox.deliver_due)
        for _ in range(2):  # the pump's task run twice, one after the other
            deliveries.pump(app.config, clock, seconds=0, rounds=rounds)
    (sent,) = bot.sent
    assert sent["chat_id"] == -1001234567
    assert sent["text"].startswith("New A pick: Rovers v United")
    assert "/api/alerts/unsubscribe/" in sent["text"]


def test_a_telegram_429_is_tried_again_after_its_retry_after(app, client, people, clock, bot):
    _, headers = people["pro"]
    subscribe(client, headers, channel="telegram", address="424242")
    clock.advance(minutes=1)
    bot.script.append(BotApi.refusal(429, "Too Many Requests: retry after 45", retry_after=45))
    with app.app_context():
        fixture()
    run(app, clock)
    with app.app_context():
        (message,) = messages()
    assert (message["status"], message["attempts"]) == ("pending", 1)
    assert message["last_error"] == "Telegram 429: Too Many Requests: retry after 45"
    # The schedule's second step is 30 s: the Bot API asked for 45.
    assert message["next_attempt_at"] == clock() + timedelta(seconds=45)
    clock.advance(seconds=44)
    run(app, clock)
    assert bot.sent == []
    clock.advance(seconds=1)
    run(app, clock)
    assert len(bot.sent) == 1 and len(bot.requests) == 2
    with app.app_context():
        (message,) = messages()
    assert (message["status"], message["attempts"]) == ("sent", 2)


def listed(client, headers, subscription_id):
    """A subscription's messages as its owner reads them."""
    response = client.get(f"{ALERTS}/{subscription_id}/messages", headers=headers)
    assert response.status_code == 200, response.get_json()
    return response.get_json()["items"]


def test_an_smtp_4xx_is_tried_again_and_a_5xx_fails_for_good(app, client, people, clock, smtp):
    _, headers = people["pro"]
    _, other = people["free"]
    first_id = subscribe(client, headers, address="first@example.com")["id"]
    second_id = subscribe(client, headers, address="second@example.com")["id"]
    clock.advance(minutes=1)
    smtp.script["RCPT"] = [(451, "4.3.0 Mailbox busy, try later"), (550, "5.1.1 No such user")]
    with app.app_context():
        fixture()
    run(app, clock)
    with app.app_context():
        first, second = messages()
    assert (first["status"], first["last_error"]) == (
        "pending",
        "SMTP 451: 4.3.0 Mailbox busy, try later",
    )
    assert first["next_attempt_at"] == clock() + timedelta(seconds=30)
    assert (second["status"], second["last_error"]) == ("failed", "SMTP 550: 5.1.1 No such user")
    clock.advance(seconds=30)
    run(app, clock)
    with app.app_context():
        first, second = messages()
    assert (first["status"], first["attempts"]) == ("sent", 2)
    assert (second["status"], second["attempts"]) == ("failed", 1)
    assert [envelope[1] for envelope in smtp.envelopes] == [["<first@example.com>"]]
    (shown,) = listed(client, headers, second_id)
    assert shown["status"] == "failed" and shown["moment"] == "publication"
    assert shown["lastError"] == "SMTP 550: 5.1.1 No such user" and shown["nextAttemptAt"] is None
    (shown,) = listed(client, headers, first_id)
    assert (shown["status"], shown["attempts"], shown["lastError"]) == ("sent", 2, None)
    assert client.get(f"{ALERTS}/{first_id}/messages", headers=other).status_code == 404


def test_the_last_try_fails_and_says_why(make_app, clock, smtp):
    app = make_app(
        CLOCK=clock,
        PUBLIC_BASE_URL=BASE,
        SMTP_URL=smtp.url,
        SMTP_FROM="alerts@picks.example",
        ALERT_RETRY_SCHEDULE="0,10",
    )
    with app.app_context():
        _, headers = factories.people()["pro"]
    subscribe(app.test_client(), headers)
    clock.advance(minutes=1)
    smtp.script["DATA"] = [(421, "4.7.0 Try again later")] * 2
    with app.app_context():
        fixture()
    assert run(app, clock)["alerts failed"] == 0
    clock.advance(seconds=10)
    assert run(app, clock)["alerts failed"] == 1
    with app.app_context():
        (message,) = messages()
    assert (message["status"], message["attempts"]) == ("failed", 2)
    assert message["last_error"] == "SMTP 421: 4.7.0 Try again later"
    assert smtp.messages == []


def test_a_locked_pick_reaches_a_free_subscriber_only_at_kick_off(app, client, people, clock, smtp):
    _, free = people["free"]
    _, pro = people["pro"]
    subscribe(client, free, address="free@example.com")
    subscribe(client, pro, address="pro@example.com")
    clock.advance(minutes=1)
    with app.app_context():
        locked = fixture(rating="A")
        # A B pick of the same match: its match is locked, so it gives nothing away either.
        fixture(rating="B", market="ou25", selection="over", match=locked.match)
    run(app, clock)
    assert sorted(m["To"] for m in smtp.messages) == ["pro@example.com"] * 2
    with app.app_context():
        assert {(m["subscription"], m["moment"]) for m in messages()} == {(2, "publication")}
    clock.advance(hours=5, minutes=58)  # two minutes before kick-off: still nothing
    run(app, clock)
    assert len(smtp.messages) == 2
    clock.advance(minutes=2)  # kick-off
    run(app, clock)
    told = [m for m in smtp.messages if m["To"] == "free@example.com"]
    assert len(told) == 2 and len(smtp.messages) == 4
    assert {m["Subject"] for m in told} == {
        "Unlocked at kick-off: A pick, Rovers v United",
        "Unlocked at kick-off: B pick, Rovers v United",
    }
    run(app, clock)
    assert len(smtp.messages) == 4


def test_a_message_waits_when_its_reader_may_no_longer_see_the_pick(
    app, client, people, clock, smtp
):
    user, headers = people["pro"]
    subscribe(client, headers)
    clock.advance(minutes=1)
    with app.app_context():
        fixture(rating="A")
        outbox.fan_out(clock())
        user.plan = "free"
        user.save()
    run(app, clock)
    assert smtp.messages == []
    with app.app_context():
        (message,) = messages()
    assert (message["status"], message["attempts"]) == ("pending", 0)
    assert message["next_attempt_at"] == KICKOFF
    clock.now = KICKOFF
    run(app, clock)
    assert len(smtp.messages) == 1


def test_a_suspended_subscriber_is_told_nothing(app, client, people, clock, smtp):
    user, headers = people["pro"]
    made = subscribe(client, headers)
    clock.advance(minutes=1)
    with app.app_context():
        fixture()
        outbox.fan_out(clock())
        user.status = "suspended"
        user.save()
    assert run(app, clock)["alerts failed"] == 1
    assert smtp.messages == []
    with app.app_context():
        (message,) = messages()
    assert message["subscription"] == made["id"] and message["status"] == "failed"
    assert message["last_error"] == "not sent: its owner's account is suspended"


def test_a_try_cut_short_is_never_sent_again(app, client, people, clock, smtp):
    _, headers = people["pro"]
    subscribe(client, headers)
    clock.advance(minutes=1)
    with app.app_context():
        fixture()
        outbox.fan_out(clock())
        # A worker claims the message, then dies before it records what its try gave.
        assert outbox._claim(clock(), 60) is not None
    clock.advance(seconds=61)
    run(app, clock)
    assert smtp.messages == []
    with app.app_context():
        (message,) = messages()
    assert message["status"] == "failed" and message["last_error"].startswith("interrupted")


def test_the_unsubscribe_link_asks_on_get_and_unsubscribes_on_post(
    app, client, people, clock, smtp
):
    _, headers = people["free"]
    subscribe(client, headers)
    clock.advance(minutes=1)
    with app.app_context():
        fixture()
    run(app, clock)
    path = smtp.messages[0]["List-Unsubscribe"].strip("<>").removeprefix(BASE)
    asked = client.get(path)
    assert asked.status_code == 200
    assert asked.get_json() == {
        "id": 1,
        "subscribed": True,
        "channel": "email",
        "address": "reader@example.com",
    }
    page = client.get(path, headers={"Accept": "text/html"})
    assert page.mimetype == "text/html"
    assert f'<form method="post" action="{path}">' in page.get_data(as_text=True)
    assert "form-action 'self'" in page.headers["Content-Security-Policy"]
    with app.app_context():
        assert AlertSubscription.select().count() == 1  # a GET changes nothing
    done = client.post(
        path,
        data="List-Unsubscribe=One-Click",
        content_type="application/x-www-form-urlencoded",
    )
    assert done.status_code == 200 and done.get_json()["subscribed"] is False
    with app.app_context():
        assert AlertSubscription.select().count() == 0
        assert AlertMessage.select().count() == 0
        fixture(
            kickoff=KICKOFF + timedelta(days=1),
            match=factories.match(
                "City", "Town", kickoff=KICKOFF + timedelta(days=1), status="scheduled"
            ),
        )
    run(app, clock)
    assert len(smtp.messages) == 1
    again = client.post(path)
    assert again.status_code == 200 and again.get_json()["subscribed"] is False
    forged = client.post(path[:-2] + ("AA" if not path.endswith("AA") else "BB"))
    assert forged.status_code == 404
    assert forged.mimetype == "application/problem+json"


def test_the_relay_login_comes_from_the_smtp_url(make_app, clock, smtp):
    smtp.credentials = ("alerts@picks.example", "p@ss:word")
    login = "alerts%40picks.example:p%40ss%3Aword"
    app = make_app(
        CLOCK=clock,
        PUBLIC_BASE_URL=BASE,
        SMTP_URL=f"smtp://{login}@{smtp.host}:{smtp.port}",
        SMTP_FROM="alerts@picks.example",
    )
    with app.app_context():
        _, headers = factories.people()["pro"]
    subscribe(app.test_client(), headers)
    clock.advance(minutes=1)
    with app.app_context():
        fixture()
    assert run(app, clock)["alerts sent"] == 1
    assert any(command.startswith("AUTH PLAIN") for command in smtp.commands)
    assert len(smtp.messages) == 1
