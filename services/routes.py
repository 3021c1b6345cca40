"""The API paths that answers, events and links name, spelt once: the blueprints mount their
groups at these prefixes and the services write links with these functions
(``tests/system/test_architecture.py`` checks each link routes to the endpoint it names)."""

API = "/api"
MATCHES = f"{API}/matches"
SEO = f"{API}/v1/seo"
DATA = f"{API}/v1/data"
WEBHOOKS = f"{DATA}/webhooks"
OPS = f"{API}/v1/ops"
CALENDARS = f"{API}/calendars"
ME = f"{API}/me"
ALERTS = f"{ME}/alerts"
UNSUBSCRIBE = f"{API}/alerts/unsubscribe"

#: A user's own calendar, following their alert subscriptions (``?token=…``, ``&leagues=…`` to
#: narrow it), and its token.
CHOSEN_CALENDAR = f"{CALENDARS}/mine.ics"
CALENDAR_TOKEN = f"{ME}/calendar-token"

#: The Data API resources an export reads, by their GET endpoint.
DATA_MATCHES = f"{DATA}/matches"
DATA_TRACK_RECORD = f"{DATA}/track-record"


def match(match_id: int) -> str:
    """One match: ``GET /api/matches/{id}``."""
    return f"{MATCHES}/{match_id}"


def seo_prediction(slug: str) -> str:
    """A match's prediction for search engines: ``GET /api/v1/seo/predictions/{slug}``."""
    return f"{SEO}/predictions/{slug}"


def league_calendar(code: str) -> str:
    """A league's calendar: ``GET /api/calendars/leagues/{code}.ics``."""
    return f"{CALENDARS}/leagues/{code}.ics"


def webhook(endpoint_id: int) -> str:
    """A webhook endpoint: ``GET /api/v1/data/webhooks/{id}``."""
    return f"{WEBHOOKS}/{endpoint_id}"


def operation(operation_id: int) -> str:
    """An operation: ``GET /api/v1/ops/operations/{id}``."""
    return f"{OPS}/operations/{operation_id}"


def alert(subscription_id: int) -> str:
    """One of the caller's alert subscriptions: ``GET /api/me/alerts/{id}``."""
    return f"{ALERTS}/{subscription_id}"


def unsubscribe(token: str) -> str:
    """An alert's one-click unsubscribe: ``GET`` (a page asking) or ``POST`` (done)."""
    return f"{UNSUBSCRIBE}/{token}"
