"""Market-implied team ratings: goal rates solved from closing prices, then weekly team ratings.

Each past match's de-margined closing 1x2 (and, where quoted, over/under 2.5, and the Asian
handicap and over/under at other lines, at their ``observation_weights``) probabilities are
turned into the Poisson goal rates (lambda_home, lambda_away) whose score matrix reproduces them
best in weighted least squares. Those rates are near-noiseless measurements of what the market
thought of both sides, so team strengths follow from a weighted, ridge-penalised linear least
squares on

    log lambda_home = intercept + home + attack[home] - defence[away]
    log lambda_away = intercept + attack[away] - defence[home]

with a short exponential time decay. Walk-forward exactly as ``engine.model.walkforward``: one fit
per group and weekly cutoff (daily with ``RatingsConfig.daily_cutoff``), trained on matches that
kicked off strictly before it, so a row never sees its own prices or anything later, and appending
later matches never changes earlier rows.
"""

from dataclasses import dataclass

import numpy as np

from engine.markets import MARKETS
from engine.model import dixon_coles, shots, standings, timeline
from engine.model.implied_rates import solve_rates
from engine.model.scores import market_probabilities, score_matrix
from engine.model.timeline import DAY, needed_cutoffs, weeks

#: The markets whose closing lines the ratings learn from: match-indexed ones, and those quoted
#: at a line (``RatingsInput.closing_lines``).
LEARNS_FROM = ("1x2", "ou25")
LINES_LEARNED = ("ah", "ou")


