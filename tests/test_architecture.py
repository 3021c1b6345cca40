"""The layout's one direction of imports (docs/architecture.md), read from the source itself."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Top-level packages and modules of the project (a module's first dotted name).
PROJECT = {
    "app",
    "bench",
    "blueprints",
    "cli",
    "clock",
    "config",
    "engine",
    "enums",
    "errors",
    "models",
    "schemas",
    "services",
    "store",
    "web",
    "wsgi",
}
WEB_FRAMEWORK = {"flask", "flask_jwt_extended", "flask_limiter", "flask_smorest", "webargs"}


def imported(path: Path) -> set[str]:
    """Every module ``path`` imports, anywhere in it, as dotted names."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def roots(names) -> set[str]:
    return {name.split(".")[0] for name in names}


def modules(folder: str) -> list[Path]:
    return sorted((ROOT / folder).glob("*.py"))


@pytest.mark.parametrize("path", modules("services"), ids=lambda path: path.name)
def test_services_know_nothing_of_the_web(path):
    found = roots(imported(path))
    assert not found & (WEB_FRAMEWORK | {"web", "blueprints", "app", "cli"}), found
    # werkzeug's password hashing is the one piece of the web toolkit a service uses.
    assert {name for name in imported(path) if name.startswith("werkzeug")} <= {
        "werkzeug.security",
        "werkzeug.security.check_password_hash",
        "werkzeug.security.generate_password_hash",
    }


@pytest.mark.parametrize("path", modules("engine"), ids=lambda path: path.name)
def test_the_engine_is_pure(path):
    """Mathematics only: no framework, no database, nothing of the project but its leaves."""
    found = roots(imported(path))
    forbidden = WEB_FRAMEWORK | {"werkzeug", "marshmallow", "peewee", "playhouse", "psycopg2"}
    assert not found & forbidden, found
    assert found & PROJECT <= {"engine", "enums", "errors"}, found


def test_enums_import_nothing():
    """A leaf: importing it (and so ``models``) loads no engine, no SciPy."""
    assert imported(ROOT / "enums.py") == set()


@pytest.mark.parametrize(
    "path",
    [ROOT / "models.py", *modules("store")],
    ids=lambda path: path.name,
)
def test_storage_knows_no_use_case_and_no_endpoint(path):
    found = roots(imported(path))
    assert not found & (WEB_FRAMEWORK | {"web", "blueprints", "services", "schemas", "app"}), found


@pytest.mark.parametrize("path", modules("schemas"), ids=lambda path: path.name)
def test_schemas_never_reach_down_to_the_data(path):
    """Shapes only: no services, no tables, no queries."""
    found = roots(imported(path))
    assert not found & {"services", "models", "store", "peewee", "web", "blueprints"}, found


def test_every_module_is_in_the_picture():
    """The architecture document names every top-level module and package of the project."""
    picture = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    places = [path for path in ROOT.glob("*.py") if path.name not in ("gunicorn.conf.py",)]
    places += [path for path in ROOT.iterdir() if (path / "__init__.py").exists()]
    missing = [path.name for path in places if f"`{path.name}" not in picture]
    missing = [name for name in missing if name not in ("tests",)]
    assert missing == []


def test_modules_imported(source: str) -> set[str]:
    """The test modules (``test_*``) and ``conftest`` that ``source`` (a module of ``tests/``)
    imports, however it spells the import."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:  # relative: from within tests/
                module = f"tests.{module}".rstrip(".")
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    found = set()
    for name in names:
        parts = name.split(".")
        module = parts[1] if parts[0] == "tests" and len(parts) > 1 else parts[0]
        if module.startswith("test_") or module == "conftest":
            found.add(module)
    return found


test_modules_imported.__test__ = False  # a helper, whatever its name says


def test_no_test_module_imports_another():
    """What test modules share lives in ``tests/helpers.py`` (or ``factories``, ``asserts``):
    importing a test module or ``conftest`` runs it again under another name, and its tests
    and fixtures come along."""
    found = {}
    for path in sorted((ROOT / "tests").glob("*.py")):
        imports = test_modules_imported(path.read_text(encoding="utf-8"))
        if imports:
            found[path.name] = sorted(imports)
    assert found == {}


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from tests.test_cards import counted_queries", {"test_cards"}),
        ("from tests import asserts, test_cards", {"test_cards"}),
        ("import tests.test_cards", {"test_cards"}),
        ("from tests.conftest import settings", {"conftest"}),
        ("from .test_cards import counted_queries", {"test_cards"}),
        ("from . import conftest", {"conftest"}),
        ("from tests.helpers import test_database_url", set()),
        ("from tests import factories, helpers", set()),
    ],
)
def test_the_import_check_sees_every_spelling(source, expected):
    assert test_modules_imported(source) == expected
