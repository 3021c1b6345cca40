"""The rows a forecast writes: predictions, picks and match intelligence as plain records."""

from datetime import UTC, datetime

import numpy as np

from engine.markets import FIXED_MARKETS
from engine.model import intelligence, walkforward
from enums import MARKET_SELECTIONS
from models import stored_line
from schemas.common import dump_known
from schemas.matches import IntelligencePayloadSchema
from services.forecasting.forecast import Forecast


def probabilities_of(market, row):
    """``{selection: probability}`` of one row of a market's probabilities."""
    return dict(zip(MARKET_SELECTIONS[market], (float(p) for p in row), strict=True))


def _prediction(forecast: Forecast, market, row, is_live, now, view) -> dict:
    """One prediction record of match row ``row``; ``view`` holds the market's arrays at the
    row (``line``, ``published``, ``model``, ``sharp``, ``pool_weight``, ``source``,
    ``quality``, ``parts``)."""
    sharp = view["sharp"]
    return {
        "match": int(forecast.match_id[row]),
        "market": market,
        "line": view["line"],
        "probabilities": probabilities_of(market, view["published"]),
        "model_probabilities": probabilities_of(market, view["model"]),
        "market_probabilities": (
            probabilities_of(market, sharp) if np.isfinite(sharp).all() else None
        ),
        "pool_weight": float(view["pool_weight"]),
        "source": str(view["source"]),
        "model_name": walkforward.MODEL_NAME,
        "model_version": walkforward.MODEL_VERSION,
        "margin_method": forecast.margin_method,
        "made_at": now,
        "fitted_at": moment(forecast.output.fitted_at[row]),
        "data_quality": float(view["quality"]),
        "data_quality_parts": {name: float(part) for name, part in view["parts"].items()},
        "is_live": bool(is_live),
    }


def prediction_rows(forecast: Forecast, rows, live, now) -> list[dict]:
    """The predictions of ``rows``, made at ``now`` (every line quoted of the markets with a
    line); ``live`` says which of them are live."""
    out = forecast.output
    records = []
    for row, is_live in zip(rows, live, strict=True):
        for market in FIXED_MARKETS:
            score, parts = forecast.quality[market]
            view = {
                "line": stored_line(market, None),
                "published": out.published[market][row],
                "model": out.model[market][row],
                "sharp": forecast.market_probs[market][row],
                "pool_weight": out.pool_weight[market][row],
                "source": forecast.source[market][row],
                "quality": score[row],
                "parts": {name: part[row] for name, part in parts.items()},
            }
            records.append(_prediction(forecast, market, row, is_live, now, view))
    live_of = dict(zip(rows, live, strict=True))
    for market, lm in forecast.lines.items():
        score, parts = lm.quality
        for at in lm.rows_of(rows).tolist():
            row = int(lm.match_row[at])
            view = {
                "line": float(lm.line[at]),
                "published": lm.published[at],
                "model": lm.model[at],
                "sharp": lm.market_probs[at],
                "pool_weight": lm.pool_weight[at],
                "source": lm.source[at],
                "quality": score[at],
                "parts": {name: part[at] for name, part in parts.items()},
            }
            records.append(_prediction(forecast, market, row, live_of[row], now, view))
    return records


def moment(epoch):
    """An epoch second as an aware UTC datetime."""
    return datetime.fromtimestamp(int(epoch), UTC)


def _pick(forecast: Forecast, market, row, at, chosen, is_live, now, arrays) -> dict:
    """One pick record of match row ``row``, from index ``at`` of the market's ``arrays``
    (``line`` (or None for the market's own), ``best``, ``published``, ``trusted``, ``choice``,
    ``quality``)."""
    prices, books = arrays["best"]
    _, edge, _, rating = arrays["choice"]
    line = arrays["line"]
    return {
        "match": int(forecast.match_id[row]),
        "market": market,
        "line": stored_line(market, None if line is None else float(line[at])),
        "selection": MARKET_SELECTIONS[market][chosen],
        "bookmaker": books[at, chosen],
        "odds": float(prices[at, chosen]),
        "probability": float(arrays["published"][at, chosen]),
        "trusted_probability": float(arrays["trusted"][at]),
        "edge": float(edge[at]),
        "rating": str(rating[at]),
        "data_quality": float(arrays["quality"][0][at]),
        "is_live": bool(is_live),
        "created_at": now,
    }


def pick_rows(forecast: Forecast, rows, live, now) -> list[dict]:
    """The picks of ``rows``, made at ``now``; ``live`` says which of them are live."""
    records = []
    for market in FIXED_MARKETS:
        arrays = {
            "line": None,
            "best": forecast.best[market],
            "published": forecast.output.published[market],
            "trusted": forecast.trusted[market],
            "choice": forecast.choice[market],
            "quality": forecast.quality[market],
        }
        for row, is_live in zip(rows, live, strict=True):
            chosen = forecast.choice[market][0][row]
            if chosen >= 0:
                records.append(_pick(forecast, market, row, row, chosen, is_live, now, arrays))
    for market, lm in forecast.lines.items():
        arrays = {
            "line": lm.line,
            "best": lm.best,
            "published": lm.published,
            "trusted": forecast.trusted[market],
            "choice": lm.choice,
            "quality": lm.quality,
        }
        picked = lm.picked(len(forecast.match_id))
        for row, is_live in zip(rows, live, strict=True):
            at = picked[row]
            if at >= 0:
                chosen = lm.choice[0][at]
                records.append(_pick(forecast, market, row, at, chosen, is_live, now, arrays))
    return records


def _sides(values, row) -> dict:
    """A row's home and away values."""
    return {"home": float(values[row, 0]), "away": float(values[row, 1])}


def _ratings_view(forecast: Forecast, row) -> dict | None:
    """What the market-implied ratings say about a row, beside Dixon-Coles (None without)."""
    ratings = forecast.output.ratings
    if ratings is None or not np.isfinite(ratings.expected_goals[row]).all():
        return None
    return {
        "covered": bool(ratings.covered[row]),
        "probabilities": {
            market: probabilities_of(market, ratings.probabilities[market][row])
            for market in FIXED_MARKETS
        },
        "priced_matches": {
            "home": int(ratings.priced_home[row]),
            "away": int(ratings.priced_away[row]),
        },
        "expected_goals": _sides(ratings.expected_goals, row),
    }


def intelligence_rows(forecast: Forecast, rows, now) -> list[dict]:
    """The match intelligence of ``rows`` (form, head to head, the goal model's view)
    at ``now``."""
    history = intelligence.compute(
        forecast.kickoff,
        forecast.home,
        forecast.away,
        forecast.home_goals,
        forecast.away_goals,
        targets=np.asarray(rows),
    )
    out = forecast.output
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
                market: probabilities_of(market, out.dixon_coles[market][row])
                for market in FIXED_MARKETS
            },
            "expected_goals": _sides(out.expected_goals, row),
            "history_matches": {
                "home": int(out.history_home[row]),
                "away": int(out.history_away[row]),
            },
            "market_ratings": _ratings_view(forecast, row),
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
        records.append(
            {"match": int(forecast.match_id[row]), "payload": payload, "updated_at": now}
        )
    return records
