"""The documents hold to the code: every setting with its default, every command, every route the
tours call, every relative link; and the README stays a front door."""

import ast
import re
import unicodedata
from pathlib import Path

import pytest
from werkzeug.exceptions import HTTPException

import config

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
#: The documents whose relative links are checked here (mkdocs checks docs/ again, in CI).
DOCUMENTS = [README, ROOT / "CHANGELOG.md", *sorted(DOCS.glob("*.md"))]

FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
ROW = re.compile(r"^\|\s*`([A-Z][A-Z0-9_]*)`\s*\|([^|]*)\|", re.MULTILINE)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def section(text: str, title: str) -> str:
    """The text under the level-2 heading starting with ``title``, up to the next one."""
    match = re.search(
        rf"^## {re.escape(title)}.*?$(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL
    )
    assert match, f"no section {title!r}"
    return match.group(1)


def table(text: str) -> dict[str, str]:
    """``{variable: default cell}`` of the table rows in ``text`` that start with a variable."""
    rows = ROW.findall(text)
    names = [name for name, _ in rows]
    assert len(names) == len(set(names)), "a variable listed twice"
    return {name: cell.strip() for name, cell in rows}


def first_literal(cell: str) -> str | None:
    """The first code span of a table cell: the default as it is written."""
    match = re.search(r"`([^`]*)`", cell)
    return match.group(1) if match else None


def environment_reads(path: Path) -> dict[str, object]:
    """``{name: default or None}`` of every variable ``path`` reads by a literal name:
    ``environ["X"]``, ``environ.get("X", default)``, ``getenv("X")``."""
    found = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Subscript) and _is_environ(node.value):
            key = node.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                found[key.value] = None
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            reads = (
                node.func.attr in ("get", "pop", "setdefault") and _is_environ(node.func.value)
            ) or (node.func.attr == "getenv")
            if reads and node.args and isinstance(node.args[0], ast.Constant):
                default = node.args[1] if len(node.args) > 1 else None
                found[node.args[0].value] = (
                    default.value if isinstance(default, ast.Constant) else None
                )
    return found


def _is_environ(node) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "environ") or (
        isinstance(node, ast.Name) and node.id == "environ"
    )


def slug(heading: str) -> str:
    """A heading's anchor as mkdocs (Python-Markdown's toc) writes it, code spans and links
    read as their text."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(path: Path) -> set[str]:
    """The anchors of a markdown file's headings (code blocks' ``#`` lines are not headings)."""
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return {slug(title) for title in re.findall(r"^#{1,6} (.+?)\s*$", text, re.MULTILINE)}


def shell_blocks(path: Path) -> list[str]:
    """The ``sh`` code blocks of a document, continuation lines joined."""
    text = path.read_text(encoding="utf-8")
    blocks = re.findall(r"^```sh\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    return [block.replace("\\\n", " ") for block in blocks]


# Configuration


def test_every_setting_config_reads_is_documented_and_nothing_else():
    documented = table(section((DOCS / "configuration.md").read_text(), "Settings"))
    read = set(config.DEFAULTS)
    for path in sorted((ROOT / "config").glob("*.py")):
        read |= set(environment_reads(path))
    assert sorted(read - set(documented)) == [], "read by config/, missing from the document"
    assert sorted(set(documented) - read) == [], "in the document, read by nothing in config/"


def test_every_documented_default_is_the_one_config_applies():
    documented = table(section((DOCS / "configuration.md").read_text(), "Settings"))
    wrong = {}
    for name, default in config.DEFAULTS.items():
        if default in (None, ""):
            continue  # none, or made at startup (a file, a generated key): said in words
        written = first_literal(documented.get(name, ""))
        if written is None:
            wrong[name] = (default, None)
            continue
        if isinstance(default, bool):
            same = config.as_bool(written) == default
        elif isinstance(default, int | float):
            same = float(written) == default
        else:
            same = written == default
        if not same:
            wrong[name] = (default, written)
    assert wrong == {}


def test_every_variable_gunicorn_reads_is_documented_with_its_default():
    documented = table(section((DOCS / "configuration.md").read_text(), "Serving"))
    reads = environment_reads(ROOT / "gunicorn.conf.py")
    # A default of "" is none: said in words, as in the settings' tables.
    own = {name: default or None for name, default in reads.items() if name not in config.DEFAULTS}
    assert sorted(own) == sorted(documented)
    assert {name: first_literal(documented[name]) for name in own} == own


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('os.environ.get("A", "1")', {"A": "1"}),
        ('os.environ["B"]', {"B": None}),
        ('environ.get("C")', {"C": None}),
        ('os.getenv("D", "x")', {"D": "x"}),
        ('settings.get("E")', {}),
    ],
)
def test_the_environment_reader_sees_every_spelling(tmp_path, source, expected):
    path = tmp_path / "module.py"
    path.write_text(f"import os\nfrom os import environ\nvalue = {source}\n")
    assert environment_reads(path) == expected


