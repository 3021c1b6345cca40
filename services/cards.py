"""Match cards: a match with its league, teams, odds summary, predictions, picks and intelligence,
for any number of matches in a fixed number of queries.

Every answer that shows matches is built here: one query for the matches (with league and teams
joined), then one ``IN`` query per relation asked for, whatever the number of matches. Picks go
through the premium rule on the way out.
"""

from collections import defaultdict

from enums import CARD_RELATIONS
from errors import NotFound
from models import League, Match, MatchIntelligence, OddsSummary, Pick, Prediction, Team
from schemas.matches import IntelligencePayloadSchema
from services import premium

#: The relations a card can carry, besides the match itself.
RELATIONS = CARD_RELATIONS
#: What most answers show: everything but the intelligence.
DEFAULT_RELATIONS = ("odds", "predictions", "picks")

HOME, AWAY = Team.alias("home"), Team.alias("away")

MATCH_COLUMNS = (
    Match.id,
    Match.slug,
    Match.kickoff_at,
    Match.status,
    Match.season,
    Match.home_goals,
    Match.away_goals,
    League.id,
    League.name,
    League.country,
    League.competition_type,
    HOME.id,
    HOME.name,
    AWAY.id,
    AWAY.name,
)

PICK_COLUMNS = (
    Pick.match,
    Pick.id,
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
    Pick.closing_probability,
    Pick.clv,
    Pick.created_at,
    Pick.settled_at,
)

PREDICTION_COLUMNS = (
    Prediction.match,
    Prediction.market,
    Prediction.probabilities,
    Prediction.market_probabilities,
    Prediction.source,
    Prediction.model_name,
    Prediction.model_version,
    Prediction.made_at,
    Prediction.fitted_at,
    Prediction.data_quality,
    Prediction.data_quality_parts,
    Prediction.is_live,
)

SUMMARY_COLUMNS = (
    OddsSummary.match,
    OddsSummary.market,
    OddsSummary.selection,
    OddsSummary.best_price,
    OddsSummary.best_bookmaker,
    OddsSummary.sharp_price,
    OddsSummary.sharp_bookmaker,
    OddsSummary.closing_price,
    OddsSummary.closing_bookmaker,
    OddsSummary.bookmakers,
)


def matches(*columns):
    """The match query every card starts from (league and both teams joined); callers add their
    filters, order and limit, then pass it to :func:`build`. Other ``columns`` of the same
    joined tables make another shape of match row (an export's)."""
    return (
        Match.select(*(columns or MATCH_COLUMNS))
        .join(League, on=(Match.league == League.id))
        .join_from(Match, HOME, on=(Match.home_team == HOME.id))
        .join_from(Match, AWAY, on=(Match.away_team == AWAY.id))
    )


def load(match_ids, viewer=None, include=DEFAULT_RELATIONS) -> list[dict]:
    """The cards of ``match_ids``, in that order (unknown ids are left out)."""
    ids = list(dict.fromkeys(match_ids))
    if not ids:
        return []
    position = {match_id: index for index, match_id in enumerate(ids)}
    cards = build(matches().where(Match.id.in_(ids)), viewer, include)
    return sorted(cards, key=lambda card: position[card["id"]])


def one(match_id: int, viewer=None, include=RELATIONS) -> dict:
    """The card of one match, with every relation by default; NotFound if there is none."""
    return _one(Match.id == match_id, f"Match {match_id} does not exist.", viewer, include)


def by_slug(slug: str, viewer=None, include=RELATIONS) -> dict:
    """The card of the match with this SEO slug; NotFound if there is none."""
    return _one(Match.slug == slug, f"No match has the slug {slug!r}.", viewer, include)


def _one(condition, missing: str, viewer, include) -> dict:
    found = build(matches().where(condition), viewer, include)
    if not found:
        raise NotFound(missing)
    return found[0]


