"""The rows a forecast writes: predictions, picks and match intelligence as plain records."""

from datetime import UTC, datetime

import numpy as np

from engine import intelligence, walkforward
from engine.markets import MARKETS
from schemas.common import dump_known
from schemas.matches import IntelligencePayloadSchema
from services.forecasting.forecast import Forecast


def probabilities_of(market, row):
    """``{selection: probability}`` of one row of a market's probabilities."""
    return dict(zip(MARKETS[market], (float(p) for p in row), strict=True))


def prediction_rows(fc: Forecast, rows, live, now) -> list[dict]:
    """The predictions of ``rows``, made at ``now``; ``live`` says which of them are live."""
    out = fc.output
    records = []
    for row, is_live in zip(rows, live, strict=True):
        for market in MARKETS:
            score, parts = fc.quality[market]
            sharp = fc.market_probs[market][row]
            records.append(
                {
                    "match": int(fc.match_id[row]),
                    "market": market,
                    "probabilities": probabilities_of(market, out.published[market][row]),
                    "model_probabilities": probabilities_of(market, out.model[market][row]),
                    "market_probabilities": (
                        probabilities_of(market, sharp) if np.isfinite(sharp).all() else None
                    ),
                    "pool_weight": float(out.pool_weight[market][row]),
                    "source": str(fc.source[market][row]),
                    "model_name": walkforward.MODEL_NAME,
                    "model_version": walkforward.MODEL_VERSION,
                    "margin_method": fc.margin_method,
                    "made_at": now,
                    "fitted_at": moment(out.fitted_at[row]),
                    "data_quality": float(score[row]),
                    "data_quality_parts": {name: float(part[row]) for name, part in parts.items()},
                    "is_live": bool(is_live),
                }
            )
    return records


def moment(epoch):
    """An epoch second as an aware UTC datetime."""
    return datetime.fromtimestamp(int(epoch), UTC)


def pick_rows(fc: Forecast, rows, live, now) -> list[dict]:
    """The picks of ``rows``, made at ``now``; ``live`` says which of them are live."""
    records = []
    for market in MARKETS:
        selection, edge, _, rating = fc.choice[market]
        prices, books = fc.best[market]
        for row, is_live in zip(rows, live, strict=True):
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
                    "is_live": bool(is_live),
                    "created_at": now,
                }
            )
    return records


def _sides(values, row) -> dict:
    """A row's home and away values."""
    return {"home": float(values[row, 0]), "away": float(values[row, 1])}


def _ratings_view(fc: Forecast, row) -> dict | None:
    """What the market-implied ratings say about a row, beside Dixon-Coles (None without)."""
    ratings = fc.output.ratings
    if ratings is None or not np.isfinite(ratings.expected_goals[row]).all():
        return None
    return {
        "covered": bool(ratings.covered[row]),
        "probabilities": {
            market: probabilities_of(market, ratings.probabilities[market][row])
            for market in MARKETS
        },
        "priced_matches": {
            "home": int(ratings.priced_home[row]),
            "away": int(ratings.priced_away[row]),
        },
        "expected_goals": _sides(ratings.expected_goals, row),
    }


def intelligence_rows(fc: Forecast, rows, now) -> list[dict]:
    """The match intelligence of ``rows`` (form, head to head, the goal model's view)
    at ``now``."""
    history = intelligence.compute(
        fc.kickoff, fc.home, fc.away, fc.home_goals, fc.away_goals, targets=np.asarray(rows)
    )
    out = fc.output
    schema = IntelligencePayloadSchema()
    records = []
    for row, facts in zip(rows, history, strict=True):
        attack_home, defence_home, attack_away, defence_away, home_advantage = out.strengths[row]
        model = {
            "source": str(out.goal_source[row]),
            "fitted_at": moment(out.fitted_at[row]),
            "strengths": {
                "home": {"attack": float(attack_home), "defence": float(defence_home)},
                "away": {"attack": float(attack_away), "defence": float(defence_away)},
                "home_advantage": float(home_advantage),
            },
            "probabilities": {
                market: probabilities_of(market, out.dixon_coles[market][row]) for market in MARKETS
            },
            "expected_goals": _sides(out.expected_goals, row),
            "history_matches": {
                "home": int(out.history_home[row]),
                "away": int(out.history_away[row]),
            },
            "market_ratings": _ratings_view(fc, row),
        }
        meetings = facts["head_to_head"]
        meetings["matches"] = [
            {
                "kickoff_at": moment(meeting["kickoff"]),
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
