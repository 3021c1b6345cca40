#!/usr/bin/env python3
"""Verify the sports pick service's live track record from the outside.

    python3 verify_ledger.py https://picks.example --checkpoints saved.json [--token TOKEN]

Reads the public ledger (``/api/track-record/ledger``, ``.../entries``, ``.../proof``) and
checks, printing one verdict line per check and exiting 1 if any fails:

- every checkpoint's Ed25519 signature (signed-note format), under the key pinned in the
  checkpoints file (or given with ``--key``; the server's own on a first run);
- the root hash recomputed from the entries (RFC 9162), at the latest checkpoint and at every
  earlier one;
- consistency with every checkpoint saved on earlier runs: nothing removed or rewritten (the
  server's O(log n) consistency proof, and the root recomputed from the entries);
- that each pick was published in a checkpoint signed before its match kicked off (and, for a
  checkpoint carrying an RFC 3161 token, timestamped by the authority before it, ``--tsa-cert``);
- that each revealed pick opens its commitment, and each outcome cites its published pick;
- that each outcome follows from the entries alone (won, lost or void from the match status
  and score it records and the revealed selection, and for a pick at a line (Asian handicap,
  over/under at a line: the line its revealed pick and its outcome carry) half-won or half-lost
  too; profit, CLV and fair closing EV from the revealed price and the closing price and
  probability it records (a line pick whose line moved by the close has a fair closing
  probability, carried to its line, and no closing price); a closing price names its closing
  line, the source's or the service's own), and that the
  kick-off, status and score it records are what ``/api/matches/{id}`` shows today (an
  outcome written before outcomes recorded them is judged on what that answer shows; a pick
  voided because its match was postponed or cancelled keeps its outcome when the match is
  played later, at a kick-off after the voiding);
- the live rule, applied here to every settled pick: live only if made before its match's
  kick-off as finally known *and* first covered by a checkpoint signed strictly before that
  kick-off; each outcome must say the same (picks that fail it are set apart, never counted);
- that every figure of the live record recomputed from the entries (picks, won, lost, void,
  pending, hit rate, staked, profit, ROI and its standard error, average odds, edge and CLV,
  average fair closing EV and its standard error, maximum drawdown, longest losing streak)
  equals ``/api/track-record/by-competition-type?isLive=true`` and, with a Pro token,
  ``/api/v1/data/track-record``.
- with ``--witness KEY`` (repeated; a witness's ``name+hash+base64(0x04 ‖ key)``) and
  ``--quorum N``, that at least N of those witnesses cosigned the latest checkpoint (C2SP
  tlog-cosignature), each cosignature verified; and the live rule stricter: a pick is live only
  if a checkpoint holding it was cosigned by N of them before its kick-off, by the time of
  their cosignatures (their clocks, which the log's key holder cannot set).

Whatever the server answers (garbage, missing fields, wrong types, withheld reveals), each
check ends in a verdict line; none raises.

After a run where everything holds, the latest checkpoint is added to the checkpoints file, so
the next run proves the log only grew. Needs Python 3.11+ and ``cryptography``
(``rfc3161-client`` too, to check timestamps).
"""

import argparse
import base64
import binascii
import bisect
import gzip
import hashlib
import http.client
import json
import math
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from datetime import UTC, datetime

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

PAGE = 1000
#: Money and mean odds are rounded to 2 decimals on the wire, ratios to 6.
MONEY_TOLERANCE = 0.0051
RATIO_TOLERANCE = 2e-6


class Failed(Exception):
    """A check that does not hold; the message says where."""


#: What reading a malformed answer raises (a field missing or of the wrong type, text that is
#: not what it should be): a verdict, never a traceback.
MALFORMED = (
    KeyError,
    TypeError,
    ValueError,
    AttributeError,
    IndexError,
    UnicodeError,
    OverflowError,
    ZeroDivisionError,
    RecursionError,
)


def malformed(error: Exception) -> str:
    """What a malformed answer broke, for a verdict line."""
    return f"the server's answers are malformed ({type(error).__name__}: {error})"


# --- RFC 9162 hashing and proof verification ---------------------------------------------------


def leaf_hash(entry: bytes) -> bytes:
    """SHA-256(0x00 ‖ entry)."""
    return hashlib.sha256(b"\x00" + entry).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """SHA-256(0x01 ‖ left ‖ right)."""
    return hashlib.sha256(b"\x01" + left + right).digest()


def tree_levels(leaves: list[bytes]) -> list[list[bytes]]:
    """Every level of the hash tree over ``leaves``, each leaf hashed into it once: level 0 the
    leaf hashes, level h the roots of the perfect subtrees of 2^h leaves, left to right. Any
    root (:func:`root_at`) or tile is then a lookup."""
    sha256 = hashlib.sha256
    levels = [leaves]
    while len(levels[-1]) >= 2:
        below = levels[-1]
        pairs = zip(below[: len(below) & ~1 : 2], below[1::2], strict=True)
        levels.append([sha256(b"\x01" + left + right).digest() for left, right in pairs])
    return levels


def root_at(levels: list[list[bytes]], size: int) -> bytes:
    """The root of the first ``size`` leaves (RFC 9162 §2.1.1) from :func:`tree_levels`: the
    perfect subtrees of ``size``'s set bits, folded right to left (O(log n))."""
    if size == 0:
        return hashlib.sha256(b"").digest()
    subtrees, start = [], 0
    for height in reversed(range(size.bit_length())):
        if size >> height & 1:
            subtrees.append(levels[height][start >> height])
            start += 1 << height
    value = subtrees[-1]
    for left in reversed(subtrees[:-1]):
        value = node_hash(left, value)
    return value


def verify_inclusion(index, size, leaf, proof, root) -> bool:
    """RFC 9162 §2.1.3.2: whether ``proof`` shows leaf hash ``leaf`` at ``index`` under ``root``."""
    if index >= size:
        return False
    fn, sn, result = index, size - 1, leaf
    for sibling in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            result = node_hash(sibling, result)
            if not fn & 1:
                while fn and not fn & 1:
                    fn, sn = fn >> 1, sn >> 1
        else:
            result = node_hash(result, sibling)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and result == root


def verify_consistency(first, second, first_root, second_root, proof) -> bool:
    """RFC 9162 §2.1.4.2: whether ``proof`` shows the tree of ``first`` leaves (``first_root``)
    to be the start of the tree of ``second`` leaves (``second_root``)."""
    if first > second:
        return False
    if first == second:
        return not proof and first_root == second_root
    if first == 0:
        return not proof
    if not proof:
        return False
    path = list(proof)
    if first & (first - 1) == 0:  # an exact power of two: the old root is a node of the new tree
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
            if not fn & 1:
                while fn and not fn & 1:
                    fn, sn = fn >> 1, sn >> 1
        else:
            sr = node_hash(sr, value)
        fn, sn = fn >> 1, sn >> 1
    return fr == first_root and sr == second_root and sn == 0


# --- Signed notes and checkpoints --------------------------------------------------------------


@dataclass(frozen=True)
class Key:
    """A verifier key: ``name+hash+base64(0x01 ‖ Ed25519 public key)``."""

    name: str
    key_id: bytes
    public: bytes
    text: str

    @classmethod
    def parse(cls, text: str) -> "Key":
        """The key written in ``text``; Failed when it is malformed or its hash is wrong."""
        parts = text.strip().split("+", 2)
        if len(parts) != 3:
            raise Failed(f"not a verifier key: {text!r}")
        name, hash_hex, material = parts
        try:
            raw = base64.b64decode(material, validate=True)
        except binascii.Error:
            raise Failed(f"the verifier key's material is not base64: {text!r}") from None
        if len(raw) != 33 or raw[0] != 1:
            raise Failed("the verifier key is not an Ed25519 key")
        key_id = hashlib.sha256(name.encode() + b"\n" + raw).digest()[:4]
        if key_id.hex() != hash_hex.lower():
            raise Failed("the verifier key's hash does not match its name and key")
        return cls(name, key_id, raw[1:], text.strip())

    def open(self, note: str) -> str:
        """The text of ``note`` after checking this key's signature on it."""
        head, separator, tail = note.rpartition("\n\n")
        if not separator or not tail.endswith("\n"):
            raise Failed("not a signed note")
        text = head + "\n"
        signed = False
        for line in tail[:-1].split("\n"):
            if not line.startswith("\u2014 "):
                raise Failed(f"not a signature line: {line!r}")
            name, _, blob = line[2:].partition(" ")
            try:
                raw = base64.b64decode(blob, validate=True)
            except binascii.Error:
                raise Failed("a signature is not base64") from None
            if name != self.name or raw[:4] != self.key_id:
                continue  # someone else's signature: ignored, as the format says
            try:
                Ed25519PublicKey.from_public_bytes(self.public).verify(raw[4:], text.encode())
            except InvalidSignature:
                raise Failed(f"the signature by {self.name} does not verify") from None
            signed = True
        if not signed:
            raise Failed(f"no signature by the pinned key {self.name}+{self.key_id.hex()}")
        return text


@dataclass(frozen=True)
class Checkpoint:
    """A verified checkpoint: size, root hash and signing time."""

    size: int
    root: bytes
    time: datetime
    note: str
    token: str | None = None

    @classmethod
    def open(cls, key: Key, note: str, token=None) -> "Checkpoint":
        """The checkpoint in ``note``, its signature checked with ``key``."""
        lines = key.open(note).split("\n")[:-1]
        if len(lines) < 4 or lines[0] != key.name or not lines[1].isdigit():
            raise Failed("the note is not a checkpoint of this log")
        times = [line[5:] for line in lines[3:] if line.startswith("time ")]
        if len(times) != 1:
            raise Failed("the checkpoint carries no time")
        root = base64.b64decode(lines[2], validate=True)
        return cls(int(lines[1]), root, instant(times[0]), note, token)


