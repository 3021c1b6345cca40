"""Witnesses cosigning the ledger: each new checkpoint sent to the witnesses configured, once the
transaction that signed it has committed; their cosignatures stored, append-only, and served
with the checkpoint; a witness that knows another size resynced; a log forked for one witness
refused by the others, and failing the verifier's quorum. The witnesses are ``tools/witness.py``
serving real HTTP on loopback."""

import contextlib
import io
import sqlite3
from datetime import UTC, datetime, timedelta

import pytest
from peewee import DatabaseError

from engine.ledger import entries, merkle, notes
from models import LedgerCheckpoint, LedgerCosignature
from services.operations import health
from services.record import log_reading, settling, signed_log, witnesses
from store.database import db, is_sqlite
from tests import factories
from tests.helpers import LEDGER_KEY
from tests.verifier import client_fetcher, load_verifier
from tests.witness_servers import post, witnessing

verifier = load_verifier()
LOG = notes.parse_signing_key(LEDGER_KEY)
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
#: The witnesses' clock (their cosignatures' time): fixed, as the app's is.
WITNESS_TIME = int(T0.timestamp()) + 30
ODDS = [
    ("pinnacle", "1x2", "home", 2.9, False),
    ("pinnacle", "1x2", "draw", 3.4, False),
    ("pinnacle", "1x2", "away", 2.6, False),
]


class Clock:
    """The app's clock, moved by the tests."""

    def __init__(self, now):
        self.now = now

    def __call__(self):
        return self.now


@contextlib.contextmanager
def two_witnesses(tmp_path, probe=None, at=None):
    """Witnesses w1 and w2 of this log (their clock ``at()``, else :data:`WITNESS_TIME`): yields
    ``{name: (url, witness)}``."""

    def clock():
        if probe is not None:
            probe()
        return WITNESS_TIME if at is None else at()

    with (
        witnessing(tmp_path / "w1.json", [LOG.verifier_key], name="w1.example", clock=clock) as one,
        witnessing(tmp_path / "w2.json", [LOG.verifier_key], name="w2.example", clock=clock) as two,
    ):
        yield {"w1": one, "w2": two}


def setting(found, *names) -> str:
    """``LEDGER_WITNESSES`` naming the witnesses ``names`` of ``found``."""
    return ",".join(f"{found[name][1].key.verifier_key}@{found[name][0]}" for name in names)


def publish_one(home, clock):
    """A live pick stored and published, its checkpoint signed in that transaction, then the
    witnesses asked (as every operation that appends does); returns the pick."""
    match = factories.match(
        home, f"{home} Away", kickoff=clock.now + timedelta(days=1), status="scheduled", odds=ODDS
    )
    pick = factories.pick(match, "1x2", "home", 2.9, is_live=True, rating="B", created_at=clock.now)
    with db.atomic():
        signed_log.publish_new([match.id], clock.now, "test-1")
        signed_log.checkpoint(clock.now, factories.settings())
    signed_log.stamp(factories.settings(), clock.now)
    return pick


def answers() -> dict:
    """``{(witness name, size): (cosigned?, error)}`` of the stored answers."""
    return {
        (row.witness.split("+")[0], row.size): (row.signature is not None, row.error)
        for row in LedgerCosignature.select()
    }


def verdict(client, *names, quorum, found):
    """The verifier's witness verdict and detail under a policy of ``names``."""
    policy = verifier.policy_of([found[name][1].key.verifier_key for name in names], quorum)
    report, _, _ = verifier.verify(
        client_fetcher(client), None, [], out=io.StringIO(), policy=policy
    )
    (line,) = [(v, detail) for v, name, detail in report.verdicts if name == "witnesses"]
    others = [(v, name) for v, name, _ in report.verdicts if v == "FAIL" and name != "witnesses"]
    assert others == []
    return line


