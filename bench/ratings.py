"""How the pick and rating rule was chosen, and whether it holds on other leagues: fair closing
EV by rating and market.

    .venv/bin/python -m bench.ratings [--data DIR] [--database-url URL] [--smoke]

Imports the shared football-data set into a fresh database and runs the service's walk-forward
forecast (``services.forecasting.forecast.forecast``) with the configured ``MARGIN_METHOD``.
For every match and market (and line, where the forecast quotes a market at lines) it takes the
candidate pick (the selection with the largest edge, at least ``PICK_MIN_EDGE``), its expected
log growth and its data quality as the service computes them, and values it at the fair closing
price: odds × the selection's closing probability − 1, the close (Pinnacle's, else the market
average's, as settlement reads it) de-margined by power and by Shin, the two best calibrated
methods of ``bench/margins.py``.

Three parts of the set, so that a rule is confirmed on leagues it was not chosen on:

- **choice**: the leagues of :data:`CHOICE_LEAGUES` (the Premier League and La Liga), every season
  but their last :data:`LATER_SEASONS`;
- **confirmation**: every other league (Bundesliga, Ligue 1, the Championship), every season;
- **later**: the choice leagues' last :data:`LATER_SEASONS` seasons.

The choice: over a grid of thresholds on the expected log growth (the smallest that makes a pick,
and those of ``A`` and ``B``; the quality thresholds stay as configured), the one whose weakest
t-statistic among "C > 0", "B > C" and "A > B", under power and under Shin **and in each choice
league apart**, is the largest, with at least 15 % of each league's picks in each rating: a rule
that orders the ratings in one league only is not taken. The same search over edge thresholds,
and the rule of model 2.0.0 (edge 0.08 and 0.05), are printed beside it for comparison. Then,
per market, whether its picks on the choice part have a positive mean fair closing EV under both
methods (the markets that do are ``PICK_MARKETS``; the others get no picks), and for each pair of
adjacent ratings whether they can be told apart (the difference of their mean fair closing EVs
at least two standard errors of the difference).

The report users need, per market, line and rating on the confirmation part, with the configured
rule: picks, mean odds, fair closing EV under power and Shin with standard errors, realised ROI
with its standard error, and the share of picks by price band; then the same on the later part
and on the choice part (the figures ``PICK_MARKETS`` was chosen by).

``--smoke``: one file, whose one season stands for every part.
"""

import argparse
import itertools
from dataclasses import dataclass

import numpy as np

from bench.common import commit, data_arguments, fresh_app, parse_arguments
from clock import utcnow
from engine.betting import metrics, picks
from engine.betting.odds import closing_prices, remove_margin
from engine.markets import outcome_indices
from engine.model import lines
from enums import MARKET_SELECTIONS, MARKETS
from models import League, Match
from services.feeds import imports
from services.forecasting import forecast
from services.market import price_cubes
from store.database import db

#: The calibrated methods every rating must be worth it under.
METHODS = ("power", "shin")
#: The leagues the rule is chosen on; every other league confirms it.
CHOICE_LEAGUES = ("E0", "SP1")
#: The choice leagues' last seasons, held out of the choice as a second confirmation.
LATER_SEASONS = 2
PARTS = ("choice", "confirmation", "later")
MIN_SHARE = 0.15
#: Two ratings are told apart when their means differ by at least this many standard errors.
TOLD_APART = 2.0
GROWTHS = tuple(g * 1e-4 for g in (1, 1.5, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40))
MIN_GROWTHS = tuple(g * 1e-4 for g in (0, 0.5, 1, 1.5, 2, 3))
EDGES = tuple(round(e, 3) for e in np.arange(0.03, 0.155, 0.01))
MIN_EDGES = (0.02, 0.025, 0.03, 0.04)
BAND_NAMES = ("< 2", "2–4", "4–8", "≥ 8")
#: The line of each fixed market that has one (the over/under at 2.5 goals).
FIXED_LINES = {"ou25": 2.5}


