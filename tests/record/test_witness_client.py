"""The service as a witness's client (``services.record.witnesses``) against what a witness may
answer: the request it sends and from which size, a 409 naming another size (once, twice, a
larger one), a 409 that is not a size, refusals, garbage, a cosignature among other lines or past
what is read, a witness that does not answer in time; each witness's standing; and the keys,
cosignature lines and time-stamps it reads, at their edges. The witness is ``tools/witness.py``
on loopback, answering as each test scripts it (``tests.witness_servers.ScriptedWitness``)."""

import base64
import contextlib
import struct
from datetime import UTC, datetime, timedelta

import pytest

from engine.ledger import merkle, notes
from models import LedgerCheckpoint, LedgerCosignature, data_version
from services.record import log_reading, signed_log, witnesses
from store.database import db
from tests import factories
from tests.helpers import LEDGER_KEY
from tests.witness_servers import ScriptedWitness, load_witness_tool

tool = load_witness_tool()
LOG = notes.parse_signing_key(LEDGER_KEY)
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
#: The witnesses' clock (their cosignatures' time).
WITNESS_TIME = int(T0.timestamp()) + 30
SIZE_TYPE = "text/x.tlog.size"


@contextlib.contextmanager
def scripted(tmp_path, *names):
    """Witnesses of this log named ``names``, each answering as the test scripts it: yields
    them in that order."""
    with contextlib.ExitStack() as stack:
        yield [
            stack.enter_context(
                ScriptedWitness(
                    tmp_path / f"{name}.json", [LOG.verifier_key], name, lambda: WITNESS_TIME
                )
            )
            for name in names
        ]


def configured(found) -> str:
    return ",".join(f"{witness.vkey}@{witness.url}" for witness in found)


def grow(size: int, now=T0) -> LedgerCheckpoint:
    """Entries up to ``size`` (stand-ins: the witnesses see only checkpoints) and their signed
    checkpoint, committed; returns it."""
    start = log_reading.size()
    bodies = [b'{"n":%d}' % position for position in range(start, size)]
    with db.atomic():
        signed_log._append(["pick.published"] * len(bodies), list(range(start, size)), bodies, now)
        signed_log.checkpoint(now, factories.settings())
    return LedgerCheckpoint.get(LedgerCheckpoint.size == size)


def ask(now=T0) -> int:
    return witnesses.ask(factories.settings(), now, log_reading.stored_hashes)


def answer_of(witness, size) -> tuple[str | None, str | None]:
    """``(signature line, error)`` stored for ``witness``'s answer at ``size``."""
    row = LedgerCosignature.get(
        (LedgerCosignature.witness == witness.vkey) & (LedgerCosignature.size == size)
    )
    return row.signature, row.error


def proof_lines(old: int, new: int) -> bytes:
    return b"".join(
        base64.b64encode(value) + b"\n"
        for value in merkle.consistency_proof(old, new, log_reading.stored_hashes)
    )


def cosigned(witness, with_lines=b"", wait=0.0):
    """A scripted answer: ``witness``'s real cosignature after ``with_lines``, ``wait`` seconds
    late."""
    return lambda body: (
        200,
        "text/plain",
        with_lines + witness.witness.add_checkpoint(body).encode(),
        wait,
    )


def test_the_checkpoint_is_sent_from_the_size_the_witness_cosigned_with_its_proof(
    make_app, tmp_path, caplog
):
    with scripted(tmp_path, "w1.example") as (w1,):
        app = make_app(LEDGER_WITNESSES=configured([w1]))
        with app.app_context():
            first = grow(1)
            before = data_version()
            assert ask() == 1
            assert data_version() > before  # the checkpoints' answers now carry its line
            method, path, headers, body = w1.requests[0]
            assert (method, path) == ("POST", "/add-checkpoint")
            assert headers["Content-Type"] == "text/plain; charset=utf-8"
            assert body == b"old 0\n\n" + first.signed_note.encode()  # no proof from 0
            line, error = answer_of(w1, 1)
            assert error is None and line.startswith("\u2014 w1.example ")
            row = LedgerCosignature.get()
            assert row.cosigned_at == datetime.fromtimestamp(WITNESS_TIME, UTC)
            assert row.asked_at == T0
            assert ask() == 0  # answered: not asked again
            later = grow(5, T0 + timedelta(hours=1))
            assert ask(T0 + timedelta(hours=1)) == 1
            assert w1.bodies()[1] == b"old 1\n" + proof_lines(1, 5) + b"\n" + (
                later.signed_note.encode()
            )
            assert proof_lines(1, 5).count(b"\n") == 3
            assert answer_of(w1, 5)[1] is None
            assert witnesses.cosigned_note(later) == later.signed_note + answer_of(w1, 5)[0]
    assert [record for record in caplog.records if record.name == "picks.ledger"] == []


