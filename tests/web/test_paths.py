"""The URL rules: each builds what werkzeug's own rule builds, with builders made once per
process (``web.paths.Rule``)."""

from datetime import date

from werkzeug import routing

from web import paths

#: A value of each converter's kind, for building a URL.
SAMPLES = {
    paths.IdConverter: 7,
    paths.SlugConverter: "arsenal-v-chelsea",
    paths.DayConverter: date(2026, 11, 24),
    paths.LeagueCodeConverter: "E0",
    routing.UnicodeConverter: "a b/é",
    routing.PathConverter: "docs/a b.md",
}


def werkzeugs_own(app) -> routing.Map:
    """A map of werkzeug's own rules, as ``app``'s map is set up."""
    plain = routing.Map(merge_slashes=False, converters=app.url_map.converters)
    for rule in app.url_map.iter_rules():
        plain.add(
            routing.Rule(
                rule.rule, endpoint=rule.endpoint, defaults=rule.defaults, methods=rule.methods
            )
        )
    return plain


def test_every_rule_builds_what_werkzeugs_own_rule_builds(app):
    rules = list(app.url_map.iter_rules())
    assert len(rules) > 50 and all(isinstance(rule, paths.Rule) for rule in rules[1:])
    plain = {rule.endpoint: rule for rule in werkzeugs_own(app).iter_rules()}
    for rule in rules:
        values = {name: SAMPLES[type(converter)] for name, converter in rule._converters.items()}
        own = plain[rule.endpoint]
        assert rule.build(values) == own.build(values), rule.rule
        asked = {**values, "page": 2, "q": "x&y"}  # unknown values go into the query string
        assert rule.build(asked, append_unknown=True) == own.build(asked, append_unknown=True)
        assert rule.build(asked, append_unknown=False) == own.build(asked, append_unknown=False)


def test_apps_share_their_rules_builders(make_app):
    first, second = make_app(), make_app()
    rules = {rule.endpoint: rule for rule in first.url_map.iter_rules()}
    shared = [
        rule
        for rule in second.url_map.iter_rules()
        if isinstance(rule, paths.Rule)
        and rules[rule.endpoint]._build.__func__ is rule._build.__func__
    ]
    assert len(shared) == len(rules) - 1  # all but Flask's static route, made before ours


def test_a_rule_with_a_default_for_its_variable_is_built_by_werkzeug():
    """werkzeug writes such a default into the builder as text: two rules with the same parts
    and different defaults build different URLs."""
    mapping = routing.Map(merge_slashes=False)
    for endpoint, default in (("first", "one"), ("second", "two")):
        mapping.add(paths.Rule("/kinds/<kind>", endpoint=endpoint, defaults={"kind": default}))
    adapter = mapping.bind("example.org")
    assert adapter.build("first") == "/kinds/one"
    assert adapter.build("second") == "/kinds/two"
