"""Operations API shapes: service health, operation requests and records, and each kind's result
(also the stored form of that result: written and read back through these schemas)."""

from marshmallow import Schema, fields, validate

from enums import (
    CALIBRATION_DAYS,
    CONTRADICTION_CHOICES,
    CONTRADICTION_FIELDS,
    CONTRADICTION_STATUSES,
    DATA_SOURCES,
    HEALTH_SERVICES,
    HEALTH_STATES,
    MARKETS,
    OPERATION_KINDS,
    OPERATION_STATUSES,
    SERVICE_STATES,
    SETTLEMENT_DAYS,
    USER_PLANS,
    USER_ROLES,
    USER_STATUSES,
)
from schemas.common import (
    CamelSchema,
    PageArgsSchema,
    PageSchema,
    UTCDateTime,
    enum_of,
    id_field,
    one_of,
    page_of,
)
from schemas.ledger import CheckpointSchema
from schemas.numbers import Integer


class ServiceHealthSchema(CamelSchema):
    """One dependency's state."""

    name = enum_of(HEALTH_SERVICES, required=True)
    status = enum_of(
        SERVICE_STATES,
        required=True,
        metadata={"description": "`failing`: a live source whose last attempt failed."},
    )
    latency_ms = fields.Float(required=True)
    detail = fields.String(required=True)
    last_success_at = UTCDateTime(
        allow_none=True, metadata={"description": "A live source's last success (null: none)."}
    )
    last_error_at = UTCDateTime(
        allow_none=True, metadata={"description": "A live source's last error (null: none)."}
    )
    last_error = fields.String(
        allow_none=True, metadata={"description": "What that error said (a live source's)."}
    )


class HealthSchema(CamelSchema):
    """The service's health: `down` when the database is, `degraded` when anything else is off."""

    status = enum_of(HEALTH_STATES, required=True)
    services = fields.List(fields.Nested(ServiceHealthSchema), required=True)
    version = fields.String(required=True)
    uptime_seconds = fields.Float(required=True)


class RefreshRequestSchema(CamelSchema):
    """Which match to refresh."""

    match_id = id_field(required=True, strict=True)


class SettlementRequestSchema(CamelSchema):
    """How far back to settle."""

    last_days = Integer(
        load_default=7,
        strict=True,
        validate=validate.Range(*SETTLEMENT_DAYS),
        metadata={"description": "Settle picks of matches that kicked off in the last N days."},
    )


class CalibrationRequestSchema(CamelSchema):
    """Which window to score."""

    window_days = Integer(
        load_default=90,
        strict=True,
        validate=validate.Range(*CALIBRATION_DAYS),
        metadata={"description": "Score matches finished in the last N days."},
    )


class BackfillRequestSchema(CamelSchema):
    """Whether the backfill rebuilds the backfilled history with the current model."""

    rebuild = fields.Boolean(load_default=False)


class LedgerCheckpointRequestSchema(CamelSchema):
    """A scheduled ledger checkpoint takes no parameters."""


class UserUpdateParamsSchema(CamelSchema):
    """An admin's change to an account: whose, and the fields the request gave."""

    user_id = Integer(required=True)
    role = enum_of(USER_ROLES)
    plan = enum_of(USER_PLANS)
    status = enum_of(USER_STATUSES)


class DataSyncRequestSchema(CamelSchema):
    """Which live source to sync."""

    source = one_of(
        DATA_SOURCES,
        load_default=None,
        allow_none=True,
        metadata={
            "enum": list(DATA_SOURCES),
            "description": "One source; every configured one when absent or null.",
        },
    )


class DataBootstrapRequestSchema(CamelSchema):
    """How many seasons before the current one the first day brings."""

    seasons = Integer(
        load_default=3,
        strict=True,
        validate=validate.Range(0, 30),
        metadata={
            "description": "Earlier seasons fetched besides the current one (the goal model's "
            "window is three)."
        },
    )