@dataclass(frozen=True)
class RatingsConfig:
    """The ratings' knobs, chosen walk-forward on football-data (``bench/market_ratings.py``).

    The curves, each knob moved alone from these defaults: 1x2 RPS ÷ Pinnacle closing RPS over
    the 7,050 E0, SP1, D1 and F1 matches of 2019/20-2023/24 (each league's third season on).

    - half_life_days 7: 1.0165, 10: 1.0136, 14: 1.0126, 17: 1.0125, 21: 1.0126, 28: 1.0130,
      42: 1.0138, 60: 1.0150, 90: 1.0166, 120: 1.0178. Short memories win: a closing line
      already holds form and injuries, so older lines are mostly stale. Flat from 14 to 21.
    - ridge 0.001: 1.0125, 0.003: 1.0125, 0.01: 1.0126, 0.03: 1.0129, 0.1: 1.0142,
      0.3: 1.0176, 1: 1.0304. Solved rates are nearly noiseless, so shrinking them only costs;
      the ridge is there to identify the ratings. 0.01 is the top of the flat stretch, the
      best-conditioned system at no measurable cost.
    - rho 0: 1.0130, -0.04: 1.0126, -0.08: 1.0125, -0.12: 1.0125 (over/under 2.5 log loss
      1.0054, 1.0051, 1.0048, 1.0047). A negative rho fits the market's draw prices better;
      -0.04 takes most of the gain, and the Championship's 2023/24 stays below 1.02 (1.0198;
      1.0204 at -0.08).
    - window_days 120: 1.0129, 180: 1.0127, 270 and 365: 1.0126, 730: 1.0130.
    - newcomer_strength 0: 1.0136, 0.1: 1.0130, 0.2 and 0.3: 1.0126 (the value Dixon-Coles uses).
    - min_priced_matches, scored as "ratings where covered, else Dixon-Coles": 0 and 1: 1.0126,
      2: 1.0136, 3: 1.0145, 4: 1.0140, 6: 1.0131, 10: 1.0152. A team with one priced match is
      already rated better than Dixon-Coles rates it; with none its rating is only the prior,
      which is all a league without odds would ever get.
    - min_group_matches is Dixon-Coles' min_matches; no group of the data set falls below it
      after its first weeks.
    - observation_weights, chosen on E0+SP1 and read on D1+F1 (2019/20-2023/24) and E1's
      2023/24, as "ratings where covered, else Dixon-Coles": the closing Asian handicap
      (Pinnacle's, else the market average's, de-margined by power; 8,159 of the 11,051
      matches) at weight 0: E0+SP1 1.0138, D1+F1 1.0112, E1 1.0176, all 1.0126; 0.25: 1.0139,
      1.0113, 1.0174, 1.0127; 1: 1.0141, 1.0115, 1.0172, 1.0129; 8: 1.0142, 1.0116, 1.0170,
      1.0130. The handicap moves the solved rates away from what reproduces the 1x2 line and
      no league but the Championship gains; the model's own handicap log loss at the closing
      line does not gain either (÷ Pinnacle's: 1.0109 at weight 0, 1.0110 at 1, over all
      leagues). Off. Over/under 2.5 at 0: 1.0144, 1.0106, 1.0182; 0.25: 1.0138, 1.0111,
      1.0176; 1 and 2: 1.0138, 1.0112, 1.0176 (all 1.0126 throughout). With 1x2 at 0.1-0.25
      and the handicap at 1-4 (the handicap measuring the goal difference): E0+SP1 1.0142-1.0143.
      Over/under at other lines than 2.5 weighs as 2.5 does: the data set has none to choose on.
    """

    half_life_days: float = 14.0  # exponential time decay of a past match's weight
    window_days: int = 365  # matches older than this before the cutoff are not used
    ridge: float = 0.01  # L2 penalty on attack/defence, in matches of full weight
    rho: float = -0.04  # Dixon-Coles low-score correction in the solver's and forecasts' matrices
    min_priced_matches: int = 1  # priced matches in the window each side needs to be covered
    min_group_matches: int = 20  # fewer priced matches in a group's window and no fit is made
    newcomer_strength: float = 0.2  # attack and defence deficit of a team without priced history
    solver_iterations: int = 20  # Levenberg-Marquardt iterations at most; real lines need 3
    #: Weight of each market's squared residuals in the rate solver (a market not listed
    #: weighs 1; 0 ignores it). The closing Asian handicap is off: see the curves above.
    observation_weights: tuple[tuple[str, float], ...] = (
        ("1x2", 1.0),
        ("ou25", 1.0),
        ("ah", 0.0),
        ("ou", 1.0),
    )
    #: How far each past match's solved rates move towards its goals and its shots on target
    #: (``engine.model.shots.moved_rates``; ``RatingsInput.observed``). Off: on E0+SP1 every
    #: weight costs (goals 0.05: +0.0008 ± 0.0008 × the close's RPS; shots 0.05: +0.0003 ±
    #: 0.0005; ``bench/goal_model.py``): the closing lines already hold what matches showed.
    goal_weight: float = 0.0
    shots_weight: float = 0.0
    #: A long memory beside the short one: each past match weighs
    #: 0.5^(age / half_life_days) + long_share · 0.5^(age / long_half_life_days)
    #: (``match_weights``). Off: chosen on E0+SP1 at 90 days and 0.05 (−0.00097 ± 0.00067 × the
    #: close's RPS there), it cost +0.00053 ± 0.00086 on D1, F1 and E1's 2nd season
    #: (``bench/goal_model.py``).
    long_half_life_days: float = 90.0
    long_share: float = 0.0
    #: Fit each match on the lines of every match kicked off before its own day (00:00 UTC,
    #: ``timeline.day_cutoff``) rather than before its week (Monday 00:00 UTC). Off: −0.00010 ±
    #: 0.00081 on E0+SP1, −0.00062 ± 0.00059 on the confirmation leagues; with the long memory
    #: (the combination chosen on E0+SP1: −0.00141 ± 0.00092) +0.00001 ± 0.00103 there.
    daily_cutoff: bool = False
    #: What is at stake (``engine.model.standings``; ``RatingsInput.competition``): a side that
    #: can no longer move between the table's zones (title, European places, relegation) has
    #: its own goal rate × (1 + dead_attack) and its opponent's × (1 + dead_defence); with
    #: ``dead_learned`` both come from the closing lines of earlier such matches instead
    #: (``standings.learned_effects``); ``dead_pace``: the most points a match a side is taken
    #: to win (3: mathematically; less calls a side settled sooner). ``late_goals``: both rates ×
    #: (1 + late_goals) where a side has at most ``late_left`` matches left. Off: chosen on
    #: E0+SP1 at pace 1.5, own −5 %, opponent +10 % (−0.00158 ± 0.00073 × the close's RPS
    #: there), it gained −0.00023 ± 0.00070 on D1, F1 and E1's 2nd season, not 2 standard
    #: errors (``bench/goal_model.py``, section 4).
    dead_attack: float = 0.0
    dead_defence: float = 0.0
    dead_learned: bool = False
    dead_pace: float = 3.0
    late_goals: float = 0.0
    late_left: int = 8


