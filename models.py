"""The tables of the whole domain and their small lookups."""

import functools
import hashlib
import re
import secrets
import unicodedata
from datetime import UTC, datetime

from peewee import (
    SQL,
    BigIntegerField,
    BooleanField,
    CharField,
    DateField,
    DoubleField,
    ForeignKeyField,
    IntegerField,
    Model,
    TextField,
)

from clock import utcnow
from enums import (
    CLOSING_LINES,
    COMPETITION_TYPES,
    CONTRADICTION_FIELDS,
    CONTRADICTION_STATUSES,
    DELIVERY_STATUSES,
    EVENT_AUDIENCES,
    EVENT_TYPES,
    EXPORT_FORMATS,
    EXPORT_RESOURCES,
    LEDGER_KINDS,
    LINE_MARKETS,
    MARGIN_METHODS,
    MARKETS,
    MATCH_STATUSES,
    NOT_LIVE_REASONS,
    OPERATION_KINDS,
    OPERATION_STATUSES,
    OU25_LINE,
    PICK_RATINGS,
    PICK_STATUSES,
    PREDICTION_SOURCES,
    SELECTIONS,
    SLUG_PART_MAX,
    TEAM_NAME_MAX,
    USER_PLANS,
    USER_ROLES,
    USER_STATUSES,
)
from errors import NotFound
from store.database import db
from store.fields import JSONField, SequenceField, UTCDateTimeField


def _choices(values):
    """Peewee's ``choices`` (documentation of a column's allowed values) from an enumeration."""
    return [(value, value) for value in values]


