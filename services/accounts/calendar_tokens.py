"""Calendar tokens: what a user's calendar address carries, since a calendar app cannot send an
``Authorization`` header.

A token is ``<user id>.<mac>``: the MAC is HMAC-SHA256 over a label of its own, the user id and
the account's token stamp, keyed by the service's secret key (``JWT_SECRET_KEY``), written in
unpadded base64url. Nothing more is stored: a token is checked by computing it again, and it is
good while the stamp it was made with is the account's. Rotating it (:func:`rotate`) gives the
account a new stamp, which ends the old token at once; the stamp is the one access tokens carry
too (a stamp of the calendar's own would be a new column), so rotating also ends the account's
access tokens (the rotation's answer carries a new one), and a new password ends the calendar
token as it ends them.
"""

import base64
import hashlib
import hmac
import re

from enums import CALENDAR_TOKEN_PATTERN, ID_RANGE
from models import User, bump_data_version, new_token_stamp
from services import routes
from store.database import db

#: What keeps a calendar token's MAC apart from anything else keyed by the same secret.
LABEL = b"sports-pick-service calendar token v1"
FORM = re.compile(CALENDAR_TOKEN_PATTERN)


def _mac(user_id: int, stamp: str | None, settings) -> str:
    """The MAC of a token for ``user_id`` under the account's ``stamp``."""
    message = b"\0".join((LABEL, str(user_id).encode(), (stamp or "").encode()))
    digest = hmac.new(settings["JWT_SECRET_KEY"].encode(), message, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def issue(user, settings) -> str:
    """``user``'s calendar token, as long as their token stamp holds."""
    return f"{user.id}.{_mac(user.id, user.token_stamp, settings)}"


def holder(token: str, settings) -> User | None:
    """The account whose current calendar token ``token`` is, or None: malformed, of no
    account, or made under a stamp the account no longer has (rotated, or a new password)."""
    if not FORM.fullmatch(token):
        return None
    written, mac = token.split(".")
    user_id = int(written)
    if not ID_RANGE[0] <= user_id <= ID_RANGE[1]:
        return None
    user = User.by_id(user_id)
    if user is None or not hmac.compare_digest(mac, _mac(user.id, user.token_stamp, settings)):
        return None
    return user


def subscription(user, base_url: str, settings) -> dict:
    """What ``user`` puts in a calendar app: their calendar token and their calendar's address
    with it (which follows their alert subscriptions; ``leagues`` may be added)."""
    token = issue(user, settings)
    return {"token": token, "url": f"{base_url}{routes.CHOSEN_CALENDAR}?token={token}"}


def rotate(user, base_url: str, now, settings) -> dict:
    """Give ``user`` a new token stamp, ending their calendar token and access tokens, and
    answer their new :func:`subscription`. The data version moves with it, so no calendar
    answered from the old token is served again."""
    with db.atomic():
        user.token_stamp = new_token_stamp()
        user.updated_at = now
        user.save(only=[User.token_stamp, User.updated_at])
        bump_data_version()
    return subscription(user, base_url, settings)
