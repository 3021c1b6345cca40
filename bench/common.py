"""What the benchmarks share: timing, the machine and commit measured, and gunicorn servers.

Every benchmark runs as a module from the project's root: ``python -m bench.request_path``; with
``--smoke`` it runs once at its smallest sizes, in one short round, to show it still runs (its
figures marked as a smoke run, no goal judged). ``python -m bench.smoke`` runs every one so.
"""

import os
import platform
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The football-data set beside the repository (never copied into it), or FOOTBALL_DATA_DIR.
FOOTBALL_DATA = Path(
    os.environ.get("FOOTBALL_DATA_DIR") or ROOT.parent / "shared" / "data" / "football-data"
)
CONFIG = ROOT / "gunicorn.conf.py"
START_TIMEOUT = 60  # seconds a server may take to answer

SMOKE_HELP = (
    "run once at the smallest sizes, in one short round, to show the benchmark still runs: "
    "its figures are marked as a smoke run and no goal is judged"
)
#: The first line a smoke run prints, and the one a skipped smoke run prints instead.
SMOKE_BANNER = (
    "smoke run: the smallest sizes, one short round; its figures compare with no full run's"
    " and no goal is judged"
)
SKIPPED = "smoke run skipped:"
#: Columns of a football-data file holding every price the benchmarks read: Pinnacle's closing
#: 1x2 and over/under 2.5 (the site quotes the latter from 2019/20 on).
COMPLETE_FILE = ("PSCH", "PC>2.5")


def parse_arguments(parser, **smallest):
    """``parser``'s arguments with ``--smoke`` added to it. Under ``--smoke`` the options take
    the values ``smallest`` gives (one given on the command line still wins), and the banner
    says the figures are a smoke run's."""
    parser.add_argument("--smoke", action="store_true", help=SMOKE_HELP)
    known, _ = parser.parse_known_args()
    if known.smoke:
        parser.set_defaults(**smallest)
    args = parser.parse_args()
    if args.smoke:
        print(SMOKE_BANNER, flush=True)
    return args


def skip_smoke(reason: str):
    """End a smoke run that cannot be made here (not a failure): say why, exit 0."""
    print(f"{SKIPPED} {reason}", flush=True)
    sys.exit(0)


def data_arguments(parser) -> None:
    """``--data`` (the football-data folder) and ``--database-url`` (a database the benchmark
    may wipe; a temporary SQLite file by default)."""
    parser.add_argument("--data", type=Path, default=FOOTBALL_DATA)
    parser.add_argument("--database-url")


def data_files(parser, args) -> list[Path]:
    """The CSV files of ``--data``, the parser's error if none. A smoke run takes one: the
    smallest holding every price (else the smallest), and is skipped where there is none."""
    files = sorted(args.data.glob("*.csv")) if args.data.is_dir() else []
    if not files and args.smoke:
        skip_smoke(f"no football-data set at {args.data} (--data or FOOTBALL_DATA_DIR)")
    if not files:
        parser.error(f"no CSV files in {args.data}")
    if not args.smoke:
        return files

    def complete(path):
        with path.open(encoding="utf-8-sig") as handle:
            columns = handle.readline().strip().split(",")
        return all(column in columns for column in COMPLETE_FILE)

    return [min(files, key=lambda path: (not complete(path), path.stat().st_size, path.name))]


@contextmanager
def fresh_app(parser, args):
    """``(app, files)`` inside the app's context, on empty tables of ``--database-url`` (or a
    temporary SQLite file), with the CSV files of ``--data`` (see ``data_files``)."""
    from app import create_app
    from models.schema import create_tables, drop_tables

    files = data_files(parser, args)
    with tempfile.TemporaryDirectory() as folder:
        url = args.database_url or f"sqlite:///{Path(folder) / 'bench.db'}"
        app = create_app(
            {"DATABASE_URL": url, "JWT_SECRET_KEY": "bench-" + "k" * 40, "LOG_LEVEL": "WARNING"}
        )
        with app.app_context():
            drop_tables()
            create_tables()
            yield app, files


def timed(work):
    """(result, seconds) of ``work()``."""
    started = time.perf_counter()
    result = work()
    return result, time.perf_counter() - started


