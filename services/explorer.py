"""The explorer: a day's slate of one market, and the past matches most like a given one."""

import numpy as np

from engine import comparable as comparable_engine
from engine import picks as picks_engine
from engine.markets import MARKETS, outcome_indices
from enums import COMPARABLE_DEFAULT
from models import Match, Prediction
from services import cards
from services.queries import match_filters, within


def slate(
    day, market="1x2", league_id=None, team_id=None, min_data_quality=None, viewer=None, now=None
):
    """The matches of ``day`` (a span; its UTC day counts) with ``market``'s prediction, best
    price and edge per selection, and the pick, as ``viewer`` may see them at ``now`` (a locked
    market shows no published probability, best price or edge); an unknown league or team
    gives no matches."""
    day = day.whole_day()
    query = match_filters(within(cards.matches(), Match.kickoff_at, day, day), league_id, team_id)
    items = []
    for card in cards.build(query.order_by(Match.kickoff_at, Match.id), viewer, now=now):
        prediction = _of_market(card.pop("predictions"), market)
        if min_data_quality is not None and (
            prediction is None or prediction["data_quality"] < min_data_quality
        ):
            continue
        odds = _of_market(card.pop("odds"), market)
        pick = _of_market(card.pop("picks"), market)
        selections = _selections(market, prediction, odds)
        items.append(
            {"match": card, "prediction": prediction, "selections": selections, "pick": pick}
        )
    return {"date": day.day, "market": market, "items": items}


def _of_market(items, market):
    """The item of ``market`` in a card's list, or None."""
    return next((item for item in items if item["market"] == market), None)


def _selections(market, prediction, odds) -> list[dict]:
    """Per selection: the published probability, the best price and its bookmaker, the edge."""
    names = MARKETS[market]
    prices = {row["selection"]: row for row in odds["selections"]} if odds else {}
    shares = prediction["probabilities"] if prediction else None  # None too when locked
    probability = [shares[name] if shares else None for name in names]
    best = [prices[name]["best_price"] if name in prices else None for name in names]
    edge = picks_engine.edges(
        np.array(probability, dtype=float), np.array(best, dtype=float)
    ).tolist()
    return [
        {
            "selection": name,
            "probability": probability[index],
            "best_price": best[index],
            "bookmaker": prices[name]["best_bookmaker"] if name in prices else None,
            "edge": edge[index] if np.isfinite(edge[index]) else None,
        }
        for index, name in enumerate(names)
    ]


def comparable(
    match_id, market="1x2", scope="league", limit=COMPARABLE_DEFAULT, viewer=None, now=None
):
    """Finished matches that kicked off before ``match_id`` whose published ``market``
    probabilities lie nearest to its own, within ``scope`` (``league``, ``teams`` of either
    side, or ``global``); with what happened to them, summed up per selection. A market whose
    pick is locked for ``viewer`` at ``now`` lists none: which matches are nearest, and how
    near, would give its probabilities back."""
    target = cards.one(match_id, viewer, include=("predictions",), now=now)
    prediction = _of_market(target.pop("predictions"), market)
    locked = market in target.pop("sealed")
    names = MARKETS[market]
    found = {
        "match": target,
        "market": market,
        "scope": scope,
        "locked": locked,
        "prediction": prediction,
    }
    rows = []
    if prediction is not None and not locked:
        query = (
            Prediction.select(
                Prediction.match, Prediction.probabilities, Match.home_goals, Match.away_goals
            )
            .join(Match)
            .where(
                (Prediction.market == market)
                & (Match.status == "finished")
                & (Match.kickoff_at < target["kickoff_at"])
                & (Match.id != match_id)
            )
        )
        if scope == "league":
            query = query.where(Match.league == target["league"]["id"])
        elif scope == "teams":
            teams = [target["home_team"]["id"], target["away_team"]["id"]]
            query = query.where(Match.home_team.in_(teams) | Match.away_team.in_(teams))
        rows = list(query.order_by(Match.kickoff_at.desc(), Match.id.desc()).tuples())
    candidates = np.array([[row[1][name] for name in names] for row in rows], dtype=float)
    goals = np.array([row[2:4] for row in rows], dtype=float).reshape(len(rows), 2)
    outcome = outcome_indices(goals[:, 0], goals[:, 1])[market]
    wanted = [prediction["probabilities"][name] for name in names] if rows else [0.0] * len(names)
    near = comparable_engine.nearest(wanted, candidates, outcome, limit)
    matches = {
        card["id"]: card for card in cards.load([rows[i][0] for i in near.index], include=())
    }
    found["items"] = [
        {
            "match": matches[rows[i][0]],
            "probabilities": rows[i][1],
            "outcome": names[outcome[i]],
            "distance": float(distance),
        }
        for i, distance in zip(near.index.tolist(), near.distance, strict=True)
    ]
    found["summary"] = {
        "count": len(found["items"]),
        "selections": [
            {
                "selection": name,
                "mean_predicted": _number(near.mean_predicted[index]),
                "observed_rate": _number(near.observed_rate[index]),
            }
            for index, name in enumerate(names)
        ],
    }
    return found


def _number(value) -> float | None:
    """A float, None for NaN (no neighbours)."""
    return float(value) if np.isfinite(value) else None
