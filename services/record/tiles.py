"""The ledger as static tiles (C2SP ``tlog-tiles``), and the bulk answers an auditor needs
beside them: every checkpoint, the reveals of a range of entries, and the facts of the matches
a range of days played.

A tile is ``tile/<L>/<N>[.p/<W>]``: the hashes (32 bytes each, concatenated) of the ``W`` (256
for a full tile) consecutive perfect subtrees of ``2^(8L)`` leaves starting at subtree
``N × 256`` (RFC 9162 hashing; level 0 holds the leaf hashes). An entry bundle is
``tile/entries/<N>[.p/<W>]``: entries ``N × 256`` to ``N × 256 + W``, each its canonical bytes
(exactly what the tree hashes) after a big-endian uint16 length. ``N`` is written in 3-digit
path segments, all but the last prefixed with ``x`` (1234067 → ``x001/x234/067``).

Only what the latest signed checkpoint covers is served, and nothing in a tile ever changes:
a published entry carries its pick's commitment, never the sealed fields (those come with the
pick's reveal, :func:`reveals`), so a full tile is immutable and cached for a year.
"""

import gzip
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from engine.ledger import entries, merkle
from errors import NotFound, ValidationFailed
from models import LedgerCheckpoint, LedgerEntry, LedgerNode, Match, node_address
from services.record import log_reading, witnesses

#: The largest entry a bundle can carry (its length is a uint16).
MAX_ENTRY = 0xFFFF
#: Entries a page of :func:`reveals` may span, and checkpoints a page of :func:`checkpoints`.
REVEALS_PAGE = 10_000
CHECKPOINTS_PAGE = 1000
#: Days one answer of :func:`match_facts` may span.
FACT_DAYS = 7
#: Bundles larger than this are gzipped when the client accepts it (tlog-tiles: SHOULD).
GZIP_FROM = 1024

_INDEX = re.compile(r"(?:x\d{3}/)*\d{3}")
_LEVEL = re.compile(r"0|[1-9]\d?")
_WIDTH = re.compile(r"[1-9]\d{0,2}")


@dataclass(frozen=True)
class Tile:
    """A tile's address: ``level`` None for an entry bundle; ``width`` 256 for a full tile."""

    level: int | None
    index: int
    width: int

    @property
    def full(self) -> bool:
        """Whether it is a full tile (immutable), not the partial one at the right edge."""
        return self.width == merkle.TILE_WIDTH

    @property
    def path(self) -> str:
        """Its path below the tiles' prefix."""
        return tile_path(self.level, self.index, self.width)


def encode_index(index: int) -> str:
    """A tile index as tlog-tiles writes it: 3-digit segments, all but the last ``x``-prefixed."""
    digits = str(index)
    digits = "0" * (-len(digits) % 3) + digits
    groups = [digits[at : at + 3] for at in range(0, len(digits), 3)]
    return "/".join([*(f"x{group}" for group in groups[:-1]), groups[-1]])


def tile_path(level: int | None, index: int, width: int) -> str:
    """``tile/<L>/<N>[.p/<W>]``, or ``tile/entries/<N>[.p/<W>]`` for a bundle (level None)."""
    head = "entries" if level is None else str(level)
    tail = "" if width == merkle.TILE_WIDTH else f".p/{width}"
    return f"tile/{head}/{encode_index(index)}{tail}"


def parse(path: str) -> Tile:
    """The tile a path below ``tile/`` names (``0/x001/234.p/5``, ``entries/000``); NotFound when
    it names none (tlog-tiles' spelling only: no leading zeros, no other separators)."""
    head, _, rest = path.partition("/")
    if head == "entries":
        level = None
    elif _LEVEL.fullmatch(head) and int(head) <= 63:  # the spec's range (a tree uses 0 to 7)
        level = int(head)
    else:
        raise NotFound(f"No tile at {path!r}.")
    index_text, partial, width_text = rest.partition(".p/")
    if not _INDEX.fullmatch(index_text) or (partial and not _WIDTH.fullmatch(width_text)):
        raise NotFound(f"No tile at {path!r}.")
    width = int(width_text) if partial else merkle.TILE_WIDTH
    if partial and width >= merkle.TILE_WIDTH:
        raise NotFound(f"No tile at {path!r}: a partial tile is 1 to 255 wide.")
    index = int(index_text.replace("x", "").replace("/", ""))
    if encode_index(index) != index_text:  # a leading x-segment of zeros: another spelling
        raise NotFound(f"No tile at {path!r}.")
    return Tile(level, index, width)


def read(tile: Tile) -> bytes:
    """A tile's bytes, or an entry bundle's; NotFound unless the latest signed checkpoint
    covers all of it."""
    level = 0 if tile.level is None else tile.level
    if not merkle.tile_complete(level, tile.index, tile.width, log_reading.signed_size()):
        raise NotFound(f"No tile {tile.path} in the signed ledger.")
    if tile.level is None:
        return bundle(_bodies(tile))
    if tile.level == 0:
        return b"".join(merkle.leaf_hash(body) for body in _bodies(tile))
    addresses = merkle.tile_nodes(tile.level, tile.index, tile.width)
    query = LedgerNode.select(LedgerNode.position, LedgerNode.hash).where(
        LedgerNode.address.in_([node_address(*address) for address in addresses])
    )
    found = dict(query.tuples())
    missing = [position for _, position in addresses if position not in found]
    if missing:
        raise RuntimeError(f"the ledger tree lacks the tile {tile.path}'s nodes {missing[:5]}")
    return b"".join(bytes.fromhex(found[position]) for _, position in addresses)