def test_a_409_naming_another_size_is_followed_once(make_app, tmp_path):
    with scripted(tmp_path, "w1.example") as (w1,):
        app = make_app(LEDGER_WITNESSES=configured([w1]))
        with app.app_context():
            # The witness cosigned size 2 for someone else: asked from 0, it names 2.
            two = grow(2)
            w1.witness.add_checkpoint(b"old 0\n\n" + two.signed_note.encode())
            three = grow(3)
            assert ask() == 1
            assert w1.bodies() == [
                b"old 0\n\n" + three.signed_note.encode(),
                b"old 2\n" + proof_lines(2, 3) + b"\n" + three.signed_note.encode(),
            ]
            assert answer_of(w1, 3)[1] is None
            # Named twice: given up after the second request.
            w1.script += [(409, SIZE_TYPE, b"1\n", 0), (409, SIZE_TYPE, b" 2 \n", 0)]
            grow(4)
            assert ask() == 1 and len(w1.requests) == 4
            assert w1.bodies()[3].startswith(b"old 1\n")
            assert answer_of(w1, 4) == (
                None,
                "the witness answered 409 twice (its size moved to 2)",
            )
            # A size larger than the checkpoint's: another tree under this log's name.
            w1.script.append((409, SIZE_TYPE, b"9\n", 0))
            grow(5)
            assert ask() == 1 and len(w1.requests) == 5
            assert answer_of(w1, 5)[1] == (
                "the witness has cosigned 9 entries, more than this checkpoint's 5: it saw "
                "another tree under this log's name"
            )
            # It cosigned this very checkpoint for someone else: asked again from its size,
            # with no proof.
            six = grow(6)
            w1.witness.add_checkpoint(
                b"old 3\n" + proof_lines(3, 6) + b"\n" + six.signed_note.encode()
            )
            assert ask() == 1
            assert w1.bodies()[-2].startswith(b"old 3\n")
            assert w1.bodies()[-1] == b"old 6\n\n" + six.signed_note.encode()
            assert answer_of(w1, 6)[1] is None


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        # a 409 that is not a size is a refusal
        ((409, "text/plain", b"1\n", 0), "the witness answered 409: 1"),
        ((409, SIZE_TYPE, b"one\n", 0), "the witness answered 409: one"),
        # a size in any other answer too
        ((500, SIZE_TYPE, b"1\n", 0), "the witness answered 500: 1"),
        ((422, "text/plain", b"not consistent\n", 0), "the witness answered 422: not consistent"),
        ((422, "text/plain", b"x" * 400, 0), "the witness answered 422: " + "x" * 300),
        ((422, "text/plain", b"bad \xff\xfe\n", 0), "the witness answered 422: bad \ufffd\ufffd"),
        ((200, "text/plain", b"hello\n", 0), "no cosignature by w1.example verifies in its answer"),
        ((200, "text/plain", b"", 0), "no cosignature by w1.example verifies in its answer"),
    ],
)
def test_refusals_and_garbage_are_stored_as_the_witnesss_answer(
    make_app, tmp_path, caplog, answer, error
):
    with scripted(tmp_path, "w1.example") as (w1,):
        app = make_app(LEDGER_WITNESSES=configured([w1]))
        with app.app_context():
            grow(1)
            w1.script.append(answer)
            before = data_version()
            assert ask() == 1
            assert len(w1.requests) == 1
            assert answer_of(w1, 1) == (None, error)
            assert LedgerCosignature.get().cosigned_at is None
            assert data_version() == before  # nothing new to serve
    assert [record.getMessage() for record in caplog.records if record.name == "picks.ledger"] == [
        f"witness w1.example did not cosign size 1: {error}"
    ]


def test_a_cosignature_is_found_among_other_lines_but_not_past_64_kib(make_app, tmp_path):
    with scripted(tmp_path, "w1.example", "w2.example") as (w1, w2):
        app = make_app(LEDGER_WITNESSES=configured([w1]))
        with app.app_context():
            one = grow(1)
            other = w2.witness.add_checkpoint(b"old 0\n\n" + one.signed_note.encode())
            w1.script.append(cosigned(w1, b"no signature here\n" + other.encode()))
            assert ask() == 1
            line, error = answer_of(w1, 1)
            assert error is None and line.startswith("\u2014 w1.example ") and line.endswith("\n")
            assert (
                witnesses.configured(factories.settings())[0].verify(
                    notes.split_note(one.signed_note)[0], line
                )
                == WITNESS_TIME
            )
            grow(2)
            w1.script.append(cosigned(w1, b"x" * 65_535 + b"\n"))  # the line starts at 64 KiB
            assert ask() == 1
            assert answer_of(w1, 2) == (None, "no cosignature by w1.example verifies in its answer")


