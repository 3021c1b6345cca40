"""GET /api/v1/ops/health/services: dependencies, latency, freshness of results."""

import threading
from datetime import UTC, datetime, timedelta

from clock import utcnow
from models import Operation
from services.operations import health, schedule
from services.operations.health import Readiness
from tests import factories

HEALTH = "/api/v1/ops/health/services"


def _services(body):
    return {service["name"]: service for service in body["services"]}


def test_reports_every_dependency_with_latency(client, people):
    response = client.get(HEALTH, headers=people["operator"][1])
    assert response.status_code == 200
    body = response.get_json()
    services = _services(body)
    assert list(services) == [
        "database",
        "rate-limit-storage",
        "settlement",
        "calibration",
        "worker",
    ]
    assert services["database"]["status"] == "ok"
    assert services["rate-limit-storage"]["status"] == "ok"
    assert all(service["latencyMs"] >= 0 for service in body["services"])
    assert body["version"] == "0.1.0" and body["uptimeSeconds"] >= 0


def test_degraded_until_settlement_and_calibration_have_run_and_a_worker_beats(app, client, people):
    headers = people["admin"][1]
    body = client.get(HEALTH, headers=headers).get_json()
    assert body["status"] == "degraded"
    assert _services(body)["settlement"]["detail"] == "no settlement-run has succeeded yet"
    assert _services(body)["worker"]["detail"] == "no worker has run the schedule yet"
    with app.app_context():
        for kind in ("settlement-run", "calibration-run"):
            Operation.create(kind=kind, status="succeeded", params={}, finished_at=utcnow())
    assert client.get(HEALTH, headers=headers).get_json()["status"] == "degraded"
    with app.app_context():
        schedule.beat(utcnow())
    body = client.get(HEALTH, headers=headers).get_json()
    assert body["status"] == "ok", body


def test_a_worker_silent_for_longer_than_its_limit_degrades_the_service(make_app, people):
    now = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)
    app = make_app(CLOCK=lambda: now, WORKER_MAX_SILENCE_SECONDS=180)
    client = app.test_client()
    with app.app_context():
        headers = factories.bearer(factories.token(factories.user("a@example.com", role="admin")))
        for kind in ("settlement-run", "calibration-run"):
            Operation.create(kind=kind, status="succeeded", params={}, finished_at=now)
    ran = "a worker last ran the schedule {} s ago (limit 180 s)"
    for silent, status, detail in (
        (180, "ok", ran.format(180)),
        (181, "degraded", ran.format(181)),
        (-180, "ok", ran.format(0)),  # a worker's clock a little ahead
        (-181, "degraded", "a worker's last beat is dated 181 s ahead of this clock"),
    ):
        with app.app_context():
            schedule.beat(now - timedelta(seconds=silent))  # a later beat replaces it
        worker = _services(client.get(HEALTH, headers=headers).get_json())["worker"]
        assert (worker["status"], worker["detail"]) == (status, detail)


def test_a_stale_settlement_degrades_the_service(app, client, people):
    with app.app_context():
        Operation.create(
            kind="settlement-run",
            status="succeeded",
            params={},
            finished_at=utcnow() - timedelta(hours=30),
        )
        Operation.create(
            kind="calibration-run", status="succeeded", params={}, finished_at=utcnow()
        )
        Operation.create(kind="settlement-run", status="failed", params={}, finished_at=utcnow())
    body = client.get(HEALTH, headers=people["admin"][1]).get_json()
    assert body["status"] == "degraded"
    assert _services(body)["settlement"]["status"] == "degraded"
    assert _services(body)["calibration"]["status"] == "ok"


PROBES = ["/healthz", "/readyz"]


def test_probes_answer_ok_without_a_token_or_any_detail(client):
    for path in PROBES:
        response = client.get(path)
        assert response.status_code == 200 and response.get_json() == {"status": "ok"}
        assert "X-RateLimit-Limit" not in response.headers


def test_probes_are_outside_every_limit(make_app):
    client = make_app(RATELIMIT_PUBLIC="1 per minute", RATELIMIT_AUTH="1 per minute").test_client()
    for path in PROBES * 3:
        assert client.get(path).status_code == 200


