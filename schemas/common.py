"""Shapes every endpoint group shares: camelCase, the one UTC ``Z`` datetime format, date and
enumeration arguments, paging, problems."""

import json
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from flask import current_app, has_app_context
from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from clock import utcnow
from enums import ID_RANGE

DAY = timedelta(days=1)


def camelcase(name: str) -> str:
    """``page_size`` → ``pageSize``."""
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def utc_z(value: datetime) -> str:
    """The one way a datetime is written, in answers and in stored JSON alike:
    ISO 8601 in UTC to the second with a ``Z`` (``2026-11-21T19:45:00Z``); naive means UTC."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).replace(microsecond=0, tzinfo=None).isoformat() + "Z"


#: The integers a request may give: the interface declares them int32, and a larger one would
#: overflow the database's integers (an OFFSET, a key) as a 500 rather than answer a 422.
INT32 = (-(2**31), 2**31 - 1)

#: Characters no request text may hold: NUL (PostgreSQL's text refuses it) and lone UTF-16
#: surrogates, which a JSON escape can spell (``"\\ud800"``) but no UTF-8 encoder can write.
NOT_TEXT = re.compile(r"[\x00\ud800-\udfff]")


def plain_text(value) -> None:
    """A 422 for a string holding NUL or a lone surrogate (other values pass)."""
    if isinstance(value, str) and NOT_TEXT.search(value):
        raise ValidationError("Must not contain NUL or unpaired surrogate characters.")


def _admits(validator, value) -> bool:
    try:
        validator(value)
    except ValidationError:
        return False
    return True


class WithinInt32:
    """A field's validator refusing an integer outside int32 that the field's own ranges let
    through (one they refuse gets their message alone), naming the bounds both leave: ``start``,
    at least 0, says "between 0 and 2147483647" of 10^20, not int32's lower bound."""

    def __init__(self, field):
        self.validators = field.validators  # made with every schema: the rest waits for a value

    def __call__(self, value) -> None:
        if not isinstance(value, int) or INT32[0] <= value <= INT32[1]:
            return
        ranges = [each for each in self.validators if isinstance(each, validate.Range)]
        if all(_admits(each, value) for each in ranges):  # else theirs says it
            low = max([INT32[0], *(each.min for each in ranges if each.min is not None)])
            high = min([INT32[1], *(each.max for each in ranges if each.max is not None)])
            raise ValidationError(f"Must be between {low} and {high}.")


class DuplicateName(ValueError):
    """A JSON object naming one member twice: ``args[0]`` is the name."""


def unique_names(pairs: list) -> dict:
    """``json.loads``' ``object_pairs_hook`` refusing an object that names a member twice:
    RFC 8259 leaves which one counts to the reader, and Python's silently takes the last."""
    members = dict(pairs)
    if len(members) < len(pairs):
        seen = set()
        raise DuplicateName(next(name for name, _ in pairs if name in seen or seen.add(name)))
    return members


def load_json(text: str):
    """The value of the JSON ``text``, refusing duplicate names (:class:`DuplicateName`)."""
    return json.loads(text, object_pairs_hook=unique_names)


#: An integer as a query string spells it: ASCII digits, perhaps after a minus sign.
WRITTEN_INTEGER = re.compile(r"-?[0-9]+")


class Integer(fields.Integer):
    """marshmallow's Integer, reading text only as ASCII digits: Python's ``int()`` also reads
    ``1_000``, `` 5`` and other scripts' digits (``١٠``), each spelling of a query a cached
    answer of its own. Every integer field of a request schema is one of these."""

    def _validated(self, value):
        if isinstance(value, str) and not WRITTEN_INTEGER.fullmatch(value):
            raise self.make_error("invalid")
        return super()._validated(value)


#: A decimal number as a query writes it: a JSON number (what every client's serialiser writes,
#: ``1e-05`` included).
WRITTEN_DECIMAL = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")


class Float(fields.Float):
    """marshmallow's Float, reading text only as a JSON number (``0.5``, ``-1``, ``1e-05``):
    Python's ``float()`` also reads `` 0.5 ``, ``1_0``, ``.5``, ``nan`` and other scripts'
    digits (``١``). ``strict`` (a body's field) takes a JSON number only, never text, as a
    body's integers are. Never NaN nor infinite."""

    def __init__(self, *, strict: bool = False, **kwargs):
        super().__init__(allow_nan=False, **kwargs)
        self.strict = strict

    def _validated(self, value):
        if isinstance(value, str) and (self.strict or not WRITTEN_DECIMAL.fullmatch(value)):
            raise self.make_error("invalid")
        return super()._validated(value)


