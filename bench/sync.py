"""What a sync costs: the fixture files of 20 leagues and a week of their prices, served over
HTTP as football-data.co.uk serves them, then a sync with nothing new beside it.

    python -m bench.sync [--data DIR] [--database-url URL] [--leagues N] [--days N] [--smoke]

The leagues are the shared 2023/24 files, each also served under other divisions' codes (its
teams renamed) until there are ``--leagues`` of them. Day 0 serves the season so far and a
fixture list of the coming week; each following day moves every price (as a fixture file does
over a week). Printed per sync: the requests, the SQL statements run, the rows written and the
time. Goal: a sync with nothing new writes no data row (only the source's standing: its last
success) and takes under 1 s. ``--database-url``: a database the benchmark may wipe (PostgreSQL
too; a temporary SQLite file by default). ``--smoke``: 2 leagues, 2 days.
"""

import argparse
import csv
import io
import os
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import psycopg2.extensions

from app import create_app
from bench.common import commit, data_arguments, machine, parse_arguments, skip_smoke
from engine.ledger import notes
from models.schema import create_tables, drop_tables
from services.feeds import sync
from services.feeds.formats import footballdata
from services.feeds.sources import http
from store.database import db, is_sqlite

START = datetime(2024, 3, 8, 15, 0, tzinfo=UTC)  # a Friday: fixtures of the week ahead
SOURCES = ("E0", "E1", "SP1", "D1", "F1")


class Quiet(SimpleHTTPRequestHandler):
    """A static file server (``Last-Modified``, 304 to ``If-Modified-Since``), silent."""

    def log_message(self, *args):
        pass


def _rows(path: Path):
    text = path.read_text()
    reader = csv.reader(io.StringIO(text))
    header = next(reader)
    return header, [dict(zip(header, row, strict=True)) for row in reader if row]


def _write(path: Path, header, rows) -> None:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow([row.get(name, "") for name in header])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(out.getvalue())


def leagues(data: Path, count: int) -> list[tuple[str, str, list[str], list[dict]]]:
    """``count`` leagues: (code, source file's code, header, rows) with renamed teams."""
    codes = [code for code in footballdata.DIVISIONS if code not in SOURCES]
    found = []
    for index in range(count):
        source = SOURCES[index % len(SOURCES)]
        header, rows = _rows(data / f"{source}_2324.csv")
        code = source if index < len(SOURCES) else codes[index - len(SOURCES)]
        if code != source:
            rows = [
                {
                    **row,
                    "Div": code,
                    "HomeTeam": f"{row['HomeTeam']} {code}",
                    "AwayTeam": f"{row['AwayTeam']} {code}",
                }
                for row in rows
            ]
        found.append((code, source, header, rows))
    return found


def _kickoff(row) -> datetime:
    return datetime.combine(
        footballdata.parse_date(row["Date"]),
        footballdata.parse_time(row["Time"] or "15:00"),
        footballdata.SOURCE_TIMEZONE,
    ).astimezone(UTC)


#: The fixture file's columns: the teams, the kick-off and the pre-match prices.
PRICE_PREFIXES = ("B365", "BW", "IW", "PS", "WH", "VC", "Avg", "P")


def _fixture_column(name: str) -> bool:
    if name in ("Div", "Date", "Time", "HomeTeam", "AwayTeam"):
        return True
    stem = name.removesuffix(">2.5").removesuffix("<2.5")
    if stem != name:
        return stem in PRICE_PREFIXES
    return name[:-1] in PRICE_PREFIXES and name[-1] in "HDA"


def serve_day(folder: Path, all_leagues, day: int) -> None:
    """Write what the site serves on ``day`` (0: START): season files up to then, and the
    fixture list of the week ahead with prices moved ``day`` times."""
    now = START + timedelta(days=day)
    fixtures, fixture_header = [], None
    for code, _, header, rows in all_leagues:
        played = [row for row in rows if _kickoff(row) < START]
        _write(folder / "mmz4281" / "2324" / f"{code}.csv", header, played)
        fixture_header = fixture_header or [name for name in header if _fixture_column(name)]
        for row in rows:
            if now <= _kickoff(row) < START + timedelta(days=7):
                moved = dict(row)
                for name in fixture_header[5:]:
                    if row.get(name):
                        moved[name] = f"{float(row[name]) * (1 + 0.01 * day):.2f}"
                fixtures.append(moved)
    _write(folder / "fixtures.csv", fixture_header, fixtures)
    # A distinct modification time per day: the server's Last-Modified and its 304s follow it.
    stamp = (START + timedelta(days=day)).timestamp()
    for path in folder.rglob("*.csv"):
        os.utime(path, (stamp, stamp))


#: The statements that write rows, and those that write the source's standing.
WRITES = ("INSERT", "UPDATE", "DELETE")
STANDING = ('UPDATE "SOURCE_STATE"', 'INSERT INTO "SOURCE_STATE"')


