"""The ledger of live picks as it is read: its size and the stored subtrees' hashes (which the
writer, :mod:`services.record.signed_log`, appends beside), when each pick was first signed, the
latest checkpoint and the key that signs them, pages of entries with their reveals, and
inclusion and consistency proofs. Nothing here writes: entries are only ever added, by the
writer, in the transactions that make them true.

A pick's reveal (its salt and the sealed fields) is served as soon as the premium rule shows the
pick itself.
"""

import bisect

import numpy as np
from peewee import fn

from engine.ledger import entries, merkle, notes
from errors import ValidationFailed
from models import (
    LedgerCheckpoint,
    LedgerEntry,
    LedgerNode,
    LedgerSeal,
    LedgerTimestamp,
    Match,
    Pick,
    node_address,
)
from services.market import premium
from services.record import witnesses
from store.database import db

#: Entries a page of ``entries`` may hold.
PAGE_LIMIT = 1000


#: The lowest level of the tree whose perfect subtrees are stored: one row per 2^level
#: entries; a subtree below it is rehashed from its at most 2^level leaf hashes (a root or a
#: proof reads at most one such subtree per level, so it stays O(log n) lookups).
STORED_LEVEL = 3


#: Matches looked up per query (SQLite takes at most 32,766 parameters).
BATCH = 5000


#: The fields of a pick its commitment seals.
PICK_FIELDS = (
    Pick.id,
    Pick.match,
    Pick.market,
    Pick.line,
    Pick.selection,
    Pick.odds,
    Pick.bookmaker,
    Pick.probability,
    Pick.edge,
    Pick.rating,
    Pick.stake,
    Pick.created_at,
)


def signing_key(settings) -> notes.SigningKey:
    """The key that signs checkpoints, from ``LEDGER_SIGNING_KEY``."""
    return notes.parse_signing_key(settings["LEDGER_SIGNING_KEY"])


def size() -> int:
    """How many entries the ledger holds."""
    row = db.execute_sql(f'SELECT MAX("position") FROM "{LedgerEntry._meta.table_name}"')
    last = row.fetchone()[0]
    return 0 if last is None else last + 1


def published_count() -> int:
    """How many picks the ledger has published."""
    return LedgerEntry.select().where(LedgerEntry.kind == entries.PUBLISHED).count()


def stored_hashes(addresses):
    """Hashes of perfect subtrees, in two queries whatever their number: stored ones from the
    nodes; those below :data:`STORED_LEVEL` from their (at most ``2^STORED_LEVEL``) leaves."""
    low = [(level, position) for level, position in addresses if level < STORED_LEVEL]
    leaves = sorted(
        {
            leaf
            for level, position in low
            for leaf in range(position << level, (position + 1) << level)
        }
    )
    found = {}
    if leaves:
        query = LedgerEntry.select(LedgerEntry.position, LedgerEntry.body).where(
            LedgerEntry.position.in_(leaves)
        )
        known = {position: merkle.leaf_hash(body.encode()) for position, body in query.tuples()}
        for level, position in low:
            span = range(position << level, (position + 1) << level)
            if all(leaf in known for leaf in span):
                found[(level, position)] = merkle.root([known[leaf] for leaf in span])
    stored = [node_address(*address) for address in addresses if address[0] >= STORED_LEVEL]
    if stored:
        query = LedgerNode.select(LedgerNode.level, LedgerNode.position, LedgerNode.hash).where(
            LedgerNode.address.in_(stored)
        )
        found.update(
            ((level, position), bytes.fromhex(value)) for level, position, value in query.tuples()
        )
    missing = [address for address in addresses if address not in found]
    if missing:
        raise RuntimeError(f"the ledger tree lacks the subtrees {missing[:5]}")
    return [found[address] for address in addresses]


def first_signed(pick_ids) -> dict:
    """``{pick_id: when}``: when the first signed checkpoint covering each pick's
    ``pick.published`` entry was signed (picks without an entry, or not yet covered, are
    left out)."""
    wanted = sorted(set(pick_ids))
    positions = {}
    # By the partial index of published entries by pick (models.ledger): no body is read, and
    # no entry of another pick.
    for start in range(0, len(wanted), BATCH):
        positions.update(
            LedgerEntry.select(LedgerEntry.pick_id, LedgerEntry.position)
            .where(
                (LedgerEntry.kind == entries.PUBLISHED)
                & LedgerEntry.pick_id.in_(wanted[start : start + BATCH])
            )
            .tuples()
        )
    if not positions:
        return {}
    rows = _covering_from(min(positions.values()))
    sizes = [size for size, _ in rows]
    found = {}
    for pick_id, position in positions.items():
        at = bisect.bisect_right(sizes, position)
        if at < len(rows):
            found[pick_id] = rows[at][1]
    return found


def _covering_from(position: int) -> list[tuple]:
    """``(size, published_at)`` of every checkpoint covering the entry at ``position``, by size."""
    return list(
        LedgerCheckpoint.select(LedgerCheckpoint.size, LedgerCheckpoint.published_at)
        .where(LedgerCheckpoint.size > position)
        .order_by(LedgerCheckpoint.size)
        .tuples()
    )