@dataclass
class RatingsInput:
    """Every match to predict, with the de-margined closing prices of those that have them."""

    kickoff: np.ndarray  # int64 epoch seconds (UTC), shape (n,)
    group: np.ndarray  # int64 fit group per match (e.g. one per country)
    home: np.ndarray  # int64 team id (any integers)
    away: np.ndarray
    #: "1x2" (n, 3) home/draw/away and "ou25" (n, 2) over/under de-margined closing
    #: probabilities, NaN rows where none; a match that was not played must have NaN rows.
    closing: dict[str, np.ndarray]
    now: int  # epoch seconds; matches kicking off after now have no closing line yet
    #: Closing lines of markets quoted at a line, one per match: "ah" (line (n,), the home
    #: side's handicap; fair probabilities (n, 2) home/away de-margined) and "ou" (line (n,),
    #: probabilities (n, 2) over/under), NaN rows where none. None: 1x2 and ou25 only.
    closing_lines: dict[str, tuple[np.ndarray, np.ndarray]] | None = None
    #: What happened in each match: goals and shots on target, each (n, 2) home/away, NaN
    #: where unknown. None: the config's goal and shots weights have nothing to move.
    observed: tuple[np.ndarray, np.ndarray] | None = None
    #: Each match's competition and season (any ids: one per league table), for what is at
    #: stake (``RatingsConfig.dead_attack`` and kin), its table read from ``observed``'s goals.
    #: A table's sides are those its rows name, so give a season's whole fixture list. None:
    #: nothing is at stake.
    competition: np.ndarray | None = None


@dataclass(frozen=True)
class Ratings:
    """One fit's parameters (log scale) for ``len(attack)`` teams; higher defence concedes less."""

    attack: np.ndarray
    defence: np.ndarray
    intercept: float
    home: float


@dataclass
class RatingsOutput:
    """Forecasts per input row, in input order."""

    probabilities: dict[str, np.ndarray]  # per market, (n, k), from the predicted rates
    expected_goals: np.ndarray  # (n, 2) predicted home and away goal rates
    fitted_at: np.ndarray  # (n,) int64 cutoff of the fit that predicted the row
    priced_home: np.ndarray  # (n,) priced matches of the home team inside the fit's window
    priced_away: np.ndarray
    #: (n,) bool: the group's fit was made and both teams have at least min_priced_matches
    #: priced matches in its window. Where False the ratings are a prior: use Dixon-Coles.
    covered: np.ndarray
    strengths: np.ndarray  # (n, 5) attack_home, defence_home, attack_away, defence_away, home
    fits: int = 0  # ratings fits run, all groups
    priced: int = 0  # input rows whose closing prices gave goal rates


def match_weights(age, config: RatingsConfig) -> np.ndarray:
    """Each past match's weight in a fit, from its ``age`` (seconds before the newest match the
    fit uses): the short exponential decay, plus ``long_share`` of a slower one."""
    age = np.asarray(age, dtype=float)
    # exp(−ln 2 · age / half-life): the published model's weights to the last bit.
    weights = np.exp(-np.log(2.0) / (config.half_life_days * DAY) * age)
    if config.long_share:
        weights = weights + config.long_share * 0.5 ** (age / (config.long_half_life_days * DAY))
    return weights


