"""The secrets the service signs and encrypts with (``JWT_SECRET_KEY``, ``LEDGER_SIGNING_KEY``,
``WEBHOOK_SECRETS_KEY``): refused when production lacks them or cannot trust them, made once into
the instance folder elsewhere."""

import os
import secrets
from pathlib import Path
from urllib.parse import urlparse

from cryptography.fernet import Fernet

from config.values import ConfigError
from engine.ledger import notes

#: The shortest signing key production accepts: HS256 wants at least its hash's 32 bytes.
MIN_SECRET_BYTES = 32


#: The command that makes each secret production needs, said when one is missing or refused.
SECRET_COMMANDS = {
    "JWT_SECRET_KEY": 'python -c "import secrets; print(secrets.token_urlsafe(48))"',
    "LEDGER_SIGNING_KEY": "flask --app app ledger new-key {name}",
    "WEBHOOK_SECRETS_KEY": (
        'python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"'
    ),
}


def check_secrets(settings, production: bool) -> None:
    """Refuse the secrets production lacks or cannot trust, all of them in one message naming
    each variable and the command that makes it: ``JWT_SECRET_KEY`` (set, and at least
    ``MIN_SECRET_BYTES`` long), ``LEDGER_SIGNING_KEY`` (set, and a signing key) and
    ``WEBHOOK_SECRETS_KEY`` (set, and Fernet keys). Outside production a missing one is made
    into the instance folder instead."""
    problems = []
    secret = settings["JWT_SECRET_KEY"]
    if production and not secret:
        problems.append(
            f"JWT_SECRET_KEY must be set when APP_ENV=production ({_making('JWT_SECRET_KEY')})"
        )
    elif production and len(secret.encode()) < MIN_SECRET_BYTES:
        problems.append(
            f"JWT_SECRET_KEY must be at least {MIN_SECRET_BYTES} bytes when APP_ENV=production "
            f"(it has {len(secret.encode())}; {_making('JWT_SECRET_KEY')})"
        )
    key, making = settings["LEDGER_SIGNING_KEY"], _making("LEDGER_SIGNING_KEY", settings)
    if key and (refused := signing_key_problem(key)):
        problems.append(f"{refused} ({making})")
    elif production and not key:
        problems.append(f"LEDGER_SIGNING_KEY must be set when APP_ENV=production ({making})")
    keys, making = settings["WEBHOOK_SECRETS_KEY"], _making("WEBHOOK_SECRETS_KEY")
    if keys and (refused := secrets_key_problem(keys)):
        problems.append(f"{refused} ({making})")
    elif production and not keys:
        problems.append(f"WEBHOOK_SECRETS_KEY must be set when APP_ENV=production ({making})")
    if problems:
        raise ConfigError("; ".join(problems))


def signing_key_problem(key: str) -> str | None:
    """Why ``key`` cannot be ``LEDGER_SIGNING_KEY``, or None when it can."""
    try:
        notes.parse_signing_key(key)
    except notes.NoteError as error:
        return f"LEDGER_SIGNING_KEY is not a signing key: {error}"
    return None


def secrets_keys(value) -> tuple[str, ...]:
    """``WEBHOOK_SECRETS_KEY`` (comma-separated, or a list) as its keys, newest first."""
    names = value.split(",") if isinstance(value, str) else value
    return tuple(key.strip() for key in names if key.strip())


def secrets_key_problem(value) -> str | None:
    """Why ``value`` cannot be ``WEBHOOK_SECRETS_KEY``, or None when it can. A key is never
    said back, only its place in the list."""
    keys = secrets_keys(value)
    if not keys:
        return "WEBHOOK_SECRETS_KEY holds no key"
    for place, key in enumerate(keys, 1):
        try:
            Fernet(key)
        except ValueError:
            return (
                f"WEBHOOK_SECRETS_KEY must be Fernet keys, newest first, comma-separated: its key "
                f"{place} of {len(keys)} is not 32 url-safe base64-encoded bytes"
            )
    return None


def _making(name: str, settings=None) -> str:
    """How to make the secret ``name``; the ledger key is named after the service's host
    (``PUBLIC_BASE_URL``), or after a host to fill in while none is configured."""
    base_url = settings["PUBLIC_BASE_URL"] if settings else None
    host = urlparse(base_url).hostname if base_url else None
    key_name = f"{host or 'your.host'}/ledger"
    return f"make one with: {SECRET_COMMANDS[name].format(name=key_name)}"


def ledger_key_name(public_base_url) -> str:
    """The name a generated ledger key signs under: the service's host and ``/ledger``."""
    host = urlparse(public_base_url).hostname if public_base_url else None
    return f"{host or 'localhost'}/ledger"


def shared_secret(path: Path, make=lambda: secrets.token_urlsafe(48)) -> str:
    """A secret kept in ``path``: made once by ``make()``, then read by every worker and every
    restart."""
    if path.exists():
        return path.read_text().strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    draft = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
    # Created readable by its owner only from its first instant (a chmod afterwards would leave
    # a moment where others may read it); O_EXCL refuses a file planted under the draft's name.
    descriptor = os.open(draft, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    try:
        with os.fdopen(descriptor, "w") as file:
            file.write(make())
        # link() refuses to replace an existing file, so when workers race exactly one secret wins
        os.link(draft, path)
    except FileExistsError:
        pass
    finally:
        draft.unlink()
    return path.read_text().strip()
