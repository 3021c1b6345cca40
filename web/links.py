"""The base of every link the service writes, and the URI of each problem type."""

from flask import current_app, request


def base_url() -> str:
    """The base of every link the service writes: ``PUBLIC_BASE_URL`` when set, else the
    request's own scheme and host when that host is one of ``ALLOWED_HOSTS``, else ``""`` (links
    are then relative, which a client resolves against the URL it asked, the same place).

    The ``Host`` header and, behind a trusted proxy, ``X-Forwarded-Host`` and ``-Proto`` are
    whatever the client sent: written into a problem type, the index or a cached prediction page
    they would point readers (or a shared cache's later readers) wherever the sender chose.
    """
    configured = configured_base(current_app.config)
    if configured:
        return configured
    host = request.host.lower()
    name = host[1:].partition("]")[0] if host.startswith("[") else host.partition(":")[0]
    if request.scheme in ("http", "https") and name in current_app.config["ALLOWED_HOSTS"]:
        return f"{request.scheme}://{host}"
    return ""


def problem_type(name: str, config=None) -> str:
    """The URI naming a problem type: ``{base_url}/problems/<name>``. With ``config`` (an
    answer made outside any request: one the server refused before the app could read it), from
    ``PUBLIC_BASE_URL`` alone, else relative."""
    base = base_url() if config is None else configured_base(config)
    return f"{base}/problems/{name}"


def configured_base(config) -> str:
    """``PUBLIC_BASE_URL`` without its trailing slash, or ``""`` when none is set."""
    return (config["PUBLIC_BASE_URL"] or "").rstrip("/")