def database_free(app) -> bool:
    """Whether another connection may write the database now (no transaction holds it)."""
    path = app.config["DATABASE_URL"].removeprefix("sqlite:///")
    probe = sqlite3.connect(path, timeout=0)
    try:
        probe.execute("BEGIN IMMEDIATE")
        probe.rollback()
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        probe.close()


def test_checkpoints_are_cosigned_after_the_commit_and_served_with_the_note(make_app, tmp_path):
    free, app = [], None
    probe = (lambda: free.append(database_free(app))) if is_sqlite() else None
    with two_witnesses(tmp_path, probe) as found:
        clock = Clock(T0)
        app = make_app(CLOCK=clock, LEDGER_WITNESSES=setting(found, "w1", "w2"))
        with app.app_context():
            publish_one("Alpha", clock)
            clock.now += timedelta(hours=2)
            publish_one("Gamma", clock)  # from size 1, with the consistency proof to 2
            assert answers() == {
                ("w1.example", 1): (True, None),
                ("w2.example", 1): (True, None),
                ("w1.example", 2): (True, None),
                ("w2.example", 2): (True, None),
            }
            # asked once: a later run leaves them be
            assert signed_log.stamp(factories.settings(), clock.now) == 0
            assert witnesses.ask(factories.settings(), clock.now, log_reading.stored_hashes) == 0
            report = health.report(factories.settings(), lambda: ("ok", "memory"), 1.0, clock.now)
        client = app.test_client()
        head = client.get("/api/track-record/ledger").get_json()
        assert head["size"] == 2
        assert [
            line.split(" ")[1] for line in head["signedNote"].split("\n\n")[1].splitlines()
        ] == [
            LOG.name,
            "w1.example",
            "w2.example",
        ]
        assert verdict(client, "w1", "w2", quorum=2, found=found) == (
            "PASS",
            "checkpoint 2 is cosigned by 2 of the 2 witnesses trusted (quorum 2): "
            "w1.example at 2026-03-01T09:00:30Z, w2.example at 2026-03-01T09:00:30Z",
        )
        # the tiles' checkpoint, which an auditor of the tiles reads, carries them too
        tiled = client.get("/api/track-record/ledger/tiles/checkpoint").get_data(as_text=True)
        assert tiled == head["signedNote"]
    # no transaction held the database while a witness answered
    assert free == ([True] * 4 if is_sqlite() else [])
    (entry,) = [entry for entry in report["services"] if entry["name"] == "witnesses"]
    assert entry["status"] == "ok"
    assert entry["detail"] == (
        "w1.example: cosigned size 2 0 minutes ago; w2.example: cosigned size 2 0 minutes ago"
    )


def test_a_witness_that_knows_a_larger_size_is_resynced_from_it(make_app, tmp_path):
    """The witness saw size 2 from someone else (another process, a monitor): the service's
    request from size 1 gets a 409 naming 2, and is made again from 2."""
    with two_witnesses(tmp_path) as found:
        clock = Clock(T0)
        app = make_app(CLOCK=clock, LEDGER_WITNESSES=setting(found, "w1"))
        with app.app_context():
            publish_one("Alpha", clock)
            with db.atomic():  # signed, not yet sent
                publish_one("Gamma", clock)
            latest = LedgerCheckpoint.get(LedgerCheckpoint.size == 2)
            proof = [bytes.fromhex(value) for value in log_reading.consistency(1, 2)["hashes"]]
            url = found["w1"][0]
            assert post(url, witnesses.request_body(1, proof, latest.signed_note))[0] == 200
            assert witnesses.ask(factories.settings(), clock.now, log_reading.stored_hashes) == 1
            assert answers()[("w1.example", 2)] == (True, None)


def fork_checkpoint(bodies, extra=()):
    """A checkpoint the operator signs over entries of their own choosing: ``(note, leaves)``."""
    leaves = [merkle.leaf_hash(body) for body in bodies]
    root = merkle.root(leaves)
    text = notes.Checkpoint(
        LOG.name, len(leaves), root, (f"time {entries.instant(T0)}", *extra)
    ).text()
    return LOG.sign(text), leaves


