"""The public track record, and the signed ledger anyone can verify it against."""

from flask import current_app, request
from flask.views import MethodView

from schemas.ledger import (
    CheckpointsArgsSchema,
    CheckpointsSchema,
    EntriesArgsSchema,
    EntriesSchema,
    LedgerHeadSchema,
    MatchFactsArgsSchema,
    MatchFactsSchema,
    ProofArgsSchema,
    ProofSchema,
    RevealsArgsSchema,
    RevealsSchema,
)
from schemas.records import ByCompetitionTypeSchema, TrackRecordArgsSchema
from services.reads import track_record
from services.record import log_reading, tiles
from web.access import PUBLIC, TILES, now, settings
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
        return log_reading.head(settings())


@blp.route("/ledger/entries")
class LedgerEntries(MethodView):
    @blp.arguments(EntriesArgsSchema, location="query")
    @blp.response(200, EntriesSchema)
    @blp.doc(operationId="listLedgerEntries")
    def get(self, query):
        """Entries of the signed ledger, with the reveals of the picks anyone may see"""
        return log_reading.page(query["start"], query["end"], now())


@blp.route("/ledger/proof")
class LedgerProof(MethodView):
    @blp.arguments(ProofArgsSchema, location="query")
    @blp.response(200, ProofSchema)
    @blp.doc(operationId="getLedgerProof")
    def get(self, query):
        """An inclusion proof of an entry, or a consistency proof between two sizes"""
        return log_reading.proof(**query)


#: Where the tiles are served (C2SP tlog-tiles' *prefix*).
TILES_PREFIX = "/ledger/tiles"
#: A full tile never changes; a partial one is replaced by wider ones as the log grows.
IMMUTABLE = "public, max-age=31536000, immutable"
PARTIAL = "public, max-age=60"
#: The checkpoint changes with every signing (tlog-tiles: no caching beyond a few seconds).
CHECKPOINT = "public, max-age=5"
OCTETS = {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}


@blp.route(f"{TILES_PREFIX}/checkpoint")
class TilesCheckpoint(MethodView):
    @blp.access(TILES)
    @blp.problems(404, "not-found")
    @blp.doc(
        operationId="getLedgerTilesCheckpoint",
        responses={
            200: {
                "description": "The latest signed checkpoint as a signed note (C2SP "
                "tlog-checkpoint), `text/plain; charset=utf-8`.",
                "content": {"text/plain": {"schema": {"type": "string"}}},
            }
        },
    )
    def get(self):
        """The ledger's latest checkpoint, as C2SP tlog-tiles serves it"""
        return _answer(tiles.checkpoint_note().encode(), "text/plain; charset=utf-8", CHECKPOINT)


@blp.route(f"{TILES_PREFIX}/tile/<path:tile>")
class Tile(MethodView):
    @blp.access(TILES)
    @blp.problems(404, "not-found")
    @blp.doc(
        operationId="getLedgerTile",
        responses={
            200: {
                "description": "A tile (`<L>/<N>[.p/<W>]`: 32-byte hashes, concatenated) or an "
                "entry bundle (`entries/<N>[.p/<W>]`: each entry's canonical bytes after a "
                "big-endian uint16 length), C2SP tlog-tiles; a bundle gzipped "
                "(`Content-Encoding`) for a client that accepts it. A full tile is immutable.",
                "content": OCTETS,
            }
        },
    )
    def get(self, tile):
        """A tile of the ledger's Merkle tree, or a bundle of its entries (C2SP tlog-tiles)"""
        address = tiles.parse(tile)
        data, gzipped = tiles.compressed(
            tiles.read(address), address.level is None and _accepts_gzip()
        )
        cache_control = IMMUTABLE if address.full else PARTIAL
        response = _answer(data, "application/octet-stream", cache_control)
        if address.level is None:
            response.headers["Vary"] = "Accept-Encoding"
        if gzipped:
            response.headers["Content-Encoding"] = "gzip"
        return response


@blp.route("/ledger/checkpoints")
class LedgerCheckpoints(MethodView):
    @blp.access(TILES)
    @blp.arguments(CheckpointsArgsSchema, location="query")
    @blp.cached()
    @blp.response(200, CheckpointsSchema)
    @blp.doc(operationId="listLedgerCheckpoints")
    def get(self, query):
        """Every signed checkpoint of the ledger, a thousand at a time"""
        return tiles.checkpoints(query["after"], settings())


@blp.route("/ledger/reveals")
class LedgerReveals(MethodView):
    @blp.access(TILES)
    @blp.arguments(RevealsArgsSchema, location="query")
    @blp.response(200, RevealsSchema)
    @blp.doc(operationId="listLedgerReveals")
    def get(self, query):
        """The reveals of the picks anyone may see, by entry, ten thousand entries at a time"""
        return tiles.reveals(query["start"], query["end"], now())


@blp.route("/ledger/matches")
class LedgerMatchFacts(MethodView):
    @blp.access(TILES)
    @blp.arguments(MatchFactsArgsSchema, location="query")
    @blp.cached()
    @blp.response(200, MatchFactsSchema)
    @blp.doc(operationId="listLedgerMatchFacts")
    def get(self, query):
        """Kick-off, status and score of every match of up to seven days, to check outcomes"""
        return tiles.match_facts(query["first"], query["days"])


def _accepts_gzip() -> bool:
    """Whether the client takes a gzipped answer."""
    return "gzip" in request.accept_encodings


def _answer(data: bytes, content_type: str, cache_control: str):
    """A plain (not JSON) answer of ``data`` with its caching rule."""
    response = current_app.response_class(data, content_type=content_type)
    response.headers["Cache-Control"] = cache_control
    return response
