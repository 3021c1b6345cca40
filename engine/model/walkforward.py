"""Walk-forward forecasts: a goal model per group, pooled with the sharp market.

The goal model is a chain: market-implied team ratings (``engine.model.market_ratings``, fitted on
past closing lines) where both teams have priced history in the window, else Dixon-Coles fitted
on past goals. Every row is predicted by fits of its group on matches that kicked off strictly
before the row's cutoff (the Monday 00:00 UTC that starts its kick-off week, capped at ``now``),
and its published probabilities pool the goal model with the de-margined sharp pre-match line
using weights fitted on earlier rows of the leagues the goal model had seen
(``min_league_matches`` results of the row's league in its window), and applied only once the
goal model has seen the row's league: before that, the market alone. So nothing a row's
forecast uses could have been unknown when the forecast was made, and appending later matches
to the input never changes an earlier row's output.
"""

from dataclasses import dataclass, replace

import numpy as np

from engine.markets import MARKETS, outcome_indices
from engine.model import dixon_coles, market_ratings, pooling, timeline
from engine.model.scores import market_probabilities, score_matrix
from engine.model.timeline import DAY, needed_cutoffs, weeks
from enums import GOAL_SOURCES

MODEL_NAME = "goal-chain-market-pool"
#: 3.0.0: margins removed by the best calibrated method (power by default, each prediction
#: records its own), a pool weight adopted only on significant evidence, picks rated by the
#: expected log growth of a Kelly stake, data quality from what is known before kick-off.
#: 2.0.0: market-implied ratings lead the goal model where they cover a match (1.0.0 was
#: Dixon-Coles alone). ``model backfill --rebuild`` re-predicts the backfilled history with the
#: current version.
MODEL_VERSION = "3.0.0"

RATINGS_CONFIG = market_ratings.RatingsConfig()

#: Ten rounds of a 20-team league: each side has about ten results in the window, half the
#: data-quality history target (``engine.betting.picks``), and a new league's goal model has left
#: the prior it starts from (``ModelConfig.min_matches``) five times over. See docs/method.md.
MIN_LEAGUE_MATCHES = 100

#: Where a goal-model row came from: the market-implied ratings, or Dixon-Coles on goals.
RATINGS_SOURCE, GOALS_SOURCE = GOAL_SOURCES


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
    #: Results of a row's league in the window before the row's cutoff below which the goal
    #: model has not seen the league: pool weight 0 (the market alone), and no pick.
    min_league_matches: int = MIN_LEAGUE_MATCHES

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
    #: De-margined closing probabilities ("1x2", "ou25") of matches that were played, NaN rows
    #: elsewhere: what the market-implied ratings learn from. None: Dixon-Coles alone.
    closing: dict[str, np.ndarray] | None = None
    #: Closing lines of markets quoted at a line ("ah", "ou": line (n,), probabilities (n, 2)),
    #: as ``market_ratings.RatingsInput.closing_lines``; used only with ``closing``.
    closing_lines: dict[str, tuple[np.ndarray, np.ndarray]] | None = None
    #: int64 league per match, where history is counted and pool weights are fitted (the
    #: groups are countries: two leagues of one country share a goal model). None: the group.
    league: np.ndarray | None = None


@dataclass
class WalkForwardOutput:
    """Forecasts per input row, in input order."""

    model: dict[str, np.ndarray]  # the goal model's probabilities per market, (n, k)
    published: dict[str, np.ndarray]  # pooled probabilities per market, (n, k)
    dixon_coles: dict[str, np.ndarray]  # Dixon-Coles' own probabilities per market, (n, k)
    #: The market-implied ratings' forecasts (None without closing lines); where
    #: ``ratings.covered`` the goal model is theirs.
    ratings: market_ratings.RatingsOutput | None
    goal_source: np.ndarray  # (n,) RATINGS_SOURCE or GOALS_SOURCE
    #: (n,) weight on the model: 0 (the market alone) while the league is unseen, 1 where there
    #: is no market (the goal model is all there is; unseen, it is only the prior: no pick)
    pool_weight: dict[str, np.ndarray]
    #: (n,) results of the row's league in the goal model's window before the row's cutoff
    league_history: np.ndarray
    fitted_at: np.ndarray  # (n,) int64 cutoff of the fit that predicted the row
    history_home: np.ndarray  # (n,) prior matches of the home team inside the fit's window
    history_away: np.ndarray
    #: (n, 5) attack_home, defence_home, attack_away, defence_away, home advantage (log scale;
    #: a higher defence concedes fewer goals)
    strengths: np.ndarray
    expected_goals: np.ndarray  # (n, 2) the model's home and away goal rates
    #: (n, 2) and (n,): the goal model the chain used per row, the market-implied ratings'
    #: expected goals and ``RATINGS_CONFIG.rho`` where covered, else Dixon-Coles' rates and rho
    #: (what ``engine.model.lines`` reads line markets from).
    goal_rates: np.ndarray
    goal_rho: np.ndarray
    fits: int = 0  # Dixon-Coles fits run, all groups
    unconverged: int = 0  # of which the optimiser stopped before converging


