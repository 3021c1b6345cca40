"""The Data API's match feed fetching many matches by id in one call (``ids=``): order,
duplicates, unknown ids, bounds, spellings, its queries and its quota."""

from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

import pytest

from tests import asserts, factories
from tests.helpers import counted_queries, ok

MATCHES = "/api/v1/data/matches"
USAGE = "/api/v1/data/usage"
DAY = datetime(2026, 11, 21, 15, tzinfo=UTC)


@pytest.fixture
def stored(ctx):
    """Twelve matches a day apart, the last two still to be played: their ids by kick-off."""
    ids = []
    for day in range(12):
        status = "finished" if day < 10 else "scheduled"
        record = factories.match(
            f"Home {day}", f"Away {day}", kickoff=DAY + timedelta(days=day - 10), status=status
        )
        ids.append(record.id)
    return ids


def batch(client, headers, ids, **query):
    """The feed's answer to ``ids`` (a list, written comma-separated) and ``query``."""
    return client.get(
        f"{MATCHES}?{urlencode({'ids': ','.join(map(str, ids)), **query})}", headers=headers
    )


def test_many_matches_come_in_one_page_in_the_order_asked(client, people, stored):
    asked = [stored[5], stored[0], stored[11], stored[3]]
    body = ok(batch(client, people["pro"][1], asked, include="picks"))
    assert [item["id"] for item in body["items"]] == asked
    assert body["missingIds"] == [] and body["nextCursor"] is None and body["limit"] == 4
    assert all(item["picks"] == [] for item in body["items"])


def test_a_repeated_id_counts_once(client, people, stored):
    body = ok(batch(client, people["pro"][1], [stored[2], stored[1], stored[2], stored[2]]))
    assert [item["id"] for item in body["items"]] == [stored[2], stored[1]]
    assert body["limit"] == 2


def test_repeating_the_parameter_is_the_same_list(client, people, stored):
    query = f"ids={stored[1]}&ids={stored[4]},{stored[1]}"
    body = ok(client.get(f"{MATCHES}?{query}", headers=people["pro"][1]))
    assert [item["id"] for item in body["items"]] == [stored[1], stored[4]]


def test_unknown_ids_are_reported_not_refused(client, people, stored):
    unknown = max(stored) + 1000
    body = ok(batch(client, people["pro"][1], [unknown, stored[0], 2**31 - 1]))
    assert [item["id"] for item in body["items"]] == [stored[0]]
    assert body["missingIds"] == [unknown, 2**31 - 1]


def test_the_other_filters_still_apply_and_what_they_leave_out_is_missing(client, people, stored):
    body = ok(batch(client, people["pro"][1], [stored[10], stored[0]], status="finished"))
    assert [item["id"] for item in body["items"]] == [stored[0]]
    assert body["missingIds"] == [stored[10]]


def test_without_ids_nothing_is_missing(client, people, stored):
    assert ok(client.get(MATCHES, headers=people["pro"][1]))["missingIds"] is None


@pytest.mark.parametrize(
    ("include", "bound"),
    [(None, 1000), ("picks", 500), ("odds,predictions,picks,intelligence", 50)],
)
def test_at_most_a_pages_worth_of_distinct_ids(client, people, include, bound):
    extra = {"include": include} if include else {}
    many = list(range(1, bound + 1))
    body = ok(batch(client, people["pro"][1], many + many[:5], **extra))  # repeats are free
    assert body["missingIds"] == many
    response = batch(client, people["pro"][1], list(range(1, bound + 2)), **extra)
    body = asserts.problem(response, 422, "validation-error")
    assert list(body["errors"]) == ["ids"]
    assert str(bound) in body["errors"]["ids"][0]


@pytest.mark.parametrize(
    "written",
    [
        "x",
        "1,x",
        "-1",
        "0",
        "1.5",
        "",
        "1,,2",
        "1,",
        "01",
        " 1",
        "1e3",
        "2147483648",
        "99999999999999999999999999",
        "١٢",
    ],
)
def test_an_entry_that_is_not_an_id_is_a_422_naming_ids(client, people, written):
    response = client.get(f"{MATCHES}?{urlencode({'ids': written})}", headers=people["pro"][1])
    body = asserts.problem(response, 422, "validation-error")
    assert list(body["errors"]) == ["ids"]


@pytest.mark.parametrize(("name", "value"), [("limit", "10"), ("cursor", "abc")])
def test_a_batch_takes_no_paging(client, people, stored, name, value):
    response = batch(client, people["pro"][1], stored[:2], **{name: value})
    body = asserts.problem(response, 422, "validation-error")
    assert name in body["errors"]


def test_one_query_for_the_matches_whatever_their_number(app, client, people, stored):
    ok(batch(client, people["pro"][1], stored[:1]))  # the app's first request checks more
    counts = []
    for size in (2, 12):
        with counted_queries() as statements:
            body = ok(batch(client, people["pro"][1], stored[:size], include="picks,odds"))
        assert len(body["items"]) == size
        # Not the pool's messages, nor the data version (read from Redis where it keeps a copy).
        queries = [each for each in statements if each.startswith("(")]
        queries = [query for query in queries if "data_version" not in query]
        counts.append(len(queries))
        assert sum('FROM "match"' in query for query in queries) == 1
    assert counts[0] == counts[1]
    # The caller, the quota, the matches, then one query per relation.
    assert counts[1] == 5


def test_a_batch_counts_one_request_against_the_quota(client, people, stored):
    headers = people["pro"][1]
    before = ok(client.get(USAGE, headers=headers))["requests"]["used"]
    ok(batch(client, headers, stored))
    assert ok(client.get(USAGE, headers=headers))["requests"]["used"] == before + 1


def test_ids_are_documented_as_an_array_sent_comma_separated(client):
    spec = client.get("/openapi.json").get_json()
    parameters = spec["paths"][MATCHES]["get"]["parameters"]
    ids = next(each for each in parameters if each["name"] == "ids")
    assert ids["schema"]["type"] == "array" and ids["schema"]["maxItems"] == 1000
    assert ids["schema"]["items"]["type"] == "integer"
    assert (ids["style"], ids["explode"]) == ("form", False)
    assert "missingIds" in ids["description"]
