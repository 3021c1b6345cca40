"""Input a hostile or careless client sends: always a 400, 413 or 422, never a 500.

Each case once answered 500 (and logged a traceback) on SQLite, PostgreSQL or both: text the
database or the password hash cannot take, integers past what the database holds, JSON nested
past the parser's recursion, a streamed body past the size limit.
"""

import io
import json
import logging

import pytest

from schemas.common import CamelSchema
from schemas.numbers import WithinInt32
from schemas.text import plain_text
from tests import asserts
from web.problems import MAX_ECHOED_CHARS, MAX_LISTED_ERRORS

REGISTER = "/api/auth/register"
LOGIN = "/api/auth/login"

#: Text no request may carry, as JSON spells it: a lone surrogate (no UTF-8 encoder writes it),
#: NUL (PostgreSQL's text refuses it), and both inside otherwise ordinary values.
BAD_TEXT = ["\ud800abcdefgh", "abcdefgh\udfff", "a\x00bcdefgh", "nul\x00@example.com"]


def raw_json(client, path, body: str, **kwargs):
    """POST ``body`` exactly as written (json.dumps escapes the bad characters as JSON does)."""
    return client.post(path, data=body, content_type="application/json", **kwargs)


@pytest.fixture(autouse=True)
def no_tracebacks(caplog):
    """Whatever a test sends, the log holds no unhandled error."""
    with caplog.at_level(logging.ERROR, logger="picks"):
        yield
    assert not [record for record in caplog.records if "unhandled" in record.getMessage()]


@pytest.mark.parametrize("path", [REGISTER, LOGIN])
@pytest.mark.parametrize("field", ["email", "password"])
@pytest.mark.parametrize("text", BAD_TEXT)
def test_text_with_nul_or_a_lone_surrogate_is_a_422_at_register_and_login(
    client, path, field, text
):
    body = {"email": "someone@example.com", "password": "password-1", field: text}
    problem = asserts.problem(raw_json(client, path, json.dumps(body)), 422, "validation-error")
    assert field in problem["errors"]


def test_a_body_nested_100000_deep_is_a_400(client):
    body = '{"email": ' + "[" * 100_000 + "]" * 100_000 + "}"
    for path in (REGISTER, LOGIN):
        asserts.problem(raw_json(client, path, body), 400, "malformed-request")


def test_a_body_with_an_integer_past_pythons_digit_limit_is_a_400(client, people):
    """Python converts at most 4,300 digits to an int: json.loads raises a plain ValueError,
    which once answered 500 on every view with a JSON body."""
    digits = "1" * 4_301
    for path in (REGISTER, LOGIN):
        problem = asserts.problem(
            raw_json(client, path, f'{{"email": {digits}}}'), 400, "malformed-request"
        )
        assert problem["detail"].startswith("The body holds a number too long to read")
    operation = raw_json(
        client,
        "/api/v1/ops/operations/intelligence-refreshes",
        f'{{"matchId": {digits}}}',
        headers=people["admin"][1],
    )
    asserts.problem(operation, 400, "malformed-request")
    # Within the limit, the number is read and refused by the schema as ever.
    asserts.problem(
        raw_json(client, REGISTER, f'{{"email": {"1" * 4_300}}}'), 422, "validation-error"
    )


def test_a_chunked_body_over_1_mib_is_a_413(client):
    body = json.dumps({"email": "a" * (2 * 1024 * 1024)}).encode()
    response = client.post(
        LOGIN,
        input_stream=io.BytesIO(body),
        content_type="application/json",
        headers={"Transfer-Encoding": "chunked"},
        environ_overrides={"wsgi.input_terminated": True},  # as gunicorn says of chunked bodies
    )
    asserts.problem(response, 413, "payload-too-large")


@pytest.mark.parametrize(
    "spelling",
    ["1_0", "%2010", "10%20", "%D9%A1%D9%A0", "%EF%BC%91%EF%BC%90", "%2B10", "1e1", "10.0"],
)
def test_a_query_integer_is_ascii_digits(client, people, spelling):
    """``int()`` reads 1_0, " 10" and other scripts' digits (١٠, full-width １０): not a query."""
    assert client.get("/api/admin/users?pageSize=10", headers=people["admin"][1]).status_code == 200
    response = client.get(f"/api/admin/users?pageSize={spelling}", headers=people["admin"][1])
    errors = asserts.problem(response, 422, "validation-error")["errors"]
    assert errors == {"pageSize": ["Not a valid integer."]}


