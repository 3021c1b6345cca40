"""Text as the wire reads it: no NUL or lone surrogate, JSON objects naming each member once, and
comma-separated lists."""

import json
import re

from marshmallow import ValidationError, fields

#: Characters no request text may hold: NUL (PostgreSQL's text refuses it) and lone UTF-16
#: surrogates, which a JSON escape can spell (``"\\ud800"``) but no UTF-8 encoder can write.
NOT_TEXT = re.compile(r"[\x00\ud800-\udfff]")


def plain_text(value) -> None:
    """A 422 for a string holding NUL or a lone surrogate (other values pass)."""
    if isinstance(value, str) and NOT_TEXT.search(value):
        raise ValidationError("Must not contain NUL or unpaired surrogate characters.")


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


class CommaIds(CommaList):
    """One or more ids (positive 32-bit integers), comma-separated (``ids=7,12,31``), loaded as
    a tuple of distinct ids in the order first given (a repeated id counts once); at most
    ``max_items`` distinct ones. An entry that is not an id (``x``, ``-1``, ``0``, ``1.5``, an
    empty one) is a 422 naming the parameter.

    Documented as an array of integers sent comma-separated, as :class:`CommaList` is.
    """

    #: How an id is written: ASCII digits without a sign or a leading zero.
    WRITTEN = re.compile(r"[1-9][0-9]*")

    def __init__(self, id_range: tuple[int, int], max_items: int, **kwargs):
        self.id_range = id_range
        self.max_items = max_items
        super().__init__((), **kwargs)

    def description(self) -> str:
        return "One or more ids, comma-separated; a repeated id counts once."

    def documented(self) -> dict:
        low, high = self.id_range
        return {
            "type": "array",
            "items": {"type": "integer", "minimum": low, "maximum": high},
            "minItems": 1,
            "maxItems": self.max_items,
        }

    def _serialize(self, value, attr, obj, **kwargs):
        return None if value is None else ",".join(map(str, value))

    def _deserialize(self, value, attr, data, **kwargs):
        values = list(value) if isinstance(value, list | tuple) else [value]
        if not values or not all(isinstance(item, str) for item in values):
            raise self.make_error("invalid")
        low, high = self.id_range
        parts = [part for item in values for part in item.split(",")]
        digits = len(str(high))  # longer is out of range: never handed to int()
        bad = next(
            (
                part
                for part in parts
                if not (self.WRITTEN.fullmatch(part) and len(part) <= digits)
                or not low <= int(part) <= high
            ),
            None,
        )
        if bad is not None:
            raise ValidationError(
                f"Not an id: {bad[:20]!r}. Ids are integers from {low} to {high}, comma-separated."
            )
        ids = tuple(dict.fromkeys(int(part) for part in parts))
        if len(ids) > self.max_items:
            raise ValidationError(f"At most {self.max_items} distinct ids (got {len(ids)}).")
        return ids
