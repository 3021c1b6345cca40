"""Every enumeration (and bound) of the service, in one place: models, schemas, filters, services,
the CLI, OpenAPI and the engine all read their allowed values from here.

A leaf: it imports nothing, so anything may import it (``import models`` loads no SciPy).
"""

#: Markets and their selections, in the order the engine's arrays hold them.
MARKET_SELECTIONS: dict[str, tuple[str, ...]] = {
    "1x2": ("home", "draw", "away"),
    "ou25": ("over", "under"),
    "btts": ("yes", "no"),
    "ah": ("home", "away"),
    "ou": ("over", "under"),
}
#: Markets quoted at a line: Asian handicap ("ah", the home side's handicap in goals: whole,
#: half or quarter) and over/under ("ou") at any line but 2.5 goals, which stays "ou25".
LINE_MARKETS = ("ah", "ou")
#: The line of "ou25", the over/under market that existed before lines.
OU25_LINE = 2.5

USER_ROLES = ("user", "operator", "admin")
USER_PLANS = ("free", "pro")
USER_STATUSES = ("active", "suspended")
MATCH_STATUSES = ("scheduled", "live", "finished", "postponed", "cancelled")
#: The statuses of a match that has kicked off, whatever a clock says.
KICKED_OFF_STATUSES = ("live", "finished")
#: The statuses of a match that will not be played when it said: its picks will be void.
CALLED_OFF_STATUSES = ("postponed", "cancelled")
COMPETITION_TYPES = ("top-flight", "lower-league", "cup", "international")
MARKETS = tuple(MARKET_SELECTIONS)
#: Every selection name once (the markets with lines reuse home/away and over/under).
SELECTIONS = tuple(dict.fromkeys(name for names in MARKET_SELECTIONS.values() for name in names))
#: Pick ratings from the strongest to the weakest.
PICK_RATINGS = ("A", "B", "C")
PICK_STATUSES = ("pending", "won", "lost", "void", "half-won", "half-lost")
#: What a settled pick can be (a quarter-line bet can be half won or half lost).
SETTLED_STATUSES = tuple(status for status in PICK_STATUSES if status != "pending")
#: What a pick whose result is known can be: won or lost money, in full or by half (a void one
#: tells nothing of its rating's record).
DECIDED_STATUSES = ("won", "lost", "half-won", "half-lost")
#: The kinds the Operations API starts, the one only the CLI records, the worker's checkpoints,
#: and an admin's change to an account (``PATCH /api/admin/users/{id}``).
OPERATION_KINDS = (
    "intelligence-refresh",
    "settlement-run",
    "calibration-run",
    "model-backfill",
    "ledger-checkpoint",
    "user-update",
    "data-sync",
    "contradiction-resolve",
    "data-bootstrap",
)
OPERATION_STATUSES = ("queued", "running", "succeeded", "failed")
COMPARABLE_SCOPES = ("league", "teams", "global")
EXPORT_FORMATS = ("csv", "json", "ndjson")
EXPORT_RESOURCES = ("matches", "picks", "predictions", "odds", "teams", "leagues", "track-record")
#: What a match card can carry besides the match (the Data API's ``include``).
CARD_RELATIONS = ("odds", "predictions", "picks", "intelligence")
#: The events a webhook endpoint may subscribe to; ``ping`` is sent only by an endpoint's test.
WEBHOOK_EVENTS = (
    "pick.published",
    "pick.settled",
    "match.result",
    "prediction.updated",
    "operation.completed",
)
EVENT_TYPES = (*WEBHOOK_EVENTS, "ping")
#: Who may receive an event: any endpoint owner (pro or admin), only those who may see locked
#: picks, or only operators and admins.
EVENT_AUDIENCES = ("subscribers", "premium", "operators")
DELIVERY_STATUSES = ("pending", "succeeded", "failed")
#: How a pick alert reaches its subscriber, when it is sent (at the pick's publication, or at
#: its match's kick-off for a pick locked until then) and where its message stands.
ALERT_CHANNELS = ("email", "telegram")
ALERT_MOMENTS = ("publication", "kickoff")
ALERT_STATUSES = ("pending", "sent", "failed")
#: How many alert subscriptions one account may have (each may send a message per pick).
ALERT_SUBSCRIPTIONS_MAX = 20
#: The ledger's entries: a live pick published before kick-off, then settled or voided.
LEDGER_KINDS = ("pick.published", "pick.settled", "pick.voided")
#: Why a pick stored as live is set apart when it settles (engine.ledger.entries.not_live_reasons).
NOT_LIVE_REASONS = ("made-after-kickoff", "not-in-ledger", "signed-after-kickoff")
#: Where a closing price came from: the source's own closing columns, or the service's own
#: closing line (the latest price it saw before kick-off, where the source gives none).
CLOSING_LINES = ("source", "seen")
#: The source's own closing columns; the service's own line, the latest price seen.
SOURCE_LINE, SEEN_LINE = CLOSING_LINES
HEALTH_STATES = ("ok", "degraded", "down")
#: One dependency's state: a live source whose last attempt failed is ``failing`` (the service
#: as a whole is then ``degraded``).
SERVICE_STATES = ("ok", "degraded", "failing", "down")
#: The live sources a sync fetches (``services.feeds.sources``).
DATA_SOURCES = ("football-data", "the-odds-api")
HEALTH_SERVICES = (
    "database",
    "rate-limit-storage",
    "settlement",
    "calibration",
    "worker",
    *DATA_SOURCES,
    "witnesses",
)
USAGE_STATES = ("ok", "warning", "exceeded")
#: What two sources may disagree on about a match (a contradiction): its score, its kick-off.
CONTRADICTION_FIELDS = ("score", "kickoff")
#: A contradiction holds its match until an operator resolves it.
CONTRADICTION_STATUSES = ("open", "resolved")
#: What an operator may choose: the stored value or the disagreeing source's (or a score).
CONTRADICTION_CHOICES = ("stored", "source")