@pytest.mark.parametrize(
    "spelling", ["0_5", "%200.5", "0.5%20", "%D9%A1", ".5", "1.", "05", "nan", "inf", "%2B1"]
)
def test_a_query_decimal_is_a_json_number(client, spelling):
    """``float()`` reads 0_5, " 0.5", .5 and other scripts' digits (١): not a query."""
    for written in ("0.5", "1", "0", "5e-1", "1e-05", "1E-5"):  # what serialisers write
        assert client.get(f"/api/explorer/slate?minDataQuality={written}").status_code == 200
    response = client.get(f"/api/explorer/slate?minDataQuality={spelling}")
    errors = asserts.problem(response, 422, "validation-error")["errors"]
    assert errors == {"minDataQuality": ["Not a valid number."]}


@pytest.mark.parametrize("value", ["0.05", "1_0", "١", " 0.5 ", True])
def test_a_body_decimal_is_a_json_number(client, people, value):
    path, headers = "/api/backtest/run", people["free"][1]
    assert client.post(path, json={"minEdge": 0.05}, headers=headers).status_code == 200
    assert client.post(path, json={"minEdge": 1}, headers=headers).status_code == 200
    response = client.post(path, json={"minEdge": value}, headers=headers)
    errors = asserts.problem(response, 422, "validation-error")["errors"]
    assert errors == {"minEdge": ["Not a valid number."]}


@pytest.mark.parametrize(
    ("start", "message"),
    [
        ("99999999999999999999", "Must be between 0 and 2147483647."),
        ("2147483648", "Must be between 0 and 2147483647."),
        ("-2147483649", "Must be greater than or equal to 0."),
        ("-1", "Must be greater than or equal to 0."),
    ],
)
def test_an_integer_past_int32_names_the_fields_own_bounds(client, start, message):
    """One message, naming the bounds the field and int32 leave together."""
    response = client.get(f"/api/track-record/ledger/entries?start={start}")
    assert asserts.problem(response, 422, "validation-error")["errors"] == {"start": [message]}


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("page=1000000000000000000", "page"),  # 10^18: PostgreSQL's OFFSET overflowed
        ("page=100000000000000000000000", "page"),  # 10^23: SQLite's integers overflowed
        ("page=-1", "page"),
        ("pageSize=100000000000000000000000", "pageSize"),
        ("search=%00", "search"),
        ("search=a%00b", "search"),
    ],
)
def test_admin_listing_refuses_what_the_database_cannot_take(client, people, query, field):
    response = client.get(f"/api/admin/users?{query}", headers=people["admin"][1])
    assert field in asserts.problem(response, 422, "validation-error")["errors"]


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/api/explorer/slate?leagueId=100000000000000000000000", "leagueId"),
        ("/api/explorer/slate?teamId=-100000000000000000000000", "teamId"),
        ("/api/explorer/comparable?matchId=100000000000000000000000", "matchId"),
        ("/api/explorer/comparable?matchId=1&limit=100000000000000000000000", "limit"),
        ("/api/picks/today?date=2026-01-01%00", "date"),
        ("/api/picks/today?rating=A%00", "rating"),
        ("/api/explorer/slate?market=1x2%00", "market"),
        ("/api/track-record/by-competition-type?isLive=true%00", "isLive"),
    ],
)
def test_public_query_parameters_refuse_what_the_database_cannot_take(client, path, field):
    assert field in asserts.problem(client.get(path), 422, "validation-error")["errors"]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("leagueId=100000000000000000000000", "leagueId"),
        ("teamId=1000000000000000000", "teamId"),
        ("limit=100000000000000000000000", "limit"),
        ("cursor=%00", "cursor"),
        ("cursor=abc%00def", "cursor"),
        ("status=finished%00", "status"),
    ],
)
def test_data_api_query_parameters_refuse_what_the_database_cannot_take(
    client, people, query, field
):
    response = client.get(f"/api/v1/data/matches?{query}", headers=people["pro"][1])
    assert field in asserts.problem(response, 422, "validation-error")["errors"]