def test_a_witness_that_answers_too_late_is_recorded_as_not_answering(make_app, tmp_path):
    with scripted(tmp_path, "w1.example") as (w1,):
        app = make_app(LEDGER_WITNESSES=configured([w1]), LEDGER_WITNESS_TIMEOUT=0.2)
        with app.app_context():
            grow(1)
            w1.script.append(cosigned(w1, wait=1.0))
            assert ask() == 1
            assert answer_of(w1, 1) == (None, "the witness did not answer: timed out")


def test_each_witness_is_asked_from_the_largest_size_it_cosigned_itself(make_app, tmp_path):
    with scripted(tmp_path, "w1.example", "w2.example") as (w1, w2):
        app = make_app(LEDGER_WITNESSES=configured([w1, w2]))
        with app.app_context():
            grow(1)
            assert ask() == 2
            grow(2)
            w2.script.append((422, "text/plain", b"no\n", 0))
            before = data_version()
            assert ask() == 2
            assert data_version() > before  # w1's line is new, whatever w2 answered after
            grow(3)
            w1.script.append((503, "text/plain", b"busy\n", 0))
            assert ask() == 2
            # w1 cosigned 1 and 2; w2 only 1 (its refusal at 2 counts for nothing, nor w1's 2)
            assert [body.split(b"\n")[0] for body in w1.bodies()] == [b"old 0", b"old 1", b"old 2"]
            assert [body.split(b"\n")[0] for body in w2.bodies()] == [b"old 0", b"old 1", b"old 1"]
            assert answer_of(w2, 3)[1] is None and answer_of(w1, 3)[1] == (
                "the witness answered 503: busy"
            )
            # The standing of each: its largest cosigned size, how long ago it was asked that,
            # its latest answer's error.
            standing = witnesses.standing(factories.settings(), T0 + timedelta(seconds=90))
            assert standing == [
                {
                    "name": "w1.example",
                    "size": 2,
                    "age_seconds": 90,
                    "error": "the witness answered 503: busy",
                },
                {"name": "w2.example", "size": 3, "age_seconds": 90, "error": None},
            ]
            assert [entry["age_seconds"] for entry in witnesses.standing(app.config, T0)] == [0, 0]


def test_a_witness_never_asked_has_no_standing_yet(make_app, tmp_path):
    with scripted(tmp_path, "w1.example") as (w1,):
        app = make_app(LEDGER_WITNESSES=configured([w1]))
        with app.app_context():
            assert witnesses.standing(factories.settings(), T0) == [
                {"name": "w1.example", "size": None, "age_seconds": None, "error": None}
            ]
            assert ask() == 0  # no checkpoint yet
            assert witnesses.cosigned_note({"size": 0, "signed_note": None}) is None


# Keys, lines and time-stamps at their edges

REMORA_KEY = "remora.n621.de+da77ade7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("remora.n621.de+da77ade7", "a witness key is name+hash+base64: "),
        (REMORA_KEY + "!", "a witness key ends in base64: "),  # not ignored
        (REMORA_KEY[:-4] + "AAAA", "the witness key's hash does not match its name and key"),
        # 33 bytes of type 0x01 (a log's key); 32 bytes of type 0x04
        ("a+00000000+" + base64.b64encode(b"\x01" + bytes(32)).decode(), "an Ed25519 cosignature"),
        ("a+00000000+" + base64.b64encode(b"\x04" + bytes(31)).decode(), "an Ed25519 cosignature"),
    ],
)
def test_a_malformed_witness_key_is_refused_saying_why(text, message):
    with pytest.raises(witnesses.CosignatureError) as refused:
        witnesses.Witness.parse(text)
    if message.endswith(": "):
        assert str(refused.value) == f"{message}{text!r}"
    elif message.startswith("an "):
        assert str(refused.value) == f"a witness key is {message} key (type 0x04)"
    else:
        assert str(refused.value) == message


def test_a_witness_keeps_its_url_without_the_trailing_slash():
    assert witnesses.Witness.parse(REMORA_KEY).url == ""
    assert (
        witnesses.Witness.parse(REMORA_KEY, "https://w.example/WX/").url == "https://w.example/WX"
    )


