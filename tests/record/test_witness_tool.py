"""The standalone witness (``tools/witness.py``) and the cosignature code of the service and the
verifier, checked against published vectors, not only against each other: Go's sumdb/note
signed notes, C2SP's own examples, transparency-dev's cosignature and witness test cases.

The vectors are data copied from where each comment says; no code of theirs is used."""

import ast
import base64
import concurrent.futures
import contextlib
import hashlib
import json
import subprocess
import sys
import time
import urllib.request

import pytest

import config
from engine.ledger import notes
from services.record import witnesses
from tests.verifier import load_verifier
from tests.witness_servers import SCRIPT, load_witness_tool, post, witnessing

tool = load_witness_tool()
verifier = load_verifier()

# golang.org/x/mod sumdb/note/note_test.go (TestSign, TestOpen): two keys and their signatures.
PETER_KEY = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
PETER_SECRET = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
ENOCH_KEY = "EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop"
PETER_TEXT = (
    "If you think cryptography is the answer to your problem,\n"
    "then you don't know what your problem is.\n"
)
PETER_SIG = (
    "\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdn"
    "gotpRZb6KE6RyyBwJnAM=\n"
)
ENOCH_SIG = (
    "\u2014 EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGw"
    "nWLox33WWd1RvMc+QQ=\n"
)

# c2sp.org/signed-note, "Verifier keys", Example.
FOO_KEY = "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k"
FOO_NOTE = (
    "This is an example message.\n\n\u2014 example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXpp"
    "zi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n"
)

# github.com/transparency-dev/witness witness/witness_test.go: the log "monkeys", its
# checkpoints at sizes 5 and 8, the consistency proof between them, and the witness's key.
MONKEYS_KEY = "monkeys+db4d9f7e+AULaJMvTtDLHPUcUrjdDad9vDlh/PTfC2VV60JUtCfWT"
MONKEYS_SECRET = "PRIVATE+KEY+monkeys+db4d9f7e+ATWIAF3yVBG+Hv1rZFQoNt/BaURkLPtOFMAM2HrEeIr6"
BANANAS_SECRET = "PRIVATE+KEY+bananas+cf639f13+AdjzytHoXdvn+1vG2UXXqFR3LZ+kvnmQZFretRaKfTIu"
WITNESS_SECRET = "PRIVATE+KEY+witness+f13a86db+AaLa/dfyBhyo/m0Z7WCi98ENVZWtrP8pxgRNrx7tIWiA"
M_INIT = (
    "monkeys\n5\n41smjBUiAU70EtKlT6lIOIYtRTYxYXsDB+XHfcvu/BE=\n\n\u2014 monkeys 202fftzGl3LVoqjXf"
    "wCFZZXs8I+5G22+Ek2K0AOyBuSJ/8/CZawNF+6fNlTKOCd622pbzJNkkJFWuw9DbicZCkEx9AY=\n"
)
M_NEXT = (
    "monkeys\n8\nV8K9aklZ4EPB+RMOk1/8VsJUdFZR77GDtZUQq84vSbo=\n\n\u2014 monkeys 202ffoUEboiQYpHzI"
    "CeaFmoy3RNviHTpAxYrq/eO4QQVQMvu9UebKBMX2MJC76NLthZaKsnKbCA8GxrjePZhvDCH7Ag=\n"
)
CONSISTENCY = [
    "b9e1d62618f7fee8034e4c5010f727ab24d8e4705cb296c374bf2025a87a10d2",
    "aac66cd7a79ce4012d80762fe8eec3a77f22d1ca4145c3f4cee022e7efcd599d",
    "89d0f753f66a290c483b39cd5e9eafb12021293395fad3d4a2ad053cfbcfdc9e",
    "29e40bb79c966f4c6fe96aff6f30acfce5f3e8d84c02215175d6e018a5dee833",
]

# github.com/transparency-dev/formats note/note_cosigv1_test.go (TestCoSigV1Timestamp,
# TestCoSigV1NewVerifier): a cosignature's bytes and its time; a real witness's vkey.
COSIG_BLOB = (
    "ZGhGuQAAAABm/qTPeyKXD+R2rzyQsxPiP8mXum7qq/iF0u4vanlqJyocWODBt97w9uL+8qT7S5gxEHWWOworDcFi"
    "EBYJXORmnFBOBA=="
)
NOT_A_COSIG_BLOB = (
    "eQjRQm6eSKzFoiYalgwCPXu2y3ijtg68is9M46JKxuZB+dRfTmeQeDBoXnvxZx2ugnkyV+MUMLXpWs1hPb/W/4xkNQY="
)
REMORA_KEY = "remora.n621.de+da77ade7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2"

