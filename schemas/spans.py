"""Days and instants: a UTC day or a date-time as a span, the day arguments default to (by the
clock the web layer hands the schemas), and kick-off ranges."""

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from marshmallow import ValidationError, fields, validates_schema

from clock import utcnow
from schemas.common import CamelSchema, utc_z, wire

DAY = timedelta(days=1)


@dataclass(frozen=True)
class Span:
    """What a date argument names: a bare date's whole UTC day [start, end), or one instant
    (start == end)."""

    start: datetime
    end: datetime

    @property
    def instant(self) -> bool:
        """Whether the argument was a date-time rather than a whole day."""
        return self.start == self.end

    @property
    def day(self) -> date:
        """The UTC day the span starts in."""
        return self.start.date()

    def whole_day(self) -> "Span":
        """The whole UTC day the span starts in."""
        start = datetime.combine(self.day, time(), tzinfo=UTC)
        return Span(start, start + DAY)


class DayOrInstant(fields.String):
    """``YYYY-MM-DD`` (that whole UTC day) or a full ISO 8601 date-time (``2026-11-21T19:45``,
    with seconds, fractions and an offset optional; naive means UTC), loaded as a
    :class:`Span`."""

    DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
    DATE_TIME = re.compile(
        r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})?"
    )
    PATTERN = (
        r"^[0-9]{4}-[0-9]{2}-[0-9]{2}"
        r"([Tt ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?([Zz]|[+-][0-9]{2}:[0-9]{2})?)?$"
    )
    default_error_messages = {
        "invalid": "Must be a date (YYYY-MM-DD) or an ISO 8601 date-time such as "
        "2026-11-21T19:45:00Z.",
        "range": "Out of the supported range of dates.",
        "not_real": "{input} is not a real date.",
    }

    def __init__(self, **kwargs):
        metadata = {
            # One string type with its pattern, not an anyOf of formats: a generated client
            # then takes a string, not Any. The description says what the forms mean.
            "pattern": self.PATTERN,
            "example": "2026-11-21",
            **kwargs.pop("metadata", {}),
        }
        metadata["description"] = (
            f"{metadata.get('description', '')} `YYYY-MM-DD` (that whole UTC day) or an ISO 8601 "
            "date-time (`2026-11-21T19:45:00Z`; without an offset it is UTC)."
        ).strip()
        super().__init__(metadata=metadata, **kwargs)

    def _serialize(self, value, attr, obj, **kwargs):
        if value is None:
            return None
        return value.day.isoformat() if not value.instant else utc_z(value.start)

    def _deserialize(self, value, attr, data, **kwargs):
        text = super()._deserialize(value, attr, data, **kwargs)
        try:
            if self.DATE.fullmatch(text):
                start = datetime.combine(date.fromisoformat(text), time(), tzinfo=UTC)
                span = Span(start, start + DAY)
            elif self.DATE_TIME.fullmatch(text):
                moment = datetime.fromisoformat(text.upper().replace("Z", "+00:00"))
                moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment
                moment = moment.astimezone(UTC)
                span = Span(moment, moment)
            else:
                raise self.make_error("invalid")
            span.whole_day()  # every argument may be read as its day: that day must end
        except ValueError as exc:
            if self.DATE.fullmatch(text[:10]) and not _real_day(text[:10]):  # 2026-02-30
                raise self.make_error("not_real", input=text[:10]) from exc
            raise self.make_error("invalid") from exc
        except OverflowError as exc:
            raise self.make_error("range") from exc
        return span


def _real_day(text: str) -> bool:
    """Whether ``YYYY-MM-DD`` names a day that exists."""
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def now() -> datetime:
    """The current time (UTC) by the app's clock (see ``create_app``): the clock of the
    arguments' defaults."""
    return wire().get("clock", utcnow)()


def today() -> Span:
    """Today (UTC) as a whole-day span: the default of ``date`` arguments."""
    moment = now()
    return Span(moment, moment).whole_day()


def day_field():
    """The ``date`` argument of a day's listing: a UTC day, today by default."""
    return DayOrInstant(
        data_key="date",
        load_default=today,
        metadata={"description": "The UTC day (a date-time means its UTC day); default today."},
    )


def check_range(since: Span | None, until: Span | None, names=("from", "to")) -> None:
    """A 422 on ``names[1]`` when ``since`` starts after ``until`` ends (a bare date ``until``
    includes its whole day)."""
    if since is None or until is None:
        return
    empty = since.start > until.start if until.instant else since.start >= until.end
    if empty:
        raise ValidationError(f"Must not be before {names[0]}.", names[1])


class KickoffRangeSchema(CamelSchema):
    """``from`` and ``to`` on the kick-off: a date (its whole UTC day) or a date-time."""

    date_from = DayOrInstant(data_key="from")
    date_to = DayOrInstant(data_key="to")

    @validates_schema
    def from_before_to(self, data, **kwargs):
        """``from`` after ``to`` is a 422."""
        check_range(data.get("date_from"), data.get("date_to"))