class CamelSchema(Schema):
    """Python attributes in snake_case, JSON in camelCase (also in validation errors).

    Every string and integer field also checks what it loads, whatever its schema adds: a
    string holds text a database and a log can store, an integer fits int32. So no request
    (body, query, or the filters inside an export's ``parametersJson``) reaches the database
    with a value it cannot take.
    """

    def on_bind_field(self, field_name, field_obj):
        field_obj.data_key = camelcase(field_obj.data_key or field_name)
        # The fields are this instance's shallow copies (marshmallow's Field.__deepcopy__), so
        # they share the class's list of validators: a new list each time, or every instance
        # made (several a request) would append to the one list for ever.
        if isinstance(field_obj, fields.String):
            field_obj.validators = [*field_obj.validators, plain_text]
        elif isinstance(field_obj, fields.Integer):
            field_obj.validators = [*field_obj.validators, WithinInt32(field_obj)]


class UTCDateTime(fields.DateTime):
    """ISO 8601 in UTC with a ``Z`` (``2026-11-21T19:45:00Z``); input without an offset is UTC."""

    def _serialize(self, value, attr, obj, **kwargs):
        return None if value is None else utc_z(value)

    def _deserialize(self, value, attr, data, **kwargs):
        parsed = super()._deserialize(value, attr, data, **kwargs)
        try:
            return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
        except OverflowError as exc:  # year 1 with a positive offset lies before year 1 in UTC
            raise ValidationError("Out of the supported date range.") from exc


#: Decimal places on the wire: money (units staked and won) to the cent, probabilities and the
#: ratios made of them (edges, CLV, ROI, hit rates) to a millionth. Enough for any sum a client
#: makes, and no ``-3.9100000000000024`` from the float arithmetic behind them.
MONEY_PLACES = 2
PROBABILITY_PLACES = 6


class JsonBoolean(fields.Boolean):
    """A boolean in a JSON body: ``true`` or ``false`` only. marshmallow's also took ``"yes"``,
    ``1`` or ``"on"``, where the rest of a body is held to its JSON type."""

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, bool):
            raise self.make_error("invalid")
        return value


class Rounded(fields.Float):
    """A number written rounded to ``places`` decimals (``-0.0`` written ``0.0``); the OpenAPI
    description says so. Loading is a plain float."""

    def __init__(self, places: int, **kwargs):
        self.places = places
        metadata = dict(kwargs.pop("metadata", {}))
        said = metadata.get("description", "").rstrip()
        metadata["description"] = f"{said} Rounded to {places} decimals.".lstrip()
        super().__init__(metadata=metadata, **kwargs)

    def _serialize(self, value, attr, obj, **kwargs):
        return None if value is None else round_to(value, self.places)


def round_to(value, places: int):
    """``value`` rounded to ``places`` decimals as a float (``None`` stays ``None``)."""
    return None if value is None else round(float(value), places) + 0.0


def money(**kwargs) -> Rounded:
    """Units staked, won or lost: written to 2 decimals."""
    return Rounded(MONEY_PLACES, **kwargs)


def ratio(**kwargs) -> Rounded:
    """A probability, or a ratio made of them (edge, CLV, ROI): written to 6 decimals."""
    return Rounded(PROBABILITY_PLACES, **kwargs)


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
    return current_app.extensions["clock"]() if has_app_context() else utcnow()


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


def id_field(**kwargs):
    """An id argument: a positive 32-bit integer (``strict`` ones refuse numbers in strings)."""
    return Integer(validate=validate.Range(*ID_RANGE), **kwargs)


def enum_of(values, **kwargs):
    """An output string documented with its allowed values."""
    metadata = {"enum": list(values), **kwargs.pop("metadata", {})}
    return fields.String(metadata=metadata, **kwargs)


def one_of(values, **kwargs):
    """A string restricted to ``values``; the 422 names the allowed ones."""
    return fields.String(
        validate=validate.OneOf(values, error="Must be one of: {choices}."), **kwargs
    )


class CommaList(fields.String):
    """One or more of ``choices``, comma-separated (``rating=A,B``), loaded as a tuple of distinct
    values in the order given; anything else is a 422 naming the allowed values.

    A query parameter: documented as an array of the enumeration sent comma-separated (OpenAPI's
    ``style: form, explode: false``), so a generated client takes a list of enum members.
    """

    def __init__(self, choices, **kwargs):
        self.choices = tuple(choices)
        metadata = {
            "description": self.description(),
            **self.documented(),
            **kwargs.pop("metadata", {}),
        }
        super().__init__(metadata=metadata, **kwargs)

    def description(self) -> str:
        """What the OpenAPI description says of the field."""
        return f"One or more of {', '.join(self.choices)}, comma-separated."

    def documented(self) -> dict:
        """The field's OpenAPI schema."""
        return {
            "type": "array",
            "items": {"type": "string", "enum": list(self.choices)},
            "minItems": 1,
        }

    def _serialize(self, value, attr, obj, **kwargs):
        return None if value is None else ",".join(value)

    def _deserialize(self, value, attr, data, **kwargs):
        # A query may also repeat the parameter (``rating=A&rating=B``, as clients that explode
        # arrays send it); a JSON body may give a list.
        values = list(value) if isinstance(value, list | tuple) else [value]
        if not values or not all(isinstance(item, str) for item in values):
            raise self.make_error("invalid")
        parts = [
            part
            for item in values
            for part in super(CommaList, self)._deserialize(item, attr, data, **kwargs).split(",")
        ]
        if any(part not in self.choices for part in parts):
            raise ValidationError(
                f"Must be one or more of: {', '.join(self.choices)} (comma-separated)."
            )
        return tuple(dict.fromkeys(parts))

    #: webargs reads every value of a repeated query parameter.
    is_multiple = True


