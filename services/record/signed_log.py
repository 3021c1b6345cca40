"""The ledger of live picks: an append-only, signed Merkle log anyone can verify.

Each live pick is published into it before kick-off (``pick.published``, sealed by a
commitment), and its settlement or voiding follows (``pick.settled`` / ``pick.voided``), each in
the transaction that stores the pick or settles it. Every operation that appends ends with one
signed checkpoint (:func:`checkpoint`), time-stamped by an RFC 3161 authority, where one is
configured, once that transaction has committed (:func:`stamp`): the unit of work
:func:`services.record.publishing.publish`. Entries, proofs and the latest checkpoint are public;
a pick's reveal (its salt and the sealed fields) is served as soon as the premium rule shows the
pick itself.

Rows are only ever added: no function here updates or deletes one, and the database refuses it
too (see ``models.schema._append_only``).
"""

import base64
import bisect
import logging
import secrets
from datetime import datetime, timedelta

import numpy as np
from peewee import JOIN

from engine.ledger import entries, merkle, notes
from errors import ValidationFailed
from models import (
    League,
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
from services.record import timestamps, witnesses
from store.bulk import insert_columns
from store.database import db, is_sqlite

log = logging.getLogger("picks.ledger")

#: Entries a page of ``entries`` may hold.
PAGE_LIMIT = 1000
#: The lowest level of the tree whose perfect subtrees are stored: one row per 2^level
#: entries; a subtree below it is rehashed from its at most 2^level leaf hashes (a root or a
#: proof reads at most one such subtree per level, so it stays O(log n) lookups).
STORED_LEVEL = 3
#: Matches looked up per query (SQLite takes at most 32,766 parameters).
BATCH = 5000
#: How recent a checkpoint must be for :func:`stamp` to ask for its time-stamp.
STAMP_WITHIN = timedelta(hours=1)
#: PostgreSQL advisory lock that serialises appends (SQLite serialises writers itself).
APPEND_LOCK = 0x6C6564676572  # "ledger"

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


def _lookup(addresses):
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


def _append(kinds, pick_ids, bodies, now, leaves=None, texts=None) -> int:
    """Append entries (their kinds, picks and canonical bytes; their leaf hashes and the bytes
    as text when known) with the perfect subtrees they complete; returns the new size. Call
    inside the transaction that makes them true."""
    if not bodies:
        return size()
    _lock()
    start = size()
    frontier = _lookup(merkle.subtrees(0, start)) if start else []
    leaves = leaves or merkle.leaf_hashes(bodies)
    runs, _ = merkle.append_runs(frontier, start, leaves)
    insert_columns(
        LedgerEntry,
        {
            "position": range(start, start + len(bodies)),
            "kind": kinds,
            "pick_id": pick_ids,
            "body": texts or list(map(bytes.decode, bodies)),
        },
        constants={"created_at": now},
    )
    stored = [
        (level, first + offset, value)
        for level, first, hashes in runs
        if level >= STORED_LEVEL
        for offset, value in enumerate(hashes)
    ]
    insert_columns(
        LedgerNode,
        {
            "address": [node_address(level, position) for level, position, _ in stored],
            "level": [level for level, _, _ in stored],
            "position": [position for _, position, _ in stored],
            "hash": [value.hex() for _, _, value in stored],
        },
    )
    return start + len(bodies)


def _lock() -> None:
    """Serialise the transactions that append or sign (PostgreSQL; SQLite has one writer)."""
    if not is_sqlite():
        db.execute_sql("SELECT pg_advisory_xact_lock(%s)", (APPEND_LOCK,))


def publish_new(match_ids, now, model_version: str) -> int:
    """Publish every live pick of ``match_ids`` not in the ledger yet; returns how many.

    Only a pick whose match has not kicked off at ``now`` can be published: a pick made later
    is not live, and no code path may present it as such.
    """
    match_ids = sorted(set(match_ids))
    rows = []
    for start in range(0, len(match_ids), BATCH):
        rows.extend(
            Pick.select(*PICK_FIELDS, Match.kickoff_at, League.competition_type)
            .join(Match)
            .join(League)
            .join_from(
                Pick, LedgerSeal, on=(LedgerSeal.pick_id == Pick.id), join_type=JOIN.LEFT_OUTER
            )
            .where(Pick.is_live & LedgerSeal.id.is_null())
            .where(Pick.match.in_(match_ids[start : start + BATCH]))
            .tuples()
        )
    rows.sort(key=lambda row: row[0])  # by pick id: the ledger's order is the picks'
    names = [field.name for field in PICK_FIELDS]
    pick_ids, bodies, leaves, salts = [], [], [], []
    for *values, kickoff_at, competition_type in rows:
        pick = dict(zip(names, values, strict=True))
        pick["match_id"] = pick.pop("match")
        if kickoff_at <= now:
            raise ValueError(f"pick {pick['id']} cannot be published: its match has kicked off")
        salt = secrets.token_bytes(entries.SALT_BYTES)
        body = entries.published_entry(
            pick,
            salt,
            kickoff_at=kickoff_at,
            competition_type=competition_type,
            model_version=model_version,
        )
        pick_ids.append(pick["id"])
        bodies.append(body)
        leaves.append(merkle.leaf_hash(body))
        salts.append(salt.hex())
    insert_columns(
        LedgerSeal,
        {
            "pick_id": pick_ids,
            "salt": salts,
            "published_hash": [leaf.hex() for leaf in leaves],
        },
    )
    _append([entries.PUBLISHED] * len(bodies), pick_ids, bodies, now, leaves)
    return len(bodies)


def record_outcomes(pick_ids, published, status, profit, closing_odds, clv, now, **settled_by):
    """Append the outcome entries of settled live picks (``published``: the leaf hashes, hex,
    of their ``pick.published`` entries), with what settled each (``settled_by``: the columns
    and margin method :func:`engine.ledger.entries.outcome_entries` takes); returns how many."""
    texts = entries.outcome_texts(
        pick_ids,
        published,
        status,
        profit,
        closing_odds,
        clv,
        now,
        **settled_by,
    )
    kind_of = {
        state: entries.VOIDED if state == "void" else entries.SETTLED for state in set(status)
    }
    kinds = list(map(kind_of.__getitem__, status))
    _append(kinds, list(pick_ids), list(map(str.encode, texts)), now, texts=texts)
    return len(texts)


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


def checkpoint(now: datetime, settings) -> dict | None:
    """Sign a checkpoint of the ledger as it stands, if it grew since the last one (None
    otherwise). Call at the end of each operation that appends, in its transaction; then,
    once it has committed, :func:`stamp` asks for the checkpoint's time-stamp (no network call
    holds the transaction, and with it the write lock, open): :mod:`services.record.publishing`
    does both."""
    _lock()
    current = size()
    last = LedgerCheckpoint.select().order_by(LedgerCheckpoint.size.desc()).first()
    if current == 0 or (last is not None and last.size >= current):
        return None
    key = signing_key(settings)
    # A checkpoint is never signed earlier than the one before it.
    at = max(now, last.published_at) if last is not None else now
    root = merkle.tree_root(current, _lookup)
    text = notes.Checkpoint(key.name, current, root, (f"time {entries.instant(at)}",)).text()
    row = LedgerCheckpoint.create(
        size=current,
        root_hash=root.hex(),
        published_at=at,
        signed_note=key.sign(text),
        key_id=key.key_id.hex(),
    )
    return _checkpoint(row)


def stamp(settings, now: datetime) -> int:
    """Ask the time-stamping authority (``LEDGER_TSA_URL``) for the RFC 3161 time-stamp of each
    checkpoint signed in the last :data:`STAMP_WITHIN` that has none, and store its token (or
    why there is none); returns how many were asked.

    Call after the transaction that signed them commits: inside one (an operation's, a caller's
    further out) it does nothing, and whoever commits that transaction, or the schedule's
    checkpoint, stamps them after. A time-stamp proves a note existed when it was stamped, so
    one asked long after the signing proves little: older checkpoints are left as they are.

    The witnesses (``LEDGER_WITNESSES``) are sent the latest checkpoint at the same moment
    (:func:`services.record.witnesses.ask`, which likewise does nothing inside a transaction)."""
    witnesses.ask(settings, now, _lookup)
    url = settings.get("LEDGER_TSA_URL")
    if not url or db.in_transaction():
        return 0
    stamped = LedgerTimestamp.select(LedgerTimestamp.size)
    query = (
        LedgerCheckpoint.select(LedgerCheckpoint.size, LedgerCheckpoint.signed_note)
        .where(
            LedgerCheckpoint.size.not_in(stamped)
            & LedgerCheckpoint.timestamp_token.is_null()
            & LedgerCheckpoint.timestamp_error.is_null()
            & (LedgerCheckpoint.published_at >= now - STAMP_WITHIN)
        )
        .order_by(LedgerCheckpoint.size)
    )
    asked = 0
    for checkpoint_size, note in list(query.tuples()):
        token = error = None
        try:
            answer = timestamps.stamp(url, note.encode(), settings["LEDGER_TSA_TIMEOUT"])
            token = base64.b64encode(answer).decode()
        except timestamps.TimestampError as failure:
            error = str(failure)
            log.warning("checkpoint %s carries no time-stamp: %s", checkpoint_size, error)
        # Two processes may stamp one checkpoint: the first stored stays, as rows never change.
        LedgerTimestamp.insert(
            size=checkpoint_size, token=token, error=error, stamped_at=now
        ).on_conflict_ignore().execute()
        asked += 1
    return asked


def unsigned() -> bool:
    """Whether entries were appended since the latest checkpoint (none signs them yet)."""
    return size() > _latest_size()


def scheduled_checkpoint(now: datetime, settings) -> dict:
    """The schedule's checkpoint: one signed now if entries were appended since the latest (see
    :func:`checkpoint`), else the latest as it stands (another run signed them first)."""
    made = checkpoint(now, settings)
    stamp(settings, now)  # what an earlier run left unstamped (nothing inside a transaction)
    if made is not None:
        return made
    return {name: value for name, value in head(settings).items() if name in CHECKPOINT_FIELDS}


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


def _checkpoint(row, stamps=None, cosignatures=None) -> dict:
    """A checkpoint's record, with its time-stamp: from ``stamps`` (``{size: (token, error)}``,
    read for this one row when None), else as checkpoints signed before time-stamps were asked
    after the signing carry it; its note followed by the witnesses' cosignature lines (from
    ``cosignatures``, ``witnesses.cosignature_lines`` of several rows, read when None)."""
    if stamps is None:
        stamps = _stamps([row.size])
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


def _stamps(sizes) -> dict:
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
        _checkpoint(last)
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


def _latest_size() -> int:
    last = (
        LedgerCheckpoint.select(LedgerCheckpoint.size)
        .order_by(LedgerCheckpoint.size.desc())
        .first()
    )
    return 0 if last is None else last.size


def page(start: int, end: int | None, now) -> dict:
    """Entries ``[start, end)`` of the signed ledger (at most :data:`PAGE_LIMIT`; ``end``
    defaults to as many as fit), each with its leaf hash, the size of the first checkpoint that
    covered it, and its reveal once the pick may be shown; with those checkpoints."""
    signed = _latest_size()
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
    reveals = _reveals([pick_id for _, kind, pick_id, _ in rows if kind == entries.PUBLISHED], now)
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
    stamps = _stamps(cited)
    cosignatures = witnesses.cosignature_lines(cited)
    checkpoints = [
        _checkpoint(row, stamps, cosignatures)
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


def _reveals(pick_ids, now) -> dict:
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
    signed = _latest_size()
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
        "leaf_hash": _lookup([(0, index)])[0].hex(),
        "root_hash": merkle.tree_root(tree_size, _lookup).hex(),
        "hashes": [value.hex() for value in merkle.inclusion_proof(index, tree_size, _lookup)],
    }


def consistency(from_size: int, tree_size: int | None) -> dict:
    """The proof that the tree of ``from_size`` entries is the start of the tree of
    ``tree_size`` (default: the latest checkpoint's), with both roots."""
    signed = _latest_size()
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
        "from_root_hash": merkle.tree_root(from_size, _lookup).hex(),
        "root_hash": merkle.tree_root(tree_size, _lookup).hex(),
        "hashes": [
            value.hex() for value in merkle.consistency_proof(from_size, tree_size, _lookup)
        ],
    }
