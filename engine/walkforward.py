"""Walk-forward forecasts: weekly Dixon-Coles refits per group, pooled with the sharp market.

Every row is predicted by a fit of its group on results that kicked off strictly before the
row's cutoff (the Monday 00:00 UTC that starts its kick-off week, capped at ``now``), and its
published probabilities pool that fit with the market using weights fitted on earlier rows only.
So nothing a row's forecast uses could have been unknown when the forecast was made, and
appending later matches to the input never changes an earlier row's output.
"""

from dataclasses import dataclass, replace

import numpy as np

from engine import dixon_coles, pooling
from engine.markets import MARKETS, outcome_indices
from engine.scores import market_probabilities, score_matrix

MODEL_NAME = "dixon-coles-market-pool"
MODEL_VERSION = "1.0.0"

DAY = 86_400
WEEK = 7 * DAY
#: 1970-01-05 00:00 UTC, the first Monday of the epoch: weeks are counted from it.
_MONDAY = 4 * DAY


@dataclass(frozen=True)
class ModelConfig:
    """The model's knobs, tuned walk-forward on football-data 2017/18-2023/24 (five leagues).

    Half-life, window and ridge sit on a flat optimum of the Dixon-Coles RPS (half-lives of
    240-540 days and ridges of 2-8 are all within 0.1 % of it); a 3-season window costs nothing
    against a 4-season one. The newcomer deficit (promoted sides start below the group average)
    gains about 0.1 % RPS.
    """

    half_life_days: float = 300.0  # exponential time decay of a past match's weight
    window_days: int = 3 * 365  # matches older than this before the cutoff are not used
    ridge: float = 4.0  # L2 penalty on attack/defence, in weighted matches
    rho_bound: float = 0.15  # |rho| bound, keeps tau positive for rates up to 1 / bound
    min_matches: int = 20  # fewer results in a group's window and the prior fit is used
    newcomer_strength: float = 0.2  # attack and defence deficit of a team new to the group
    newcomer_matches: int = 38  # the deficit fades linearly to 0 over this many matches
    pool_prior_weight: float = pooling.PRIOR_WEIGHT  # model weight before min_pool_rows
    min_pool_rows: int = pooling.MIN_ROWS  # past rows needed to fit a pool weight

    def fit_config(self) -> dixon_coles.FitConfig:
        """The settings of each Dixon-Coles fit."""
        return dixon_coles.FitConfig(ridge=self.ridge, rho_bound=self.rho_bound)


@dataclass
class WalkForwardInput:
    """Every match to predict, with whatever results and pre-match market prices exist."""

    kickoff: np.ndarray  # int64 epoch seconds (UTC), shape (n,)
    group: np.ndarray  # int64 fit group per match (e.g. one per country)
    home: np.ndarray  # int64 team id (any integers)
    away: np.ndarray
    home_goals: np.ndarray  # float64, NaN when the match has no result
    away_goals: np.ndarray
    market: dict[str, np.ndarray]  # de-margined pre-match probabilities, NaN rows where none
    now: int  # epoch seconds; results after now do not exist yet


@dataclass
class WalkForwardOutput:
    """Forecasts per input row, in input order."""

    model: dict[str, np.ndarray]  # Dixon-Coles-only probabilities per market, (n, k)
    published: dict[str, np.ndarray]  # pooled probabilities per market, (n, k)
    pool_weight: dict[str, np.ndarray]  # (n,) weight on the model (1 where there is no market)
    fitted_at: np.ndarray  # (n,) int64 cutoff of the fit that predicted the row
    history_home: np.ndarray  # (n,) prior matches of the home team inside the fit's window
    history_away: np.ndarray
    #: (n, 5) attack_home, defence_home, attack_away, defence_away, home advantage (log scale;
    #: a higher defence concedes fewer goals)
    strengths: np.ndarray
    expected_goals: np.ndarray  # (n, 2) the model's home and away goal rates
    fits: int = 0  # Dixon-Coles fits run, all groups
    unconverged: int = 0  # of which the optimiser stopped before converging


def week_start(epoch_seconds) -> np.ndarray:
    """Monday 00:00 UTC of the week containing each timestamp."""
    t = np.asarray(epoch_seconds, dtype=np.int64)
    return t - (t - _MONDAY) % WEEK


