"""Predictions, picks and intelligence: the walk-forward model run over the stored matches.

``backfill`` predicts every match walk-forward (each from fits on matches that kicked off
before it), rates the edge at the best pre-match price into picks, settles what can be settled
and stores the match intelligence. ``refresh`` redoes one open match from its own group's fits
only. The goal model is a chain (see ``engine.walkforward``): market-implied ratings where both
teams have priced history, else Dixon-Coles; the published forecast pools it with the sharp
pre-match line, and each prediction records which of them made it.

What was published stays published: a stored prediction of a match that has kicked off is never
rewritten, except a backfilled one by a rebuild, and a pick, once made, is never changed except
by settlement (or replaced with its backfilled prediction by a rebuild). A match has kicked off
by the clock, or by what is stored whatever the clock says (its result, or a prediction made at
or after its kick-off), so a clock set early (a replay's) makes nothing of it live. Live
predictions and picks, made before kick-off, are never touched by any of this. Upcoming matches
are re-predicted with whatever new results and odds have arrived.
"""

import time
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np
from threadpoolctl import threadpool_limits

from clock import utcnow
from engine import intelligence, market_ratings, picks, pooling, timeline, walkforward
from engine import odds as odds_engine
from engine.markets import MARKETS, outcome_indices
from engine.timeline import DAY
from enums import KICKED_OFF_STATUSES
from errors import MatchNotOpen, NotFound
from models import League, Match, MatchIntelligence, Pick, Prediction, bump_data_version
from schemas.common import dump_known
from schemas.matches import IntelligencePayloadSchema
from services import events, ledger, odds, premium, settlement
from store.database import db

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
    choice: dict  # market → (selection (n,), edge (n,), growth (n,), rating (n,))
    source: dict  # market → (n,) what made the published probabilities
    margin_method: str  # how every margin in it was removed


@dataclass
class _History:
    """The stored matches as the model reads them, in kick-off order."""

    match_id: np.ndarray
    kickoff: np.ndarray  # epoch seconds
    status: np.ndarray
    home: np.ndarray
    away: np.ndarray
    home_goals: np.ndarray  # NaN without a result
    away_goals: np.ndarray
    group: np.ndarray  # the model's groups: one per country
    finished: np.ndarray


def _history(country=None) -> _History | None:
    """Every stored match (of one country), or None when there are none."""
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
    if country is not None:
        query = query.where(League.country == country)
    rows = list(query.tuples())
    if not rows:
        return None
    match_id, kickoff, status, home, away, hg, ag, countries = zip(*rows, strict=True)
    status = np.array(status)
    finished = status == "finished"
    groups = {name: index for index, name in enumerate(sorted(set(countries)))}
    return _History(
        match_id=np.array(match_id, dtype=np.int64),
        kickoff=np.array([moment.timestamp() for moment in kickoff], dtype=np.int64),
        status=status,
        home=np.array(home, dtype=np.int64),
        away=np.array(away, dtype=np.int64),
        home_goals=np.where(finished, np.array(hg, dtype=float), np.nan),
        away_goals=np.where(finished, np.array(ag, dtype=float), np.nan),
        group=np.array([groups[name] for name in countries], dtype=np.int64),
        finished=finished,
    )


def _scattered(match_id, wanted, closing: bool) -> dict[str, odds.Cube]:
    """Cubes over every row of ``match_id`` with the quotes of the ``wanted`` rows only (NaN
    elsewhere): one query for what a single group's refresh needs."""
    loaded = odds.load(match_id[wanted], closing=closing)
    cubes = {}
    for market, cube in loaded.items():
        prices = np.full((len(match_id), *cube.prices.shape[1:]), np.nan)
        prices[wanted] = cube.prices
        cubes[market] = odds.Cube(prices, cube.bookmakers)
    return cubes


@dataclass
class _Quotes:
    """The quote cubes a forecast reads: pre-match and closing, per market."""

    pre_match: dict[str, odds.Cube]
    closing: dict[str, odds.Cube]


def _all_quotes(h: _History) -> _Quotes:
    """Every stored quote of every match: what the backfill reads."""
    return _Quotes(
        odds.load(h.match_id, closing=False, only_listed=False),
        odds.load(h.match_id, closing=True, only_listed=False),
    )


