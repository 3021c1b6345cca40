"""The monthly Data API quota: counting, the usage report, 429 quota-exceeded, admins."""

from datetime import UTC, datetime

import pytest

from errors import QuotaExceeded
from models import UsageCounter
from services.accounts import quotas
from tests import asserts, factories

USAGE = "/api/v1/data/usage"
CATALOG = "/api/v1/data/catalog"
#: The app's frozen clock: a minute before a month ends, so a test that read the wall clock
#: instead would see another month's counters and another reset.
NOW = datetime(2026, 11, 30, 23, 59, tzinfo=UTC)


@pytest.fixture
def app(make_app):
    """The app with the default configuration, its clock frozen at NOW."""
    return make_app(CLOCK=lambda: NOW)


def test_usage_reports_the_period_and_counters(client, people):
    body = client.get(USAGE, headers=people["pro"][1]).get_json()
    assert body["period"] == {"start": "2026-11-01T00:00:00Z", "end": "2026-12-01T00:00:00Z"}
    assert body["resetsAt"] == body["period"]["end"]
    assert body["plan"] == "pro" and body["state"] == "ok"
    assert body["requests"] == {"used": 0, "limit": 50_000, "remaining": 50_000}
    assert body["exports"] == {"used": 0, "limit": 500, "remaining": 500}
    assert body["exportRows"] == {"used": 0, "limit": 2_000_000, "remaining": 2_000_000}


def test_each_data_request_counts_once_and_usage_is_free(client, people):
    headers = people["pro"][1]
    for _ in range(3):
        assert client.get(CATALOG, headers=headers).status_code == 200
        client.get(USAGE, headers=headers)
    assert client.get(USAGE, headers=headers).get_json()["requests"]["used"] == 3


def test_admins_are_counted_but_unlimited(client, people):
    headers = people["admin"][1]
    client.get(CATALOG, headers=headers)
    body = client.get(USAGE, headers=headers).get_json()
    assert body["requests"] == {"used": 1, "limit": None, "remaining": None}
    assert body["state"] == "ok"


def test_the_quota_runs_out_with_a_warning_first(make_app):
    app = make_app(QUOTA_PRO_REQUESTS=5, RATELIMIT_AUTH="100 per minute", CLOCK=lambda: NOW)
    client = app.test_client()
    with app.app_context():
        headers = factories.people()["pro"][1]
    states = []
    for _ in range(5):
        assert client.get(CATALOG, headers=headers).status_code == 200
        states.append(client.get(USAGE, headers=headers).get_json()["state"])
    assert states == ["ok", "ok", "ok", "warning", "exceeded"]
    refused = client.get(CATALOG, headers=headers)
    body = asserts.problem(refused, 429, "quota-exceeded")
    assert "request" in body["detail"]
    assert refused.headers["Retry-After"] == "60"  # to the month's end
    assert client.get(USAGE, headers=headers).get_json()["requests"] == {
        "used": 5,
        "limit": 5,
        "remaining": 0,
    }


def test_a_refused_request_is_not_counted(ctx, people):
    user = people["pro"][0]
    now = datetime(2026, 3, 31, 23, 59, 59, tzinfo=UTC)
    for _ in range(2):
        quotas.consume(user, {"exports": 250}, factories.settings(), now=now)
    with pytest.raises(QuotaExceeded) as refused:
        quotas.consume(user, {"exports": 1}, factories.settings(), now=now)
    assert refused.value.headers["Retry-After"] == "1"
    row = UsageCounter.get(UsageCounter.user == user)
    assert (row.exports, row.period.isoformat()) == (500, "2026-03-01")


def test_counters_charged_together_are_all_or_nothing(ctx, people):
    user = people["pro"][0]
    now = datetime(2026, 5, 10, tzinfo=UTC)
    quotas.consume(user, {"exports": 1, "export_rows": 1_500_000}, factories.settings(), now=now)
    with pytest.raises(QuotaExceeded) as refused:
        quotas.consume(user, {"exports": 1, "export_rows": 600_000}, factories.settings(), now=now)
    assert "has 500000 left" in refused.value.detail
    with pytest.raises(QuotaExceeded, match="has 500000 left"):
        quotas.consume(
            user, {"export_rows": 2_000_001}, factories.settings(), now=now
        )  # larger than any month
    row = UsageCounter.get(UsageCounter.user == user)
    assert (row.exports, row.export_rows) == (1, 1_500_000)
    quotas.consume(
        user, {"exports": 1, "export_rows": 500_000}, factories.settings(), now=now
    )  # exactly fits
    row = UsageCounter.get(UsageCounter.user == user)
    assert (row.exports, row.export_rows) == (2, 2_000_000)


def test_months_are_counted_apart(ctx, people):
    user = people["pro"][0]
    quotas.consume(
        user, {"requests": 1}, factories.settings(), now=datetime(2026, 12, 31, 23, 0, tzinfo=UTC)
    )
    quotas.consume(
        user, {"requests": 1}, factories.settings(), now=datetime(2027, 1, 1, 0, 0, tzinfo=UTC)
    )
    quotas.consume(
        user, {"requests": 1}, factories.settings(), now=datetime(2027, 1, 15, tzinfo=UTC)
    )
    counts = {row.period.isoformat(): row.requests for row in UsageCounter.select()}
    assert counts == {"2026-12-01": 1, "2027-01-01": 2}


@pytest.mark.parametrize(
    ("moment", "start", "end"),
    [
        (datetime(2026, 11, 21, 12, tzinfo=UTC), "2026-11-01", "2026-12-01"),
        (datetime(2026, 12, 31, 23, 59, tzinfo=UTC), "2026-12-01", "2027-01-01"),
        (datetime(2027, 1, 1, tzinfo=UTC), "2027-01-01", "2027-02-01"),
    ],
)
def test_period_bounds(moment, start, end):
    first, following = quotas.period_of(moment)
    assert (first.date().isoformat(), following.date().isoformat()) == (start, end)
