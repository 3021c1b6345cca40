"""Webhook signing secrets encrypted at rest: each endpoint's secret (and the one a rotation keeps
signing for its overlap) is stored encrypted under ``WEBHOOK_SECRETS_KEY`` (Fernet: AES-128-CBC
with an HMAC-SHA256, a random IV each time), so a copy of the database alone signs nothing.

The setting lists Fernet keys, newest first: the newest encrypts, any of them decrypts. A secret
is decrypted only where a delivery is signed (``services.webhooks.deliveries.send``); it is shown in
the clear once, when it is made (registration, rotation), from the value made, never read back.

Changing the key: put a new key first in every process's ``WEBHOOK_SECRETS_KEY``, then
``flask webhooks rotate-key`` encrypts every stored secret again under it (:func:`rotate`); once it
reports none left under an older key, the older keys may leave the list.

A secret stored in the clear (by a version before encryption: ``whsec_…``) signs as it is, with a
warning, until ``flask db upgrade`` or ``flask webhooks rotate-key`` encrypts it
(:func:`encrypt_plain`): a Fernet token never starts so.
"""

import logging
from dataclasses import dataclass

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from models import WebhookEndpoint
from store.bulk import update_rows
from store.database import locked, writing

log = logging.getLogger("picks.webhooks")

#: How a secret in the clear begins (Standard Webhooks); an encrypted one is a Fernet token.
PLAIN_PREFIX = "whsec_"

#: The stored columns that hold a secret, with their SQL type (for ``update_rows``).
COLUMNS = {"secret": "text", "previous_secret": "text"}


class SecretUnreadable(ValueError):
    """A stored secret no key of ``WEBHOOK_SECRETS_KEY`` decrypts: encrypted under a key the list
    lacks (a database copied to another deployment, a key removed too soon) or altered."""


def keyring(keys) -> MultiFernet:
    """The keys (newest first) as one: the first encrypts, any decrypts."""
    return MultiFernet([Fernet(key) for key in keys])


def encrypt(secret: str, keys) -> str:
    """``secret`` encrypted under the newest of ``keys``: what the database stores."""
    return keyring(keys).encrypt(secret.encode()).decode()


def is_plain(stored: str | None) -> bool:
    """Whether a stored secret is in the clear (stored before secrets were encrypted)."""
    return stored is not None and stored.startswith(PLAIN_PREFIX)


def decrypt(stored: str, keys) -> str:
    """The secret a stored value encrypts (a secret still in the clear as it is);
    SecretUnreadable when no key of ``keys`` decrypts it."""
    if is_plain(stored):
        log.warning(
            "a webhook signing secret is stored in the clear: "
            "`flask db upgrade` or `flask webhooks rotate-key` seals it"
        )
        return stored
    try:
        return keyring(keys).decrypt(stored.encode()).decode()
    except InvalidToken:
        raise SecretUnreadable(
            "its signing secret cannot be decrypted with WEBHOOK_SECRETS_KEY (sealed under a "
            "key the list lacks, or altered)"
        ) from None


def decrypt_all(stored, keys) -> tuple[str, ...]:
    """Each of the stored secrets ``stored``, decrypted (see :func:`decrypt`)."""
    return tuple(decrypt(value, keys) for value in stored)


@dataclass(frozen=True)
class Rotation:
    """What :func:`rotate` did: the secrets encrypted again under the newest key (in the clear
    until now included), those it already encrypted, and the endpoints whose secrets no key
    decrypts (left as they are)."""

    reencrypted: int
    current: int
    unreadable: tuple[int, ...]


def rotate(keys) -> Rotation:
    """Encrypt every stored secret under the newest of ``keys``: those encrypted under an older
    key and those still in the clear. Running it again changes nothing. The endpoints' rows are
    held meanwhile, so a rotation of an endpoint's own secret waits and never writes back what
    was read before."""
    ring, newest = keyring(keys), Fernet(keys[0])
    reencrypted = current = 0
    unreadable, rows = [], []
    with writing():
        query = WebhookEndpoint.select(
            WebhookEndpoint.id, WebhookEndpoint.secret, WebhookEndpoint.previous_secret
        ).order_by(WebhookEndpoint.id)
        for endpoint in locked(query):
            values, changed = [], False
            for stored in (endpoint.secret, endpoint.previous_secret):
                if stored is None:
                    values.append(None)
                elif is_plain(stored):
                    values.append(ring.encrypt(stored.encode()).decode())
                    reencrypted, changed = reencrypted + 1, True
                elif _decrypts(newest, stored):
                    values.append(stored)
                    current += 1
                else:
                    try:
                        values.append(ring.rotate(stored.encode()).decode())
                    except InvalidToken:
                        unreadable.append(endpoint.id)
                        values.append(stored)
                        continue
                    reencrypted, changed = reencrypted + 1, True
            if changed:
                rows.append((endpoint.id, *values))
        update_rows(WebhookEndpoint, COLUMNS, rows)
    return Rotation(reencrypted, current, tuple(dict.fromkeys(unreadable)))


def _decrypts(key: Fernet, stored: str) -> bool:
    try:
        key.decrypt(stored.encode())
    except InvalidToken:
        return False
    return True


def encrypt_plain(keys) -> int:
    """Encrypt the secrets still stored in the clear (a database from before encryption, or
    written since by a process of that version); returns how many. The release step runs it."""
    plain = WebhookEndpoint.secret.startswith(PLAIN_PREFIX) | (
        WebhookEndpoint.previous_secret.startswith(PLAIN_PREFIX)
    )
    encrypted, rows = 0, []
    with writing():
        query = WebhookEndpoint.select(
            WebhookEndpoint.id, WebhookEndpoint.secret, WebhookEndpoint.previous_secret
        ).where(plain)
        for endpoint in locked(query):
            values = []
            for stored in (endpoint.secret, endpoint.previous_secret):
                if is_plain(stored):
                    stored, encrypted = encrypt(stored, keys), encrypted + 1
                values.append(stored)
            rows.append((endpoint.id, *values))
        update_rows(WebhookEndpoint, COLUMNS, rows)
    return encrypted
