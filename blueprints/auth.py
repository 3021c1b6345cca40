"""Account endpoints: register and log in."""

from flask.views import MethodView

from schemas.auth import LoginSchema, RegisterSchema, SessionSchema
from web import sessions
from web.access import LOGIN, REGISTER
from web.blueprint import Blueprint

blp = Blueprint("auth", __name__, url_prefix="/api/auth", description="Register and log in.")

#: An answer carrying a token is never kept by a browser or a cache on the way.
NO_STORE = {"Cache-Control": "no-store"}


#: What a 503 of a call that hashes a password may be: its own, or any call's.
BUSY = ("sign-ins-busy", "service-unavailable", "schema-outdated")


@blp.route("/register")
class Register(MethodView):
    @blp.access(REGISTER)
    @blp.arguments(RegisterSchema)
    @blp.response(200, SessionSchema)
    @blp.problems(409, "email-taken")
    @blp.problems(503, *BUSY)
    @blp.doc(operationId="register")
    def post(self, body):
        """Create an account (user, free, active) and sign it in"""
        return sessions.register(**body), NO_STORE


@blp.route("/login")
class Login(MethodView):
    @blp.access(LOGIN)
    @blp.arguments(LoginSchema)
    @blp.response(200, SessionSchema)
    @blp.alt_response(401, response="UNAUTHORIZED")
    @blp.problems(403, "account-suspended")
    @blp.problems(503, *BUSY)
    @blp.doc(operationId="logIn")
    def post(self, body):
        """Sign in with email and password"""
        return sessions.login(**body), NO_STORE
