"""Predictions, picks and intelligence: the walk-forward model run over the stored matches.

``backfill`` predicts every match walk-forward (each from a fit on matches that kicked off
before it), rates the edge at the best pre-match price into picks, settles what can be settled
and stores the match intelligence. ``refresh`` redoes one open match.

What was published stays published: a stored prediction of a match that has kicked off is never
rewritten, and a pick, once made, is never changed except by settlement. Upcoming matches are
re-predicted with whatever new results and odds have arrived.
"""

import time
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np
from flask import current_app
from threadpoolctl import threadpool_limits

from engine import intelligence, picks, walkforward
from engine import odds as odds_engine
from engine.markets import MARKETS
from errors import MatchNotOpen
from models import (
    League,
    Match,
    MatchIntelligence,
    Pick,
    Prediction,
    bump_data_version,
    db,
    utcnow,
)
from schemas.common import dump_known
from schemas.matches import IntelligencePayloadSchema
from services import odds, settlement

BATCH = 1000


@dataclass
class Forecast:
    """Everything the model and the market say about a list of matches, row by row."""

    match_id: np.ndarray
    kickoff: np.ndarray  # epoch seconds
    status: np.ndarray
    home: np.ndarray
    away: np.ndarray
    home_goals: np.ndarray  # NaN without a result
    away_goals: np.ndarray
    output: walkforward.WalkForwardOutput
    market_probs: dict  # de-margined sharp pre-match probabilities per market
    best: dict  # market → (best price (n,k), bookmaker name (n,k))
    quality: dict  # market → (score (n,), parts {name: (n,)})
    choice: dict  # market → (selection (n,), edge (n,), rating (n,))


def _matches():
    query = (
        Match.select(
            Match.id,
            Match.kickoff_at,
            Match.status,
            Match.home_team,
            Match.away_team,
            Match.home_goals,
            Match.away_goals,
            League.country,
        )
        .join(League)
        .order_by(Match.kickoff_at, Match.id)
    )
    return list(query.tuples())


def forecast(now) -> Forecast | None:
    """Run the model over every stored match, as of ``now``."""
    rows = _matches()
    if not rows:
        return None
    match_id, kickoff, status, home, away, hg, ag, countries = zip(*rows, strict=True)
    status = np.array(status)
    finished = status == "finished"
    goals = [np.where(finished, np.array(side, dtype=float), np.nan) for side in (hg, ag)]
    groups = {name: index for index, name in enumerate(sorted(set(countries)))}
    match_id = np.array(match_id, dtype=np.int64)
    kickoff = np.array([moment.timestamp() for moment in kickoff], dtype=np.int64)
    config = current_app.config
    pre_match = odds.load(match_id, closing=False, only_listed=False)
    closing = odds.load(match_id, closing=True, only_listed=False)

    market_probs = {
        market: odds_engine.sharp_probabilities(
            cube.prices, cube.bookmakers, method=config["MARGIN_METHOD"]
        )[0]
        for market, cube in pre_match.items()
    }
    inputs = walkforward.WalkForwardInput(
        kickoff=kickoff,
        group=np.array([groups[name] for name in countries], dtype=np.int64),
        home=np.array(home, dtype=np.int64),
        away=np.array(away, dtype=np.int64),
        home_goals=goals[0],
        away_goals=goals[1],
        market=market_probs,
        now=int(now.timestamp()),
    )
    # The fits are small: a multi-threaded BLAS only fights for the cores (3x slower when busy).
    with threadpool_limits(limits=1, user_api="blas"):
        output = walkforward.run(inputs)
    thresholds = picks.RatingThresholds(
        config["RATING_A_EDGE"],
        config["RATING_A_QUALITY"],
        config["RATING_B_EDGE"],
        config["RATING_B_QUALITY"],
    )
    best, quality, choice = {}, {}, {}
    for market in MARKETS:
        cube, closed = pre_match[market], closing[market]
        prices, book = odds_engine.best_prices(cube.prices, cube.bookmakers)
        names = np.array([*cube.bookmakers, None], dtype=object)  # index -1: no bookmaker
        best[market] = (prices, names[book])
        has_closing = odds_engine.has_quote(closed.prices, closed.bookmakers).any(axis=1)
        quality[market] = picks.data_quality(
            output.history_home,
            output.history_away,
            odds_engine.quoting_count(cube.prices, cube.bookmakers),
            has_closing,
        )
        selection, edge = picks.choose(output.published[market], prices, config["PICK_MIN_EDGE"])
        choice[market] = (selection, edge, picks.rate(edge, quality[market][0], thresholds))
    return Forecast(
        match_id,
        kickoff,
        status,
        np.array(home),
        np.array(away),
        goals[0],
        goals[1],
        output,
        market_probs,
        best,
        quality,
        choice,
    )