@dataclass
class _Matches:
    """The input as plain arrays, with which rows have a usable result and each row's cutoff."""

    kickoff: np.ndarray
    group: np.ndarray
    league: np.ndarray
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


def _forecast_group(
    rows: np.ndarray, m: _Matches, config: ModelConfig, out: _Predictions, needed=None, tick=None
):
    """Weekly refits of one group, written into ``out``; ``rows`` are sorted by kick-off.

    With ``needed`` (cut-offs), only those fits are made: the first from a cold start, each
    later one from the fit before it. ``tick()`` is called after each week.
    """
    fit_config = config.fit_config()
    decay = np.log(2.0) / (config.half_life_days * DAY)
    window = int(config.window_days) * DAY
    newcomer_matches = max(config.newcomer_matches, 1)
    unseen = (-config.newcomer_strength, -config.newcomer_strength)
    prev_fit, prev_ids = None, np.empty(0, dtype=np.int64)
    for week in weeks(rows, m.cutoff, m.kickoff, m.home, m.away, m.has_result, window, needed):
        sel, ids = week.train, week.teams
        # Teams new to a group are mostly promoted ones: they start below average, not at it.
        centre = -config.newcomer_strength * np.clip(1.0 - week.played / newcomer_matches, 0.0, 1.0)
        if len(sel) < config.min_matches:
            fit = replace(dixon_coles.prior_fit(len(ids)), attack=centre, defence=centre)
        else:
            fit = dixon_coles.fit(
                week.home,
                week.away,
                m.home_goals[sel],
                m.away_goals[sel],
                np.exp(-decay * (week.cutoff - m.kickoff[sel]).astype(float)),
                len(ids),
                init=None if prev_fit is None else _reindex(prev_fit, prev_ids, ids),
                config=fit_config,
                prior=(centre, centre),
            )
            out.fits += 1
            out.unconverged += not fit.converged
            prev_fit, prev_ids = fit, ids
        target, th, ta = week.target, week.target_home, week.target_away
        att_h, def_h = dixon_coles.strengths(fit, th, unseen)
        att_a, def_a = dixon_coles.strengths(fit, ta, unseen)
        out.home_rate[target], out.away_rate[target] = dixon_coles.rates(fit, th, ta, unseen)
        out.rho[target] = fit.rho
        out.history_home[target], out.history_away[target] = week.history()
        out.strengths[target] = np.column_stack(
            [att_h, def_h, att_a, def_a, np.full(len(target), fit.home)]
        )
        if tick is not None:
            tick()


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
    arrays["league"] = (
        arrays["group"] if inp.league is None else np.asarray(inp.league, dtype=np.int64)
    )
    for name, arr in arrays.items():
        if arr.shape != (n,):
            raise ValueError(f"{name} must have shape ({n},), not {arr.shape}")
    now = int(inp.now)
    has_result = (
        np.isfinite(arrays["home_goals"]) & np.isfinite(arrays["away_goals"]) & (kickoff < now)
    )
    cutoff = timeline.cutoff(kickoff, now)
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


def league_history(league, kickoff, has_result, cutoff, window: int) -> np.ndarray:
    """(n,) results of each row's league that kicked off in the ``window`` seconds before the
    row's cutoff, never at or after it: the matches the goal model has seen of the league."""
    league = np.asarray(league)
    kickoff = np.asarray(kickoff, dtype=np.int64)
    cutoff = np.asarray(cutoff, dtype=np.int64)
    counts = np.zeros(len(league), dtype=np.int64)
    for value in np.unique(league):
        rows = league == value
        played = np.sort(kickoff[rows & np.asarray(has_result, dtype=bool)])
        cut = cutoff[rows]
        counts[rows] = np.searchsorted(played, cut, side="left") - np.searchsorted(
            played, cut - window, side="left"
        )
    return counts


def _pool_weights(m: _Matches, model, markets, outcomes, order, seen, config):
    """Per market, each row's weight fitted on the rows that kicked off before its cutoff while
    the goal model had seen their league (one weight across those leagues: fitted league by
    league, the significance test adopts noise in some of them, see docs/method.md); 0 where the
    row's league is unseen."""
    return {
        market: pooling.walk_forward_weights(
            np.zeros(len(m.league), dtype=np.int64),
            m.cutoff,
            m.kickoff,
            model[market],
            markets[market],
            outcomes[market],
            prior=config.pool_prior_weight,
            min_rows=config.min_pool_rows,
            eligible=seen,
            order=order,
        )
        for market in MARKETS
    }


