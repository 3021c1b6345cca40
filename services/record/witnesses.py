"""Witnesses: parties the service does not control that cosign the ledger's checkpoints, each
only if it is consistent with every checkpoint they cosigned before (C2SP tlog-witness,
tlog-cosignature).

Once the transaction that signed a checkpoint has committed (where :func:`signed_log.stamp
<services.record.signed_log.stamp>` asks for its time-stamp), :func:`ask` sends the latest
checkpoint to each witness of ``LEDGER_WITNESSES`` with ``add-checkpoint``: the size the witness
last cosigned, the consistency proof from it and the signed note. A witness that knows a
different size answers 409 with it, and the request is made again from that size; any other
refusal (422: a proof that does not verify, which is what a forked log gets) is stored as the
witness's answer. A ``cosignature/v1`` line is stored only once it verifies under the witness's
key, and :func:`cosigned_note` serves it after the log's own signature.

A cosignature is ``— name base64(key ID ‖ timestamp ‖ Ed25519 signature)``: the key ID is
``SHA-256(name ‖ 0x0A ‖ 0x04 ‖ public key)[:4]``, the timestamp eight bytes big-endian, and the
signature is over ``cosignature/v1\\ntime <timestamp>\\n`` followed by the checkpoint's text.

Rows are only ever added: the database refuses to update or delete one.
"""

import base64
import binascii
import hashlib
import logging
import struct
import urllib.error
import urllib.request
from dataclasses import dataclass
from datetime import UTC, datetime

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from engine.ledger import merkle, notes
from models import LedgerCheckpoint, LedgerCosignature, bump_data_version
from store.database import db

log = logging.getLogger("picks.ledger")

#: The signature type byte of a timestamped Ed25519 cosignature (c2sp.org/signed-note).
COSIGNATURE_V1 = 4
#: What a witness's 409 answer is (its latest cosigned size, in decimal).
SIZE_TYPE = "text/x.tlog.size"
#: Most of a witness's answer stored or logged.
ANSWER_CHARS = 300


class CosignatureError(ValueError):
    """A witness key, answer or cosignature that is malformed or does not verify."""


@dataclass(frozen=True)
class Witness:
    """A witness: its name, key ID and Ed25519 public key, and its submission prefix."""

    name: str
    key_id: bytes
    public: bytes
    url: str

    @classmethod
    def parse(cls, vkey: str, url: str = "") -> "Witness":
        """The witness of verifier key ``vkey`` (``name+hash+base64(0x04 ‖ key)``)."""
        parts = vkey.strip().split("+", 2)
        if len(parts) != 3:
            raise CosignatureError(f"a witness key is name+hash+base64: {vkey!r}")
        name, hash_hex, material = parts
        try:
            raw = base64.b64decode(material, validate=True)
        except binascii.Error:
            raise CosignatureError(f"a witness key ends in base64: {vkey!r}") from None
        if len(raw) != 33 or raw[0] != COSIGNATURE_V1:
            raise CosignatureError("a witness key is an Ed25519 cosignature key (type 0x04)")
        if cosigner_id(name, raw[1:]).hex() != hash_hex.lower():
            raise CosignatureError("the witness key's hash does not match its name and key")
        return cls(name, bytes.fromhex(hash_hex), raw[1:], url.rstrip("/"))

    @property
    def vkey(self) -> str:
        """The witness's verifier key, as configured."""
        material = base64.b64encode(bytes([COSIGNATURE_V1]) + self.public).decode()
        return f"{self.name}+{self.key_id.hex()}+{material}"

    def verify(self, text: str, line: str) -> int:
        """The timestamp of ``line``, this witness's ``cosignature/v1`` over checkpoint ``text``;
        CosignatureError when the line is another key's or does not verify."""
        name, blob = _signature(line)
        if name != self.name or blob[:4] != self.key_id:
            raise CosignatureError(f"not a signature by {self.name}+{self.key_id.hex()}")
        timestamp = cosignature_time(blob)
        try:
            Ed25519PublicKey.from_public_bytes(self.public).verify(
                blob[12:], cosigned_message(text, timestamp)
            )
        except InvalidSignature:
            raise CosignatureError(f"the cosignature by {self.name} does not verify") from None
        return timestamp


