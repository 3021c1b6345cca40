"""Path converters: what an id or a slug in a path may be (anything else does not route: 404).

A path has one spelling: a doubled slash inside it or a trailing slash does not route either
(werkzeug reads leading slashes as one)."""

from datetime import date
from typing import ClassVar

from flask_smorest.spec.plugins import FlaskPlugin
from werkzeug import routing
from werkzeug.routing import BaseConverter, IntegerConverter, ValidationError

from enums import ID_RANGE, LEAGUE_CODE_PATTERN


class SlugConverter(BaseConverter):
    """A match slug in a path: lower-case letters, digits and hyphens (anything else is 404)."""

    regex = r"[a-z0-9-]{1,255}"


class LeagueCodeConverter(BaseConverter):
    """A league's code in a path: ASCII letters, digits, ``_`` and ``-`` (``E0``, ``SP1``)."""

    regex = LEAGUE_CODE_PATTERN


class IdConverter(IntegerConverter):
    """An id in a path, as the API writes it: ASCII digits, no leading zero. werkzeug's ``int``
    also routed other scripts' digits (``٣٦٠٠``, ``３６００``) and ``03600`` to the same row, each
    spelling an answer of its own to store."""

    regex = r"[1-9][0-9]*"


class DayConverter(BaseConverter):
    """A UTC day in a path, as ``YYYY-MM-DD``: a real calendar day (``2026-02-30`` is 404)."""

    regex = r"[0-9]{4}-[0-9]{2}-[0-9]{2}"

    def to_python(self, value: str) -> date:
        try:
            return date.fromisoformat(value)
        except ValueError:
            raise ValidationError() from None

    def to_url(self, value: date) -> str:
        return value.isoformat()


class Rule(routing.Rule):
    """A URL rule whose URL builders are made once per process, however many apps are made.

    werkzeug writes two builder functions for each rule it binds to an app's map, through Python's
    ``ast`` and ``compile``: about half of what making an app costs with this API's rules (and the
    test suite makes an app per test). A builder reads only the rule's parts and, through the
    rule it is called on, its converters, so rules with the same parts share the two functions.
    A rule with a default for one of its variables is written into its builder (werkzeug folds
    it in as text) and is left to werkzeug; none of this API's rules has one.
    """

    _builders: ClassVar[dict] = {}

    def _compile_builder(self, append_unknown: bool = True):
        defaults = self.defaults or {}
        if any(dynamic and part in defaults for dynamic, part in self._trace):
            return super()._compile_builder(append_unknown)
        key = (self.rule, tuple(self._trace), tuple(sorted(defaults)), append_unknown)
        builder = self._builders.get(key)
        if builder is None:
            builder = self._builders[key] = super()._compile_builder(append_unknown)
        return builder


def id_param(name: str) -> str:
    """A path segment for a positive int32 id called ``name``: anything else does not route."""
    low, high = ID_RANGE
    return f"<id(min={low}, max={high}):{name}>"


def init_app(app) -> None:
    """Teach ``app`` the converters; a path with a doubled slash inside it does not route either
    (werkzeug's default redirects it, with an HTML page as body), as one with a trailing slash
    does not: each resource has one path. Before any rule is added (``/openapi.json``'s too)."""
    app.url_rule_class = Rule
    app.url_map.merge_slashes = False
    app.url_map.converters["slug"] = SlugConverter
    app.url_map.converters["id"] = IdConverter
    app.url_map.converters["day"] = DayConverter
    app.url_map.converters["league_code"] = LeagueCodeConverter


#: Each converter's parameter schema in the API description.
CONVERTER_SCHEMAS = {
    IdConverter: lambda converter: {
        "type": "integer",
        "maximum": converter.max,
        "minimum": converter.min,
    },
    SlugConverter: lambda _converter: {"type": "string", "pattern": f"^{SlugConverter.regex}$"},
    DayConverter: lambda _converter: {"type": "string", "format": "date"},
    LeagueCodeConverter: lambda _converter: {
        "type": "string",
        "pattern": f"^{LeagueCodeConverter.regex}$",
    },
}


def document(api) -> None:
    """Teach the API description the converters, when it is written (``ProblemApi.document``):
    flask-smorest's own ``register_converter`` would write the description at once, and would
    keep each converter again for every app the process makes."""

    def register(spec):
        plugin = next(plugin for plugin in spec.plugins if isinstance(plugin, FlaskPlugin))
        for converter, schema in CONVERTER_SCHEMAS.items():
            plugin.register_converter(converter, schema)

    api.document(register)
