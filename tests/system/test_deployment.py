"""A deployment that explains itself: with APP_ENV=production, a secret missing or too weak stops
the release step, gunicorn and the worker in one line naming it and the command that makes it,
exit status 1, never a traceback; the ledger's key is made with no configuration at all;
``make run`` serves a database of imported leagues as it is; requirements.txt matches
setup.cfg."""

import configparser
import os
import pty
import re
import select
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engine.ledger import notes
from models import League, Match
from tests import factories
from tests.helpers import LEDGER_KEY, SECRET, WEBHOOK_KEY
from tests.servers import ROOT, free_port

BIN = Path(sys.executable).parent

#: The production entry points, as the Procfile runs them: release, web, worker.
RELEASE = [str(BIN / "flask"), "--app", "app", "db", "upgrade"]
WEB = [str(BIN / "gunicorn"), "--config", "gunicorn.conf.py", "wsgi:app"]
WORKER = [sys.executable, "-m", "worker"]

#: How each secret is made, as the line says it.
MAKES = {
    "JWT_SECRET_KEY": "python -c",
    "LEDGER_SIGNING_KEY": "flask --app app ledger new-key",
    "WEBHOOK_SECRETS_KEY": "Fernet.generate_key()",
}

#: Secrets refused: (environment given, the variables the line must name).
REFUSED = {
    "jwt-missing": ({"JWT_SECRET_KEY": ""}, ["JWT_SECRET_KEY"]),
    "jwt-too-short": ({"JWT_SECRET_KEY": "k" * 31}, ["JWT_SECRET_KEY"]),
    "ledger-missing": ({"LEDGER_SIGNING_KEY": ""}, ["LEDGER_SIGNING_KEY"]),
    "ledger-not-a-key": ({"LEDGER_SIGNING_KEY": "s" * 40}, ["LEDGER_SIGNING_KEY"]),
    "both-missing": (
        {"JWT_SECRET_KEY": "", "LEDGER_SIGNING_KEY": ""},
        ["JWT_SECRET_KEY", "LEDGER_SIGNING_KEY"],
    ),
    "webhook-key-missing": ({"WEBHOOK_SECRETS_KEY": ""}, ["WEBHOOK_SECRETS_KEY"]),
    "webhook-key-not-a-key": ({"WEBHOOK_SECRETS_KEY": "s" * 44}, ["WEBHOOK_SECRETS_KEY"]),
}


#: A secret the line names as missing, and the command it says makes one.
MADE_WITH = r"(\w+) must be set[^;]*make one with: (.+?)\)(?:; |$)"


def production(tmp_path, **given) -> dict:
    """A production environment on a temp SQLite file, good secrets unless ``given`` replaces
    them. Nothing else of the caller's environment comes in, and a secret left out is set empty,
    so a developer's own .env cannot fill it in."""
    return {
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
        "APP_ENV": "production",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'app.db'}",
        "JWT_SECRET_KEY": SECRET,
        "LEDGER_SIGNING_KEY": LEDGER_KEY,
        "WEBHOOK_SECRETS_KEY": WEBHOOK_KEY,
        "HOST": "127.0.0.1",
        "PORT": str(free_port()),
        **given,
    }


def run(command, env, timeout=60) -> subprocess.CompletedProcess:
    """``command`` from the project's folder, its output captured."""
    return subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def assert_one_line(done, variables) -> str:
    """Exit status 1 and one line on stderr naming each of ``variables`` and how to make it."""
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    lines = done.stderr.splitlines()
    assert done.returncode == 1 and len(lines) == 1, (done.returncode, done.stderr)
    (line,) = lines
    assert line.startswith("Error: "), line
    for variable in variables:
        assert variable in line and MAKES[variable] in line, line
    for variable in set(MAKES) - set(variables):
        assert variable not in line, line
    return line


def slow_unless(case, *fast):
    """``case`` as a parameter, marked slow unless it is one of ``fast``."""
    return pytest.param(case, id=case, marks=() if case in fast else pytest.mark.slow)


@pytest.mark.parametrize("case", [slow_unless(case, "both-missing") for case in REFUSED])
def test_the_release_step_refuses_in_one_line(tmp_path, case):
    given, variables = REFUSED[case]
    assert_one_line(run(RELEASE, production(tmp_path, **given)), variables)
    assert not (tmp_path / "app.db").exists()  # refused before it touched the database


@pytest.mark.parametrize("case", list(REFUSED))
def test_gunicorn_refuses_in_one_line_before_it_listens(tmp_path, case):
    given, variables = REFUSED[case]
    assert_one_line(run(WEB, production(tmp_path, **given)), variables)


