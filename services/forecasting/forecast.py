"""The forecast: the walk-forward model over the stored matches (see ``engine.model.walkforward``),
pooled with the sharp pre-match line, and the pick of each market at the best price, rated by the
share of its edge the rule trusts (``services.forecasting.trusted``)."""

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from operator import itemgetter

import numpy as np
from threadpoolctl import threadpool_limits

from engine.betting import odds, picks
from engine.markets import FIXED_MARKETS, outcome_indices
from engine.model import lines, market_ratings, pooling, timeline, walkforward
from engine.model.timeline import DAY
from enums import LINE_MARKETS, MARKET_SELECTIONS
from models import Match, Prediction
from services.forecasting import line_forecast, stored, trusted
from services.forecasting.stored import History, Quotes, all_quotes, group_quotes
from store.bulk import epoch_seconds, fetch_rows, json_documents


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
    choice: dict  # market → (selection (n,), edge (n,), growth (n,), rating (n,))
    #: market → the probability the rating rule trusts of each row's pick, NaN where none
    #: (``engine.betting.trust.trusted_probability``); (m,) line rows for a market with lines.
    trusted: dict
    source: dict  # market → (n,) what made the published probabilities
    margin_method: str  # how every margin in it was removed
    pre_match: dict  # market → the pre-match price cube the picks were made from
    #: The markets with a line, one row per match and line (``line_forecast.LineMarket``).
    lines: dict


def _model_input(history: History, quotes: Quotes, now, method: str):
    """The walk-forward model's input, and the de-margined sharp pre-match line per market."""
    market_probs = {
        market: odds.sharp_probabilities(cube.prices, cube.bookmakers, method=method)[0]
        for market, cube in quotes.pre_match.items()
    }
    closing_probs = {
        market: np.where(
            history.finished[:, None],
            odds.sharp_probabilities(cube.prices, cube.bookmakers, method=method)[0],
            np.nan,
        )
        for market, cube in quotes.closing.items()
        if market in market_ratings.LEARNS_FROM
    }
    inputs = walkforward.WalkForwardInput(
        kickoff=history.kickoff,
        group=history.group,
        league=history.league,
        home=history.home,
        away=history.away,
        home_goals=history.home_goals,
        away_goals=history.away_goals,
        market=market_probs,
        now=int(now.timestamp()),
        closing=closing_probs,
        closing_lines=line_forecast.main_lines(
            len(history.match_id), quotes.closing_lines, method, history.finished
        ),
    )
    return inputs, market_probs


def model_config(settings) -> walkforward.ModelConfig:
    """The model's settings, with the configured history a league needs."""
    return replace(
        walkforward.ModelConfig(), min_league_matches=settings["MODEL_MIN_LEAGUE_MATCHES"]
    )


def _run_model(inputs, config, targets=None, pool_weights=None, progress=None):
    """The walk-forward model over ``inputs`` (only what ``targets`` need, when given)."""
    # The fits are small: a multi-threaded BLAS only fights for the cores (3x slower when busy).
    with threadpool_limits(limits=1, user_api="blas"):
        return walkforward.run(
            inputs, config, rows=targets, pool_weights=pool_weights, progress=progress
        )


def _goal_history(output) -> tuple[np.ndarray, np.ndarray]:
    """The matches behind each row's goal model, home and away: priced matches for the
    market-implied ratings, played matches for Dixon-Coles."""
    if output.ratings is None:
        return output.history_home, output.history_away
    rated = output.goal_source == walkforward.RATINGS_SOURCE
    return (
        np.where(rated, output.ratings.priced_home, output.history_home),
        np.where(rated, output.ratings.priced_away, output.history_away),
    )


def trust_config(settings):
    """The rating rule's trust parameters (``TRUST_*``)."""
    return trusted.config(settings)


