#!/usr/bin/env python3
"""A transparency-log witness anyone can run: it cosigns a log's checkpoints, each only if it is
consistent with every checkpoint it cosigned before (C2SP tlog-witness, tlog-cosignature).

    python3 witness.py new-key witness.example/alice --key alice.key
    python3 witness.py serve --key alice.key --state alice.json \\
        --log 'picks.example/ledger+1a2b3c4d+AY...' --listen 127.0.0.1:7380

``new-key`` writes an Ed25519 signing key (Go's ``PRIVATE+KEY+name+hash+base64`` encoding, mode
0600) and prints the witness's verifier key, ``name+hash+base64(0x04 ‖ public key)``: the line
a log and its auditors configure. ``serve`` answers, for each log named by ``--log`` (its
verifier key; the key's name is the log's origin):

- ``POST /add-checkpoint``: ``old <size>``, the consistency proof (one base64 hash a line), a
  blank line, then the signed checkpoint. The witness checks the log's signature (403 when none
  verifies, 404 for an unknown origin), that ``old`` is the size it last cosigned (409, answering
  that size, when not), and the RFC 6962 consistency proof from that checkpoint (422 when it
  fails: a log that rewrote its history, or showed someone a fork). Then, and only then, it
  records the checkpoint (in the ``--state`` file, atomically) and answers its
  ``cosignature/v1`` line, timestamped.
- ``GET /<SHA-256 of the origin, hex>/checkpoint``: the latest checkpoint it cosigned for that
  log, with the log's signature and its own.

One file, standard library plus ``cryptography``, importing nothing of the service it
witnesses. Python 3.11+.
"""

import argparse
import base64
import binascii
import hashlib
import json
import os
import struct
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
)

#: Signature type bytes of signed notes: a log's Ed25519 signature, a witness's cosignature.
ED25519, COSIGNATURE_V1 = 0x01, 0x04
#: The most consistency proof lines a request may carry (tlog-witness).
MAX_PROOF_LINES = 63
#: The largest request body read (a checkpoint with its signatures and proof is far smaller).
MAX_BODY = 64 * 1024
SIZE_TYPE = "text/x.tlog.size"
DASH = "\u2014 "
EMPTY_ROOT = hashlib.sha256(b"").digest()


class Refused(Exception):
    """A request the witness does not cosign: the HTTP status and why."""

    def __init__(self, status: int, reason: str, body: str | None = None):
        super().__init__(reason)
        self.status = status
        self.body = body


# --- Keys and signed notes ---------------------------------------------------------------------


def key_id(name: str, kind: int, public: bytes) -> bytes:
    """SHA-256(name ‖ 0x0A ‖ type ‖ public key)[:4] (c2sp.org/signed-note)."""
    return hashlib.sha256(name.encode() + b"\n" + bytes([kind]) + public).digest()[:4]


def _check_name(name: str) -> None:
    if not name or any(char.isspace() or char == "+" for char in name):
        raise ValueError(f"a key name is non-empty, without spaces or '+': {name!r}")


@dataclass(frozen=True)
class LogKey:
    """A log's verifier key (``name+hash+base64(0x01 ‖ Ed25519 key)``); its name is the origin."""

    name: str
    key_id: bytes
    public: bytes

    @classmethod
    def parse(cls, text: str) -> "LogKey":
        """The key written in ``text``; ValueError when malformed or its hash is wrong."""
        name, hash_hex, raw = _vkey_parts(text)
        if len(raw) != 33 or raw[0] != ED25519:
            raise ValueError("a log key is an Ed25519 verifier key (type 0x01)")
        if key_id(name, ED25519, raw[1:]).hex() != hash_hex.lower():
            raise ValueError("the log key's hash does not match its name and key")
        return cls(name, bytes.fromhex(hash_hex), raw[1:])

    def verifies(self, text: str, signature: bytes) -> bool:
        """Whether ``signature`` (key ID ‖ Ed25519 signature) is this key's over ``text``."""
        try:
            Ed25519PublicKey.from_public_bytes(self.public).verify(signature[4:], text.encode())
        except InvalidSignature:
            return False
        return True


def _vkey_parts(text: str) -> tuple[str, str, bytes]:
    parts = text.strip().split("+", 2)
    if len(parts) != 3 or len(parts[1]) != 8:
        raise ValueError(f"a verifier key is name+hash+base64: {text!r}")
    name, hash_hex, material = parts
    _check_name(name)
    try:
        bytes.fromhex(hash_hex)
        return name, hash_hex, base64.b64decode(material, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"a verifier key's hash is hex and its key base64: {text!r}") from None


