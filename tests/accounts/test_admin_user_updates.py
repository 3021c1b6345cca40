"""PATCH /api/admin/users/{id}: an admin (the application's billing) sets a plan, role or status;
the change is recorded as an operation and holds for every token the account has at its next
request."""

import pytest

from models import Operation, User
from services.accounts import users
from tests import asserts, factories
from tests.helpers import NOW

DATA = "/api/v1/data/catalog"
USAGE = "/api/v1/data/usage"


@pytest.fixture
def app(make_app):
    """The app on a frozen clock."""
    return make_app(CLOCK=factories.Clock(NOW))


def user_path(user_id) -> str:
    return f"/api/admin/users/{user_id}"


def patch(client, headers, user_id, body):
    return client.patch(user_path(user_id), json=body, headers=headers)


def test_a_plan_set_by_an_admin_holds_for_the_token_the_user_already_has(client, people):
    admin = people["admin"][1]
    member, headers = people["free"]
    asserts.problem(client.get(DATA, headers=headers), 403, "subscription-required")

    changed = patch(client, admin, member.id, {"plan": "pro"})
    assert changed.status_code == 200, changed.get_data(as_text=True)
    assert changed.get_json()["plan"] == "pro"
    for _ in range(2):  # the second one may be an answer kept from the first
        assert client.get(DATA, headers=headers).status_code == 200
    assert client.get(USAGE, headers=headers).get_json()["plan"] == "pro"

    assert patch(client, admin, member.id, {"plan": "free"}).status_code == 200
    body = asserts.problem(client.get(DATA, headers=headers), 403, "subscription-required")
    assert body["detail"] == "A Pro subscription or admin role is required."
    asserts.problem(client.get(USAGE, headers=headers), 403, "subscription-required")


def test_a_suspension_refuses_the_next_call_and_the_sign_in(client, people):
    member, headers = people["pro"]
    assert client.get(DATA, headers=headers).status_code == 200

    changed = patch(client, people["admin"][1], member.id, {"status": "suspended"})
    assert changed.get_json()["status"] == "suspended"
    asserts.problem(client.get(DATA, headers=headers), 403, "account-suspended")
    login = {"email": member.email, "password": factories.PASSWORD}
    asserts.problem(client.post("/api/auth/login", json=login), 403, "account-suspended")

    patch(client, people["admin"][1], member.id, {"status": "active"})
    assert client.get(DATA, headers=headers).status_code == 200


def test_a_role_given_opens_the_admin_endpoints_to_the_token_held(client, people):
    member, headers = people["free"]
    asserts.problem(client.get("/api/admin/users", headers=headers), 403, "role-required")
    patch(client, people["admin"][1], member.id, {"role": "admin"})
    assert client.get("/api/admin/users", headers=headers).status_code == 200


def test_the_answer_is_the_user_as_the_listing_shows_it(client, people):
    admin = people["admin"][1]
    member = people["operator"][0]
    answer = patch(client, admin, member.id, {"plan": "pro", "role": "user"})
    assert answer.mimetype == "application/json"
    listed = client.get("/api/admin/users?search=operator@", headers=admin).get_json()["items"]
    assert answer.get_json() == listed[0]
    assert (listed[0]["role"], listed[0]["plan"], listed[0]["status"]) == ("user", "pro", "active")


def test_fields_left_out_keep_their_value(app, client, people):
    member = people["suspended"][0]  # user, pro, suspended
    patch(client, people["admin"][1], member.id, {"role": "operator"})
    with app.app_context():
        stored = User.get_by_id(member.id)
        assert (stored.role, stored.plan, stored.status) == ("operator", "pro", "suspended")
        assert stored.updated_at == NOW


def test_the_change_is_recorded_as_an_operation_with_who_asked(app, client, people):
    admin_user, admin = people["admin"]
    member = people["free"][0]
    patch(client, admin, member.id, {"plan": "pro"})
    with app.app_context():
        operation = Operation.get(Operation.kind == "user-update")
        assert operation.created_by_id == admin_user.id
        assert operation.status == "succeeded"
        assert operation.params == {"userId": member.id, "plan": "pro"}
        assert operation.result == {
            "userId": member.id,
            "before": {"role": "user", "plan": "free", "status": "active"},
            "after": {"role": "user", "plan": "pro", "status": "active"},
        }
        assert operation.created_at == NOW
    record = client.get(f"/api/v1/ops/operations/{operation.id}", headers=admin).get_json()
    assert (record["kind"], record["createdBy"], record["status"]) == (
        "user-update",
        admin_user.id,
        "succeeded",
    )
    result = client.get(f"/api/v1/ops/operations/{operation.id}/result", headers=admin)
    assert result.get_json()["after"]["plan"] == "pro"


