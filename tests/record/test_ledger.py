"""The ledger of live picks: entries written with the picks and their settlement, append-only in
code and in the database, signed checkpoints, public endpoints and proofs; the standalone
verifier green on an honest history and red on each way of cooking one."""

import ast
import contextlib
import io
import json
import sqlite3
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import psycopg2
import pytest
from peewee import DatabaseError

from engine.ledger import entries, merkle, notes
from engine.records import OddsRecord
from models import (
    LEDGER_TABLES,
    LedgerCheckpoint,
    LedgerEntry,
    LedgerNode,
    LedgerSeal,
    LedgerTimestamp,
    Match,
    OddsQuote,
    Pick,
    data_version,
)
from services.feeds import prices
from services.operations import jobs
from services.record import log_reading, settling, signed_log
from store.database import db, is_sqlite
from tests import asserts, factories
from tests.helpers import SHUTDOWN_POLL
from tests.servers import gunicorn
from tests.tsa import authority
from tests.verifier import SCRIPT, client_fetcher, load_verifier

verifier = load_verifier()
ROOT = Path(__file__).resolve().parents[2]

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
ODDS = [
    ("pinnacle", "1x2", "home", 2.9, False),
    ("pinnacle", "1x2", "draw", 3.4, False),
    ("pinnacle", "1x2", "away", 2.6, False),
]
CLOSING = [
    ("pinnacle", "1x2", "home", 2.8, True),
    ("pinnacle", "1x2", "draw", 3.5, True),
    ("pinnacle", "1x2", "away", 2.7, True),
    ("pinnacle", "ou25", "over", 2.0, True),
    ("pinnacle", "ou25", "under", 1.85, True),
]


class Clock:
    """The app's clock, moved by the tests."""

    def __init__(self, now):
        self.now = now

    def __call__(self):
        return self.now


@pytest.fixture
def clock():
    return Clock(T0)


@pytest.fixture
def app(make_app, clock):
    return make_app(CLOCK=clock)


def fixture(home, away, kickoff):
    return factories.match(home, away, kickoff=kickoff, status="scheduled", odds=ODDS)


def live_pick(match, market, selection, odds, rating, now):
    return factories.pick(
        match, market, selection, odds, is_live=True, rating=rating, created_at=now
    )


def publish(match_ids, now):
    """What storing new live picks does: publish them, then the operation's checkpoint, and
    its time-stamp once that has committed."""
    with db.atomic():
        published = signed_log.publish_new(match_ids, now, "test-1")
        signed_log.checkpoint(now, factories.settings())
    signed_log.stamp(factories.settings(), now)
    return published


def result(match, goals=(2, 1), status="finished"):
    """The match's result (and closing prices) arrive, as a later import brings them."""
    factories.match(
        match.home_team.name,
        match.away_team.name,
        kickoff=match.kickoff_at,
        status=status,
        goals=goals,
        odds=CLOSING if status == "finished" else (),
    )


def history(clock):
    """An honest live history: picks published before kick-off over two days, then settled
    (won, lost and void); four checkpoints. Returns the picks."""
    first = fixture("Alpha", "Beta", T0 + timedelta(days=1))
    second = fixture("Gamma", "Delta", T0 + timedelta(days=1, hours=3))
    third = fixture("Epsilon", "Zeta", T0 + timedelta(days=2))
    picks = [
        live_pick(first, "1x2", "home", 3.1, "A", T0),
        live_pick(second, "ou25", "over", 2.05, "B", T0),
        live_pick(third, "btts", "yes", 1.9, "C", T0),
    ]
    assert publish([first.id, second.id, third.id], T0) == 3
    later = T0 + timedelta(hours=12)
    fourth = fixture("Eta", "Theta", T0 + timedelta(days=3))
    picks.append(live_pick(fourth, "1x2", "away", 4.2, "A", later))
    assert publish([fourth.id], later) == 1
    settled_at = T0 + timedelta(days=1, hours=6)
    result(first, (2, 1))
    result(second, (0, 0))
    settling.run(7, factories.settings(), now=settled_at)
    voided_at = T0 + timedelta(days=2, hours=4)
    result(third, status="cancelled")
    settling.run(7, factories.settings(), now=voided_at)
    clock.now = voided_at
    return picks


def stored_entries():
    return [json.loads(row.body) for row in LedgerEntry.select().order_by(LedgerEntry.position)]


def run_verifier(client, saved_key=None, saved=(), token=None):
    """The verifier's verdicts over the app, as ``{check: verdict}``, and its report."""
    report, key, latest = verifier.verify(
        client_fetcher(client, token), saved_key, list(saved), token, out=io.StringIO()
    )
    return {name: verdict for verdict, name, _ in report.verdicts}, report, key, latest


def details(report) -> str:
    return "\n".join(f"{verdict} {name}: {detail}" for verdict, name, detail in report.verdicts)


# Entries, written with what they record


def test_live_picks_are_published_and_settled_into_the_ledger(app, clock):
    with app.app_context():
        picks = history(clock)
        found = stored_entries()
        kinds = [(entry["type"], entry["pickId"]) for entry in found]
        assert kinds == [
            ("pick.published", picks[0].id),
            ("pick.published", picks[1].id),
            ("pick.published", picks[2].id),
            ("pick.published", picks[3].id),
            ("pick.settled", picks[0].id),
            ("pick.settled", picks[1].id),
            ("pick.voided", picks[2].id),
        ]
        leaves = [
            merkle.leaf_hash(row.body.encode()).hex()
            for row in LedgerEntry.select().order_by(LedgerEntry.position)
        ]
        assert found[4]["published"] == leaves[0] and found[4]["status"] == "won"
        assert found[5]["status"] == "lost" and found[5]["profit"] == "-1.0"
        assert found[6]["status"] == "void" and found[6]["profit"] == "0.0"
        assert found[4]["profit"] == entries.decimal(3.1 - 1.0)
        assert found[4]["clv"] == entries.decimal(3.1 / 2.8 - 1)
        assert not {"selection", "odds", "bookmaker", "probability", "edge"} & set(found[0])
        assert found[0]["kickoffAt"] == "2026-03-02T09:00:00Z"
        sizes = [row.size for row in LedgerCheckpoint.select().order_by(LedgerCheckpoint.size)]
        assert sizes == [3, 4, 6, 7]  # one per operation that appended
        # When each entry was first signed, by pick (as a caller asks) and by position (as a
        # settlement does): the same instants, none for no entry or one not signed yet.
        signed = log_reading.first_signed([pick.id for pick in picks])
        by_position = log_reading.first_signed_at([0, None, 3, 6, 7]).tolist()
        assert by_position[0] == int(signed[picks[0].id].timestamp())
        assert by_position[2] == int(signed[picks[3].id].timestamp()) != by_position[0]
        last = LedgerCheckpoint.get(LedgerCheckpoint.size == 7).published_at
        assert by_position[3] == int(last.timestamp())
        assert [value != value for value in by_position] == [False, True, False, False, True]


def test_backfilled_picks_never_enter_the_ledger(ctx):
    match = factories.match(kickoff=T0 - timedelta(days=1), goals=(1, 0))
    factories.pick(match, is_live=False, rating="A", created_at=T0)
    assert signed_log.publish_new([match.id], T0, "test-1") == 0
    settling.run(7, factories.settings(), now=T0)
    assert (
        LedgerEntry.select().count() == 0
        and signed_log.checkpoint(T0, factories.settings()) is None
    )