@pytest.mark.parametrize("case", [slow_unless(case, "both-missing") for case in REFUSED])
def test_the_worker_refuses_in_one_line(tmp_path, case):
    given, variables = REFUSED[case]
    assert_one_line(run(WORKER, production(tmp_path, **given)), variables)


@pytest.mark.slow
def test_a_gunicorn_worker_meeting_a_refusal_stops_the_server_instead_of_restarting(tmp_path):
    """A refusal the master did not see (a value given with -e) is said once by the worker,
    whose exit status makes gunicorn stop rather than start it again and again."""
    env = production(tmp_path, JWT_SECRET_KEY="")
    done = run([*WEB[:-1], "-e", "LOG_LEVEL=INFO", WEB[-1]], env)
    assert "Traceback" not in done.stderr, done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("Error: ")]
    assert len(said) == 1 and "JWT_SECRET_KEY" in said[0], done.stderr
    assert done.returncode == 4 and "App failed to load" in done.stderr


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(["ledger", "key"], id="ledger-key"),
        pytest.param(["routes"], id="routes", marks=pytest.mark.slow),
    ],
)
def test_other_commands_say_the_refusal_too(tmp_path, command):
    env = production(tmp_path, JWT_SECRET_KEY="", LEDGER_SIGNING_KEY="")
    done = run([str(BIN / "flask"), "--app", "app", *command], env)
    assert_one_line(done, ["JWT_SECRET_KEY", "LEDGER_SIGNING_KEY"])


def test_the_commands_the_line_names_make_secrets_production_accepts(tmp_path):
    """Run in production with no secret at all: ``ledger new-key`` needs none."""
    missing = dict.fromkeys(MAKES, "")
    env = production(tmp_path, **missing, PUBLIC_BASE_URL="https://picks.example")
    line = assert_one_line(run(WEB, env), list(MAKES))
    made = {}
    for variable, command in re.findall(MADE_WITH, line):
        done = run(["bash", "-c", command], env)
        assert done.returncode == 0 and done.stderr == "", done.stderr
        made[variable] = done.stdout.strip()  # the secret alone, when captured
    assert set(made) == set(MAKES)
    assert notes.parse_signing_key(made["LEDGER_SIGNING_KEY"]).name == "picks.example/ledger"
    done = run([sys.executable, "-m", "config"], {**env, **made})
    assert done.returncode == 0 and "configuration accepted" in done.stdout, done.stderr


@pytest.mark.slow
def test_a_new_ledger_key_is_named_after_the_public_host_by_default(tmp_path):
    env = production(
        tmp_path, JWT_SECRET_KEY="", LEDGER_SIGNING_KEY="", PUBLIC_BASE_URL="https://picks.example"
    )
    done = run([str(BIN / "flask"), "--app", "app", "ledger", "new-key"], env)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert notes.parse_signing_key(done.stdout.strip()).name == "picks.example/ledger"


@pytest.mark.slow
def test_a_new_ledger_key_on_a_terminal_says_how_to_set_it(tmp_path):
    env = production(tmp_path, JWT_SECRET_KEY="", LEDGER_SIGNING_KEY="")
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [str(BIN / "flask"), "--app", "app", "ledger", "new-key", "picks.example/ledger"],
        cwd=ROOT,
        env=env,
        stdout=follower,
        stderr=subprocess.PIPE,
        text=True,
    )
    os.close(follower)
    shown = b""
    while select.select([leader], [], [], 60)[0]:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # EIO: the command closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    stderr = process.communicate(timeout=60)[1]
    assert process.returncode == 0, stderr
    assert notes.parse_signing_key(shown.decode().strip()).name == "picks.example/ledger"
    assert "LEDGER_SIGNING_KEY" in stderr and "flask --app app ledger key" in stderr


def run_recipe() -> list[list[str]]:
    """The ``$(FLASK)`` commands of the Makefile's ``run`` recipe, after ``flask --app app``."""
    makefile = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^run:.*\n((?:\t.*\n)+)", makefile, re.MULTILINE).group(1)
    lines = [line.strip() for line in recipe.splitlines()]
    return [line.split()[1:] for line in lines if line.startswith("$(FLASK)")]


def test_make_run_serves_a_database_of_imported_leagues_as_it_is(app):
    with app.app_context():
        factories.match(league=("E0", "Premier League", "England", "top-flight"))
        before = list(Match.select().tuples())
    runner = app.test_cli_runner()
    outputs = []
    for args in run_recipe():
        done = runner.invoke(args=args)
        assert done.exit_code == 0, done.output
        outputs.append(done.output)
    assert "1 imported league (E0): served as it is" in outputs[-1]
    with app.app_context():
        assert [league.code for league in League.select()] == ["E0"]
        assert list(Match.select().tuples()) == before