#: A score as an operator writes it: home goals, a hyphen, away goals.
SCORE_PATTERN = r"^\d{1,2}-\d{1,2}$"


class ContradictionQuerySchema(PageArgsSchema):
    """Filters of the contradiction listing."""

    status = one_of(
        CONTRADICTION_STATUSES,
        metadata={"enum": list(CONTRADICTION_STATUSES), "description": "Open or resolved only."},
    )


class ContradictionResolveSchema(CamelSchema):
    """An operator's choice for an open contradiction."""

    value = fields.String(
        required=True,
        validate=validate.Regexp(
            rf"^({'|'.join(CONTRADICTION_CHOICES)})$|{SCORE_PATTERN}",
            error='Give "stored", "source" or a score such as "2-1".',
        ),
        metadata={
            "description": '`"stored"` keeps the stored value, `"source"` takes the disagreeing '
            'source\'s, or a score of your own (`"2-1"`). Only `"stored"` (or the stored '
            "score) where the match's picks were settled before the disagreement arrived.",
            "example": "stored",
        },
    )


class ContradictionResolveParamsSchema(CamelSchema):
    """A contradiction resolved: which, the choice as given, and who chose."""

    contradiction_id = Integer(required=True)
    value = fields.String(required=True)
    by = fields.String(
        required=True, metadata={"description": "`user:ID` (the API) or `cli:NAME` (the CLI)."}
    )


#: What each kind records as its parameters.
PARAMS_SCHEMAS = {
    "intelligence-refresh": RefreshRequestSchema,
    "settlement-run": SettlementRequestSchema,
    "calibration-run": CalibrationRequestSchema,
    "model-backfill": BackfillRequestSchema,
    "ledger-checkpoint": LedgerCheckpointRequestSchema,
    "user-update": UserUpdateParamsSchema,
    "data-sync": DataSyncRequestSchema,
    "contradiction-resolve": ContradictionResolveParamsSchema,
    "data-bootstrap": DataBootstrapRequestSchema,
}


class OperationSchema(CamelSchema):
    """A long-running job: what was asked, by whom, its state and timing."""

    id = Integer(required=True)
    kind = enum_of(OPERATION_KINDS, required=True)
    status = enum_of(OPERATION_STATUSES, required=True)
    params = fields.Dict(
        required=True, metadata={"description": "The request's fields, as it sent them."}
    )
    created_at = UTCDateTime(required=True)
    started_at = UTCDateTime(required=True, allow_none=True)
    finished_at = UTCDateTime(required=True, allow_none=True)
    duration_ms = Integer(required=True, allow_none=True)
    created_by = fields.Raw(
        required=True,
        allow_none=True,
        metadata={
            "description": "The id of the user who started it, `scheduler` for a run the "
            "worker's schedule started, or null from the CLI.",
            "oneOf": [{"type": "integer"}, {"const": "scheduler"}, {"type": "null"}],
        },
    )

    error = fields.String(required=True, allow_none=True)


class SettlementCountsSchema(CamelSchema):
    """What a settlement decided."""

    examined = Integer(required=True)
    won = Integer(required=True)
    lost = Integer(required=True)
    void = Integer(required=True, metadata={"description": "Voided, pushes included."})
    # A result stored before lines existed has neither: it settled none (load_default 0).
    half_won = Integer(
        load_default=0,
        metadata={"description": "Quarter-line picks half won, half refunded (always written)."},
    )
    half_lost = Integer(
        load_default=0,
        metadata={"description": "Quarter-line picks half lost, half refunded (always written)."},
    )
    pending = Integer(required=True, metadata={"description": "Still without a result."})


class SettlementResultSchema(SettlementCountsSchema):
    """The result of a settlement run."""

    last_days = Integer(required=True)
    settled_at = UTCDateTime(required=True)


class ReliabilityBinSchema(CamelSchema):
    """One equal-width bin of forecasts."""

    from_ = fields.Float(required=True, data_key="from", attribute="from")
    to = fields.Float(required=True)
    mean_predicted = fields.Float(required=True, allow_none=True)
    observed_rate = fields.Float(required=True, allow_none=True)
    count = Integer(required=True)