#: Each pick's ``pick.published`` entry, for a query of picks to join (``LEFT OUTER`` on
#: :data:`PUBLISHED_ON`) and read its position: through the partial index of those entries by
#: pick (models.ledger), no body read.
PUBLISHED_ENTRY = LedgerEntry.alias("published_entry")


PUBLISHED_ON = (PUBLISHED_ENTRY.pick_id == Pick.id) & (PUBLISHED_ENTRY.kind == entries.PUBLISHED)


def first_signed_at(positions) -> np.ndarray:
    """When (epoch seconds, whole, as floats) the first signed checkpoint covering the entry at
    each of ``positions`` was signed: NaN where the position is None or no checkpoint covers
    it yet. One query of the checkpoints from the earliest position on, whatever their number."""
    at = np.array(positions, dtype=float)  # None: NaN
    found = np.full(len(at), np.nan)
    known = np.flatnonzero(np.isfinite(at))
    if not len(known):
        return found
    rows = _covering_from(int(at[known].min()))
    sizes = np.array([size for size, _ in rows], dtype=float)
    signed = np.array([float(int(when.timestamp())) for _, when in rows] + [np.nan])
    # The first checkpoint whose size exceeds the position (len(rows): none yet, NaN).
    found[known] = signed[np.searchsorted(sizes, at[known], side="right")]
    return found


#: What a checkpoint record holds (:func:`head` adds the log's name and key).
CHECKPOINT_FIELDS = (
    "size",
    "root_hash",
    "published_at",
    "signed_note",
    "key_id",
    "timestamp_token",
    "timestamp_error",
)


def checkpoint_record(row, stamps=None, cosignatures=None) -> dict:
    """A checkpoint's record, with its time-stamp: from ``stamps`` (``{size: (token, error)}``,
    read for this one row when None), else as checkpoints signed before time-stamps were asked
    after the signing carry it; its note followed by the witnesses' cosignature lines (from
    ``cosignatures``, ``witnesses.cosignature_lines`` of several rows, read when None)."""
    if stamps is None:
        stamps = stamps_of([row.size])
    token, error = stamps.get(row.size, (row.timestamp_token, row.timestamp_error))
    return {
        "size": row.size,
        "root_hash": row.root_hash,
        "published_at": row.published_at,
        "signed_note": witnesses.cosigned_note(row, cosignatures),
        "key_id": row.key_id,
        "timestamp_token": token,
        "timestamp_error": error,
    }


def stamps_of(sizes) -> dict:
    """``{size: (token, error)}`` of the checkpoints of ``sizes`` stamped after their signing."""
    return {
        value: (token, error)
        for value, token, error in LedgerTimestamp.select(
            LedgerTimestamp.size, LedgerTimestamp.token, LedgerTimestamp.error
        )
        .where(LedgerTimestamp.size.in_(list(sizes)))
        .tuples()
    }


def head(settings) -> dict:
    """The latest checkpoint and the key that signs them (size 0 before the first)."""
    key = signing_key(settings)
    last = LedgerCheckpoint.select().order_by(LedgerCheckpoint.size.desc()).first()
    found = (
        checkpoint_record(last)
        if last is not None
        else {
            "size": 0,
            "root_hash": merkle.EMPTY_ROOT.hex(),
            "published_at": None,
            "signed_note": None,
            "key_id": key.key_id.hex(),
            "timestamp_token": None,
            "timestamp_error": None,
        }
    )
    return {**found, "origin": key.name, "verifier_key": key.verifier_key}


def signed_size() -> int:
    """The size of the latest signed checkpoint (0 before the first)."""
    return LedgerCheckpoint.select(fn.MAX(LedgerCheckpoint.size)).scalar() or 0


def page(start: int, end: int | None, now) -> dict:
    """Entries ``[start, end)`` of the signed ledger (at most :data:`PAGE_LIMIT`; ``end``
    defaults to as many as fit), each with its leaf hash, the size of the first checkpoint that
    covered it, and its reveal once the pick may be shown; with those checkpoints."""
    signed = signed_size()
    if start > signed:
        raise ValidationFailed(
            f"start is past the signed ledger's {signed} entries.",
            errors={"start": [f"Must be at most {signed}."]},
        )
    end = min(signed, start + PAGE_LIMIT) if end is None else end
    highest = min(signed, start + PAGE_LIMIT)
    if not start <= end <= highest:
        raise ValidationFailed(
            f"end must lie in [start, start + {PAGE_LIMIT}] and not past the signed ledger's "
            f"{signed} entries.",
            errors={"end": [f"Must be at least {start}, at most {highest}."]},
        )
    rows = list(
        LedgerEntry.select(
            LedgerEntry.position,
            LedgerEntry.kind,
            LedgerEntry.pick_id,
            LedgerEntry.body,
        )
        .where((LedgerEntry.position >= start) & (LedgerEntry.position < end))
        .order_by(LedgerEntry.position)
        .tuples()
    )
    reveals = visible_reveals(
        [pick_id for _, kind, pick_id, _ in rows if kind == entries.PUBLISHED], now
    )
    covering = _covering(start, end)
    items, cited = [], set()
    for position, kind, pick_id, body in rows:
        size_ = next(size for size in covering if size > position)
        cited.add(size_)
        items.append(
            {
                "index": position,
                "entry": body,
                "leaf_hash": merkle.leaf_hash(body.encode()).hex(),
                "reveal": reveals.get(pick_id) if kind == entries.PUBLISHED else None,
                "checkpoint_size": size_,
            }
        )
    stamps = stamps_of(cited)
    cosignatures = witnesses.cosignature_lines(cited)
    checkpoints = [
        checkpoint_record(row, stamps, cosignatures)
        for row in LedgerCheckpoint.select()
        .where(LedgerCheckpoint.size.in_(sorted(cited)))
        .order_by(LedgerCheckpoint.size)
    ]
    return {"start": start, "end": end, "items": items, "checkpoints": checkpoints}


