"""Date arguments on every endpoint that takes one: the two forms they accept, and 422s (never a
500) for anything else, the ends of the calendar included."""

import pytest
from marshmallow import fields

from tests import asserts

DAY_PATHS = ["/api/picks/today?date={}", "/api/explorer/slate?date={}"]


@pytest.mark.parametrize("path", DAY_PATHS)
@pytest.mark.parametrize(
    "value",
    [
        "2026-11-21",
        "2026-11-21T19:45",
        "2026-11-21T19:45:00Z",
        "2026-11-21t19:45:00.123456789z",
        "2026-11-21T19:45:00%2B05:30",
        "0001-01-01",
        "9999-12-30",
    ],
)
def test_a_date_or_a_date_time_is_accepted(client, path, value):
    response = client.get(path.format(value))
    assert response.status_code == 200, response.get_data(as_text=True)


@pytest.mark.parametrize("path", DAY_PATHS)
@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("20261121", "Must be a date"),  # ISO 8601's basic form: too easily a typo
        ("2026-11-21T19", "Must be a date"),  # an hour without its minutes
        ("2026-02-30", "2026-02-30 is not a real date."),  # the right shape, no such day
        ("2026-02-30T10:00:00Z", "2026-02-30 is not a real date."),
        ("2026-13-01", "2026-13-01 is not a real date."),
        ("21/11/2026", "Must be a date"),
        ("9999-12-31", "Out of the supported range"),  # its day never ends in Python's calendar
        ("9999-12-31T12:00:00Z", "Out of the supported range"),
        ("0001-01-01T00:00:00%2B01:00", "Out of the supported range"),  # before year 1 in UTC
    ],
)
def test_anything_else_is_a_422_naming_the_parameter(client, path, value, message):
    body = asserts.problem(client.get(path.format(value)), 422, "validation-error")
    assert list(body["errors"]) == ["date"] and body["errors"]["date"][0].startswith(message)


def test_a_range_that_ends_before_it_starts_is_a_422(client, people):
    response = client.get(
        "/api/v1/data/matches?from=2026-11-22&to=2026-11-21", headers=people["pro"][1]
    )
    body = asserts.problem(response, 422, "validation-error")
    assert body["errors"] == {"to": ["Must not be before from."]}
    same_day = client.get(
        "/api/v1/data/matches?from=2026-11-21&to=2026-11-21", headers=people["pro"][1]
    )
    assert same_day.status_code == 200


def test_each_schema_instance_adds_its_checks_once_and_never_to_the_class():
    """Every string and integer field gets its check per instance: made many times (several
    times a request), a schema's fields keep one check each, not one per instance ever made."""
    from schemas import explorer
    from schemas.numbers import WithinInt32
    from schemas.text import plain_text

    def added(check) -> bool:
        return check is plain_text or isinstance(check, WithinInt32)

    for _ in range(5):
        schema = explorer.ComparableArgsSchema()
    checked = {  # (the quarter-goal `line` is neither: its range is its own)
        name: field
        for name, field in schema.fields.items()
        if isinstance(field, fields.String | fields.Integer)
    }
    assert {"matchId", "market", "scope", "limit"} <= {f.data_key or n for n, f in checked.items()}
    for name, field in checked.items():
        checks = [check for check in field.validators if added(check)]
        assert len(checks) == 1, (name, field.validators)
    for field in explorer.ComparableArgsSchema._declared_fields.values():
        assert not any(added(check) for check in field.validators)