def fork_proof(leaves, old, new):
    """A consistency proof within the forked tree."""

    def lookup(addresses):
        return [
            merkle.root(leaves[index << level : (index + 1) << level]) for level, index in addresses
        ]

    return merkle.consistency_proof(old, new, lookup)


def test_a_log_forked_for_one_witness_fails_a_quorum_of_two(make_app, tmp_path):
    """The operator shows w2 a history of their own making first; the log everyone reads is then
    refused by w2 (it cannot be a continuation of what w2 cosigned), and the fork by w1: no view
    gathers two cosignatures, and the verifier's quorum of two fails."""
    with two_witnesses(tmp_path) as found:
        forked, fork_leaves = fork_checkpoint([b'{"a fork":1}'])
        assert post(found["w2"][0], witnesses.request_body(0, [], forked))[0] == 200
        clock = Clock(T0)
        app = make_app(CLOCK=clock, LEDGER_WITNESSES=setting(found, "w1", "w2"))
        with app.app_context():
            publish_one("Alpha", clock)
            stored = answers()
            assert stored[("w1.example", 1)] == (True, None)
            cosigned, error = stored[("w2.example", 1)]
            assert not cosigned and error.startswith("the witness answered 422")
            # the witness's 409 named size 1, then the honest tree's proof from 1 could not hold
            report = health.report(factories.settings(), lambda: ("ok", "memory"), 1.0, clock.now)
            clock.now += timedelta(hours=1)
            publish_one("Gamma", clock)
            assert answers()[("w2.example", 2)][0] is False
            assert answers()[("w1.example", 2)] == (True, None)
        client = app.test_client()
        failed, detail = verdict(client, "w1", "w2", quorum=2, found=found)
        assert failed == "FAIL"
        assert detail == (
            "checkpoint 2 is cosigned by 1 of the 2 witnesses trusted "
            "(w1.example at 2026-03-01T09:00:30Z); the policy asks 2"
        )
        assert verdict(client, "w1", "w2", quorum=1, found=found)[0] == "PASS"
        # The fork, grown, is refused by w1, which cosigned the real log
        grown, fork_leaves = fork_checkpoint([b'{"a fork":1}', b'{"a fork":2}', b'{"a fork":3}'])
        w1 = found["w1"][0]
        assert post(w1, witnesses.request_body(0, [], grown))[:3:2] == (409, "2\n")
        refused = post(w1, witnesses.request_body(2, fork_proof(fork_leaves, 2, 3), grown))
        assert refused[0] == 422 and "not consistent" in refused[2]
    (entry,) = [entry for entry in report["services"] if entry["name"] == "witnesses"]
    assert entry["status"] == "degraded"
    assert (
        "w2.example: nothing cosigned yet, then answered: the witness answered 422"
        in (entry["detail"])
    )


def test_a_witness_that_does_not_answer_is_recorded_and_none_is_asked_in_a_transaction(
    make_app, tmp_path
):
    clock = Clock(T0)
    key = witnesses.Witness.parse(
        "remora.n621.de+da77ade7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2"
    )
    app = make_app(
        CLOCK=clock, LEDGER_WITNESSES=f"{key.vkey}@http://127.0.0.1:9", LEDGER_WITNESS_TIMEOUT=2.0
    )
    with app.app_context():
        with db.atomic():
            publish_one("Alpha", clock)
            assert witnesses.ask(factories.settings(), clock.now, log_reading.stored_hashes) == 0
            assert LedgerCosignature.select().count() == 0
        assert witnesses.ask(factories.settings(), clock.now, log_reading.stored_hashes) == 1
        (row,) = LedgerCosignature.select()
        assert row.signature is None and "did not answer" in row.error
        assert row.witness == key.vkey
        head = log_reading.head(factories.settings())
        assert head["signed_note"] == LedgerCheckpoint.get().signed_note
        for statement in (
            'UPDATE "ledger_cosignature" SET "error" = NULL',
            'DELETE FROM "ledger_cosignature"',
        ):
            with pytest.raises(DatabaseError, match="append-only"), db.atomic():
                db.execute_sql(statement)