@pytest.mark.parametrize(
    ("resource", "filters", "field"),
    [
        ("odds", {"bookmaker": "bet\x00365"}, "parametersJson.bookmaker"),
        ("odds", {"bookmaker": "\ud800"}, "parametersJson.bookmaker"),
        ("matches", {"leagueId": 10**23}, "parametersJson.leagueId"),
        ("picks", {"leagueId": -(10**18)}, "parametersJson.leagueId"),
        ("matches", {"status": "finished\x00"}, "parametersJson.status"),
    ],
)
def test_export_filters_refuse_what_the_database_cannot_take(
    client, people, resource, filters, field
):
    body = {"resource": resource, "format": "json", "parametersJson": json.dumps(filters)}
    response = raw_json(client, "/api/v1/data/exports", json.dumps(body), headers=people["pro"][1])
    assert field in asserts.problem(response, 422, "validation-error")["errors"]


def test_export_filters_nested_too_deep_are_a_422(client, people):
    body = {"resource": "odds", "format": "json", "parametersJson": "[" * 5000 + "]" * 5000}
    response = client.post("/api/v1/data/exports", json=body, headers=people["pro"][1])
    assert "parametersJson" in asserts.problem(response, 422, "validation-error")["errors"]


@pytest.mark.parametrize(
    "body",
    [
        {"matchId": 10**23},
        {"matchId": "\ud800"},
    ],
)
def test_operation_requests_refuse_what_the_database_cannot_take(client, people, body):
    response = raw_json(
        client,
        "/api/v1/ops/operations/intelligence-refreshes",
        json.dumps(body),
        headers=people["admin"][1],
    )
    assert "matchId" in asserts.problem(response, 422, "validation-error")["errors"]


def test_a_backtest_refuses_what_the_database_cannot_take(client, people):
    body = {"leagueId": 10**23, "rating": "A\x00", "market": "\ud800"}
    response = raw_json(client, "/api/backtest/run", json.dumps(body), headers=people["free"][1])
    errors = asserts.problem(response, 422, "validation-error")["errors"]
    assert {"leagueId", "rating", "market"} <= set(errors)


def test_a_422_lists_at_most_20_fields_and_clips_what_it_echoes(client):
    unknown = {f"{'k' * 150}{n}": n for n in range(5000)}
    body = json.dumps({"email": "a@example.com", "password": "password-1", **unknown})
    response = raw_json(client, REGISTER, body)
    problem = asserts.problem(response, 422, "validation-error")
    assert len(problem["errors"]) == MAX_LISTED_ERRORS
    assert all(len(name) <= MAX_ECHOED_CHARS for name in problem["errors"])
    assert problem["detail"].startswith("Invalid input: ") and problem["detail"].endswith(" more.")
    assert len(response.get_data()) < 10_000 < len(body)


def test_every_string_and_integer_a_request_loads_is_checked(app):
    """Every schema a view parses (and the export filters inside it) is a CamelSchema, whose
    string fields refuse NUL and lone surrogates and whose integers stay within int32."""
    from services.data_api.exports import RESOURCES

    schemas = [resource.filters for resource in RESOURCES.values()]
    for view in app.view_functions.values():
        view_class = getattr(view, "view_class", None)
        for method in ("get", "post"):
            handler = getattr(view_class, method, None)
            for argument in (
                getattr(handler, "_apidoc", {}).get("arguments", {}).get("parameters", [])
            ):
                schemas.append(argument["schema"])
    assert len(schemas) > 15
    for schema in schemas:
        instance = schema() if isinstance(schema, type) else schema
        assert isinstance(instance, CamelSchema), schema
        for name, field in instance.fields.items():
            if field.dump_only:
                continue
            kinds = {type(field).__mro__[i].__name__ for i in range(len(type(field).__mro__))}
            if "String" in kinds:
                assert plain_text in field.validators, (schema, name)
            if "Integer" in kinds:
                assert any(isinstance(each, WithinInt32) for each in field.validators), name
