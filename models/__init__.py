"""The tables of the whole domain and their small lookups, a module per domain: ``base`` (what
every table shares), ``football``, ``accounts``, ``webhooks``, ``alerts``, ``ledger``,
``operations`` and ``versions`` (the data version); ``schema`` creates and drops them all. Every
table and helper is named from here (``from models import Match, User``)."""

from models.accounts import Export, UsageCounter, User, new_token_stamp
from models.alerts import AlertFanout, AlertMessage, AlertSubscription
from models.base import BaseModel, slugify
from models.football import (
    NO_LINE,
    UNLINED_MARKETS,
    Contradiction,
    KickoffReport,
    League,
    Match,
    MatchIntelligence,
    OddsQuote,
    OddsSummary,
    Pick,
    Prediction,
    PriceSeen,
    Team,
    TeamAlias,
    line_column,
    stored_line,
)
from models.ledger import (
    LEDGER_TABLES,
    LedgerCheckpoint,
    LedgerCosignature,
    LedgerEntry,
    LedgerNode,
    LedgerSeal,
    LedgerTimestamp,
    node_address,
)
from models.operations import Operation, SchedulerLease, SourceFetch, SourceState, WorkerBeat
from models.versions import (
    VERSIONED,
    DataVersion,
    bump_data_version,
    data_version,
    watch_data_version,
)
from models.webhooks import Delivery, Event, WebhookEndpoint

__all__ = [
    "LEDGER_TABLES",
    "NO_LINE",
    "UNLINED_MARKETS",
    "VERSIONED",
    "AlertFanout",
    "AlertMessage",
    "AlertSubscription",
    "BaseModel",
    "Contradiction",
    "DataVersion",
    "Delivery",
    "Event",
    "Export",
    "KickoffReport",
    "League",
    "LedgerCheckpoint",
    "LedgerCosignature",
    "LedgerEntry",
    "LedgerNode",
    "LedgerSeal",
    "LedgerTimestamp",
    "Match",
    "MatchIntelligence",
    "OddsQuote",
    "OddsSummary",
    "Operation",
    "Pick",
    "Prediction",
    "PriceSeen",
    "SchedulerLease",
    "SourceFetch",
    "SourceState",
    "Team",
    "TeamAlias",
    "UsageCounter",
    "User",
    "WebhookEndpoint",
    "WorkerBeat",
    "bump_data_version",
    "data_version",
    "line_column",
    "new_token_stamp",
    "node_address",
    "slugify",
    "stored_line",
    "watch_data_version",
]