@dataclass(frozen=True)
class WitnessKey:
    """The witness's own Ed25519 key, which signs ``cosignature/v1`` lines under ``name``."""

    name: str
    private: Ed25519PrivateKey

    @classmethod
    def parse(cls, text: str) -> "WitnessKey":
        """A signing key, ``PRIVATE+KEY+name+hash+base64(0x01 ‖ seed)`` (Go's sumdb/note)."""
        if not text.startswith("PRIVATE+KEY+"):
            raise ValueError("a signing key starts with PRIVATE+KEY+")
        name, hash_hex, raw = _vkey_parts(text.strip()[len("PRIVATE+KEY+") :])
        if len(raw) != 33 or raw[0] != ED25519:
            raise ValueError("the signing key is not an Ed25519 key")
        key = cls(name, Ed25519PrivateKey.from_private_bytes(raw[1:]))
        if key_id(name, ED25519, key.public).hex() != hash_hex.lower():
            raise ValueError("the signing key's hash does not match its name and key")
        return key

    @classmethod
    def generate(cls, name: str) -> "WitnessKey":
        """A new random key named ``name``."""
        _check_name(name)
        return cls(name, Ed25519PrivateKey.generate())

    @property
    def public(self) -> bytes:
        """The 32-byte public key."""
        return self.private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)

    @property
    def key_id(self) -> bytes:
        """The key ID its cosignatures carry (signature type 0x04)."""
        return key_id(self.name, COSIGNATURE_V1, self.public)

    @property
    def verifier_key(self) -> str:
        """``name+hash+base64(0x04 ‖ public key)``: what logs and auditors configure."""
        material = base64.b64encode(bytes([COSIGNATURE_V1]) + self.public).decode()
        return f"{self.name}+{self.key_id.hex()}+{material}"

    def encode(self) -> str:
        """The signing key as text: a secret."""
        seed = self.private.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
        material = base64.b64encode(bytes([ED25519]) + seed).decode()
        return f"PRIVATE+KEY+{self.name}+{key_id(self.name, ED25519, self.public).hex()}+{material}"

    def cosign(self, text: str, timestamp: int) -> str:
        """The ``cosignature/v1`` signature line over checkpoint ``text`` at ``timestamp``."""
        signature = self.private.sign(cosigned_message(text, timestamp))
        blob = self.key_id + struct.pack(">Q", timestamp) + signature
        return f"{DASH}{self.name} {base64.b64encode(blob).decode()}\n"


def cosigned_message(text: str, timestamp: int) -> bytes:
    """What a ``cosignature/v1`` signs: its header, ``time <t>`` and the checkpoint's text."""
    return f"cosignature/v1\ntime {timestamp}\n{text}".encode()


def split_note(note: str) -> tuple[str, list[tuple[str, bytes]]]:
    """A signed note's text and its signatures ``(name, key ID ‖ signature)``, unverified."""
    head, separator, tail = note.rpartition("\n\n")
    if not separator or not tail.endswith("\n"):
        raise ValueError("a note is text, a blank line and signature lines")
    text = head + "\n"
    if any(ord(char) < 0x20 and char != "\n" for char in note):
        raise ValueError("a note holds no control characters but newlines")
    signatures = []
    for line in tail[:-1].split("\n"):
        if not line.startswith(DASH):
            raise ValueError(f"not a signature line: {line[:80]!r}")
        name, _, blob = line[len(DASH) :].partition(" ")
        try:
            raw = base64.b64decode(blob, validate=True)
        except binascii.Error:
            raise ValueError("a signature is not base64") from None
        if len(raw) < 5:
            raise ValueError("a signature is shorter than a key ID")
        signatures.append((name, raw))
    return text, signatures


def open_note(note: str, keys: list[LogKey]) -> str:
    """The text of ``note`` once a signature by one of ``keys`` verifies (others are ignored);
    ValueError when none does, or when a signature by one of them fails."""
    text, signatures = split_note(note)
    verified = False
    for name, raw in signatures:
        for key in keys:
            if name == key.name and raw[:4] == key.key_id:
                if not key.verifies(text, raw):
                    raise ValueError(f"the signature by {name} does not verify")
                verified = True
    if not verified:
        raise ValueError("no signature by a key trusted for this log")
    return text


def parse_checkpoint(text: str) -> tuple[str, int, bytes]:
    """A checkpoint's origin, size and root hash (c2sp.org/tlog-checkpoint)."""
    lines = text.split("\n")
    if len(lines) < 4 or lines[-1] != "":
        raise ValueError("a checkpoint is at least three lines")
    origin, size, root = lines[:3]
    if not origin or not size.isdigit() or (size != "0" and size.startswith("0")):
        raise ValueError("a checkpoint has an origin and a decimal size")
    if any(not line for line in lines[3:-1]):
        raise ValueError("a checkpoint's extension lines are not empty")
    try:
        digest = base64.b64decode(root, validate=True)
    except binascii.Error:
        raise ValueError("a checkpoint's root hash is not base64") from None
    if len(digest) != 32:
        raise ValueError("a checkpoint's root hash is 32 bytes")
    return origin, int(size), digest