#: Instants read so far (a season repeats its kick-offs and publishing times): text -> datetime.
_INSTANTS: dict = {}


def signed_part(note: str) -> tuple[str, str]:
    """A note's text and its first signature line (the log's own): what stays the same when
    witnesses' cosignature lines are added after it."""
    head, _, tail = note.rpartition("\n\n")
    return head, tail.partition("\n")[0]


def instant(text: str) -> datetime:
    """A ``YYYY-MM-DDTHH:MM:SSZ`` instant (each text parsed once)."""
    found = _INSTANTS.get(text)
    if found is None:
        if len(_INSTANTS) > 1_000_000:
            _INSTANTS.clear()
        found = _INSTANTS[text] = _parse_instant(text)
    return found


def _parse_instant(text: str) -> datetime:
    """``YYYY-MM-DDTHH:MM:SSZ``, every field its full width of ASCII digits; ValueError else."""
    if not isinstance(text, str):
        raise TypeError(f"not an instant: {text!r}")
    digits = text[0:4] + text[5:7] + text[8:10] + text[11:13] + text[14:16] + text[17:19]
    if (
        len(text) != 20
        or text[4] + text[7] + text[10] + text[13] + text[16] + text[19] != "--T::Z"
        or not (digits.isascii() and digits.isdigit())
    ):
        raise ValueError(f"not a YYYY-MM-DDTHH:MM:SSZ instant: {text!r}")
    return datetime(
        int(digits[0:4]),
        int(digits[4:6]),
        int(digits[6:8]),
        int(digits[8:10]),
        int(digits[10:12]),
        int(digits[12:14]),
        tzinfo=UTC,
    )


#: The canonical encoder, made once (``json.dumps`` with options makes one per call).
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical(value) -> bytes:
    """Canonical JSON: sorted keys, no spaces, UTF-8."""
    return _CANONICAL.encode(value).encode()


def parse_entries(raws: list[bytes], first: int) -> list:
    """The entries of ``raws`` (entry ``first`` on), parsed in one pass; Failed unless each is
    the canonical JSON of what it parses to (so each reads the same to any parser)."""
    try:
        values = json.loads(b"[" + b",".join(raws) + b"]")
    except ValueError:
        values = None
    if not isinstance(values, list) or len(values) != len(raws):
        values = [json.loads(raw) for raw in raws]  # the one that is not JSON raises
    for offset, (raw, value) in enumerate(zip(raws, values, strict=True)):
        if canonical(value) != raw:
            raise Failed(f"entry {first + offset} is not canonical JSON")
    return values


# --- Fetching ----------------------------------------------------------------------------------


class Pacer:
    """Keeps a run under the server's rate limits: after an answer that empties a counter (its
    ``RateLimit`` header's ``r=0``) the next request of that family of paths waits for the
    reset (``t``), a 429 waits its ``Retry-After``; and counts the requests made."""

    def __init__(self, sleep=time.sleep, clock=time.monotonic):
        self.sleep, self.clock = sleep, clock
        self.requests = 0
        self.waited = 0.0
        self.refills = {}  # family of paths -> when its counter refills (clock)

    @staticmethod
    def family(path: str) -> str:
        """The paths one counter likely covers: the tiles, or one endpoint."""
        route = path.partition("?")[0]
        return route if "/tiles/" not in route else route.partition("/tiles/")[0] + "/tiles"

    def before(self, path: str) -> None:
        """Wait, if the counter of ``path``'s family is empty; count the request."""
        wait = self.refills.pop(self.family(path), 0.0) - self.clock()
        if wait > 0:
            self.wait(wait)
        self.requests += 1

    def wait(self, seconds: float) -> None:
        """Sleep ``seconds``, counted."""
        self.waited += seconds
        self.sleep(seconds)

    def after(self, path: str, headers) -> None:
        """Note an emptied counter from an answer's ``RateLimit`` header."""
        fields = dict(
            part.strip().split("=", 1)
            for part in (headers.get("RateLimit") or "").split(";")[1:]
            if "=" in part
        )
        try:
            if int(fields.get("r", 1)) <= 0:
                self.refills[self.family(path)] = self.clock() + _retry_after(fields.get("t"))
        except ValueError:
            pass


def http_fetcher(base_url: str, token: str | None = None, timeout: float = 60, pacer=None):
    """``fetch(path, authorized=False) -> (status, JSON)`` over HTTP, paced under the server's
    limits (:class:`Pacer`: waits out emptied counters and 429s); ``fetch.raw(path) -> (status,
    bytes)`` reads a tile or a checkpoint the same way (gzip accepted); ``fetch.pacer`` counts."""
    pacer = pacer or Pacer()

    def get(path, headers):
        request = urllib.request.Request(base_url.rstrip("/") + path)
        for name, value in headers.items():
            request.add_header(name, value)
        for _ in range(10):
            pacer.before(path)
            try:
                try:
                    with urllib.request.urlopen(request, timeout=timeout) as response:
                        pacer.after(path, response.headers)
                        body = response.read()
                        if response.headers.get("Content-Encoding") == "gzip":
                            body = gzip.decompress(body)
                        return response.status, body
                except urllib.error.HTTPError as error:
                    if error.code == 429:
                        pacer.wait(_retry_after(error.headers.get("Retry-After")))
                        continue
                    return error.code, error.read()
            except (OSError, EOFError, http.client.HTTPException) as error:
                raise Failed(f"GET {path} failed: {error}") from None
        raise Failed(f"{path}: still rate-limited after 10 tries")

    def fetch(path, authorized=False):
        headers = {"Accept": "application/json"}
        if authorized and token:
            headers["Authorization"] = f"Bearer {token}"
        status, body = get(path, headers)
        if status == 200:
            return status, _json(path, body)
        return status, _json(path, body) if body else None

    def raw(path):
        return get(path, {"Accept-Encoding": "gzip, identity"})

    fetch.raw = raw
    fetch.pacer = pacer
    return fetch


def _json(path, body: bytes):
    """The JSON of an answer; Failed when it is not JSON."""
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        raise Failed(f"GET {path} answered something that is not JSON") from None


def _retry_after(value) -> int:
    """Seconds to wait from a ``Retry-After`` header: 1 to 60, 1 when unreadable."""
    try:
        return min(max(int(value), 1), 60)
    except (TypeError, ValueError):
        return 1


def fetch_ok(fetch, path, authorized=False):
    """The JSON of a 200 answer; Failed otherwise."""
    status, body = fetch(path, authorized)
    if status != 200:
        raise Failed(f"GET {path} answered {status}: {body}")
    return body


# --- The checks --------------------------------------------------------------------------------


@dataclass
class Ledger:
    """What the server published: its latest checkpoint, every entry and the checkpoints that
    first covered them."""

    key: Key
    latest: Checkpoint
    entries: list = field(default_factory=list)  # parsed entries
    raw: list = field(default_factory=list)  # their bytes
    reveals: list = field(default_factory=list)
    covering: list = field(default_factory=list)  # size of the first checkpoint with each entry
    checkpoints: dict = field(default_factory=dict)  # size -> Checkpoint
    rows: list | None = None  # examine's rows, once computed
    matches: dict = field(default_factory=dict)  # match id -> what /api/matches/{id} shows
    tiles: object = None  # where the entries were read from tiles, their cache
    leaves: list = field(default_factory=list)  # leaf hashes (read from tiles)
    trusted: set = field(default_factory=set)  # picks whose outcomes an earlier run checked
    levels: list | None = None  # the hash tree (tree_levels), once computed
    #: With a witness policy: (checkpoint sizes ascending, and for each the earliest time a
    #: quorum of the witnesses cosigned it or a larger one, None if none was); see
    #: :func:`check_cosigned_before_kickoff`.
    witnessed: tuple | None = None
    picks: dict | None = None  # picks_of's answer, once computed

    def tree(self) -> list[list[bytes]]:
        """Every level of the hash tree of the entries, each entry hashed once per run."""
        if self.levels is None:
            if len(self.leaves) != len(self.raw):
                self.leaves = [leaf_hash(data) for data in self.raw]
            self.levels = tree_levels(self.leaves)
        return self.levels


class Report:
    """Verdict lines, printed as they come."""

    def __init__(self, out=None):
        self.out = sys.stdout if out is None else out
        self.verdicts = []

    def add(self, verdict, name, detail):
        """Record and print one verdict (PASS, FAIL or SKIP)."""
        self.verdicts.append((verdict, name, detail))
        print(f"{verdict} {name}: {detail}", file=self.out, flush=True)

    def run(self, name, check, *args):
        """Run ``check(*args)``: PASS with the detail it returns, FAIL with what it raised."""
        try:
            detail = check(*args)
        except Failed as error:
            self.add("FAIL", name, str(error))
            return False
        except MALFORMED as error:
            self.add("FAIL", name, malformed(error))
            return False
        if isinstance(detail, tuple):  # ("SKIP", why)
            self.add(detail[0], name, detail[1])
            return True
        self.add("PASS", name, detail)
        return True

    @property
    def failed(self) -> bool:
        """Whether any check failed."""
        return any(verdict == "FAIL" for verdict, _, _ in self.verdicts)


# --- Tiles (C2SP tlog-tiles) and the local cache ---------------------------------------------

TILES = "/api/track-record/ledger/tiles"
CHECKPOINTS = "/api/track-record/ledger/checkpoints"
TILE_HEIGHT = 8
TILE_WIDTH = 1 << TILE_HEIGHT
#: Entries one answer of reveals spans, and days one answer of match facts.
REVEALS_SPAN = 10_000
FACT_DAYS = 7


