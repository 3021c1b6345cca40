"""How the pick and rating rule was chosen, and whether it holds: fair closing EV by rating.

    .venv/bin/python -m bench.ratings [--data DIR] [--database-url URL] [--smoke]

Imports the shared football-data set into a fresh database and runs the service's walk-forward
forecast (``services.forecasting.forecast.forecast``) with the configured ``MARGIN_METHOD``.
For every match and market it takes the candidate pick (the selection with the largest edge, at
least ``PICK_MIN_EDGE``), its expected log growth and its data quality as the service computes them,
and values it at the fair closing price: odds × the selection's closing probability − 1, the
close (Pinnacle's, else the market average's, as settlement reads it) de-margined by power and
by Shin, the two best calibrated methods of ``bench/margins.py``.

The rule is **chosen** on the seasons before any league's third season (2017/18 and 2018/19)
and **confirmed** on each league's third season on, the seasons docs/method.md reports. The choice:
over a grid of thresholds on the expected log growth (the smallest that makes a pick, and those
of ``A`` and ``B``; the quality thresholds stay as configured), the one whose weakest
t-statistic among "C > 0", "B > C" and "A > B", under power and under Shin, is the largest,
with at least 15 % of the picks in each rating. The same search over edge thresholds, and the
rule of model 2.0.0 (edge 0.08 and 0.05), are printed beside it for comparison.

Then the report users need, per rating and market on the confirmation seasons with the
configured rule: picks, mean odds, fair closing EV under power and Shin with standard errors,
realised ROI with its standard error, and the share of picks by price band.

``--smoke``: one file, whose one season stands for both the choice and the confirmation.
"""

import argparse
import itertools
from dataclasses import dataclass

import numpy as np

from bench.common import commit, data_arguments, fresh_app, parse_arguments
from clock import utcnow
from engine import metrics, picks
from engine import odds as odds_engine
from engine.markets import outcome_indices
from models import League, Match
from services.feeds import imports
from services.forecasting import forecast, price_cubes
from store.database import db

SCORED_MARKETS = ("1x2", "ou25")
#: The calibrated methods every rating must be worth it under.
METHODS = ("power", "shin")
MIN_SHARE = 0.15
GROWTHS = tuple(g * 1e-4 for g in (1, 1.5, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40))
MIN_GROWTHS = tuple(g * 1e-4 for g in (0, 0.5, 1, 1.5, 2, 3))
EDGES = tuple(round(e, 3) for e in np.arange(0.03, 0.155, 0.01))
MIN_EDGES = (0.02, 0.025, 0.03, 0.04)
BAND_NAMES = ("< 2", "2–4", "4–8", "≥ 8")


@dataclass
class Candidates:
    """One candidate pick per row (match and market), as arrays."""

    market: np.ndarray
    season: np.ndarray
    league: np.ndarray
    choice: np.ndarray  # True on the seasons the rule is chosen on
    report: np.ndarray  # True on each league's third season on
    odds: np.ndarray
    edge: np.ndarray
    growth: np.ndarray
    quality: np.ndarray
    won: np.ndarray
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