# c2sp.org/tlog-cosignature: the example checkpoint's cosignature line, and the time its
# "Ed25519 signed message" example spells.
SPEC_COSIG = (
    "jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2oyin1nPZqhf5nNo0xUe+mbI"
    "UBkBIfZ+qnA=="
)
SPEC_TIME = 1679315147


def proof_lines(hashes) -> str:
    return "".join(base64.b64encode(bytes.fromhex(value)).decode() + "\n" for value in hashes)


def request(old, note, hashes=()) -> str:
    return f"old {old}\n{proof_lines(hashes)}\n{note}"


def signed(secret, origin, size, root: bytes, extensions=()) -> str:
    """A checkpoint signed by the log key ``secret`` (the service's note code)."""
    text = notes.Checkpoint(origin, size, root, tuple(extensions)).text()
    return notes.parse_signing_key(secret).sign(text)


def cosigner_key(secret=WITNESS_SECRET) -> str:
    return tool.WitnessKey.parse(secret).verifier_key


# Signed notes as Go's sumdb/note and the spec write them


def test_log_notes_open_as_go_and_the_spec_sign_them():
    peter = tool.LogKey.parse(PETER_KEY)
    note = f"{PETER_TEXT}\n{PETER_SIG}{ENOCH_SIG}"
    assert tool.open_note(note, [peter]) == PETER_TEXT  # Enoch's line: unknown, ignored
    assert tool.open_note(note, [tool.LogKey.parse(ENOCH_KEY)]) == PETER_TEXT
    assert tool.open_note(FOO_NOTE, [tool.LogKey.parse(FOO_KEY)]) == "This is an example message.\n"
    # The service's note code signs what Go's does, byte for byte (Ed25519 is deterministic).
    assert notes.parse_signing_key(PETER_SECRET).sign(PETER_TEXT) == f"{PETER_TEXT}\n{PETER_SIG}"
    tampered = note.replace("then you", "than you")
    with pytest.raises(ValueError, match="does not verify"):
        tool.open_note(tampered, [peter])
    with pytest.raises(ValueError, match="no signature"):
        tool.open_note(f"{PETER_TEXT}\n{ENOCH_SIG}", [peter])


@pytest.mark.parametrize(
    "text",
    [
        "PeterNeumann+c74f20a3",  # two parts
        "PeterNeumann+c74f20a4+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",  # wrong hash
        # sumdb/note: an unknown algorithm, with the hash adjusted to it
        "PeterNeumann+173116ae+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
    ],
)
def test_malformed_log_keys_are_refused(text):
    with pytest.raises(ValueError):
        tool.LogKey.parse(text)


# Cosignatures


def test_cosignature_vectors_read_the_same_in_the_service_and_the_verifier():
    blob = base64.b64decode(COSIG_BLOB)
    assert witnesses.cosignature_time(blob) == verifier.cosignature_time(blob) == 1727964367
    for wrong in (base64.b64decode(NOT_A_COSIG_BLOB), blob[:-1]):
        with pytest.raises(witnesses.CosignatureError):
            witnesses.cosignature_time(wrong)
        with pytest.raises(verifier.Failed):
            verifier.cosignature_time(wrong)
    spec = base64.b64decode(SPEC_COSIG)
    assert witnesses.cosignature_time(spec) == verifier.cosignature_time(spec) == SPEC_TIME
    assert witnesses.cosigned_message("o\n1\nroot\n", SPEC_TIME).startswith(
        b"cosignature/v1\ntime 1679315147\no\n"
    )


def test_a_public_witness_key_is_read_by_the_config_the_service_and_the_verifier():
    remora = witnesses.Witness.parse(REMORA_KEY, "https://remora.example/")
    assert remora.key_id.hex() == "da77ade7" and remora.vkey == REMORA_KEY
    assert remora.url == "https://remora.example"
    assert verifier.Witness.parse(REMORA_KEY).key_id == remora.key_id
    assert config.ledger_witnesses(f" {REMORA_KEY}@https://w.example/a/ ,") == (
        (REMORA_KEY, "https://w.example/a"),
    )