def _choose_picks(published, quotes: Quotes, history, settings) -> tuple[dict, dict, dict]:
    """Best prices, data quality and the pick of each market, from the published probabilities
    and only what is known before kick-off: the pre-match quotes and the goal model's history.
    Returns ``(best, quality, choice)`` keyed by market (see :class:`Forecast`); the ratings
    are the raw growth's until :func:`trusted.rate_fixed` rates by the trusted growth."""
    thresholds = trusted.thresholds(settings)
    best, quality, choice = {}, {}, {}
    for market in FIXED_MARKETS:
        cube = quotes.pre_match[market]
        prices, book = odds.best_prices(cube.prices, cube.bookmakers)
        names = np.array([*cube.bookmakers, None], dtype=object)  # index -1: no bookmaker
        best[market] = (prices, names[book])
        quality[market] = picks.data_quality(
            *history,
            odds.quoting_count(cube.prices, cube.bookmakers),
            odds.sharp_quotes(cube.prices, cube.bookmakers),
        )
        selection, edge, growth = picks.choose(
            published[market], prices, settings["PICK_MIN_EDGE"], settings["PICK_MIN_GROWTH"]
        )
        if market not in settings["PICK_MARKETS"]:
            selection = np.full_like(selection, -1)  # a market without picks (PICK_MARKETS)
        rating = picks.rate(growth, quality[market][0], thresholds)
        choice[market] = (selection, edge, growth, rating)
    return best, quality, choice


def _unseen_pick_nothing(choice, seen) -> dict:
    """``choice`` without a pick (nor a rating) where the goal model has not seen the row's
    league (``seen`` (n,) False): its forecast there is the market's, or the model's prior."""
    return {
        market: (np.where(seen, selection, -1), edge, growth, np.where(seen, rating, ""))
        for market, (selection, edge, growth, rating) in choice.items()
    }


def forecast(now, settings, match_ids=None, country=None, progress=None) -> Forecast | None:
    """Run the model over every stored match as of ``now``; or, with ``match_ids`` (all of the
    group ``country``), over that group only, fitting just what those matches need.
    ``progress(done, total)`` hears of each week fitted."""
    history = stored.history(country)
    if history is None:
        return None
    targets, pool_weights = None, None
    config = model_config(settings)
    if match_ids is None:
        quotes = all_quotes(history)
    else:
        targets = np.flatnonzero(np.isin(history.match_id, match_ids))
        cutoff = int(timeline.cutoff(history.kickoff[targets].min(), int(now.timestamp())))
        quotes = group_quotes(history, targets, cutoff)
        pool_weights = stored_pool_weights(datetime.fromtimestamp(cutoff, UTC), config)
    inputs, market_probs = _model_input(history, quotes, now, settings["MARGIN_METHOD"])
    output = _run_model(inputs, config, targets, pool_weights, progress)
    goal_history = _goal_history(output)
    seen = output.league_history >= config.min_league_matches
    best, quality, choice = _choose_picks(output.published, quotes, goal_history, settings)
    choice = _unseen_pick_nothing(choice, seen)
    source = {market: _source(output, market, market_probs[market]) for market in FIXED_MARKETS}
    has_result = np.isfinite(history.home_goals) & (history.kickoff < int(now.timestamp()))
    lines = line_forecast.forecast(
        history,
        output,
        quotes.pre_match_lines,
        settings,
        trusted.thresholds(settings),
        goal_history,
        has_result,
        allowed=seen,
        config=config,
        pool_weights=None if pool_weights is None else pool_weights.get("lines"),
    )
    line_forecast.one_total_pick(choice["ou25"], lines["ou"], len(history.match_id))
    cutoff = output.fitted_at.astype(float)
    if match_ids is None:
        evidence = trusted.own_evidence(
            history, choice, best, output.published, quotes.closing, settings["MARGIN_METHOD"]
        )
    else:
        evidence = trusted.stored_evidence(float(cutoff[targets].max()))
    choice, trusting = trusted.rate_fixed(
        choice, best, output.published, quality, history, cutoff, evidence, settings
    )
    trusting.update(trusted.rate_lines(lines, history, cutoff, evidence, settings))
    return Forecast(
        history.match_id,
        history.kickoff,
        history.status,
        history.home,
        history.away,
        history.home_goals,
        history.away_goals,
        output,
        market_probs,
        best,
        quality,
        choice,
        trusting,
        source,
        settings["MARGIN_METHOD"],
        quotes.pre_match,
        lines,
    )


