"""The one clock: what time it is, for the tables' defaults, the services and the web.

Services take the time as an argument where it matters (``now``), so a test freezes it by
passing an instant; a whole app is frozen by ``create_app({"CLOCK": callable})``.
"""

from datetime import UTC, datetime


def utcnow() -> datetime:
    """The current time, timezone-aware UTC, to the second."""
    return datetime.now(UTC).replace(microsecond=0)
