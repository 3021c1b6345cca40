"""What code generators need from the OpenAPI description beyond what flask-smorest writes:
enumeration members with names, comma lists as arrays sent comma-separated, and no component
nothing uses."""

import re

from schemas.text import CommaList

DIGITS = ("ZERO", "ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN", "EIGHT", "NINE")


def enum_member_name(value) -> str:
    """An enumeration value as a constant's name: ``1x2`` → ``ONE_X_TWO``, ``top-flight`` →
    ``TOP_FLIGHT`` (a generator would call a value starting with a digit ``VALUE_0``)."""
    text = str(value)
    if text[:1].isdigit():
        parts = re.findall(r"\d|[^\W\d_]+", text)
        return "_".join(DIGITS[int(part)] if part.isdigit() else part.upper() for part in parts)
    return re.sub(r"\W+", "_", text).strip("_").upper()


def named_enum(schema: dict) -> None:
    """Give ``schema``'s enumeration ``x-enum-varnames`` when a value would make no name."""
    values = schema.get("enum")
    if values and any(str(value)[:1].isdigit() for value in values if value is not None):
        schema["x-enum-varnames"] = [enum_member_name(value) for value in values]


def generator_friendly(converter, field, ret, **kwargs) -> dict:
    """An apispec attribute function, run last for every field: lists ``null`` among the
    values of an enumeration that may be null (a generated client refuses a value its enum
    lacks), names enumeration members (in the field's schema and in its array items) and leaves
    a comma list's ``anyOf`` alone (with ``null`` when it may be null), without the ``string``
    type its class would give it."""
    if field.allow_none and ret.get("enum") and None not in ret["enum"]:
        ret["enum"] = [*ret["enum"], None]  # a null value must be one of an enumeration's
    if isinstance(field, CommaList) and "anyOf" in ret:
        ret.pop("type", None)
        if field.allow_none and {"type": "null"} not in ret["anyOf"]:
            ret["anyOf"].append({"type": "null"})
    for schema in (ret, ret.get("items") or {}, *ret.get("anyOf", ())):
        if isinstance(schema, dict):
            named_enum(schema)
            if isinstance(schema.get("items"), dict):
                named_enum(schema["items"])
    return {}


def comma_separated(converter, field, **kwargs) -> dict:
    """A comma list in a query is an array sent as ``name=a,b`` (``style: form`` unexploded)."""
    if isinstance(field, CommaList):
        return {"style": "form", "explode": False}
    return {}


def init_app(api) -> None:
    """Teach ``api``'s description the above (after ``api.init_app``)."""
    api.ma_plugin.converter.add_attribute_function(generator_friendly)
    api.ma_plugin.converter.add_parameter_attribute_function(comma_separated)
