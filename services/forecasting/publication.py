"""Publishing a forecast: its predictions, new picks and intelligence written, the live ones
announced (events) and entered in the ledger with the prices they were made from (the only way
an upcoming match's prices reach the public), what has kicked off left as it was published."""

from datetime import datetime

import numpy as np

from engine.model import walkforward
from enums import KICKED_OFF_STATUSES, LINE_MARKETS
from models import MatchIntelligence, Pick, Prediction
from services import routes
from services.forecasting.forecast import Forecast
from services.forecasting.rows import intelligence_rows, moment, pick_rows, prediction_rows
from services.market import premium, price_cubes, staking
from services.record import signed_log
from services.webhooks import events
from store.bulk import insert_records

BATCH = 1000


def _of_matches(model, columns, match_ids):
    """``columns`` (tuples) of ``model``'s rows for ``match_ids``: one ``IN`` query per
    :data:`BATCH` of them, so no list is too long for the database."""
    match_ids = sorted(set(match_ids))
    for start in range(0, len(match_ids), BATCH):
        chunk = match_ids[start : start + BATCH]
        yield from model.select(*columns).where(model.match.in_(chunk)).tuples()


def _pick_ids(match_ids) -> dict:
    """``{(match, market): id}`` of the picks of ``match_ids``."""
    rows = _of_matches(Pick, (Pick.id, Pick.match, Pick.market), match_ids)
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


def _upcoming(forecast: Forecast, rows, now, predicted) -> np.ndarray:
    """Which ``rows`` have not kicked off, by ``now`` and by what is stored whatever ``now``
    says: a match with a result (or in play), or with a prediction made at or after its
    kick-off, has kicked off, however early the clock (a replay's) is set."""
    made = np.array(
        [
            predicted[match_id][1].timestamp() if match_id in predicted else -np.inf
            for match_id in forecast.match_id[rows].tolist()
        ],
        dtype=float,
    )
    kickoff = forecast.kickoff[rows]
    return (
        (kickoff > now.timestamp())
        & ~np.isin(forecast.status[rows], KICKED_OFF_STATUSES)
        & (made < kickoff)
    )


def _key(record) -> tuple:
    """A prediction's key: its match, market and line."""
    return record["match"], record["market"], record["line"]


def _published_probabilities(records) -> dict | None:
    """``{(match, market, line): probabilities}`` stored for the live ``records`` before they
    are written (None when nobody subscribes to ``prediction.updated``: nothing to compare)."""
    if not records or not events.subscribed("prediction.updated"):
        return None
    columns = (Prediction.match, Prediction.market, Prediction.line, Prediction.probabilities)
    rows = _of_matches(Prediction, columns, (record["match"] for record in records))
    return {(match_id, market, line): chances for match_id, market, line, chances in rows}


def _prediction_ids(match_ids) -> dict:
    """``{(match, market, line): id}`` of the predictions of ``match_ids``."""
    columns = (Prediction.id, Prediction.match, Prediction.market, Prediction.line)
    rows = _of_matches(Prediction, columns, match_ids)
    return {(match_id, market, line): row_id for row_id, match_id, market, line in rows}