def test_a_new_checkpoint_changes_the_data_version(ctx):
    """The track record shows the latest checkpoint: no stored answer may outlive it."""
    match = fixture("Alpha", "Beta", T0 + timedelta(days=1))
    live_pick(match, "1x2", "home", 3.1, "A", T0)
    signed_log.publish_new([match.id], T0, "test-1")
    before = data_version()
    assert signed_log.checkpoint(T0, factories.settings()) is not None
    after = data_version()
    assert after != before
    assert signed_log.checkpoint(T0, factories.settings()) is None and data_version() == after


def test_a_pick_whose_match_kicked_off_cannot_be_published(ctx):
    match = fixture("Alpha", "Beta", T0)
    live_pick(match, "1x2", "home", 3.1, "A", T0 - timedelta(hours=1))
    with pytest.raises(ValueError, match="kicked off"):
        signed_log.publish_new([match.id], T0, "test-1")


def test_settlement_and_its_entries_share_one_transaction(app, clock, monkeypatch):
    """A failure while appending the outcomes rolls the settlement back with them."""
    with app.app_context():
        match = fixture("Alpha", "Beta", T0 + timedelta(hours=2))
        pick = live_pick(match, "1x2", "home", 3.1, "A", T0)
        publish([match.id], T0)
        result(match)

        def broken(*args, **kwargs):
            raise RuntimeError("the disk is full")

        monkeypatch.setattr(signed_log, "record_outcomes", broken)
        with pytest.raises(RuntimeError):
            settling.run(7, factories.settings(), now=T0 + timedelta(hours=5))
        assert Pick.get_by_id(pick.id).status == "pending"
        monkeypatch.undo()
        settling.run(7, factories.settings(), now=T0 + timedelta(hours=5))
        assert Pick.get_by_id(pick.id).status == "won"
        assert [entry["type"] for entry in stored_entries()] == ["pick.published", "pick.settled"]


# Append-only, in code and in the database


