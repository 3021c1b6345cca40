"""Accounts: registration, login and the access tokens they hand out."""

import secrets
import unicodedata

from flask import current_app
from flask_jwt_extended import create_access_token
from peewee import IntegrityError
from werkzeug.security import check_password_hash, generate_password_hash

from errors import AccountSuspended, EmailTaken, InvalidCredentials
from models import User, db


def normalise_email(email: str) -> str:
    """The stored form of an email: trimmed, Unicode NFC, lower-case."""
    return unicodedata.normalize("NFC", email.strip()).lower()


def hash_password(password: str) -> str:
    """A slow salted hash of ``password`` (scrypt, ``PASSWORD_HASH_METHOD``)."""
    return generate_password_hash(password, method=current_app.config["PASSWORD_HASH_METHOD"])


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
    """Sign in with email and password; InvalidCredentials never says which one was wrong."""
    user = User.by_email(normalise_email(email)) if email else None
    stored = user.password_hash if user else decoy_hash()
    if not check_password_hash(stored, password or "") or user is None:
        raise InvalidCredentials()
    if user.status == "suspended":
        raise AccountSuspended()
    return session_for(user)


def session_for(user: User) -> dict:
    """The signed-in answer: the user, a bearer access token and its lifetime in seconds."""
    return {
        "user": user,
        "access_token": create_access_token(identity=str(user.id)),
        "token_type": "Bearer",
        "expires_in": current_app.config["ACCESS_TOKEN_EXPIRES"],
    }


def user_for_token(identity) -> User | None:
    """The user a token's subject names, or None (deleted, or not one of our ids)."""
    try:
        user_id = int(identity)
    except (TypeError, ValueError):
        return None
    return User.by_id(user_id)