def _bodies(tile: Tile) -> list[bytes]:
    """The canonical bytes of the entries a level-0 tile or a bundle spans."""
    start = tile.index << merkle.TILE_HEIGHT
    query = (
        LedgerEntry.select(LedgerEntry.body)
        .where((LedgerEntry.position >= start) & (LedgerEntry.position < start + tile.width))
        .order_by(LedgerEntry.position)
    )
    bodies = [body.encode() for (body,) in query.tuples()]
    if len(bodies) != tile.width:
        raise RuntimeError(f"the ledger lacks entries of {tile.path}")
    return bodies


def bundle(bodies) -> bytes:
    """Entries as a tlog-tiles entry bundle: each after its length, a big-endian uint16."""
    parts = []
    for body in bodies:
        if len(body) > MAX_ENTRY:
            raise ValueError(f"an entry of {len(body)} bytes does not fit a bundle")
        parts += [len(body).to_bytes(2, "big"), body]
    return b"".join(parts)


def compressed(data: bytes, accepts_gzip: bool) -> tuple[bytes, bool]:
    """``(bytes to send, whether gzipped)``: a bundle worth compressing, gzipped for a client that
    accepts it (``mtime=0``: the same tile always gives the same bytes)."""
    if not accepts_gzip or len(data) < GZIP_FROM:
        return data, False
    return gzip.compress(data, compresslevel=5, mtime=0), True


def checkpoint_note() -> str:
    """The latest signed checkpoint's note (tlog-checkpoint) with the cosignature lines of the
    witnesses that cosigned it (tlog-cosignature); NotFound before the first."""
    row = (
        LedgerCheckpoint.select(LedgerCheckpoint.size, LedgerCheckpoint.signed_note)
        .order_by(LedgerCheckpoint.size.desc())
        .first()
    )
    if row is None:
        raise NotFound("The ledger has no signed checkpoint yet.")
    return witnesses.cosigned_note(row)


def checkpoints(after: int, settings) -> dict:
    """The signed checkpoints larger than ``after``, smallest first (at most
    :data:`CHECKPOINTS_PAGE`), with the log's name and key: each one's record as
    ``log_reading.head`` gives the latest's."""
    rows = list(
        LedgerCheckpoint.select()
        .where(LedgerCheckpoint.size > after)
        .order_by(LedgerCheckpoint.size)
        .limit(CHECKPOINTS_PAGE + 1)
    )
    more = len(rows) > CHECKPOINTS_PAGE
    rows = rows[:CHECKPOINTS_PAGE]
    stamps = log_reading.stamps_of([row.size for row in rows])
    cosignatures = witnesses.cosignature_lines([row.size for row in rows])
    key = log_reading.signing_key(settings)
    return {
        "origin": key.name,
        "verifier_key": key.verifier_key,
        "after": after,
        "items": [log_reading.checkpoint_record(row, stamps, cosignatures) for row in rows],
        "more": more,
    }


def reveals(start: int, end: int | None, now) -> dict:
    """The reveals anyone may see at ``now`` of the ``pick.published`` entries among entries
    ``[start, end)`` of the signed ledger (at most :data:`REVEALS_PAGE` entries; ``end`` defaults
    to as many as fit), by entry index; a sealed pick's entry is left out."""
    signed = log_reading.signed_size()
    if start > signed:
        raise ValidationFailed(
            f"start is past the signed ledger's {signed} entries.",
            errors={"start": [f"Must be at most {signed}."]},
        )
    highest = min(signed, start + REVEALS_PAGE)
    end = highest if end is None else end
    if not start <= end <= highest:
        raise ValidationFailed(
            f"end must lie in [start, start + {REVEALS_PAGE}] and not past the signed ledger's "
            f"{signed} entries.",
            errors={"end": [f"Must be at least {start}, at most {highest}."]},
        )
    rows = list(
        LedgerEntry.select(LedgerEntry.position, LedgerEntry.pick_id)
        .where(
            (LedgerEntry.position >= start)
            & (LedgerEntry.position < end)
            & (LedgerEntry.kind == entries.PUBLISHED)
        )
        .tuples()
    )
    shown = log_reading.visible_reveals([pick_id for _, pick_id in rows], now)
    items = [
        {"index": position, "reveal": shown[pick_id]}
        for position, pick_id in sorted(rows)
        if pick_id in shown
    ]
    return {"start": start, "end": end, "items": items}


def match_facts(first: date, days: int) -> dict:
    """What an outcome is checked against, for every match kicking off in the ``days`` days
    from ``first`` (UTC): its kick-off, status and score, as ``/api/matches/{id}`` shows them."""
    if not 1 <= days <= FACT_DAYS:
        raise ValidationFailed(
            f"days must be 1 to {FACT_DAYS}.", errors={"days": [f"Must be 1 to {FACT_DAYS}."]}
        )
    start = datetime.combine(first, time(), tzinfo=UTC)
    query = (
        Match.select(Match.id, Match.kickoff_at, Match.status, Match.home_goals, Match.away_goals)
        .where((Match.kickoff_at >= start) & (Match.kickoff_at < start + timedelta(days=days)))
        .order_by(Match.id)
        .tuples()
    )
    items = [
        {
            "id": match_id,
            "kickoff_at": kickoff_at,
            "status": status,
            "score": None if home is None or away is None else {"home": home, "away": away},
        }
        for match_id, kickoff_at, status, home, away in query
    ]
    return {"first": first, "days": days, "items": items}
