"""Templates compiled once per process, whatever the number of apps (``web.html``)."""

import jinja2

from web import html


def render(source: str, compiled: html.CompiledTemplates) -> str:
    """Render the template "page.html" holding ``source`` in a new environment sharing
    ``compiled``, as each new app shares the process's."""
    environment = jinja2.Environment(
        loader=jinja2.DictLoader({"page.html": source}), bytecode_cache=compiled
    )
    return environment.get_template("page.html").render(name="world")


def test_a_template_is_compiled_once_for_every_app_and_again_when_it_changes(monkeypatch):
    compiled = []
    real = jinja2.Environment.compile
    monkeypatch.setattr(
        jinja2.Environment,
        "compile",
        lambda self, source, *args, **kwargs: (
            compiled.append(source) or real(self, source, *args, **kwargs)
        ),
    )
    shared = html.CompiledTemplates()
    first = "Hello {{ name }}"
    assert render(first, shared) == render(first, shared) == "Hello world"
    assert compiled == [first]
    changed = "Goodbye {{ name }}"
    assert render(changed, shared) == "Goodbye world"  # the same name, a new source
    assert compiled == [first, changed]


def test_every_app_shares_the_compiled_templates(make_app):
    first, second = make_app(), make_app()
    assert first.jinja_env.bytecode_cache is second.jinja_env.bytecode_cache
    assert first.jinja_env.bytecode_cache is html.COMPILED_TEMPLATES