def fit_ratings(
    home_idx, away_idx, log_home_rate, log_away_rate, weights, n_teams: int, ridge: float
) -> Ratings:
    """Weighted ridge least squares of team ratings on log goal rates of ``n_teams`` teams.

    ``home_idx``/``away_idx`` are dense team indices in [0, n_teams), ``weights`` each match's
    non-negative weight (both of its equations share it). The ridge pulls attack and defence to
    0 (the average team) and identifies them; intercept and home advantage are not penalised.
    """
    if ridge <= 0:
        raise ValueError("the ridge must be positive: it is what identifies the ratings")
    hi = np.asarray(home_idx, dtype=np.intp)
    ai = np.asarray(away_idx, dtype=np.intp)
    w = np.asarray(weights, dtype=float)
    if not (w > 0).any():
        return prior_ratings(n_teams)
    m = len(hi)
    p = 2 * n_teams + 2
    mu_col, home_col = 2 * n_teams, 2 * n_teams + 1
    # Two equations per match, four non-zero columns each (the away one's fourth is a dummy 0).
    cols = np.concatenate(
        [
            np.column_stack([hi, n_teams + ai, np.full(m, mu_col), np.full(m, home_col)]),
            np.column_stack([ai, n_teams + hi, np.full(m, mu_col), np.full(m, home_col)]),
        ]
    )
    coef = np.concatenate(
        [np.tile([1.0, -1.0, 1.0, 1.0], (m, 1)), np.tile([1.0, -1.0, 1.0, 0.0], (m, 1))]
    )
    y = np.concatenate([np.asarray(log_home_rate, float), np.asarray(log_away_rate, float)])
    ww = np.concatenate([w, w])
    wc = ww[:, None] * coef
    pair = (cols[:, :, None] * p + cols[:, None, :]).ravel()
    normal = np.bincount(pair, (wc[:, :, None] * coef[:, None, :]).ravel(), p * p).reshape(p, p)
    rhs = np.bincount(cols.ravel(), (wc * y[:, None]).ravel(), p)
    # One match of positive weight identifies intercept and home advantage; they stay free.
    normal[np.diag_indices(p)] += np.r_[np.full(2 * n_teams, float(ridge)), 0.0, 0.0]
    beta = np.linalg.solve(normal, rhs)
    return Ratings(
        attack=beta[:n_teams],
        defence=beta[n_teams : 2 * n_teams],
        intercept=float(beta[mu_col]),
        home=float(beta[home_col]),
    )


def prior_ratings(n_teams: int) -> Ratings:
    """The ratings with no priced match at all: average teams, typical league goal rates."""
    return Ratings(
        attack=np.zeros(n_teams),
        defence=np.zeros(n_teams),
        intercept=dixon_coles.PRIOR_INTERCEPT,
        home=dixon_coles.PRIOR_HOME,
    )


#: (attack, defence) of teams by index and the expected goals of matches, read from ratings as
#: from a Dixon-Coles fit (the same attack, defence, intercept and home); -1 is an unseen team.
strengths = dixon_coles.strengths
rates = dixon_coles.rates


@dataclass
class _Rows:
    """The input as plain arrays with each row's cutoff and solved log goal rates."""

    kickoff: np.ndarray
    group: np.ndarray
    home: np.ndarray
    away: np.ndarray
    cutoff: np.ndarray
    log_rates: np.ndarray  # (n, 2), NaN where the row has no usable closing line
    priced: np.ndarray  # (n,) bool, the row can train later fits


