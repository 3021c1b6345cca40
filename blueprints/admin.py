"""Admin endpoints: the user listing."""

from flask.views import MethodView

from schemas.admin import UserPageSchema, UserQuerySchema
from services.accounts import users
from web.access import ADMIN
from web.blueprint import Blueprint

blp = Blueprint("admin", __name__, url_prefix="/api/admin", description="Administration.")


@blp.route("/users")
class Users(MethodView):
    @blp.access(ADMIN)
    @blp.arguments(UserQuerySchema, location="query")
    @blp.response(200, UserPageSchema)
    @blp.doc(operationId="listUsers")
    def get(self, query):
        """Search users by email, plan and status, a page at a time"""
        return users.search(**query)
