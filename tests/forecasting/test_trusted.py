"""Picks rated by the share of their edge the rule trusts (services.forecasting.trusted): a live
pick made by a refresh, which learns from the settled picks stored, is rated as the backfill,
which learns from its own picks, rates it."""

from datetime import timedelta

import numpy as np
import pytest

from clock import utcnow
from engine.betting import picks, trust
from models import Match, Pick
from services.forecasting import forecast, predictions, trusted
from services.market import staking
from tests import factories

#: Pinnacle's line before and at the close, and a soft bookmaker 10 % above it on the home side:
#: each match a home pick at 2.2 whose fair closing EV is 2.2 × (Pinnacle's close, de-margined)
#: − 1, less than its edge.
PRICES = [
    ("pinnacle", "1x2", "home", 2.0, False),
    ("pinnacle", "1x2", "draw", 3.6, False),
    ("pinnacle", "1x2", "away", 4.0, False),
    ("bet365", "1x2", "home", 2.2, False),
    ("bet365", "1x2", "draw", 3.3, False),
    ("bet365", "1x2", "away", 3.6, False),
    ("pinnacle", "1x2", "home", 2.1, True),
    ("pinnacle", "1x2", "draw", 3.5, True),
    ("pinnacle", "1x2", "away", 3.7, True),
]


@pytest.fixture
def seen(app):
    """The goal model has seen a league of a few dozen matches after ten."""
    app.config["MODEL_MIN_LEAGUE_MATCHES"] = 10


@pytest.mark.usefixtures("seen")
def test_a_refresh_rates_a_pick_as_the_backfill_does(ctx, app):
    now = utcnow()
    factories.played_days(now, range(24, 2, -1), PRICES)
    upcoming = factories.match(
        "T0", "T3", kickoff=now + timedelta(days=2), status="scheduled", odds=PRICES[:6]
    )
    settings = app.config
    predictions.backfill(settings, now=now)
    settled = Pick.select().where(Pick.closing_probability.is_null(False)).count()
    assert settled >= 10
    everything = forecast.forecast(now, settings)
    one = forecast.forecast(now, settings, match_ids=[upcoming.id], country=upcoming.league.country)
    row = int(np.flatnonzero(everything.match_id == upcoming.id)[0])
    alone = int(np.flatnonzero(one.match_id == upcoming.id)[0])
    assert everything.choice["1x2"][0][row] >= 0  # a pick, rated …
    for fc, at in ((everything, row), (one, alone)):
        assert fc.choice["1x2"][3][at] == everything.choice["1x2"][3][row]
        assert fc.trusted["1x2"][at] == pytest.approx(everything.trusted["1x2"][row])
    # … from the earlier picks' evidence, not the prior: their edges held only in part.
    evidence = trusted.stored_evidence(float(everything.output.fitted_at[row]))
    assert len(evidence.edge) >= 10
    config = trusted.config(settings)
    mean, error, count = trust.shares(
        evidence, [2.2], [upcoming.league.id], [everything.output.fitted_at[row]], config
    )
    assert count[0] == len(evidence.edge)
    share = trust.trusted_share(mean, error, config)[0]
    published = everything.output.published["1x2"][row, 0]
    assert 0 < share < 1
    assert everything.trusted["1x2"][row] == pytest.approx(
        trust.trusted_probability(published, 2.2, share)
    )
    growth = picks.growth(everything.trusted["1x2"][row], 2.2)
    assert growth < picks.growth(published, 2.2)
    # The stored pick carries that rating.
    predictions.refresh(Match.get_by_id(upcoming.id), settings, now=now)
    (stored,) = Pick.select().where(Pick.match == upcoming.id)
    assert stored.rating == everything.choice["1x2"][3][row]
    # … and the probability it trusted, which its stake is worked from (migration 018).
    assert stored.trusted_probability == pytest.approx(everything.trusted["1x2"][row])
    assert stored.trusted_probability < stored.probability
    sized = Pick.select(staking.TRUSTED_PROBABILITY).where(Pick.id == stored.id).scalar()
    assert sized == stored.trusted_probability