def _source(output, market, market_probs) -> np.ndarray:
    """What made each row's published probabilities: the sharp line alone (``market``), a pool
    of it with the goal model (``pool``), or the goal model alone (its own source)."""
    weight = output.pool_weight[market]
    quoted = pooling.market_available(market_probs)
    return np.where(
        quoted & (weight == 0.0),
        "market",
        np.where(quoted & (weight < 1.0), "pool", output.goal_source),
    )


def stored_pool_weights(before: datetime, config: walkforward.ModelConfig) -> dict:
    """Per market, the pool weight fitted (as the backfill fits it) on the stored predictions of
    the finished matches that kicked off before ``before`` while the goal model had seen their
    league: what a single match's refresh uses instead of re-running every group. The markets
    with a line have one per line, under ``"lines"``: ``{market: {line: weight}}``."""
    results = fetch_rows(
        Match.select(Match.league, Match.kickoff_at).where(
            (Match.status == "finished") & (Match.kickoff_at < before)
        )
    )
    played = {}
    if results:
        leagues, kickoffs = zip(*results, strict=True)
        leagues, kickoffs = np.array(leagues, dtype=np.int64), epoch_seconds(kickoffs)
        played = {
            value: np.sort(kickoffs[leagues == value]) for value in np.unique(leagues).tolist()
        }
    window = int(config.window_days) * DAY
    rows = fetch_rows(
        Prediction.select(
            Prediction.market,
            Prediction.line,
            Match.league,
            Prediction.fitted_at,
            Prediction.model_probabilities,
            Prediction.market_probabilities,
            Match.home_goals,
            Match.away_goals,
        )
        .join(Match)
        .where(
            (Match.status == "finished")
            & (Match.kickoff_at < before)
            & Prediction.market_probabilities.is_null(False)
        )
        .order_by(Match.kickoff_at, Match.id)  # the weight is validated on later matches
    )
    columns = list(zip(*rows, strict=True)) if rows else [()] * 8
    market_of = np.array(columns[0], dtype=str)
    line_of = np.array(columns[1], dtype=float)
    # The backfill trained on a row only where the goal model had seen its league.
    league, cut = np.array(columns[2], dtype=np.int64), epoch_seconds(columns[3])
    seen = np.zeros(len(rows), dtype=np.int64)
    for value in np.unique(league).tolist():
        mine = league == value
        times = played.get(value, np.empty(0, dtype=np.int64))
        seen[mine] = np.searchsorted(times, cut[mine]) - np.searchsorted(times, cut[mine] - window)
    kept = seen >= config.min_league_matches
    goal_models, sharps = json_documents(columns[4]), json_documents(columns[5])
    goals = np.array(columns[6:8], dtype=float).reshape(2, -1)
    fitting = {"prior": config.pool_prior_weight, "min_rows": config.min_pool_rows}
    weights = {"lines": {}}
    for market, names in MARKET_SELECTIONS.items():
        chosen = np.flatnonzero(kept & (market_of == market)).tolist()
        goal_model, sharp = (_by_selection(docs, chosen, names) for docs in (goal_models, sharps))
        home_goals, away_goals = goals[:, chosen]
        line = line_of[chosen]
        if market in LINE_MARKETS:
            weights["lines"][market] = pooling.family_weights(
                line,
                goal_model,
                sharp,
                lines.outcome_index(market, line, home_goals, away_goals),
                share=lines.outcome_share(market, line, home_goals, away_goals),
                **fitting,
            )
        else:
            outcome = outcome_indices(home_goals, away_goals)[market]
            weights[market] = pooling.fit_weight(goal_model, sharp, outcome, **fitting)
    return weights


def _by_selection(documents, chosen, names) -> np.ndarray:
    """The probabilities ``{selection: p}`` of the ``chosen`` documents as an (n, k) array."""
    probabilities = map(itemgetter(*names), map(documents.__getitem__, chosen))
    return np.array(list(probabilities), dtype=float).reshape(-1, len(names))
