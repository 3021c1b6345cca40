"""The rating of a forecast's picks by the share of their edge the rule trusts
(``engine.betting.trust``), learnt walk-forward from earlier settled picks of the fixed markets
(1x2, over/under 2.5): a whole forecast (the backfill) learns from its own picks of the finished
matches, valued at their fair close as settlement values them; a refresh of one group, which
forecasts only its own matches, from the settled picks stored. Either way a pick learns only
from picks whose match kicked off before its forecast's cut-off, so a backfilled pick and a
live one are rated by the same evidence."""

from datetime import UTC, datetime

import numpy as np

from engine.betting import odds, picks, trust
from engine.markets import FIXED_MARKETS
from enums import DECIDED_STATUSES
from models import Match, Pick
from store.bulk import epoch_seconds, fetch_rows

#: Settled statuses whose fair closing EV is evidence (a void pick staked nothing).


def config(settings) -> trust.TrustConfig:
    """The rule's parameters (``TRUST_*``; docs/method.md, Ratings)."""
    return trust.TrustConfig(
        prior=settings["TRUST_PRIOR"],
        prior_spread=settings["TRUST_PRIOR_SPREAD"],
        league_spread=settings["TRUST_LEAGUE_SPREAD"],
        caution=settings["TRUST_CAUTION"],
    )


def thresholds(settings) -> picks.RatingThresholds:
    """The rating thresholds: on the expected log growth at the trusted probability."""
    return picks.RatingThresholds(
        settings["RATING_A_GROWTH"],
        settings["RATING_A_QUALITY"],
        settings["RATING_B_GROWTH"],
        settings["RATING_B_QUALITY"],
    )


def _chosen(choice, values) -> np.ndarray:
    """The value of each row's picked selection in ``values`` (n, k); NaN where none."""
    selection = choice[0]
    rows = np.arange(len(selection))
    return np.where(selection >= 0, values[rows, np.maximum(selection, 0)], np.nan)


def own_evidence(history, choice, best, published, closing, method) -> trust.Evidence:
    """The picks of a whole forecast's finished matches (``choice``, ``best`` and ``published``
    per fixed market, as the forecast holds them) valued at the fair close of ``closing`` (the
    closing price cubes), de-margined by ``method``."""
    found = []
    for market in FIXED_MARKETS:
        if market not in choice:
            continue
        price = _chosen(choice[market], best[market][0])
        close, _ = odds.closing_prices(closing[market].prices, closing[market].bookmakers)
        fair = _chosen(choice[market], odds.remove_margin(close, method=method))
        edge = _chosen(choice[market], published[market]) * price - 1.0
        rows = np.flatnonzero(history.finished & np.isfinite(fair) & np.isfinite(edge))
        found.append((rows, price[rows], edge[rows], price[rows] * fair[rows] - 1.0))
    rows = np.concatenate([part[0] for part in found]) if found else np.empty(0, np.int64)
    return trust.Evidence(
        history.kickoff[rows].astype(float),
        history.league[rows],
        *(np.concatenate([part[k] for part in found]) if found else np.empty(0) for k in (1, 2, 3)),
    )


def stored_evidence(before: float) -> trust.Evidence:
    """The settled picks of the fixed markets stored, with a fair closing probability, of
    matches that kicked off before ``before`` (epoch seconds); never a pick set apart (a row
    the live rule refused, whose numbers nothing vouches for)."""
    rows = fetch_rows(
        Pick.select(Match.kickoff_at, Match.league, Pick.odds, Pick.edge, Pick.closing_probability)
        .join(Match)
        .where(
            Pick.market.in_(tuple(FIXED_MARKETS))
            & Pick.status.in_(DECIDED_STATUSES)
            & Pick.closing_probability.is_null(False)
            & Pick.not_live_reason.is_null()
            & (Match.kickoff_at < datetime.fromtimestamp(before, UTC))
        )
    )
    if not rows:
        return trust.Evidence.empty()
    kickoff, league, price, edge, fair = zip(*rows, strict=True)
    price = np.array(price, dtype=float)
    return trust.Evidence(
        epoch_seconds(kickoff).astype(float),
        np.array(league, dtype=np.int64),
        price,
        np.array(edge, dtype=float),
        price * np.array(fair, dtype=float) - 1.0,
    )


def rate_fixed(choice, best, published, quality, history, cutoff, evidence, settings):
    """``(choice, trusted)``: each fixed market's choice with its ratings by the trusted growth,
    and the probability the rule trusts of each row's pick (NaN where none)."""
    rule, limits = config(settings), thresholds(settings)
    rated, trusted = {}, {}
    for market, (selection, edge, growth, _) in choice.items():
        price = _chosen(choice[market], best[market][0])
        found = trust.trust(
            _chosen(choice[market], published[market]),
            price,
            history.league,
            cutoff,
            evidence,
            rule,
        )
        rating = picks.rate(found.growth, quality[market][0], limits)
        rated[market] = (selection, edge, growth, np.where(selection >= 0, rating, ""))
        trusted[market] = np.where(selection >= 0, found.probability, np.nan)
    return rated, trusted


def rate_lines(line_markets, history, cutoff, evidence, settings) -> dict:
    """Re-rate each line market's picks (``line_forecast.LineMarket``, in place) by the trusted
    growth times the share of the stake at risk; returns the trusted probability of each line
    row's pick (NaN where none), per market."""
    rule, limits = config(settings), thresholds(settings)
    trusted = {}
    for market, lm in line_markets.items():
        selection, edge, growth, _ = lm.choice
        row = lm.match_row
        found = trust.trust(
            _chosen(lm.choice, lm.published),
            _chosen(lm.choice, lm.best[0]),
            history.league[row],
            cutoff[row],
            evidence,
            rule,
            at_risk=lm.at_risk,
        )
        rating = picks.rate(found.growth, lm.quality[0], limits)
        lm.choice = (selection, edge, growth, np.where(selection >= 0, rating, ""))
        trusted[market] = np.where(selection >= 0, found.probability, np.nan)
    return trusted