@dataclass
class Candidates:
    """One candidate pick per row (match, market and line), as arrays."""

    market: np.ndarray
    line: np.ndarray  # NaN for a market without lines
    season: np.ndarray
    league: np.ndarray
    part: np.ndarray  # "choice", "confirmation" or "later"
    odds: np.ndarray
    edge: np.ndarray
    growth: np.ndarray
    quality: np.ndarray
    profit: np.ndarray  # units won or lost by a 1-unit stake
    closing_ev: dict  # method → (n,) odds × fair closing probability − 1 (NaN without a close)

    def __len__(self):
        return len(self.odds)

    def where(self, mask) -> "Candidates":
        """The rows of ``mask``."""
        return Candidates(
            **{
                name: {k: v[mask] for k, v in value.items()}
                if isinstance(value, dict)
                else value[mask]
                for name, value in vars(self).items()
            }
        )

    def market_lines(self) -> list[tuple[str, float | None]]:
        """The distinct ``(market, line)`` of the rows (line None for a market without lines),
        markets in the forecast's order, lines ascending."""
        order = list(dict.fromkeys(self.market.tolist()))
        lines = [None if np.isnan(line) else line for line in self.line.tolist()]
        seen = set(zip(self.market.tolist(), lines, strict=True))
        return sorted(seen, key=lambda key: (order.index(key[0]), key[1] or 0.0))

    def of(self, market, line=None) -> np.ndarray:
        """Which rows are of ``market`` (and ``line``, when given)."""
        mine = self.market == market
        return mine if line is None else mine & (self.line == line)


def parts(league, season) -> np.ndarray:
    """Each row's part of the set, from its league and season (see the module's docstring)."""
    part = np.where(np.isin(league, CHOICE_LEAGUES), "choice", "confirmation")
    for code in CHOICE_LEAGUES:
        seasons = sorted(set(season[league == code].tolist()))
        part[(league == code) & np.isin(season, seasons[-LATER_SEASONS:])] = "later"
    return part


def _line_candidates(forecasted, columns, fair) -> None:
    """Append the candidates of the markets with a line: each finished match's line and
    selection the service would pick (every market enabled), valued at the close of its own
    line as settlement values it (``engine.model.lines.closing_at``)."""
    n = len(forecasted.match_id)
    closing = price_cubes.load(forecasted.match_id, closing=True, only_listed=False)
    closing_lines = price_cubes.closing_lines(forecasted.match_id, closing, only_listed=False)
    played = np.isfinite(forecasted.home_goals) & np.isfinite(forecasted.away_goals)
    for method in METHODS:
        rates = price_cubes.closing_rates(closing, method)
        for market, lm in forecasted.lines.items():
            at = lm.picked(n)
            rows = np.flatnonzero((at >= 0) & played)
            picked = at[rows]
            side = lm.choice[0][picked]
            cube = closing_lines[market]
            prices, _ = closing_prices(cube.prices, cube.bookmakers)
            probability = lines.closing_at(
                market,
                (rows, lm.line[picked], side),
                (cube.match_row, cube.line, prices, remove_margin(prices, method)),
                rates,
            )[1]
            fair[method].append(probability)
            if method != METHODS[0]:
                continue
            odds = lm.best[0][picked, side]
            result = lines.results(
                market,
                np.array(MARKET_SELECTIONS[market])[side],
                lm.line[picked],
                forecasted.home_goals[rows],
                forecasted.away_goals[rows],
            )
            columns["market"].append(np.full(len(rows), market))
            columns["line"].append(lm.line[picked])
            columns["row"].append(rows)
            columns["odds"].append(odds)
            columns["edge"].append(lm.choice[1][picked])
            columns["growth"].append(lm.choice[2][picked])
            columns["quality"].append(lm.quality[0][picked])
            columns["profit"].append(lines.profits(result, odds, np.ones(len(rows))))


