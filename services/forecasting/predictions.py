"""Predictions, picks and intelligence: the walk-forward model run over the stored matches.

``backfill`` predicts every match walk-forward (each from fits on matches that kicked off
before it), rates the edge at the best pre-match price into picks, settles what can be settled
and stores the match intelligence. ``refresh`` redoes one open match from its own group's fits
only. The goal model is a chain (see ``engine.model.walkforward``): market-implied ratings where
both teams have priced history, else Dixon-Coles; the published forecast pools it with the sharp
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

import numpy as np

from clock import utcnow
from errors import MatchNotOpen, NotFound
from models import League, Match, Pick
from services.forecasting.forecast import forecast
from services.forecasting.publication import write_forecast
from services.record import publishing, settling


def backfill(settings, now=None, rebuild=False, progress=None) -> dict:
    """Predict every stored match walk-forward, make the picks, settle what has finished;
    ``rebuild`` also re-predicts the backfilled history (see
    :func:`~services.forecasting.publication.write_forecast`), ``progress`` hears of the fits as
    :func:`~services.forecasting.forecast.forecast` says."""
    now = now or utcnow()
    started = time.perf_counter()
    backfilled = forecast(now, settings, progress=progress)
    if backfilled is None:
        return {"matches": 0}
    modelled = time.perf_counter() - started
    with publishing.publish(settings, now):
        written = write_forecast(
            backfilled, np.arange(len(backfilled.match_id)), now, settings, rebuild=rebuild
        )
        settled = settling.settle_pending(settings, now=now)
    live = Pick.select().where(Pick.is_live).count()
    return {
        "matches": len(backfilled.match_id),
        "fits": backfilled.output.fits,
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
    refreshed = forecast(now, settings, match_ids=[match.id], country=match.league.country)
    (row,) = np.flatnonzero(refreshed.match_id == match.id)
    with publishing.publish(settings, now):
        written = write_forecast(refreshed, [row], now, settings, refresh_intelligence=True)
    return {"match_id": match.id, "refreshed_at": now, **written}
