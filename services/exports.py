"""Data API exports: a resource's rows, filtered, ready to stream as CSV, JSON or NDJSON.

An export counts its rows in a snapshot, charges the export and its rows to the monthly quota in
one statement (a 429 before the first byte when they do not fit), records itself, then hands
over exactly the counted rows from the same snapshot: a server-side cursor on PostgreSQL,
batched reads on SQLite. Nothing accumulates, so a worker's memory does not grow with the row
count. ``web/streams.py`` writes them in their format.
"""

import json
from dataclasses import dataclass

from peewee import Case, fn

from engine.markets import MARKETS
from enums import CARD_RELATIONS
from models import Export, League, Match, OddsQuote, Pick, Prediction, Team
from schemas.exports import FILTERS, ROWS, TrackRecordRowSchema
from services import cards, quotas, track_record
from services.cards import AWAY, HOME
from services.queries import match_filters, within
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
        Resource("matches", "/api/v1/data/matches", CARD_RELATIONS),
        Resource("picks"),
        Resource("predictions"),
        Resource("odds"),
        Resource("teams"),
        Resource("leagues"),
        Resource("track-record", "/api/v1/data/track-record"),
    )
}


def _matches(filters):
    query = cards.matches(
        Match.id,
        Match.slug,
        Match.kickoff_at,
        Match.status,
        Match.season,
        League.id,
        League.name,
        League.competition_type,
        HOME.id,
        HOME.name,
        AWAY.id,
        AWAY.name,
        Match.home_goals,
        Match.away_goals,
    )
    query = _match_filters(query, filters)
    query = match_filters(query, team_id=filters.get("team_id"), statuses=filters.get("statuses"))
    return query.order_by(Match.kickoff_at, Match.id)


def _match_filters(query, filters):
    """The kick-off range and league, on a query that has ``Match`` joined."""
    query = within(query, Match.kickoff_at, filters.get("date_from"), filters.get("date_to"))
    return match_filters(query, filters.get("league_id"))


def _picks(filters):
    query = Pick.select(
        Pick.id,
        Pick.match,
        Match.kickoff_at,
        Match.league,
        Pick.market,
        Pick.selection,
        Pick.bookmaker,
        Pick.odds,
        Pick.probability,
        Pick.edge,
        Pick.rating,
        Pick.data_quality,
        Pick.stake,
        Pick.is_live,
        Pick.status,
        Pick.profit,
        Pick.closing_odds,
        Pick.closing_bookmaker,
        Pick.closing_probability,
        Pick.clv,
        Pick.created_at,
        Pick.settled_at,
    ).join(Match)
    query = _match_filters(query, filters)
    for column, name in ((Pick.market, "markets"), (Pick.rating, "ratings")):
        if filters.get(name):
            query = query.where(column.in_(filters[name]))
    if filters.get("statuses"):
        query = query.where(Pick.status.in_(filters["statuses"]))
    if filters.get("is_live") is not None:
        query = query.where(Pick.is_live == filters["is_live"])
    return query.order_by(Match.kickoff_at, Pick.id)


def _predictions(filters):
    query = Prediction.select(
        Prediction.match,
        Prediction.market,
        Prediction.probabilities,
        Prediction.model_probabilities,
        Prediction.market_probabilities,
        Prediction.pool_weight,
        Prediction.source,
        Prediction.model_name,
        Prediction.model_version,
        Prediction.made_at,
        Prediction.fitted_at,
        Prediction.data_quality,
        Prediction.is_live,
    ).join(Match)
    query = _match_filters(query, filters)
    if filters.get("markets"):
        query = query.where(Prediction.market.in_(filters["markets"]))
    return query.order_by(Match.kickoff_at, Prediction.match, Prediction.id)


def _prediction_rows(rows):
    """One row per selection of each stored prediction (its maps are stored as JSON)."""
    for match, market, published, model, sharp, *rest in rows:
        published, model = json.loads(published), json.loads(model)
        sharp = json.loads(sharp) if sharp else None
        for selection in MARKETS[market]:
            yield (
                match,
                market,
                selection,
                published[selection],
                model[selection],
                sharp[selection] if sharp else None,
                *rest,
            )


def _odds(filters):
    query = OddsQuote.select(
        OddsQuote.match,
        OddsQuote.bookmaker,
        OddsQuote.market,
        OddsQuote.selection,
        OddsQuote.price,
        OddsQuote.is_closing,
    )
    if any(filters.get(name) is not None for name in ("date_from", "date_to", "league_id")):
        query = _match_filters(query.join(Match), filters)
    if filters.get("markets"):
        query = query.where(OddsQuote.market.in_(filters["markets"]))
    if filters.get("bookmaker") is not None:
        query = query.where(OddsQuote.bookmaker == filters["bookmaker"])
    if filters.get("is_closing") is not None:
        query = query.where(OddsQuote.is_closing == filters["is_closing"])
    return query.order_by(OddsQuote.id)


def _teams(filters):
    query = Team.select(Team.id, Team.name, Team.country)
    if filters.get("league_id") is not None:
        played = Match.select(Match.home_team).where(Match.league == filters["league_id"])
        visited = Match.select(Match.away_team).where(Match.league == filters["league_id"])
        query = query.where(Team.id.in_(played) | Team.id.in_(visited))
    return query.order_by(Team.id)


def _leagues(_filters):
    return League.select(
        League.id, League.code, League.name, League.country, League.competition_type
    ).order_by(League.id)


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
        Prediction.market, [(market, len(names)) for market, names in MARKETS.items()], 0
    )
    return query.order_by().select(fn.COALESCE(fn.SUM(per_prediction), 0))


def _track_record_rows(filters):
    """The track record as flat rows: live and backfilled, overall and by each grouping."""
    report = track_record.report(filters.get("date_from"), filters.get("date_to"))
    names = [field.attribute or name for name, field in TrackRecordRowSchema().fields.items()]
    figures = names[3:]
    groupings = (
        ("month", "by_month", "month"),
        ("market", "by_market", "market"),
        ("rating", "by_rating", "rating"),
        ("competitionType", "by_competition_type", "competition_type"),
    )
    rows = []
    for part in ("live", "backfilled"):
        record = report[part]
        rows.append((part, "all", None, *(record[name] for name in figures)))
        for group_by, key, label in groupings:
            for item in record[key]:
                rows.append((part, group_by, item[label], *(item[name] for name in figures)))
    return rows


class Prepared:
    """An export whose rows are counted and charged, ready to stream: its record, its rows (plain
    tuples in its row schema's field order) and the snapshot they are read from."""

    def __init__(self, record: Export, rows, snapshot: Snapshot | None):
        self.record = record
        self.rows = rows
        self.snapshot = snapshot

    def close(self) -> None:
        """Let go of the snapshot, whether or not the rows were read (safe to call again)."""
        if self.snapshot is not None:
            self.snapshot.close()


def prepare(user, resource: str, filters: dict, format_: str, settings, now=None) -> Prepared:
    """Count, charge and record an export of ``resource`` with ``filters`` (as its filter schema
    loads them); QuotaExceeded when it does not fit what is left this month."""
    snapshot, prepared = None, None
    try:
        if resource == "track-record":
            rows = _track_record_rows(filters)
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