# The command line and the tours


def test_every_command_is_listed_and_every_listed_command_exists(app):
    text = section((DOCS / "operations.md").read_text(), "The command line")
    listed = {" ".join(words) for words in re.findall(r"flask --app app ([\w-]+) ([\w-]+)", text)}
    commands = set()
    for name, command in app.cli.commands.items():
        subcommands = getattr(command, "commands", None)
        commands |= {f"{name} {sub}" for sub in subcommands} if subcommands else {name}
    assert sorted(commands - listed) == [], "commands the document leaves out"
    assert sorted(listed - commands) == [], "listed commands that do not exist"


#: Values for the tours' shell variables in a path: an id and a slug of the routes' own shapes.
TOUR_VALUES = {"MATCH": "1", "OP": "1", "USER_ID": "1", "SLUG": "home-vs-away-2026-11-24"}


@pytest.mark.parametrize("document", [README, DOCS / "api-guide.md"], ids=lambda path: path.name)
def test_every_path_the_tours_call_is_a_route(app, document):
    adapter = app.url_map.bind("localhost")
    calls = []
    for block in shell_blocks(document):
        for line in block.splitlines():
            for path in re.findall(r"\$BASE(/[^\s\"'?]*)", line):
                for name, value in TOUR_VALUES.items():
                    path = path.replace(f"${name}", value)
                named = re.search(r"-X ([A-Z]+)", line)
                method = named[1] if named else "POST" if re.search(r"\s-d\s", line) else "GET"
                calls.append((method, path))
    assert len(calls) >= 8
    missing = []
    for method, path in calls:
        try:
            adapter.match(path, method=method)
        except HTTPException:  # NotFound, MethodNotAllowed, RequestRedirect
            missing.append((method, path))
    assert missing == []


# Links and the front door


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.relative_to(ROOT).as_posix())
def test_every_relative_link_finds_its_file_and_heading(document):
    text = re.sub(r"`[^`\n]*`", "", FENCE.sub("", document.read_text(encoding="utf-8")))
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z][a-z+.-]*:", target):
            continue  # https:, mailto: — not this repository's
        path, _, anchor = target.partition("#")
        linked = (document.parent / path).resolve() if path else document
        missing_heading = anchor and linked.suffix == ".md" and anchor not in anchors(linked)
        if not linked.exists() or missing_heading:
            broken.append(target)
    assert broken == []


def test_anchors_are_read_as_mkdocs_writes_them(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Page\n\n## Secrets (`config.py`)\n\n```sh\n# not a heading\n```\n")
    assert anchors(page) == {"page", "secrets-configpy"}
    assert "not-a-heading" not in anchors(page)


def test_the_readme_is_a_front_door():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    first_block = shell_blocks(README)[0]
    assert re.search(r"^make run\b", first_block, re.MULTILINE)
    assert re.search(r"^make test\b", first_block, re.MULTILINE)
    assert text.index("make run") < text.index("\n## ")  # before anything else
    images = [target for target in LINK.findall(text) if target.endswith(".png")]
    assert images
    for image in images:
        assert (ROOT / image).stat().st_size < 200 * 1024, image
    for document in DOCS.glob("*.md"):
        if document.name == "index.md":
            continue  # the site's own home: the README is the repository's
        assert f"docs/{document.name}" in text, f"the README's map leaves out {document.name}"