def _emit_predictions(records, before, now) -> None:
    """A ``prediction.updated`` event for each live prediction that is new or whose published
    probabilities changed (a refresh that changes nothing tells nobody)."""
    if before is None:
        return
    changed = [record for record in records if before.get(_key(record)) != record["probabilities"]]
    if not changed:
        return
    ids = _prediction_ids(record["match"] for record in changed)
    events.emit(
        "prediction.updated",
        [
            {
                "id": ids[_key(record)],
                "path": routes.match(record["match"]),
                "match_id": record["match"],
                "market": record["market"],
                "line": record["line"],
                "probabilities": record["probabilities"],
                "model_probabilities": record["model_probabilities"],
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


def _emit_picks(records, held, forecast: Forecast, now, settings) -> None:
    """A ``pick.published`` event for each live pick just stored, with its suggested stake (by
    ``settings``' rule, as the match cards give it); a locked one (rated A) only for endpoints
    whose owner may see it."""
    if held is None:
        return
    made = [record for record in records if (record["match"], record["market"]) not in held]
    if not made:
        return
    kickoff = dict(zip(forecast.match_id.tolist(), forecast.kickoff.tolist(), strict=True))
    ids = _pick_ids(record["match"] for record in made)
    stakes = staking.suggest(
        np.array([record["trusted_probability"] for record in made], dtype=float),
        np.array([record["odds"] for record in made], dtype=float),
        np.array([record["rating"] for record in made], dtype=str),
        np.array([record["data_quality"] for record in made], dtype=float),
        # Each made now, before its kick-off (live): its moment is now.
        np.minimum(now.timestamp(), [kickoff[record["match"]] for record in made]),
        settings,
    ).tolist()
    events.emit(
        "pick.published",
        [
            (
                {
                    "id": ids[(record["match"], record["market"])],
                    "path": routes.match(record["match"]),
                    "match_id": record["match"],
                    "kickoff_at": events.moment(moment(kickoff[record["match"]])),
                    "market": record["market"],
                    "line": record["line"],
                    "rating": record["rating"],
                    "selection": record["selection"],
                    "odds": record["odds"],
                    "bookmaker": record["bookmaker"],
                    "probability": record["probability"],
                    "edge": record["edge"],
                    "suggested_stake": stake,
                },
                "premium" if record["rating"] in premium.LOCKED_RATINGS else "subscribers",
            )
            for record, stake in zip(made, stakes, strict=True)
        ],
        now,
    )


def _line_cubes(forecast: Forecast, rows) -> dict:
    """The pre-match line cubes the picks of ``rows`` were made from, their match rows moved
    onto positions in ``rows`` (as :func:`price_cubes.load_lines` gives them for those
    matches)."""
    rows = np.asarray(rows, dtype=np.int64)
    cubes = {}
    for market, lm in forecast.lines.items():
        cube = lm.pre_match
        mine = np.flatnonzero(np.isin(cube.match_row, rows))
        order = np.argsort(rows, kind="stable")
        cubes[market] = price_cubes.LineCube(
            order[np.searchsorted(rows[order], cube.match_row[mine])],
            cube.line[mine],
            cube.prices[mine],
            cube.bookmakers,
        )
    return cubes


def _drop_unquoted_lines(records, match_ids) -> None:
    """Delete the predictions of ``match_ids`` at lines of a market with lines that
    ``records`` (their new predictions) no longer hold: a line nobody quotes any more."""
    kept = {_key(record) for record in records if record["market"] in LINE_MARKETS}
    columns = (Prediction.id, Prediction.match, Prediction.market, Prediction.line)
    stale = [
        row_id
        for row_id, match_id, market, line in _of_matches(Prediction, columns, match_ids)
        if market in LINE_MARKETS and (match_id, market, line) not in kept
    ]
    for start in range(0, len(stale), BATCH):
        Prediction.delete().where(Prediction.id.in_(stale[start : start + BATCH])).execute()


def write_forecast(
    forecast: Forecast, rows, now, settings, refresh_intelligence=False, rebuild=False
) -> dict:
    """Write predictions, new picks and intelligence for ``rows`` of ``forecast``; returns counts
    (``settings``: the stake rule's, for the picks announced).

    A row whose match has kicked off (see :func:`_upcoming`) keeps the prediction and
    intelligence it already has (unless ``refresh_intelligence``); only the others are live.
    New picks come only with new predictions, and picks are only ever added. ``rebuild``
    re-predicts kicked-off matches whose predictions were backfilled, replacing their backfilled
    picks; live ones stay as they were published.
    """
    rows = np.asarray(rows, dtype=np.int64)
    predicted = _predicted(forecast.match_id[rows].tolist())
    upcoming = _upcoming(forecast, rows, now, predicted)
    fresh, live, rebuilt = [], [], []
    for row, ahead in zip(rows.tolist(), upcoming.tolist(), strict=True):
        match_id = int(forecast.match_id[row])
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
    predictions = prediction_rows(forecast, fresh, live, now)
    live_predictions = [record for record in predictions if record["is_live"]]
    before_live = _published_probabilities(live_predictions)
    _drop_unquoted_lines(predictions, [int(forecast.match_id[row]) for row in fresh])
    insert_records(Prediction, predictions, replace_on=("match", "market", "line"))
    _emit_predictions(live_predictions, before_live, now)
    intel = intelligence_rows(forecast, rows.tolist() if refresh_intelligence else fresh, now)
    insert_records(MatchIntelligence, intel, replace_on=("match",))
    new_picks = pick_rows(forecast, fresh, live, now)  # a pick comes with its prediction
    live_picks = [record for record in new_picks if record["is_live"]]
    held = _pick_keys(live_picks)
    before = Pick.select().count()
    insert_records(Pick, new_picks, skip_taken=True)  # a stored pick is never replaced
    made = Pick.select().count() - before
    _emit_picks(live_picks, held, forecast, now, settings)
    # A live pick enters the ledger in the transaction that stores it, and so do the prices it
    # was made from: an upcoming match's odds summary is written only here (pre-match prices
    # as the picks saw them; closing ones, which make no pick, as stored).
    ahead_rows = [row for row, ahead in zip(fresh, live, strict=True) if ahead]
    upcoming_ids = [int(forecast.match_id[row]) for row in ahead_rows]
    if ahead_rows:
        closing = price_cubes.load(forecast.match_id[ahead_rows], closing=True)
        pre_match = {
            market: price_cubes.Cube(cube.prices[ahead_rows], cube.bookmakers)
            for market, cube in forecast.pre_match.items()
        }
        lines = (
            _line_cubes(forecast, ahead_rows),
            price_cubes.load_lines(forecast.match_id[ahead_rows], closing=True),
        )
        summaries = price_cubes.summary_rows(upcoming_ids, pre_match, closing, lines)
        price_cubes.write_summaries(upcoming_ids, summaries)
    published = signed_log.publish_new(upcoming_ids, now, walkforward.MODEL_VERSION)
    return {
        "predictions": len(predictions),
        "intelligence": len(intel),
        "picks": made,
        "published": published,
        "rebuilt": len(rebuilt),
    }
