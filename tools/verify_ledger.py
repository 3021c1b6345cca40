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

Whatever the server answers (garbage, missing fields, wrong types, withheld reveals), each
check ends in a verdict line; none raises.

After a run where everything holds, the latest checkpoint is added to the checkpoints file, so
the next run proves the log only grew. Needs Python 3.11+ and ``cryptography``
(``rfc3161-client`` too, to check timestamps).
"""

import argparse
import base64
import binascii
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


class RootBuilder:
    """The root of a growing list of leaves, at any size on the way: a stack of the perfect
    subtrees so far (O(log n) memory)."""

    def __init__(self):
        self.size = 0
        self.stack = []  # (height, hash), the left-most largest first

    def add(self, leaf: bytes) -> None:
        """Append one leaf hash."""
        height, value = 0, leaf
        while self.stack and self.stack[-1][0] == height:
            value = node_hash(self.stack.pop()[1], value)
            height += 1
        self.stack.append((height, value))
        self.size += 1

    def root(self) -> bytes:
        """The root hash of the leaves added so far (RFC 9162 §2.1.1)."""
        if not self.stack:
            return hashlib.sha256(b"").digest()
        value = self.stack[-1][1]
        for _, left in reversed(self.stack[:-1]):
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


def instant(text: str) -> datetime:
    """A ``YYYY-MM-DDTHH:MM:SSZ`` instant."""
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def canonical(value) -> bytes:
    """Canonical JSON: sorted keys, no spaces, UTF-8."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


# --- Fetching ----------------------------------------------------------------------------------


def http_fetcher(base_url: str, token: str | None = None, timeout: float = 60):
    """``fetch(path, authorized=False) -> (status, JSON)`` over HTTP, waiting out 429s."""

    def fetch(path, authorized=False):
        request = urllib.request.Request(base_url.rstrip("/") + path)
        request.add_header("Accept", "application/json")
        if authorized and token:
            request.add_header("Authorization", f"Bearer {token}")
        for _ in range(10):
            try:
                try:
                    with urllib.request.urlopen(request, timeout=timeout) as response:
                        return response.status, _json(path, response.read())
                except urllib.error.HTTPError as error:
                    if error.code == 429:
                        time.sleep(_retry_after(error.headers.get("Retry-After")))
                        continue
                    body = error.read()
                    return error.code, _json(path, body) if body else None
            except (OSError, http.client.HTTPException) as error:
                raise Failed(f"GET {path} failed: {error}") from None
        raise Failed(f"{path}: still rate-limited after 10 tries")

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
            if canonical(json.loads(data)) != data:
                raise Failed(f"entry {item['index']} is not canonical JSON")
            if leaf_hash(data).hex() != item["leafHash"]:
                raise Failed(f"entry {item['index']}'s leaf hash is not SHA-256(0x00 ‖ entry)")
            ledger.raw.append(data)
            ledger.entries.append(json.loads(data))
            ledger.reveals.append(item["reveal"])
            ledger.covering.append(item["checkpointSize"])
    return ledger


def check_roots(ledger: Ledger):
    """The root of the entries at every checkpoint's size equals the checkpoint's root."""
    builder = RootBuilder()
    sizes = sorted(ledger.checkpoints)
    previous = None
    for leaf_data in [None, *ledger.raw]:
        if leaf_data is not None:
            builder.add(leaf_hash(leaf_data))
        checkpoint = ledger.checkpoints.get(builder.size)
        if checkpoint is None:
            continue
        if builder.root() != checkpoint.root:
            raise Failed(f"the entries' root at size {builder.size} is not the signed root")
        if previous is not None and checkpoint.time < previous.time:
            raise Failed(f"checkpoint {checkpoint.size} is signed before a smaller one")
        previous = checkpoint
    return (
        f"{ledger.latest.size} entries hash to the signed root; "
        f"{len(sizes)} checkpoints agree with them"
    )