def _group_quotes(h: _History, targets, cutoff: int) -> _Quotes:
    """What a refresh of ``targets`` reads: their pre-match quotes, and the closing quotes the
    ratings learn from in their window before ``cutoff`` (never the targets' own: nothing of
    a forecast may depend on what is only known once it kicks off)."""
    window = walkforward.RATINGS_CONFIG.window_days * DAY
    learning = h.finished & (h.kickoff >= cutoff - window) & (h.kickoff < cutoff)
    return _Quotes(
        _scattered(h.match_id, targets, closing=False),
        _scattered(h.match_id, learning, closing=True),
    )


def _model_input(h: _History, quotes: _Quotes, now, method: str):
    """The walk-forward model's input, and the de-margined sharp pre-match line per market."""
    market_probs = {
        market: odds_engine.sharp_probabilities(cube.prices, cube.bookmakers, method=method)[0]
        for market, cube in quotes.pre_match.items()
    }
    closing_probs = {
        market: np.where(
            h.finished[:, None],
            odds_engine.sharp_probabilities(cube.prices, cube.bookmakers, method=method)[0],
            np.nan,
        )
        for market, cube in quotes.closing.items()
        if market in market_ratings.LEARNS_FROM
    }
    inputs = walkforward.WalkForwardInput(
        kickoff=h.kickoff,
        group=h.group,
        home=h.home,
        away=h.away,
        home_goals=h.home_goals,
        away_goals=h.away_goals,
        market=market_probs,
        now=int(now.timestamp()),
        closing=closing_probs,
    )
    return inputs, market_probs


def _run_model(inputs, targets=None, pool_weights=None, progress=None):
    """The walk-forward model over ``inputs`` (only what ``targets`` need, when given)."""
    # The fits are small: a multi-threaded BLAS only fights for the cores (3x slower when busy).
    with threadpool_limits(limits=1, user_api="blas"):
        return walkforward.run(inputs, rows=targets, pool_weights=pool_weights, progress=progress)


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


def _thresholds(settings) -> picks.RatingThresholds:
    return picks.RatingThresholds(
        settings["RATING_A_GROWTH"],
        settings["RATING_A_QUALITY"],
        settings["RATING_B_GROWTH"],
        settings["RATING_B_QUALITY"],
    )


def _choose_picks(published, quotes: _Quotes, history, settings) -> tuple[dict, dict, dict]:
    """Best prices, data quality and the pick of each market, from the published probabilities
    and only what is known before kick-off: the pre-match quotes and the goal model's history.
    Returns ``(best, quality, choice)`` keyed by market (see :class:`Forecast`)."""
    thresholds = _thresholds(settings)
    best, quality, choice = {}, {}, {}
    for market in MARKETS:
        cube = quotes.pre_match[market]
        prices, book = odds_engine.best_prices(cube.prices, cube.bookmakers)
        names = np.array([*cube.bookmakers, None], dtype=object)  # index -1: no bookmaker
        best[market] = (prices, names[book])
        quality[market] = picks.data_quality(
            *history,
            odds_engine.quoting_count(cube.prices, cube.bookmakers),
            odds_engine.sharp_quotes(cube.prices, cube.bookmakers),
        )
        selection, edge, growth = picks.choose(
            published[market], prices, settings["PICK_MIN_EDGE"], settings["PICK_MIN_GROWTH"]
        )
        rating = picks.rate(growth, quality[market][0], thresholds)
        choice[market] = (selection, edge, growth, rating)
    return best, quality, choice


