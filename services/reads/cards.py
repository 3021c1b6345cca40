"""Match cards: a match with its league, teams, odds summary, predictions, picks and intelligence,
for any number of matches in a fixed number of queries.

Every answer that shows matches is built here: one query for the matches (with league and teams
joined), then one ``IN`` query per relation asked for, whatever the number of matches. Everything
goes through the premium rule on the way out: a match with a locked pick is locked market by
market as :mod:`services.market.premium` says (one more query, for callers without premium
access, when a match is still to kick off).
"""

from collections import defaultdict

from clock import utcnow
from enums import CARD_RELATIONS
from errors import NotFound
from models import League, Match, MatchIntelligence, OddsSummary, Pick, Prediction, Team
from schemas.matches import IntelligencePayloadSchema
from services.market import premium, staking

#: The relations a card can carry, besides the match itself.
RELATIONS = CARD_RELATIONS
#: What most answers show: everything but the intelligence.
DEFAULT_RELATIONS = ("odds", "predictions", "picks")

HOME, AWAY = Team.alias("home"), Team.alias("away")

#: Each card query's columns by name: rows are read as dicts of these names, so a card never
#: depends on the order of a select.
MATCH_COLUMNS = {
    "id": Match.id,
    "slug": Match.slug,
    "kickoff_at": Match.kickoff_at,
    "unlock": premium.unlock_column(),  # when a locked match opens (premium's rule only)
    "status": Match.status,
    "season": Match.season,
    "home_goals": Match.home_goals,
    "away_goals": Match.away_goals,
    "league_id": League.id,
    "league_name": League.name,
    "country": League.country,
    "competition_type": League.competition_type,
    "home_id": HOME.id,
    "home_name": HOME.name,
    "away_id": AWAY.id,
    "away_name": AWAY.name,
}

#: A pick as a card shows it: its fields of these names (and the match it belongs to).
PICK_FIELDS = (
    "id",
    "market",
    "line",
    "selection",
    "bookmaker",
    "odds",
    "probability",
    "edge",
    "rating",
    "data_quality",
    "stake",
    "is_live",
    "status",
    "profit",
    "closing_odds",
    "closing_bookmaker",
    "closing_line",
    "closing_probability",
    "clv",
    "created_at",
    "settled_at",
)

PREDICTION_FIELDS = (
    "market",
    "line",
    "probabilities",
    "model_probabilities",
    "market_probabilities",
    "source",
    "model_name",
    "model_version",
    "margin_method",
    "made_at",
    "fitted_at",
    "data_quality",
    "data_quality_parts",
    "is_live",
)

SUMMARY_FIELDS = (
    "market",
    "line",
    "selection",
    "best_price",
    "best_bookmaker",
    "sharp_price",
    "sharp_bookmaker",
    "closing_price",
    "closing_bookmaker",
    "bookmakers",
)


def named(columns: dict):
    """The select list of ``columns`` (name → column), each aliased to its name."""
    return [column.alias(name) for name, column in columns.items()]


def fields_of(model, names, **more) -> dict:
    """``{name: model.name}`` for ``names``, then ``more`` (name → column)."""
    return {**{name: getattr(model, name) for name in names}, **more}


def matches(*columns):
    """The match query every card starts from (league and both teams joined); callers add their
    filters, order and limit, then pass it to :func:`build`. Other ``columns`` of the same
    joined tables make another shape of match row (an export's)."""
    return (
        Match.select(*(columns or named(MATCH_COLUMNS)))
        .join(League, on=(Match.league == League.id))
        .join_from(Match, HOME, on=(Match.home_team == HOME.id))
        .join_from(Match, AWAY, on=(Match.away_team == AWAY.id))
    )


def load(match_ids, viewer=None, include=DEFAULT_RELATIONS, now=None, settings=None) -> list[dict]:
    """The cards of ``match_ids``, in that order (unknown ids are left out)."""
    ids = list(dict.fromkeys(match_ids))
    if not ids:
        return []
    position = {match_id: index for index, match_id in enumerate(ids)}
    cards = build(matches().where(Match.id.in_(ids)), viewer, include, now, settings)
    return sorted(cards, key=lambda card: position[card["id"]])


def one(match_id: int, viewer=None, include=RELATIONS, now=None, settings=None) -> dict:
    """The card of one match, with every relation by default; NotFound if there is none."""
    missing = f"Match {match_id} does not exist."
    return _one(Match.id == match_id, missing, viewer, include, now, settings)


def by_slug(slug: str, viewer=None, include=RELATIONS, now=None, settings=None) -> dict:
    """The card of the match with this SEO slug; NotFound if there is none."""
    missing = f"No match has the slug {slug!r}."
    return _one(Match.slug == slug, missing, viewer, include, now, settings)


def _one(condition, missing: str, viewer, include, now, settings) -> dict:
    found = build(matches().where(condition), viewer, include, now, settings)
    if not found:
        raise NotFound(missing)
    return found[0]


