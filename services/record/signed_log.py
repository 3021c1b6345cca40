"""The ledger of live picks: an append-only, signed Merkle log anyone can verify.

Each live pick is published into it before kick-off (``pick.published``, sealed by a
commitment), and its settlement or voiding follows (``pick.settled`` / ``pick.voided``), each in
the transaction that stores the pick or settles it. Every operation that appends ends with one
signed checkpoint (:func:`checkpoint`), time-stamped by an RFC 3161 authority, where one is
configured, once that transaction has committed (:func:`stamp`): the unit of work
:func:`services.record.publishing.publish`. Entries, proofs and the latest checkpoint are public;
a pick's reveal (its salt and the sealed fields) is served as soon as the premium rule shows the
pick itself.

What the log holds is read through :mod:`services.record.log_reading`. Rows are only ever
added: no function here updates or deletes one, and the database refuses it
too (see ``models.schema._append_only``).
"""

import base64
import logging
import secrets
from datetime import datetime, timedelta

from peewee import JOIN

from engine.ledger import entries, merkle, notes
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
from services.record import timestamps, witnesses
from services.record.log_reading import (
    BATCH,
    CHECKPOINT_FIELDS,
    PICK_FIELDS,
    STORED_LEVEL,
    checkpoint_record,
    head,
    signed_size,
    signing_key,
    size,
    stored_hashes,
)
from store.bulk import insert_columns
from store.database import db, is_sqlite

log = logging.getLogger("picks.ledger")

#: How recent a checkpoint must be for :func:`stamp` to ask for its time-stamp.
STAMP_WITHIN = timedelta(hours=1)


#: PostgreSQL advisory lock that serialises appends (SQLite serialises writers itself).
APPEND_LOCK = 0x6C6564676572  # "ledger"


def _append(kinds, pick_ids, bodies, now, leaves=None, texts=None) -> int:
    """Append entries (their kinds, picks and canonical bytes; their leaf hashes and the bytes
    as text when known) with the perfect subtrees they complete; returns the new size. Call
    inside the transaction that makes them true."""
    if not bodies:
        return size()
    _lock()
    start = size()
    frontier = stored_hashes(merkle.subtrees(0, start)) if start else []
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
    root = merkle.tree_root(current, stored_hashes)
    text = notes.Checkpoint(key.name, current, root, (f"time {entries.instant(at)}",)).text()
    row = LedgerCheckpoint.create(
        size=current,
        root_hash=root.hex(),
        published_at=at,
        signed_note=key.sign(text),
        key_id=key.key_id.hex(),
    )
    return checkpoint_record(row)


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
    witnesses.ask(settings, now, stored_hashes)
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
    return size() > signed_size()


def scheduled_checkpoint(now: datetime, settings) -> dict:
    """The schedule's checkpoint: one signed now if entries were appended since the latest (see
    :func:`checkpoint`), else the latest as it stands (another run signed them first)."""
    made = checkpoint(now, settings)
    stamp(settings, now)  # what an earlier run left unstamped (nothing inside a transaction)
    if made is not None:
        return made
    return {name: value for name, value in head(settings).items() if name in CHECKPOINT_FIELDS}
