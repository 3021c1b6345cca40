"""Accounts: registration, checking a password, and the user an access token names.

Tokens themselves (issuing, reading, throttling sign-ins) belong to the web: see
``web/sessions.py``. Passwords are hashed by a :class:`PasswordHasher` the app makes once.
"""

import secrets
import threading
import unicodedata
from contextlib import contextmanager

from peewee import IntegrityError
from werkzeug.security import check_password_hash, generate_password_hash

from errors import (
    AccountSuspended,
    EmailTaken,
    InvalidCredentials,
    SignInsBusy,
    ValidationFailed,
)
from models import User
from store.database import db

#: The longest email stored, in its stored form.
EMAIL_MAX = User.email.max_length


def normalise_email(email: str) -> str:
    """The stored form of an email: trimmed, Unicode NFC, lower-case."""
    return unicodedata.normalize("NFC", email.strip()).lower()


#: Why an email whose stored form (see :func:`normalise_email`) is longer than ``EMAIL_MAX`` is
#: refused: lower-casing may lengthen it (``İ`` is two characters lower-cased), past what the
#: request's own length check saw.
EMAIL_TOO_LONG = f"longer than {EMAIL_MAX} characters once lower-cased, as it is stored"


class PasswordHasher:
    """Slow salted hashes (scrypt, ``method`` as werkzeug names it), at most ``concurrency`` at
    once in a process: each holds scrypt's 128·N·r bytes (32 MiB at the default cost) while it
    runs, and a flood of logins would otherwise hold that much per serving thread. At most
    ``queue`` more wait for a turn; past them a hash is refused at once (SignInsBusy), so a
    flood of sign-ins from many clients never holds every serving thread and the reads queued
    behind them."""

    def __init__(self, method: str, concurrency: int, queue: int):
        self.method = method
        self.turns = threading.BoundedSemaphore(concurrency)
        self.places = threading.BoundedSemaphore(concurrency + queue)  # hashing or waiting
        self._held = threading.local()  # whether this thread holds a place
        self._decoy = None
        self._decoy_lock = threading.Lock()

    @contextmanager
    def place(self):
        """A place (hashing, or waiting to), held until the block ends, for every hash made in
        it; SignInsBusy at once when none is free. A sign-in takes its place before its attempt
        is counted, so one refused for load never spends its account's budget."""
        if getattr(self._held, "place", False):
            yield
            return
        if not self.places.acquire(blocking=False):
            raise SignInsBusy()
        self._held.place = True
        try:
            yield
        finally:
            self._held.place = False
            self.places.release()

    @contextmanager
    def _turn(self):
        with self.place(), self.turns:
            yield

    def hash(self, password: str) -> str:
        """A new salted hash of ``password``."""
        with self._turn():
            return generate_password_hash(password, method=self.method)

    def matches(self, stored: str, password: str) -> bool:
        """Whether ``password`` hashes to ``stored``."""
        with self._turn():
            return check_password_hash(stored, password)

    def decoy(self) -> str:
        """A hash of a password nobody knows, made once with the configured cost: sign-in
        checks it when the email is unknown, so it takes as long whether or not the account
        exists."""
        with self._decoy_lock:
            if self._decoy is None:
                self._decoy = self.hash(secrets.token_urlsafe(32))
            return self._decoy


def register(email: str, password: str, hasher: PasswordHasher) -> User:
    """Create a user/free/active account; EmailTaken if the email is in use."""
    email = normalise_email(email)
    if len(email) > EMAIL_MAX:
        reason = f"{EMAIL_TOO_LONG.capitalize()}."
        raise ValidationFailed(f"email: {reason}", errors={"email": [reason]})
    try:
        with db.atomic():
            return User.create(email=email, password_hash=hasher.hash(password))
    except IntegrityError as exc:
        raise EmailTaken() from exc


def authenticate(email: str | None, password: str | None, hasher: PasswordHasher) -> User:
    """The active user with this email and password; InvalidCredentials never says which of the
    two was wrong, and AccountSuspended comes only after the right password."""
    email = normalise_email(email) if email else None
    user = User.by_email(email) if email else None
    stored = user.password_hash if user else hasher.decoy()
    if not hasher.matches(stored, password or "") or user is None:
        raise InvalidCredentials()
    if user.status == "suspended":
        raise AccountSuspended()
    return user


def token_stamp(identity) -> str:
    """The stamp a token for the user ``identity`` names must carry ("" for none).

    A token is good only while its stamp is the user's: a new password gives the user a new
    stamp, ending every token issued before; and an id that names another account since (SQLite
    reuses the id of a deleted last row) has another stamp.
    """
    user = user_for_id(identity)
    return (user.token_stamp or "") if user else ""


def user_for_token(subject, stamp) -> User | None:
    """The user a token names, or None (deleted, not one of our ids, or a stamp that is not the
    user's: issued before a password change, or for an earlier holder of the id)."""
    user = user_for_id(subject)
    if user is None or stamp != (user.token_stamp or ""):
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