@pytest.mark.parametrize(
    "text",
    [
        "bananas.sigstore.dev+12344556",  # formats: wrong number of parts
        "rekor.sigstore.dev+12345678+THIS_IS_NOT_BASE64!",  # formats: invalid base64
        "rekor.sigstore.dev+12345678+AwEB",  # formats: invalid algorithm
        "remora.n621.de+00000000+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2",  # wrong hash
        PETER_KEY,  # a log's key (type 0x01), not a cosigner's
    ],
)
def test_malformed_witness_keys_are_refused_everywhere(text):
    with pytest.raises(witnesses.CosignatureError):
        witnesses.Witness.parse(text)
    with pytest.raises(verifier.Failed):
        verifier.Witness.parse(text)
    with pytest.raises(config.ConfigError, match="LEDGER_WITNESSES"):
        config.ledger_witnesses(f"{text}@https://w.example")


def test_a_witness_entry_needs_an_http_url():
    with pytest.raises(config.ConfigError, match="vkey@url"):
        config.ledger_witnesses(f"{REMORA_KEY}@ftp://w.example")
    with pytest.raises(config.ConfigError, match="twice"):
        config.ledger_witnesses(f"{REMORA_KEY}@https://a.example,{REMORA_KEY}@https://b.example")


def test_a_cosignature_verifies_over_the_checkpoint_and_its_time_only():
    key = tool.WitnessKey.parse(WITNESS_SECRET)
    text = "monkeys\n8\nV8K9aklZ4EPB+RMOk1/8VsJUdFZR77GDtZUQq84vSbo=\n"
    line = key.cosign(text, SPEC_TIME)
    service = witnesses.Witness.parse(key.verifier_key)
    assert service.verify(text, line) == SPEC_TIME
    trusted = (verifier.Witness.parse(key.verifier_key),)
    assert verifier.cosigned_by(M_NEXT + line, trusted) == {"witness": SPEC_TIME}
    # The key ID binds the type 0x04: the same key as a log key (0x01) has another ID.
    assert key.verifier_key.split("+")[1] != "f13a86db"
    for other_text in (text.replace("8", "9", 1), text + "extension\n"):
        with pytest.raises(witnesses.CosignatureError, match="does not verify"):
            service.verify(other_text, line)
    blob = bytearray(base64.b64decode(line.split(" ")[2]))
    blob[11] ^= 1  # another time
    forged = f"\u2014 witness {base64.b64encode(bytes(blob)).decode()}\n"
    with pytest.raises(witnesses.CosignatureError, match="does not verify"):
        service.verify(text, forged)
    with pytest.raises(verifier.Failed, match="does not verify"):
        verifier.cosigned_by(M_NEXT + forged, trusted)


# The witness, over HTTP, on transparency-dev's own cases


