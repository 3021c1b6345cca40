"""Admin endpoints: the user listing, and changes to an account (how the application around the
service, its billing among it, sets plans)."""

from flask.views import MethodView

from schemas.admin import UserPageSchema, UserQuerySchema, UserUpdateSchema
from schemas.auth import UserSchema
from services.accounts import users
from services.operations import jobs
from web.access import ADMIN, current_viewer, now
from web.blueprint import Blueprint
from web.paths import id_param

blp = Blueprint("admin", __name__, url_prefix="/api/admin", description="Administration.")

#: How a billing system calls the change of plan (the OpenAPI description of the PATCH).
UPDATE_DESCRIPTION = (
    f"{ADMIN.summary}\n\n"
    "Changes any of the account's `plan`, `role` and `status` (at least one; the others keep "
    "their value) and answers the account as the listing shows it. The change is recorded as "
    "a `user-update` operation naming the admin who asked (`GET /api/v1/ops/operations/{id}`), "
    "and applies at once to every token the account holds: role, plan and status are read at "
    "each request, so no one signs in again. This is how the application around the service "
    "sells Pro: its billing calls it with an admin's token when a subscription starts or "
    "ends.\n\n"
    "```sh\n"
    'curl -X PATCH "$BASE/api/admin/users/42" -H "Authorization: Bearer $ADMIN_TOKEN" \\\n'
    "  -H 'Content-Type: application/json' -d '{\"plan\": \"pro\"}'\n"
    "```\n\n"
    'The same with `{"plan": "free"}` when it ends; `{"status": "suspended"}` shuts the '
    "account out of every protected endpoint and of sign-in. The last active admin cannot be "
    "suspended or demoted (409 `last-admin`): another account is made an admin first."
)


@blp.route("/users")
class Users(MethodView):
    @blp.access(ADMIN)
    @blp.arguments(UserQuerySchema, location="query")
    @blp.response(200, UserPageSchema)
    @blp.doc(operationId="listUsers")
    def get(self, query):
        """Search users by email, plan and status, a page at a time"""
        return users.search(**query)


@blp.route(f"/users/{id_param('user_id')}")
class UserById(MethodView):
    @blp.doc(description=UPDATE_DESCRIPTION)
    @blp.access(ADMIN)
    @blp.arguments(UserUpdateSchema)
    @blp.response(200, UserSchema)
    @blp.problems(404, "not-found")
    @blp.problems(409, "last-admin", "operation-failed")
    @blp.doc(operationId="updateUser")
    def patch(self, body, user_id):
        """Set an account's plan, role or status (billing sets plans here)"""
        return jobs.update_user(user_id, body, current_viewer(), now())
