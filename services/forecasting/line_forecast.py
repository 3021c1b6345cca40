"""Markets quoted at a line (Asian handicap, over/under beyond 2.5 goals): one row per match and
line the bookmakers quote, forecast from the goal model's score grid and pooled with the
de-margined market line by line (``engine.model.lines``), then at most one pick per match and
market: the line and selection with the largest expected log growth."""

from dataclasses import dataclass

import numpy as np

from engine.betting import odds, picks
from engine.model import lines
from enums import LINE_MARKETS
from services.market import price_cubes


@dataclass
class LineMarket:
    """What the model and the market say about one line market, line row by line row."""

    match_row: np.ndarray  # (m,) the row of the forecast's matches each line row belongs to
    line: np.ndarray  # (m,) the line (the home side's handicap; the goals of an over/under)
    market_probs: np.ndarray  # (m, 2) de-margined sharp pre-match line, NaN rows where none
    model: np.ndarray  # (m, 2) the goal model's fair probabilities at the line
    published: np.ndarray  # (m, 2) pooled fair probabilities
    pool_weight: np.ndarray  # (m,) weight on the model
    at_risk: np.ndarray  # (m,) expected share of a stake not refunded (pushes refund it)
    source: np.ndarray  # (m,) what made the published probabilities (PREDICTION_SOURCES)
    best: tuple  # best price (m, 2) and its bookmaker's name (m, 2)
    quality: tuple  # data-quality score (m,) and its parts {name: (m,)}
    #: selection (m,), edge (m,), growth (m,), rating (m,): the selection is −1 except on the
    #: one line row of a match that is picked.
    choice: tuple
    pre_match: price_cubes.LineCube  # the quotes the picks were made from

    def rows_of(self, match_rows) -> np.ndarray:
        """The line rows of ``match_rows`` (forecast rows), in line order within each match."""
        wanted = np.isin(self.match_row, np.asarray(match_rows, dtype=np.int64))
        return np.flatnonzero(wanted)

    def picked(self, match_count: int) -> np.ndarray:
        """(match_count,) the picked line row of each match, −1 where none."""
        chosen = np.full(match_count, -1, dtype=np.int64)
        rows = np.flatnonzero(self.choice[0] >= 0)
        chosen[self.match_row[rows]] = rows
        return chosen


def main_lines(n: int, cubes, method: str, played) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per line market, the line of each played match whose de-margined sharp closing price is
    the most balanced (the line the market priced most closely) and its fair probabilities:
    ``{market: (line (n,), probabilities (n, 2))}``, NaN where none; what the market-implied
    ratings learn from."""
    found = {}
    for market, cube in cubes.items():
        fair = odds.sharp_probabilities(cube.prices, cube.bookmakers, method=method)[0]
        fair = np.where(played[cube.match_row, None], fair, np.nan)
        main = lines.main_rows(cube.match_row, fair, n)
        known = main >= 0
        line = np.full(n, np.nan)
        probs = np.full((n, 2), np.nan)
        line[known] = cube.line[main[known]]
        probs[known] = fair[main[known]]
        found[market] = (line, probs)
    return found


def _source(weight, market_probs, goal_source) -> np.ndarray:
    """What made each line row's published probabilities (as ``forecast._source`` says it)."""
    quoted = np.isfinite(market_probs).all(axis=1)
    return np.where(
        quoted & (weight == 0.0), "market", np.where(quoted & (weight < 1.0), "pool", goal_source)
    )