def _rows(inp: RatingsInput, config: RatingsConfig) -> _Rows:
    """Validated arrays of the input, the closing lines solved into goal rates."""
    kickoff = np.asarray(inp.kickoff, dtype=np.int64)
    n = len(kickoff)
    arrays = {
        "group": np.asarray(inp.group, dtype=np.int64),
        "home": np.asarray(inp.home, dtype=np.int64),
        "away": np.asarray(inp.away, dtype=np.int64),
    }
    for name, arr in arrays.items():
        if arr.shape != (n,):
            raise ValueError(f"{name} must have shape ({n},), not {arr.shape}")
    closing = {}
    for market in LEARNS_FROM:
        k = len(MARKETS[market])
        given = inp.closing.get(market)
        closing[market] = np.full((n, k), np.nan) if given is None else np.asarray(given, float)
        if closing[market].shape != (n, k):
            raise ValueError(f"closing {market!r} must have shape ({n}, {k})")
    now = int(inp.now)
    # Only lines of matches that have kicked off are closing lines; later ones are never used.
    started = kickoff < now
    p1 = np.where(started[:, None], closing["1x2"], np.nan)
    pou = np.where(started[:, None], closing["ou25"], np.nan)
    lines = {}
    for market, (line, probs) in (inp.closing_lines or {}).items():
        if market not in LINES_LEARNED:
            raise ValueError(f"closing lines of {market!r}: only {', '.join(LINES_LEARNED)}")
        line, probs = np.asarray(line, dtype=float), np.asarray(probs, dtype=float)
        if line.shape != (n,) or probs.shape != (n, 2):
            raise ValueError(f"closing line {market!r} must have shapes ({n},) and ({n}, 2)")
        lines[market] = (np.where(started, line, np.nan), probs)
    home_rate, away_rate = solve_rates(
        p1,
        pou,
        config.rho,
        config.solver_iterations,
        lines=lines,
        weights=dict(config.observation_weights),
    )
    solved = np.column_stack([home_rate, away_rate])  # NaN where not kicked off before now
    if inp.observed is not None and (config.goal_weight or config.shots_weight):
        solved = shots.observed_rates(solved, kickoff, *inp.observed, config)
    log_rates = np.log(solved)
    return _Rows(
        kickoff=kickoff,
        cutoff=(timeline.day_cutoff if config.daily_cutoff else timeline.cutoff)(kickoff, now),
        log_rates=log_rates,
        priced=np.isfinite(log_rates).all(axis=1),
        **arrays,
    )


@dataclass
class _Predictions:
    """What the weekly fits produce per input row."""

    home_rate: np.ndarray
    away_rate: np.ndarray
    priced_home: np.ndarray
    priced_away: np.ndarray
    fitted: np.ndarray  # (n,) bool, the row's group had a fit at its cutoff
    strengths: np.ndarray
    fits: int = 0


def _forecast_group(
    rows: np.ndarray, r: _Rows, config: RatingsConfig, out: _Predictions, needed=None
):
    """Weekly fits of one group, written into ``out``; ``rows`` are sorted by kick-off.

    With ``needed`` (cut-offs), only those fits are made.
    """
    window = int(config.window_days) * DAY
    unseen = (-config.newcomer_strength, -config.newcomer_strength)
    for week in weeks(rows, r.cutoff, r.kickoff, r.home, r.away, r.priced, window, needed):
        sel = week.train
        fitted = len(sel) >= max(config.min_group_matches, 1)
        if not fitted:
            ratings = prior_ratings(len(week.teams))
        else:
            # Ages count from the newest match used, not the cutoff: after a summer break the
            # last season's ratings keep their full weight against the ridge.
            age = (r.kickoff[sel[-1]] - r.kickoff[sel]).astype(float)
            ratings = fit_ratings(
                week.home,
                week.away,
                r.log_rates[sel, 0],
                r.log_rates[sel, 1],
                match_weights(age, config),
                len(week.teams),
                config.ridge,
            )
            out.fits += 1
        target, th, ta = week.target, week.target_home, week.target_away
        att_h, def_h = strengths(ratings, th, unseen)
        att_a, def_a = strengths(ratings, ta, unseen)
        out.home_rate[target], out.away_rate[target] = rates(ratings, th, ta, unseen)
        out.priced_home[target], out.priced_away[target] = week.history()
        out.fitted[target] = fitted
        out.strengths[target] = np.column_stack(
            [att_h, def_h, att_a, def_a, np.full(len(target), ratings.home)]
        )