def test_the_verifier_command_refuses_a_policy_it_cannot_meet(tmp_path, capsys):
    vkey = "remora.n621.de+da77ade7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2"
    argv = ["http://127.0.0.1:9", "--checkpoints", str(tmp_path / "c.json"), "--witness", vkey]
    assert verifier.main([*argv, "--quorum", "2"]) == 1
    assert "FAIL witnesses: --quorum 2 must lie between 0 and the 1" in capsys.readouterr().out
    assert verifier.policy_of([vkey], None) == verifier.Policy((verifier.Witness.parse(vkey),), 1)
    assert verifier.policy_of(None, None) is None


def test_a_pick_cosigned_only_after_its_kick_off_is_not_live_under_a_quorum(make_app, tmp_path):
    """The witnesses' clocks, not the checkpoint's `time` line, under a policy: the operator signs
    Gamma's checkpoint dated the day before its kick-off but shows it to the witnesses (and
    every later one) only after, so no checkpoint holding Gamma was cosigned before it kicked
    off; the verifier without a policy sees nothing wrong, under a quorum its live rule fails
    the pick counted live, while Alpha, cosigned in time, stays live."""
    witness_now = [WITNESS_TIME]  # T0 + 30 s
    with two_witnesses(tmp_path, at=lambda: witness_now[0]) as found:
        clock = Clock(T0)
        app = make_app(CLOCK=clock, LEDGER_WITNESSES=setting(found, "w1", "w2"))
        with app.app_context():
            alpha = publish_one("Alpha", clock)  # kicks off at T0 + 1 day, cosigned at T0 + 30 s
            witness_now[0] = int((T0 + timedelta(days=3)).timestamp())
            clock.now = T0 + timedelta(hours=2)
            gamma = publish_one("Gamma", clock)  # kicks off at T0 + 26 h, cosigned at T0 + 3 days
            clock.now = T0 + timedelta(days=2)
            for pick in (alpha, gamma):
                factories.match(
                    pick.match.home_team.name,
                    pick.match.away_team.name,
                    kickoff=pick.match.kickoff_at,
                    goals=(2, 1),
                )
            settling.run(7, factories.settings(), now=clock.now)
        client = app.test_client()

        def verdicts(names, quorum, cache=None):
            policy = verifier.policy_of([found[n][1].key.verifier_key for n in names], quorum)
            report, _, _ = verifier.verify(
                client_fetcher(client), None, [], out=io.StringIO(), policy=policy, cache=cache
            )
            return {name: (verdict, detail) for verdict, name, detail in report.verdicts}

        honest = verdicts([], None)
        assert [name for name, (verdict, _) in honest.items() if verdict == "FAIL"] == []
        assert "cosigned before kick-off" not in honest
        for names, quorum, cache in (
            (["w1", "w2"], 2, None),
            (["w1"], 1, verifier.TileCache(tmp_path / "tiles")),  # read from the tiles
        ):
            found_verdicts = verdicts(names, quorum, cache)
            assert found_verdicts["witnesses"][0] == "PASS"  # the latest checkpoint is cosigned
            assert found_verdicts["cosigned before kick-off"] == (
                "PASS",
                f"1 of 2 picks are in a checkpoint cosigned by {quorum} of the {len(names)} "
                "witnesses trusted before their kick-off; 1 are not (none may count as live: "
                "see the live rule) (3 of 3 checkpoints vouched for by a quorum)",
            )
            verdict, detail = found_verdicts["live rule"]
            assert verdict == "FAIL"
            assert detail == (
                f"pick {gamma.id} is counted live, but it is not: not-cosigned-before-kickoff; "
                f"pick {gamma.id} (not-cosigned-before-kickoff) is not listed as set apart"
            )
            assert found_verdicts["track record"][0] == "FAIL"  # it counts Gamma