# --- RFC 6962 consistency ----------------------------------------------------------------------


def node_hash(left: bytes, right: bytes) -> bytes:
    """SHA-256(0x01 ‖ left ‖ right)."""
    return hashlib.sha256(b"\x01" + left + right).digest()


def consistent(first, second, first_root, second_root, proof) -> bool:
    """RFC 9162 §2.1.4.2: whether ``proof`` shows the tree of ``first`` leaves to be the start
    of the tree of ``second`` leaves (0 < first < second)."""
    if not 0 < first < second or not proof:
        return False
    path = list(proof)
    if first & (first - 1) == 0:  # a power of two: the old root is a node of the new tree
        path.insert(0, first_root)
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = path[0]
    for value in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr, sr = node_hash(value, fr), node_hash(value, sr)
            while fn and not fn & 1:
                fn, sn = fn >> 1, sn >> 1
        else:
            sr = node_hash(sr, value)
        fn, sn = fn >> 1, sn >> 1
    return fr == first_root and sr == second_root and sn == 0


# --- The witness -------------------------------------------------------------------------------


def parse_request(body: bytes) -> tuple[int, list[bytes], str]:
    """An ``add-checkpoint`` body: the old size, the proof's hashes and the signed checkpoint."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused(400, "the request is not UTF-8") from None
    head, separator, note = text.partition("\n\n")
    if not separator:
        raise Refused(400, "the request is old size, proof lines, a blank line and a checkpoint")
    lines = head.split("\n")
    words = lines[0].split(" ")
    if len(words) != 2 or words[0] != "old" or not words[1].isdigit():
        raise Refused(400, "the first line is 'old <size>'")
    if words[1] != "0" and words[1].startswith("0"):
        raise Refused(400, "the old size has no leading zeroes")
    if len(lines) - 1 > MAX_PROOF_LINES:
        raise Refused(400, f"at most {MAX_PROOF_LINES} consistency proof lines")
    proof = []
    for line in lines[1:]:
        try:
            value = base64.b64decode(line, validate=True)
        except binascii.Error:
            raise Refused(400, "a proof line is not base64") from None
        if len(value) != 32:
            raise Refused(400, "a proof line is a 32-byte hash")
        proof.append(value)
    return int(words[1]), proof, note


class Witness:
    """The witness's logic and state: the latest checkpoint cosigned per log origin, in a JSON
    file replaced atomically; checking ``old`` and recording the new size happen under one
    lock, so two requests never roll a log's size back."""

    def __init__(self, key: WitnessKey, logs: list[LogKey], state_path: str, clock=time.time):
        self.key = key
        self.logs = {}
        for log_key in logs:
            self.logs.setdefault(log_key.name, []).append(log_key)
        self.state_path = state_path
        self.clock = clock
        self.lock = threading.Lock()
        self.state = self._read()

    def _read(self) -> dict:
        try:
            with open(self.state_path, encoding="utf-8") as file:
                return json.load(file)
        except FileNotFoundError:
            return {"logs": {}}

    def _write(self, state: dict) -> None:
        folder = os.path.dirname(os.path.abspath(self.state_path))
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=".witness-")
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            json.dump(state, file, indent=1, sort_keys=True)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, self.state_path)

    def add_checkpoint(self, body: bytes) -> str:
        """The cosignature line(s) for the checkpoint in an ``add-checkpoint`` body; Refused
        with the status the protocol names otherwise."""
        old, proof, note = parse_request(body)
        try:
            text, _ = split_note(note)
            origin, size, root = parse_checkpoint(text)
        except ValueError as error:
            raise Refused(400, str(error)) from None
        keys = self.logs.get(origin)
        if keys is None:
            raise Refused(404, f"unknown log {origin!r}")
        try:
            open_note(note, keys)
        except ValueError as error:
            raise Refused(403, str(error)) from None
        if old > size:
            raise Refused(400, f"old size {old} is larger than the checkpoint's {size}")
        if size == 0 and root != EMPTY_ROOT:
            raise Refused(422, "an empty tree has the root hash of the empty string")
        with self.lock:
            known = self.state["logs"].get(origin, {"size": 0, "root": None})
            if old != known["size"]:
                raise Refused(409, f"the latest size cosigned is {known['size']}", known["size"])
            if old == 0 and proof:
                raise Refused(422, "a proof from the empty tree is empty")
            if old == size and old and base64.b64decode(known["root"]) != root:
                raise Refused(422, f"size {size} was cosigned with another root hash")
            if 0 < old < size and not consistent(
                old, size, base64.b64decode(known["root"]), root, proof
            ):
                raise Refused(422, f"the checkpoint is not consistent with size {old}")
            if old == size and proof:
                raise Refused(422, "a proof between equal sizes is empty")
            line = self.key.cosign(text, int(self.clock()))
            state = json.loads(json.dumps(self.state))
            state["logs"][origin] = {
                "size": size,
                "root": base64.b64encode(root).decode(),
                "checkpoint": text + "\n" + "".join(_log_lines(note, keys)) + line,
            }
            self._write(state)
            self.state = state
        return line

    def latest(self, origin_hash: str) -> str | None:
        """The latest checkpoint cosigned for the log whose origin hashes to ``origin_hash``."""
        with self.lock:
            for origin, known in self.state["logs"].items():
                if hashlib.sha256(origin.encode()).hexdigest() == origin_hash.lower():
                    return known["checkpoint"]
        return None