def _given_weights(pool_weights, seen) -> dict[str, np.ndarray]:
    """Per market, each row's weight from the caller's ``{market: weight}``; 0 where the row's
    league is unseen."""
    return {market: np.where(seen, float(pool_weights[market]), 0.0) for market in MARKETS}


def run(
    inp: WalkForwardInput,
    config: ModelConfig = ModelConfig(),
    rows=None,
    pool_weights: dict[str, float] | None = None,
    progress=None,
) -> WalkForwardOutput:
    """Predict every row walk-forward: weekly per-group goal models pooled with the market.

    ``rows`` limits the work to those rows (the others' outputs are NaN): only their cut-offs
    are fitted, each from a cold start, and ``pool_weights`` (one per market, fitted on earlier
    matches of the seen leagues by the caller) replace the walk-forward weights.
    ``progress(done, total)`` hears of each group-week fitted.
    """
    m = _matches(inp)
    n = len(m.kickoff)
    markets = _markets(inp, n)
    if rows is not None and pool_weights is None:
        raise ValueError("a run over some rows needs the pool weights")
    needed = needed_cutoffs(m.cutoff, rows)
    # A canonical order (not the input's) makes the fits independent of how rows were listed.
    order = np.lexsort((m.away, m.home, m.group, m.kickoff))
    pred = _Predictions(
        home_rate=np.full(n, np.nan),
        away_rate=np.full(n, np.nan),
        rho=np.zeros(n),
        history_home=np.zeros(n, dtype=np.int64),
        history_away=np.zeros(n, dtype=np.int64),
        strengths=np.full((n, 5), np.nan),
    )
    sorted_group = m.group[order]
    groups = np.unique(m.group if rows is None else m.group[np.asarray(rows, dtype=np.intp)])
    tick = None
    if progress is not None:
        todo = np.unique(np.column_stack([m.group, m.cutoff]), axis=0)
        todo = todo[np.isin(todo[:, 0], groups)]
        if needed is not None:
            todo = todo[np.isin(todo[:, 1], needed)]
        done = iter(range(1, len(todo) + 1))

        def tick():
            progress(next(done), len(todo))

    for g in groups:
        _forecast_group(order[sorted_group == g], m, config, pred, needed, tick)

    goals = market_probabilities(score_matrix(pred.home_rate, pred.away_rate, pred.rho))
    ratings = None
    covered = np.zeros(n, dtype=bool)
    if inp.closing is not None:
        ratings = market_ratings.run(
            market_ratings.RatingsInput(
                kickoff=m.kickoff,
                group=m.group,
                home=m.home,
                away=m.away,
                closing=inp.closing,
                now=inp.now,
                closing_lines=inp.closing_lines,
            ),
            RATINGS_CONFIG,
            rows,
        )
        covered = ratings.covered
    model = market_ratings.with_fallback(ratings, goals) if ratings is not None else goals
    outcomes = outcome_indices(
        np.where(m.has_result, m.home_goals, np.nan), np.where(m.has_result, m.away_goals, np.nan)
    )
    history = league_history(
        m.league, m.kickoff, m.has_result, m.cutoff, int(config.window_days) * DAY
    )
    seen = history >= config.min_league_matches
    if pool_weights is None:
        pool_weight = _pool_weights(m, model, markets, outcomes, order, seen, config)
    else:
        pool_weight = _given_weights(pool_weights, seen)
    for market in MARKETS:
        # Without a market the model is all there is, and the row says so (where the league is
        # unseen that is only the goal model's prior: the forecast makes no pick of it).
        pool_weight[market][~pooling.market_available(markets[market])] = 1.0
    published = {
        market: pooling.pool(model[market], markets[market], pool_weight[market])
        for market in MARKETS
    }
    return WalkForwardOutput(
        model=model,
        published=published,
        dixon_coles=goals,
        ratings=ratings,
        goal_source=np.where(covered, RATINGS_SOURCE, GOALS_SOURCE),
        pool_weight=pool_weight,
        league_history=history,
        fitted_at=m.cutoff,
        history_home=pred.history_home,
        history_away=pred.history_away,
        strengths=pred.strengths,
        expected_goals=np.column_stack([pred.home_rate, pred.away_rate]),
        goal_rates=np.where(
            covered[:, None],
            ratings.expected_goals if ratings is not None else np.nan,
            np.column_stack([pred.home_rate, pred.away_rate]),
        ),
        goal_rho=np.where(covered, RATINGS_CONFIG.rho, pred.rho),
        fits=pred.fits,
        unconverged=pred.unconverged,
    )