class CommaListBody(CommaList):
    """:class:`CommaList` in a JSON body: a list of the values (``["A", "B"]``) or the same
    comma-separated string (``"A,B"``); answers echo it as the string."""

    def description(self) -> str:
        return (
            f'One or more of {", ".join(self.choices)}: a list (`["A", "B"]`) or '
            'comma-separated (`"A,B"`); answers echo it comma-separated.'
        )

    def documented(self) -> dict:
        alternatives = "|".join(re.escape(choice) for choice in self.choices)
        return {
            "anyOf": [
                {
                    "type": "array",
                    "items": {"type": "string", "enum": list(self.choices)},
                    "minItems": 1,
                },
                {"type": "string", "pattern": f"^({alternatives})(,({alternatives}))*$"},
            ],
        }


def dump_known(schema: Schema, value: dict) -> dict:
    """``schema.dump(value)``, refusing keys the schema does not know (marshmallow would drop
    them silently, and a stored document would lose what a service meant to keep)."""
    known = {field.attribute or name for name, field in schema.fields.items()}
    unknown = sorted(set(value) - known)
    if unknown:
        raise ValueError(f"{type(schema).__name__} does not know {', '.join(unknown)}")
    return schema.dump(value)


def _utc_text(value):
    """A stored datetime as the driver returns it (SQLite text, PostgreSQL naive datetime, or an
    aware datetime) in the one wire format."""
    if value is None:
        return None
    if isinstance(value, str):  # SQLite: "YYYY-MM-DD HH:MM:SS[.ffffff]", naive UTC
        return f"{value[:10]}T{value[11:19]}Z"
    return utc_z(value)


def flat_rows(schema: Schema, booleans=(True, False)):
    """``(names, convert)`` for writing rows of ``schema`` fast: its fields' wire names, and a
    function turning a driver row (values in field order) into wire values.

    Exports write up to millions of rows; marshmallow would spend microseconds per field, so the
    schema is compiled once into one converter per column (datetimes to UTC ``Z``, booleans
    from 0/1 to ``booleans``) and everything else passes as the driver gives it.
    """
    true, false = booleans

    def boolean(value):
        return None if value is None else true if value else false

    names, converters = [], []
    for name, field in schema.fields.items():
        names.append(field.data_key or name)
        if isinstance(field, fields.DateTime):
            converters.append(_utc_text)
        elif isinstance(field, Rounded):
            converters.append(lambda value, places=field.places: round_to(value, places))
        elif isinstance(field, fields.Boolean):
            converters.append(boolean)
        else:
            converters.append(None)
    pairs = [(index, convert) for index, convert in enumerate(converters) if convert]

    def convert(row):
        values = list(row)
        for index, converter in pairs:
            values[index] = converter(values[index])
        return values

    return names, convert


class PageArgsSchema(CamelSchema):
    """``page`` ≥ 1 (default 1) and ``pageSize`` 1–100 (default 20)."""

    page = Integer(load_default=1, validate=validate.Range(min=1, max=INT32[1]))
    page_size = Integer(load_default=20, validate=validate.Range(min=1, max=100))


class PageSchema(CamelSchema):
    """The paging fields every paged list answers with."""

    page = Integer(required=True)
    page_size = Integer(required=True)
    total = Integer(required=True, metadata={"description": "Items across all pages."})


def page_of(item_schema, name: str):
    """A page schema whose ``items`` are ``item_schema``s (named ``<name>PageSchema``)."""
    return type(
        f"{name}PageSchema",
        (PageSchema,),
        {
            "__doc__": f"One page of {name.lower()}s.",
            "items": fields.List(fields.Nested(item_schema), required=True),
        },
    )


class ProblemSchema(Schema):
    """RFC 9457 problem details, as every error other than 401 answers."""

    type = fields.String(
        required=True,
        metadata={
            "description": "`{base_url}/problems/<name>`; relative (`/problems/<name>`) when "
            "the service has no public base URL and the request's host is not an allowed one",
            "format": "uri-reference",
        },
    )
    title = fields.String(required=True)
    status = Integer(required=True)
    detail = fields.String(required=True)
    errors = fields.Dict(
        keys=fields.String(),
        values=fields.List(fields.String()),
        metadata={"description": "Validation errors only: field or parameter name → messages."},
    )
    requestId = fields.String(  # noqa: N815 - the wire name
        metadata={"description": "The `X-Request-ID` of the request, as logged."}
    )


class ProblemDescriptionSchema(Schema):
    """What ``GET /problems/<name>`` answers."""

    name = fields.String(required=True)
    type = fields.String(required=True)
    title = fields.String(required=True)
    status = Integer(required=True)
    description = fields.String(required=True)