def forecast(now, settings, match_ids=None, country=None, progress=None) -> Forecast | None:
    """Run the model over every stored match as of ``now``; or, with ``match_ids`` (all of the
    group ``country``), over that group only, fitting just what those matches need.
    ``progress(done, total)`` hears of each week fitted."""
    h = _history(country)
    if h is None:
        return None
    targets, pool_weights = None, None
    if match_ids is None:
        quotes = _all_quotes(h)
    else:
        targets = np.flatnonzero(np.isin(h.match_id, match_ids))
        cutoff = int(timeline.cutoff(h.kickoff[targets].min(), int(now.timestamp())))
        quotes = _group_quotes(h, targets, cutoff)
        pool_weights = stored_pool_weights(datetime.fromtimestamp(cutoff, UTC))
    inputs, market_probs = _model_input(h, quotes, now, settings["MARGIN_METHOD"])
    output = _run_model(inputs, targets, pool_weights, progress)
    best, quality, choice = _choose_picks(output.published, quotes, _goal_history(output), settings)
    source = {market: _source(output, market, market_probs[market]) for market in MARKETS}
    return Forecast(
        h.match_id,
        h.kickoff,
        h.status,
        h.home,
        h.away,
        h.home_goals,
        h.away_goals,
        output,
        market_probs,
        best,
        quality,
        choice,
        source,
        settings["MARGIN_METHOD"],
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


def stored_pool_weights(before: datetime) -> dict[str, float]:
    """Per market, the pool weight fitted (as the backfill fits it) on the stored predictions
    of every finished match that kicked off before ``before``: what a single match's refresh
    uses instead of re-running every group."""
    rows = (
        Prediction.select(
            Prediction.market,
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
        .tuples()
    )
    model = {market: [] for market in MARKETS}
    market_side = {market: [] for market in MARKETS}
    scores = {market: [] for market in MARKETS}
    for market, goal_model, line, home_goals, away_goals in rows.iterator():
        model[market].append([goal_model[name] for name in MARKETS[market]])
        market_side[market].append([line[name] for name in MARKETS[market]])
        scores[market].append((home_goals, away_goals))
    weights = {}
    config = walkforward.ModelConfig()
    for market, selections in MARKETS.items():
        score = np.array(scores[market], dtype=float).reshape(-1, 2)
        weights[market] = pooling.fit_weight(
            np.array(model[market], dtype=float).reshape(-1, len(selections)),
            np.array(market_side[market], dtype=float).reshape(-1, len(selections)),
            outcome_indices(score[:, 0], score[:, 1])[market],
            prior=config.pool_prior_weight,
            min_rows=config.min_pool_rows,
        )
    return weights


def _probabilities(market, row):
    return dict(zip(MARKETS[market], (float(p) for p in row), strict=True))


def _prediction_rows(fc: Forecast, rows, live, now) -> list[dict]:
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
                    "probabilities": _probabilities(market, out.published[market][row]),
                    "model_probabilities": _probabilities(market, out.model[market][row]),
                    "market_probabilities": (
                        _probabilities(market, sharp) if np.isfinite(sharp).all() else None
                    ),
                    "pool_weight": float(out.pool_weight[market][row]),
                    "source": str(fc.source[market][row]),
                    "model_name": walkforward.MODEL_NAME,
                    "model_version": walkforward.MODEL_VERSION,
                    "margin_method": fc.margin_method,
                    "made_at": now,
                    "fitted_at": _moment(out.fitted_at[row]),
                    "data_quality": float(score[row]),
                    "data_quality_parts": {name: float(part[row]) for name, part in parts.items()},
                    "is_live": bool(is_live),
                }
            )
    return records


def _moment(epoch):
    return datetime.fromtimestamp(int(epoch), UTC)


def _pick_rows(fc: Forecast, rows, live, now) -> list[dict]:
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
    return {"home": float(values[row, 0]), "away": float(values[row, 1])}


