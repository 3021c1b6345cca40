"""Ledger shapes: the latest signed checkpoint, pages of entries with their reveals, and the
Merkle proofs that tie them together (RFC 9162)."""

from marshmallow import ValidationError, fields, validate, validates_schema

from enums import MATCH_STATUSES
from schemas.common import CamelSchema, UTCDateTime
from schemas.matches import ScoreSchema
from schemas.numbers import Integer

HEX_HASH = {"pattern": "^[0-9a-f]{64}$"}
SIZE = validate.Range(0)


class CheckpointSchema(CamelSchema):
    """A signed tree head: the ledger's size and root hash at a time, as a signed note."""

    size = Integer(required=True, metadata={"description": "Entries in the tree."})
    root_hash = fields.String(
        required=True, metadata={**HEX_HASH, "description": "RFC 9162 root hash, hex."}
    )
    published_at = UTCDateTime(
        required=True,
        allow_none=True,
        metadata={"description": "When the checkpoint was signed (its note's `time` line)."},
    )
    signed_note = fields.String(
        required=True,
        allow_none=True,
        metadata={
            "description": "The checkpoint in the signed-note format (C2SP tlog-checkpoint): "
            "origin, size and base64 root lines, a `time` line, a blank line and the Ed25519 "
            "signature line, then the `cosignature/v1` lines of the witnesses that cosigned this "
            "checkpoint (C2SP tlog-cosignature, see `LEDGER_WITNESSES`; each carries its "
            "witness's own time). Null before the first checkpoint."
        },
    )
    key_id = fields.String(
        required=True, metadata={"description": "The signing key's ID, 8 hex digits."}
    )
    timestamp_token = fields.String(
        required=True,
        allow_none=True,
        metadata={
            "description": "Base64 of the RFC 3161 time-stamp response over the signed note, "
            "where a time-stamping authority is configured. Asked once the transaction that "
            "signed the checkpoint has committed: null for a moment after the signing, and when "
            "the authority did not answer."
        },
    )


class LedgerHeadSchema(CheckpointSchema):
    """The latest checkpoint, and the key that signs every checkpoint."""

    origin = fields.String(required=True, metadata={"description": "The log's name."})
    verifier_key = fields.String(
        required=True,
        metadata={
            "description": "The public key, `name+keyid+base64(0x01 ‖ Ed25519 key)` (Go's "
            "sumdb/note encoding). Pin it: a later answer signed by another key is not this log."
        },
    )


class EntriesArgsSchema(CamelSchema):
    """Which entries: ``[start, end)``, at most 1,000 at a time."""

    start = Integer(load_default=0, validate=SIZE, metadata={"description": "First."})
    end = Integer(
        load_default=None,
        validate=SIZE,
        metadata={
            "description": "One past the last (default: 1,000 on, or the signed ledger's end)."
        },
    )


class RevealSchema(CamelSchema):
    """What opens a `pick.published` entry's commitment: SHA-256(salt ‖ canonical JSON of
    `pick`) equals it."""

    pick = fields.Dict(
        required=True,
        metadata={"description": "The sealed pick, canonical names; decimals as strings."},
    )
    salt = fields.String(required=True, metadata={"description": "32 bytes, hex."})


class EntrySchema(CamelSchema):
    """One entry of the ledger."""

    index = Integer(required=True, metadata={"description": "Its leaf's position."})
    entry = fields.String(
        required=True,
        metadata={
            "description": "The entry: canonical JSON (sorted keys, no spaces, UTF-8, decimals "
            "as strings) of type `pick.published`, `pick.settled` or `pick.voided`. An outcome "
            "(`pick.settled`, `pick.voided`) cites its `published` entry's leaf hash and records "
            "`status`, `profit`, `closingOdds`, `clv`, `settledAt` and what settled it: "
            "`kickoffAt` (the match's kick-off as finally known), `matchStatus`, `score` "
            "(`{home, away}` or null), `closingBookmaker`, `closingProbability` (de-margined, by "
            "`marginMethod`), `closingLine` (`source`: the source's own closing price; `seen`: "
            "the service's own closing line, the latest price it saw before kick-off, where the "
            "source gives none; null without a closing price), and `live` with `notLiveReason` "
            "(null, or `made-after-kickoff`, `not-in-ledger`, `signed-after-kickoff`): a pick is "
            "live only if made before that kick-off and its published entry was first signed in "
            "a checkpoint dated strictly before it. Outcomes written before these fields existed "
            "carry only the first five; those written before `closingLine` carry all but it."
        },
    )
    leaf_hash = fields.String(
        required=True, metadata={**HEX_HASH, "description": "SHA-256(0x00 ‖ entry), hex."}
    )
    reveal = fields.Nested(
        RevealSchema,
        required=True,
        allow_none=True,
        metadata={
            "description": "For a `pick.published` entry whose pick anyone may see (at once for "
            "picks rated B or C, from kick-off for A); null otherwise."
        },
    )
    checkpoint_size = Integer(
        required=True,
        metadata={"description": "The size of the first checkpoint that included the entry."},
    )


