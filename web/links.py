"""The base of every link the service writes, and the URI of each problem type."""

from flask import current_app, request

#: The port a URL of each scheme names when it names none.
DEFAULT_PORTS = {"http": 80, "https": 443}


def base_url() -> str:
    """The base of every link the service writes: ``PUBLIC_BASE_URL`` when set, else the
    request's own scheme and host when that host and its port are one of ``ALLOWED_HOSTS``, else
    ``""`` (links are then relative, which a client resolves against the URL it asked, the same
    place).

    The ``Host`` header and, behind a trusted proxy, ``X-Forwarded-Host`` and ``-Proto`` are
    whatever the client sent: written into a problem type, the index or a cached prediction page
    they would point readers (or a shared cache's later readers) wherever the sender chose.
    """
    configured = configured_base(current_app.config)
    if configured:
        return configured
    host = request.host.lower()
    if request.scheme in DEFAULT_PORTS and allowed_host(
        host, request.scheme, current_app.config["ALLOWED_HOSTS"]
    ):
        return f"{request.scheme}://{host}"
    return ""


def allowed_host(host: str, scheme: str, allowed) -> bool:
    """Whether ``host`` (a lower-case ``Host``: ``name`` or ``name:port``, an IPv6 address in
    brackets) is one of ``allowed`` (``ALLOWED_HOSTS``, as :func:`config.host_names` writes
    them): its name and port together; a bare entry allows the scheme's default port only."""
    if host.startswith("["):
        name, _, rest = host[1:].partition("]")
        given = rest[1:] if rest.startswith(":") else ("" if not rest else None)
    else:
        name, _, given = host.partition(":")
    if given is None or (given and not (given.isascii() and given.isdigit())):
        return False
    port = int(given) if given else DEFAULT_PORTS[scheme]
    spelt = f"[{name}]:{port}" if ":" in name else f"{name}:{port}"
    return spelt in allowed or (port == DEFAULT_PORTS[scheme] and name in allowed)


def problem_type(name: str, config=None) -> str:
    """The URI naming a problem type: ``{base_url}/problems/<name>``. With ``config`` (an
    answer made outside any request: one the server refused before the app could read it), from
    ``PUBLIC_BASE_URL`` alone, else relative."""
    base = base_url() if config is None else configured_base(config)
    return f"{base}/problems/{name}"


def configured_base(config) -> str:
    """``PUBLIC_BASE_URL`` without its trailing slash, or ``""`` when none is set."""
    return (config["PUBLIC_BASE_URL"] or "").rstrip("/")