def candidates(settings) -> Candidates:
    """The candidate picks of every finished match, from the service's own forecast (every
    market enabled: ``PICK_MARKETS`` is what this bench chooses)."""
    forecasted = forecast.forecast(utcnow(), {**settings, "PICK_MARKETS": MARKETS})
    facts = {
        match_id: (code, season)
        for match_id, code, season in Match.select(Match.id, League.code, Match.season)
        .join(League)
        .tuples()
    }
    league = np.array([facts[m][0] for m in forecasted.match_id.tolist()])
    season = np.array([facts[m][1] for m in forecasted.match_id.tolist()])
    closing = price_cubes.load(forecasted.match_id, closing=True, only_listed=False)
    names = ("market", "line", "row", "odds", "edge", "growth", "quality", "profit")
    columns = {name: [] for name in names}
    fair = {method: [] for method in METHODS}
    for market, (prices, _) in forecasted.best.items():
        close, _ = closing_prices(closing[market].prices, closing[market].bookmakers)
        if not np.isfinite(close).any():
            continue  # nothing to value its picks at (football-data quotes no close for it)
        selection, edge, growth = picks.choose(
            forecasted.output.published[market], prices, settings["PICK_MIN_EDGE"]
        )
        outcome = outcome_indices(forecasted.home_goals, forecasted.away_goals)[market]
        # As the service: no candidate where the goal model has not seen the league.
        seen = forecasted.output.league_history >= settings["MODEL_MIN_LEAGUE_MATCHES"]
        rows = np.flatnonzero((selection >= 0) & (outcome >= 0) & seen)
        chosen = selection[rows]
        for method in METHODS:
            fair[method].append(remove_margin(close, method=method)[rows, chosen])
        odds = prices[rows, chosen]
        columns["market"].append(np.full(len(rows), market))
        columns["line"].append(np.full(len(rows), FIXED_LINES.get(market, np.nan)))
        columns["row"].append(rows)
        columns["odds"].append(odds)
        columns["edge"].append(edge[rows])
        columns["growth"].append(growth[rows])
        columns["quality"].append(forecasted.quality[market][0][rows])
        columns["profit"].append(np.where(outcome[rows] == chosen, odds - 1.0, -1.0))
    _line_candidates(forecasted, columns, fair)
    joined = {name: np.concatenate(values) for name, values in columns.items()}
    row = joined.pop("row")
    return Candidates(
        season=season[row],
        league=league[row],
        part=parts(league[row], season[row]),
        closing_ev={m: joined["odds"] * np.concatenate(fair[m]) - 1.0 for m in METHODS},
        **joined,
    )


@dataclass(frozen=True)
class Rule:
    """A pick and rating rule: a minimum to pick, and the A and B thresholds of one measure."""

    measure: str  # "growth" or "edge"
    minimum: float
    a: float
    b: float

    def label(self) -> str:
        """How docs/method.md writes it."""
        if self.measure == "growth":
            return (
                f"growth: pick ≥ {self.minimum:g}, B ≥ {self.b:g}, A ≥ {self.a:g} (edge ≥ 0.02 too)"
            )
        return f"edge: pick ≥ {self.minimum:g}, B ≥ {self.b:g}, A ≥ {self.a:g}"

    def apply(self, c: Candidates, settings) -> tuple[np.ndarray, np.ndarray]:
        """``(kept, rating)``: which candidates are picks, and their ratings."""
        value = c.growth if self.measure == "growth" else c.edge
        kept = value >= self.minimum
        a = (value >= self.a) & (c.quality >= settings["RATING_A_QUALITY"])
        b = (value >= self.b) & (c.quality >= settings["RATING_B_QUALITY"])
        return kept, np.where(a, "A", np.where(b, "B", "C"))


def mean_error(values) -> tuple[float, float]:
    """Mean and standard error of the finite values (NaN, inf below two)."""
    values = values[np.isfinite(values)]
    if len(values) < 2:
        return float("nan"), float("inf")
    return float(values.mean()), float(values.std(ddof=1) / np.sqrt(len(values)))


def differences(c: Candidates, kept, rating, method) -> list[tuple[str, str, float, float]]:
    """``(higher, lower, difference, standard error)`` of the mean fair closing EVs under
    ``method`` of each pair of adjacent ratings."""
    ev = {r: mean_error(c.closing_ev[method][kept & (rating == r)]) for r in "ABC"}
    return [
        (high, low, ev[high][0] - ev[low][0], float(np.hypot(ev[high][1], ev[low][1])))
        for high, low in ("AB", "BC")
    ]