class EntriesSchema(CamelSchema):
    """A page of entries, with the checkpoints that first included them."""

    start = Integer(required=True)
    end = Integer(required=True)
    items = fields.List(fields.Nested(EntrySchema), required=True)
    checkpoints = fields.List(fields.Nested(CheckpointSchema), required=True)


class ProofArgsSchema(CamelSchema):
    """An inclusion proof (``index``) or a consistency proof (``fromSize``), in the tree of
    ``treeSize`` entries (default: the latest checkpoint's)."""

    index = Integer(
        load_default=None, validate=SIZE, metadata={"description": "Prove this entry included."}
    )
    from_size = Integer(
        load_default=None,
        validate=SIZE,
        metadata={"description": "Prove the tree of this many entries a prefix of treeSize's."},
    )
    tree_size = Integer(load_default=None, validate=SIZE)

    @validates_schema
    def one_kind(self, data, **kwargs):
        """Exactly one of ``index`` and ``fromSize``."""
        if (data.get("index") is None) == (data.get("from_size") is None):
            message = "Give exactly one of index (inclusion) and fromSize (consistency)."
            raise ValidationError({"index": [message], "fromSize": [message]})


class ProofSchema(CamelSchema):
    """An RFC 9162 proof: `inclusion` of the entry `index` (§2.1.3), or `consistency` from the
    tree of `fromSize` entries (§2.1.4), in the tree of `treeSize` entries."""

    type = fields.String(required=True, metadata={"enum": ["inclusion", "consistency"]})
    tree_size = Integer(required=True)
    root_hash = fields.String(required=True, metadata=HEX_HASH)
    index = Integer(metadata={"description": "Inclusion: the entry."})
    leaf_hash = fields.String(metadata={**HEX_HASH, "description": "Inclusion: its leaf hash."})
    from_size = Integer(metadata={"description": "Consistency: the earlier size."})
    from_root_hash = fields.String(
        metadata={**HEX_HASH, "description": "Consistency: the earlier root."}
    )
    hashes = fields.List(
        fields.String(metadata=HEX_HASH),
        required=True,
        metadata={"description": "The proof's hashes, hex, in RFC 9162's order."},
    )


class CheckpointsArgsSchema(CamelSchema):
    """Which checkpoints: those larger than ``after``, at most 1,000 at a time."""

    after = Integer(
        load_default=0,
        validate=SIZE,
        metadata={"description": "List the checkpoints of more entries than this."},
    )


class CheckpointsSchema(CamelSchema):
    """Signed checkpoints, smallest first, with the log's name and key: every tree head an
    auditor needs to apply the live rule (each pick's first covering checkpoint and its time)."""

    origin = fields.String(required=True, metadata={"description": "The log's name."})
    verifier_key = fields.String(
        required=True, metadata={"description": "The public key, as `/ledger` gives it."}
    )
    after = Integer(required=True)
    items = fields.List(fields.Nested(CheckpointSchema), required=True)
    more = fields.Boolean(
        required=True,
        metadata={"description": "Whether more follow: ask again with `after` the last size."},
    )


class RevealsArgsSchema(CamelSchema):
    """Which entries: ``[start, end)``, at most 10,000 at a time."""

    start = Integer(load_default=0, validate=SIZE, metadata={"description": "First."})
    end = Integer(
        load_default=None,
        validate=SIZE,
        metadata={
            "description": "One past the last (default: 10,000 on, or the signed ledger's end)."
        },
    )


class IndexedRevealSchema(CamelSchema):
    """The reveal of the `pick.published` entry at `index`."""

    index = Integer(required=True)
    reveal = fields.Nested(RevealSchema, required=True)


class RevealsSchema(CamelSchema):
    """The reveals anyone may see of the published picks among entries `[start, end)`; a pick
    still sealed is left out until it may be shown."""

    start = Integer(required=True)
    end = Integer(required=True)
    items = fields.List(fields.Nested(IndexedRevealSchema), required=True)


class MatchFactsArgsSchema(CamelSchema):
    """Which matches: those kicking off in the ``days`` days from ``from`` (UTC)."""

    first = fields.Date(
        required=True,
        data_key="from",
        metadata={"description": "The first day, `YYYY-MM-DD` (UTC)."},
    )
    days = Integer(
        load_default=1,
        validate=validate.Range(1, 7),
        metadata={"description": "How many days, 1 to 7 (default 1)."},
    )


class MatchFactSchema(CamelSchema):
    """What an outcome entry is checked against: the match as it stands."""

    id = Integer(required=True)
    kickoff_at = UTCDateTime(required=True)
    status = fields.String(required=True, metadata={"enum": list(MATCH_STATUSES)})
    score = fields.Nested(ScoreSchema, required=True, allow_none=True)


class MatchFactsSchema(CamelSchema):
    """Every match kicking off in a span of days, as `/api/matches/{id}` shows it: kick-off,
    status and score."""

    first = fields.Date(required=True, data_key="from")
    days = Integer(required=True)
    items = fields.List(fields.Nested(MatchFactSchema), required=True)
