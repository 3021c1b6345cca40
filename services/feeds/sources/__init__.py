"""The live sources: each an adapter that fetches what is new (no transaction open) and gives
the records the import stores (``services.feeds.imports.store_records``).

A source's :func:`collect` reads what it needs from the database first (the validators of
its URLs, its credits), then makes its calls, and hands back a ``fetching.Collected``: the
records, what was refused and why, the validators to keep, the credits spent and the error
that stopped it, if any. ``services.feeds.sync`` stores all of it in one transaction.

Each adapter is a module of its own: ``football_data`` and ``odds_api``; what they fetch with
is ``fetching``, a source's standing between syncs and its credits ``credits``, the HTTP client
``http``.
"""

from datetime import datetime

from services.feeds.sources import credits, fetching, football_data, http, odds_api

SOURCES = ("football-data", "the-odds-api")


def configured(settings) -> list[str]:
    """The sources the settings turn on."""
    found = []
    if settings["FOOTBALL_DATA_URL"]:
        found.append("football-data")
    if settings["ODDS_API_KEY"]:
        found.append("the-odds-api")
    return found


def collect(source: str, settings, now: datetime, policy: http.Policy) -> fetching.Collected:
    """Fetch what is new from ``source``; nothing is stored (see the module's docstring)."""
    collected = fetching.Collected(source)
    row = credits.state(source)
    if row.backoff_until is not None and row.backoff_until > now:
        collected.skipped.append(f"asked to wait until {row.backoff_until.isoformat()}")
        collected.backoff_until = row.backoff_until  # still paused: no call, no success
        return collected
    if source == "football-data":
        football_data.collect(collected, settings, now, policy)
    else:
        odds_api.collect(collected, settings, now, policy, row)
    return collected