class PriceBandSchema(CamelSchema):
    """The forecasts of the selections whose closing price lies in one band."""

    from_ = fields.Float(required=True, data_key="from", attribute="from")
    to = fields.Float(
        required=True, allow_none=True, metadata={"description": "Null for the last band."}
    )
    count = Integer(required=True)
    mean_predicted = fields.Float(required=True, allow_none=True)
    observed_rate = fields.Float(required=True, allow_none=True)
    std_error = fields.Float(
        required=True,
        allow_none=True,
        metadata={
            "description": "√Σp(1 − p) ÷ count: how far the observed rate strays from "
            "`meanPredicted` by chance alone were the forecasts right."
        },
    )


class ScoresSchema(CamelSchema):
    """Scores of a set of forecasts (null without any)."""

    count = Integer(required=True)
    brier = fields.Float(required=True, allow_none=True)
    log_loss = fields.Float(required=True, allow_none=True)
    rps = fields.Float(
        required=True, allow_none=True, metadata={"description": "1x2 only (ordered outcomes)."}
    )
    ece = fields.Float(
        required=True,
        allow_none=True,
        metadata={"description": "Expected calibration error over the ten bins."},
    )
    bins = fields.List(fields.Nested(ReliabilityBinSchema), required=True)
    price_bands = fields.List(
        fields.Nested(PriceBandSchema),
        allow_none=True,
        metadata={
            "description": "Reliability by the selection's sharp closing price: under 2.0, "
            "2.0–4.0, 4.0–8.0, 8.0 and over (where favourites and long shots part). Absent from "
            "runs made before it was reported."
        },
    )


class MarketCalibrationSchema(ScoresSchema):
    """A market's published forecasts, beside the de-margined closing odds on the same matches."""

    reference = fields.Nested(ScoresSchema, required=True, allow_none=True)


class CalibrationResultSchema(CamelSchema):
    """The result of a calibration run."""

    window_days = Integer(required=True)
    date_from = UTCDateTime(required=True, data_key="from")
    date_to = UTCDateTime(required=True, data_key="to")
    reference_method = fields.String(required=True)
    markets = fields.Dict(
        keys=fields.String(metadata={"enum": list(MARKETS)}),
        values=fields.Nested(MarketCalibrationSchema),
        required=True,
    )


class RefreshResultSchema(CamelSchema):
    """The result of an intelligence refresh."""

    match_id = Integer(required=True)
    refreshed_at = UTCDateTime(required=True)
    predictions = Integer(required=True, metadata={"description": "Predictions written."})
    intelligence = Integer(required=True)
    picks = Integer(required=True, metadata={"description": "New picks."})
    published = Integer(
        load_default=0, metadata={"description": "Live picks published into the ledger."}
    )
    rebuilt = Integer(load_default=0)


class BackfillResultSchema(CamelSchema):
    """The result of a model backfill (recorded by the CLI)."""

    matches = Integer(required=True)
    fits = Integer()
    model_seconds = fields.Float()
    seconds = fields.Float()
    predictions = Integer()
    intelligence = Integer()
    picks = Integer()
    published = Integer(metadata={"description": "Live picks published into the ledger."})
    live_picks = Integer()
    rebuilt = Integer(
        metadata={"description": "Kicked-off matches whose backfilled predictions were redone."}
    )
    settlement = fields.Nested(SettlementCountsSchema)


class LedgerCheckpointResultSchema(CheckpointSchema):
    """The result of a scheduled ledger checkpoint (run by the worker when entries were appended
    since the latest one): the checkpoint it signed."""

    timestamp_error = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "Why the checkpoint carries no time-stamp, if it was asked for."},
    )


class AccountStandingSchema(CamelSchema):
    """An account's role, plan and status."""

    role = enum_of(USER_ROLES, required=True)
    plan = enum_of(USER_PLANS, required=True)
    status = enum_of(USER_STATUSES, required=True)