def _choose(goal_history, allowed, cube, published, at_risk, settings, thresholds):
    """Best prices, data quality, and the pick of each match: the line row and selection with
    the largest expected log growth among those ``picks.choose`` would take."""
    history_home, history_away = goal_history
    prices, book = odds.best_prices(cube.prices, cube.bookmakers)
    names = np.array([*cube.bookmakers, None], dtype=object)
    quality = picks.data_quality(
        history_home[cube.match_row],
        history_away[cube.match_row],
        odds.quoting_count(cube.prices, cube.bookmakers),
        odds.sharp_quotes(cube.prices, cube.bookmakers),
    )
    selection, edge, growth = picks.choose(
        published, prices, settings["PICK_MIN_EDGE"], settings["PICK_MIN_GROWTH"]
    )
    # A pushed stake comes back: a bet grows the bankroll only on the share at risk.
    growth = growth * at_risk
    candidate = (selection >= 0) & (growth >= settings["PICK_MIN_GROWTH"])
    candidate &= allowed[cube.match_row]
    rows = np.flatnonzero(candidate)
    # The largest growth first within each match: that row is the match's pick.
    order = rows[np.lexsort((-growth[rows], cube.match_row[rows]))]
    winners = order[np.unique(cube.match_row[order], return_index=True)[1]]
    chosen = np.full(len(selection), -1, dtype=np.int64)
    chosen[winners] = selection[winners]
    rating = picks.rate(growth, quality[0], thresholds)
    return (prices, names[book]), quality, (chosen, edge, growth, rating)


def forecast(
    history,
    output,
    cubes,
    settings,
    thresholds,
    goal_history,
    has_result,
    allowed,
    config,
    pool_weights=None,
):
    """Every line market's rows forecast and picked (see :class:`LineMarket`).

    ``history`` is the forecast's history, ``output`` the walk-forward output over it, ``cubes`` the
    pre-match line cubes, ``goal_history`` the matches behind each row's goal model (home, away),
    ``has_result`` (n,) which matches a weight may learn from, ``allowed`` (n,) the matches of a
    league the goal model has seen (the others get the market alone and no pick), ``config`` the
    model's (its pool weights' prior and minimum rows, as a refresh's stored weights use them),
    and ``pool_weights`` ``{market: {line: weight}}`` for a refresh. A market not in
    ``PICK_MARKETS`` gets no pick.
    """
    method = settings["MARGIN_METHOD"]
    found = {}
    for market in LINE_MARKETS:
        cube = cubes[market]
        market_probs = odds.sharp_probabilities(cube.prices, cube.bookmakers, method=method)[0]
        result = lines.forecast(
            market,
            cube.match_row,
            cube.line,
            market_probs,
            history.kickoff,
            output.fitted_at,
            output.goal_rates,
            output.goal_rho,
            history.home_goals,
            history.away_goals,
            has_result,
            prior=config.pool_prior_weight,
            min_rows=config.min_pool_rows,
            pool_weights=None if pool_weights is None else pool_weights.get(market, {}),
            eligible=allowed,
        )
        best, quality, choice = _choose(
            goal_history,
            allowed if market in settings["PICK_MARKETS"] else np.zeros_like(allowed),
            cube,
            result.published,
            result.at_risk,
            settings,
            thresholds,
        )
        found[market] = LineMarket(
            match_row=cube.match_row,
            line=cube.line,
            market_probs=market_probs,
            model=result.model,
            published=result.published,
            pool_weight=result.pool_weight,
            at_risk=result.at_risk,
            source=_source(result.pool_weight, market_probs, output.goal_source[cube.match_row]),
            best=best,
            quality=quality,
            choice=choice,
            pre_match=cube,
        )
    return found


def one_total_pick(fixed_choice, line_market: LineMarket, n: int) -> None:
    """At most one over/under pick per match: where the 2.5 line (``fixed_choice``, the
    ``ou25`` choice) and another line are both picked, the smaller expected log growth goes."""
    chosen = line_market.picked(n)
    both = np.flatnonzero((fixed_choice[0] >= 0) & (chosen >= 0))
    if not len(both):
        return
    line_rows = chosen[both]
    line_wins = line_market.choice[2][line_rows] > fixed_choice[2][both]
    fixed_choice[0][both[line_wins]] = -1
    line_market.choice[0][line_rows[~line_wins]] = -1