def test_the_verifier_imports_nothing_of_the_project():
    """It checks the service's mathematics with its own: the standard library and
    ``cryptography`` (``rfc3161_client`` for time-stamps) only."""
    tree = ast.parse(SCRIPT.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.add(node.module.split(".")[0])
    assert found - sys.stdlib_module_names == {"cryptography", "rfc3161_client"}


def test_no_code_updates_or_deletes_a_ledger_row():
    names = {model.__name__ for model in LEDGER_TABLES}
    offenders = []
    for path in [*ROOT.glob("*.py"), *ROOT.glob("services/**/*.py"), *ROOT.glob("store/**/*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in ("update", "delete", "delete_instance", "save", "replace")
                and isinstance(node.value, ast.Name)
                and node.value.id in names
            ):
                offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == []


@pytest.mark.parametrize("model", LEDGER_TABLES, ids=lambda model: model.__name__)
def test_the_database_refuses_to_update_or_delete_a_ledger_row(app, clock, model):
    """On SQLite and on PostgreSQL (CI runs the suite on both)."""
    with app.app_context():
        history(clock)
        later = fixture("Iota", "Kappa", clock.now + timedelta(days=1))
        live_pick(later, "1x2", "draw", 3.3, "B", clock.now)
        publish([later.id], clock.now)  # 8 entries: the tree's first stored subtree
        # (no authority is configured here: the row an unanswered request leaves)
        LedgerTimestamp.create(size=log_reading.size(), error="no answer", stamped_at=clock.now)
        assert model.select().count() > 0
        table = model._meta.table_name
        column = {
            LedgerEntry: "body",
            LedgerNode: "hash",
            LedgerCheckpoint: "signed_note",
            LedgerSeal: "salt",
            LedgerTimestamp: "error",
        }[model]
        for statement in (
            f'UPDATE "{table}" SET "{column}" = \'x\'',
            f'DELETE FROM "{table}"',
        ):
            with pytest.raises(DatabaseError, match="append-only"), db.atomic():
                db.execute_sql(statement)
        if not is_sqlite():
            with pytest.raises(DatabaseError, match="append-only"), db.atomic():
                db.execute_sql(f'TRUNCATE "{table}"')
        assert model.select().count() > 0


# The public endpoints


def test_the_ledger_head_is_the_latest_signed_checkpoint(app, clock):
    client = app.test_client()
    empty = client.get("/api/track-record/ledger").get_json()
    assert empty["size"] == 0 and empty["signedNote"] is None
    assert empty["rootHash"] == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    with app.app_context():
        history(clock)
    head = client.get("/api/track-record/ledger").get_json()
    key = notes.parse_verifier_key(head["verifierKey"])
    checkpoint = notes.parse_checkpoint(key.verify(head["signedNote"]))
    assert (
        (checkpoint.size, checkpoint.root.hex())
        == (head["size"], head["rootHash"])
        == (
            7,
            head["rootHash"],
        )
    )
    assert checkpoint.origin == head["origin"] == "test.example/ledger"
    assert checkpoint.extensions == ("time 2026-03-03T13:00:00Z",)
    assert head["keyId"] == key.key_id.hex() and head["publishedAt"] == "2026-03-03T13:00:00Z"


def test_entries_carry_reveals_only_once_the_pick_may_be_shown(app, clock):
    client = app.test_client()
    with app.app_context():
        picks = history(clock)
    clock.now = T0 + timedelta(hours=13)  # pick 4 (A) is still to kick off; pick 1 (A) played
    page = client.get("/api/track-record/ledger/entries").get_json()
    assert [item["index"] for item in page["items"]] == list(range(7))
    reveals = {json.loads(item["entry"])["pickId"]: item["reveal"] for item in page["items"][:4]}
    assert reveals[picks[3].id] is None  # rated A, before kick-off
    assert reveals[picks[1].id]["pick"]["selection"] == "over"  # rated B: public at once
    clock.now = T0 + timedelta(days=1)  # pick 1's kick-off
    page = client.get("/api/track-record/ledger/entries").get_json()
    first = page["items"][0]
    assert first["reveal"]["pick"] == {
        "id": picks[0].id,
        "matchId": picks[0].match_id,
        "market": "1x2",
        "selection": "home",
        "odds": "3.1",
        "bookmaker": "bet365",
        "probability": "0.55",
        "edge": "0.1",
        "rating": "A",
        "stake": "1.0",
        "publishedAt": "2026-03-01T09:00:00Z",
    }
    assert entries.opens(json.loads(first["entry"])["commitment"], first["reveal"])
    assert [item["checkpointSize"] for item in page["items"]] == [3, 3, 3, 4, 6, 6, 7]
    assert [cp["size"] for cp in page["checkpoints"]] == [3, 4, 6, 7]


def test_entries_page_by_start_and_end(app, clock):
    client = app.test_client()
    with app.app_context():
        history(clock)
    page = client.get("/api/track-record/ledger/entries?start=2&end=5").get_json()
    assert [item["index"] for item in page["items"]] == [2, 3, 4]
    assert [cp["size"] for cp in page["checkpoints"]] == [3, 4, 6]
    assert client.get("/api/track-record/ledger/entries?start=7").get_json()["items"] == []


@pytest.mark.parametrize(
    ("query", "fields"),
    [
        ("start=8", ["start"]),
        ("start=2&end=1", ["end"]),
        ("start=0&end=8", ["end"]),
        ("start=-1", ["start"]),
        ("start=abc", ["start"]),
    ],
)
def test_bad_entries_arguments_are_422s(app, clock, query, fields):
    with app.app_context():
        history(clock)
    response = app.test_client().get(f"/api/track-record/ledger/entries?{query}")
    assert list(asserts.problem(response, 422, "validation-error")["errors"]) == fields


def test_proofs_verify_against_the_signed_roots(app, clock):
    client = app.test_client()
    with app.app_context():
        history(clock)
    head = client.get("/api/track-record/ledger").get_json()
    items = client.get("/api/track-record/ledger/entries").get_json()["items"]
    root = bytes.fromhex(head["rootHash"])
    for item in items:
        proof = client.get(f"/api/track-record/ledger/proof?index={item['index']}").get_json()
        assert proof["type"] == "inclusion" and proof["leafHash"] == item["leafHash"]
        hashes = [bytes.fromhex(value) for value in proof["hashes"]]
        leaf = bytes.fromhex(item["leafHash"])
        assert verifier.verify_inclusion(item["index"], 7, leaf, hashes, root)
    for size in range(8):
        proof = client.get(f"/api/track-record/ledger/proof?fromSize={size}").get_json()
        hashes = [bytes.fromhex(value) for value in proof["hashes"]]
        old = bytes.fromhex(proof["fromRootHash"])
        assert verifier.verify_consistency(size, 7, old, root, hashes)
    old_head = client.get("/api/track-record/ledger/proof?fromSize=3&treeSize=4").get_json()
    assert old_head["treeSize"] == 4


@pytest.mark.parametrize(
    ("query", "fields"),
    [
        ("", ["index", "fromSize"]),
        ("index=1&fromSize=1", ["index", "fromSize"]),
        ("index=7", ["index"]),
        ("index=1&treeSize=8", ["treeSize"]),
        ("fromSize=5&treeSize=4", ["fromSize"]),
        ("index=-2", ["index"]),
    ],
)
def test_bad_proof_arguments_are_422s(app, clock, query, fields):
    with app.app_context():
        history(clock)
    response = app.test_client().get(f"/api/track-record/ledger/proof?{query}")
    assert sorted(asserts.problem(response, 422, "validation-error")["errors"]) == sorted(fields)


def test_the_ledger_endpoints_are_public_and_documented(app):
    spec = app.test_client().get("/openapi.json").get_json()
    for path in ("", "/entries", "/proof"):
        operation = spec["paths"][f"/api/track-record/ledger{path}"]["get"]
        assert {} in operation["security"]
        assert "429" in operation["responses"]
        if path:
            assert "422" in operation["responses"]
    schemas = spec["components"]["schemas"]
    assert "verifierKey" in schemas["LedgerHead"]["properties"]


def test_the_cli_prints_the_public_key_and_makes_new_keys(app):
    runner = app.test_cli_runner()
    output = runner.invoke(args=["ledger", "key"]).output.strip()
    assert output == "test.example/ledger+cbd80a5f+AUsZ03ZSkFooGzmjwRX1UaLEQ95CK7lJpEL/e4rmAAnc"
    assert notes.parse_verifier_key(output).name == "test.example/ledger"
    made = runner.invoke(args=["ledger", "new-key", "picks.example/ledger"]).output.strip()
    assert notes.parse_signing_key(made).name == "picks.example/ledger"
    refused = runner.invoke(args=["ledger", "new-key", "bad name"])
    assert refused.exit_code == 1 and "key name" in refused.output


# The verifier: green on an honest history …


def test_the_verifier_is_green_on_an_honest_history_and_saves_its_checkpoint(app, clock):
    client = app.test_client()
    with app.app_context():
        history(clock)
        pro = factories.token(factories.user("pro@example.com", plan="pro"))
    verdicts, report, key, latest = run_verifier(client, token=pro)
    assert not report.failed, details(report)
    assert verdicts == {
        "key": "PASS",
        "checkpoint": "PASS",
        "root": "PASS",
        "inclusion": "PASS",
        "saved checkpoints": "SKIP",
        "published before kick-off": "PASS",
        "timestamps": "SKIP",
        "reveals": "PASS",
        "outcomes": "PASS",
        "live rule": "PASS",
        "track record": "PASS",
        "data api track record": "PASS",
    }
    # A later run, with the checkpoint saved, proves the log only grew since.
    with app.app_context():
        fifth = fixture("Iota", "Kappa", T0 + timedelta(days=4))
        live_pick(fifth, "1x2", "draw", 3.3, "B", clock.now)
        publish([fifth.id], clock.now)
    verdicts, report, _, _ = run_verifier(client, key.text, [latest.note], pro)
    assert verdicts["saved checkpoints"] == "PASS" and not report.failed, details(report)


# … and red on each way of cooking one


def drop_append_only_triggers():
    """What someone with the database's keys could do first."""
    for model in LEDGER_TABLES:
        table = model._meta.table_name
        if is_sqlite():
            for event in ("update", "delete"):
                db.execute_sql(f'DROP TRIGGER IF EXISTS "{table}_no_{event}"')
        else:
            db.execute_sql(f'DROP TRIGGER IF EXISTS "{table}_append_only" ON "{table}"')


def honest_run(app, clock):
    """An honest history, checked once by the verifier: (client, pinned key, saved notes)."""
    client = app.test_client()
    with app.app_context():
        history(clock)
    _verdicts, report, key, latest = run_verifier(client)
    assert not report.failed, details(report)
    return client, key.text, [latest.note]


def test_red_when_a_live_picks_odds_are_edited(app, clock):
    client, key, saved = honest_run(app, clock)
    with app.app_context():
        pick = Pick.select().where(Pick.is_live & (Pick.status == "lost")).first()
        Pick.update(odds=pick.odds + 1.0).where(Pick.id == pick.id).execute()
    verdicts, report, _, _ = run_verifier(client, key, saved)
    assert verdicts["reveals"] == "FAIL", details(report)
    assert "does not open its commitment" in details(report)


def test_red_when_an_entry_is_deleted(app, clock):
    client, key, saved = honest_run(app, clock)
    with app.app_context():
        drop_append_only_triggers()
        LedgerEntry.delete().where(LedgerEntry.position == 5).execute()
    _verdicts, report, _, _ = run_verifier(client, key, saved)
    assert report.failed and "entry 5 is missing" in details(report), details(report)


def test_red_when_a_pick_is_published_after_kick_off(app, clock):
    """Someone writes the entry of a pick made after the match kicked off, with the real key:
    its first checkpoint is signed after the kick-off."""
    client, key, saved = honest_run(app, clock)
    with app.app_context():
        match = factories.match("Lambda", "Mu", kickoff=clock.now - timedelta(hours=3))
        pick = live_pick(match, "1x2", "home", 2.5, "B", clock.now - timedelta(hours=4))
        salt = bytes(32)
        body = entries.published_entry(
            {**pick.__data__, "match_id": match.id},
            salt,
            kickoff_at=match.kickoff_at,
            competition_type="top-flight",
            model_version="test-1",
        )
        LedgerSeal.create(
            pick_id=pick.id, salt=salt.hex(), published_hash=merkle.leaf_hash(body).hex()
        )
        signed_log._append([entries.PUBLISHED], [pick.id], [body], clock.now)
        signed_log.checkpoint(clock.now, factories.settings())
    verdicts, report, _, _ = run_verifier(client, key, saved)
    assert verdicts["published before kick-off"] == "FAIL", details(report)
    assert verdicts["saved checkpoints"] == "PASS"  # it only grew: the time gives it away


def test_red_when_a_live_pick_is_inserted_without_an_entry(app, clock):
    """Counted while pending, the pick is red; settled, it is set apart (not in the ledger)."""
    client, key, saved = honest_run(app, clock)
    with app.app_context():
        match = factories.match(
            "Lambda", "Mu", kickoff=clock.now - timedelta(hours=3), status="scheduled"
        )
        pick = live_pick(match, "1x2", "home", 2.5, "B", clock.now - timedelta(days=2))
    verdicts, report, _, _ = run_verifier(client, key, saved)
    assert verdicts["track record"] == "FAIL", details(report)
    with app.app_context():
        result(match)
        settling.run(7, factories.settings(), now=clock.now)
        stored = Pick.get_by_id(pick.id)
        assert (stored.is_live, stored.not_live_reason) == (False, "not-in-ledger")
    verdicts, report, _, _ = run_verifier(client, key, saved)
    assert not report.failed, details(report)


def test_red_when_a_checkpoint_is_signed_with_another_key(app, clock):
    client, key, saved = honest_run(app, clock)
    with app.app_context():
        app.config["LEDGER_SIGNING_KEY"] = notes.generate("test.example/ledger").encode()
        fifth = fixture("Iota", "Kappa", clock.now + timedelta(days=4))
        live_pick(fifth, "1x2", "draw", 3.3, "B", clock.now)
        publish([fifth.id], clock.now)
    verdicts, report, _, _ = run_verifier(client, key, saved)
    assert verdicts["key"] == "FAIL" and verdicts["checkpoint"] == "FAIL", details(report)
    assert "no signature by the pinned key" in details(report)


def test_red_when_an_older_tree_is_rewritten(app, clock):
    """The operator rewrites history (a lost pick dropped, every checkpoint re-signed with the
    real key): the root matches the new entries, but not what a user saved."""
    client, key, saved = honest_run(app, clock)
    with app.app_context():
        drop_append_only_triggers()
        kept = [
            (row.kind, row.pick_id, row.body.encode(), row.created_at)
            for row in LedgerEntry.select().order_by(LedgerEntry.position)
            if json.loads(row.body).get("status") != "lost"
        ]
        lost = [row.pick_id for row in LedgerEntry.select() if '"lost"' in row.body]
        for model in (LedgerEntry, LedgerNode, LedgerCheckpoint):
            model.delete().execute()
        Pick.delete().where(Pick.id.in_(lost)).execute()
        for kind, pick_id, body, at in kept:
            published = kind == "pick.published" and json.loads(body)["pickId"] in lost
            if not published:
                signed_log._append([kind], [pick_id], [body], at)
                signed_log.checkpoint(at, factories.settings())
    _fresh, report, _, _ = run_verifier(client, key)  # a new user sees a consistent log …
    assert not report.failed, details(report)
    verdicts, report, _, _ = run_verifier(client, key, saved)  # … one who saved one does not
    assert verdicts["saved checkpoints"] == "FAIL", details(report)


# RFC 3161 time-stamps


def database_free(app) -> bool:
    """Whether no connection holds a transaction open on the app's database: SQLite grants
    another connection its write lock at once, PostgreSQL shows no session idle in one."""
    if is_sqlite():
        other = sqlite3.connect(db.obj.database, timeout=0, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")
            other.execute("ROLLBACK")
            return True
        except sqlite3.OperationalError:
            return False
        finally:
            other.close()
    other = psycopg2.connect(app.config["DATABASE_URL"])
    try:
        with other.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND state LIKE 'idle in transaction%%' AND pid <> pg_backend_pid()"
            )
            return cursor.fetchone()[0] == 0
    finally:
        other.close()


def test_checkpoints_carry_time_stamps_the_verifier_checks(make_app, tmp_path):
    """A local authority (``openssl ts``) stamps each checkpoint, asked once the transaction
    that signed it has committed: the authority finds the database free at every request. Its
    time is the machine's, so this history is set in 2099, after any day the test may run."""
    future = datetime(2099, 1, 1, 9, 0, tzinfo=UTC)
    free = []
    app = None
    with authority(tmp_path, probe=lambda: free.append(database_free(app))) as (url, ca):
        app = make_app(CLOCK=Clock(future), LEDGER_TSA_URL=url)
        with app.app_context():
            match = fixture("Alpha", "Beta", future + timedelta(days=1))
            live_pick(match, "1x2", "home", 3.1, "B", future)
            publish([match.id], future)
            result(match, (2, 0))
            settled_at = future + timedelta(days=1, hours=4)
            # as the Operations API and the worker run it: settles and signs in one transaction
            operation = jobs.settle(7, factories.settings(), now=settled_at)
            assert operation["status"] == "succeeded", operation["error"]
            first, second = LedgerCheckpoint.select().order_by(LedgerCheckpoint.size)
            stamps = {row.size: row for row in LedgerTimestamp.select()}
            assert sorted(stamps) == [first.size, second.size]
            assert all(row.token and row.error is None for row in stamps.values())
            assert first.timestamp_token is None  # the signed row is never touched
        assert free == [True, True]
        client = app.test_client()
        head = client.get("/api/track-record/ledger").get_json()
        assert head["size"] == second.size and head["timestampToken"] == stamps[second.size].token
        page = client.get("/api/track-record/ledger/entries?start=0").get_json()
        assert {item["timestampToken"] for item in page["checkpoints"]} == {
            stamps[first.size].token,
            stamps[second.size].token,
        }
        report, _, _ = verifier.verify(
            client_fetcher(client), None, [], tsa_certificate=ca, out=io.StringIO()
        )
        verdicts = {name: verdict for verdict, name, _ in report.verdicts}
        assert verdicts["timestamps"] == verdicts["published before kick-off"] == "PASS"
        assert not report.failed, details(report)
        assert "2 RFC 3161 timestamps verify" in details(report)
        (tmp_path / "other").mkdir()
        with authority(tmp_path / "other") as (_, other_ca):  # another authority's certificate
            report, _, _ = verifier.verify(
                client_fetcher(client), None, [], tsa_certificate=other_ca, out=io.StringIO()
            )
        assert report.failed and "timestamp does not verify" in details(report)


def test_an_authority_that_does_not_answer_is_recorded_after_the_checkpoint(make_app):
    app = make_app(CLOCK=Clock(T0), LEDGER_TSA_URL="http://127.0.0.1:9/", LEDGER_TSA_TIMEOUT=2.0)
    with app.app_context():
        match = fixture("Alpha", "Beta", T0 + timedelta(days=1))
        live_pick(match, "1x2", "home", 3.1, "B", T0)
        publish([match.id], T0)
        (row,) = LedgerCheckpoint.select()
        (stamp,) = LedgerTimestamp.select()
        assert stamp.size == row.size and stamp.token is None and "did not answer" in stamp.error
        head = log_reading.head(factories.settings())
        assert head["timestamp_token"] is None and "did not answer" in head["timestamp_error"]
        # Asked once: a later run does not ask again, and a row stamped never changes.
        assert signed_log.stamp(factories.settings(), T0) == 0
        with db.atomic():  # nor is the authority asked inside a transaction
            match = fixture("Gamma", "Delta", T0 + timedelta(days=1))
            live_pick(match, "1x2", "home", 3.1, "B", T0)
            signed_log.publish_new([match.id], T0, "test-1")
            signed_log.checkpoint(T0, factories.settings())
            assert signed_log.stamp(factories.settings(), T0) == 0
        assert signed_log.stamp(factories.settings(), T0) == 1
        with pytest.raises(DatabaseError):
            LedgerTimestamp.update(error=None).execute()


# The script itself, as a user runs it


@pytest.mark.slow
def test_the_verifier_script_over_http(app, clock, tmp_path):
    """``python tools/verify_ledger.py BASE --checkpoints FILE`` against a real gunicorn: green,
    the checkpoint saved; then red, with exit status 1, once an entry's odds are edited."""
    with app.app_context():
        history(clock)
    saved = tmp_path / "checkpoints.json"
    with gunicorn(app) as (base, env):
        command = [sys.executable, str(SCRIPT), base, "--checkpoints", str(saved)]
        green = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
        assert green.returncode == 0, green.stdout + green.stderr
        lines = green.stdout.splitlines()
        assert lines[0].startswith("PASS key: first run: pinning the server's key")
        assert any(line.startswith("PASS track record: 4 live picks") for line in lines)
        pinned = json.loads(saved.read_text())
        assert pinned["verifierKey"].startswith("test.example/ledger+cbd80a5f+")
        assert len(pinned["checkpoints"]) == 1
        with app.app_context():
            pick = Pick.select().where(Pick.is_live & (Pick.status == "won")).first()
            Pick.update(odds=pick.odds * 2).where(Pick.id == pick.id).execute()
        red = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
        assert red.returncode == 1, red.stdout
        # read from tiles, the reveal the green run kept still opens its commitment: the edited
        # odds show in the record's figures, which the entries contradict
        assert "FAIL track record:" in red.stdout
        assert json.loads(saved.read_text()) == pinned  # a red run saves nothing
        pages = [*command, "--pages"]  # the JSON pages: the reveal served now no longer opens
        red = subprocess.run(pages, capture_output=True, text=True, timeout=120, env=env)
        assert red.returncode == 1 and "FAIL reveals:" in red.stdout, red.stdout


# A record that proves live-ness: outcomes record what settled them, and the live rule


def verifier_lines(report) -> list[str]:
    return details(report).splitlines()


def test_outcomes_record_the_match_the_closing_line_and_the_live_rule(app, clock):
    with app.app_context():
        picks = history(clock)
        found = {
            entry["pickId"]: entry
            for entry in stored_entries()
            if entry["type"] != "pick.published"
        }
    won, lost, void = found[picks[0].id], found[picks[1].id], found[picks[2].id]
    assert (won["matchStatus"], won["score"]) == ("finished", {"home": 2, "away": 1})
    assert won["kickoffAt"] == "2026-03-02T09:00:00Z"
    assert (won["closingBookmaker"], won["marginMethod"]) == ("pinnacle", "power")
    assert float(won["closingProbability"]) == pytest.approx(
        Pick.get_by_id(picks[0].id).closing_probability
    )
    assert (won["live"], won["notLiveReason"]) == (True, None)
    assert (lost["score"], void["matchStatus"], void["score"]) == (
        {"home": 0, "away": 0},
        "cancelled",
        None,
    )


def import_file(app, tmp_path, name, *rows):
    """``flask data import`` of a football-data file of ``rows``."""
    path = tmp_path / name
    header = "Div,Date,Time,HomeTeam,AwayTeam,FTHG,FTAG,FTR,PSH,PSD,PSA"
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    result = app.test_cli_runner().invoke(args=["data", "import", str(path)])
    assert result.exit_code == 0, result.output


def test_a_fixture_moved_before_its_pick_is_set_apart_and_the_verifier_agrees(app, clock, tmp_path):
    """A pick published on the 26th for a match then dated the 27th; a later file brings the
    fixture forward to the 24th with its result. The pick was made after the match's real
    kick-off: settled, it is set apart (made-after-kickoff), never counted live, and the
    record says so; the verifier, checkpoints pinned before the import, re-applies the rule
    from the real kick-off and agrees (and fails, naming the pick, once the row is put back
    among the live ones)."""
    published_at = datetime(2026, 3, 26, 9, 0, tzinfo=UTC)
    clock.now = published_at
    import_file(
        app, tmp_path, "fixtures.csv", "E0,27/03/2026,15:00,Alpha FC,Beta FC,,,,2.9,3.4,2.6"
    )
    with app.app_context():
        (match,) = Match.select()
        pick = live_pick(match, "1x2", "home", 2.9, "A", published_at)
        assert publish([match.id], published_at) == 1
    client = app.test_client()
    _verdicts, report, key, latest = run_verifier(client)
    assert not report.failed, details(report)
    saved = [latest.note]

    clock.now = datetime(2026, 3, 28, 9, 0, tzinfo=UTC)
    import_file(
        app, tmp_path, "results.csv", "E0,24/03/2026,15:00,Alpha FC,Beta FC,2,1,H,2.9,3.4,2.6"
    )
    with app.app_context():
        assert Match.get_by_id(match.id).kickoff_at < published_at  # moved before the pick
        settling.run(7, factories.settings(), now=clock.now)
        stored = Pick.get_by_id(pick.id)
        assert (stored.status, stored.is_live) == ("won", False)
        assert stored.not_live_reason == "made-after-kickoff"
        outcome = stored_entries()[-1]
        assert (outcome["live"], outcome["notLiveReason"]) == (False, "made-after-kickoff")
        assert outcome["kickoffAt"] == "2026-03-24T15:00:00Z"
    record = client.get("/api/track-record/by-competition-type").get_json()
    assert sum(item["picks"] for item in record["items"]) == 0
    assert record["setApart"]["count"] == 1
    assert record["setApart"]["items"] == [
        {"pickId": pick.id, "matchId": match.id, "reason": "made-after-kickoff", "status": "won"}
    ]
    page = client.get("/track-record", headers={"Accept": "text/html"}).get_data(as_text=True)
    assert f"Pick {pick.id} (match {match.id}, won): made after its match had kicked off" in page
    verdicts, report, _, _ = run_verifier(client, key.text, saved)
    assert not report.failed, details(report)
    assert f"set apart, as the record says: pick {pick.id} (made-after-kickoff)" in details(report)

    with app.app_context():  # the row put back among the live ones
        Pick.update(is_live=True, not_live_reason=None).where(Pick.id == pick.id).execute()
    verdicts, report, _, _ = run_verifier(client, key.text, saved)
    assert verdicts["live rule"] == verdicts["track record"] == "FAIL", details(report)
    assert f"pick {pick.id} (made-after-kickoff) is not listed as set apart" in details(report)


def test_a_pick_written_into_the_database_on_a_played_match_is_not_live(app, clock):
    """Without the signing key: a live A pick on the winning side of a match that finished
    days ago, its seal, a ledger entry claiming a kick-off next week and the tree nodes, all
    written straight into the database. The worker's scheduled checkpoint signs it and
    settlement settles it, but first signed after the real kick-off, it is set apart; the
    verifier names it, and fails once the row is made to count."""
    client, key, saved = honest_run(app, clock)
    with app.app_context():
        played = factories.match(
            "Lambda", "Mu", kickoff=clock.now - timedelta(days=3), goals=(3, 0), odds=CLOSING
        )
        made = played.kickoff_at - timedelta(days=1)  # claimed: the day before the match
        pick_id = Pick.insert(
            match=played.id,
            market="1x2",
            selection="home",
            bookmaker="pinnacle",
            odds=2.8,
            probability=0.45,
            edge=0.26,
            rating="A",
            data_quality=0.9,
            is_live=True,
            created_at=made,
        ).execute()
        pick = Pick.get_by_id(pick_id)
        salt = bytes(range(32))
        body = entries.published_entry(
            {**pick.__data__, "match_id": played.id},
            salt,
            kickoff_at=clock.now + timedelta(days=7),  # invented
            competition_type="top-flight",
            model_version="test-1",
        )
        LedgerSeal.insert(
            pick_id=pick_id, salt=salt.hex(), published_hash=merkle.leaf_hash(body).hex()
        ).execute()
        signed_log._append([entries.PUBLISHED], [pick_id], [body], clock.now)
        signed_log.scheduled_checkpoint(clock.now, factories.settings())
        settling.run(7, factories.settings(), now=clock.now)
        stored = Pick.get_by_id(pick_id)
        assert (stored.status, stored.is_live) == ("won", False)
        assert stored.not_live_reason == "signed-after-kickoff"
    record = client.get("/api/track-record/by-competition-type").get_json()
    assert record["setApart"]["items"][0]["pickId"] == pick_id
    assert sum(item["won"] for item in record["items"]) == 1  # history's one live win
    verdicts, report, _, _ = run_verifier(client, key, saved)
    assert not report.failed, details(report)
    assert f"set apart, as the record says: pick {pick_id} (signed-after-kickoff)" in details(
        report
    )
    with app.app_context():
        Pick.update(is_live=True, not_live_reason=None).where(Pick.id == pick_id).execute()
    verdicts, report, _, _ = run_verifier(client, key, saved)
    assert verdicts["live rule"] == verdicts["track record"] == "FAIL", details(report)
    assert f"pick {pick_id} (signed-after-kickoff)" in details(report)


def test_red_when_a_score_is_edited_after_settlement(app, clock):
    client, key, saved = honest_run(app, clock)
    with app.app_context():
        pick = Pick.select().where(Pick.is_live & (Pick.status == "won")).first()
        Match.update(home_goals=0).where(Match.id == pick.match_id).execute()
    verdicts, report, _, _ = run_verifier(client, key, saved)
    assert report.failed and verdicts["outcomes"] == "FAIL", details(report)
    assert (
        f"pick {pick.id}: its outcome records the match's score as 2-1, "
        f"/api/matches/{pick.match_id} shows 0-1" in details(report)
    )


def test_red_when_a_cancelled_match_shows_its_result(app, clock):
    """A match set cancelled voids its pick; the match then shows a result the ledger's
    outcome contradicts."""
    client, key, saved = honest_run(app, clock)
    with app.app_context():
        pick = Pick.select().where(Pick.is_live & (Pick.status == "void")).first()
        result(Match.get_by_id(pick.match_id), (0, 2))
    verdicts, report, _, _ = run_verifier(client, key, saved)
    assert report.failed and verdicts["outcomes"] == "FAIL", details(report)
    assert (
        f"pick {pick.id}: its outcome records the match's status as cancelled, "
        f"/api/matches/{pick.match_id} shows finished" in details(report)
    )


@pytest.mark.parametrize("voided_by", ["postponed", "cancelled"])
@pytest.mark.parametrize(
    ("played_after", "honest"),
    [
        (timedelta(days=4), True),  # played at a new kick-off after the pick was voided
        (timedelta(hours=30), False),  # "played" before the voiding: the void was cooked
    ],
)
def test_a_pick_voided_by_a_postponement_whose_match_is_played_later(
    app, clock, voided_by, played_after, honest
):
    """A pick voided because its match was postponed (or cancelled) keeps its outcome when the
    match is played later: the outcome records the match as it stood, the match card shows the
    new kick-off and the result. Only a kick-off after the voiding excuses the difference."""
    kickoff = T0 + timedelta(days=1)
    with app.app_context():
        match = fixture("Omicron", "Pi", kickoff)
        pick = live_pick(match, "1x2", "home", 2.6, "B", T0)
        publish([match.id], T0)
        result(match, status=voided_by)
        voided_at = kickoff + timedelta(hours=49)
        settling.run(7, factories.settings(), now=voided_at)
        assert Pick.get_by_id(pick.id).status == "void"
        factories.match(
            "Omicron",
            "Pi",
            kickoff=kickoff + played_after,
            status="finished",
            goals=(1, 0),
            odds=CLOSING,
        )
        played = Match.get_by_id(match.id)
        assert (played.kickoff_at, played.status) == (kickoff + played_after, "finished")
        clock.now = kickoff + timedelta(days=6)
    verdicts, report, _, _ = run_verifier(app.test_client())
    if honest:
        assert not report.failed, details(report)
        assert "1 voided before their postponed or cancelled match was played" in details(report)
    else:
        assert verdicts["outcomes"] == "FAIL", details(report)
        assert (
            f"pick {pick.id}: its outcome records the match's status as {voided_by}, "
            f"/api/matches/{match.id} shows finished" in details(report)
        )


def test_each_settled_pick_says_which_closing_line_it_used(app, clock):
    """A match whose source gives no closing price closes on the service's own line (the
    latest price seen before kick-off: ``seen``); one with the source's closing columns on
    those (``source``). The pick, its card and its outcome entry say which; a source's closing
    price arriving later replaces the service's line, marked as the source's."""
    kickoff = T0 + timedelta(days=1)
    with app.app_context():
        own = fixture("Tau", "Upsilon", kickoff)
        theirs = fixture("Phi", "Chi", kickoff)
        quotes = [OddsRecord(*quote) for quote in ODDS]
        prices.record({own.id: quotes, theirs.id: quotes}, "football-data", T0)
        moved = [OddsRecord("pinnacle", "1x2", "home", 3.0), *quotes[1:]]
        prices.record({own.id: moved}, "football-data", T0 + timedelta(hours=6))
        picks = {match.id: live_pick(match, "1x2", "home", 2.9, "B", T0) for match in (own, theirs)}
        publish([own.id, theirs.id], T0)
        factories.match("Tau", "Upsilon", kickoff=kickoff, status="finished", goals=(1, 0))
        result(theirs, (1, 0))  # with the source's closing columns
        closed_at = kickoff + timedelta(hours=3)
        assert prices.close(closed_at) == {own.id}
        lines = {
            row.match_id: row.closing_line
            for row in OddsQuote.select().where(OddsQuote.is_closing & (OddsQuote.market == "1x2"))
        }
        assert lines == {own.id: "seen", theirs.id: "source"}
        settling.run(7, factories.settings(), now=closed_at)
        mine, source = (Pick.get_by_id(picks[match.id].id) for match in (own, theirs))
        assert (mine.closing_odds, mine.closing_line) == (3.0, "seen")
        assert (source.closing_odds, source.closing_line) == (2.8, "source")
        outcomes = {
            found["pickId"]: found for found in stored_entries() if found["type"] == "pick.settled"
        }
        assert outcomes[mine.id]["closingLine"] == "seen"
        assert outcomes[source.id]["closingLine"] == "source"
        clock.now = closed_at
        factories.match("Tau", "Upsilon", kickoff=kickoff, goals=(1, 0), odds=CLOSING)
        assert {
            row.closing_line
            for row in OddsQuote.select().where(
                OddsQuote.is_closing & (OddsQuote.match == own.id) & (OddsQuote.market == "1x2")
            )
        } == {"source"}
        assert Pick.get_by_id(mine.id).closing_line == "seen"  # a settled pick never changes
    client = app.test_client()
    for match_id, line in ((own.id, "seen"), (theirs.id, "source")):
        (pick,) = client.get(f"/api/matches/{match_id}").get_json()["picks"]
        assert pick["closingLine"] == line
    _verdicts, report, _, _ = run_verifier(client)
    assert not report.failed, details(report)


def test_red_when_an_outcome_names_no_closing_line_for_its_closing_price(app, clock):
    """An outcome with a closing price names the closing line it is (the source's, or the
    service's own); one that names none, or an unknown one, fails."""
    with app.app_context():
        match = fixture("Rho", "Sigma", T0 + timedelta(days=1))
        pick = live_pick(match, "1x2", "home", 2.6, "B", T0)
        publish([match.id], T0)
        result(match, (2, 0))
        settled_at = T0 + timedelta(days=1, hours=4)
        settling.run(7, factories.settings(), now=settled_at)
        (entry,) = [found for found in stored_entries() if found["type"] == "pick.settled"]
        assert entry["closingLine"] == "source" and entry["closingOdds"] is not None
        assert Pick.get_by_id(pick.id).closing_line == "source"
        clock.now = settled_at
    client = app.test_client()
    _verdicts, report, _, _ = run_verifier(client)
    assert not report.failed, details(report)
    with app.app_context():
        drop_append_only_triggers()
        row = LedgerEntry.get(LedgerEntry.kind == "pick.settled")
        body = entries.canonical({**json.loads(row.body), "closingLine": "mine"})
        LedgerEntry.delete().where(LedgerEntry.position == row.position).execute()
        LedgerCheckpoint.delete().where(LedgerCheckpoint.size > row.position).execute()
        LedgerNode.delete().execute()
        signed_log._append([row.kind], [row.pick_id], [body], settled_at)
        signed_log.checkpoint(settled_at, factories.settings())
    verdicts, report, _, _ = run_verifier(client)
    assert verdicts["outcomes"] == "FAIL", details(report)
    assert f"pick {pick.id}'s closing line mine does not name" in details(report)


def test_red_when_a_closing_probability_is_raised(app, clock):
    client, key, saved = honest_run(app, clock)
    with app.app_context():
        pick = Pick.select().where(Pick.is_live & (Pick.status == "lost")).first()
        Pick.update(closing_probability=pick.closing_probability + 0.15).where(
            Pick.id == pick.id
        ).execute()
    verdicts, report, _, _ = run_verifier(client, key, saved)
    assert report.failed and verdicts["track record"] == "FAIL", details(report)
    assert "avgClosingEv is" in details(report)


def test_an_outcome_written_before_outcomes_recorded_the_match_still_verifies(app, clock):
    """An outcome in the form written before (status, profit, closing odds and CLV only)
    keeps its bytes and verifies; the verifier judges it on what /api/matches/{id} shows."""
    with app.app_context():
        match = fixture("Nu", "Xi", T0 + timedelta(days=1))
        pick = live_pick(match, "1x2", "away", 2.7, "B", T0)
        publish([match.id], T0)
        result(match, (0, 1))
        settled_at = T0 + timedelta(days=1, hours=4)
        Pick.update(status="won", profit=1.7, settled_at=settled_at).where(
            Pick.id == pick.id
        ).execute()
        seal = LedgerSeal.get(LedgerSeal.pick_id == pick.id)
        old = entries.canonical(
            {
                "type": "pick.settled",
                "pickId": pick.id,
                "published": seal.published_hash,
                "status": "won",
                "profit": "1.7",
                "closingOdds": None,
                "clv": None,
                "settledAt": entries.instant(settled_at),
            }
        )
        signed_log._append([entries.SETTLED], [pick.id], [old], settled_at)
        signed_log.checkpoint(settled_at, factories.settings())
        clock.now = settled_at
    client = app.test_client()
    verdicts, report, _, _ = run_verifier(client)
    assert not report.failed, details(report)
    assert "judged on its answer" in details(report)
    assert "avgClosingEv not compared" in details(report)
    with app.app_context():  # the score then edited: the old outcome no longer follows
        Match.update(home_goals=2).where(Match.id == match.id).execute()
    verdicts, report, _, _ = run_verifier(client)
    assert verdicts["outcomes"] == "FAIL", details(report)
    assert f"pick {pick.id} is won, but its match finished 2-1 makes it lost" in details(report)


def withholding(fetch):
    """A fetcher whose server withholds every reveal."""

    def fetch_withheld(path, authorized=False):
        status, body = fetch(path, authorized)
        if path.startswith("/api/track-record/ledger/entries"):
            body = {**body, "items": [{**item, "reveal": None} for item in body["items"]]}
        return status, body

    return fetch_withheld


def test_withheld_reveals_are_a_verdict(app, clock):
    client = app.test_client()
    with app.app_context():
        picks = history(clock)
    report, _, _ = verifier.verify(withholding(client_fetcher(client)), None, [], out=io.StringIO())
    verdicts = {name: verdict for verdict, name, _ in report.verdicts}
    assert verdicts["reveals"] == verdicts["outcomes"] == verdicts["track record"] == "FAIL"
    assert f"pick {picks[0].id} is settled but its reveal is withheld" in details(report)


# Whatever a server answers, the verifier gives a verdict


def recording(fetch, answers):
    """A fetcher that keeps every answer it reads (path → (status, body))."""

    def fetch_recorded(path, authorized=False):
        answers[path] = fetch(path, authorized)
        return answers[path]

    return fetch_recorded


def _items(body, change):
    return {**body, "items": [change(item) for item in body["items"]]}


def _figures_as_text(body):
    return _items(body, lambda item: {name: str(value) for name, value in item.items()})


#: Ways of answering badly: path → (status, bytes) from the honest (status, JSON).
BROKEN = {
    "not json": lambda path, status, body: (200, b"<html>oops</html>"),
    "cut short": lambda path, status, body: (200, json.dumps(body).encode()[:40]),
    "null": lambda path, status, body: (200, b"null"),
    "a list": lambda path, status, body: (200, b"[1, 2, 3]"),
    "too deep": lambda path, status, body: (200, b"[" * 100_000 + b"]" * 100_000),
    "errors": lambda path, status, body: (500, b"boom"),
    "head of wrong types": lambda path, status, body: (
        (200, json.dumps({**body, "signedNote": 42, "size": "7"}).encode())
        if path == "/api/track-record/ledger"
        else (status, json.dumps(body).encode())
    ),
    "entries without fields": lambda path, status, body: (
        status,
        json.dumps(
            _items(body, lambda item: {"index": item["index"]}) if "/entries" in path else body
        ).encode(),
    ),
    "entries not objects": lambda path, status, body: (
        status,
        json.dumps({**body, "items": [1, "two", None]} if "/entries" in path else body).encode(),
    ),
    "checkpoints garbage": lambda path, status, body: (
        status,
        json.dumps(
            {**body, "checkpoints": [{"size": "x", "signedNote": []}]}
            if "/entries" in path
            else body
        ).encode(),
    ),
    "reveals withheld": lambda path, status, body: (
        status,
        json.dumps(
            _items(body, lambda item: {**item, "reveal": None}) if "/entries" in path else body
        ).encode(),
    ),
    "reveals garbage": lambda path, status, body: (
        status,
        json.dumps(
            _items(body, lambda item: {**item, "reveal": {"salt": "zz", "pick": 7}})
            if "/entries" in path
            else body
        ).encode(),
    ),
    "matches of wrong types": lambda path, status, body: (
        status,
        json.dumps(
            {"kickoffAt": 5, "status": [], "score": {"home": "2"}}
            if path.startswith("/api/matches/")
            else body
        ).encode(),
    ),
    "matches gone": lambda path, status, body: (
        (404, b"") if path.startswith("/api/matches/") else (status, json.dumps(body).encode())
    ),
    "figures as text": lambda path, status, body: (
        status,
        json.dumps(_figures_as_text(body) if "by-competition-type" in path else body).encode(),
    ),
    "proofs of wrong types": lambda path, status, body: (
        status,
        json.dumps({**body, "hashes": "zz"} if "/proof" in path else body).encode(),
    ),
}


@contextlib.contextmanager
def serving(answers: dict, breaking):
    """A real HTTP server on loopback answering ``answers`` as ``breaking`` bends them (and
    hanging up on anything it was not told of)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path not in answers:
                self.close_connection = True
                return  # no answer at all
            status, body = breaking(self.path, *answers[self.path])
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": SHUTDOWN_POLL}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_no_server_answer_makes_the_verifier_raise(app, clock, tmp_path, capsys):
    client = app.test_client()
    with app.app_context():
        history(clock)
    answers = {}
    report, _, _ = verifier.verify(
        recording(client_fetcher(client), answers), None, [], out=io.StringIO()
    )
    assert not report.failed, details(report)
    assert any(path.startswith("/api/matches/") for path in answers)
    saved = tmp_path / "checkpoints.json"
    for name, breaking in BROKEN.items():
        with serving(answers, breaking) as base:
            code = verifier.main([base, "--checkpoints", str(saved), "--no-save"])
        out = capsys.readouterr().out
        assert code == 1, (name, out)
        assert "\nFAIL " in "\n" + out, (name, out)
        assert "Traceback" not in out


def settled_home_handicap(line, goals, closing_line, closing_prices) -> Pick:
    """A live pick of the home side at ``line`` (2.1 at Pinnacle, rated B), published at T0 for
    Alpha v Beta the day after, then the match finished at ``goals`` with the Asian handicap
    closing at ``closing_line`` (home and away ``closing_prices``) and settled."""
    match = fixture("Alpha", "Beta", T0 + timedelta(days=1))
    pick = factories.pick(
        match, "ah", "home", 2.1, "pinnacle", line=line, is_live=True, rating="B", created_at=T0
    )
    assert publish([match.id], T0) == 1
    home, away = closing_prices
    factories.match(
        "Alpha",
        "Beta",
        kickoff=match.kickoff_at,
        status="finished",
        goals=goals,
        odds=[
            *CLOSING,
            ("pinnacle", "ah", "home", home, True, closing_line),
            ("pinnacle", "ah", "away", away, True, closing_line),
        ],
    )
    settling.run(7, factories.settings(), now=T0 + timedelta(days=1, hours=6))
    return pick


def test_a_quarter_line_handicap_pick_half_wins_through_the_ledger_and_the_verifier(app, clock):
    """An Asian handicap pick on the home side at −0.75, published before kick-off; the home side
    wins by one goal: half the stake wins at −0.5, half is refunded at −1 (profit (odds − 1) ÷ 2).
    The line is sealed in the published entry's commitment and written in the outcome, which says
    half-won; the verifier, settling the line itself, is green, and red once the stored pick's
    line is edited."""
    client = app.test_client()
    with app.app_context():
        pick = settled_home_handicap(-0.75, (2, 1), -0.75, (1.95, 1.95))
        stored = Pick.get_by_id(pick.id)
        assert (stored.status, stored.profit) == ("half-won", pytest.approx(0.55))
        # The close quotes the pick's own line: its price and fair probability (½ here).
        assert (stored.closing_odds, stored.closing_probability) == (1.95, pytest.approx(0.5))
        published, outcome = (body for body in stored_entries() if body.get("pickId") == pick.id)
        # The line is part of the sealed pick: public in the outcome, not before kick-off.
        assert published["type"] == "pick.published" and "line" not in published
        assert (outcome["status"], outcome["line"]) == ("half-won", "-0.75")
        clock.now = T0 + timedelta(days=1, hours=6)
    _verdicts, report, key, latest = run_verifier(client)
    assert not report.failed, details(report)

    with app.app_context():
        Pick.update(line=-0.25).where(Pick.id == pick.id).execute()
    verdicts, report, _, _ = run_verifier(client, key.text, [latest.note])
    assert verdicts["reveals"] == "FAIL", details(report)
    assert f"pick {pick.id}'s reveal does not open its commitment" in details(report)


def test_a_handicap_pick_whose_line_moved_is_valued_at_its_own_line(app, clock):
    """An Asian handicap pick at −0.25 whose close quotes −0.5 only: there is no closing price
    at the pick's line (no closing odds, CLV or closing line named), and its fair closing
    probability is the closing line's carried to −0.25 through the score model of the close
    (higher for the home side: it gives a quarter goal less). The verifier agrees."""
    client = app.test_client()
    with app.app_context():
        pick = settled_home_handicap(-0.25, (1, 1), -0.5, (2.0, 1.9))
        stored = Pick.get_by_id(pick.id)
        # A draw at −0.25: half lost at −0.5, half refunded at 0.
        assert (stored.status, stored.profit) == ("half-lost", -0.5)
        assert (stored.closing_odds, stored.clv, stored.closing_line) == (None, None, None)
        at_half = 1.9 ** (-1) / (1.9 ** (-1) + 2.0 ** (-1))  # about the home side's, de-margined
        assert 1.0 - at_half < stored.closing_probability < 1.0
        outcome = stored_entries()[-1]
        assert (outcome["status"], outcome["line"], outcome["closingOdds"]) == (
            "half-lost",
            "-0.25",
            None,
        )
        clock.now = T0 + timedelta(days=1, hours=6)
    _verdicts, report, _key, _latest = run_verifier(client)
    assert not report.failed, details(report)
