"""Data API exports: a resource's rows, filtered, ready to stream as CSV, JSON or NDJSON.

An export counts its rows in a snapshot, charges the export and its rows to the monthly quota in
one statement (a 429 before the first byte when they do not fit), records itself, then hands
over exactly the counted rows from the same snapshot: a server-side cursor on PostgreSQL,
batched reads on SQLite. Nothing accumulates, so a worker's memory does not grow with the row
count. ``web/streams.py`` writes them in their format.
"""

import json
from dataclasses import dataclass
from itertools import islice

import numpy as np
from peewee import Case, fn

from enums import CARD_RELATIONS, MARKET_SELECTIONS
from models import Export, League, Match, OddsQuote, Pick, Prediction, Team
from schemas.exports import FILTERS, ROWS
from services import routes
from services.accounts import quotas
from services.market import staking
from services.queries import at_line, match_filters, within
from services.reads import cards, track_record
from services.reads.cards import AWAY, HOME
from store.bulk import epoch_seconds
from store.database import Snapshot

#: Rows read from the database per round trip.
BATCH = 5000


@dataclass(frozen=True)
class Resource:
    """An exportable resource: where its list endpoint is and what it includes; its filters
    and its flat row are schemas (``schemas.exports.FILTERS`` and ``ROWS``)."""

    name: str
    path: str | None = None
    includes: tuple[str, ...] = ()

    @property
    def filters(self) -> type:
        return FILTERS[self.name]

    @property
    def row(self) -> type:
        return ROWS[self.name]


RESOURCES = {
    resource.name: resource
    for resource in (
        Resource("matches", routes.DATA_MATCHES, CARD_RELATIONS),
        Resource("picks"),
        Resource("predictions"),
        Resource("odds"),
        Resource("teams"),
        Resource("leagues"),
        Resource("track-record", routes.DATA_TRACK_RECORD),
    )
}


def row_names(resource: str) -> list[str]:
    """The fields of ``resource``'s flat row, in the order they are written (snake_case)."""
    return [field.attribute or name for name, field in ROWS[resource]().fields.items()]


def _columns(resource: str, model, **given) -> list:
    """The select list of ``resource``'s rows, in its row schema's field order: each field's
    column from ``given``, else the ``model`` field of the same name. So a field added to a
    model and to its row schema is exported with no other edit, and no query depends on the
    order a schema happens to list its fields in."""
    return [given[name] if name in given else getattr(model, name) for name in row_names(resource)]


def _matches(filters):
    query = cards.matches(
        *_columns(
            "matches",
            Match,
            league_id=League.id,
            league_name=League.name,
            competition_type=League.competition_type,
            home_team_id=HOME.id,
            home_team_name=HOME.name,
            away_team_id=AWAY.id,
            away_team_name=AWAY.name,
        )
    )
    query = _match_filters(query, filters)
    query = match_filters(query, team_id=filters.get("team_id"), statuses=filters.get("statuses"))
    return query.order_by(Match.kickoff_at, Match.id)


def _match_filters(query, filters):
    """The kick-off range and league, on a query that has ``Match`` joined."""
    query = within(query, Match.kickoff_at, filters.get("date_from"), filters.get("date_to"))
    return match_filters(query, filters.get("league_id"))


def _picks(filters):
    # The stake's place holds the probability it is sized from (see _staked_rows).
    columns = _columns(
        "picks",
        Pick,
        match_id=Pick.match,
        kickoff_at=Match.kickoff_at,
        league_id=Match.league,
        suggested_stake=staking.TRUSTED_PROBABILITY,
    )
    query = Pick.select(*columns).join(Match)
    query = _match_filters(query, filters)
    for column, name in ((Pick.market, "markets"), (Pick.rating, "ratings")):
        if filters.get(name):
            query = query.where(column.in_(filters[name]))
    query = at_line(query, Pick, filters.get("line"))
    if filters.get("statuses"):
        query = query.where(Pick.status.in_(filters["statuses"]))
    if filters.get("is_live") is not None:
        query = query.where(Pick.is_live == filters["is_live"])
    return query.order_by(Match.kickoff_at, Pick.id)