def _ratings_view(fc: Forecast, row) -> dict | None:
    """What the market-implied ratings say about a row, beside Dixon-Coles (None without)."""
    ratings = fc.output.ratings
    if ratings is None or not np.isfinite(ratings.expected_goals[row]).all():
        return None
    return {
        "covered": bool(ratings.covered[row]),
        "probabilities": {
            market: _probabilities(market, ratings.probabilities[market][row]) for market in MARKETS
        },
        "priced_matches": {
            "home": int(ratings.priced_home[row]),
            "away": int(ratings.priced_away[row]),
        },
        "expected_goals": _sides(ratings.expected_goals, row),
    }


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
            "source": str(out.goal_source[row]),
            "fitted_at": _moment(out.fitted_at[row]),
            "strengths": {
                "home": {"attack": float(attack_home), "defence": float(defence_home)},
                "away": {"attack": float(attack_away), "defence": float(defence_away)},
                "home_advantage": float(home_advantage),
            },
            "probabilities": {
                market: _probabilities(market, out.dixon_coles[market][row]) for market in MARKETS
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


def _upsert(model, records, conflict=None):
    """Insert ``records`` (dicts of field names); on a conflict on the fields ``conflict`` keep
    every other field's new value, or, without ``conflict``, keep the stored row."""
    if not records:
        return
    preserve = [getattr(model, name) for name in records[0] if name not in (conflict or ())]
    for start in range(0, len(records), BATCH):
        query = model.insert_many(records[start : start + BATCH])
        if conflict:
            conflict_target = [getattr(model, name) for name in conflict]
            query = query.on_conflict(conflict_target=conflict_target, preserve=preserve)
        else:
            query = query.on_conflict_ignore()
        query.execute()


def _of_matches(model, columns, match_ids):
    """``columns`` (tuples) of ``model``'s rows for ``match_ids``: one ``IN`` query per
    :data:`BATCH` of them, so no list is too long for the database."""
    match_ids = sorted(set(match_ids))
    for start in range(0, len(match_ids), BATCH):
        chunk = match_ids[start : start + BATCH]
        yield from model.select(*columns).where(model.match.in_(chunk)).tuples()


def _ids_by_market(model, match_ids) -> dict:
    """``{(match, market): id}`` of ``model``'s rows (predictions or picks) for ``match_ids``."""
    rows = _of_matches(model, (model.id, model.match, model.market), match_ids)
    return {(match_id, market): row_id for row_id, match_id, market in rows}


def _predicted(match_ids) -> dict[int, tuple[bool, datetime]]:
    """Which of ``match_ids`` already have predictions: whether any of them is live, and when
    the latest of them was made."""
    found = {}
    columns = (Prediction.match, Prediction.is_live, Prediction.made_at)
    for match_id, is_live, made_at in _of_matches(Prediction, columns, match_ids):
        live, latest = found.get(match_id, (False, made_at))
        found[match_id] = (live or bool(is_live), max(latest, made_at))
    return found


def _upcoming(fc: Forecast, rows, now, predicted) -> np.ndarray:
    """Which ``rows`` have not kicked off, by ``now`` and by what is stored whatever ``now``
    says: a match with a result (or in play), or with a prediction made at or after its
    kick-off, has kicked off, however early the clock (a replay's) is set."""
    made = np.array(
        [
            predicted[match_id][1].timestamp() if match_id in predicted else -np.inf
            for match_id in fc.match_id[rows].tolist()
        ],
        dtype=float,
    )
    kickoff = fc.kickoff[rows]
    return (
        (kickoff > now.timestamp())
        & ~np.isin(fc.status[rows], KICKED_OFF_STATUSES)
        & (made < kickoff)
    )


def _published_probabilities(records) -> dict | None:
    """``{(match, market): probabilities}`` stored for the live ``records`` before they are
    written (None when nobody subscribes to ``prediction.updated``: nothing to compare)."""
    if not records or not events.subscribed("prediction.updated"):
        return None
    columns = (Prediction.match, Prediction.market, Prediction.probabilities)
    rows = _of_matches(Prediction, columns, (record["match"] for record in records))
    return {(match_id, market): probabilities for match_id, market, probabilities in rows}


def _emit_predictions(records, before, now) -> None:
    """A ``prediction.updated`` event for each live prediction that is new or whose published
    probabilities changed (a refresh that changes nothing tells nobody)."""
    if before is None:
        return
    changed = [
        record
        for record in records
        if before.get((record["match"], record["market"])) != record["probabilities"]
    ]
    if not changed:
        return
    ids = _ids_by_market(Prediction, (record["match"] for record in changed))
    events.emit(
        "prediction.updated",
        [
            {
                "id": ids[(record["match"], record["market"])],
                "path": f"/api/matches/{record['match']}",
                "match_id": record["match"],
                "market": record["market"],
                "probabilities": record["probabilities"],
                "source": record["source"],
                "made_at": events.moment(record["made_at"]),
            }
            for record in changed
        ],
        now,
    )


def _pick_keys(records) -> set | None:
    """The ``(match, market)`` pairs of the live ``records`` that already have a pick (None
    when nobody subscribes to ``pick.published``)."""
    if not records or not events.subscribed("pick.published"):
        return None
    return set(_of_matches(Pick, (Pick.match, Pick.market), (r["match"] for r in records)))


def _emit_picks(records, held, fc: Forecast, now) -> None:
    """A ``pick.published`` event for each live pick just stored; a locked one (rated A) only
    for endpoints whose owner may see it."""
    if held is None:
        return
    made = [record for record in records if (record["match"], record["market"]) not in held]
    if not made:
        return
    kickoff = dict(zip(fc.match_id.tolist(), fc.kickoff.tolist(), strict=True))
    ids = _ids_by_market(Pick, (record["match"] for record in made))
    events.emit(
        "pick.published",
        [
            (
                {
                    "id": ids[(record["match"], record["market"])],
                    "path": f"/api/matches/{record['match']}",
                    "match_id": record["match"],
                    "kickoff_at": events.moment(_moment(kickoff[record["match"]])),
                    "market": record["market"],
                    "rating": record["rating"],
                    "selection": record["selection"],
                    "odds": record["odds"],
                    "bookmaker": record["bookmaker"],
                    "probability": record["probability"],
                    "edge": record["edge"],
                },
                "premium" if record["rating"] in premium.LOCKED_RATINGS else "subscribers",
            )
            for record in made
        ],
        now,
    )


def store(fc: Forecast, rows, now, refresh_intelligence=False, rebuild=False) -> dict:
    """Write predictions, new picks and intelligence for ``rows`` of ``fc``; returns counts.

    A row whose match has kicked off (see :func:`_upcoming`) keeps the prediction and
    intelligence it already has (unless ``refresh_intelligence``); only the others are live.
    New picks come only with new predictions, and picks are only ever added. ``rebuild``
    re-predicts kicked-off matches whose predictions were backfilled, replacing their backfilled
    picks; live ones stay as they were published.
    """
    rows = np.asarray(rows, dtype=np.int64)
    predicted = _predicted(fc.match_id[rows].tolist())
    upcoming = _upcoming(fc, rows, now, predicted)
    fresh, live, rebuilt = [], [], []
    for row, ahead in zip(rows.tolist(), upcoming.tolist(), strict=True):
        match_id = int(fc.match_id[row])
        if ahead or match_id not in predicted:
            fresh.append(row)
            live.append(ahead)
        elif rebuild and not predicted[match_id][0]:
            fresh.append(row)
            live.append(False)
            rebuilt.append(match_id)
    for start in range(0, len(rebuilt), BATCH):
        chunk = rebuilt[start : start + BATCH]
        Pick.delete().where(Pick.match.in_(chunk) & ~Pick.is_live).execute()
    predictions = _prediction_rows(fc, fresh, live, now)
    live_predictions = [record for record in predictions if record["is_live"]]
    before_live = _published_probabilities(live_predictions)
    _upsert(Prediction, predictions, ("match", "market"))
    _emit_predictions(live_predictions, before_live, now)
    intel = _intelligence_rows(fc, rows.tolist() if refresh_intelligence else fresh, now)
    _upsert(MatchIntelligence, intel, ("match",))
    new_picks = _pick_rows(fc, fresh, live, now)  # a pick comes with its prediction
    live_picks = [record for record in new_picks if record["is_live"]]
    held = _pick_keys(live_picks)
    before = Pick.select().count()
    _upsert(Pick, new_picks)
    made = Pick.select().count() - before
    _emit_picks(live_picks, held, fc, now)
    # A live pick enters the ledger in the transaction that stores it.
    upcoming_ids = [int(fc.match_id[row]) for row, ahead in zip(fresh, live, strict=True) if ahead]
    published = ledger.publish_new(upcoming_ids, now, walkforward.MODEL_VERSION)
    if predictions or intel:
        bump_data_version()
    return {
        "predictions": len(predictions),
        "intelligence": len(intel),
        "picks": made,
        "published": published,
        "rebuilt": len(rebuilt),
    }


def backfill(settings, now=None, rebuild=False, progress=None) -> dict:
    """Predict every stored match walk-forward, make the picks, settle what has finished;
    ``rebuild`` also re-predicts the backfilled history (see :func:`store`), ``progress``
    hears of the fits as :func:`forecast` says."""
    now = now or utcnow()
    started = time.perf_counter()
    fc = forecast(now, settings, progress=progress)
    if fc is None:
        return {"matches": 0}
    modelled = time.perf_counter() - started
    with db.atomic():
        written = store(fc, np.arange(len(fc.match_id)), now, rebuild=rebuild)
        settled = settlement.settle_pending(settings, now=now)
        ledger.checkpoint(now, settings)
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
    """The match (with its league's country), if it may still be refreshed: NotFound if
    unknown, MatchNotOpen once over."""
    match = Match.select(Match, League.country).join(League).where(Match.id == match_id).first()
    if match is None:
        raise NotFound(f"Match {match_id} does not exist.")
    if match.status in ("finished", "cancelled"):
        raise MatchNotOpen(f"Match {match_id} is {match.status}; its intelligence is final.")
    return match


def refresh(match: Match, settings, now=None) -> dict:
    """Recompute one open match (as :func:`check_open` gives it) from its own group's fits:
    its intelligence, and its prediction and a pick if it has not kicked off."""
    now = now or utcnow()
    fc = forecast(now, settings, match_ids=[match.id], country=match.league.country)
    (row,) = np.flatnonzero(fc.match_id == match.id)
    with db.atomic():
        written = store(fc, [row], now, refresh_intelligence=True)
        ledger.checkpoint(now, settings)
    return {"match_id": match.id, "refreshed_at": now, **written}
