"""Numbers as the wire writes and reads them: JSON integers and decimals only, int32 bounds, money,
means of odds and probabilities rounded."""

import re
from decimal import Decimal

from marshmallow import ValidationError, fields, missing, validate

from engine.markets import market_line

#: The integers a request may give: the interface declares them int32, and a larger one would
#: overflow the database's integers (an OFFSET, a key) as a 500 rather than answer a 422.
INT32 = (-(2**31), 2**31 - 1)


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


def _admits(validator, value) -> bool:
    try:
        validator(value)
    except ValidationError:
        return False
    return True


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


class JsonBoolean(fields.Boolean):
    """A boolean in a JSON body: ``true`` or ``false`` only. marshmallow's also took ``"yes"``,
    ``1`` or ``"on"``, where the rest of a body is held to its JSON type."""

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, bool):
            raise self.make_error("invalid")
        return value


#: Decimal places on the wire: money (units staked and won) to the cent, probabilities and the
#: ratios made of them (edges, CLV, ROI, hit rates) to a millionth, a mean of decimal odds to
#: the hundredth a price is quoted in. Enough for any sum a client makes, and no
#: ``-3.9100000000000024`` or ``2.7255172413793103`` from the float arithmetic behind them.
MONEY_PLACES = 2
ODDS_PLACES = 2


PROBABILITY_PLACES = 6


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


def mean_odds(**kwargs) -> Rounded:
    """A mean of decimal odds: written to 2 decimals, as prices are quoted (a price itself is
    written as the bookmaker gave it)."""
    return Rounded(ODDS_PLACES, **kwargs)


def ratio(**kwargs) -> Rounded:
    """A probability, or a ratio made of them (edge, CLV, ROI): written to 6 decimals."""
    return Rounded(PROBABILITY_PLACES, **kwargs)


#: What every ``line`` field says in the OpenAPI description.
LINE_DESCRIPTION = (
    "The line: for `ah` (Asian handicap) the home side's handicap in goals (whole, half or "
    "quarter: `-0.25` backs the home side giving a quarter goal; a quarter line settles as two "
    "half stakes at the lines either side), for `ou` the goals line of over/under; 2.5 for "
    "`ou25`; null for `1x2` and `btts`, which have none."
)


class Line(fields.Float):
    """A row's ``line`` as :func:`engine.markets.market_line` gives it from the row's ``market``
    (read from the same object); loading is a plain float."""

    def __init__(self, **kwargs):
        metadata = {"description": LINE_DESCRIPTION, **kwargs.pop("metadata", {})}
        super().__init__(allow_none=True, metadata=metadata, **kwargs)

    def serialize(self, attr, obj, accessor=None, **kwargs):
        market = self.get_value(obj, "market", accessor=accessor)
        line = self.get_value(obj, attr, accessor=accessor)
        return market_line(market, None if line is missing else line)


class QuarterGoals(Float):
    """A line as a request gives it: a multiple of a quarter goal, exactly as written (text is
    read as a decimal, so ``1e-400``, which a float reads as 0, is refused rather than taken for
    the line 0)."""

    def _validated(self, value):
        number = super()._validated(value)
        quarters = (Decimal(value) if isinstance(value, str) else Decimal(number)) * 4
        if quarters != quarters.to_integral_value():
            raise ValidationError("Must be a multiple of 0.25: a line in quarter goals.")
        return number


def line_filter(description=None):
    """The ``line`` filter beside a ``market`` filter: rows at exactly this line (of the markets
    with one: ``line=2.5`` finds "ou25", never a 1x2 or btts row); ``description`` says what
    else an endpoint does with it."""
    return QuarterGoals(
        validate=validate.Range(-20, 20),
        metadata={
            "multipleOf": 0.25,
            "description": description
            or "Only rows at exactly this line (see `line` in the rows), a multiple "
            "of 0.25: `line=2.5` finds `ou25` (and `ou` at 2.5 goals), `line=-0.25` Asian "
            "handicap rows at that handicap. Markets without a line (`1x2`, `btts`) have none "
            "to match.",
        },
    )
