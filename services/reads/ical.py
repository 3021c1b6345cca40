"""iCalendar text (RFC 5545): a calendar of events written as its content lines. Pure text
formatting: no database, no web.

What the common calendar clients (Google Calendar, Apple Calendar, Outlook) read from a
subscribed calendar: ``VERSION``, ``PRODID``, ``CALSCALE:GREGORIAN`` and ``METHOD:PUBLISH``; the
calendar's name as RFC 7986 ``NAME`` and as ``X-WR-CALNAME`` (which Google and Apple show); how
often to fetch it again as RFC 7986 ``REFRESH-INTERVAL`` and as ``X-PUBLISHED-TTL`` (Outlook's).
Each event has a ``UID`` that never changes, ``DTSTAMP``, and ``DTSTART``/``DTEND`` in UTC
(``20261121T150000Z``, RFC 5545 3.3.5's second form), so no ``VTIMEZONE`` is needed.

Every line ends with CRLF and is folded at 75 octets (3.1): a longer line goes on in lines
starting with one space, never cutting a UTF-8 character. A text value escapes backslash,
semicolon, comma and line breaks (3.3.11) and drops the other control characters, which a text
value may not hold.
"""

import re
from datetime import UTC, datetime, timedelta

CRLF = "\r\n"
#: The longest line, in octets, without its CRLF (RFC 5545 3.1).
LINE_OCTETS = 75
#: Control characters a TEXT value may not hold (3.3.11: any but HTAB; line breaks are
#: escaped before this applies).
CONTROLS = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def text(value: str) -> str:
    """``value`` as a TEXT value: ``\\``, ``;`` and ``,`` escaped with a backslash, each line
    break as ``\\n``, other control characters dropped."""
    escaped = value.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,")
    escaped = escaped.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\\n")
    return CONTROLS.sub("", escaped)


def instant(moment: datetime) -> str:
    """An aware datetime as a UTC DATE-TIME: ``20261121T150000Z``."""
    return moment.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def duration(span: timedelta) -> str:
    """A positive whole number of seconds as a DURATION: ``PT1H``, ``P1D``, ``PT1H30M``."""
    seconds = int(span.total_seconds())
    if seconds <= 0 or seconds != span.total_seconds():
        raise ValueError(f"not a positive whole number of seconds: {span!r}")
    days, seconds = divmod(seconds, 86400)
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    clock = "".join(
        f"{amount}{unit}"
        for amount, unit in ((hours, "H"), (minutes, "M"), (seconds, "S"))
        if amount
    )
    return f"P{f'{days}D' if days else ''}{f'T{clock}' if clock else ''}"


def fold(line: str) -> str:
    """``line`` folded into lines of at most 75 octets (UTF-8), each after the first starting
    with a space (which counts), joined by CRLF; no character is cut."""
    lines, current, size = [], [], 0
    for character in line:
        octets = len(character.encode())
        if size + octets > LINE_OCTETS:
            lines.append("".join(current))
            current, size = [" "], 1
        current.append(character)
        size += octets
    lines.append("".join(current))
    return CRLF.join(lines)


def property_line(name: str, written: str, **parameters) -> str:
    """One content line, folded: ``NAME;PARAM=VALUE:written`` (``written`` already in its
    value's type: escape TEXT with :func:`text`). Parameter names are written upper-case, ``_``
    as ``-``."""
    given = "".join(f";{key.upper().replace('_', '-')}={each}" for key, each in parameters.items())
    return fold(f"{name}{given}:{written}")


#: What each event's status is in iCalendar (3.8.1.11).
EVENT_STATUSES = ("CONFIRMED", "TENTATIVE", "CANCELLED")


def document(calendar: dict) -> str:
    """The iCalendar text of ``calendar``: ``{prodid, name, description, refresh (a
    timedelta), events}``, each event ``{uid, stamp, start, end, summary, description, url
    (None: none), status (one of EVENT_STATUSES), categories (a list)}`` (instants aware)."""
    lines = [
        "BEGIN:VCALENDAR",
        "VERSION:2.0",
        property_line("PRODID", calendar["prodid"]),
        "CALSCALE:GREGORIAN",
        "METHOD:PUBLISH",
        property_line("NAME", text(calendar["name"])),
        property_line("X-WR-CALNAME", text(calendar["name"])),
        property_line("DESCRIPTION", text(calendar["description"])),
        property_line("X-WR-CALDESC", text(calendar["description"])),
        property_line("REFRESH-INTERVAL", duration(calendar["refresh"]), value="DURATION"),
        property_line("X-PUBLISHED-TTL", duration(calendar["refresh"])),
    ]
    for event in calendar["events"]:
        lines += _event(event)
    lines.append("END:VCALENDAR")
    return CRLF.join(lines) + CRLF


def _event(event: dict) -> list[str]:
    """The content lines of one VEVENT."""
    if event["status"] not in EVENT_STATUSES:
        raise ValueError(f"not an event status: {event['status']!r}")
    lines = [
        "BEGIN:VEVENT",
        property_line("UID", text(event["uid"])),
        property_line("DTSTAMP", instant(event["stamp"])),
        property_line("DTSTART", instant(event["start"])),
        property_line("DTEND", instant(event["end"])),
        property_line("SUMMARY", text(event["summary"])),
        property_line("DESCRIPTION", text(event["description"])),
        property_line("STATUS", event["status"]),
        "TRANSP:TRANSPARENT",  # a match to follow, not time the reader is busy
    ]
    if event["categories"]:
        lines.append(property_line("CATEGORIES", ",".join(map(text, event["categories"]))))
    if event.get("url"):
        lines.append(property_line("URL", event["url"], value="URI"))
    lines.append("END:VEVENT")
    return lines
