"""The public track record, and the signed ledger anyone can verify it against."""

from flask.views import MethodView

from schemas.ledger import (
    EntriesArgsSchema,
    EntriesSchema,
    LedgerHeadSchema,
    ProofArgsSchema,
    ProofSchema,
)
from schemas.records import ByCompetitionTypeSchema, TrackRecordArgsSchema
from services.reads import track_record
from services.record import signed_log
from web.access import PUBLIC, now, settings
from web.blueprint import Blueprint

blp = Blueprint(
    "track-record",
    __name__,
    url_prefix="/api/track-record",
    description="How the picks did, and the append-only signed ledger of the live picks "
    "(RFC 9162 Merkle tree, Ed25519 signed-note checkpoints): anyone may read and verify it.",
    access=PUBLIC,
)


@blp.route("/by-competition-type")
class ByCompetitionType(MethodView):
    @blp.arguments(TrackRecordArgsSchema, location="query")
    @blp.cached()
    @blp.response(200, ByCompetitionTypeSchema)
    @blp.doc(operationId="getTrackRecordByCompetitionType")
    def get(self, query):
        """Live (default) or backfilled picks' figures, one item per competition type"""
        return track_record.by_competition_type(query["is_live"])


@blp.route("/ledger")
class Ledger(MethodView):
    @blp.response(200, LedgerHeadSchema)
    @blp.doc(operationId="getLedgerCheckpoint")
    def get(self):
        """The ledger's latest signed checkpoint and the key that signs it"""
        return signed_log.head(settings())


@blp.route("/ledger/entries")
class LedgerEntries(MethodView):
    @blp.arguments(EntriesArgsSchema, location="query")
    @blp.response(200, EntriesSchema)
    @blp.doc(operationId="listLedgerEntries")
    def get(self, query):
        """Entries of the signed ledger, with the reveals of the picks anyone may see"""
        return signed_log.page(query["start"], query["end"], now())


@blp.route("/ledger/proof")
class LedgerProof(MethodView):
    @blp.arguments(ProofArgsSchema, location="query")
    @blp.response(200, ProofSchema)
    @blp.doc(operationId="getLedgerProof")
    def get(self, query):
        """An inclusion proof of an entry, or a consistency proof between two sizes"""
        return signed_log.proof(**query)