def commit() -> str:
    """The short commit measured, marked when tracked files have uncommitted changes."""
    head = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    return f"{head or 'unknown'}{' + uncommitted changes' if dirty else ''}"


def machine() -> str:
    """Cores, CPU model and system, so the figures are attributable."""
    model = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        found = re.search(r"^model name\s*:\s*(.+)$", cpuinfo.read_text(), re.MULTILINE)
        model = f", {found.group(1).strip()}" if found else ""
    return f"{os.cpu_count()} cores{model}; {platform.system()} {platform.release()}"


def stop_on_sigterm(_signum, _frame):
    """Turn SIGTERM into SystemExit so every cleanup callback runs."""
    sys.exit(143)


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_gunicorn(stack, app, environment, cwd, log_path) -> subprocess.Popen:
    """gunicorn with the project's config serving ``app`` from ``cwd``; stopped by ``stack``."""
    log = log_path.open("w")
    stack.callback(log.close)
    # The worker class the config names is the project's, wherever ``app`` is served from.
    path = os.pathsep.join(filter(None, (environment.get("PYTHONPATH"), str(ROOT))))
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "--config", str(CONFIG), app],
        cwd=cwd,
        env={**environment, "PYTHONPATH": path},
        stdout=log,
        stderr=subprocess.STDOUT,
        # its own session: a Ctrl-C reaches only the benchmark, which then stops it in order
        start_new_session=True,
    )
    stack.callback(stop_gunicorn, process, log_path)
    return process


def stop_gunicorn(process, log_path):
    """Stop one gunicorn and its workers; report any traceback it logged."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # the master and its workers: one group
            process.wait(timeout=10)
    text = log_path.read_text(errors="replace") if log_path.exists() else ""
    if "Traceback" in text:
        count = text.count("Traceback")
        print(f"  ! {log_path.stem}: the server logged {count} traceback(s); the last:")
        print("    " + text[text.rfind("Traceback") :][:2000].replace("\n", "\n    "))


def build_picks(total: int, kickoff, **fields) -> list[int]:
    """``total`` picks (one per market of each match, odds 2.0, rated B) on finished matches
    with Pinnacle closing prices, kicked off at ``kickoff``; ``fields`` are further pick
    fields (``is_live``, ``created_at``). Returns the match ids."""
    import numpy as np

    from enums import MARKET_SELECTIONS
    from models import League, Match, OddsQuote, Pick, Team
    from store.database import db

    league = League.create(
        code="BENCH", name="Bench", country="Benchland", competition_type="top-flight"
    )
    teams = [Team.create(name=f"Team {n}", country="Benchland") for n in range(2)]
    count = total // len(MARKET_SELECTIONS) + 1
    goals = np.random.default_rng(1).poisson(1.4, size=(count, 2))
    rows = [
        {
            "league": league.id,
            "season": "x",
            "home_team": teams[0].id,
            "away_team": teams[1].id,
            "kickoff_at": kickoff,
            "status": "finished",
            "home_goals": int(home),
            "away_goals": int(away),
            "slug": f"bench-{n}",
        }
        for n, (home, away) in enumerate(goals)
    ]
    with db.atomic():
        for start in range(0, len(rows), 2000):
            Match.insert_many(rows[start : start + 2000]).execute()
        match_ids = [match_id for (match_id,) in Match.select(Match.id).tuples()]
        picks, quotes = [], []
        for match_id in match_ids:
            for market, selections in MARKET_SELECTIONS.items():
                picks.append(
                    {
                        "match": match_id,
                        "market": market,
                        "selection": selections[0],
                        "bookmaker": "bench",
                        "odds": 2.0,
                        "probability": 0.55,
                        "edge": 0.1,
                        "rating": "B",
                        "data_quality": 0.9,
                        **fields,
                    }
                )
                quotes += [
                    {
                        "match": match_id,
                        "market": market,
                        "selection": selection,
                        "bookmaker": "pinnacle",
                        "price": 1.9,
                        "is_closing": True,
                    }
                    for selection in selections
                ]
        for start in range(0, len(picks), 2000):
            Pick.insert_many(picks[start : start + 2000]).execute()
        for start in range(0, len(quotes), 2000):
            OddsQuote.insert_many(quotes[start : start + 2000]).execute()
    return match_ids