def cosigner_id(name: str, public: bytes) -> bytes:
    """SHA-256(name ‖ 0x0A ‖ 0x04 ‖ public key)[:4]: the key ID of an Ed25519 cosigner."""
    return hashlib.sha256(name.encode() + b"\n" + bytes([COSIGNATURE_V1]) + public).digest()[:4]


def cosigned_message(text: str, timestamp: int) -> bytes:
    """What a ``cosignature/v1`` signs: its header, ``time <t>`` and the checkpoint's text."""
    return f"cosignature/v1\ntime {timestamp}\n{text}".encode()


def cosignature_time(blob: bytes) -> int:
    """The timestamp of a cosignature (key ID ‖ u64 timestamp ‖ 64-byte signature)."""
    if len(blob) != 4 + 8 + 64:
        raise CosignatureError("a cosignature/v1 is a key ID, a timestamp and a signature")
    (timestamp,) = struct.unpack(">Q", blob[4:12])
    if timestamp == 0 or timestamp >= 1 << 63:
        raise CosignatureError("a cosignature's timestamp is not zero and below 2^63")
    return timestamp


def _signature(line: str) -> tuple[str, bytes]:
    """A note signature line's key name and decoded bytes."""
    if not line.startswith(notes.SIGNATURE_DASH) or not line.endswith("\n"):
        raise CosignatureError("a signature line is an em dash, a name and base64, and a newline")
    name, _, blob = line[len(notes.SIGNATURE_DASH) : -1].partition(" ")
    try:
        return name, base64.b64decode(blob, validate=True)
    except binascii.Error:
        raise CosignatureError("a signature is not base64") from None


def configured(settings) -> list[Witness]:
    """The witnesses of ``LEDGER_WITNESSES`` (``(vkey, url)`` pairs, as config reads them)."""
    return [Witness.parse(vkey, url) for vkey, url in settings.get("LEDGER_WITNESSES") or ()]


def request_body(old: int, proof: list[bytes], note: str) -> bytes:
    """An ``add-checkpoint`` body: ``old <size>``, the proof's hashes, a blank line, the note."""
    lines = [f"old {old}", *(base64.b64encode(value).decode() for value in proof)]
    return ("".join(f"{line}\n" for line in lines) + "\n" + note).encode()