def _staked_rows(rows, known, settings):
    """The pick rows, each with its suggested stake in the place of the probability it is sized
    from, worked out :data:`BATCH` rows at a time, as the match cards work it out
    (:mod:`services.market.staking`; ``known``: the settled picks' evidence)."""
    names = row_names("picks")
    at = {
        name: names.index(name)
        for name in ("odds", "rating", "data_quality", "created_at", "kickoff_at")
    }
    stake_at = names.index("suggested_stake")
    rows = iter(rows)
    while batch := [list(row) for row in islice(rows, BATCH)]:
        columns = list(zip(*batch, strict=True))
        stakes = staking.suggest(
            np.array(columns[stake_at], dtype=float),
            np.array(columns[at["odds"]], dtype=float),
            np.array(columns[at["rating"]], dtype=str),
            np.array(columns[at["data_quality"]], dtype=float),
            np.minimum(
                epoch_seconds(columns[at["created_at"]]), epoch_seconds(columns[at["kickoff_at"]])
            ),
            settings,
            known,
        )
        for row, stake in zip(batch, stakes.tolist(), strict=True):
            row[stake_at] = stake
            yield row


#: The fields of a prediction's flat row that are one of its selection's (from its JSON maps).
PER_SELECTION = {
    "selection": None,
    "probability": "probabilities",
    "model_probability": "model_probabilities",
    "market_probability": "market_probabilities",
}


def _prediction_columns() -> list[str]:
    """The fields a prediction export selects besides its maps: the row's other fields."""
    return [name for name in row_names("predictions") if name not in PER_SELECTION]


def _predictions(filters):
    maps = [getattr(Prediction, name) for name in PER_SELECTION.values() if name]
    rest = [getattr(Prediction, name) for name in _prediction_columns() if name != "match_id"]
    query = Prediction.select(*maps, Prediction.match, *rest).join(Match)
    query = _match_filters(query, filters)
    if filters.get("markets"):
        query = query.where(Prediction.market.in_(filters["markets"]))
    query = at_line(query, Prediction, filters.get("line"))
    return query.order_by(Match.kickoff_at, Prediction.match, Prediction.id)


def _prediction_rows(rows):
    """One row per selection of each stored prediction (its maps are stored as JSON), its
    values in the row schema's order."""
    names = row_names("predictions")
    others = ["match_id", *(name for name in _prediction_columns() if name != "match_id")]
    for published, model, sharp, *values in rows:
        maps = {
            "probability": json.loads(published),
            "model_probability": json.loads(model),
            "market_probability": json.loads(sharp) if sharp else None,
        }
        row = dict(zip(others, values, strict=True))
        for selection in MARKET_SELECTIONS[row["market"]]:
            row["selection"] = selection
            for name, given in maps.items():
                row[name] = given[selection] if given else None
            yield tuple(row[name] for name in names)


def _odds(filters):
    query = OddsQuote.select(*_columns("odds", OddsQuote, match_id=OddsQuote.match))
    if any(filters.get(name) is not None for name in ("date_from", "date_to", "league_id")):
        query = _match_filters(query.join(Match), filters)
    if filters.get("markets"):
        query = query.where(OddsQuote.market.in_(filters["markets"]))
    query = at_line(query, OddsQuote, filters.get("line"))
    if filters.get("bookmaker") is not None:
        query = query.where(OddsQuote.bookmaker == filters["bookmaker"])
    if filters.get("is_closing") is not None:
        query = query.where(OddsQuote.is_closing == filters["is_closing"])
    return query.order_by(OddsQuote.id)


