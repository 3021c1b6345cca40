"""How a setting's value is read: booleans as people write them, ``APP_ENV``, the market, host,
port, origin and witness lists, ``PRO_URL``; each refuses what it cannot read with a
:class:`ConfigError` naming the setting."""

import base64
import binascii
import hashlib
from urllib.parse import urlparse

from enums import MARKETS

TRUE_WORDS = frozenset({"1", "true", "yes", "on"})


FALSE_WORDS = frozenset({"0", "false", "no", "off", ""})


#: What ``APP_ENV`` may say (in any letter case); anything else stops the service at startup,
#: so a typo such as ``prod`` never runs production with a generated key.
APP_ENVS = ("development", "test", "production")


class ConfigError(RuntimeError):
    """A configuration the service refuses to start with. Its message is one line: each setting
    that is wrong, why, and for a secret the command that makes one. The entry points say it as
    that one line on stderr, with exit status 1, never a traceback."""


def as_bool(value) -> bool:
    """Read a boolean the way people write one in an environment variable."""
    if isinstance(value, bool):
        return value
    word = str(value).strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise ValueError(f"not a boolean: {value!r}")


def app_env(value) -> str:
    """``APP_ENV`` normalised (``Production`` is ``production``); unknown values refused."""
    word = str(value).strip().lower()
    if word not in APP_ENVS:
        raise ConfigError(f"APP_ENV must be one of {', '.join(APP_ENVS)} (got {value!r})")
    return word


def pick_markets(value) -> tuple[str, ...]:
    """``PICK_MARKETS`` (comma-separated, or a list) as a tuple of market names; an unknown
    market stops the service at startup. An empty list (as an override) gives no picks."""
    names = value.split(",") if isinstance(value, str) else value
    markets = tuple(name.strip() for name in names if name.strip())
    if unknown := sorted(set(markets) - set(MARKETS)):
        raise ConfigError(
            f"PICK_MARKETS may name only {', '.join(MARKETS)} (got {', '.join(unknown)})"
        )
    return markets


def host_names(value) -> frozenset[str]:
    """``ALLOWED_HOSTS`` (comma-separated, or a list) as lower-case entries: a bare host name or
    address (``localhost``, ``::1``: the scheme's default port only) or one with its port
    (``localhost:8000``, ``[::1]:8000``: that port only). A port that is not a number from 1 to
    65535 stops the service at startup."""
    names = value.split(",") if isinstance(value, str) else value
    return frozenset(_host_entry(name.strip().lower()) for name in names if name.strip())


def _host_entry(entry: str) -> str:
    """One ``ALLOWED_HOSTS`` entry as :func:`web.links.base_url` looks it up: ``name`` or
    ``name:port``, an IPv6 address bracketed only when a port follows it."""
    if entry.startswith("["):
        name, _, rest = entry[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else None
        if rest and port is None:
            raise ConfigError(f"ALLOWED_HOSTS has a malformed entry {entry!r}")
    elif entry.count(":") == 1:
        name, _, port = entry.partition(":")
    else:
        name, port = entry, None  # a host name, or an IPv6 address without brackets
    if port is None:
        return name
    if not (port.isascii() and port.isdigit() and 1 <= int(port) <= 65535):
        raise ConfigError(f"ALLOWED_HOSTS has an entry whose port is not a port: {entry!r}")
    return f"[{name}]:{int(port)}" if ":" in name else f"{name}:{int(port)}"


def webhook_ports(value) -> frozenset[int]:
    """``WEBHOOK_ALLOWED_PORTS`` (comma-separated, or a list) as port numbers; none, or one that
    is not a number from 1 to 65535, stops the service at startup."""
    items = value.split(",") if isinstance(value, str) else value
    ports = set()
    for item in items:
        text = str(item).strip()
        if not (text.isascii() and text.isdigit() and 1 <= int(text) <= 65535):
            raise ConfigError(
                f"WEBHOOK_ALLOWED_PORTS must list ports from 1 to 65535 (got {item!r})"
            )
        ports.add(int(text))
    if not ports:
        raise ConfigError("WEBHOOK_ALLOWED_PORTS must list at least one port")
    return frozenset(ports)


def cors_origins(value) -> tuple[str, ...]:
    """``CORS_ORIGINS`` (comma-separated, or a list) as origins (``https://app.example``,
    ``http://localhost:5173``) or ``*``; an origin with a path, or without a scheme, stops the
    service at startup (a browser sends none such, so it would silently allow nothing)."""
    names = value.split(",") if isinstance(value, str) else value
    origins = tuple(name.strip().rstrip("/") for name in names if name.strip())
    for origin in origins:
        if origin == "*":
            continue
        parsed = urlparse(origin)
        if parsed.scheme not in ("http", "https") or not parsed.netloc or parsed.path:
            raise ConfigError(
                f"CORS_ORIGINS must list origins such as https://app.example or * (got {origin!r})"
            )
    return origins


def ledger_witnesses(value) -> tuple[tuple[str, str], ...]:
    """``LEDGER_WITNESSES`` (comma-separated ``vkey@url``, or a list of them) as ``(vkey, url)``
    pairs: each vkey a witness's Ed25519 cosignature key, ``name+hash+base64(0x04 ‖ key)``
    (C2SP tlog-cosignature), each url its submission prefix (http or https)."""
    entries = value.split(",") if isinstance(value, str) else value
    found = []
    for entry in (item.strip() for item in entries):
        if not entry:
            continue
        vkey, _, url = entry.rpartition("@")
        if refused := _witness_problem(vkey, url):
            raise ConfigError(f"LEDGER_WITNESSES: {refused} (got {entry!r})")
        found.append((vkey, url.rstrip("/")))
    if len({vkey for vkey, _ in found}) != len(found):
        raise ConfigError("LEDGER_WITNESSES names a witness twice")
    return tuple(found)


def _witness_problem(vkey: str, url: str) -> str | None:
    """Why ``vkey@url`` names no witness, or None when it does."""
    if urlparse(url).scheme not in ("http", "https") or not urlparse(url).hostname:
        return "each entry is vkey@url, the url http or https"
    parts = vkey.split("+", 2)
    if len(parts) != 3 or not parts[0] or any(char.isspace() for char in parts[0]):
        return "a witness's vkey is name+hash+base64"
    if len(vkey) > 255:  # the width of ledger_cosignature.witness
        return "a witness's vkey is at most 255 characters"
    name, hash_hex, material = parts
    try:
        raw = base64.b64decode(material, validate=True)
    except binascii.Error:
        return "a witness's vkey ends in base64"
    if len(raw) != 33 or raw[0] != 4:
        return "a witness's vkey is an Ed25519 cosignature key (type 0x04, tlog-cosignature)"
    if hashlib.sha256(name.encode() + b"\n" + raw).digest()[:4].hex() != hash_hex.lower():
        return "a witness's vkey hash does not match its name and key"
    return None


def pro_url(value) -> str | None:
    """``PRO_URL``: an ``https://`` or ``http://`` address, or a path on this site (``/pro``);
    None when unset. Anything else (``javascript:``, a bare host) stops the service at startup,
    as it would be a link that leads nowhere, or somewhere no page should send a reader."""
    if not value:
        return None
    value = value.strip()
    parsed = urlparse(value)
    absolute = parsed.scheme in ("http", "https") and bool(parsed.netloc)
    on_site = not parsed.scheme and not parsed.netloc and value.startswith("/")
    if not (absolute or on_site) or any(char.isspace() for char in value):
        raise ConfigError(
            f"PRO_URL must be an http(s) address such as https://app.example/pro, or a path "
            f"on this site such as /pro (got {value!r})"
        )
    return value