class Counted:
    """SQL statements run on the connection, and rows changed: SQLite's own counters, or on
    PostgreSQL each statement's row count, read by a cursor that counts them."""

    def __init__(self):
        self.statements = 0
        self.standing = 0  # rows of source_state written: the source's last success
        self.written = 0

    def __enter__(self):
        connection = db.connection()
        self.statements = 0
        if is_sqlite():
            self.changes = connection.total_changes
            connection.set_trace_callback(self._trace)
            return self
        counted = self

        class Counting(psycopg2.extensions.cursor):
            def execute(self, query, variables=None):
                super().execute(query, variables)
                counted._seen(query, self.rowcount)

            def executemany(self, query, variables):
                super().executemany(query, variables)
                counted._seen(query, self.rowcount)

        self.factory = connection.cursor_factory
        connection.cursor_factory = Counting
        return self

    def _trace(self, sql):
        self.statements += 1
        if sql.lstrip().upper().startswith(STANDING):
            self.standing += 1

    def _seen(self, query, rows):
        text = (query.decode() if isinstance(query, bytes) else query).lstrip().upper()
        self.statements += 1
        if text.startswith(WRITES) and rows > 0:
            self.written += rows
            if text.startswith(STANDING):
                self.standing += rows

    def __exit__(self, *exc):
        connection = db.connection()
        if is_sqlite():
            connection.set_trace_callback(None)
            self.written = connection.total_changes - self.changes
        else:
            connection.cursor_factory = self.factory


def one_sync(app, now, label) -> dict:
    policy = http.Policy.from_settings(app.config, sleep=lambda _s: None)
    with Counted() as counted:
        started = time.perf_counter()
        result = sync.run(app.config, now, None, policy)
        seconds = time.perf_counter() - started
    report = result["sources"][0]
    print(
        f"  {label}: {report['calls']} requests ({report['unchanged']} unchanged), "
        f"{report['matches_new']:,} matches new, {report['matches_updated']:,} updated, "
        f"{report['odds_stored']:,} odds stored, {report['prices_changed']} matches repriced, "
        f"{result['predicted']} predicted, {result['published']} published; "
        f"{counted.statements:,} statements, {counted.written:,} rows written "
        f"({counted.standing} of them the source's standing), {seconds:.2f} s",
        flush=True,
    )
    return {"written": counted.written - counted.standing, "seconds": seconds}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    data_arguments(parser)
    parser.add_argument("--leagues", type=int, default=20)
    parser.add_argument("--days", type=int, default=7)
    args = parse_arguments(parser, leagues=2, days=2)
    if not all((args.data / f"{code}_2324.csv").is_file() for code in SOURCES):
        if args.smoke:
            skip_smoke(f"no 2023/24 football-data files at {args.data}")
        parser.error(f"no 2023/24 football-data files at {args.data}")
    print(f"commit {commit()}; {machine()}")
    all_leagues = leagues(args.data, args.leagues)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "site"
        root.mkdir()
        server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(root)))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            app = create_app(
                {
                    "DATABASE_URL": args.database_url or f"sqlite:///{Path(folder) / 'bench.db'}",
                    "JWT_SECRET_KEY": "bench-" + "k" * 40,
                    "LEDGER_SIGNING_KEY": notes.generate("bench.example/ledger").encode(),
                    "LOG_LEVEL": "WARNING",
                    "FOOTBALL_DATA_URL": f"http://127.0.0.1:{server.server_address[1]}",
                    "FOOTBALL_DATA_LEAGUES": ",".join(code for code, *_ in all_leagues),
                    "FOOTBALL_DATA_SEASONS": "2324",
                }
            )
            with app.app_context():
                drop_tables()
                create_tables()
                engine = "SQLite" if is_sqlite() else "PostgreSQL"
                print(f"{len(all_leagues)} leagues, {args.days} days of prices ({engine}):")
                still = []
                for day in range(args.days):
                    serve_day(root, all_leagues, day)
                    now = START + timedelta(days=day)
                    one_sync(app, now, f"day {day}")
                    # a minute later: no kick-off in between (whose closing line is new work)
                    again = now + timedelta(minutes=1)
                    still.append(one_sync(app, again, f"day {day}, again"))
                worst = max(still, key=lambda run: run["seconds"])
                verdict = worst["written"] == 0 and worst["seconds"] < 1
                print(
                    f"no-change syncs: at most {max(r['written'] for r in still)} data rows "
                    f"written, {worst['seconds']:.2f} s; goal (no data write, under 1 s): "
                    + ("not judged (smoke run)" if args.smoke else "met" if verdict else "missed")
                )
                drop_tables()
        finally:
            server.shutdown()
            server.server_close()


if __name__ == "__main__":
    main()
