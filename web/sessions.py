"""Access tokens and sign-in: issuing a token, reading one back, and throttling guesses.

flask-jwt-extended reads and signs the tokens; its every failure answers our bare 401 (its own
default is a 422 with JSON). A token it has verified is remembered (:class:`VerifiedTokens`):
later requests with it skip decoding it again (three passes of PyJWT, a third of a signed-in
request) while its ``exp`` holds, and still read the account it names. A token without ``exp``
(one the service never issues: it would be good for ever) is refused, and never remembered.
"""

import hashlib
import re
import threading
import time
from collections import OrderedDict

from flask import current_app
from flask_jwt_extended import create_access_token

from services.accounts import credentials
from web import ratelimits
from web.extensions import jwt
from web.problems import unauthorized

#: The one form of ``Authorization`` whose token is remembered once verified: the scheme (in any
#: letter case), one space, the token's three segments. Any other is flask-jwt-extended's to read.
BEARER = re.compile(r"[Bb][Ee][Aa][Rr][Ee][Rr] ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)")

#: The rate-limit policy counting sign-in attempts per account.
LOGIN_POLICY = "login-failures"


def hasher() -> credentials.PasswordHasher:
    """The app's password hasher (see ``create_app``)."""
    return current_app.extensions["password_hasher"]


def register(email: str, password: str) -> dict:
    """Create an account and sign it in."""
    return session_for(credentials.register(email, password, hasher()))


def login(email: str | None, password: str | None) -> dict:
    """Sign in with email and password.

    Every attempt on an email counts against ``RATELIMIT_LOGIN_FAILURES`` before the password
    is even hashed, and a successful sign-in clears the count: so the count is the failures
    in the window (and attempts under way), across every process sharing the rate-limit
    storage, and an attacker guessing from many addresses gets as few guesses as from one.
    The window is short, so someone who spends the failures for a real user keeps them out
    only while they go on spending them, a window at a time. A sign-in refused for load (no
    place to hash, ``SignInsBusy``) is refused before it is counted: a flood of sign-ins never
    spends its owner's budget.
    """
    key = _login_key(credentials.normalise_email(email)) if email else None
    limit = current_app.config["RATELIMIT_LOGIN_FAILURES"]
    with hasher().place():  # refused for load (SignInsBusy) before the attempt counts
        if key:
            ratelimits.hit(LOGIN_POLICY, limit, key, report=False)
        user = credentials.authenticate(email, password, hasher())
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


class VerifiedTokens:
    """The claims of the access tokens an app verified lately, by token: a bounded LRU.

    A token's signature and claims are verified once; later requests with the same token get
    its claims back while its ``exp`` holds. Only verified tokens are kept, so no one can fill
    it with tokens of their making; who the token names is still read from the database at
    every request (its account's status and token stamp).
    """

    def __init__(self, max_entries: int = 4096):
        self.max_entries = max_entries
        self.claims = OrderedDict()
        self.lock = threading.Lock()

    def get(self, token: str, config) -> dict | None:
        """The claims of ``token`` verified under ``config``'s key while its ``exp`` holds (as
        PyJWT judges it, with ``JWT_DECODE_LEEWAY``), else None."""
        key = (token, config["JWT_SECRET_KEY"])
        leeway = config.get("JWT_DECODE_LEEWAY", 0)
        leeway = leeway.total_seconds() if hasattr(leeway, "total_seconds") else leeway
        with self.lock:
            claims = self.claims.get(key)
            if claims is None:
                return None
            if claims["exp"] <= time.time() - leeway:
                del self.claims[key]
                return None
            self.claims.move_to_end(key)
        return dict(claims)  # the caller's own copy

    def put(self, token: str, config, claims: dict) -> None:
        """Remember ``claims``, just verified for ``token`` under ``config``'s key (claims
        without ``exp`` never: nothing would ever forget them)."""
        if not has_expiry(None, claims):
            return
        key = (token, config["JWT_SECRET_KEY"])
        with self.lock:
            self.claims[key] = dict(claims)
            self.claims.move_to_end(key)
            while len(self.claims) > self.max_entries:
                self.claims.popitem(last=False)


def has_expiry(_header, claims: dict) -> bool:
    """Whether a token's ``claims`` say when it expires (PyJWT checked an ``exp`` it has is a
    number, and has not passed; it lets a token without one through)."""
    return "exp" in claims


def _bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization`` header in the :data:`BEARER` form, else None."""
    found = authorization and BEARER.fullmatch(authorization.strip())
    return found.group(1) if found else None


def remembered_claims(app, authorization: str | None) -> dict | None:
    """The claims of the access token in ``authorization`` when ``app`` verified it already and
    its ``exp`` holds, else None."""
    token = _bearer_token(authorization)
    claims = token and app.extensions["verified_tokens"].get(token, app.config)
    return claims if claims and claims.get("type") == "access" else None


def remember(app, authorization: str | None, claims: dict) -> None:
    """Remember ``claims``, just verified by flask-jwt-extended for the token in
    ``authorization`` (a header in another form is not remembered)."""
    token = _bearer_token(authorization)
    if token:
        app.extensions["verified_tokens"].put(token, app.config, claims)


def caller(claims: dict):
    """The account a verified token's ``claims`` name, read now; None when it is gone or its
    password changed since (as the user lookup flask-jwt-extended is given judges it)."""
    return credentials.user_for_token(claims.get("sub"), claims.get("stamp"))


def init_app(app) -> None:
    """Bind JWT to ``app``, with our claims, user lookup and 401s."""
    jwt.init_app(app)
    app.extensions["verified_tokens"] = VerifiedTokens()
    jwt.additional_claims_loader(lambda identity: {"stamp": credentials.token_stamp(identity)})
    jwt.user_lookup_loader(lambda _header, data: caller(data))
    jwt.token_verification_loader(has_expiry)  # else token_verification_failed_loader: a 401
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
