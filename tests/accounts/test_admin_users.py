"""GET /api/admin/users: search, filters, paging and its bounds."""

import pytest

from models import User
from tests import asserts, factories

USERS = "/api/admin/users"


@pytest.fixture
def admin(app):
    """An admin's headers, with nine more users of assorted plans and statuses."""
    with app.app_context():
        admin = factories.user("boss@example.com", role="admin")
        for n in range(9):
            factories.user(
                f"member{n}@Example.org",
                plan="pro" if n % 3 == 0 else "free",
                status="suspended" if n == 4 else None,
            )
        return factories.bearer(factories.token(admin))


def test_pages_newest_first_with_a_total(client, admin):
    body = client.get(f"{USERS}?pageSize=4&page=2", headers=admin).get_json()
    assert (body["page"], body["pageSize"], body["total"]) == (2, 4, 10)
    assert [item["email"] for item in body["items"]] == [
        "member4@example.org",
        "member3@example.org",
        "member2@example.org",
        "member1@example.org",
    ]
    assert set(body["items"][0]) == {"id", "email", "role", "plan", "status", "createdAt"}


def test_defaults(client, admin):
    body = client.get(USERS, headers=admin).get_json()
    assert (body["page"], body["pageSize"], body["total"], len(body["items"])) == (1, 20, 10, 10)


def test_a_page_past_the_end_is_empty(client, admin):
    body = client.get(f"{USERS}?page=5&pageSize=100", headers=admin).get_json()
    assert body["items"] == [] and body["total"] == 10


@pytest.mark.parametrize(
    ("query", "total"),
    [
        ("search=MEMBER1", 1),
        ("search=example.org", 9),
        ("search=boss@", 1),
        ("plan=pro", 3),
        ("status=suspended", 1),
        ("plan=free&status=active", 6),  # five members and the admin
        ("search=nobody", 0),
    ],
)
def test_filters(client, admin, query, total):
    assert client.get(f"{USERS}?{query}", headers=admin).get_json()["total"] == total


@pytest.mark.parametrize(
    "search", ["' OR 1=1 --", "%", "_", "member%", "\\", '"; DROP TABLE user; --']
)
def test_search_is_a_literal_substring_even_with_sql_or_wildcards(app, client, admin, search):
    body = client.get(USERS, query_string={"search": search}, headers=admin).get_json()
    assert body["total"] == 0 and body["items"] == []
    with app.app_context():
        assert User.select().count() == 10


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("page=0", "page"),
        ("page=-1", "page"),
        ("page=abc", "page"),
        ("pageSize=0", "pageSize"),
        ("pageSize=101", "pageSize"),
        ("pageSize=1000", "pageSize"),
        ("plan=gold", "plan"),
        ("status=banned", "status"),
        (f"search={'x' * 300}", "search"),
    ],
)
def test_out_of_bounds_parameters_are_named(client, admin, query, field):
    body = asserts.problem(client.get(f"{USERS}?{query}", headers=admin), 422, "validation-error")
    assert list(body["errors"]) == [field]


def test_a_bad_enum_names_the_allowed_values(client, admin):
    body = asserts.problem(client.get(f"{USERS}?plan=gold", headers=admin), 422, "validation-error")
    assert body["errors"]["plan"] == ["Must be one of: free, pro."]


def test_the_largest_page_is_allowed(client, admin):
    assert client.get(f"{USERS}?pageSize=100", headers=admin).status_code == 200