def build(query, viewer=None, include=DEFAULT_RELATIONS, now=None, settings=None) -> list[dict]:
    """Cards of the matches ``query`` (from :func:`matches`) selects, in its order, each with
    the relations in ``include`` as ``viewer`` may see them at ``now``: one query for the
    matches, one per relation, and one for the locked matches (see the module's docstring).
    Picks carry their suggested stake by the stake rule of ``settings`` (one more query, see
    :mod:`services.market.staking`); the picks relation needs them.

    A card's ``locked`` says whether the match is locked for this viewer: its locked picks'
    markets withheld, and what was made with them (see :mod:`services.market.premium`)."""
    rows = list(query.dicts())
    cards = [_match(row) for row in rows]
    if not cards:
        return cards
    by_id = {card["id"]: card for card in cards}
    ids = list(by_id)
    locked = {}
    if include:
        unlocks = {row["id"]: row["unlock"] for row in rows}
        locked = premium.locked_matches(unlocks, viewer, now or utcnow())
    for card in cards:
        card["locked"] = card["id"] in locked
        # Which markets the lock seals (their prices, probabilities and lines), for the reads
        # that answer one market; the card's schema writes none of it.
        card["sealed_markets"] = sorted(locked[card["id"]].markets) if card["locked"] else []
    if "odds" in include:
        for card in cards:
            card["odds"] = []
        for match_id, market in _odds(ids):
            if match_id in locked and locked[match_id].seals_market(market["market"]):
                premium.withhold_odds(market)
            by_id[match_id]["odds"].append(market)
        for match_id, lock in locked.items():
            by_id[match_id]["odds"] = premium.withhold_lines(by_id[match_id]["odds"], lock.markets)
    if "predictions" in include:
        grouped = _grouped(_predictions(ids))
        for card in cards:
            predictions = grouped.get(card["id"], [])
            lock = locked.get(card["id"])
            if lock is not None:
                predictions = premium.withhold_lines(
                    [premium.withhold_prediction(row, lock) for row in predictions], lock.markets
                )
            card["predictions"] = predictions
    if "picks" in include:
        kickoffs = {card["id"]: card["kickoff_at"] for card in cards}
        grouped = _grouped(picks_of(ids, locked, kickoffs, settings))
        for card in cards:
            card["picks"] = grouped.get(card["id"], [])
    if "intelligence" in include:
        found = intelligence_of(ids)
        for card in cards:
            intelligence = found.get(card["id"])
            if intelligence is not None and card["locked"]:
                premium.withhold_intelligence(intelligence)
            card["intelligence"] = intelligence
    return cards


def _match(row: dict) -> dict:
    """A match dict from a row of :data:`MATCH_COLUMNS`."""
    score = None
    if row["home_goals"] is not None and row["away_goals"] is not None:
        score = {"home": row["home_goals"], "away": row["away_goals"]}
    return {
        "id": row["id"],
        "slug": row["slug"],
        "kickoff_at": row["kickoff_at"],
        "status": row["status"],
        "season": row["season"],
        "league": {
            "id": row["league_id"],
            "name": row["league_name"],
            "country": row["country"],
            "competition_type": row["competition_type"],
        },
        "home_team": {"id": row["home_id"], "name": row["home_name"]},
        "away_team": {"id": row["away_id"], "name": row["away_name"]},
        "score": score,
    }


def _grouped(pairs) -> dict:
    """``{match_id: [item, ...]}`` from ``(match_id, item)`` pairs, keeping their order."""
    grouped = defaultdict(list)
    for match_id, item in pairs:
        grouped[match_id].append(item)
    return grouped


def _rows(model, names, ids, order):
    """Rows (dicts of ``names`` and ``match_id``) of ``model`` for the matches ``ids``."""
    columns = fields_of(model, names, match_id=model.match)
    return model.select(*named(columns)).where(model.match.in_(ids)).order_by(*order).dicts()


def _odds(ids):
    """``(match_id, market summary)`` per match, market and line, markets and selections in
    order (the lines of a market in theirs, as the summaries were written)."""
    rows = _rows(OddsSummary, SUMMARY_FIELDS, ids, (OddsSummary.match, OddsSummary.id))
    current = None
    for row in rows:
        match_id, market, line = row.pop("match_id"), row.pop("market"), row.pop("line")
        bookmakers = row.pop("bookmakers")
        if current is None or (match_id, market, line) != current[0]:
            if current is not None:
                yield current[0][0], current[1]
            summary = {"market": market, "line": line, "bookmakers": bookmakers, "selections": []}
            current = ((match_id, market, line), summary)
        current[1]["selections"].append(row)
    if current is not None:
        yield current[0][0], current[1]


def _predictions(ids):
    """``(match_id, prediction)`` per match, market and line."""
    for row in _rows(Prediction, PREDICTION_FIELDS, ids, (Prediction.match, Prediction.id)):
        row["is_live"] = bool(row["is_live"])
        yield row.pop("match_id"), row


def picks_of(ids, locked, kickoffs, settings):
    """``(match_id, pick)`` for every pick of ``ids``, with its suggested stake (``kickoffs``:
    each match's kick-off; ``settings``: the stake rule's), locked where its match is ``locked``
    (as :func:`services.market.premium.locked_matches` answers) and it was never public."""
    columns = fields_of(
        Pick, PICK_FIELDS, match_id=Pick.match, trusted_probability=staking.TRUSTED_PROBABILITY
    )
    query = Pick.select(*named(columns)).where(Pick.match.in_(ids)).order_by(Pick.match, Pick.id)
    for pick in staking.with_stakes(list(query.dicts()), kickoffs, settings):
        pick["is_live"] = bool(pick["is_live"])
        fair = pick.pop("closing_probability")
        pick["closing_ev"] = None if fair is None else pick["odds"] * fair - 1.0
        match_id = pick.pop("match_id")
        yield match_id, premium.present(pick, premium.pick_locked(pick, locked, match_id))


def intelligence_of(ids) -> dict:
    """``{match_id: intelligence}`` for the matches of ``ids`` that have it."""
    schema = IntelligencePayloadSchema()
    rows = (
        MatchIntelligence.select(
            MatchIntelligence.match, MatchIntelligence.payload, MatchIntelligence.updated_at
        )
        .where(MatchIntelligence.match.in_(ids))
        .tuples()
    )
    return {
        match_id: {**schema.load(payload), "updated_at": updated_at}
        for match_id, payload, updated_at in rows
    }
