"""Access tokens and sign-in: issuing a token, reading one back, and throttling guesses.

flask-jwt-extended reads and signs the tokens; its every failure answers our bare 401 (its own
default is a 422 with JSON).
"""

import hashlib

from flask import current_app
from flask_jwt_extended import create_access_token

from services import accounts
from web import ratelimits
from web.extensions import VerifiedTokens, jwt
from web.problems import unauthorized

#: The rate-limit policy counting sign-in attempts per account.
LOGIN_POLICY = "login-failures"


def hasher() -> accounts.PasswordHasher:
    """The app's password hasher (see ``create_app``)."""
    return current_app.extensions["password_hasher"]


def register(email: str, password: str) -> dict:
    """Create an account and sign it in."""
    return session_for(accounts.register(email, password, hasher()))


def login(email: str | None, password: str | None) -> dict:
    """Sign in with email and password.

    Every attempt on an email counts against ``RATELIMIT_LOGIN_FAILURES`` before the password
    is even hashed, and a successful sign-in clears the count: so the count is the failures
    in the window (and attempts under way), across every process sharing the rate-limit
    storage, and an attacker guessing from many addresses gets as few guesses as from one.
    The window is short, so someone who spends the failures for a real user keeps them out
    only while they go on spending them, a window at a time.
    """
    key = _login_key(accounts.normalise_email(email)) if email else None
    limit = current_app.config["RATELIMIT_LOGIN_FAILURES"]
    if key:
        ratelimits.hit(LOGIN_POLICY, limit, key, report=False)
    user = accounts.authenticate(email, password, hasher())
    ratelimits.clear(LOGIN_POLICY, limit, key)
    return session_for(user)


def _login_key(email: str) -> str:
    """The counter of an email's sign-in attempts: a digest, so no address sits in the storage."""
    return "login:" + hashlib.sha256(email.encode()).hexdigest()[:32]


def session_for(user) -> dict:
    """The signed-in answer: the user, a bearer access token and its lifetime in seconds."""
    return {
        "user": user,
        "access_token": create_access_token(identity=str(user.id)),
        "token_type": "Bearer",
        "expires_in": current_app.config["ACCESS_TOKEN_EXPIRES"],
    }


def init_app(app) -> None:
    """Bind JWT to ``app``, with our claims, user lookup and 401s."""
    jwt.init_app(app)
    app.extensions["verified_tokens"] = VerifiedTokens()
    jwt.additional_claims_loader(lambda identity: {"stamp": accounts.token_stamp(identity)})
    jwt.user_lookup_loader(
        lambda _header, data: accounts.user_for_token(data.get("sub"), data.get("stamp"))
    )
    jwt.unauthorized_loader(lambda _reason: unauthorized())
    jwt.invalid_token_loader(lambda _reason: unauthorized(invalid=True))
    for loader in (
        jwt.expired_token_loader,
        jwt.user_lookup_error_loader,
        jwt.token_verification_failed_loader,
        jwt.revoked_token_loader,
        jwt.needs_fresh_token_loader,
    ):
        loader(lambda _header, _data: unauthorized(invalid=True))