def weakest_t(c: Candidates, kept, rating, min_share=MIN_SHARE, by_league=False) -> float:
    """The smallest t-statistic of C > 0, B > C and A > B under each method (and, with
    ``by_league``, in each league apart); −inf when a rating holds less than ``min_share`` of
    the picks (of a league)."""
    if by_league:
        return min(
            weakest_t(c, kept & (c.league == code), rating, min_share)
            for code in set(c.league.tolist())
        )
    counts = [(kept & (rating == r)).sum() for r in "ABC"]
    if min(counts) < min_share * kept.sum() or not kept.any():
        return -np.inf
    weakest = np.inf
    for method in METHODS:
        c_mean, c_error = mean_error(c.closing_ev[method][kept & (rating == "C")])
        weakest = min(weakest, c_mean / c_error)
        for _, _, difference, error in differences(c, kept, rating, method):
            weakest = min(weakest, difference / error)
    return float(weakest)


def search(c: Candidates, settings, measure, grid, minimums) -> tuple[Rule, float]:
    """The rule of the grid with the largest weakest t-statistic, league by league, on ``c``."""
    best, best_t = None, -np.inf
    for a, b in itertools.product(grid, grid):
        if a <= b:
            continue
        for minimum in minimums:
            rule = Rule(measure, minimum, a, b)
            t = weakest_t(c, *rule.apply(c, settings), by_league=True)
            if t > best_t:
                best, best_t = rule, t
    return best, best_t


def pick_markets(c: Candidates, rule: Rule, settings) -> tuple[str, ...]:
    """The markets whose picks under ``rule`` have a positive mean fair closing EV under every
    method of :data:`METHODS`."""
    kept, _ = rule.apply(c, settings)
    return tuple(
        market
        for market in dict.fromkeys(c.market.tolist())
        if all(mean_error(c.closing_ev[m][kept & c.of(market)])[0] > 0 for m in METHODS)
    )


def _ev(values) -> str:
    mean, error = mean_error(values)
    return f"{100 * mean:+.2f} % ± {100 * error:.2f}" if np.isfinite(error) else "–"


#: The rows of a market with several lines that sum them all up.
EVERY_LINE = "every line"


def _line(line) -> str:
    if isinstance(line, str):
        return line
    return "" if line is None else f"{line:g}"


def print_by_rating(c: Candidates, rule: Rule, settings, title):
    """Picks, mean odds and fair closing EV per rating (every market together), and whether
    adjacent ratings are told apart."""
    kept, rating = rule.apply(c, settings)
    t = weakest_t(c, kept, rating, min_share=0.0)
    print(f"\n{title}: {rule.label()}; weakest t {t:.2f}\n")
    print("| rating | picks | mean odds | fair closing EV, power | fair closing EV, Shin |")
    print("|---|---|---|---|---|")
    for r in "ABC":
        mine = kept & (rating == r)
        odds_mean = f"{c.odds[mine].mean():.2f}" if mine.any() else "–"
        print(
            f"| {r} | {mine.sum():,} | {odds_mean} | {_ev(c.closing_ev['power'][mine])} | "
            f"{_ev(c.closing_ev['shin'][mine])} |"
        )
    for method in METHODS:
        said = [
            f"{high} − {low} {100 * difference:+.2f} ± {100 * error:.2f}"
            + ("" if difference >= TOLD_APART * error else " (not told apart)")
            for high, low, difference, error in differences(c, kept, rating, method)
        ]
        print(f"\n{method}: {'; '.join(said)}", end="")
    print()