class UserUpdateResultSchema(CamelSchema):
    """The result of an admin's change to an account: its role, plan and status before and
    after (every token of the account has the new ones from its next request)."""

    user_id = Integer(required=True)
    before = fields.Nested(AccountStandingSchema, required=True)
    after = fields.Nested(AccountStandingSchema, required=True)


class UnmatchedNameSchema(CamelSchema):
    """A team name a source gave that maps to no stored team yet (`flask data teams map`)."""

    source = fields.String(required=True)
    country = fields.String(required=True)
    name = fields.String(required=True)


class TeamQuerySchema(PageArgsSchema):
    """Filters of the team listing."""

    country = fields.String(
        validate=validate.Length(min=1, max=64),
        metadata={"description": "Only the teams (and unmapped names) of this country."},
    )


class TeamAliasSchema(CamelSchema):
    """How one source names a team."""

    source = enum_of(DATA_SOURCES, required=True)
    name = fields.String(required=True)


class ListedTeamSchema(CamelSchema):
    """A stored team, with the id `flask data teams map --team ID` takes, and its names per
    source."""

    id = Integer(required=True)
    name = fields.String(required=True)
    country = fields.String(required=True)
    aliases = fields.List(fields.Nested(TeamAliasSchema), required=True)


class UnmappedNameSchema(UnmatchedNameSchema):
    """A name a source gave that maps to no team: its records are held back until it is mapped
    (`flask data teams map SOURCE COUNTRY NAME --team ID | --new`)."""

    first_seen_at = UTCDateTime(required=True)


class TeamPageSchema(PageSchema):
    """One page of teams (by country, then name), and every unmapped name of the same filter."""

    items = fields.List(fields.Nested(ListedTeamSchema), required=True)
    unmapped = fields.List(fields.Nested(UnmappedNameSchema), required=True)


class RejectedRowSchema(CamelSchema):
    """A row or event a sync did not store, and why."""

    url = fields.String(
        required=True, metadata={"description": "Where it came from (without an API key)."}
    )
    line = Integer(required=True, allow_none=True)
    reason = fields.String(required=True)


class SourceSyncSchema(CamelSchema):
    """What a sync did with one source."""

    source = enum_of(DATA_SOURCES, required=True)
    calls = Integer(required=True, metadata={"description": "Requests made."})
    unchanged = Integer(
        required=True, metadata={"description": "Answers with nothing new (304, or the same body)."}
    )
    matches_new = Integer(required=True)
    matches_updated = Integer(required=True)
    odds_stored = Integer(required=True)
    prices_changed = Integer(
        required=True, metadata={"description": "Upcoming matches whose prices moved."}
    )
    rejected = Integer(required=True)
    rejected_rows = fields.List(
        fields.Nested(RejectedRowSchema),
        required=True,
        metadata={"description": "The first 20 of them."},
    )
    contradictions = Integer(
        required=True,
        metadata={
            "description": "Contradictions of a stored result this sync opened or changed (the "
            "stored result kept; a repeat counts none): `GET /api/v1/ops/contradictions`."
        },
    )
    held_back = Integer(
        required=True, metadata={"description": "Records naming a team not mapped yet."}
    )
    unmatched = fields.List(fields.Nested(UnmatchedNameSchema), required=True)
    credits_spent = Integer(required=True)
    credits_remaining = Integer(required=True, allow_none=True)
    skipped = fields.List(fields.String(), required=True)
    errors = fields.List(fields.String(), required=True)


class DataSyncResultSchema(CamelSchema):
    """The result of a data sync."""

    synced_at = UTCDateTime(required=True)
    sources = fields.List(fields.Nested(SourceSyncSchema), required=True)
    closing_lines = Integer(
        required=True,
        metadata={"description": "Kicked-off matches given the service's own closing line."},
    )
    predicted = Integer(required=True)
    published = Integer(
        required=True, metadata={"description": "Live picks published into the ledger."}
    )
    settled = Integer(required=True)
    checkpoint_size = Integer(required=True, allow_none=True)