def _probabilities(market, row):
    return dict(zip(MARKETS[market], (float(p) for p in row), strict=True))


def _prediction_rows(fc: Forecast, rows, now) -> list[dict]:
    out = fc.output
    records = []
    for row in rows:
        for market in MARKETS:
            score, parts = fc.quality[market]
            sharp = fc.market_probs[market][row]
            records.append(
                {
                    "match": int(fc.match_id[row]),
                    "market": market,
                    "probabilities": _probabilities(market, out.published[market][row]),
                    "model_probabilities": _probabilities(market, out.model[market][row]),
                    "market_probabilities": (
                        _probabilities(market, sharp) if np.isfinite(sharp).all() else None
                    ),
                    "pool_weight": float(out.pool_weight[market][row]),
                    "model_name": walkforward.MODEL_NAME,
                    "model_version": walkforward.MODEL_VERSION,
                    "made_at": now,
                    "fitted_at": _moment(out.fitted_at[row]),
                    "data_quality": float(score[row]),
                    "data_quality_parts": {name: float(part[row]) for name, part in parts.items()},
                    "is_live": bool(fc.kickoff[row] > now.timestamp()),
                }
            )
    return records


def _moment(epoch):
    return datetime.fromtimestamp(int(epoch), UTC)


def _pick_rows(fc: Forecast, rows, now) -> list[dict]:
    records = []
    for market in MARKETS:
        selection, edge, rating = fc.choice[market]
        prices, books = fc.best[market]
        for row in rows:
            chosen = selection[row]
            if chosen < 0:
                continue
            records.append(
                {
                    "match": int(fc.match_id[row]),
                    "market": market,
                    "selection": MARKETS[market][chosen],
                    "bookmaker": books[row, chosen],
                    "odds": float(prices[row, chosen]),
                    "probability": float(fc.output.published[market][row, chosen]),
                    "edge": float(edge[row]),
                    "rating": str(rating[row]),
                    "data_quality": float(fc.quality[market][0][row]),
                    "is_live": bool(fc.kickoff[row] > now.timestamp()),
                    "created_at": now,
                }
            )
    return records


def _intelligence_rows(fc: Forecast, rows, now) -> list[dict]:
    history = intelligence.compute(
        fc.kickoff, fc.home, fc.away, fc.home_goals, fc.away_goals, targets=np.asarray(rows)
    )
    out = fc.output
    schema = IntelligencePayloadSchema()
    records = []
    for row, facts in zip(rows, history, strict=True):
        attack_home, defence_home, attack_away, defence_away, home_advantage = out.strengths[row]
        model = {
            "fitted_at": _moment(out.fitted_at[row]),
            "strengths": {
                "home": {"attack": float(attack_home), "defence": float(defence_home)},
                "away": {"attack": float(attack_away), "defence": float(defence_away)},
                "home_advantage": float(home_advantage),
            },
            "probabilities": {
                market: _probabilities(market, out.model[market][row]) for market in MARKETS
            },
            "history_matches": {
                "home": int(out.history_home[row]),
                "away": int(out.history_away[row]),
            },
        }
        meetings = facts["head_to_head"]
        meetings["matches"] = [
            {
                "kickoff_at": _moment(meeting["kickoff"]),
                "home_team_id": meeting["home_id"],
                "away_team_id": meeting["away_id"],
                "home_goals": meeting["home_goals"],
                "away_goals": meeting["away_goals"],
            }
            for meeting in meetings["matches"]
        ]
        payload = dump_known(schema, {**facts, "model": model})
        records.append({"match": int(fc.match_id[row]), "payload": payload, "updated_at": now})
    return records


