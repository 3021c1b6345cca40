"""The layout's one direction of imports (docs/architecture.md), read from the source itself."""

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

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
    """Every module of ``folder``, its subpackages' (the services' wings, the migrations) too."""
    return sorted((ROOT / folder).rglob("*.py"))


def label(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("path", modules("services"), ids=label)
def test_services_know_nothing_of_the_web(path):
    found = roots(imported(path))
    assert not found & (WEB_FRAMEWORK | {"web", "blueprints", "app", "cli"}), found
    # werkzeug's password hashing is the one piece of the web toolkit a service uses.
    assert {name for name in imported(path) if name.startswith("werkzeug")} <= {
        "werkzeug.security",
        "werkzeug.security.check_password_hash",
        "werkzeug.security.generate_password_hash",
    }


@pytest.mark.parametrize("path", modules("engine"), ids=label)
def test_the_engine_is_pure(path):
    """Mathematics only: no framework, no database, nothing of the project but its leaves."""
    found = roots(imported(path))
    forbidden = WEB_FRAMEWORK | {"werkzeug", "marshmallow", "peewee", "playhouse", "psycopg2"}
    assert not found & forbidden, found
    assert found & PROJECT <= {"engine", "enums", "errors"}, found


@pytest.mark.parametrize("path", modules("services/feeds/formats"), ids=label)
def test_the_formats_are_pure(path):
    """Parsers of what the sources send: no framework, no database, nothing of the service but
    the engine and the leaves."""
    found = roots(imported(path))
    forbidden = WEB_FRAMEWORK | {"werkzeug", "marshmallow", "peewee", "playhouse", "psycopg2"}
    assert not found & forbidden, found
    assert found & PROJECT <= {"engine", "enums", "errors", "services"}, found
    reached = {name for name in imported(path) if name.startswith("services")}
    assert all(name.startswith("services.feeds.formats") for name in reached), reached


@pytest.mark.parametrize("leaf", ["enums.py", "errors.py", "clock.py"])
def test_the_leaves_import_nothing_of_the_project(leaf):
    assert not roots(imported(ROOT / leaf)) & PROJECT


def test_the_configuration_imports_the_leaves_and_what_it_checks_settings_against():
    found = {
        name
        for path in modules("config")
        for name in imported(path)
        if name.split(".")[0] in PROJECT and not name.startswith("config")
    }
    leaves = ("enums", "errors", "clock", "services.feeds.formats")
    notes = {"engine.ledger", "engine.ledger.notes"}  # from engine.ledger import notes
    beyond = {
        name
        for name in found
        if name not in notes
        and not any(name == leaf or name.startswith(f"{leaf}.") for leaf in leaves)
    }
    assert beyond == set(), found


def test_enums_import_nothing():
    """A leaf: importing it (and so ``models``) loads no engine, no SciPy."""
    assert imported(ROOT / "enums.py") == set()


@pytest.mark.parametrize(
    "path",
    [*modules("models"), *modules("store")],
    ids=label,
)
def test_storage_knows_no_use_case_and_no_endpoint(path):
    found = roots(imported(path))
    assert not found & (WEB_FRAMEWORK | {"web", "blueprints", "services", "schemas", "app"}), found


@pytest.mark.parametrize("path", modules("store"), ids=label)
def test_the_store_knows_nothing_of_the_models(path):
    """The store lies below the tables (the models import it, never the other way): the data
    version's watch is given the tables' names when it is switched on."""
    assert "models" not in roots(imported(path))


@pytest.mark.parametrize("path", modules("schemas"), ids=label)
def test_schemas_never_reach_down_to_the_data(path):
    """Shapes only: no services, no tables, no queries."""
    found = roots(imported(path))
    assert not found & {"services", "models", "store", "peewee", "web", "blueprints"}, found


#: What importing each layer's modules may load: a check of what they reach indirectly, through
#: another module, which reading their own imports cannot see.
IMPORT_PROBE = """
import importlib.util, sys
FRAMEWORK = {"flask", "flask_jwt_extended", "flask_limiter", "flask_smorest", "webargs", "web",
             "blueprints", "app", "cli"}
for path in sys.argv[1:]:
    name = path[:-3].replace("/", ".").removesuffix(".__init__")
    if "migrations" in name:  # files peewee-migrate loads by path, not importable names
        spec = importlib.util.spec_from_file_location(name.rsplit(".", 1)[-1], path)
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    else:
        importlib.import_module(name)
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in FRAMEWORK)
    if loaded:
        print(f"{path} loads {', '.join(loaded)}")
        break
"""


def test_no_layer_below_the_web_loads_it_indirectly():
    """Importing every module of the services, schemas, engine, models and store (migrations
    included), in a fresh interpreter, loads no web framework and nothing of the request path."""
    paths = []
    for folder in ("engine", "models", "store", "schemas", "services"):
        paths += modules(folder)
    result = subprocess.run(
        [sys.executable, "-c", IMPORT_PROBE, *(label(path) for path in paths)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize("entry", ["app", "worker", "wsgi"])
def test_starting_a_process_loads_no_scipy(entry, tmp_path):
    """SciPy is loaded by the first model fit, not by a web process, the CLI or the worker
    starting (about half of their start-up): see ``engine/model/__init__.py``."""
    probe = f"import sys, {entry}; print(sorted(m for m in sys.modules if m.startswith('scipy')))"
    environment = {
        **os.environ,
        "APP_ENV": "test",
        "JWT_SECRET_KEY": "x" * 48,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'probe.db'}",
    }
    result = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env=environment,
    )
    assert result.returncode == 0, result.stderr
    # (Last: a web process says first that this empty database cannot record its home.)
    assert result.stdout.strip().splitlines()[-1] == "[]"


def engine_names() -> set[str]:
    """The names of the engine's modules and of its wings."""
    names = {path.stem for path in modules("engine")} - {"__init__"}
    return names | {path.parent.name for path in (ROOT / "engine").glob("*/__init__.py")}


def engine_wings() -> list[str]:
    """The engine's wings, top to bottom, as docs/architecture.md's table of them lists them."""
    picture = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = picture.split("## The engine's wings", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([a-z_]+)/` \|", section, flags=re.MULTILINE)


def test_the_engine_wings_are_in_the_picture():
    """Every wing of the engine is listed in the document's table of them, and nothing else."""
    wings = sorted(path.parent.name for path in (ROOT / "engine").glob("*/__init__.py"))
    assert sorted(engine_wings()) == wings


@pytest.mark.parametrize("path", modules("engine"), ids=label)
def test_the_engine_wings_point_one_way(path):
    """A wing imports only the wings listed below it in docs/architecture.md; the modules every
    wing shares, at the engine's root, import no wing."""
    wings = engine_wings()
    parts = path.relative_to(ROOT / "engine").parts
    own = parts[0] if len(parts) > 1 else None
    below = set(wings[wings.index(own) + 1 :]) if own else set()
    found = {
        name.split(".")[1]
        for name in imported(path)
        if name.startswith("engine.") and name.split(".")[1] in wings
    }
    assert found - {own} <= below, found - {own} - below


def test_the_services_live_in_wings_named_apart_from_the_engine():
    """``services/`` holds wings (subpackages by the use cases they serve) and the two pieces
    every wing shares (``queries``, ``routes``); no service module repeats the name of an engine
    module or wing, so neither is ever imported under an alias."""
    flat = {path.stem for path in (ROOT / "services").glob("*.py")} - {"__init__"}
    assert flat == {"queries", "routes"}
    names = {path.stem for path in modules("services")} - {"__init__"}
    assert not names & engine_names(), names & engine_names()
    wings = {path.name for path in (ROOT / "services").iterdir() if (path / "__init__.py").exists()}
    assert sorted(wings) == sorted(wing_order())


def wing_order() -> list[str]:
    """The services' wings, top to bottom, as the table of ``docs/architecture.md`` lists them:
    the one place their order is written."""
    picture = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = picture.split("\n## The services' wings\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `(\w+)/` \|", section, flags=re.MULTILINE)


def wing_of(name: str) -> str | None:
    """The wing a dotted module name (``services.<wing>.…``) belongs to, None outside them."""
    parts = name.split(".")
    if len(parts) > 1 and parts[0] == "services" and parts[1] in wing_order():
        return parts[1]
    return None


def climbs(path: Path) -> list[str]:
    """The wings ``path`` (a module of ``services/``) imports that the table lists above its
    own wing (for ``queries`` and ``routes``, which every wing shares: any wing)."""
    order = wing_order()
    own = wing_of(".".join(path.relative_to(ROOT).with_suffix("").parts))
    ceiling = order.index(own) if own else len(order)
    wings = {wing_of(name) for name in imported(path)} - {None}
    return sorted(wing for wing in wings if order.index(wing) < ceiling)


@pytest.mark.parametrize("path", modules("services"), ids=label)
def test_a_wing_imports_only_the_wings_below_it(path):
    """The wings point one way, down the table of ``docs/architecture.md``: a module imports
    its own wing and those listed below it, never one above."""
    assert climbs(path) == []


def wing_rows() -> dict[str, str]:
    """Each wing's row of the services' table in ``docs/architecture.md``: its modules' cell."""
    picture = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = picture.split("\n## The services' wings\n", 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"^\| `(\w+)/` \| ([^|]+) \|", section, flags=re.MULTILINE))


@pytest.mark.parametrize("wing", wing_order())
def test_each_wing_row_names_every_module_of_its_wing(wing):
    """The table says what each wing holds, every module of it (a subpackage's by its name)."""
    folder = ROOT / "services" / wing
    names = {path.stem for path in folder.glob("*.py")} - {"__init__"}
    names |= {path.name for path in folder.iterdir() if (path / "__init__.py").exists()}
    row = wing_rows()[wing]
    assert sorted(name for name in names if f"`{name}" not in row) == []


def test_the_wings_table_lists_each_wing_once():
    order = wing_order()
    assert order
    assert len(order) == len(set(order)), order


def test_the_links_services_write_route_to_their_endpoints(app):
    """Each path ``services.routes`` writes is one the app routes, to the view it means."""
    from services import routes

    adapter = app.url_map.bind("localhost")
    expected = {
        routes.match(7): "picks.MatchById",
        routes.seo_prediction("a-vs-b-2026-11-24"): "seo.PredictionPage",
        routes.webhook(3): "webhooks.EndpointById",
        routes.operation(5): "ops.OperationById",
        routes.DATA_MATCHES: "data.Matches",
        routes.DATA_TRACK_RECORD: "data.TrackRecord",
        routes.league_calendar("SP1"): "calendars.LeagueCalendar",
        routes.CHOSEN_CALENDAR: "calendars.ChosenCalendar",
        routes.CALENDAR_TOKEN: "calendars.CalendarToken",
    }
    assert {path: adapter.match(path)[0] for path in expected} == expected


def test_every_module_is_in_the_picture():
    """The architecture document names every top-level module and package of the project."""
    picture = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    places = [path for path in ROOT.glob("*.py") if path.name not in ("gunicorn.conf.py",)]
    places += [path for path in ROOT.iterdir() if (path / "__init__.py").exists()]
    missing = [path.name for path in places if f"`{path.name}" not in picture]
    missing = [name for name in missing if name not in ("tests",)]
    assert missing == []


def project_sources() -> list[Path]:
    """Every Python file of the project: the service, its tests, benchmarks, tools and CI."""
    skipped = {".git", ".venv", ".ruff_cache", "__pycache__", "instance"}
    return sorted(
        path for path in ROOT.rglob("*.py") if not set(path.relative_to(ROOT).parts) & skipped
    )


def project_roots() -> set[str]:
    """The first dotted names under which the project's modules are imported."""
    return {path.stem for path in ROOT.glob("*.py")} | {
        path.name for path in ROOT.iterdir() if path.is_dir() and not path.name.startswith(".")
    }


def aliased_imports(source: str, roots: set[str]) -> list[str]:
    """The imports in ``source`` that bind a module or name of the project (first dotted name in
    ``roots``, or a relative import) under another name, as written."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [
                f"import {alias.name} as {alias.asname}"
                for alias in node.names
                if alias.asname and alias.name.split(".")[0] in roots
            ]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level or module.split(".")[0] in roots:
                found += [
                    f"from {'.' * node.level}{module} import {alias.name} as {alias.asname}"
                    for alias in node.names
                    if alias.asname
                ]
    return found


def test_nothing_of_the_project_is_imported_under_an_alias():
    """A module of the project, or a name from one, is imported under its own name: a clash is
    resolved by renaming the local name or importing the names needed, so each thing has one
    name wherever it is read. Third-party conventions (``numpy as np``) are fine."""
    roots = project_roots()
    found = {
        label(path): aliased
        for path in project_sources()
        if (aliased := aliased_imports(path.read_text(encoding="utf-8"), roots))
    }
    assert found == {}


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            "from engine.betting import odds as odds_engine",
            ["from engine.betting import odds as odds_engine"],
        ),
        ("import worker as worker_module", ["import worker as worker_module"]),
        ("from . import helpers as h", ["from . import helpers as h"]),
        (
            "from tests.data import FOOTBALL_DATA as DATA",
            ["from tests.data import FOOTBALL_DATA as DATA"],
        ),
        ("import numpy as np", []),
        ("from huey import consumer as huey_consumer", []),
        ("from engine.betting import odds", []),
    ],
)
def test_the_alias_check_sees_every_spelling(source, expected):
    assert aliased_imports(source, {"engine", "worker", "tests"}) == expected


#: The folders of ``tests/`` grouping test modules by wing (packages: ``tests.feeds.test_sync``).
TEST_FOLDERS = {path.parent.name for path in (ROOT / "tests").glob("*/__init__.py")}


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
        if parts[0] == "tests" and len(parts) > 1:
            # tests.<module> or tests.<folder>.<module>; what follows is a name in the module
            module = parts[2] if parts[1] in TEST_FOLDERS and len(parts) > 2 else parts[1]
        else:
            module = parts[0]
        if module.startswith("test_") or module == "conftest":
            found.add(module)
    return found


test_modules_imported.__test__ = False  # a helper, whatever its name says


def test_no_test_module_imports_another():
    """What test modules share lives in ``tests/helpers.py`` (or ``factories``, ``asserts``):
    importing a test module or ``conftest`` runs it again under another name, and its tests
    and fixtures come along."""
    found = {}
    for path in sorted((ROOT / "tests").rglob("*.py")):
        imports = test_modules_imported(path.read_text(encoding="utf-8"))
        if imports:
            found[label(path)] = sorted(imports)
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
        ("from tests.feeds.test_sync import KEY", {"test_sync"}),
        ("from tests.feeds import test_sync", {"test_sync"}),
        ("from tests.helpers import test_database_url", set()),
        ("from tests import factories, helpers", set()),
    ],
)
def test_the_import_check_sees_every_spelling(source, expected):
    assert test_modules_imported(source) == expected


def test_every_test_module_sits_in_the_folder_of_what_it_tests():
    """``tests/`` holds what the suite shares; each test module lives in a folder named after the
    wing or layer it tests (``tests/feeds/``, ``tests/web/``, ...)."""
    assert sorted(path.name for path in (ROOT / "tests").glob("test_*.py")) == []
    assert TEST_FOLDERS, "no folder of test modules found"
