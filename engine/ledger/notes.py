"""Signed notes and checkpoints, as transparency logs write them (C2SP signed-note and
tlog-checkpoint, the format of Go's checksum database), signed with Ed25519.

A checkpoint is the text ``origin\\nsize\\nbase64(root)\\n`` plus extension lines; the note is
that text, a blank line, and one line per signature: an em dash, the key name and
``base64(key ID ‖ signature)``. The key ID is the first four bytes of
``SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key)``. Keys travel in the same encodings as Go's
``sumdb/note`` (``PRIVATE+KEY+name+hash+base64(0x01 ‖ seed)`` to sign,
``name+hash+base64(0x01 ‖ public key)`` to verify), so any implementation of the format can
check what this one signs.
"""

import base64
import binascii
import hashlib
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
)

#: The signature type byte of Ed25519 in signed notes.
ED25519 = b"\x01"
#: What starts a signature line.
SIGNATURE_DASH = "\u2014 "
#: The prefix of an encoded signing key.
PRIVATE_PREFIX = "PRIVATE+KEY+"


class NoteError(ValueError):
    """A key, note or checkpoint that is malformed, or a signature that does not verify."""


@dataclass(frozen=True)
class SigningKey:
    """An Ed25519 key that signs notes under ``name``."""

    name: str
    private: Ed25519PrivateKey

    @property
    def public_bytes(self) -> bytes:
        """The 32-byte public key."""
        return self.private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)

    @property
    def key_id(self) -> bytes:
        """The four-byte key ID signatures carry."""
        return key_id(self.name, self.public_bytes)

    @property
    def verifier_key(self) -> str:
        """The public key as a verifier key string (``name+hash+base64``), for anyone to check
        the notes with."""
        material = base64.b64encode(ED25519 + self.public_bytes).decode()
        return f"{self.name}+{self.key_id.hex()}+{material}"

    def encode(self) -> str:
        """The key as a signing key string (``PRIVATE+KEY+name+hash+base64``): a secret."""
        seed = self.private.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
        material = base64.b64encode(ED25519 + seed).decode()
        return f"{PRIVATE_PREFIX}{self.name}+{self.key_id.hex()}+{material}"

    def sign(self, text: str) -> str:
        """``text`` (ending in a newline) as a note signed by this key."""
        _check_text(text)
        signature = self.private.sign(text.encode())
        blob = base64.b64encode(self.key_id + signature).decode()
        return f"{text}\n{SIGNATURE_DASH}{self.name} {blob}\n"


def key_id(name: str, public: bytes) -> bytes:
    """SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key)[:4]."""
    return hashlib.sha256(name.encode() + b"\n" + ED25519 + public).digest()[:4]


def _check_name(name: str) -> None:
    if not name or any(char.isspace() or char == "+" for char in name):
        raise NoteError(f"a key name must be non-empty, without spaces or '+': {name!r}")


def generate(name: str) -> SigningKey:
    """A new random signing key named ``name``."""
    _check_name(name)
    return SigningKey(name, Ed25519PrivateKey.generate())


def _decode(material: str) -> bytes:
    try:
        raw = base64.b64decode(material, validate=True)
    except binascii.Error as error:
        raise NoteError(f"key material is not base64: {error}") from None
    if len(raw) != 33 or raw[:1] != ED25519:
        raise NoteError("key material is not an Ed25519 key")
    return raw[1:]


def parse_signing_key(encoded: str) -> SigningKey:
    """A signing key from its string (``PRIVATE+KEY+name+hash+base64``); NoteError if it is
    malformed or its hash does not match."""
    if not encoded.startswith(PRIVATE_PREFIX):
        raise NoteError("a signing key starts with PRIVATE+KEY+")
    parts = encoded[len(PRIVATE_PREFIX) :].strip().split("+", 2)
    if len(parts) != 3:
        raise NoteError("a signing key is PRIVATE+KEY+name+hash+base64")
    name, hash_hex, material = parts
    _check_name(name)
    key = SigningKey(name, Ed25519PrivateKey.from_private_bytes(_decode(material)))
    if key.key_id.hex() != hash_hex.lower():
        raise NoteError("the signing key's hash does not match its name and key")
    return key