class SeasonFileSchema(CamelSchema):
    """A season file of one league (`{FOOTBALL_DATA_URL}/mmz4281/<yyzz>/<Div>.csv`)."""

    season = fields.String(required=True, metadata={"description": "The folder, as `2324`."})
    league = fields.String(required=True, metadata={"description": "The division, as `E0`."})
    url = fields.String(required=True)


class DataBootstrapResultSchema(CamelSchema):
    """The result of the first day's bootstrap: the seasons fetched by the sync, and the
    backfill (null when nothing new was stored and the history was backfilled already)."""

    seasons = fields.List(fields.String(), required=True)
    leagues = fields.List(fields.String(), required=True)
    files = Integer(required=True, metadata={"description": "Season files asked for."})
    missing = fields.List(
        fields.Nested(SeasonFileSchema),
        required=True,
        metadata={"description": "Season files the source does not serve (404): the rest went on."},
    )
    sync = fields.Nested(DataSyncResultSchema, required=True)
    backfill = fields.Nested(BackfillResultSchema, required=True, allow_none=True)
    backfill_skipped = fields.String(required=True, allow_none=True)
    seconds = fields.Float(required=True)


class ContradictionSchema(CamelSchema):
    """A source disagreeing with what is stored of a match: both values, held open (the match's
    picks unsettled) until an operator resolves it."""

    id = Integer(required=True)
    match_id = Integer(required=True)
    match = fields.String(required=True, metadata={"description": "Home v Away."})
    slug = fields.String(required=True)
    field = enum_of(CONTRADICTION_FIELDS, required=True)
    stored_value = fields.String(
        required=True, metadata={"description": "What is stored (a score: `5-0`)."}
    )
    source_value = fields.String(required=True, metadata={"description": "What `source` says."})
    source = enum_of(DATA_SOURCES, required=True)
    status = enum_of(CONTRADICTION_STATUSES, required=True)
    opened_at = UTCDateTime(required=True)
    updated_at = UTCDateTime(
        required=True, metadata={"description": "When the source last gave a new value."}
    )
    picks_held = Integer(
        required=True, metadata={"description": "The match's pending picks it holds (open)."}
    )
    resolved_at = UTCDateTime(required=True, allow_none=True)
    resolved_by = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "`user:ID` (the Operations API) or `cli:NAME` (the CLI)."},
    )
    chosen_value = fields.String(required=True, allow_none=True)


ContradictionPageSchema = page_of(ContradictionSchema, "Contradiction")


class ContradictionResolutionSchema(ContradictionSchema):
    """A contradiction as its resolution left it, and the operation that recorded it."""

    operation_id = Integer(
        required=True, metadata={"description": "`GET /api/v1/ops/operations/{id}`."}
    )


class ContradictionResolveResultSchema(ContradictionSchema):
    """The result of a contradiction's resolution: the contradiction as it left it."""


#: Each kind's result shape.
RESULT_SCHEMAS = {
    "intelligence-refresh": RefreshResultSchema,
    "settlement-run": SettlementResultSchema,
    "calibration-run": CalibrationResultSchema,
    "model-backfill": BackfillResultSchema,
    "ledger-checkpoint": LedgerCheckpointResultSchema,
    "user-update": UserUpdateResultSchema,
    "data-sync": DataSyncResultSchema,
    "contradiction-resolve": ContradictionResolveResultSchema,
    "data-bootstrap": DataBootstrapResultSchema,
}


class OperationResultSchema(Schema):
    """The result of a succeeded operation, in the shape of its kind (see ``RESULT_SCHEMAS``)."""

    def dump(self, obj, *, many=None):
        """Dump ``(kind, result)`` with the kind's own schema."""
        kind, result = obj
        return RESULT_SCHEMAS[kind]().dump(result)


def result_component(kind: str) -> str:
    """The OpenAPI component name of ``kind``'s result."""
    return RESULT_SCHEMAS[kind].__name__.removesuffix("Schema")