def test_the_demo_is_built_if_empty_or_rebuilt_not_both(app):
    done = app.test_cli_runner().invoke(args=["data", "demo", "--rebuild", "--if-empty"])
    assert done.exit_code == 2 and "do not go together" in done.output


# requirements.txt against setup.cfg


def requirements_copy(tmp_path) -> Path:
    """The three files the check reads, copied to a folder of their own."""
    for name in ("setup.cfg", "requirements.txt", ".python-version"):
        shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


def check_requirements(folder) -> subprocess.CompletedProcess:
    return run([sys.executable, str(ROOT / "tools" / "check_requirements.py"), str(folder)], None)


def edit(path: Path, pattern: str, replacement: str) -> None:
    text = path.read_text()
    changed = re.sub(pattern, replacement, text, count=1, flags=re.MULTILINE)
    assert changed != text, pattern
    path.write_text(changed)


def test_requirements_match_setup_cfg_and_ci_checks_them():
    done = check_requirements(ROOT)
    assert done.returncode == 0 and "requirements.txt matches setup.cfg" in done.stdout, done.stderr
    assert (ROOT / ".python-version").read_text().strip() == "3.11"
    assert "make requirements" in (ROOT / "requirements.txt").read_text()
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^check-requirements:.*\n\t.*tools/check_requirements.py", makefile, re.M)
    assert "make check-requirements" in (ROOT / ".ci" / "run").read_text()


@pytest.mark.parametrize(
    ("doctor", "said"),
    [
        pytest.param(
            ("setup.cfg", r"^(\s+)gunicorn\b.*$", r"\g<0>\n\1requests>=2,<3"),
            "setup.cfg requires requests>=2,<3, which requirements.txt lacks",
            id="dependency-added",
        ),
        pytest.param(
            ("setup.cfg", r"^\s+gunicorn\b.*\n", ""),
            "requirements.txt pins gunicorn for setup.cfg, which no longer requires it",
            id="dependency-removed",
        ),
        pytest.param(
            ("setup.cfg", r"^(\s+)gunicorn\b.*$", r"\1gunicorn>=1000"),
            "outside setup.cfg's gunicorn>=1000",
            id="range-moved-past-the-pin",
        ),
        pytest.param(
            ("requirements.txt", r"^gunicorn==.*$", "gunicorn==1.0"),
            "requirements.txt pins gunicorn==1.0, outside setup.cfg's",
            id="pin-outside-the-range",
        ),
        pytest.param(
            ("requirements.txt", r"^gunicorn==.*$", "gunicorn>=1"),
            "gunicorn>=1 is not pinned exactly",
            id="pin-loosened",
        ),
        pytest.param(
            ("requirements.txt", r"^\.$", ""),
            "does not install sports-pick-service itself",
            id="service-left-out",
        ),
        pytest.param(
            (".python-version", r"^3\.11$", "3.12"),
            "resolved for Python 3.11, .python-version says 3.12",
            id="another-python",
        ),
    ],
)
def test_the_requirements_check_fails_on_a_doctored_copy(tmp_path, doctor, said):
    folder = requirements_copy(tmp_path)
    assert check_requirements(folder).returncode == 0
    name, pattern, replacement = doctor
    edit(folder / name, pattern, replacement)
    done = check_requirements(folder)
    assert done.returncode == 1, done.stdout
    assert said in done.stderr, done.stderr
    assert "run `make requirements`" in done.stderr.splitlines()[-1]


def test_an_install_carries_every_module_the_service_imports():
    """A non-editable install (``pip install .``, as a platform builds it) holds what
    ``setup.cfg`` names: every top-level module in ``py_modules`` and every top-level package
    in ``packages.find``'s ``include`` (but the benches and the tests), none left out."""
    setup = configparser.ConfigParser()
    setup.read(ROOT / "setup.cfg")
    modules = {name.strip() for name in setup["options"]["py_modules"].split(",")}
    included = {name.rstrip("*") for name in setup["options.packages.find"]["include"].split()}
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    top_modules = {path[:-3] for path in tracked if "/" not in path and path.endswith(".py")}
    top_packages = {path.split("/")[0] for path in tracked if path.count("/") == 1}
    top_packages &= {path.split("/")[0] for path in tracked if path.endswith("/__init__.py")}
    assert modules == top_modules - {"gunicorn.conf"}  # gunicorn reads its file by path
    assert included == top_packages - {"bench", "tests"}