def _log_lines(note: str, keys: list[LogKey]) -> list[str]:
    """The signature lines of ``note`` by the log's trusted keys."""
    _, signatures = split_note(note)
    found = []
    for name, raw in signatures:
        if any(name == key.name and raw[:4] == key.key_id for key in keys):
            found.append(f"{DASH}{name} {base64.b64encode(raw).decode()}\n")
    return found


def handler_for(witness: Witness, prefix: str = ""):
    """The HTTP handler class serving ``witness`` under the URL path ``prefix``."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the protocol recommends

        def _answer(self, status: int, body: str, content_type="text/plain; charset=utf-8"):
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self):
            """``add-checkpoint``."""
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                length = -1
            if not 0 <= length <= MAX_BODY:
                self.close_connection = True
                return self._answer(413, f"a request has a length of at most {MAX_BODY} bytes\n")
            body = self.rfile.read(length)
            if self.path != f"{prefix}/add-checkpoint":
                return self._answer(404, "not found\n")
            try:
                line = witness.add_checkpoint(body)
            except Refused as refused:
                if refused.status == 409:
                    return self._answer(409, f"{refused.body}\n", SIZE_TYPE)
                return self._answer(refused.status, f"{refused}\n")
            return self._answer(200, line)

        def do_GET(self):
            """A log's latest cosigned checkpoint, for monitors."""
            parts = self.path[len(prefix) :].strip("/").split("/")
            found = None
            if self.path.startswith(prefix) and len(parts) == 2 and parts[1] == "checkpoint":
                found = witness.latest(parts[0])
            if found is None:
                return self._answer(404, "not found\n")
            return self._answer(200, found)

        def log_message(self, format, *args):
            print(f"{self.address_string()} {format % args}", file=sys.stderr, flush=True)

    return Handler


def serve(witness: Witness, host: str, port: int, prefix: str = "") -> ThreadingHTTPServer:
    """A threading HTTP server for ``witness`` on ``host:port`` (port 0: any free one)."""
    return ThreadingHTTPServer((host, port), handler_for(witness, prefix.rstrip("/")))


# --- The command -------------------------------------------------------------------------------


def _read_key(path: str) -> WitnessKey:
    with open(path, encoding="utf-8") as file:
        return WitnessKey.parse(file.read())


def main(argv=None) -> int:
    """``new-key``, ``vkey`` or ``serve``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    new_key = commands.add_parser("new-key", help="write a new signing key, print its vkey")
    new_key.add_argument("name", help="the witness's name, e.g. witness.example/alice")
    new_key.add_argument("--key", required=True, help="the file to write (must not exist)")
    vkey = commands.add_parser("vkey", help="print the verifier key of a signing key")
    vkey.add_argument("--key", required=True)
    run = commands.add_parser("serve", help="answer add-checkpoint")
    run.add_argument("--key", required=True, help="the witness's signing key file")
    run.add_argument("--state", required=True, help="the JSON state file (created if missing)")
    run.add_argument(
        "--log", action="append", required=True, help="a log's verifier key (repeat for more)"
    )
    run.add_argument("--listen", default="127.0.0.1:7380", help="host:port (port 0: any)")
    run.add_argument("--prefix", default="", help="the URL path the API sits under")
    args = parser.parse_args(argv)

    if args.command == "new-key":
        key = WitnessKey.generate(args.name)
        descriptor = os.open(args.key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(key.encode() + "\n")
        print(key.verifier_key)
        return 0
    if args.command == "vkey":
        print(_read_key(args.key).verifier_key)
        return 0
    witness = Witness(_read_key(args.key), [LogKey.parse(text) for text in args.log], args.state)
    host, _, port = args.listen.rpartition(":")
    server = serve(witness, host or "127.0.0.1", int(port), args.prefix)
    address, bound = server.server_address[:2]
    print(f"witness {witness.key.verifier_key}", flush=True)
    print(f"listening on http://{address}:{bound}{args.prefix.rstrip('/')}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