def _upsert(model, records, conflict, preserve):
    """Insert ``records``; on a conflict on ``conflict`` keep the new values of ``preserve``."""
    for start in range(0, len(records), BATCH):
        query = model.insert_many(records[start : start + BATCH])
        if preserve:
            query = query.on_conflict(conflict_target=conflict, preserve=preserve)
        else:
            query = query.on_conflict_ignore()
        query.execute()


PREDICTION_FIELDS = [
    Prediction.probabilities,
    Prediction.model_probabilities,
    Prediction.market_probabilities,
    Prediction.pool_weight,
    Prediction.model_name,
    Prediction.model_version,
    Prediction.made_at,
    Prediction.fitted_at,
    Prediction.data_quality,
    Prediction.data_quality_parts,
    Prediction.is_live,
]


def _predicted(match_ids) -> set[int]:
    """Which of ``match_ids`` already have predictions."""
    query = Prediction.select(Prediction.match).distinct()
    if len(match_ids) <= BATCH:
        query = query.where(Prediction.match.in_(match_ids))
    return {match_id for (match_id,) in query.tuples()}


def store(fc: Forecast, rows, now, refresh_intelligence=False) -> dict:
    """Write predictions, new picks and intelligence for ``rows`` of ``fc``; returns counts.

    A row whose match has kicked off keeps the prediction and intelligence it already has
    (unless ``refresh_intelligence``); new picks come only with new predictions, and picks are
    only ever added.
    """
    rows = np.asarray(rows, dtype=np.int64)
    predicted = _predicted(fc.match_id[rows].tolist())
    upcoming = fc.kickoff[rows] > now.timestamp()
    fresh = [
        row
        for row, ahead in zip(rows, upcoming, strict=True)
        if ahead or fc.match_id[row] not in predicted
    ]
    predictions = _prediction_rows(fc, fresh, now)
    _upsert(Prediction, predictions, [Prediction.match, Prediction.market], PREDICTION_FIELDS)
    intel = _intelligence_rows(fc, rows if refresh_intelligence else fresh, now)
    _upsert(
        MatchIntelligence,
        intel,
        [MatchIntelligence.match],
        [MatchIntelligence.payload, MatchIntelligence.updated_at],
    )
    new_picks = _pick_rows(fc, fresh, now)  # a pick comes with the prediction it is made from
    before = Pick.select().count()
    _upsert(Pick, new_picks, None, None)
    made = Pick.select().count() - before
    if predictions or intel:
        bump_data_version()
    return {"predictions": len(predictions), "intelligence": len(intel), "picks": made}


def backfill(now=None) -> dict:
    """Predict every stored match walk-forward, make the picks, settle what has finished."""
    now = now or utcnow()
    started = time.perf_counter()
    fc = forecast(now)
    if fc is None:
        return {"matches": 0}
    modelled = time.perf_counter() - started
    with db.atomic():
        written = store(fc, np.arange(len(fc.match_id)), now)
        settled = settlement.settle_pending(now=now)
    live = Pick.select().where(Pick.is_live).count()
    return {
        "matches": len(fc.match_id),
        "fits": fc.output.fits,
        "model_seconds": round(modelled, 2),
        "seconds": round(time.perf_counter() - started, 2),
        **written,
        "live_picks": live,
        "settlement": settled,
    }


def check_open(match_id: int) -> Match:
    """The match, if it may still be refreshed: NotFound if unknown, MatchNotOpen once over."""
    match = Match.get_or_raise(match_id, "Match")
    if match.status in ("finished", "cancelled"):
        raise MatchNotOpen(f"Match {match_id} is {match.status}; its intelligence is final.")
    return match


def refresh(match_id: int, now=None) -> dict:
    """Recompute one open match: its intelligence, and its prediction and a pick if it has not
    kicked off (NotFound for an unknown match, MatchNotOpen once it is over)."""
    now = now or utcnow()
    check_open(match_id)
    fc = forecast(now)  # the pool weight learns from every country's past, as in the backfill
    (row,) = np.flatnonzero(fc.match_id == match_id)
    written = store(fc, [row], now, refresh_intelligence=True)
    return {"match_id": match_id, "refreshed_at": now, **written}