def test_the_witness_cosigns_a_consistent_log_and_refuses_the_rest(tmp_path):
    with witnessing(tmp_path / "state.json", [MONKEYS_KEY], key=WITNESS_SECRET) as (url, _):
        trusted = witnesses.Witness.parse(cosigner_key())
        # a first checkpoint: from size 0, with no proof
        status, _, body = post(url, request(0, M_INIT))
        assert status == 200
        assert trusted.verify(M_INIT.split("\n\n")[0] + "\n", body) > 0
        # stale: the witness is at 5, and says so
        status, kind, body = post(url, request(2, M_NEXT))
        assert (status, kind, body) == (409, "text/x.tlog.size", "5\n")
        # a proof that does not verify: refused, and nothing recorded
        garbage = ["aaaa" * 16, "bbbb" * 16, "cccc" * 16, "dddd" * 16]
        assert post(url, request(5, M_NEXT, garbage))[0] == 422
        assert post(url, request(5, M_NEXT, CONSISTENCY[:3]))[0] == 422
        # the real proof from 5 to 8
        status, _, body = post(url, request(5, M_NEXT, CONSISTENCY))
        assert status == 200
        assert trusted.verify(M_NEXT.split("\n\n")[0] + "\n", body) > 0
        # the same checkpoint again: cosigned again; a smaller one: a bad request
        assert post(url, request(8, M_NEXT))[0] == 200
        assert post(url, request(8, M_INIT))[0] == 400
        # the same size with another root: a fork
        other = signed(MONKEYS_SECRET, "monkeys", 8, b"\xff" * 32)
        assert post(url, request(8, other))[0] == 422
        # not this log's key, or its signature broken; a log it does not witness
        assert post(url, request(8, M_NEXT.replace("202ff", "202fe")))[0] == 403
        assert post(url, request(8, M_NEXT.replace("\n8\n", "\n9\n")))[0] == 403
        bananas = signed(BANANAS_SECRET, "bananas", 8, b"\x00" * 32)
        assert post(url, request(0, bananas))[0] == 404
        assert post(url, "old 08\n\n" + M_NEXT)[0] == 400
        # monitors read the latest cosigned checkpoint, with both signatures
        origin = hashlib.sha256(b"monkeys").hexdigest()
        with urllib.request.urlopen(f"{url}/{origin}/checkpoint") as got:
            latest = got.read().decode()
        assert latest.startswith(M_NEXT)
        assert tool.open_note(latest, [tool.LogKey.parse(MONKEYS_KEY)]).startswith("monkeys\n8\n")
        assert verifier.cosigned_by(latest, (verifier.Witness.parse(cosigner_key()),))
    state = json.loads((tmp_path / "state.json").read_text())
    assert state["logs"]["monkeys"]["size"] == 8


def test_from_size_zero_the_proof_is_empty_and_an_empty_tree_has_the_empty_root(tmp_path):
    with witnessing(tmp_path / "state.json", [MONKEYS_KEY]) as (url, _):
        assert post(url, request(0, M_INIT, CONSISTENCY))[0] == 422
        empty = signed(MONKEYS_SECRET, "monkeys", 0, b"\x01" * 32)
        assert post(url, request(0, empty))[0] == 422
        empty = signed(MONKEYS_SECRET, "monkeys", 0, hashlib.sha256(b"").digest())
        assert post(url, request(0, empty))[0] == 200


def test_the_witness_keeps_its_state_across_restarts_and_its_cli_makes_keys(tmp_path):
    """``witness.py new-key`` then ``serve`` as a process: a restart remembers the size."""
    made = subprocess.run(
        [sys.executable, str(SCRIPT), "new-key", "witness.example/cli", "--key", "w.key"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    vkey = made.stdout.strip()
    assert (tmp_path / "w.key").stat().st_mode & 0o777 == 0o600
    trusted = witnesses.Witness.parse(vkey)
    for expected in ((0, 200), (0, 409)):
        with serving(tmp_path) as url:
            status, _, body = post(url, request(expected[0], M_INIT))
            assert status == expected[1]
            if status == 200:
                assert trusted.verify(M_INIT.split("\n\n")[0] + "\n", body)
            else:
                assert body == "5\n"


@contextlib.contextmanager
def serving(folder):
    """``witness.py serve`` as a process on a free port; yields its URL."""
    command = [sys.executable, str(SCRIPT), "serve", "--key", "w.key", "--state", "s.json"]
    command += ["--log", MONKEYS_KEY, "--listen", "127.0.0.1:0"]
    process = subprocess.Popen(
        command, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        process.stdout.readline()  # the witness's key
        line = process.stdout.readline()
        assert line.startswith("listening on "), line
        yield line.split()[-1]
    finally:
        process.terminate()
        process.wait(timeout=10)
        process.stdout.close()


def test_two_requests_at_once_never_roll_the_size_back(tmp_path):
    """Checking the old size and recording the new one happen under one lock."""

    def slow_clock():  # holds the request between its check and its record
        time.sleep(0.05)
        return SPEC_TIME

    with (
        witnessing(tmp_path / "state.json", [MONKEYS_KEY], clock=slow_clock) as (url, _),
        concurrent.futures.ThreadPoolExecutor(2) as pool,
    ):
        answers = list(pool.map(lambda _: post(url, request(0, M_INIT))[0], range(2)))
    assert sorted(answers) == [200, 409]


def test_the_witness_imports_nothing_but_the_standard_library_and_cryptography():
    tree = ast.parse(SCRIPT.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.add(node.module.split(".")[0])
    assert found - sys.stdlib_module_names == {"cryptography"}