@dataclass(frozen=True)
class VerifierKey:
    """A public key that checks notes signed under ``name``."""

    name: str
    key_id: bytes
    public: Ed25519PublicKey

    def verify(self, note: str) -> str:
        """The text of ``note`` if this key signed it; NoteError otherwise."""
        text, signatures = split_note(note)
        mine = [blob for name, blob in signatures if name == self.name and blob[:4] == self.key_id]
        if not mine:
            raise NoteError(f"the note carries no signature by {self.name} ({self.key_id.hex()})")
        for blob in mine:
            try:
                self.public.verify(blob[4:], text.encode())
            except InvalidSignature:
                raise NoteError(f"the signature by {self.name} does not verify") from None
        return text


def parse_verifier_key(encoded: str) -> VerifierKey:
    """A verifier key from its string (``name+hash+base64``)."""
    parts = encoded.strip().split("+", 2)
    if len(parts) != 3:
        raise NoteError("a verifier key is name+hash+base64")
    name, hash_hex, material = parts
    _check_name(name)
    public = _decode(material)
    if key_id(name, public).hex() != hash_hex.lower():
        raise NoteError("the verifier key's hash does not match its name and key")
    return VerifierKey(name, bytes.fromhex(hash_hex), Ed25519PublicKey.from_public_bytes(public))


def _check_text(text: str) -> None:
    if not text.endswith("\n"):
        raise NoteError("a note's text ends with a newline")
    if any(ord(char) < 0x20 and char != "\n" for char in text):
        raise NoteError("a note holds no control characters but newlines")


def split_note(note: str) -> tuple[str, list[tuple[str, bytes]]]:
    """A note's text and its signatures ``(name, key ID ‖ signature)``, unverified."""
    head, separator, tail = note.rpartition("\n\n")
    if not separator:
        raise NoteError("a note is text, a blank line and signature lines")
    text = head + "\n"
    _check_text(text)
    if not tail.endswith("\n"):
        raise NoteError("a note ends with a newline")
    signatures = []
    for line in tail[:-1].split("\n"):
        if not line.startswith(SIGNATURE_DASH):
            raise NoteError("a signature line is an em dash, a key name and base64")
        name, _, blob = line[len(SIGNATURE_DASH) :].partition(" ")
        try:
            raw = base64.b64decode(blob, validate=True)
        except binascii.Error:
            raise NoteError("a signature is not base64") from None
        if len(raw) < 5:
            raise NoteError("a signature is shorter than a key ID")
        signatures.append((name, raw))
    if not signatures:
        raise NoteError("a note carries at least one signature")
    return text, signatures


@dataclass(frozen=True)
class Checkpoint:
    """A tree head: the log's origin, its size and root hash, and extension lines."""

    origin: str
    size: int
    root: bytes
    extensions: tuple[str, ...] = ()

    def text(self) -> str:
        """The checkpoint's note text."""
        lines = [self.origin, str(self.size), base64.b64encode(self.root).decode()]
        return "".join(f"{line}\n" for line in [*lines, *self.extensions])


def parse_checkpoint(text: str) -> Checkpoint:
    """A checkpoint from its note text; NoteError when it is not one."""
    lines = text.split("\n")
    if len(lines) < 4 or lines[-1] != "":
        raise NoteError("a checkpoint is at least three lines, each ending in a newline")
    origin, size, root, *extensions = lines[:-1]
    if not size.isdigit() or (size != "0" and size.startswith("0")):
        raise NoteError(f"a checkpoint's size is a decimal number: {size!r}")
    try:
        digest = base64.b64decode(root, validate=True)
    except binascii.Error:
        raise NoteError("a checkpoint's root is not base64") from None
    if len(digest) != 32 or not origin or any(not line for line in extensions):
        raise NoteError("a checkpoint has an origin, a 32-byte root and no empty line")
    return Checkpoint(origin, int(size), digest, tuple(extensions))
