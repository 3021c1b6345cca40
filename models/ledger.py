"""The ledger's tables, rows only ever added: its entries, the stored subtrees of its Merkle
tree (keyed by :func:`node_address`), the signed checkpoints, their time-stamps and
cosignatures, and the seals of live picks."""

from peewee import BigIntegerField, CharField, IntegerField, TextField

from enums import LEDGER_KINDS
from models.base import BaseModel, choices_of
from store.fields import UTCDateTimeField


class LedgerEntry(BaseModel):
    """One entry of the append-only ledger of live picks: its canonical JSON (its leaf hash is
    SHA-256(0x00 ‖ body)), at ``position`` in the tree. Never updated or deleted (a trigger
    refuses it)."""

    position = BigIntegerField(primary_key=True)  # SQLite: the rowid itself, no extra index
    kind = CharField(max_length=16, choices=choices_of(LEDGER_KINDS))
    #: No foreign key: the ledger outlives any change to the picks it records.
    pick_id = BigIntegerField()
    body = TextField()
    created_at = UTCDateTimeField()


# Where each pick was published (its ``pick.published`` entry's position), found without reading
# the entries' bodies: a partial index, so appending outcomes never writes to it (SQLite keeps the
# position, its rowid, in the index itself).
LedgerEntry.add_index(
    LedgerEntry.index(LedgerEntry.pick_id).where(LedgerEntry.kind == LEDGER_KINDS[0])
)


class LedgerNode(BaseModel):
    """The hash (hex) of the ledger tree's perfect subtree of ``2^level`` leaves starting at leaf
    ``position × 2^level``, for the levels ``services.record.log_reading.STORED_LEVEL`` and up
    (smaller ones are rehashed from their few leaves in ``LedgerEntry``): any root or proof is then
    O(log n) lookups. Keyed by one integer, ``address = position × 64 + level``
    (:func:`node_address`), so the key is the table itself (SQLite's rowid), not another index."""

    address = BigIntegerField(primary_key=True)
    level = IntegerField()
    position = BigIntegerField()
    hash = CharField(max_length=64)


def node_address(level: int, position: int) -> int:
    """The key of the perfect subtree at ``(level, position)``."""
    return (position << 6) | level


class LedgerCheckpoint(BaseModel):
    """A signed tree head: the ledger's size and root hash at ``published_at``, as a signed note,
    with the RFC 3161 time-stamp of that note where an authority is configured."""

    size = BigIntegerField(unique=True)
    root_hash = CharField(max_length=64)
    published_at = UTCDateTimeField()
    signed_note = TextField()
    key_id = CharField(max_length=8)
    #: Checkpoints signed before time-stamps were asked after the signing transaction carry
    #: their token (or error) here; later ones in ``LedgerTimestamp``.
    timestamp_token = TextField(null=True)  # base64 of the authority's DER answer
    timestamp_error = TextField(null=True)  # why a configured authority gave no token


class LedgerTimestamp(BaseModel):
    """The RFC 3161 time-stamp of the checkpoint of ``size`` (or why the authority gave none),
    asked once the transaction that signed the checkpoint has committed: no network call
    holds a transaction open. One per checkpoint, never updated or deleted."""

    size = BigIntegerField(unique=True)
    token = TextField(null=True)  # base64 of the authority's DER answer
    error = TextField(null=True)
    stamped_at = UTCDateTimeField()


class LedgerSeal(BaseModel):
    """A published live pick: the salt (hex) that seals its commitment until the pick may be
    shown, and the leaf hash of its ``pick.published`` entry, which its outcome cites."""

    pick_id = BigIntegerField(unique=True)
    salt = CharField(max_length=64)
    published_hash = CharField(max_length=64)


class LedgerCosignature(BaseModel):
    """A witness's answer to the checkpoint of ``size`` (``services.record.witnesses``): its
    ``cosignature/v1`` line and the time it signed, or why it gave none; asked once the
    transaction that signed the checkpoint has committed. One per witness and checkpoint, never
    updated or deleted (the database refuses it, as for the ledger's tables)."""

    size = BigIntegerField()
    witness = CharField(max_length=255)  # its verifier key, name+hash+base64(0x04 ‖ key)
    signature = TextField(null=True)  # the note signature line, "— name base64\n"
    cosigned_at = UTCDateTimeField(null=True)  # the witness's own time-stamp in the line
    error = TextField(null=True)
    asked_at = UTCDateTimeField()

    class Meta:
        indexes = ((("witness", "size"), True),)


#: The ledger's tables: rows are only ever added (``models.schema`` makes the database refuse
#: anything else).
LEDGER_TABLES = [LedgerEntry, LedgerNode, LedgerCheckpoint, LedgerSeal, LedgerTimestamp]