def check_saved(fetch, ledger: Ledger, saved: list[str]):
    """Each saved checkpoint is a prefix of today's tree, by proof and by recomputation."""
    if not saved:
        return ("SKIP", "no checkpoint saved yet: this run's will be")
    builder = RootBuilder()
    roots = {0: builder.root()}
    opened = [Checkpoint.open(ledger.key, note) for note in saved]
    wanted = {checkpoint.size for checkpoint in opened}
    for data in ledger.raw:
        builder.add(leaf_hash(data))
        if builder.size in wanted:
            roots[builder.size] = builder.root()
    for checkpoint in opened:
        if checkpoint.size > ledger.latest.size:
            raise Failed(f"a saved checkpoint has {checkpoint.size} entries; the log now fewer")
        if roots.get(checkpoint.size) != checkpoint.root:
            raise Failed(f"the saved checkpoint of size {checkpoint.size} was rewritten")
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
    for index in sorted({0, size - 1}):
        proof = fetch_ok(fetch, f"/api/track-record/ledger/proof?index={index}&treeSize={size}")
        hashes = [bytes.fromhex(value) for value in proof["hashes"]]
        if not verify_inclusion(
            index, size, leaf_hash(ledger.raw[index]), hashes, ledger.latest.root
        ):
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
    by_hash = {leaf_hash(data).hex(): index for index, data in enumerate(ledger.raw)}
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
    """A line bet's result (engine.lines.results): the mean over its two half stakes (at line
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


def moment(text) -> datetime:
    """An ISO 8601 instant with ``Z`` (as the API writes them), to the second."""
    if not isinstance(text, str) or not text.endswith("Z"):
        raise Failed(f"not a UTC instant: {text!r}")
    value = datetime.fromisoformat(text[:-1] + "+00:00").astimezone(UTC)
    return value.replace(microsecond=0)


def number(text, what: str) -> float:
    """A ledger number (a decimal string) as a float; Failed when it is not one."""
    if not isinstance(text, str):
        raise Failed(f"{what} is not a decimal string: {text!r}")
    value = float(text)
    if not math.isfinite(value):
        raise Failed(f"{what} is not finite: {text!r}")
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
            row["stake"] = number(shown["stake"], f"pick {pick_id}'s stake")
            row["odds"] = number(shown["odds"], f"pick {pick_id}'s odds")
            row["edge"] = number(shown["edge"], f"pick {pick_id}'s edge")
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
    row["profit"] = number(outcome["profit"], f"pick {pick_id}'s profit")
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
    if closing is not None and number(closing, f"pick {pick_id}'s closing odds") > 1.0:
        if clv is None:
            problems.append(f"pick {pick_id} has a closing price but no CLV")
        else:
            row["clv"] = number(clv, f"pick {pick_id}'s CLV")
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
        fair = number(outcome["closingProbability"], f"pick {pick_id}'s closing probability")
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
    line = number(shown["line"], f"pick {pick_id}'s line")
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


def verify(fetch, saved_key, saved, token=None, tsa_certificate=None, out=None):
    """Run every check; returns ``(report, key, latest checkpoint or None)``: a verdict for
    whatever the server answers, never an exception."""
    report = Report(out)
    try:
        return _verify(report, fetch, saved_key, saved, token, tsa_certificate)
    except Failed as error:
        report.add("FAIL", "ledger", str(error))
    except MALFORMED as error:
        report.add("FAIL", "ledger", malformed(error))
    return report, None, None


def _verify(report, fetch, saved_key, saved, token, tsa_certificate):
    """:func:`verify`'s checks, in order."""
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
    report.run("inclusion", check_inclusion, fetch, ledger)
    report.run("saved checkpoints", check_saved, fetch, ledger, saved)
    report.run("published before kick-off", check_before_kickoff, ledger, tsa_certificate)
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
    certificate = None
    if args.tsa_cert:
        from cryptography import x509

        with open(args.tsa_cert, "rb") as file:
            certificate = x509.load_pem_x509_certificate(file.read())
    try:
        report, key, latest = verify(
            http_fetcher(args.base_url, args.token), saved_key, saved, args.token, certificate
        )
    except (Failed, OSError) as error:  # verify() itself turns every answer into a verdict
        print(f"FAIL fetch: {error}")
        return 1
    if report.failed:
        return 1
    if not args.no_save and latest is not None and latest.size:
        notes = saved if latest.note in saved else [*saved, latest.note]
        write_saved(args.checkpoints, key, notes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