def candidates(settings, smoke=False) -> Candidates:
    """The candidate picks of every finished match, from the service's own forecast (in a smoke
    run, its one season both chooses and confirms)."""
    fc = forecast.forecast(utcnow(), settings)
    facts = {
        match_id: (code, season)
        for match_id, code, season in Match.select(Match.id, League.code, Match.season)
        .join(League)
        .tuples()
    }
    league = np.array([facts[m][0] for m in fc.match_id.tolist()])
    season = np.array([facts[m][1] for m in fc.match_id.tolist()])
    report = np.zeros(len(league), dtype=bool)
    for code in set(league.tolist()):
        seasons = sorted(set(season[league == code].tolist()))
        report |= (league == code) & np.isin(season, seasons[2:])
    choice = season < min(season[report]) if report.any() else np.zeros_like(report)
    if smoke:
        report = choice = np.ones_like(report)
    closing = price_cubes.load(fc.match_id, closing=True, only_listed=False)
    columns = {name: [] for name in ("market", "row", "odds", "edge", "growth", "quality", "won")}
    fair = {method: [] for method in METHODS}
    for market in SCORED_MARKETS:
        prices = fc.best[market][0]
        selection, edge, growth = picks.choose(
            fc.output.published[market], prices, settings["PICK_MIN_EDGE"]
        )
        outcome = outcome_indices(fc.home_goals, fc.away_goals)[market]
        rows = np.flatnonzero((selection >= 0) & (outcome >= 0))
        chosen = selection[rows]
        close, _ = odds_engine.closing_prices(closing[market].prices, closing[market].bookmakers)
        for method in METHODS:
            fair[method].append(odds_engine.remove_margin(close, method=method)[rows, chosen])
        columns["market"].append(np.full(len(rows), market))
        columns["row"].append(rows)
        columns["odds"].append(prices[rows, chosen])
        columns["edge"].append(edge[rows])
        columns["growth"].append(growth[rows])
        columns["quality"].append(fc.quality[market][0][rows])
        columns["won"].append(outcome[rows] == chosen)
    joined = {name: np.concatenate(values) for name, values in columns.items()}
    row = joined.pop("row")
    return Candidates(
        season=season[row],
        league=league[row],
        choice=choice[row],
        report=report[row],
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


def weakest_t(c: Candidates, kept, rating, min_share=MIN_SHARE) -> float:
    """The smallest t-statistic of C > 0, B > C and A > B under each method; −inf when a
    rating holds less than ``min_share`` of the picks."""
    counts = [(kept & (rating == r)).sum() for r in "ABC"]
    if min(counts) < min_share * kept.sum() or not kept.any():
        return -np.inf
    weakest = np.inf
    for method in METHODS:
        ev = {r: mean_error(c.closing_ev[method][kept & (rating == r)]) for r in "ABC"}
        weakest = min(
            weakest,
            ev["C"][0] / ev["C"][1],
            (ev["B"][0] - ev["C"][0]) / np.hypot(ev["B"][1], ev["C"][1]),
            (ev["A"][0] - ev["B"][0]) / np.hypot(ev["A"][1], ev["B"][1]),
        )
    return float(weakest)


def search(c: Candidates, settings, measure, grid, minimums) -> tuple[Rule, float]:
    """The rule of the grid with the largest weakest t-statistic on ``c``."""
    best, best_t = None, -np.inf
    for a, b in itertools.product(grid, grid):
        if a <= b:
            continue
        for minimum in minimums:
            rule = Rule(measure, minimum, a, b)
            t = weakest_t(c, *rule.apply(c, settings))
            if t > best_t:
                best, best_t = rule, t
    return best, best_t


def _ev(values) -> str:
    mean, error = mean_error(values)
    return f"{100 * mean:+.2f} % ± {100 * error:.2f}" if np.isfinite(error) else "–"


def print_by_rating(c: Candidates, rule: Rule, settings, title):
    """Picks, mean odds and fair closing EV per rating (both markets together)."""
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


def print_report(c: Candidates, rule: Rule, settings):
    """The per rating and market table docs/method.md shows (confirmation seasons)."""
    kept, rating = rule.apply(c, settings)
    print(
        "\n| market | rating | picks | mean odds | fair closing EV, power | fair closing EV, Shin "
        "| ROI | share of picks by price taken " + " / ".join(BAND_NAMES) + " |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for market in SCORED_MARKETS:
        for r in "ABC":
            mine = kept & (rating == r) & (c.market == market)
            if not mine.any():
                print(f"| {market} | {r} | 0 | – | – | – | – | – |")
                continue
            profit = np.where(c.won[mine], c.odds[mine] - 1.0, -1.0)
            roi, roi_error = mean_error(profit)
            band = metrics.price_band(c.odds[mine])
            shares = " / ".join(f"{100 * (band == b).mean():.0f} %" for b in range(len(BAND_NAMES)))
            print(
                f"| {market} | {r} | {mine.sum():,} | {c.odds[mine].mean():.2f} | "
                f"{_ev(c.closing_ev['power'][mine])} | {_ev(c.closing_ev['shin'][mine])} | "
                f"{100 * roi:+.1f} % ± {100 * roi_error:.1f} | {shares} |"
            )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    data_arguments(parser)
    args = parse_arguments(parser)
    with fresh_app(parser, args) as (app, files):
        settings = app.config
        for path in files:
            imports.import_file(path)
        c = candidates(settings, args.smoke)
        db.close()
    print(
        f"commit {commit()}; {len(files)} files; MARGIN_METHOD={settings['MARGIN_METHOD']}; "
        f"candidate picks (edge ≥ {settings['PICK_MIN_EDGE']}) of finished matches: "
        f"{c.choice.sum():,} on {', '.join(sorted(set(c.season[c.choice].tolist())))} "
        f"(choice), {c.report.sum():,} on each league's third season on (confirmation)"
    )
    chosen = c.where(c.choice)
    confirmed = c.where(c.report)
    configured = Rule(
        "growth",
        settings["PICK_MIN_GROWTH"],
        settings["RATING_A_GROWTH"],
        settings["RATING_B_GROWTH"],
    )
    growth_rule, growth_t = search(chosen, settings, "growth", GROWTHS, MIN_GROWTHS)
    edge_rule, _ = search(chosen, settings, "edge", EDGES, MIN_EDGES)
    print(
        f"\nchosen on the earlier seasons: {growth_rule.label()} (weakest t {growth_t:.2f}); "
        f"the configured rule is {'that one' if growth_rule == configured else configured.label()}"
    )
    previous = Rule("edge", settings["PICK_MIN_EDGE"], 0.08, 0.05)
    for rule, name in (
        (configured, "configured rule"),
        (edge_rule, "best edge thresholds on the earlier seasons"),
        (previous, "model 2.0.0's edge thresholds (with today's data quality)"),
    ):
        print_by_rating(chosen, rule, settings, f"earlier seasons (choice), {name}")
        print_by_rating(confirmed, rule, settings, f"third season on (confirmation), {name}")
    print("\nthe configured rule on each league's third season on, per rating and market:")
    print_report(confirmed, configured, settings)


if __name__ == "__main__":
    main()