def _post(url: str, body: bytes, timeout: float) -> tuple[int, str, str]:
    """``(status, content type, text)`` of the witness's answer to an ``add-checkpoint``."""
    request = urllib.request.Request(
        f"{url}/add-checkpoint",
        data=body,
        method="POST",
        headers={"Content-Type": "text/plain; charset=utf-8"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return answer.status, answer.headers.get_content_type(), _text(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get_content_type(), _text(error.read())


def _text(data: bytes) -> str:
    return data[: 64 * 1024].decode("utf-8", errors="replace")


def _cosign(witness: Witness, old: int, row, lookup, timeout: float):
    """``(line, timestamp, None)`` once ``witness`` cosigns checkpoint ``row``, sent from size
    ``old`` (again from the size it names when it answers 409), else ``(None, None, why)``."""
    text, _ = notes.split_note(row.signed_note)
    for _attempt in range(2):
        proof = merkle.consistency_proof(old, row.size, lookup) if 0 < old < row.size else []
        try:
            status, kind, answer = _post(
                witness.url, request_body(old, proof, row.signed_note), timeout
            )
        except (urllib.error.URLError, OSError, ValueError) as error:
            return None, None, f"the witness did not answer: {error}"
        if status == 409 and kind == SIZE_TYPE and answer.strip().isdigit():
            known = int(answer.strip())
            if known > row.size:
                return (
                    None,
                    None,
                    (
                        f"the witness has cosigned {known} entries, more than this checkpoint's "
                        f"{row.size}: it saw another tree under this log's name"
                    ),
                )
            old = known
            continue
        if status != 200:
            return None, None, f"the witness answered {status}: {answer.strip()[:ANSWER_CHARS]}"
        for line in answer.splitlines(keepends=True):
            try:
                return line, witness.verify(text, line), None
            except CosignatureError:
                continue  # another of its keys, or another witness's line: ignored
        return None, None, f"no cosignature by {witness.name} verifies in its answer"
    return None, None, f"the witness answered 409 twice (its size moved to {old})"


def ask(settings, now: datetime, lookup) -> int:
    """Send the latest checkpoint to each witness that has not answered it yet and store what
    each answers (``lookup``: the tree's subtree hashes, for the consistency proofs); returns
    how many were asked.

    Call after the transaction that signed the checkpoint commits: inside one it does nothing
    (no network call holds the write lock), and whoever commits it, or the schedule's
    checkpoint, asks after."""
    witnesses = configured(settings)
    if not witnesses or db.in_transaction():
        return 0
    row = LedgerCheckpoint.select().order_by(LedgerCheckpoint.size.desc()).first()
    if row is None:
        return 0
    answered = set(
        LedgerCosignature.select(LedgerCosignature.witness)
        .where(LedgerCosignature.size == row.size)
        .tuples()
    )
    asked = cosigned = 0
    for witness in witnesses:
        if (witness.vkey,) in answered:
            continue
        line, timestamp, error = _cosign(
            witness, _last_cosigned(witness.vkey), row, lookup, settings["LEDGER_WITNESS_TIMEOUT"]
        )
        if error is not None:
            log.warning("witness %s did not cosign size %s: %s", witness.name, row.size, error)
        # Two processes may ask one witness: the first answer stored stays, as rows never change.
        LedgerCosignature.insert(
            size=row.size,
            witness=witness.vkey,
            signature=line,
            cosigned_at=None if timestamp is None else datetime.fromtimestamp(timestamp, UTC),
            error=error,
            asked_at=now,
        ).on_conflict_ignore().execute()
        asked += 1
        cosigned += line is not None
    if cosigned:  # the answers serving checkpoints now carry the new lines
        bump_data_version()
    return asked


def _last_cosigned(vkey: str) -> int:
    """The largest size ``vkey``'s witness cosigned for this log (0: none yet)."""
    row = (
        LedgerCosignature.select(LedgerCosignature.size)
        .where((LedgerCosignature.witness == vkey) & LedgerCosignature.signature.is_null(False))
        .order_by(LedgerCosignature.size.desc())
        .first()
    )
    return 0 if row is None else row.size


def cosignature_lines(sizes) -> dict[int, str]:
    """``{size: its cosignature lines}`` of the checkpoints of ``sizes`` that witnesses cosigned,
    one line per witness in the order of their keys (one query)."""
    found = {}
    rows = (
        LedgerCosignature.select(LedgerCosignature.size, LedgerCosignature.signature)
        .where(LedgerCosignature.size.in_(list(sizes)) & LedgerCosignature.signature.is_null(False))
        .order_by(LedgerCosignature.size, LedgerCosignature.witness)
        .tuples()
    )
    for size, line in rows:
        found[size] = found.get(size, "") + line
    return found


def cosigned_note(checkpoint, lines=None) -> str | None:
    """The signed note of ``checkpoint`` (a record with ``size`` and ``signed_note``, as
    :func:`log_reading.head <services.record.log_reading.head>` makes, or a ``LedgerCheckpoint``
    row) followed by the cosignature lines stored for it, one per witness, in the order of their
    keys (from ``lines``, :func:`cosignature_lines` of several checkpoints, read for this one
    when None): a note any signed-note reader opens with the log's key, and checks the
    witnesses' with theirs. None for a record without a note (before the first checkpoint)."""
    if isinstance(checkpoint, dict):
        size, note = checkpoint["size"], checkpoint["signed_note"]
    else:
        size, note = checkpoint.size, checkpoint.signed_note
    if note is None:
        return None
    if lines is None:
        lines = cosignature_lines([size])
    return note + lines.get(size, "")


def standing(settings, now: datetime) -> list[dict]:
    """Each configured witness's standing: the largest size it cosigned and when it was asked
    it (None: never), and its latest answer's error (None when it cosigned)."""
    found = []
    for witness in configured(settings):
        rows = LedgerCosignature.select().where(LedgerCosignature.witness == witness.vkey)
        cosigned = (
            rows.where(LedgerCosignature.signature.is_null(False))
            .order_by(LedgerCosignature.size.desc())
            .first()
        )
        latest = rows.order_by(LedgerCosignature.size.desc(), LedgerCosignature.id.desc()).first()
        found.append(
            {
                "name": witness.name,
                "size": None if cosigned is None else cosigned.size,
                "age_seconds": None
                if cosigned is None
                else max(0, int((now - cosigned.asked_at).total_seconds())),
                "error": None if latest is None else latest.error,
            }
        )
    return found