@pytest.mark.parametrize("kind", ["free", "pro", "operator", "suspended", "suspended-admin"])
def test_only_an_admin_may_change_an_account(app, client, people, kind):
    target = people["free"][0]
    response = patch(client, people[kind][1], target.id, {"plan": "pro"})
    name = "account-suspended" if kind.startswith("suspended") else "role-required"
    asserts.problem(response, 403, name)
    with app.app_context():
        assert User.get_by_id(target.id).plan == "free"
        assert Operation.select().count() == 0


def test_an_anonymous_caller_gets_the_bare_401(client, people):
    asserts.unauthorized(patch(client, {}, people["free"][0].id, {"plan": "pro"}))


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "body"),
        ({"plan": "gold"}, "plan"),
        ({"plan": "PRO"}, "plan"),
        ({"role": "root"}, "role"),
        ({"status": "banned"}, "status"),
        ({"plan": None}, "plan"),
        ({"plan": 1}, "plan"),
        ({"plan": "pro", "email": "someone@example.com"}, "email"),
    ],
)
def test_bad_values_are_a_422_and_change_nothing(app, client, people, body, field):
    target = people["free"][0]
    response = patch(client, people["admin"][1], target.id, body)
    problem = asserts.problem(response, 422, "validation-error")
    assert list(problem["errors"]) == [field]
    with app.app_context():
        assert User.get_by_id(target.id).plan == "free"
        assert Operation.select().count() == 0


def test_a_bad_value_names_the_allowed_ones_as_the_cli_does(client, people):
    response = patch(client, people["admin"][1], people["free"][0].id, {"role": "root"})
    errors = asserts.problem(response, 422, "validation-error")["errors"]
    assert errors == {"role": ["Must be one of: user, operator, admin."]}


def test_an_unknown_id_is_a_404_naming_it_and_records_nothing(app, client, people):
    response = patch(client, people["admin"][1], 999999, {"plan": "pro"})
    assert asserts.problem(response, 404, "not-found")["detail"] == "User 999999 does not exist."
    with app.app_context():
        assert Operation.select().count() == 0


@pytest.mark.parametrize("user_id", ["0", "abc", "-1", "01"])
def test_a_path_id_that_is_not_an_id_is_a_404(client, people, user_id):
    asserts.problem(patch(client, people["admin"][1], user_id, {"plan": "pro"}), 404, "not-found")


def test_the_change_is_counted_by_the_auth_policy_per_user(client, people):
    response = patch(client, people["admin"][1], people["free"][0].id, {"plan": "pro"})
    assert response.headers["RateLimit-Policy"] == '"auth";q=20;w=60'


def test_the_get_of_one_user_is_not_a_route(client, people):
    response = client.get(user_path(people["free"][0].id), headers=people["admin"][1])
    asserts.problem(response, 405, "method-not-allowed")
    assert "PATCH" in response.headers["Allow"].split(", ")


def test_a_change_keeps_a_password_set_since_the_account_was_read(app):
    """The change writes its own columns only: a new password (and the token stamp that ends
    the old tokens) set between the read and the write stays."""
    with app.app_context():
        stale = users.get(factories.user().id)
        renewed, _ = users.create("user@example.com", "another-long-password", factories.hasher())
        users.change(stale, plan="pro")
        stored = User.get_by_id(stale.id)
        assert (stored.plan, stored.token_stamp) == ("pro", renewed.token_stamp)
        assert stored.password_hash == renewed.password_hash


@pytest.mark.parametrize("body", [{"status": "suspended"}, {"role": "operator"}, {"role": "user"}])
def test_the_last_active_admin_cannot_suspend_or_demote_itself(app, client, people, body):
    """The only admin suspending or demoting itself would leave no one to undo it: a 409 that
    records nothing; once another account is an active admin, the change goes through."""
    admin, headers = people["admin"]
    response = patch(client, headers, admin.id, body)
    assert "the only active admin" in asserts.problem(response, 409, "last-admin")["detail"]
    with app.app_context():
        assert Operation.select().count() == 0
        assert User.get_by_id(admin.id).role == "admin"
    other = people["free"][0]
    assert patch(client, headers, other.id, {"role": "admin"}).status_code == 200
    assert patch(client, headers, admin.id, body).status_code == 200


def test_the_cli_keeps_the_last_active_admin(app, people):
    admin = people["admin"][0]
    result = app.test_cli_runner().invoke(
        args=["users", "update", admin.email, "--status", "suspended"]
    )
    assert result.exit_code != 0 and "the only active admin" in result.output
    with app.app_context():
        assert User.get_by_id(admin.id).status == "active"