def test_readyz_is_a_503_when_the_database_does_not_answer(make_app, tmp_path):
    from tests import asserts

    app = make_app()
    app.config["DATABASE_URL"] = f"sqlite:///{tmp_path / 'gone' / 'missing.db'}"
    ready = app.test_client().get("/readyz")
    body = asserts.problem(ready, 503, "service-unavailable")
    assert int(ready.headers["Retry-After"]) >= 1
    assert "sqlite" not in ready.get_data(as_text=True).lower()  # no internal detail
    assert set(body) == {"type", "title", "status", "detail", "requestId"}
    assert app.test_client().get("/healthz").status_code == 200  # the process still answers


def test_probes_are_documented_without_security(client):
    spec = client.get("/openapi.json").get_json()
    for path in PROBES:
        operation = spec["paths"][path]["get"]
        assert "security" not in operation or operation["security"] == []
    assert "503" in spec["paths"]["/readyz"]["get"]["responses"]


def test_readyz_opens_at_most_one_probe_connection_per_second(make_app, monkeypatch):
    """Probes looped by many clients share one verdict per second of the app's clock: counted
    by the connections the probe really opens."""
    from services.operations import health

    opened = []

    def counted(*args, **kwargs):
        database = open_database(*args, **kwargs)
        opened.append(database)
        return database

    open_database = health.open_database
    monkeypatch.setattr(health, "open_database", counted)
    instant = [datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC)]
    client = make_app(CLOCK=lambda: instant[0]).test_client()
    for _ in range(50):
        assert client.get("/readyz").status_code == 200
    assert len(opened) == 1
    instant[0] += timedelta(milliseconds=999)
    assert client.get("/readyz").status_code == 200
    assert len(opened) == 1
    instant[0] += timedelta(milliseconds=1)
    for _ in range(50):
        assert client.get("/readyz").status_code == 200
    assert len(opened) == 2
    instant[0] -= timedelta(hours=1)  # a clock stepped back does not pin an old verdict
    assert client.get("/readyz").status_code == 200
    assert len(opened) == 3


def test_readyz_keeps_a_failed_verdict_for_its_interval_too(make_app, tmp_path):
    from tests import asserts

    instant = [datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC)]
    app = make_app(CLOCK=lambda: instant[0])
    good = app.config["DATABASE_URL"]
    app.config["DATABASE_URL"] = f"sqlite:///{tmp_path / 'gone' / 'missing.db'}"
    client = app.test_client()
    asserts.problem(client.get("/readyz"), 503, "service-unavailable")
    app.config["DATABASE_URL"] = good
    asserts.problem(client.get("/readyz"), 503, "service-unavailable")  # the kept verdict
    instant[0] += timedelta(seconds=1)
    assert client.get("/readyz").status_code == 200


def test_readyz_answers_the_last_verdict_while_a_slow_probe_runs(monkeypatch):
    """A probe may take the whole connect timeout: meanwhile other callers answer the last
    verdict at once (no queue behind a slow database, no probe of their own), and the new
    verdict is dated when its probe ended, so it is not stale on arrival."""
    readiness = Readiness(1)
    clock = [datetime(2026, 11, 23, 9, 0, tzinfo=UTC)]
    probing, finish = threading.Event(), threading.Event()
    probes = []

    def probe(_settings):
        probes.append(clock[0])
        if len(probes) == 1:
            return True
        probing.set()
        assert finish.wait(10)
        clock[0] += timedelta(seconds=3)  # longer than the interval
        return False

    monkeypatch.setattr(health, "database_answers", probe)
    assert readiness.ready({}, lambda: clock[0]) is True
    clock[0] += timedelta(seconds=2)
    slow = []
    worker = threading.Thread(target=lambda: slow.append(readiness.ready({}, lambda: clock[0])))
    worker.start()
    assert probing.wait(10)
    assert [readiness.ready({}, lambda: clock[0]) for _ in range(5)] == [True] * 5
    finish.set()
    worker.join(10)
    assert slow == [False]
    assert readiness.ready({}, lambda: clock[0]) is False  # dated at the probe's end: fresh
    assert len(probes) == 2