def cosignature(timestamp: int, key=None) -> bytes:
    """A cosignature's bytes at ``timestamp`` (the signature's bytes arbitrary)."""
    return (key or b"\x00" * 4) + struct.pack(">Q", timestamp) + b"\x07" * 64


@pytest.mark.parametrize("timestamp", [1, 1_700_000_000, (1 << 63) - 1])
def test_a_cosignatures_time_is_above_zero_and_below_2_to_the_63(timestamp):
    assert witnesses.cosignature_time(cosignature(timestamp)) == timestamp


@pytest.mark.parametrize(
    ("blob", "message"),
    [
        (cosignature(0), "a cosignature's timestamp is not zero and below 2^63"),
        (cosignature(1 << 63), "a cosignature's timestamp is not zero and below 2^63"),
        (cosignature((1 << 64) - 1), "a cosignature's timestamp is not zero and below 2^63"),
        (cosignature(5)[:-1], "a cosignature/v1 is a key ID, a timestamp and a signature"),
        (cosignature(5) + b"\x00", "a cosignature/v1 is a key ID, a timestamp and a signature"),
    ],
)
def test_a_cosignatures_bytes_are_checked_saying_why(blob, message):
    with pytest.raises(witnesses.CosignatureError) as refused:
        witnesses.cosignature_time(blob)
    assert str(refused.value) == message


def test_a_cosignature_line_is_checked_saying_why():
    key = tool.WitnessKey.generate("w1.example")
    other = tool.WitnessKey.generate("w1.example")  # the same name, another key
    witness = witnesses.Witness.parse(key.verifier_key)
    text = "log.example\n1\n" + base64.b64encode(bytes(32)).decode() + "\n"
    line = key.cosign(text, WITNESS_TIME)
    assert witness.verify(text, line) == WITNESS_TIME
    blob = line.split(" ")[2]
    for bad, message in (
        (line[:-1], "a signature line is an em dash, a name and base64, and a newline"),
        ("-" + line[1:], "a signature line is an em dash, a name and base64, and a newline"),
        (f"\u2014 w1.example {blob[:8]}!{blob[8:]}", "a signature is not base64"),
        (f"\u2014 w1.example {blob[:8]} {blob[8:]}", "a signature is not base64"),
        (other.cosign(text, WITNESS_TIME), f"not a signature by w1.example+{key.key_id.hex()}"),
        (line.replace("w1.example", "w2.example"), "not a signature by w1.example+"),
        (key.cosign(text + "x\n", WITNESS_TIME), "the cosignature by w1.example does not verify"),
    ):
        with pytest.raises(witnesses.CosignatureError) as refused:
            witness.verify(text, bad)
        assert str(refused.value).startswith(message), bad


def test_the_cosignature_lines_follow_the_note_in_the_order_of_the_witnesses_keys(
    make_app, tmp_path
):
    with scripted(tmp_path, "w1.example", "w2.example") as (w1, w2):
        app = make_app(LEDGER_WITNESSES=configured([w2, w1]))  # w2 asked first
        with app.app_context():
            one = grow(1)
            assert ask() == 2
            two = grow(2)
            w1.script.append((422, "text/plain", b"no\n", 0))
            assert ask() == 2
            grow(3)
            lines = witnesses.cosignature_lines([1, 2, 7])
            assert lines == {
                1: answer_of(w1, 1)[0] + answer_of(w2, 1)[0],
                2: answer_of(w2, 2)[0],  # w1 refused it
            }
            assert witnesses.cosigned_note(one) == one.signed_note + lines[1]
            record = {"size": 2, "signed_note": two.signed_note}
            assert witnesses.cosigned_note(record) == two.signed_note + lines[2]
            assert witnesses.cosigned_note(record, {}) == two.signed_note
            assert witnesses.cosigned_note(LedgerCheckpoint.get(LedgerCheckpoint.size == 3)) == (
                LedgerCheckpoint.get(LedgerCheckpoint.size == 3).signed_note
            )


def test_a_witness_configured_later_is_asked_the_checkpoint_the_others_cosigned(make_app, tmp_path):
    with scripted(tmp_path, "w1.example", "w2.example") as (w1, w2):
        app = make_app(LEDGER_WITNESSES=configured([w1]))
        with app.app_context():
            grow(1)
            assert ask() == 1
        app.config["LEDGER_WITNESSES"] = ((w1.vkey, w1.url), (w2.vkey, w2.url))
        with app.app_context():
            assert ask() == 1  # w2 only
            assert (len(w1.requests), len(w2.requests)) == (1, 1)
            assert answer_of(w2, 1)[1] is None