def _teams(filters):
    query = Team.select(*_columns("teams", Team))
    if filters.get("league_id") is not None:
        played = Match.select(Match.home_team).where(Match.league == filters["league_id"])
        visited = Match.select(Match.away_team).where(Match.league == filters["league_id"])
        query = query.where(Team.id.in_(played) | Team.id.in_(visited))
    return query.order_by(Team.id)


def _leagues(_filters):
    return League.select(*_columns("leagues", League)).order_by(League.id)


QUERIES = {
    "matches": _matches,
    "picks": _picks,
    "predictions": _predictions,
    "odds": _odds,
    "teams": _teams,
    "leagues": _leagues,
}


def _count_query(resource, query):
    """The number of export rows ``query`` gives (a prediction gives one per selection)."""
    if resource != "predictions":
        return query.order_by().select(fn.COUNT(1))
    per_prediction = Case(
        Prediction.market, [(market, len(names)) for market, names in MARKET_SELECTIONS.items()], 0
    )
    return query.order_by().select(fn.COALESCE(fn.SUM(per_prediction), 0))


def _track_record_rows(filters, now=None):
    """The track record as flat rows: live and backfilled, overall and by each grouping (the
    months up to ``now``'s)."""
    report = track_record.report(filters.get("date_from"), filters.get("date_to"), now=now)
    names = row_names("track-record")
    groupings = (
        ("month", "by_month", "month"),
        ("market", "by_market", "market"),
        ("rating", "by_rating", "rating"),
        ("competitionType", "by_competition_type", "competition_type"),
    )

    def row(part, group_by, group, figures):
        named = {**figures, "part": part, "group_by": group_by, "group": group}
        return tuple(named[name] for name in names)

    rows = []
    for part in ("live", "backfilled"):
        record = report[part]
        rows.append(row(part, "all", None, record))
        for group_by, key, label in groupings:
            rows.extend(row(part, group_by, item[label], item) for item in record[key])
    return rows


class Prepared:
    """An export whose rows are counted and charged, ready to stream: its record, its rows (plain
    tuples in its row schema's field order) and the snapshot they are read from."""

    def __init__(self, record: Export, rows, snapshot: Snapshot | None):
        self.record = record
        self.rows = rows
        self.snapshot = snapshot

    def close(self) -> None:
        """Let go of the rows, then of the snapshot they are read from, whether or not they were
        read (safe to call again)."""
        close_rows = getattr(self.rows, "close", None)
        if close_rows is not None:
            close_rows()
        if self.snapshot is not None:
            self.snapshot.close()


def prepare(user, resource: str, filters: dict, format_: str, settings, now=None) -> Prepared:
    """Count, charge and record an export of ``resource`` with ``filters`` (as its filter schema
    loads them); QuotaExceeded when it does not fit what is left this month."""
    snapshot, prepared = None, None
    try:
        if resource == "track-record":
            rows = _track_record_rows(filters, now)
            count = len(rows)
        else:
            query = QUERIES[resource](filters)
            # A connection of its own: the request's connection charges the quota meanwhile.
            snapshot = Snapshot(
                settings["DATABASE_URL"],
                connect_timeout=settings["DATABASE_CONNECT_TIMEOUT"],
                statement_timeout=settings["DATABASE_STATEMENT_TIMEOUT"],
            ).open()
            count = int(snapshot.scalar(_count_query(resource, query)))
            rows = snapshot.rows(query, BATCH)
            if resource == "predictions":
                rows = _prediction_rows(rows)
            elif resource == "picks":
                rows = _staked_rows(rows, staking.evidence(snapshot.fetch), settings)
        quotas.consume(user, {"exports": 1, "export_rows": count}, settings, now)
        record = Export.create(
            user=user,
            resource=resource,
            format=format_,
            parameters=RESOURCES[resource].filters().dump(filters),
            row_count=count,
        )
        prepared = Prepared(record, rows, snapshot)
    finally:
        if prepared is None and snapshot is not None:
            snapshot.close()
    return prepared