def build(query, viewer=None, include=DEFAULT_RELATIONS) -> list[dict]:
    """Cards of the matches ``query`` (from :func:`matches`) selects, in its order, each with
    the relations in ``include``: one query for the matches and one per relation."""
    cards = [_match(row) for row in query.tuples()]
    if not cards:
        return cards
    by_id = {card["id"]: card for card in cards}
    ids = list(by_id)
    if "odds" in include:
        for card in cards:
            card["odds"] = []
        for match_id, market in _odds(ids):
            by_id[match_id]["odds"].append(market)
    if "predictions" in include:
        grouped = _grouped(_predictions(ids))
        for card in cards:
            card["predictions"] = grouped.get(card["id"], [])
    if "picks" in include:
        grouped = _grouped(picks_of(ids, viewer))
        for card in cards:
            card["picks"] = grouped.get(card["id"], [])
    if "intelligence" in include:
        found = intelligence_of(ids)
        for card in cards:
            card["intelligence"] = found.get(card["id"])
    return cards


def _match(row) -> dict:
    """A match dict from a row of :data:`MATCH_COLUMNS`."""
    (
        match_id,
        slug,
        kickoff_at,
        status,
        season,
        home_goals,
        away_goals,
        league_id,
        league_name,
        country,
        competition_type,
        home_id,
        home_name,
        away_id,
        away_name,
    ) = row
    score = None
    if home_goals is not None and away_goals is not None:
        score = {"home": home_goals, "away": away_goals}
    return {
        "id": match_id,
        "slug": slug,
        "kickoff_at": kickoff_at,
        "status": status,
        "season": season,
        "league": {
            "id": league_id,
            "name": league_name,
            "country": country,
            "competition_type": competition_type,
        },
        "home_team": {"id": home_id, "name": home_name},
        "away_team": {"id": away_id, "name": away_name},
        "score": score,
    }


def _grouped(pairs) -> dict:
    """``{match_id: [item, ...]}`` from ``(match_id, item)`` pairs, keeping their order."""
    grouped = defaultdict(list)
    for match_id, item in pairs:
        grouped[match_id].append(item)
    return grouped


def _odds(ids):
    """``(match_id, market summary)`` per match and market, markets and selections in order."""
    rows = (
        OddsSummary.select(*SUMMARY_COLUMNS)
        .where(OddsSummary.match.in_(ids))
        .order_by(OddsSummary.match, OddsSummary.id)
        .tuples()
    )
    current = None
    for match_id, market, selection, *prices, bookmakers in rows:
        if current is None or current[0] != match_id or current[1]["market"] != market:
            if current is not None:
                yield current
            current = (match_id, {"market": market, "bookmakers": bookmakers, "selections": []})
        best, best_book, sharp, sharp_book, closing, closing_book = prices
        current[1]["selections"].append(
            {
                "selection": selection,
                "best_price": best,
                "best_bookmaker": best_book,
                "sharp_price": sharp,
                "sharp_bookmaker": sharp_book,
                "closing_price": closing,
                "closing_bookmaker": closing_book,
            }
        )
    if current is not None:
        yield current


def _predictions(ids):
    """``(match_id, prediction)`` per match and market."""
    rows = (
        Prediction.select(*PREDICTION_COLUMNS)
        .where(Prediction.match.in_(ids))
        .order_by(Prediction.match, Prediction.id)
        .tuples()
    )
    for match_id, market, *values in rows:
        (
            probabilities,
            market_probabilities,
            source,
            model_name,
            model_version,
            made_at,
            fitted_at,
            data_quality,
            parts,
            is_live,
        ) = values
        yield (
            match_id,
            {
                "market": market,
                "probabilities": probabilities,
                "market_probabilities": market_probabilities,
                "source": source,
                "model_name": model_name,
                "model_version": model_version,
                "made_at": made_at,
                "fitted_at": fitted_at,
                "data_quality": data_quality,
                "data_quality_parts": parts,
                "is_live": bool(is_live),
            },
        )


def picks_of(ids, viewer=None):
    """``(match_id, pick)`` for every pick of ``ids``, as ``viewer`` may see it."""
    rows = (
        Pick.select(*PICK_COLUMNS).where(Pick.match.in_(ids)).order_by(Pick.match, Pick.id).tuples()
    )
    unlocked = premium.has_premium(viewer)
    names = [column.name for column in PICK_COLUMNS[1:]]
    for match_id, *values in rows:
        pick = dict(zip(names, values, strict=True))
        pick["is_live"] = bool(pick["is_live"])
        fair = pick.pop("closing_probability")
        pick["closing_ev"] = None if fair is None else pick["odds"] * fair - 1.0
        yield match_id, premium.present(pick, unlocked)


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