def tile_path(level, index: int, width: int) -> str:
    """``tile/<L>/<N>[.p/<W>]`` (``tile/entries/...`` for level None), N in 3-digit segments,
    all but the last ``x``-prefixed."""
    digits = str(index)
    digits = "0" * (-len(digits) % 3) + digits
    groups = [digits[at : at + 3] for at in range(0, len(digits), 3)]
    encoded = "/".join([*(f"x{group}" for group in groups[:-1]), groups[-1]])
    tail = "" if width == TILE_WIDTH else f".p/{width}"
    return f"tile/{'entries' if level is None else level}/{encoded}{tail}"


def tile_width(level: int, index: int, size: int) -> int:
    """How wide tile ``index`` of ``level`` is in a tree of ``size`` leaves (0: none)."""
    nodes = size >> (level * TILE_HEIGHT)
    return max(0, min(TILE_WIDTH, nodes - (index << TILE_HEIGHT)))


def parse_bundle(data: bytes, width: int) -> list[bytes]:
    """The entries of an entry bundle (each after a big-endian uint16 length); Failed unless it
    holds exactly ``width`` of them."""
    found, at = [], 0
    while at < len(data):
        if at + 2 > len(data):
            raise Failed("an entry bundle ends inside a length")
        length = int.from_bytes(data[at : at + 2], "big")
        found.append(data[at + 2 : at + 2 + length])
        at += 2 + length
        if at > len(data):
            raise Failed("an entry bundle ends inside an entry")
    if len(found) != width:
        raise Failed(f"an entry bundle holds {len(found)} entries, not {width}")
    return found


def perfect_root(hashes) -> bytes:
    """The root of a perfect subtree from its 2^k lowest hashes."""
    level = list(hashes)
    while len(level) > 1:
        level = [node_hash(level[at], level[at + 1]) for at in range(0, len(level), 2)]
    return level[0]


def tile_levels(levels: list[list[bytes]]) -> list[list[bytes]]:
    """The hashes each tile level holds, from the tree's levels (:func:`tree_levels`): tile
    level L is tree level 8·L, the roots of the full 256-wide runs of tile level L − 1."""
    return levels[::TILE_HEIGHT]


def root_from_tiles(size: int, read_tile) -> bytes:
    """The root of a tree of ``size`` leaves from its tiles alone (``read_tile(level, index,
    width) -> bytes``): one perfect subtree per set bit of ``size``, each a hash of a tile or
    the root of a run of hashes within one."""
    if size == 0:
        return hashlib.sha256(b"").digest()
    read = {}
    subtrees, start = [], 0
    for height in reversed(range(size.bit_length())):
        if not size >> height & 1:
            continue
        level, rest = divmod(height, TILE_HEIGHT)
        first = (start >> height) << rest  # the run's first hash, at the tile level
        index = first >> TILE_HEIGHT
        width = tile_width(level, index, size)
        if (level, index) not in read:
            data = read_tile(level, index, width)
            if len(data) != 32 * width:
                raise Failed(f"{tile_path(level, index, width)} is not {width} hashes")
            read[(level, index)] = data
        data = read[(level, index)]
        offset = first - (index << TILE_HEIGHT)
        run = [data[32 * at : 32 * at + 32] for at in range(offset, offset + (1 << rest))]
        subtrees.append(perfect_root(run))
        start += 1 << height
    value = subtrees[-1]
    for left in reversed(subtrees[:-1]):
        value = node_hash(left, value)
    return value