def slugify(text: str, limit: int = SLUG_PART_MAX) -> str:
    """``Nott'm Forest`` → ``nott-m-forest``: ASCII letters and digits joined by hyphens, at
    most ``limit`` characters (cut at a hyphen where there is one). A name with no ASCII letter
    or digit at all (``Динамо``) becomes ``team-`` and a digest of it, so distinct names keep
    distinct, routable slugs."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    if not slug:
        return "team-" + hashlib.sha256(text.encode()).hexdigest()[:12]
    if len(slug) > limit:
        cut = slug[: limit + 1].rfind("-")
        slug = slug[: cut if cut > 0 else limit].strip("-")
    return slug


@functools.cache
def _select_one(model, names: tuple[str, ...], param: str) -> str:
    """The SQL of ``model.one_where`` on the fields ``names``, written once."""
    columns = ", ".join(f'"{field.column_name}"' for field in model._meta.sorted_fields)
    where = " AND ".join(f'"{model._meta.fields[name].column_name}" = {param}' for name in names)
    return f'SELECT {columns} FROM "{model._meta.table_name}" WHERE {where} LIMIT 1'


class BaseModel(Model):
    """Every table: bound to the proxy, snake_case table names."""

    class Meta:
        database = db
        legacy_table_names = False

    @classmethod
    def one_where(cls, **equal):
        """The row whose fields equal ``equal``, or None, in one plain statement.

        For the lookups every request makes (its caller, its quota counter): Peewee would spend
        longer building their SQL than the database spends answering it.
        """
        fields = cls._meta.sorted_fields
        named = [cls._meta.fields[name] for name in equal]
        params = [field.db_value(value) for field, value in zip(named, equal.values(), strict=True)]
        row = db.execute_sql(_select_one(cls, tuple(equal), db.param), params).fetchone()
        if row is None:
            return None
        # As Peewee makes a row it has read: no defaults computed, nothing left to save.
        record = cls(
            __no_default__=True,
            **{
                field.name: field.python_value(value)
                for field, value in zip(fields, row, strict=True)
            },
        )
        record._dirty.clear()
        return record

    @classmethod
    def get_or_raise(cls, record_id, what=None):
        """The record with ``record_id``, or NotFound naming what was looked for."""
        record = cls.get_or_none(cls._meta.primary_key == record_id)
        if record is None:
            raise NotFound(f"{what or cls.__name__} {record_id} does not exist.")
        return record


def new_token_stamp() -> str:
    """A fresh token stamp: random, so no two accounts or passwords ever share one."""
    return secrets.token_hex(16)


class User(BaseModel):
    """An account: role (user/operator/admin), plan (free/pro), status (active/suspended)."""

    email = CharField(max_length=254, unique=True)
    password_hash = CharField(max_length=255)
    #: Carried by every access token, which is good only while it matches: renewed with the
    #: password, so a new password ends the old tokens. Null on rows made before it existed.
    token_stamp = CharField(max_length=32, null=True, default=new_token_stamp)
    role = CharField(max_length=16, default="user", index=True, choices=_choices(USER_ROLES))
    plan = CharField(max_length=16, default="free", index=True, choices=_choices(USER_PLANS))
    status = CharField(max_length=16, default="active", index=True, choices=_choices(USER_STATUSES))
    created_at = UTCDateTimeField(default=utcnow)
    updated_at = UTCDateTimeField(default=utcnow)

    @classmethod
    def by_email(cls, email):
        """The user with this (already normalised) email, or None."""
        return cls.get_or_none(cls.email == email)

    @classmethod
    def by_id(cls, user_id: int):
        """The user with this id, or None (read on every authenticated request: role, plan and
        status apply at once)."""
        return cls.one_where(id=user_id)


class League(BaseModel):
    """A competition, keyed by a stable code (football-data's division code for imports)."""

    code = CharField(max_length=16, unique=True)
    name = CharField(max_length=100)
    country = CharField(max_length=64)
    competition_type = CharField(max_length=16, index=True, choices=_choices(COMPETITION_TYPES))


class Team(BaseModel):
    """A club or national team; the same name may exist in two countries."""

    name = CharField(max_length=TEAM_NAME_MAX)
    country = CharField(max_length=64)

    class Meta:
        indexes = ((("name", "country"), True),)


class Match(BaseModel):
    """A fixture and, once played, its result."""

    # Foreign keys lead composite indexes below, so they need no index of their own.
    league = ForeignKeyField(League, backref="matches", on_delete="CASCADE", index=False)
    season = CharField(max_length=16)
    home_team = ForeignKeyField(Team, backref="home_matches", on_delete="CASCADE", index=False)
    away_team = ForeignKeyField(Team, backref="away_matches", on_delete="CASCADE", index=False)
    kickoff_at = UTCDateTimeField(index=True)
    status = CharField(max_length=16, default="scheduled", choices=_choices(MATCH_STATUSES))
    home_goals = IntegerField(null=True)
    away_goals = IntegerField(null=True)
    ht_home_goals = IntegerField(null=True)
    ht_away_goals = IntegerField(null=True)
    slug = CharField(max_length=255, unique=True)
    updated_at = UTCDateTimeField(default=utcnow)
    #: When its picks became public for good: the kick-off it had when a later change moved it
    #: (a postponement after kick-off); null while ``kickoff_at`` says it all. See
    #: ``services.reads.premium``.
    public_since = UTCDateTimeField(null=True)
    #: While the live sources disagree on its kick-off, the latest they report: its picks open
    #: to everyone only then (``kickoff_at``, the earliest, governs the pick cut-off and the
    #: live rule). Null while they agree: ``kickoff_at`` says it all. See
    #: ``services.feeds.kickoffs``.
    unlock_at = UTCDateTimeField(null=True)

    class Meta:
        indexes = (
            (("league", "season", "home_team", "away_team"), False),
            (("league", "kickoff_at"), False),
            (("home_team", "kickoff_at"), False),
            (("away_team", "kickoff_at"), False),
            (("status", "kickoff_at"), False),
        )

    @staticmethod
    def slug_for(home_team: str, away_team: str, kickoff_at: datetime) -> str:
        """The SEO slug: ``home-team-vs-away-team-YYYY-MM-DD`` (the UTC kick-off date)."""
        day = kickoff_at.astimezone(UTC).date().isoformat()
        return f"{slugify(home_team)}-vs-{slugify(away_team)}-{day}"


#: The line stored for a market quoted without one (1x2, btts). The keyed tables store a line
#: for every row, never NULL: their unique indexes include it, and NULLs never conflict there
#: (nor in the upserts' conflict targets). The answers write null for these markets.
NO_LINE = 0.0
#: The markets without a line (stored with :data:`NO_LINE`, answered with null).
UNLINED_MARKETS = tuple(
    market for market in MARKETS if market not in LINE_MARKETS and market != "ou25"
)


def stored_line(market: str, line: float | None) -> float:
    """The ``line`` column's value for a price or forecast of ``market``: the line of a line
    market ("ah": the home side's handicap; "ou"), 2.5 for "ou25" and :data:`NO_LINE` for the
    markets without one (1x2, btts), whatever ``line`` says for those."""
    if market in LINE_MARKETS:
        if line is None:
            raise ValueError(f"a {market!r} price needs its line")
        return float(line)
    return OU25_LINE if market == "ou25" else NO_LINE


def line_column():
    """A ``line`` column (see :func:`stored_line`): never null; the database's own default 0 is
    what a row written before lines existed was given, and what a writer naming no line gets."""
    return DoubleField(default=NO_LINE, constraints=[SQL("DEFAULT 0")])


class OddsQuote(BaseModel):
    """One bookmaker's decimal price for one selection of a market at one line, pre-match or at
    the close: a match has a quote per line its bookmakers offer ("ah", "ou")."""

    match = ForeignKeyField(Match, backref="odds", on_delete="CASCADE", index=False)
    bookmaker = CharField(max_length=32)
    market = CharField(max_length=8, choices=_choices(MARKETS))
    line = line_column()  # see stored_line: 0 for 1x2 and btts, 2.5 for ou25
    selection = CharField(max_length=8, choices=_choices(SELECTIONS))
    price = DoubleField()
    is_closing = BooleanField(default=False)
    #: Where a closing quote came from: the source's closing columns (``source``; also null on
    #: quotes stored before this was recorded, which only a source's columns wrote) or the
    #: service's own closing line, the latest price seen before kick-off (``seen``). Null on
    #: pre-match quotes.
    closing_line = CharField(max_length=8, null=True, choices=_choices(CLOSING_LINES))

    class Meta:
        indexes = ((("match", "market", "line", "is_closing", "bookmaker", "selection"), True),)


class OddsSummary(BaseModel):
    """The prices a match card shows for one selection at one line, kept beside the quotes they
    come from: the best pre-match price and who offers it, the sharp pre-match price and the
    closing price.

    Derived from ``OddsQuote`` whenever a match's quotes are stored, so a card reads a few rows
    per match instead of every bookmaker's quotes.
    """

    match = ForeignKeyField(Match, backref="odds_summary", on_delete="CASCADE", index=False)
    market = CharField(max_length=8, choices=_choices(MARKETS))
    line = line_column()  # see stored_line
    selection = CharField(max_length=8, choices=_choices(SELECTIONS))
    best_price = DoubleField(null=True)
    best_bookmaker = CharField(max_length=32, null=True)
    sharp_price = DoubleField(null=True)
    sharp_bookmaker = CharField(max_length=32, null=True)
    closing_price = DoubleField(null=True)
    closing_bookmaker = CharField(max_length=32, null=True)
    bookmakers = IntegerField(default=0)  # real bookmakers quoting the market before kick-off

    class Meta:
        indexes = ((("match", "market", "line", "selection"), True),)


class Prediction(BaseModel):
    """The published probabilities of one market of one match at one line, and what they were
    made from: a line market ("ah", "ou") may have a prediction per line quoted."""

    match = ForeignKeyField(Match, backref="predictions", on_delete="CASCADE", index=False)
    market = CharField(max_length=8, choices=_choices(MARKETS))
    line = line_column()  # see stored_line
    probabilities = JSONField()  # {selection: published probability}
    model_probabilities = JSONField()  # the goal model alone
    market_probabilities = JSONField(null=True)  # de-margined sharp pre-match odds
    pool_weight = DoubleField()  # weight of the goal model in the pool
    #: What made the published probabilities (null for predictions made before sources).
    source = CharField(max_length=16, null=True, choices=_choices(PREDICTION_SOURCES))
    model_name = CharField(max_length=64)
    model_version = CharField(max_length=32)
    #: How the margin was taken off every price behind it (null for predictions made before the
    #: method was recorded: proportional removal, model versions before 3.0.0).
    margin_method = CharField(max_length=16, null=True, choices=_choices(MARGIN_METHODS))
    made_at = UTCDateTimeField(default=utcnow)
    fitted_at = UTCDateTimeField()  # results up to this instant fed the model
    data_quality = DoubleField()
    data_quality_parts = JSONField()
    is_live = BooleanField(default=False)

    class Meta:
        indexes = ((("match", "market", "line"), True),)


class Pick(BaseModel):
    """A rated bet on the selection with the largest edge, and how it settled: one per match and
    market, at the line it was made at (``line`` follows the rule of the other tables,
    :func:`stored_line`, so a pick joins its prediction and quotes on equal values)."""

    match = ForeignKeyField(Match, backref="picks", on_delete="CASCADE", index=False)
    market = CharField(max_length=8, choices=_choices(MARKETS))
    line = line_column()  # see stored_line
    selection = CharField(max_length=8, choices=_choices(SELECTIONS))
    bookmaker = CharField(max_length=32)
    odds = DoubleField()
    probability = DoubleField()
    edge = DoubleField()
    rating = CharField(max_length=1, choices=_choices(PICK_RATINGS))
    data_quality = DoubleField()
    stake = DoubleField(default=1.0)
    is_live = BooleanField(default=False)
    #: Sixteen characters: "half-lost" (a quarter line) is longer than the eight of before.
    status = CharField(
        max_length=16, default="pending", index=True, choices=_choices(PICK_STATUSES)
    )
    profit = DoubleField(null=True)
    closing_odds = DoubleField(null=True)
    closing_bookmaker = CharField(max_length=32, null=True)
    #: The selection's de-margined closing probability: odds × it − 1 is the expected return at
    #: the fair closing price (CLV against the raw closing price keeps the bookmaker's margin).
    closing_probability = DoubleField(null=True)
    #: Which closing line settled it (``CLOSING_LINES``): the source's, or the service's own;
    #: null without a closing price, or for picks settled before this was recorded.
    closing_line = CharField(max_length=8, null=True, choices=_choices(CLOSING_LINES))
    clv = DoubleField(null=True)
    created_at = UTCDateTimeField(default=utcnow)
    settled_at = UTCDateTimeField(null=True)
    #: Why a pick stored as live was set apart when it settled
    #: (engine.ledger.entries.NOT_LIVE_REASONS): it then counts in neither the live nor the
    #: backfilled record.
    not_live_reason = CharField(max_length=32, null=True, choices=_choices(NOT_LIVE_REASONS))

    class Meta:
        indexes = ((("match", "market"), True),)


class MatchIntelligence(BaseModel):
    """What the model and the history say about a match: form, goals, rest, head-to-head."""

    match = ForeignKeyField(Match, backref="intelligence", unique=True, on_delete="CASCADE")
    payload = JSONField()
    updated_at = UTCDateTimeField(default=utcnow)


class Operation(BaseModel):
    """A long-running job (refresh, settlement, calibration): its parameters, state and result."""

    kind = CharField(max_length=32, choices=_choices(OPERATION_KINDS))
    status = CharField(max_length=16, default="queued", choices=_choices(OPERATION_STATUSES))
    params = JSONField()
    result = JSONField(null=True)
    error = TextField(null=True)
    created_by = ForeignKeyField(User, null=True, on_delete="SET NULL")
    created_at = UTCDateTimeField(default=utcnow)
    started_at = UTCDateTimeField(null=True)
    finished_at = UTCDateTimeField(null=True)
    #: The schedule's instant this run was due at (null unless the scheduler started it); one
    #: run per kind and instant, so two workers' schedulers never start the same run twice.
    scheduled_for = UTCDateTimeField(null=True)

    class Meta:
        indexes = (
            (("kind", "status", "finished_at"), False),
            (("kind", "scheduled_for"), True),
        )


class UsageCounter(BaseModel):
    """A user's Data API consumption in one calendar month (UTC)."""

    user = ForeignKeyField(User, backref="usage", on_delete="CASCADE")
    period = DateField()  # the first day of the month
    requests = IntegerField(default=0)
    exports = IntegerField(default=0)
    export_rows = IntegerField(default=0)

    class Meta:
        indexes = ((("user", "period"), True),)


class Export(BaseModel):
    """A Data API export: who asked for what, in which format, and how many rows it held."""

    user = ForeignKeyField(User, null=True, backref="exports", on_delete="SET NULL")
    resource = CharField(max_length=16, choices=_choices(EXPORT_RESOURCES))
    format = CharField(max_length=8, choices=_choices(EXPORT_FORMATS))
    parameters = JSONField()  # the filters, as the request gave them (wire names)
    row_count = IntegerField()
    created_at = UTCDateTimeField(default=utcnow)


class WebhookEndpoint(BaseModel):
    """Where a Pro user or admin wants events delivered, and the secret that signs them.

    During a rotation the previous secret signs too, until ``previous_secret_expires_at``. Both
    are stored sealed (encrypted under ``WEBHOOK_SECRETS_KEY``, a Fernet token of 164 characters
    for a ``whsec_`` secret), never as given.
    """

    id = SequenceField()
    user = ForeignKeyField(User, backref="webhook_endpoints", on_delete="CASCADE")
    url = CharField(max_length=2048)
    description = CharField(max_length=500, default="")
    events = JSONField()  # the event types it subscribes to
    secret = CharField(max_length=255)
    previous_secret = CharField(max_length=255, null=True)
    previous_secret_expires_at = UTCDateTimeField(null=True)
    enabled = BooleanField(default=True)
    disabled_reason = TextField(null=True)
    created_at = UTCDateTimeField(default=utcnow)
    updated_at = UTCDateTimeField(default=utcnow)


class Event(BaseModel):
    """The outbox: one row per thing that happened, written in the transaction that made it
    happen. The worker fans each out to the endpoints that subscribe (``dispatched_at``)."""

    id = SequenceField()
    type = CharField(max_length=32, choices=_choices(EVENT_TYPES))
    occurred_at = UTCDateTimeField(default=utcnow)
    #: The payload's ``data``, snake_case; null for events written in bulk, one row for many
    #: causes: their ``subjects`` (the ids of the picks a settlement settled), whose data is read
    #: when each is sent.
    data = JSONField(null=True)
    subjects = JSONField(null=True)
    audience = CharField(max_length=16, default="subscribers", choices=_choices(EVENT_AUDIENCES))
    #: An event for one endpoint only (an endpoint's test ping); null for everyone's events.
    endpoint = ForeignKeyField(WebhookEndpoint, null=True, on_delete="CASCADE", index=False)
    dispatched_at = UTCDateTimeField(null=True)

    class Meta:
        indexes = ((("dispatched_at", "id"), False),)


class Delivery(BaseModel):
    """One event for one endpoint: its attempts, the last answer, and when it is tried next.

    ``leased_until`` is set while a worker sends it: a worker that dies mid-delivery leaves a
    lease that runs out, and the delivery is sent again (at least once, never lost).
    """

    id = SequenceField()
    event = ForeignKeyField(Event, on_delete="CASCADE")
    subject = IntegerField(null=True)  # which of the event's subjects (bulk events)
    endpoint = ForeignKeyField(
        WebhookEndpoint, backref="deliveries", on_delete="CASCADE", index=False
    )
    status = CharField(max_length=16, default="pending", choices=_choices(DELIVERY_STATUSES))
    attempts = IntegerField(default=0)
    next_attempt_at = UTCDateTimeField(null=True)
    leased_until = UTCDateTimeField(null=True)
    last_attempt_at = UTCDateTimeField(null=True)
    last_status_code = IntegerField(null=True)
    last_error = TextField(null=True)
    created_at = UTCDateTimeField(default=utcnow)
    finished_at = UTCDateTimeField(null=True)

    class Meta:
        indexes = (
            (("status", "next_attempt_at"), False),
            (("endpoint", "id"), False),
        )


class LedgerEntry(BaseModel):
    """One entry of the append-only ledger of live picks: its canonical JSON (its leaf hash is
    SHA-256(0x00 ‖ body)), at ``position`` in the tree. Never updated or deleted (a trigger
    refuses it)."""

    position = BigIntegerField(primary_key=True)  # SQLite: the rowid itself, no extra index
    kind = CharField(max_length=16, choices=_choices(LEDGER_KINDS))
    #: No foreign key: the ledger outlives any change to the picks it records.
    pick_id = BigIntegerField()
    body = TextField()
    created_at = UTCDateTimeField()


class LedgerNode(BaseModel):
    """The hash (hex) of the ledger tree's perfect subtree of ``2^level`` leaves starting at leaf
    ``position × 2^level``, for the levels ``services.record.signed_log.STORED_LEVEL`` and up
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


#: The ledger's tables: rows are only ever added (``store.schema`` makes the database refuse
#: anything else).
LEDGER_TABLES = [LedgerEntry, LedgerNode, LedgerCheckpoint, LedgerSeal, LedgerTimestamp]


class DataVersion(BaseModel):
    """One counter that moves whenever a transaction that changed the tables the cached answers
    are made from (:data:`VERSIONED`) commits, in that transaction: cached answers are keyed by
    it, so none outlives the data."""

    value = BigIntegerField(default=0)


class WorkerBeat(BaseModel):
    """When a worker last ran the schedule (one row, id 1: the latest beat of any worker), so
    the health report can tell a worker that stopped from one with nothing to do."""

    beat_at = UTCDateTimeField()


class SchedulerLease(BaseModel):
    """Which worker process enqueues the periodic jobs (one row per lease ``name``): ``holder``
    until ``expires_at`` unless it renews; ``token`` grows by one at each change of holder (a
    fencing token), so what a deposed holder still tries to record is refused."""

    name = CharField(max_length=32, primary_key=True)
    holder = CharField(max_length=128)
    token = BigIntegerField()
    acquired_at = UTCDateTimeField()
    expires_at = UTCDateTimeField()


class SourceFetch(BaseModel):
    """What a source's URL last answered: its validators (``ETag``, ``Last-Modified``) for the
    next conditional request, and a digest of the body, so an unchanged answer stores nothing."""

    url = CharField(max_length=1024, unique=True)
    etag = CharField(max_length=255, null=True)
    last_modified = CharField(max_length=64, null=True)
    digest = CharField(max_length=64, null=True)  # SHA-256 of the last body stored
    fetched_at = UTCDateTimeField()


class SourceState(BaseModel):
    """One live source's standing: its last success and error, and the credits it spent this
    month (The Odds API charges per call; football-data.co.uk costs nothing)."""

    source = CharField(max_length=32, unique=True)
    last_success_at = UTCDateTimeField(null=True)
    last_error_at = UTCDateTimeField(null=True)
    last_error = TextField(null=True)
    period = DateField(null=True)  # the first day of the month the credits count in
    credits_spent = IntegerField(default=0)  # by this service, this month
    credits_remaining = IntegerField(null=True)  # as the source's last answer said
    credits_used = IntegerField(null=True)  # as the source's last answer said
    backoff_until = UTCDateTimeField(null=True)  # a 429's Retry-After: no call before it


class TeamAlias(BaseModel):
    """How one source names a stored team in one country (``team`` null: not matched yet, for
    an operator to map; records naming it are held back, never stored under a new team)."""

    source = CharField(max_length=32)
    country = CharField(max_length=64)
    name = CharField(max_length=TEAM_NAME_MAX)
    team = ForeignKeyField(Team, null=True, on_delete="CASCADE", index=False)
    first_seen_at = UTCDateTimeField(default=utcnow)

    class Meta:
        indexes = ((("source", "country", "name"), True),)


class KickoffReport(BaseModel):
    """The kick-off one live source last reported for a match, and since when it says so (one
    row per match and source; a source repeating itself writes nothing). See
    ``services.feeds.kickoffs``."""

    match = ForeignKeyField(Match, on_delete="CASCADE", index=False)
    source = CharField(max_length=32)
    kickoff_at = UTCDateTimeField()
    reported_at = UTCDateTimeField()

    class Meta:
        indexes = ((("match", "source"), True),)


class PriceSeen(BaseModel):
    """A pre-match price as one source showed it over time: one row per run of one price of one
    bookmaker's selection as that source quoted it, with when it was first and last seen (two
    sources quoting one bookmaker are two observations). See ``services.feeds.prices``."""

    match = ForeignKeyField(Match, on_delete="CASCADE", index=False)
    bookmaker = CharField(max_length=32)
    market = CharField(max_length=8, choices=_choices(MARKETS))
    line = line_column()  # see stored_line
    selection = CharField(max_length=8, choices=_choices(SELECTIONS))
    price = DoubleField()
    source = CharField(max_length=32)
    first_seen_at = UTCDateTimeField()
    last_seen_at = UTCDateTimeField()

    class Meta:
        indexes = (
            (
                ("match", "market", "line", "bookmaker", "selection", "source", "first_seen_at"),
                True,
            ),
        )


class Contradiction(BaseModel):
    """A source disagreeing with what is stored of a match (its score): the two values, held
    open (the match's picks unsettled) until an operator chooses one. One open row per match and
    field; a repeat of the same disagreement writes nothing. See
    ``services.feeds.contradictions``."""

    match = ForeignKeyField(Match, on_delete="CASCADE", index=False)
    field = CharField(max_length=16, choices=_choices(CONTRADICTION_FIELDS))
    stored_value = CharField(max_length=64)  # "5-0" for a score
    source_value = CharField(max_length=64)  # what ``source`` says instead
    source = CharField(max_length=32)
    status = CharField(max_length=16, default="open", choices=_choices(CONTRADICTION_STATUSES))
    opened_at = UTCDateTimeField()
    updated_at = UTCDateTimeField()  # when the source last gave a new value
    resolved_at = UTCDateTimeField(null=True)
    resolved_by = CharField(max_length=128, null=True)  # "user:ID", or "cli:NAME"
    chosen_value = CharField(max_length=64, null=True)


# One open disagreement per match and field (any number resolved).
Contradiction.add_index(
    Contradiction.index(Contradiction.match, Contradiction.field, unique=True).where(
        Contradiction.status == "open"
    )
)


def data_version() -> int:
    """The current data version (0 before anything was stored).

    Read on every cached request, so it is one prepared statement rather than a Peewee query.
    """
    row = db.execute_sql('SELECT "value" FROM "data_version" WHERE "id" = 1').fetchone()
    return row[0] if row else 0


#: The tables the cached answers are made from: the matches with their leagues, teams, odds,
#: predictions, picks and intelligence, and the latest ledger checkpoint and calibration run the
#: track record shows. A transaction writing rows of any of them moves the data version.
VERSIONED = (
    League,
    Team,
    Match,
    OddsQuote,
    OddsSummary,
    Prediction,
    Pick,
    MatchIntelligence,
    Operation,
    LedgerCheckpoint,
)


def watch_data_version(database, copy) -> None:
    """Have ``database`` (a ``store.database.VersionedDatabase``) move the data version as every
    transaction that wrote rows of the :data:`VERSIONED` tables commits, and tell ``copy`` of
    each change (None: nobody keeps one): ``copy.changing()`` before the next version is
    written, giving a token, and ``copy.changed(token)`` once its transaction has ended
    (committed or rolled back); neither may raise."""
    following = DataVersion.insert(id=1, value=1).on_conflict(
        conflict_target=[DataVersion.id], update={DataVersion.value: DataVersion.value + 1}
    )
    statement = database.get_sql_context().sql(following).query()
    database.versioning.watch((model._meta.table_name for model in VERSIONED), statement, copy)


def bump_data_version() -> None:
    """Say the data changed where the database cannot see it (rows of a table it does not
    follow): in a transaction, the next version is written at once and told as the transaction
    ends; outside one, at once. A write to the :data:`VERSIONED` tables needs no call."""
    db.data_changed()