def _covering(start: int, end: int) -> list[int]:
    """Sizes of the checkpoints that first covered entries ``[start, end)``, ascending."""
    first = (
        LedgerCheckpoint.select(LedgerCheckpoint.size)
        .where(LedgerCheckpoint.size > start)
        .order_by(LedgerCheckpoint.size)
    )
    sizes = []
    for (value,) in first.tuples():
        sizes.append(value)
        if value >= end:
            break
    return sizes


def visible_reveals(pick_ids, now) -> dict:
    """``{pick_id: reveal}`` for the picks of ``pick_ids`` anyone may see at ``now``."""
    if not pick_ids:
        return {}
    query = (
        Pick.select(*PICK_FIELDS, premium.unlock_column(), LedgerSeal.salt)
        .join(Match)
        .join_from(Pick, LedgerSeal, on=(LedgerSeal.pick_id == Pick.id))
        .where(Pick.id.in_(pick_ids))
    )
    names = [field.name for field in PICK_FIELDS]
    rows = list(query.tuples())
    # Locked as the match cards are (premium.pick_locked): the picks of a sealed market, and
    # those made with a locked pick or after it, whatever their own rating.
    at = names.index("match")
    unlocks = {values[at]: unlock for *values, unlock, _ in rows}
    locked = premium.locked_matches(unlocks, None, now)
    found = {}
    for *values, _, salt in rows:
        pick = dict(zip(names, values, strict=True))
        if premium.pick_locked(pick, locked, pick["match"]):
            continue
        pick["match_id"] = pick.pop("match")
        found[pick["id"]] = entries.reveal(bytes.fromhex(salt), pick)
    return found


def _check_size(name: str, value: int, signed: int) -> None:
    if value > signed:
        raise ValidationFailed(
            f"{name} is past the signed ledger's {signed} entries.",
            errors={name: [f"Must be at most {signed}."]},
        )


def proof(index=None, from_size=None, tree_size=None) -> dict:
    """An inclusion proof of entry ``index``, or a consistency proof from ``from_size``."""
    if index is not None:
        return inclusion(index, tree_size)
    return consistency(from_size, tree_size)


def inclusion(index: int, tree_size: int | None) -> dict:
    """The proof that entry ``index`` is in the tree of ``tree_size`` entries (default: the
    latest checkpoint's), with its leaf hash and that tree's root."""
    signed = signed_size()
    tree_size = signed if tree_size is None else tree_size
    _check_size("treeSize", tree_size, signed)
    if index >= tree_size:
        raise ValidationFailed(
            "index must name an entry of the tree.",
            errors={"index": [f"Must be less than treeSize, {tree_size}."]},
        )
    return {
        "type": "inclusion",
        "index": index,
        "tree_size": tree_size,
        "leaf_hash": stored_hashes([(0, index)])[0].hex(),
        "root_hash": merkle.tree_root(tree_size, stored_hashes).hex(),
        "hashes": [
            value.hex() for value in merkle.inclusion_proof(index, tree_size, stored_hashes)
        ],
    }


def consistency(from_size: int, tree_size: int | None) -> dict:
    """The proof that the tree of ``from_size`` entries is the start of the tree of
    ``tree_size`` (default: the latest checkpoint's), with both roots."""
    signed = signed_size()
    tree_size = signed if tree_size is None else tree_size
    _check_size("treeSize", tree_size, signed)
    if from_size > tree_size:
        raise ValidationFailed(
            "fromSize must not exceed treeSize.",
            errors={"fromSize": [f"Must be at most treeSize, {tree_size}."]},
        )
    return {
        "type": "consistency",
        "from_size": from_size,
        "tree_size": tree_size,
        "from_root_hash": merkle.tree_root(from_size, stored_hashes).hex(),
        "root_hash": merkle.tree_root(tree_size, stored_hashes).hex(),
        "hashes": [
            value.hex() for value in merkle.consistency_proof(from_size, tree_size, stored_hashes)
        ],
    }
