"""The data version: its one-row table, the tables whose changes move it (:data:`VERSIONED`),
reading it, and switching on the database's watch of those tables (the mechanism is
:mod:`store.versioning`); the tag naming it for every process and the home the web processes
keep its copy in (:mod:`web.versions`)."""

import secrets

from peewee import BigIntegerField, CharField, TextField

from models.base import BaseModel
from models.football import (
    League,
    Match,
    MatchIntelligence,
    OddsQuote,
    OddsSummary,
    Pick,
    Prediction,
    Team,
)
from models.ledger import LedgerCheckpoint
from models.operations import Operation
from store.database import db


class DataVersion(BaseModel):
    """One counter that moves whenever a transaction that changed the tables the cached answers
    are made from (:data:`VERSIONED`) commits, in that transaction: cached answers are keyed by
    it, so none outlives the data."""

    value = BigIntegerField(default=0)
    #: What names this database's data version for every process using it, however each spells
    #: the database's address: random, written once (step 016, or ``create_tables``).
    tag = CharField(max_length=32, null=True)
    #: Where the web processes keep the data version's copy, as they said when they started
    #: (:func:`web.versions.home`); None when they keep none, or none has started yet.
    home = TextField(null=True)


def new_tag() -> str:
    """A data version tag for a database that has none (a new one, or a copy of another's)."""
    return secrets.token_hex(16)


def _data_version_row() -> dict:
    """The data version's row by column name ({} without one), whichever columns its table has:
    a process may start before its release's ``flask db upgrade`` has added step 016's."""
    cursor = db.execute_sql('SELECT * FROM "data_version" WHERE "id" = 1')
    row = cursor.fetchone()
    return dict(zip((column[0] for column in cursor.description), row, strict=True)) if row else {}


def data_version_tag() -> str | None:
    """The database's data version tag; None while it has none (not migrated yet)."""
    return _data_version_row().get("tag")


def data_version_home() -> str | None:
    """Where the web processes keep the data version's copy, as the latest to start said; None
    when they keep none, none has said yet, or the database is not migrated yet."""
    return _data_version_row().get("home")


def record_data_version_home(home: str | None) -> bool:
    """Record ``home`` as where the web processes keep the data version's copy (None: nowhere);
    False when the database is not migrated yet and cannot hold it."""
    if "tag" not in _data_version_row():
        return False
    DataVersion.insert(id=1, value=0, tag=new_tag(), home=home).on_conflict(
        conflict_target=[DataVersion.id], update={DataVersion.home: home}
    ).execute()
    return True


def retag() -> str | None:
    """Give the database a new data version tag, so that a copy served beside its original (a
    restored backup, a staging copy) never shares its data version's copy on Redis with it; the
    new tag, or None when the database is not migrated yet. Processes read the tag once, as
    they start: retag before the copy's processes start."""
    if "tag" not in _data_version_row():
        return None
    tag = new_tag()
    DataVersion.insert(id=1, value=0, tag=tag).on_conflict(
        conflict_target=[DataVersion.id], update={DataVersion.tag: tag}
    ).execute()
    return tag


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
    """Have ``database`` (a ``store.versioning.VersionedDatabase``) move the data version as every
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
