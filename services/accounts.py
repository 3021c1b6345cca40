"""Accounts: registration, login and the access tokens they hand out."""

import hashlib
import secrets
import unicodedata

from flask import current_app
from flask_jwt_extended import create_access_token
from peewee import IntegrityError
from werkzeug.security import check_password_hash, generate_password_hash

import ratelimits
from errors import AccountSuspended, EmailTaken, InvalidCredentials
from models import User, db

#: The rate-limit policy counting sign-in attempts per account.
LOGIN_POLICY = "login-failures"


def normalise_email(email: str) -> str:
    """The stored form of an email: trimmed, Unicode NFC, lower-case."""
    return unicodedata.normalize("NFC", email.strip()).lower()


def hash_password(password: str) -> str:
    """A slow salted hash of ``password`` (scrypt, ``PASSWORD_HASH_METHOD``)."""
    with current_app.extensions["password_hashing"]:
        return generate_password_hash(password, method=current_app.config["PASSWORD_HASH_METHOD"])


def password_matches(stored: str, password: str) -> bool:
    """Whether ``password`` hashes to ``stored``.

    Hashing waits its turn: a process computes at most ``PASSWORD_HASH_CONCURRENCY`` hashes at
    once, since each holds scrypt's 128·N·r bytes (32 MiB at the default cost) while it runs,
    and a flood of logins would otherwise hold that much per serving thread.
    """
    with current_app.extensions["password_hashing"]:
        return check_password_hash(stored, password)


def decoy_hash() -> str:
    """A hash of a password nobody knows, made once per app with the configured cost.

    Login checks it when the email is unknown, so it takes as long whether or not the account
    exists.
    """
    if "decoy_hash" not in current_app.extensions:
        current_app.extensions["decoy_hash"] = hash_password(secrets.token_urlsafe(32))
    return current_app.extensions["decoy_hash"]


def register(email: str, password: str) -> dict:
    """Create a user/free/active account and sign it in; EmailTaken if the email is in use."""
    try:
        with db.atomic():
            user = User.create(email=normalise_email(email), password_hash=hash_password(password))
    except IntegrityError as exc:
        raise EmailTaken() from exc
    return session_for(user)


def login(email: str | None, password: str | None) -> dict:
    """Sign in with email and password; InvalidCredentials never says which one was wrong.

    Every attempt on an email counts against ``RATELIMIT_LOGIN_FAILURES`` before the password
    is even hashed, and a successful sign-in clears the count: so the count is the failures
    in the window (and attempts under way), across every process sharing the rate-limit
    storage, and an attacker guessing from many addresses gets as few guesses as from one.
    The window is short, so someone who spends the failures for a real user keeps them out
    only while they go on spending them, a window at a time.
    """
    email = normalise_email(email) if email else None
    if email:
        ratelimits.hit(LOGIN_POLICY, _login_limit(), _login_key(email), report=False)
    user = User.by_email(email) if email else None
    stored = user.password_hash if user else decoy_hash()
    if not password_matches(stored, password or "") or user is None:
        raise InvalidCredentials()
    if user.status == "suspended":
        raise AccountSuspended()
    ratelimits.clear(LOGIN_POLICY, _login_limit(), _login_key(email))
    return session_for(user)


def _login_limit() -> str:
    return current_app.config["RATELIMIT_LOGIN_FAILURES"]


def _login_key(email: str) -> str:
    """The counter of an email's sign-in attempts: a digest, so no address sits in the storage."""
    return "login:" + hashlib.sha256(email.encode()).hexdigest()[:32]


def session_for(user: User) -> dict:
    """The signed-in answer: the user, a bearer access token and its lifetime in seconds."""
    return {
        "user": user,
        "access_token": create_access_token(identity=str(user.id)),
        "token_type": "Bearer",
        "expires_in": current_app.config["ACCESS_TOKEN_EXPIRES"],
    }


def token_claims(identity) -> dict:
    """What every access token carries beside its subject: the user's token stamp.

    A token is good only while its stamp is the user's: a new password gives the user a new
    stamp, ending every token issued before; and an id that names another account since (SQLite
    reuses the id of a deleted last row) has another stamp.
    """
    user = user_for_id(identity)
    return {"stamp": (user.token_stamp or "") if user else ""}


def user_for_token(claims: dict) -> User | None:
    """The user a token names, or None (deleted, not one of our ids, or a stamp that is not the
    user's: issued before a password change, or for an earlier holder of the id)."""
    user = user_for_id(claims.get("sub"))
    if user is None or claims.get("stamp") != (user.token_stamp or ""):
        return None
    return user


def user_for_id(identity) -> User | None:
    """The user a token's subject names, or None (deleted, or not one of our ids)."""
    try:
        user_id = int(identity)
    except (TypeError, ValueError):
        return None
    if not 1 <= user_id <= 2**63 - 1:  # not an id the database can hold
        return None
    return User.by_id(user_id)