@dataclass
class _Matches:
    """The input as plain arrays, with which rows have a usable result and each row's cutoff."""

    kickoff: np.ndarray
    group: np.ndarray
    home: np.ndarray
    away: np.ndarray
    home_goals: np.ndarray
    away_goals: np.ndarray
    has_result: np.ndarray
    cutoff: np.ndarray


@dataclass
class _Predictions:
    """What the weekly fits produce per input row."""

    home_rate: np.ndarray
    away_rate: np.ndarray
    rho: np.ndarray
    history_home: np.ndarray
    history_away: np.ndarray
    strengths: np.ndarray
    fits: int = 0
    unconverged: int = 0


def _reindex(prev: dixon_coles.DixonColesFit, prev_ids, ids) -> dixon_coles.DixonColesFit:
    """``prev`` moved onto the team list ``ids``: teams it did not know start at 0."""
    pos = np.clip(np.searchsorted(prev_ids, ids), 0, len(prev_ids) - 1)
    known = prev_ids[pos] == ids
    return replace(
        prev,
        attack=np.where(known, prev.attack[pos], 0.0),
        defence=np.where(known, prev.defence[pos], 0.0),
    )


def _dense(ids: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Position of each value in the sorted ``ids``, -1 where absent."""
    if len(ids) == 0:
        return np.full(len(values), -1, dtype=np.intp)
    pos = np.clip(np.searchsorted(ids, values), 0, len(ids) - 1)
    return np.where(ids[pos] == values, pos, -1)


def _forecast_group(rows: np.ndarray, m: _Matches, config: ModelConfig, out: _Predictions):
    """Weekly refits of one group, written into ``out``; ``rows`` are sorted by kick-off."""
    fit_config = config.fit_config()
    decay = np.log(2.0) / (config.half_life_days * DAY)
    window = int(config.window_days) * DAY
    newcomer_matches = max(config.newcomer_matches, 1)
    unseen = (-config.newcomer_strength, -config.newcomer_strength)
    train = rows[m.has_result[rows]]
    train_kickoff = m.kickoff[train]
    cutoffs, starts = np.unique(m.cutoff[rows], return_index=True)
    ends = np.append(starts[1:], len(rows))
    prev_fit, prev_ids = None, np.empty(0, dtype=np.int64)
    for cut, lo, hi in zip(cutoffs, starts, ends, strict=True):
        first = np.searchsorted(train_kickoff, cut - window, side="left")
        last = np.searchsorted(train_kickoff, cut, side="left")
        sel = train[first:last]
        ids = np.unique(np.concatenate([m.home[sel], m.away[sel]]))
        h_idx = np.searchsorted(ids, m.home[sel])
        a_idx = np.searchsorted(ids, m.away[sel])
        played = np.bincount(h_idx, minlength=len(ids)) + np.bincount(a_idx, minlength=len(ids))
        # Teams new to a group are mostly promoted ones: they start below average, not at it.
        centre = -config.newcomer_strength * np.clip(1.0 - played / newcomer_matches, 0.0, 1.0)
        if len(sel) < config.min_matches:
            fit = replace(dixon_coles.prior_fit(len(ids)), attack=centre, defence=centre)
        else:
            fit = dixon_coles.fit(
                h_idx,
                a_idx,
                m.home_goals[sel],
                m.away_goals[sel],
                np.exp(-decay * (cut - m.kickoff[sel]).astype(float)),
                len(ids),
                init=None if prev_fit is None else _reindex(prev_fit, prev_ids, ids),
                config=fit_config,
                prior=(centre, centre),
            )
            out.fits += 1
            out.unconverged += not fit.converged
            prev_fit, prev_ids = fit, ids
        target = rows[lo:hi]
        th = _dense(ids, m.home[target])
        ta = _dense(ids, m.away[target])
        att_h, def_h = dixon_coles.strengths(fit, th, unseen)
        att_a, def_a = dixon_coles.strengths(fit, ta, unseen)
        out.home_rate[target], out.away_rate[target] = dixon_coles.rates(fit, th, ta, unseen)
        out.rho[target] = fit.rho
        played = np.append(played, 0)
        out.history_home[target] = played[th]
        out.history_away[target] = played[ta]
        out.strengths[target] = np.column_stack(
            [att_h, def_h, att_a, def_a, np.full(len(target), fit.home)]
        )


def _matches(inp: WalkForwardInput) -> _Matches:
    """Validated arrays of the input."""
    kickoff = np.asarray(inp.kickoff, dtype=np.int64)
    n = len(kickoff)
    arrays = {
        "group": np.asarray(inp.group, dtype=np.int64),
        "home": np.asarray(inp.home, dtype=np.int64),
        "away": np.asarray(inp.away, dtype=np.int64),
        "home_goals": np.asarray(inp.home_goals, dtype=float),
        "away_goals": np.asarray(inp.away_goals, dtype=float),
    }
    for name, arr in arrays.items():
        if arr.shape != (n,):
            raise ValueError(f"{name} must have shape ({n},), not {arr.shape}")
    now = int(inp.now)
    has_result = (
        np.isfinite(arrays["home_goals"]) & np.isfinite(arrays["away_goals"]) & (kickoff < now)
    )
    cutoff = np.minimum(week_start(kickoff), now)
    return _Matches(kickoff=kickoff, has_result=has_result, cutoff=cutoff, **arrays)


def _markets(inp: WalkForwardInput, n: int) -> dict[str, np.ndarray]:
    """The market probabilities per market, NaN-filled where a market is not given."""
    markets = {}
    for market, selections in MARKETS.items():
        given = inp.market.get(market)
        shape = (n, len(selections))
        if given is None:
            markets[market] = np.full(shape, np.nan)
            continue
        markets[market] = np.asarray(given, dtype=float)
        if markets[market].shape != shape:
            raise ValueError(f"market {market!r} must have shape {shape}")
    return markets


def _pool_weights(m: _Matches, model, markets, outcomes, order, config) -> dict[str, np.ndarray]:
    """Per row and market, the weight fitted on rows that kicked off before the row's cutoff."""
    sorted_kickoff = m.kickoff[order]
    weights = {market: np.empty(len(m.kickoff)) for market in MARKETS}
    for cut in np.unique(m.cutoff):
        past = order[: np.searchsorted(sorted_kickoff, cut, side="left")]
        rows = m.cutoff == cut
        for market in MARKETS:
            weights[market][rows] = pooling.fit_weight(
                model[market][past],
                markets[market][past],
                outcomes[market][past],
                prior=config.pool_prior_weight,
                min_rows=config.min_pool_rows,
            )
    for market in MARKETS:
        # Without a market the model is all there is, and the row says so.
        weights[market][~pooling.market_available(markets[market])] = 1.0
    return weights


def run(inp: WalkForwardInput, config: ModelConfig = ModelConfig()) -> WalkForwardOutput:
    """Predict every row walk-forward: weekly per-group Dixon-Coles fits pooled with the market."""
    m = _matches(inp)
    n = len(m.kickoff)
    markets = _markets(inp, n)
    # A canonical order (not the input's) makes the fits independent of how rows were listed.
    order = np.lexsort((m.away, m.home, m.group, m.kickoff))
    pred = _Predictions(
        home_rate=np.empty(n),
        away_rate=np.empty(n),
        rho=np.empty(n),
        history_home=np.zeros(n, dtype=np.int64),
        history_away=np.zeros(n, dtype=np.int64),
        strengths=np.empty((n, 5)),
    )
    sorted_group = m.group[order]
    for g in np.unique(m.group):
        _forecast_group(order[sorted_group == g], m, config, pred)

    model = market_probabilities(score_matrix(pred.home_rate, pred.away_rate, pred.rho))
    outcomes = outcome_indices(
        np.where(m.has_result, m.home_goals, np.nan), np.where(m.has_result, m.away_goals, np.nan)
    )
    pool_weight = _pool_weights(m, model, markets, outcomes, order, config)
    published = {
        market: pooling.pool(model[market], markets[market], pool_weight[market])
        for market in MARKETS
    }
    return WalkForwardOutput(
        model=model,
        published=published,
        pool_weight=pool_weight,
        fitted_at=m.cutoff,
        history_home=pred.history_home,
        history_away=pred.history_away,
        strengths=pred.strengths,
        expected_goals=np.column_stack([pred.home_rate, pred.away_rate]),
        fits=pred.fits,
        unconverged=pred.unconverged,
    )
