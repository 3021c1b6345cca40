"""Data API exports: a resource's rows, filtered, streamed as CSV, JSON or NDJSON.

An export counts its rows in a snapshot, charges the export and its rows to the monthly quota in
one statement (a 429 before the first byte when they do not fit), records itself, then streams
exactly the counted rows from the same snapshot: a server-side cursor on PostgreSQL, batched
reads on SQLite. Nothing accumulates, so a worker's memory does not grow with the row count.
"""

import csv
import io
import json
from dataclasses import dataclass

from flask import current_app
from marshmallow import ValidationError
from peewee import Case, fn

from engine.markets import MARKETS
from enums import CARD_RELATIONS
from errors import ValidationFailed
from models import (
    Export,
    League,
    Match,
    OddsQuote,
    Pick,
    Prediction,
    Snapshot,
    Team,
)
from schemas.common import flat_rows
from schemas.exports import (
    ExportJSONSchema,
    LeagueRowSchema,
    MatchFilters,
    MatchRowSchema,
    NoFilters,
    OddsFilters,
    OddsRowSchema,
    PickFilters,
    PickRowSchema,
    PredictionFilters,
    PredictionRowSchema,
    RangeFilters,
    TeamFilters,
    TeamRowSchema,
    TrackRecordRowSchema,
)
from services import cards, quotas, track_record
from services.cards import AWAY, HOME
from services.queries import match_filters, within

#: Rows read from the database per round trip, and bytes gathered before each write.
BATCH = 5000
CHUNK = 64 * 1024

MEDIA_TYPES = {
    "csv": "text/csv; charset=utf-8",
    "json": "application/json",
    "ndjson": "application/x-ndjson",
}


@dataclass(frozen=True)
class Resource:
    """An exportable resource: its filters, its row, and where its list endpoint is."""

    name: str
    filters: type
    row: type
    path: str | None = None
    includes: tuple[str, ...] = ()


RESOURCES = {
    resource.name: resource
    for resource in (
        Resource(
            "matches",
            MatchFilters,
            MatchRowSchema,
            "/api/v1/data/matches",
            CARD_RELATIONS,
        ),
        Resource("picks", PickFilters, PickRowSchema),
        Resource("predictions", PredictionFilters, PredictionRowSchema),
        Resource("odds", OddsFilters, OddsRowSchema),
        Resource("teams", TeamFilters, TeamRowSchema),
        Resource("leagues", NoFilters, LeagueRowSchema),
        Resource("track-record", RangeFilters, TrackRecordRowSchema, "/api/v1/data/track-record"),
    )
}


def parse_filters(resource: str, text: str) -> dict:
    """``parametersJson`` loaded through the resource's filter schema; a 422 otherwise."""
    try:
        given = json.loads(text)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested too deeply
        raise _invalid(["Must be a JSON object in a string, such as {}."]) from exc
    if not isinstance(given, dict):
        raise _invalid(["Must be a JSON object in a string, such as {}."])
    schema = RESOURCES[resource].filters()
    try:
        return schema.load(given)
    except ValidationError as exc:
        allowed = ", ".join(field.data_key for field in schema.fields.values()) or "none"
        errors = {}
        for key, messages in exc.normalized_messages().items():
            if messages == ["Unknown field."]:
                messages = [f"Unknown filter for {resource}; allowed: {allowed}."]
            errors[f"parametersJson.{key}"] = messages
        raise ValidationFailed(
            f"Invalid filters for {resource}: {', '.join(sorted(errors))}.", errors=errors
        ) from exc