def run(inp: RatingsInput, config: RatingsConfig = RatingsConfig(), rows=None) -> RatingsOutput:
    """Predict every row walk-forward from weekly per-group ratings fitted on closing prices.

    ``rows`` limits the fits to those rows' cut-offs (the other rows' outputs are NaN and not
    covered); the fits are the same as in a run over every row.
    """
    r = _rows(inp, config)
    n = len(r.kickoff)
    needed = needed_cutoffs(r.cutoff, rows)
    # A canonical order (not the input's) makes the fits independent of how rows were listed.
    order = np.lexsort((r.away, r.home, r.group, r.kickoff))
    pred = _Predictions(
        home_rate=np.full(n, np.nan),
        away_rate=np.full(n, np.nan),
        priced_home=np.zeros(n, dtype=np.int64),
        priced_away=np.zeros(n, dtype=np.int64),
        fitted=np.zeros(n, dtype=bool),
        strengths=np.full((n, 5), np.nan),
    )
    sorted_group = r.group[order]
    groups = np.unique(r.group if rows is None else r.group[np.asarray(rows, dtype=np.intp)])
    for g in groups:
        _forecast_group(order[sorted_group == g], r, config, pred, needed)
    if moved_by_stakes(config):
        factors = _stake_factors(inp, r, pred, config, rows)
        pred.home_rate, pred.away_rate = (
            pred.home_rate * factors[:, 0],
            pred.away_rate * factors[:, 1],
        )
    probabilities = market_probabilities(score_matrix(pred.home_rate, pred.away_rate, config.rho))
    return RatingsOutput(
        probabilities=probabilities,
        expected_goals=np.column_stack([pred.home_rate, pred.away_rate]),
        fitted_at=r.cutoff,
        priced_home=pred.priced_home,
        priced_away=pred.priced_away,
        covered=pred.fitted
        & (np.minimum(pred.priced_home, pred.priced_away) >= config.min_priced_matches),
        strengths=pred.strengths,
        fits=pred.fits,
        priced=int(r.priced.sum()),
    )


def moved_by_stakes(config: RatingsConfig) -> bool:
    """Whether ``config`` moves goal rates by what is at stake in the table."""
    return bool(
        config.dead_attack or config.dead_defence or config.dead_learned or config.late_goals
    )


def _stake_factors(inp: RatingsInput, r: _Rows, pred: _Predictions, config, rows) -> np.ndarray:
    """(n, 2) factors on the predicted home and away goal rates from the table at each row's
    cut-off (``engine.model.standings``)."""
    if inp.competition is None or inp.observed is None:
        raise ValueError("what is at stake needs each match's competition and observed goals")
    if config.dead_learned and rows is not None:
        raise ValueError("learned stakes need every row's forecast: run without rows")
    goals = np.asarray(inp.observed[0], dtype=float)
    # Only results of matches kicked off before now are known.
    goals = np.where((r.kickoff < int(inp.now))[:, None], goals, np.nan)
    stakes = standings.at_stake(
        inp.competition,
        r.kickoff,
        r.cutoff,
        r.home,
        r.away,
        goals[:, 0],
        goals[:, 1],
        config.dead_pace,
    )
    attack, defence = config.dead_attack, config.dead_defence
    if config.dead_learned:
        # Residuals of the rows the ratings covered: elsewhere the forecast is a prior.
        covered = pred.fitted & (
            np.minimum(pred.priced_home, pred.priced_away) >= config.min_priced_matches
        )
        predicted = np.log(np.column_stack([pred.home_rate, pred.away_rate]))
        residual = np.where(covered[:, None], r.log_rates - predicted, np.nan)
        attack, defence = standings.learned_effects(stakes, residual, r.kickoff, r.cutoff)
    return standings.goal_factors(stakes, attack, defence, config.late_goals, config.late_left)


def with_fallback(out: RatingsOutput, fallback: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Per market in ``fallback``, the ratings' probabilities where a row is covered, else its."""
    return {
        market: np.where(out.covered[:, None], out.probabilities[market], probs)
        for market, probs in fallback.items()
    }
