"""GET /api/v1/ops/health/services: dependencies, latency, freshness of results."""

from datetime import timedelta

from models import Operation, utcnow

HEALTH = "/api/v1/ops/health/services"


def _services(body):
    return {service["name"]: service for service in body["services"]}


def test_reports_every_dependency_with_latency(client, people):
    response = client.get(HEALTH, headers=people["operator"][1])
    assert response.status_code == 200
    body = response.get_json()
    services = _services(body)
    assert list(services) == ["database", "rate-limit-storage", "settlement", "calibration"]
    assert services["database"]["status"] == "ok"
    assert services["rate-limit-storage"]["status"] == "ok"
    assert all(service["latencyMs"] >= 0 for service in body["services"])
    assert body["version"] == "0.1.0" and body["uptimeSeconds"] >= 0


def test_degraded_until_settlement_and_calibration_have_run(app, client, people):
    headers = people["admin"][1]
    body = client.get(HEALTH, headers=headers).get_json()
    assert body["status"] == "degraded"
    assert _services(body)["settlement"]["detail"] == "no settlement-run has succeeded yet"
    with app.app_context():
        for kind in ("settlement-run", "calibration-run"):
            Operation.create(kind=kind, status="succeeded", params={}, finished_at=utcnow())
    body = client.get(HEALTH, headers=headers).get_json()
    assert body["status"] == "ok", body


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