def print_report(c: Candidates, rule: Rule, settings):
    """The per market, line and rating table docs/method.md shows."""
    kept, rating = rule.apply(c, settings)
    print(
        "\n| market | line | rating | picks | mean odds | fair closing EV, power "
        "| fair closing EV, Shin | ROI | share of picks by price taken "
        + " / ".join(BAND_NAMES)
        + " |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    keys = c.market_lines()
    several = {market for market, _ in keys if sum(key[0] == market for key in keys) > 1}
    for market, line in keys + [(market, EVERY_LINE) for market in sorted(several)]:
        for r in ("A", "B", "C", "all"):
            lines = c.of(market) if line is EVERY_LINE else c.of(market, line)
            mine = kept & lines & ((rating == r) | (r == "all"))
            if not mine.any():
                print(f"| {market} | {_line(line)} | {r} | 0 | – | – | – | – | – |")
                continue
            roi, roi_error = mean_error(c.profit[mine])
            roi_text = f"{100 * roi:+.1f} % ± {100 * roi_error:.1f}" if mine.sum() > 1 else "–"
            band = metrics.price_band(c.odds[mine])
            shares = " / ".join(f"{100 * (band == b).mean():.0f} %" for b in range(len(BAND_NAMES)))
            print(
                f"| {market} | {_line(line)} | {r} | {mine.sum():,} | {c.odds[mine].mean():.2f} | "
                f"{_ev(c.closing_ev['power'][mine])} | {_ev(c.closing_ev['shin'][mine])} | "
                f"{roi_text} | {shares} |"
            )


def _describe(c: Candidates) -> str:
    leagues = ", ".join(sorted(set(c.league.tolist())))
    seasons = sorted(set(c.season.tolist()))
    span = f"{seasons[0]}–{seasons[-1]}" if seasons else "no season"
    return f"{leagues}, {span}, {len(c):,} candidates"


def report(c: Candidates, settings, smoke=False):
    """Print the choice of the rule and of the pick markets, and how both hold elsewhere."""
    split = {part: c if smoke else c.where(c.part == part) for part in PARTS}
    for part in PARTS:
        print(f"{part}: {_describe(split[part])}")
    configured = Rule(
        "growth",
        settings["PICK_MIN_GROWTH"],
        settings["RATING_A_GROWTH"],
        settings["RATING_B_GROWTH"],
    )
    growth_rule, growth_t = search(split["choice"], settings, "growth", GROWTHS, MIN_GROWTHS)
    edge_rule, _ = search(split["choice"], settings, "edge", EDGES, MIN_EDGES)
    print(
        f"\nchosen on the choice part: {growth_rule.label()} (weakest t, league by league, "
        f"{growth_t:.2f}); the configured rule is "
        f"{'that one' if growth_rule == configured else configured.label()}"
    )
    markets = pick_markets(split["choice"], configured, settings)
    held = pick_markets(split["confirmation"], configured, settings)
    print(
        f"\nmarkets whose choice-part picks have a positive fair closing EV under "
        f"{' and '.join(METHODS)}: {','.join(markets) or 'none'} (PICK_MARKETS is "
        f"{','.join(settings['PICK_MARKETS']) or 'empty'}); on the confirmation part: "
        f"{','.join(held) or 'none'}"
    )
    previous = Rule("edge", settings["PICK_MIN_EDGE"], 0.08, 0.05)
    for rule, name in (
        (configured, "configured rule"),
        (edge_rule, "best edge thresholds on the choice part"),
        (previous, "model 2.0.0's edge thresholds (with today's data quality)"),
    ):
        for part in PARTS:
            print_by_rating(split[part], rule, settings, f"{part}, {name}")
    for part in ("confirmation", "later", "choice"):
        print(f"\nthe configured rule on the {part} part, per market, line and rating:")
        print_report(split[part], configured, settings)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    data_arguments(parser)
    args = parse_arguments(parser)
    with fresh_app(parser, args) as (app, files):
        settings = app.config
        for path in files:
            imports.import_file(path)
        c = candidates(settings)
        db.close()
    print(
        f"commit {commit()}; {len(files)} files; MARGIN_METHOD={settings['MARGIN_METHOD']}; "
        f"candidate picks (edge ≥ {settings['PICK_MIN_EDGE']}) of finished matches"
        + ("; a smoke run: its one season is every part" if args.smoke else "")
    )
    report(c, settings, args.smoke)


if __name__ == "__main__":
    main()