#: The goal models: which one made a goal-model forecast (market-implied ratings, else
#: Dixon-Coles on goals).
GOAL_SOURCES = ("market-ratings", "dixon-coles")
#: What made a published prediction: the sharp pre-match line alone, a pool of it with the goal
#: model, or the goal model alone.
PREDICTION_SOURCES = ("market", "pool", *GOAL_SOURCES)

#: Ways of removing the bookmaker's margin from a line of prices (``engine.betting.odds``); the
#: service uses the one ``MARGIN_METHOD`` names everywhere a margin is removed.
MARGIN_METHODS = ("proportional", "additive", "power", "shin", "odds-ratio")

#: Bounds (inclusive) of the operations' day counts, for the API and the CLI alike.
SETTLEMENT_DAYS = (1, 3650)
CALIBRATION_DAYS = (7, 3650)
#: The longest team name stored (characters), and the longest each team's part of a match's
#: slug may be: two parts, "-vs-" and the date stay within the slug route's 255.
TEAM_NAME_MAX = 100
SLUG_PART_MAX = 100
#: Ids are 32-bit integers in the interface: a path or filter beyond this names nothing.
ID_RANGE = (1, 2**31 - 1)
#: How many comparable matches an answer may list, and how many by default.
COMPARABLE_LIMIT = (1, 100)
#: The match feed's largest page, of bare matches: each relation included costs about as much
#: per match as this many more bare matches (measured by ``bench.feed_cost``), and a page may
#: cost at most ``FEED_LIMIT`` of them, so one request computes in well under a second.
FEED_LIMIT = 1000
FEED_DEFAULT_LIMIT = 100
FEED_RELATION_COSTS = {"odds": 3, "predictions": 4, "picks": 1, "intelligence": 10}
COMPARABLE_DEFAULT = 20
#: The calendars' window: the matches kicking off from this many days before now (so a match
#: just played stays, with its result) to this many days after.
CALENDAR_DAYS = (2, 14)
#: How long a match's event lasts in a calendar: ninety minutes, half-time and stoppages.
CALENDAR_MATCH_HOURS = 2
#: How many leagues a user's calendar may take at once.
CALENDAR_LEAGUES_MAX = 20
#: How a league's code is written in a calendar's address (football-data's ``E0``, ``SP1``).
LEAGUE_CODE_PATTERN = r"[A-Za-z0-9_-]{1,16}"
#: A calendar token as written: the user id (no leading zero), a dot, the 43 characters of a
#: SHA-256 MAC in unpadded base64url (``services.accounts.calendar_tokens``).
CALENDAR_TOKEN_PATTERN = r"[1-9][0-9]{0,9}\.[A-Za-z0-9_-]{43}"