def _invalid(messages) -> ValidationFailed:
    return ValidationFailed("Invalid parametersJson.", errors={"parametersJson": messages})


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
    """An export whose rows are counted and charged, ready to stream."""

    def __init__(self, record: Export, rows, snapshot: Snapshot | None):
        self.record = record
        self.rows = rows
        self.snapshot = snapshot

    def body(self):
        """The export's bytes, chunk by chunk (the snapshot closes when they are written)."""
        try:
            yield from WRITERS[self.record.format](self.record, self.rows)
        finally:
            self.close()

    def close(self) -> None:
        """Let go of the snapshot, whether or not the body was read (safe to call again)."""
        if self.snapshot is not None:
            self.snapshot.close()

    def headers(self) -> dict[str, str]:
        """The export's response headers: its type, a file name, its id and row count."""
        record = self.record
        return {
            "Content-Type": MEDIA_TYPES[record.format],
            "Content-Disposition": (
                f'attachment; filename="{record.resource}-{record.id}.{record.format}"'
            ),
            "X-Export-Id": str(record.id),
            "X-Row-Count": str(record.row_count),
            "Cache-Control": "no-store",
        }


def prepare(user, resource: str, parameters: str, format_: str) -> Prepared:
    """Count, charge and record an export of ``resource`` filtered by ``parameters`` (a JSON
    object in a string); QuotaExceeded when it does not fit what is left this month."""
    filters = parse_filters(resource, parameters)
    snapshot, prepared = None, None
    try:
        if resource == "track-record":
            rows = _track_record_rows(filters)
            count = len(rows)
        else:
            query = QUERIES[resource](filters)
            # A connection of its own: the request's connection charges the quota meanwhile.
            config = current_app.config
            snapshot = Snapshot(
                config["DATABASE_URL"],
                connect_timeout=config["DATABASE_CONNECT_TIMEOUT"],
                statement_timeout=config["DATABASE_STATEMENT_TIMEOUT"],
            ).open()
            count = int(snapshot.scalar(_count_query(resource, query)))
            rows = snapshot.rows(query, BATCH)
            if resource == "predictions":
                rows = _prediction_rows(rows)
        quotas.consume(user, {"exports": 1, "export_rows": count})
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


def _chunks(record, rows, separator: str, booleans=(True, False)):
    """The rows serialised one by one (CSV lines or JSON objects), gathered into chunks of
    about ``CHUNK`` characters joined by ``separator``."""
    names, convert = flat_rows(RESOURCES[record.resource].row(), booleans)
    if record.format == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="")

        def serialise(values):
            buffer.seek(0)
            buffer.truncate()
            writer.writerow(values)
            return buffer.getvalue()

    else:
        encode = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode

        def serialise(values):
            return encode(dict(zip(names, values, strict=True)))

    parts, size = [], 0
    for row in rows:
        part = serialise(convert(row))
        parts.append(part)
        size += len(part)
        if size >= CHUNK:
            yield separator.join(parts)
            parts, size = [], 0
    if parts:
        yield separator.join(parts)


def _csv(record, rows):
    """A header row, then one line per row (booleans as true/false, nulls empty)."""
    names, _ = flat_rows(RESOURCES[record.resource].row())
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(names)
    yield buffer.getvalue().encode()
    for chunk in _chunks(record, rows, "\n", ("true", "false")):
        yield (chunk + "\n").encode()


def _ndjson(record, rows):
    """One JSON object per line."""
    for chunk in _chunks(record, rows, "\n"):
        yield (chunk + "\n").encode()


def _json(record, rows):
    """``{id, resource, format, rowCount, generatedAt, items}``, the items written as they
    come."""
    head = ExportJSONSchema().dump(
        {
            "id": record.id,
            "resource": record.resource,
            "format": record.format,
            "row_count": record.row_count,
            "generated_at": record.created_at,
            "items": [],
        }
    )
    opening = json.dumps(head, separators=(",", ":"))
    yield opening[: -len("[]}")].encode() + b"["
    first = True
    for chunk in _chunks(record, rows, ","):
        yield (chunk if first else "," + chunk).encode()
        first = False
    yield b"]}"


WRITERS = {"csv": _csv, "ndjson": _ndjson, "json": _json}