class TileCache:
    """Full tiles, checkpoints, reveals and how far outcomes were checked, kept in a folder
    between runs. Full tiles never change, so each is fetched once; what a run fetched is
    written only once the run holds (:meth:`commit`), so nothing unproven is ever kept."""

    def __init__(self, folder):
        import pathlib

        self.folder = pathlib.Path(folder)
        self.new_tiles = {}  # relative path -> bytes, written on commit
        self.hits = 0
        self.state = self._json("state.json", {})
        self.checkpoints = self._json("checkpoints.json", [])
        self.reveals = {int(index): item for index, item in self._json("reveals.json", {}).items()}

    def _json(self, name, default):
        try:
            return json.loads((self.folder / name).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return default
        except (OSError, ValueError) as error:
            raise Failed(f"the cache's {name} cannot be read ({error})") from None

    def tile(self, path: str) -> bytes | None:
        """A full tile kept by an earlier run, or None."""
        try:
            data = (self.folder / path).read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None
        self.hits += 1
        return data

    def keep(self, path: str, data: bytes) -> None:
        """Keep a full tile fetched now (written by :meth:`commit`)."""
        self.new_tiles[path] = data

    def commit(self, key_text: str, checked: int) -> None:
        """Write what this run fetched and proved, and that outcomes up to entry ``checked``
        were checked against the matches."""
        for path, data in self.new_tiles.items():
            target = self.folder / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        self.folder.mkdir(parents=True, exist_ok=True)
        for name, value in (
            ("checkpoints.json", self.checkpoints),
            ("reveals.json", {str(index): item for index, item in self.reveals.items()}),
            ("state.json", {"verifierKey": key_text, "checked": checked}),
        ):
            (self.folder / name).write_text(json.dumps(value), encoding="utf-8")


def fetch_raw_ok(fetch, path) -> bytes:
    """The bytes of a 200 answer; Failed otherwise."""
    status, body = fetch.raw(path)
    if status != 200:
        raise Failed(f"GET {path} answered {status}")
    return body


def remembering(fetch):
    """``fetch`` answering each JSON path once per run (the record is read by two checks)."""
    answers = {}

    def again(path, authorized=False):
        if (path, authorized) not in answers:
            answers[(path, authorized)] = fetch(path, authorized)
        return answers[(path, authorized)]

    again.raw = fetch.raw
    return again


def load_tiles(fetch, key: Key, cache: TileCache, first_page: dict, full=False) -> Ledger:
    """The latest checkpoint and every entry up to it, from tiles (full ones from ``cache`` when
    an earlier run kept them), with every checkpoint (``first_page`` the first answer of
    ``/ledger/checkpoints``), the reveals and the facts of the matches whose outcomes this run
    checks: those appended since the last green run, or all with ``full``."""
    note = fetch_raw_ok(fetch, f"{TILES}/checkpoint").decode()
    latest = Checkpoint.open(key, note)
    listed = [item for item in cache.checkpoints if item["size"] <= latest.size]
    page = first_page
    while True:
        listed += [item for item in page["items"] if item["size"] <= latest.size]
        if not page["more"] or not page["items"] or page["items"][-1]["size"] >= latest.size:
            break
        page = fetch_ok(fetch, f"{CHECKPOINTS}?after={page['items'][-1]['size']}")
    sizes = [item["size"] for item in listed]
    if sizes != sorted(set(sizes)) or not sizes or sizes[-1] != latest.size:
        raise Failed("the listed checkpoints do not run up to the latest one")
    ledger = Ledger(key, latest)
    for item in listed:
        opened = Checkpoint.open(key, item["signedNote"], item.get("timestampToken"))
        if opened.size != item["size"]:
            raise Failed(f"the checkpoint listed as size {item['size']} signs another size")
        ledger.checkpoints[opened.size] = opened
    if signed_part(ledger.checkpoints[latest.size].note) != signed_part(latest.note):
        raise Failed("the checkpoint tile and the listed latest checkpoint differ")
    ledger.checkpoints[latest.size] = Checkpoint.open(
        key, latest.note, listed[-1].get("timestampToken")
    )
    ledger.latest = ledger.checkpoints[latest.size]
    # the tile's note, read now, carries the cosignatures that came since it was listed
    listed[-1] = {**listed[-1], "signedNote": latest.note}
    cache.checkpoints = listed
    ledger.tiles = cache
    # Entries, from their bundles
    for index in range(-(-latest.size // TILE_WIDTH)):
        width = tile_width(0, index, latest.size)
        path = tile_path(None, index, width)
        data = cache.tile(path) if width == TILE_WIDTH else None
        if data is None:
            data = fetch_raw_ok(fetch, f"{TILES}/{path}")
            if width == TILE_WIDTH:
                cache.keep(path, data)
        raws = parse_bundle(data, width)
        ledger.entries += parse_entries(raws, len(ledger.raw))
        ledger.raw += raws
    ledger.leaves = [leaf_hash(raw) for raw in ledger.raw]
    ledger.covering = [sizes[bisect.bisect_right(sizes, index)] for index in range(latest.size)]
    load_reveals(fetch, ledger, cache)
    checked = 0 if full else min(cache.state.get("checked", 0), latest.size)
    load_match_facts(fetch, ledger, checked)
    return ledger


def load_reveals(fetch, ledger: Ledger, cache: TileCache) -> None:
    """Every reveal the server shows: kept ones from the cache, the rest read by spans of
    :data:`REVEALS_SPAN` entries holding a published pick not revealed yet."""
    wanted = [
        index
        for index, entry in enumerate(ledger.entries)
        if entry["type"] == "pick.published" and index not in cache.reveals
    ]
    for span in sorted({index // REVEALS_SPAN for index in wanted}):
        start = span * REVEALS_SPAN
        end = min(start + REVEALS_SPAN, ledger.latest.size)
        page = fetch_ok(fetch, f"/api/track-record/ledger/reveals?start={start}&end={end}")
        for item in page["items"]:
            cache.reveals[item["index"]] = item["reveal"]
    ledger.reveals = [cache.reveals.get(index) for index in range(ledger.latest.size)]


def load_match_facts(fetch, ledger: Ledger, checked: int) -> None:
    """The facts (kick-off, status, score) of the matches of the outcomes from entry ``checked``
    on, a week of matches an answer; outcomes before it were checked on an earlier green run
    and are judged on what they record (``ledger.trusted``)."""
    published = {}
    weeks = set()
    for index, entry in enumerate(ledger.entries):
        if entry["type"] == "pick.published":
            published[entry["pickId"]] = entry
            continue
        if index < checked:
            ledger.trusted.add(entry["pickId"])
            continue
        origin = published.get(entry["pickId"])
        when = entry.get("kickoffAt") or (origin or {}).get("kickoffAt")
        if when is None:
            continue
        day = instant(when).date()
        weeks.add(day.fromordinal(day.toordinal() - day.weekday()))  # its week's Monday
    for monday in sorted(weeks):
        page = fetch_ok(fetch, f"/api/track-record/ledger/matches?from={monday}&days={FACT_DAYS}")
        for item in page["items"]:
            ledger.matches[item["id"]] = {
                "kickoff": moment(item["kickoffAt"]),
                "status": item["status"],
                "score": score_of(item["score"]),
            }


def check_tiles(fetch, ledger: Ledger):
    """The served tiles are the tree of the entries: every tile above level 0 (full ones kept
    once checked) and the level-0 tile at the right edge equal the hashes recomputed from the
    bundles, and the root read from the tiles alone is the signed root."""
    cache, size = ledger.tiles, ledger.latest.size
    computed = tile_levels(ledger.tree())
    read = {}

    def read_tile(level, index, width):
        path = tile_path(level, index, width)
        if (level, index) not in read:
            data = cache.tile(path) if width == TILE_WIDTH else None
            if data is None:
                data = fetch_raw_ok(fetch, f"{TILES}/{path}")
                if width == TILE_WIDTH:
                    cache.keep(path, data)
            read[(level, index)] = data
        return read[(level, index)]

    wanted = [
        (level, index)
        for level in range(1, len(computed) + 1)
        for index in range(-(-(size >> (level * TILE_HEIGHT)) // TILE_WIDTH))
    ]
    if size % TILE_WIDTH:
        wanted.append((0, size // TILE_WIDTH))
    for level, index in wanted:
        width = tile_width(level, index, size)
        if not width:
            continue
        first = index * TILE_WIDTH
        expected = b"".join(computed[level][first : first + width])
        if read_tile(level, index, width) != expected:
            raise Failed(f"{tile_path(level, index, width)} is not the tree of the entries")
    if root_from_tiles(size, read_tile) != ledger.latest.root:
        raise Failed("the root read from the tiles is not the signed root")
    return (
        f"{len(read)} tiles equal the tree recomputed from the entries and give the signed "
        f"root; {cache.hits} full tiles and bundles read from the cache"
    )


def load(fetch, key: Key) -> Ledger:
    """The latest checkpoint and every entry up to it."""
    head = fetch_ok(fetch, "/api/track-record/ledger")
    if head["signedNote"] is None:
        raise Failed("the ledger has no checkpoint yet")
    latest = Checkpoint.open(key, head["signedNote"], head.get("timestampToken"))
    if latest.size != head["size"] or latest.root.hex() != head["rootHash"]:
        raise Failed("the answer's size or root differs from its signed checkpoint")
    ledger = Ledger(key, latest)
    ledger.checkpoints[latest.size] = latest
    while len(ledger.entries) < latest.size:
        start = len(ledger.entries)
        end = min(start + PAGE, latest.size)
        page = fetch_ok(fetch, f"/api/track-record/ledger/entries?start={start}&end={end}")
        for item in page["checkpoints"]:
            if item["size"] not in ledger.checkpoints:
                ledger.checkpoints[item["size"]] = Checkpoint.open(
                    key, item["signedNote"], item.get("timestampToken")
                )
        if not page["items"]:
            raise Failed(f"entries from {start} are missing")
        for item in page["items"]:
            if item["index"] != len(ledger.entries):
                raise Failed(f"entry {len(ledger.entries)} is missing (got {item['index']})")
            data = item["entry"].encode()
            (parsed,) = parse_entries([data], item["index"])
            leaf = leaf_hash(data)
            if leaf.hex() != item["leafHash"]:
                raise Failed(f"entry {item['index']}'s leaf hash is not SHA-256(0x00 ‖ entry)")
            ledger.raw.append(data)
            ledger.leaves.append(leaf)
            ledger.entries.append(parsed)
            ledger.reveals.append(item["reveal"])
            ledger.covering.append(item["checkpointSize"])
    return ledger


def check_roots(ledger: Ledger):
    """The root of the entries at every checkpoint's size equals the checkpoint's root."""
    levels = ledger.tree()
    sizes = sorted(ledger.checkpoints)
    previous = None
    for size in sizes:
        checkpoint = ledger.checkpoints[size]
        if size > len(ledger.raw):
            raise Failed(f"checkpoint {size} covers more than the {len(ledger.raw)} entries")
        if root_at(levels, size) != checkpoint.root:
            raise Failed(f"the entries' root at size {size} is not the signed root")
        if previous is not None and checkpoint.time < previous.time:
            raise Failed(f"checkpoint {size} is signed before a smaller one")
        previous = checkpoint
    return (
        f"{ledger.latest.size} entries hash to the signed root; "
        f"{len(sizes)} checkpoints agree with them"
    )


def check_saved(fetch, ledger: Ledger, saved: list[str]):
    """Each saved checkpoint is a prefix of today's tree, by proof and by recomputation."""
    if not saved:
        return ("SKIP", "no checkpoint saved yet: this run's will be")
    levels = ledger.tree()
    opened = [Checkpoint.open(ledger.key, note) for note in saved]
    for checkpoint in opened:
        if checkpoint.size > min(ledger.latest.size, len(ledger.raw)):
            raise Failed(f"a saved checkpoint has {checkpoint.size} entries; the log now fewer")
        if root_at(levels, checkpoint.size) != checkpoint.root:
            raise Failed(f"the saved checkpoint of size {checkpoint.size} was rewritten")
        if ledger.tiles is not None:  # every root recomputed from the tiles' entries: no proof
            continue
        proof = fetch_ok(
            fetch,
            f"/api/track-record/ledger/proof?fromSize={checkpoint.size}"
            f"&treeSize={ledger.latest.size}",
        )
        hashes = [bytes.fromhex(value) for value in proof["hashes"]]
        if not verify_consistency(
            checkpoint.size, ledger.latest.size, checkpoint.root, ledger.latest.root, hashes
        ):
            raise Failed(f"no valid consistency proof from the saved size {checkpoint.size}")
    return f"{len(opened)} saved checkpoints are prefixes of the current log"


def check_inclusion(fetch, ledger: Ledger):
    """The server proves the last entry (and the first) included under the latest root."""
    size = ledger.latest.size
    if ledger.tiles is not None:
        return ("SKIP", "read from tiles: any proof is built from them (see tiles)")
    for index in sorted({0, size - 1}):
        proof = fetch_ok(fetch, f"/api/track-record/ledger/proof?index={index}&treeSize={size}")
        hashes = [bytes.fromhex(value) for value in proof["hashes"]]
        if not verify_inclusion(index, size, ledger.tree()[0][index], hashes, ledger.latest.root):
            raise Failed(f"the inclusion proof of entry {index} does not verify")
    return "inclusion proofs of the first and last entries verify"


def token_time(token: str, note: str, tsa_certificate):
    """When an RFC 3161 authority stamped ``note`` (its token checked against the authority's
    certificate); Failed when the token does not hold."""
    import rfc3161_client

    response = rfc3161_client.decode_timestamp_response(base64.b64decode(token))
    verifier = rfc3161_client.VerifierBuilder(roots=[tsa_certificate]).build()
    try:
        verifier.verify_message(response, note.encode())
    except rfc3161_client.VerificationError as error:
        raise Failed(f"a checkpoint's timestamp does not verify: {error}") from None
    return response.tst_info.gen_time.astimezone(UTC)


def check_before_kickoff(ledger: Ledger, tsa_certificate=None):
    """Each pick was in a checkpoint signed (and timestamped, where stamped) before kick-off."""
    published = 0
    stamped = {}
    for index, entry in enumerate(ledger.entries):
        if entry["type"] != "pick.published":
            continue
        published += 1
        size = ledger.covering[index]
        checkpoint = ledger.checkpoints.get(size)
        if checkpoint is None or size <= index:
            raise Failed(f"entry {index} names no checkpoint that covers it")
        kickoff = instant(entry["kickoffAt"])
        if checkpoint.time >= kickoff:
            raise Failed(
                f"pick {entry['pickId']} (entry {index}) was first signed at "
                f"{checkpoint.time:%Y-%m-%dT%H:%M:%SZ}, not before its kick-off "
                f"{entry['kickoffAt']}"
            )
        if checkpoint.token and tsa_certificate is not None:
            if size not in stamped:
                stamped[size] = token_time(checkpoint.token, checkpoint.note, tsa_certificate)
            if stamped[size] >= kickoff:
                raise Failed(f"pick {entry['pickId']} was timestamped after its kick-off")
    detail = f"{published} picks were signed before their kick-off"
    if stamped:
        detail += f"; {len(stamped)} checkpoints' RFC 3161 timestamps agree"
    return detail


def check_timestamps(ledger: Ledger, tsa_certificate=None):
    """Every timestamp token verifies against the authority's certificate."""
    tokens = {size: cp for size, cp in ledger.checkpoints.items() if cp.token}
    if not tokens:
        return ("SKIP", "no checkpoint carries an RFC 3161 timestamp")
    if tsa_certificate is None:
        return ("SKIP", f"{len(tokens)} checkpoints carry timestamps; give --tsa-cert to check")
    for checkpoint in tokens.values():
        token_time(checkpoint.token, checkpoint.note, tsa_certificate)
    return f"{len(tokens)} RFC 3161 timestamps verify"


def opens(commitment: str, reveal: dict) -> bool:
    """Whether ``reveal`` opens ``commitment``: SHA-256(salt ‖ canonical pick)."""
    salt = bytes.fromhex(reveal["salt"])
    return hashlib.sha256(salt + canonical(reveal["pick"])).hexdigest() == commitment


def picks_of(ledger: Ledger):
    """Per pick id: its published entry, index, reveal and outcome entry; Failed where the
    entries do not fit together."""
    if ledger.picks is not None:
        return ledger.picks
    by_hash = {leaf.hex(): index for index, leaf in enumerate(ledger.tree()[0])}
    picks = {}
    for index, entry in enumerate(ledger.entries):
        kind = entry["type"]
        if kind == "pick.published":
            if entry["pickId"] in picks:
                raise Failed(f"pick {entry['pickId']} is published twice")
            picks[entry["pickId"]] = {"entry": entry, "index": index, "outcome": None}
            continue
        if kind not in ("pick.settled", "pick.voided"):
            raise Failed(f"entry {index} has an unknown type {kind!r}")
        cited = by_hash.get(entry["published"])
        if cited is None or cited >= index:
            raise Failed(f"entry {index} cites no earlier entry")
        origin = ledger.entries[cited]
        if origin["type"] != "pick.published" or origin["pickId"] != entry["pickId"]:
            raise Failed(f"entry {index} cites an entry that is not its pick's publication")
        pick = picks[entry["pickId"]]
        if pick["outcome"] is not None:
            raise Failed(f"pick {entry['pickId']} is settled twice")
        if (kind == "pick.voided") != (entry["status"] == "void"):
            raise Failed(f"entry {index}'s type and status disagree")
        pick["outcome"] = entry
    ledger.picks = picks
    return picks


def check_reveals(ledger: Ledger):
    """Each reveal opens its commitment and names its entry's pick; settled picks are revealed."""
    picks = picks_of(ledger)
    opened = sealed = 0
    for pick_id, pick in picks.items():
        entry, reveal = pick["entry"], ledger.reveals[pick["index"]]
        if reveal is None:
            if pick["outcome"] is not None:
                raise Failed(f"pick {pick_id} is settled but not revealed")
            sealed += 1
            continue
        if not opens(entry["commitment"], reveal):
            raise Failed(f"pick {pick_id}'s reveal does not open its commitment")
        shown = reveal["pick"]
        for name, mine in (("id", "pickId"), ("matchId", "matchId"), ("market", "market")):
            if shown[name] != entry[mine]:
                raise Failed(f"pick {pick_id}'s reveal names another {name}")
        for name in ("rating", "publishedAt"):
            if shown[name] != entry[name]:
                raise Failed(f"pick {pick_id}'s reveal names another {name}")
        opened += 1
    return f"{opened} reveals open their commitments; {sealed} picks still sealed before kick-off"


#: The markets' winning selection for a final score (engine.markets.outcome).
WINNERS = {
    "1x2": lambda home, away: "home" if home > away else "draw" if home == away else "away",
    "ou25": lambda home, away: "over" if home + away > 2 else "under",
    "btts": lambda home, away: "yes" if home > 0 and away > 0 else "no",
}
#: The markets quoted at a line and their selections (the first wins above the line): Asian
#: handicap at the home side's handicap, over/under at a number of goals.
LINE_MARKETS = {"ah": ("home", "away"), "ou": ("over", "under")}
#: A line bet's status for each result, the fraction of its stake won (a push is void).
LINE_STATUSES = {1.0: "won", 0.5: "half-won", 0.0: "void", -0.5: "half-lost", -1.0: "lost"}
#: The fraction of the stake each status wins (negative: loses), the odds' gain counted apart.
RESULTS = {"won": 1.0, "half-won": 0.5, "void": 0.0, "half-lost": -0.5, "lost": -1.0}


def line_result(market: str, selection: str, line: float, home: int, away: int) -> float:
    """A line bet's result (engine.model.lines.results): the mean over its two half stakes (at line
    ∓ 0.25 for a quarter line, both at the line otherwise) of +1 won, 0 pushed, -1 lost. The
    Asian handicap's "home" wins a half at h when home − away + h > 0; "over" when the total
    goals exceed h; the second selection is the opposite bet."""
    quarter = (line * 4) % 2 == 1
    halves = (line - 0.25, line + 0.25) if quarter else (line, line)
    first, second = LINE_MARKETS[market]
    if selection not in (first, second):
        raise Failed(f"{selection!r} is not a selection of {market}")
    value = home - away if market == "ah" else home + away
    sign = 1.0 if selection == first else -1.0
    total = 0.0
    for half in halves:
        margin = value + half if market == "ah" else value - half
        total += (margin > 0) - (margin < 0)
    return sign * total / 2


def expected_profit(status: str, stake: float, odds: float) -> float:
    """The profit of a settled pick's status at its price: stake × (max(r, 0)·(odds − 1) +
    min(r, 0)) with r the fraction of the stake the status wins."""
    result = RESULTS[status]
    return stake * (max(result, 0.0) * (odds - 1.0) + min(result, 0.0))


#: Which closing line an outcome's closing price is (the source's, or the service's own from
#: the prices it saw), null without one.
CLOSING_LINES = ("source", "seen", None)
#: The live rule's reasons the verifier gives itself, as outcomes name them.
MADE_AFTER, SIGNED_AFTER = "made-after-kickoff", "signed-after-kickoff"
#: With a witness policy: no checkpoint with the pick was cosigned by a quorum before kick-off.
NOT_COSIGNED = "not-cosigned-before-kickoff"


def moment(text) -> datetime:
    """An ISO 8601 instant with ``Z`` (as the API writes them), to the second."""
    if isinstance(text, str) and len(text) == 20 and text[19] == "Z":
        try:
            return instant(text)
        except ValueError:
            pass
    if not isinstance(text, str) or not text.endswith("Z"):
        raise Failed(f"not a UTC instant: {text!r}")
    value = datetime.fromisoformat(text[:-1] + "+00:00").astimezone(UTC)
    return value.replace(microsecond=0)


def number(text, pick_id, what: str) -> float:
    """A ledger number (a decimal string) as a float; Failed, naming pick ``pick_id``'s
    ``what``, when it is not one."""
    if type(text) is not str:
        raise Failed(f"pick {pick_id}'s {what} is not a decimal string: {text!r}")
    value = float(text)
    if not math.isfinite(value):
        raise Failed(f"pick {pick_id}'s {what} is not finite: {text!r}")
    return value


def score_of(value):
    """``(home, away)`` goals from a ``{home, away}`` object, None for null (or no goals)."""
    if value is None:
        return None
    home, away = value["home"], value["away"]
    if home is None and away is None:
        return None
    for goals in (home, away):
        if type(goals) is not int or goals < 0:
            raise Failed(f"not a score: {value!r}")
    return home, away


def match_today(fetch, ledger: Ledger, match_id) -> dict:
    """What ``/api/matches/{id}`` shows of a match today: kick-off, status and score."""
    if type(match_id) is not int:
        raise Failed(f"not a match id: {match_id!r}")
    if match_id not in ledger.matches:
        status, body = fetch(f"/api/matches/{match_id}")
        if status != 200 or not isinstance(body, dict):
            ledger.matches[match_id] = None
        else:
            ledger.matches[match_id] = {
                "kickoff": moment(body["kickoffAt"]),
                "status": body["status"],
                "score": score_of(body["score"]),
            }
    found = ledger.matches[match_id]
    if found is None:
        raise Failed(f"/api/matches/{match_id} does not show the match")
    return found


def live_reason(made: datetime, signed: datetime | None, kickoff: datetime) -> str | None:
    """The live rule (as the service applies it when a pick settles): why a pick is not live,
    None when it is."""
    if not made < kickoff:
        return MADE_AFTER
    if signed is None or not signed < kickoff:
        return SIGNED_AFTER
    return None


def examine(fetch, ledger: Ledger) -> list[dict]:
    """One row per published pick, in entry order, re-derived from the entries alone (and what
    ``/api/matches/{id}`` shows where an old outcome records nothing): its competition type,
    status, stake, odds, edge, profit, CLV, fair closing EV, kick-off, whether the live rule
    holds (``reason``) and whether its outcome says so (``claimed``), and ``problems``: every
    way its outcome does not follow. Computed once per run."""
    if ledger.rows is not None:
        return ledger.rows
    rows = []
    for pick_id, pick in picks_of(ledger).items():
        entry, outcome = pick["entry"], pick["outcome"]
        reveal = ledger.reveals[pick["index"]]
        row = {
            "pick_id": pick_id,
            "type": entry["competitionType"],
            "status": "pending",
            "kickoff": instant(entry["kickoffAt"]),
            "reason": None,
            "claimed": None,
            "problems": [],
        }
        row.update(stake=None, odds=None, edge=None, profit=None, clv=None, closing_ev=None)
        row["recorded_closing"] = True
        if reveal is not None:
            shown = reveal["pick"]
            row["stake"] = number(shown["stake"], pick_id, "stake")
            row["odds"] = number(shown["odds"], pick_id, "odds")
            row["edge"] = number(shown["edge"], pick_id, "edge")
        if outcome is not None:
            try:
                settle_row(fetch, ledger, pick, row, reveal)
            except Failed as error:
                row["problems"].append(str(error))
            except MALFORMED as error:
                row["problems"].append(f"pick {pick_id}: {malformed(error)}")
        rows.append(row)
    ledger.rows = rows
    return rows


def settle_row(fetch, ledger: Ledger, pick: dict, row: dict, reveal) -> None:
    """Fill ``row`` from a settled pick's outcome entry, re-deriving it; problems go to
    ``row["problems"]`` (Failed for the first that stops the rest)."""
    entry, outcome, pick_id = pick["entry"], pick["outcome"], pick["entry"]["pickId"]
    problems = row["problems"]
    row["status"] = outcome["status"]
    row["profit"] = number(outcome["profit"], pick_id, "profit")
    if pick_id in ledger.trusted and "kickoffAt" in outcome:
        # checked against its match on an earlier green run (the cache's): judged on its record
        today = {
            "kickoff": instant(outcome["kickoffAt"]),
            "status": outcome["matchStatus"],
            "score": score_of(outcome["score"]),
        }
    else:
        today = match_today(fetch, ledger, entry["matchId"])
    recorded = "kickoffAt" in outcome  # outcomes written before these fields record none
    if recorded:
        kickoff = instant(outcome["kickoffAt"])
        match_status, score = outcome["matchStatus"], score_of(outcome["score"])
        row["played_later"] = played_after_voiding(outcome, today)
        for name, mine, theirs in (
            ("kick-off", kickoff, today["kickoff"]),
            ("status", match_status, today["status"]),
            ("score", score, today["score"]),
        ):
            if mine != theirs and not row["played_later"]:
                problems.append(
                    f"pick {pick_id}: its outcome records the match's {name} as {shown(mine)}, "
                    f"/api/matches/{entry['matchId']} shows {shown(theirs)}"
                )
    else:
        kickoff, match_status, score = today["kickoff"], today["status"], today["score"]
    row["kickoff"] = today["kickoff"]
    # The live rule, from the entries: made (published) and first signed before the kick-off.
    covering = ledger.covering[pick["index"]]
    checkpoint = ledger.checkpoints.get(covering)
    signed = checkpoint.time if checkpoint is not None and covering > pick["index"] else None
    row["reason"] = live_reason(instant(entry["publishedAt"]), signed, kickoff)
    if row["reason"] is None and ledger.witnessed is not None:
        vouched = witnessed_at(ledger, pick["index"])
        if vouched is None or not vouched < kickoff:
            row["reason"] = NOT_COSIGNED
    if recorded:
        if type(outcome["live"]) is not bool:
            raise Failed(f"pick {pick_id}'s outcome says neither live nor not")
        row["claimed"] = None if outcome["live"] else outcome["notLiveReason"]
        if outcome["live"] and outcome["notLiveReason"] is not None:
            raise Failed(f"pick {pick_id}'s outcome is live with a reason not to be")
    if reveal is None:
        raise Failed(f"pick {pick_id} is settled but its reveal is withheld")
    if row["stake"] <= 0 or row["odds"] <= 1.0:
        raise Failed(f"pick {pick_id}'s revealed stake or odds cannot be bet")
    shown_pick = reveal["pick"]
    market, selection = shown_pick["market"], shown_pick["selection"]
    line = pick_line(shown_pick, outcome, market)
    if match_status == "finished" and score is not None:
        if market in LINE_MARKETS:
            status = LINE_STATUSES[line_result(market, selection, line, *score)]
        elif market in WINNERS:
            status = "won" if WINNERS[market](*score) == selection else "lost"
        else:
            raise Failed(f"pick {pick_id} is of an unknown market {market!r}")
    elif match_status == "cancelled" or (
        match_status == "postponed" and instant(outcome["settledAt"]) > kickoff
    ):
        status = "void"
    else:
        status = None
    if status != outcome["status"]:
        problems.append(
            f"pick {pick_id} is {outcome['status']}, but its match {match_status} "
            f"{shown(score)} makes it {status or 'unsettled'}"
        )
    if outcome["status"] not in RESULTS:
        raise Failed(f"pick {pick_id} settles with an unknown status {outcome['status']!r}")
    expected = expected_profit(outcome["status"], row["stake"], row["odds"])
    if abs(row["profit"] - expected) > 1e-9:
        problems.append(f"pick {pick_id}'s profit does not follow from its price")
    closing = outcome["closingOdds"]
    clv = outcome["clv"]
    if closing is not None and number(closing, pick_id, "closing odds") > 1.0:
        if clv is None:
            problems.append(f"pick {pick_id} has a closing price but no CLV")
        else:
            row["clv"] = number(clv, pick_id, "CLV")
            if abs(row["odds"] / float(closing) - 1.0 - row["clv"]) > 1e-9:
                problems.append(f"pick {pick_id}'s CLV does not follow from its prices")
    elif clv is not None:
        problems.append(f"pick {pick_id} has a CLV but no closing price")
    if "closingLine" in outcome:  # outcomes written before it was named carry none
        line = outcome["closingLine"]
        if line not in CLOSING_LINES or (line is None) != (closing is None):
            problems.append(
                f"pick {pick_id}'s closing line {shown(line)} does not name where its closing "
                f"price {shown(closing)} came from"
            )
    if "closingProbability" not in outcome:
        row["recorded_closing"] = False
    elif outcome["closingProbability"] is not None:
        fair = number(outcome["closingProbability"], pick_id, "closing probability")
        # A line pick whose line moved by the close has no closing price at its line, only the
        # closing line's fair probability carried to it.
        priced = closing is not None or market in LINE_MARKETS
        if not 0.0 < fair <= 1.0 or not priced:
            problems.append(f"pick {pick_id}'s closing probability {fair} is not one")
        row["closing_ev"] = row["odds"] * fair - 1.0


def pick_line(shown: dict, outcome: dict, market: str) -> float | None:
    """The line of a pick from its reveal (``shown``, checked to open the commitment; the
    published entry carries no line, which is part of the sealed pick), None for a market
    without one; Failed where the outcome names another line, a line is missing or where none
    belongs."""
    pick_id = shown["id"]
    if market not in LINE_MARKETS:
        if "line" in shown or "line" in outcome:
            raise Failed(f"pick {pick_id} of {market} carries a line")
        return None
    if shown.get("line") is None or outcome.get("line") != shown["line"]:
        raise Failed(f"pick {pick_id}'s outcome and its revealed pick name different lines")
    line = number(shown["line"], pick_id, "line")
    if (line * 4) % 1:
        raise Failed(f"pick {pick_id}'s line {shown['line']} is not in quarter goals")
    return line


#: The statuses of a match that has been played (or is being played).
PLAYED = ("live", "finished")


def played_after_voiding(outcome: dict, today: dict) -> bool:
    """Whether an outcome and today's match disagree honestly: the pick was voided because its
    match was postponed or cancelled, and the match was played later, at a kick-off after the
    outcome was settled (a settled pick never changes, so its outcome keeps the match as it
    stood). Nothing else excuses a difference."""
    return (
        outcome["status"] == "void"
        and outcome["matchStatus"] in ("postponed", "cancelled")
        and today["status"] in PLAYED
        and today["kickoff"] > instant(outcome["settledAt"])
    )


def shown(value) -> str:
    """A recorded value as a verdict line writes it."""
    if isinstance(value, datetime):
        return f"{value:%Y-%m-%dT%H:%M:%SZ}"
    if isinstance(value, tuple):
        return f"{value[0]}-{value[1]}"
    return "none" if value is None else str(value)


def check_outcomes(fetch, ledger: Ledger):
    """Every outcome follows from the entries, and records the match as it stands today."""
    rows = examine(fetch, ledger)
    problems = [problem for row in rows for problem in row["problems"]]
    if problems:
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        raise Failed("; ".join(problems[:5]) + more)
    settled = [row for row in rows if row["status"] != "pending"]
    old = sum(not row["recorded_closing"] for row in settled)
    detail = f"{len(settled)} outcomes follow from their entries and match /api/matches/{{id}}"
    if old:
        detail += f" ({old} written before outcomes recorded the match, judged on its answer)"
    later = sum(bool(row.get("played_later")) for row in settled)
    if later:
        detail += f"; {later} voided before their postponed or cancelled match was played later"
    return detail


def check_live_rule(fetch, ledger: Ledger):
    """Every settled pick is live only if made and first signed before its real kick-off; the
    record says the same of each, and sets apart (never counts) those that fail."""
    rows = [row for row in examine(fetch, ledger) if row["status"] != "pending"]
    wrong = []
    for row in rows:
        mine, theirs = row["reason"], row["claimed"]
        if mine == theirs:
            continue
        if theirs is None:
            wrong.append(f"pick {row['pick_id']} is counted live, but it is not: {mine}")
        elif mine is None:
            wrong.append(f"pick {row['pick_id']} is set apart ({theirs}) but it is live")
        else:
            wrong.append(f"pick {row['pick_id']} is set apart as {theirs}, but {mine}")
    apart = {row["pick_id"]: row["reason"] for row in rows if row["reason"] is not None}
    answer = fetch_ok(fetch, "/api/track-record/by-competition-type?isLive=true")
    listed = answer.get("setApart")
    if listed is not None:
        items = {item["pickId"]: item["reason"] for item in listed["items"]}
        if len(items) == listed["count"]:  # the whole list is shown
            for pick_id, reason in apart.items():
                if items.get(pick_id) != reason:
                    wrong.append(f"pick {pick_id} ({reason}) is not listed as set apart")
        elif listed["count"] < len(apart):
            wrong.append(f"{len(apart)} picks fail the live rule, the record sets apart fewer")
    if wrong:
        more = f" (and {len(wrong) - 5} more)" if len(wrong) > 5 else ""
        raise Failed("; ".join(wrong[:5]) + more)
    detail = f"{len(rows) - len(apart)} settled picks were made and signed before kick-off"
    if ledger.witnessed is not None:
        detail += ", each cosigned by a quorum of the witnesses before it"
    if apart:
        named = ", ".join(f"pick {pick_id} ({reason})" for pick_id, reason in apart.items())
        detail += f"; set apart, as the record says: {named}"
    return detail


def figures(rows) -> dict:
    """Every figure of the track record of a set of picks, as the service defines them (in
    settlement order: kick-off, then pick id); None for avgClosingEv and its standard error when
    an outcome does not record its closing probability (``"unknown"`` then)."""
    rows = sorted(rows, key=lambda row: (row["kickoff"], row["pick_id"]))
    settled = [row for row in rows if row["status"] != "pending"]
    # A quarter-line bet half won or half lost is decided like a won or lost one.
    decided = [row for row in settled if row["status"] in ("won", "lost", "half-won", "half-lost")]
    won = sum(row["status"] == "won" for row in rows)
    lost = sum(row["status"] == "lost" for row in rows)
    half_won = sum(row["status"] == "half-won" for row in rows)
    half_lost = sum(row["status"] == "half-lost" for row in rows)
    staked = sum(row["stake"] for row in decided)
    profit = sum(row["profit"] for row in settled)
    roi = profit / staked if staked else None
    residuals = [row["profit"] - (roi or 0.0) * row["stake"] for row in decided]
    odds = [row["odds"] for row in settled]
    edges = [row["edge"] for row in settled]
    clvs = [row["clv"] for row in settled if row["clv"] is not None]
    evs = [row["closing_ev"] for row in settled if row["closing_ev"] is not None]
    mean_ev = sum(evs) / len(evs) if evs else None
    cumulative = peak = drawdown = 0.0
    for row in settled:
        cumulative += row["profit"]
        peak = max(peak, cumulative)
        drawdown = max(drawdown, peak - cumulative)
    streak = longest = 0
    for row in decided:
        streak = streak + 1 if row["status"] in ("lost", "half-lost") else 0
        longest = max(longest, streak)
    found = {
        "picks": len(rows),
        "won": won,
        "lost": lost,
        "void": sum(row["status"] == "void" for row in rows),
        "halfWon": half_won,
        "halfLost": half_lost,
        "pending": len(rows) - len(settled),
        "hitRate": (won + half_won) / len(decided) if decided else None,
        "staked": staked,
        "profit": profit,
        "roi": roi,
        "roiStdError": standard_error(sum(r * r for r in residuals), len(decided), staked),
        "avgOdds": sum(odds) / len(odds) if odds else None,
        "avgEdge": sum(edges) / len(edges) if edges else None,
        "avgClv": sum(clvs) / len(clvs) if clvs else None,
        "avgClosingEv": mean_ev,
        "avgClosingEvStdError": standard_error(
            sum((ev - mean_ev) ** 2 for ev in evs), len(evs), len(evs)
        ),
        "maxDrawdown": drawdown,
        "longestLosingStreak": longest,
    }
    if not all(row["recorded_closing"] for row in settled):
        found["avgClosingEv"] = found["avgClosingEvStdError"] = "unknown"
    return found


def standard_error(squares, n, scale):
    """√(squares / (n − 1) · n) / scale (the service's), None below two values."""
    if n < 2 or not scale:
        return None
    return math.sqrt(squares / (n - 1) * n) / scale


#: Figures written rounded to 2 decimals on the wire (units, and mean odds as prices are
#: quoted); the others to 6 (ratios).
TWO_PLACES = ("staked", "profit", "maxDrawdown", "avgOdds")


def compare(mine: dict, theirs: dict, where: str) -> None:
    """Failed unless the service's figures equal the recomputed ones (within wire rounding)."""
    for name, value in mine.items():
        if value == "unknown":  # not recorded by the entries: not comparable
            continue
        if name not in theirs:
            raise Failed(f"{where}: the answer has no {name}")
        reported = theirs[name]
        if value is None or reported is None:
            if value != reported:
                raise Failed(f"{where}: {name} is {reported}, the entries say {value}")
            continue
        if isinstance(reported, bool) or not isinstance(reported, int | float):
            raise Failed(f"{where}: {name} is not a number: {reported!r}")
        tolerance = MONEY_TOLERANCE if name in TWO_PLACES else RATIO_TOLERANCE
        if isinstance(value, int):
            tolerance = 0
        if not abs(value - reported) <= tolerance:
            raise Failed(f"{where}: {name} is {reported}, the entries say {value}")


def live_rows(fetch, ledger: Ledger) -> list[dict]:
    """The picks the live record counts, by the entries and the live rule: Failed when one
    cannot be recomputed (a settled pick without its reveal)."""
    rows = [row for row in examine(fetch, ledger) if row["reason"] is None]
    for row in rows:
        if row["status"] != "pending" and row["odds"] is None:
            raise Failed(f"pick {row['pick_id']} is settled but its reveal is withheld")
    return rows


def check_public_record(fetch, ledger: Ledger):
    """The public live track record, type by type, equals the entries' figures."""
    rows = live_rows(fetch, ledger)
    answer = fetch_ok(fetch, "/api/track-record/by-competition-type?isLive=true")
    for item in answer["items"]:
        kind = item["competitionType"]
        compare(figures([row for row in rows if row["type"] == kind]), item, kind)
    known = {item["competitionType"] for item in answer["items"]}
    if {row["type"] for row in rows} - known:
        raise Failed("the entries name a competition type the track record does not list")
    total = figures(rows)
    detail = (
        f"{total['picks']} live picks: {total['won']} won, {total['lost']} lost, "
        f"{total['void']} void, profit {total['profit']:+.2f} units, as the track record says"
    )
    if total["avgClosingEv"] == "unknown":
        detail += " (avgClosingEv not compared: older outcomes record no closing probability)"
    return detail


def check_data_record(fetch, ledger: Ledger, token):
    """The Data API's live track record equals the entries' figures (needs a Pro token)."""
    if not token:
        return ("SKIP", "give --token (a Pro or admin token) to compare the Data API's record")
    answer = fetch_ok(fetch, "/api/v1/data/track-record", authorized=True)
    compare(figures(live_rows(fetch, ledger)), answer["live"], "the Data API's live record")
    return "the Data API's live figures equal the entries'"


# --- Witnesses: cosignatures and the quorum policy ---------------------------------------------
# c2sp.org/tlog-cosignature: a witness's line in a checkpoint's note is
# "— name base64(key ID ‖ u64 timestamp ‖ Ed25519 signature)", the signature over
# "cosignature/v1\ntime <timestamp>\n" and the checkpoint's text, the key ID
# SHA-256(name ‖ 0x0A ‖ 0x04 ‖ public key)[:4].


@dataclass(frozen=True)
class Witness:
    """A witness the user trusts: ``name+hash+base64(0x04 ‖ Ed25519 public key)``."""

    name: str
    key_id: bytes
    public: bytes

    @classmethod
    def parse(cls, text: str) -> "Witness":
        """The witness key written in ``text``; Failed when malformed or its hash is wrong."""
        parts = text.strip().split("+", 2)
        if len(parts) != 3:
            raise Failed(f"not a witness key (name+hash+base64): {text!r}")
        name, hash_hex, material = parts
        try:
            raw = base64.b64decode(material, validate=True)
        except binascii.Error:
            raise Failed(f"the witness key's material is not base64: {text!r}") from None
        if len(raw) != 33 or raw[0] != 4:
            raise Failed(f"{name} is not an Ed25519 cosignature key (type 0x04)")
        key_id = hashlib.sha256(name.encode() + b"\n" + raw).digest()[:4]
        if key_id.hex() != hash_hex.lower():
            raise Failed(f"the witness key's hash does not match its name and key: {text!r}")
        return cls(name, key_id, raw[1:])


def cosignature_time(blob: bytes) -> int:
    """The timestamp of a cosignature's bytes (key ID ‖ u64 timestamp ‖ 64-byte signature)."""
    if len(blob) != 4 + 8 + 64:
        raise Failed("a cosignature/v1 is a key ID, a timestamp and an Ed25519 signature")
    timestamp = int.from_bytes(blob[4:12], "big")
    if timestamp == 0 or timestamp >= 1 << 63:
        raise Failed("a cosignature's timestamp is not zero and below 2^63")
    return timestamp


def cosigned_by(note: str, witnesses) -> dict:
    """``{witness name: timestamp}`` of the witnesses of ``witnesses`` whose cosignature on
    ``note`` verifies; Failed when a line carrying one's name and key ID does not (a note with
    a bad signature by a known key is rejected whole, as signed-note says)."""
    head, separator, tail = note.rpartition("\n\n")
    if not separator or not tail.endswith("\n"):
        raise Failed("not a signed note")
    text = head + "\n"
    found = {}
    for line in tail[:-1].split("\n"):
        name, _, blob = line[2:].partition(" ")
        try:
            raw = base64.b64decode(blob, validate=True)
        except binascii.Error:
            raise Failed("a signature is not base64") from None
        for witness in witnesses:
            if name != witness.name or raw[:4] != witness.key_id:
                continue
            timestamp = cosignature_time(raw)
            message = f"cosignature/v1\ntime {timestamp}\n{text}".encode()
            try:
                Ed25519PublicKey.from_public_bytes(witness.public).verify(raw[12:], message)
            except InvalidSignature:
                raise Failed(f"the cosignature by {name} does not verify") from None
            found[name] = timestamp
    return found


@dataclass(frozen=True)
class Policy:
    """The witnesses the user trusts, and how many of them must cosign a checkpoint."""

    witnesses: tuple
    quorum: int


def check_witnesses(latest, policy: Policy):
    """At least ``policy.quorum`` of the policy's witnesses cosigned the latest checkpoint."""
    if latest is None:
        raise Failed("no checkpoint to check the cosignatures of")
    found = cosigned_by(latest.note, policy.witnesses)
    named = ", ".join(
        f"{name} at {datetime.fromtimestamp(found[name], UTC):%Y-%m-%dT%H:%M:%SZ}"
        for name in sorted(found)
    )
    if len(found) < policy.quorum:
        which = named or "none of them"
        raise Failed(
            f"checkpoint {latest.size} is cosigned by {len(found)} of the "
            f"{len(policy.witnesses)} witnesses trusted ({which}); the policy asks "
            f"{policy.quorum}"
        )
    return (
        f"checkpoint {latest.size} is cosigned by {len(found)} of the "
        f"{len(policy.witnesses)} witnesses trusted (quorum {policy.quorum}): {named or 'none'}"
    )


def quorum_time(note: str, policy: Policy) -> datetime | None:
    """When a quorum of the policy's witnesses had cosigned ``note``: the quorum-th earliest of
    their cosignatures' timestamps (their own clocks, which the log's key holder cannot set),
    None when fewer cosigned it."""
    stamps = sorted(cosigned_by(note, policy.witnesses).values())
    if len(stamps) < policy.quorum:
        return None
    return datetime.fromtimestamp(stamps[policy.quorum - 1], UTC)


def witnessed_at(ledger: Ledger, index: int) -> datetime | None:
    """The earliest time a quorum of witnesses cosigned a checkpoint holding entry ``index`` (a
    checkpoint of a larger size: a witness cosigns only a continuation of what it cosigned,
    so a later checkpoint holds every earlier entry), None if none did."""
    sizes, times = ledger.witnessed
    at = bisect.bisect_right(sizes, index)
    return times[at] if at < len(times) else None


def check_cosigned_before_kickoff(ledger: Ledger, policy: Policy):
    """With a witness policy: when a quorum of its witnesses vouched for each checkpoint (their
    cosignatures' times), and how many picks a checkpoint cosigned before their kick-off holds.
    The live rule then counts a pick live only if one did (:data:`NOT_COSIGNED` otherwise):
    an operator can date a checkpoint in the past, not the witnesses' cosignatures."""
    sizes = sorted(ledger.checkpoints)
    times = [quorum_time(ledger.checkpoints[size].note, policy) for size in sizes]
    cosigned = sum(value is not None for value in times)
    best = None
    for at in reversed(range(len(times))):  # the earliest at this size or any larger one
        if times[at] is not None and (best is None or times[at] < best):
            best = times[at]
        times[at] = best
    ledger.witnessed = (sizes, times)
    published = late = 0
    for index, entry in enumerate(ledger.entries):
        if entry["type"] != "pick.published":
            continue
        published += 1
        vouched = witnessed_at(ledger, index)
        late += vouched is None or not vouched < instant(entry["kickoffAt"])
    detail = (
        f"{published - late} of {published} picks are in a checkpoint cosigned by {policy.quorum} "
        f"of the {len(policy.witnesses)} witnesses trusted before their kick-off"
    )
    if late:
        detail += f"; {late} are not (none may count as live: see the live rule)"
    return detail + f" ({cosigned} of {len(sizes)} checkpoints vouched for by a quorum)"


def policy_of(witness_keys, quorum) -> Policy | None:
    """The policy of ``--witness`` (repeated) and ``--quorum`` (default: every witness named);
    None when neither is given."""
    if not witness_keys and quorum is None:
        return None
    witnesses = tuple(Witness.parse(text) for text in witness_keys or ())
    quorum = len(witnesses) if quorum is None else quorum
    if not 0 <= quorum <= len(witnesses) or len({w.name for w in witnesses}) != len(witnesses):
        raise Failed(
            f"--quorum {quorum} must lie between 0 and the {len(witnesses)} distinct witnesses"
        )
    return Policy(witnesses, quorum)


# --- The command -------------------------------------------------------------------------------


def read_saved(path):
    """``(verifier key or None, [signed notes])`` from a checkpoints file (none if missing)."""
    try:
        with open(path, encoding="utf-8") as file:
            saved = json.load(file)
    except FileNotFoundError:
        return None, []
    return saved.get("verifierKey"), list(saved.get("checkpoints", []))


def write_saved(path, key: Key, notes: list[str]) -> None:
    """Keep the pinned key and the checkpoints seen, for the next run."""
    with open(path, "w", encoding="utf-8") as file:
        json.dump({"verifierKey": key.text, "checkpoints": notes}, file, indent=1)
        file.write("\n")


def verify(
    fetch,
    saved_key,
    saved,
    token=None,
    tsa_certificate=None,
    out=None,
    policy=None,
    cache=None,
    full=False,
):
    """Run every check (with a witness ``policy``, that a quorum cosigned the latest checkpoint
    too; with a :class:`TileCache`, reading the log from its tiles, ``full`` re-checking every
    outcome against the matches, not only those since the last green run); returns
    ``(report, key, latest checkpoint or None)``: a verdict for whatever the server answers,
    never an exception."""
    report = Report(out)
    found = report, None, None
    try:
        found = _verify(
            report, fetch, saved_key, saved, token, tsa_certificate, cache, full, policy
        )
    except Failed as error:
        report.add("FAIL", "ledger", str(error))
    except MALFORMED as error:
        report.add("FAIL", "ledger", malformed(error))
    if policy is not None:
        report.run("witnesses", check_witnesses, found[2], policy)
    return found


def _verify(
    report, fetch, saved_key, saved, token, tsa_certificate, cache=None, full=False, policy=None
):
    """:func:`verify`'s checks, in order."""
    if cache is not None:  # the tiles: the first page of checkpoints names the key too
        fetch = remembering(fetch)
        after = max([0, *(item["size"] for item in cache.checkpoints)])
        head = fetch_ok(fetch, f"{CHECKPOINTS}?after={after}")
    else:
        head = fetch_ok(fetch, "/api/track-record/ledger")
    key_text = saved_key or head["verifierKey"]
    try:
        key = Key.parse(key_text)
    except Failed as error:
        report.add("FAIL", "key", str(error))
        return report, None, None
    if saved_key is None:
        report.add("PASS", "key", f"first run: pinning the server's key {key.text}")
    elif head["verifierKey"] != key.text:
        report.add("FAIL", "key", f"the server now names the key {head['verifierKey']}")
    else:
        report.add("PASS", "key", f"the server's key is the pinned {key.name}+{key.key_id.hex()}")
    try:
        if cache is not None:
            ledger = load_tiles(fetch, key, cache, head, full)
        else:
            ledger = load(fetch, key)
    except Failed as error:
        report.add("FAIL", "checkpoint", str(error))
        return report, key, None
    except MALFORMED as error:
        report.add("FAIL", "checkpoint", malformed(error))
        return report, key, None
    report.add(
        "PASS",
        "checkpoint",
        f"size {ledger.latest.size} signed at {ledger.latest.time:%Y-%m-%dT%H:%M:%SZ}; "
        f"{len(ledger.checkpoints)} checkpoints' signatures verify",
    )
    if ledger.latest.size == 0:
        return report, key, ledger.latest
    report.run("root", check_roots, ledger)
    if ledger.tiles is not None:
        report.run("tiles", check_tiles, fetch, ledger)
    report.run("inclusion", check_inclusion, fetch, ledger)
    report.run("saved checkpoints", check_saved, fetch, ledger, saved)
    report.run("published before kick-off", check_before_kickoff, ledger, tsa_certificate)
    if policy is not None and policy.quorum:
        report.run("cosigned before kick-off", check_cosigned_before_kickoff, ledger, policy)
    report.run("timestamps", check_timestamps, ledger, tsa_certificate)
    report.run("reveals", check_reveals, ledger)
    report.run("outcomes", check_outcomes, fetch, ledger)
    report.run("live rule", check_live_rule, fetch, ledger)
    report.run("track record", check_public_record, fetch, ledger)
    report.run("data api track record", check_data_record, fetch, ledger, token)
    return report, key, ledger.latest


def main(argv=None) -> int:
    """The command line: verify, print the verdicts, save the checkpoint when all holds."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base_url", help="the service, e.g. https://picks.example")
    parser.add_argument(
        "--checkpoints",
        required=True,
        help="a JSON file of the key and checkpoints saved by earlier runs (created if missing)",
    )
    parser.add_argument("--key", help="the verifier key to trust (default: the file's)")
    parser.add_argument("--token", help="a Pro or admin access token, for the Data API's record")
    parser.add_argument("--tsa-cert", help="the PEM certificate of the RFC 3161 authority")
    parser.add_argument("--no-save", action="store_true", help="leave the checkpoints file as is")
    parser.add_argument(
        "--witness",
        action="append",
        help="a witness to trust, name+hash+base64(0x04 ‖ key) (repeat for more)",
    )
    parser.add_argument(
        "--quorum", type=int, help="how many of the witnesses must cosign (default: all)"
    )
    parser.add_argument(
        "--cache",
        help="a folder keeping full tiles, checkpoints and reveals between runs (default: the "
        "checkpoints file's name with .tiles)",
    )
    parser.add_argument(
        "--pages", action="store_true", help="read the JSON pages of entries, not the tiles"
    )
    parser.add_argument(
        "--full",
        action="store_true",
        help="check every outcome against its match again, not only those since the last run",
    )
    args = parser.parse_args(argv)

    try:
        saved_key, saved = read_saved(args.checkpoints)
    except (OSError, ValueError, AttributeError, TypeError) as error:
        print(f"FAIL checkpoints file: {args.checkpoints} cannot be read ({error})")
        return 1
    if args.key:
        if saved_key and saved_key != args.key.strip():
            print(f"FAIL key: --key differs from the pinned key {saved_key}")
            return 1
        saved_key = args.key.strip()
    try:
        policy = policy_of(args.witness, args.quorum)
    except Failed as error:
        print(f"FAIL witnesses: {error}")
        return 1
    certificate = None
    if args.tsa_cert:
        from cryptography import x509

        with open(args.tsa_cert, "rb") as file:
            certificate = x509.load_pem_x509_certificate(file.read())
    try:
        cache = None if args.pages else TileCache(args.cache or f"{args.checkpoints}.tiles")
        fetch = http_fetcher(args.base_url, args.token)
        report, key, latest = verify(
            fetch,
            saved_key,
            saved,
            args.token,
            certificate,
            policy=policy,
            cache=cache,
            full=args.full,
        )
    except (Failed, OSError) as error:  # verify() itself turns every answer into a verdict
        print(f"FAIL fetch: {error}")
        return 1
    print(f"{fetch.pacer.requests} requests ({fetch.pacer.waited:.0f} s waited for the limits)")
    if report.failed:
        return 1
    if cache is not None and latest is not None:
        cache.commit(key.text, latest.size)
    if not args.no_save and latest is not None and latest.size:
        notes = saved if latest.note in saved else [*saved, latest.note]
        write_saved(args.checkpoints, key, notes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
