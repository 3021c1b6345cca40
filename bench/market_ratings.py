"""Benchmark of the market-implied team ratings on the shared football-data set, no database.

    .venv/bin/python -m bench.market_ratings [--data DIR] [--no-curves] [--smoke]

Parses the CSVs with ``services.feeds.formats.footballdata.parse`` and groups matches by country as
the service does (E0 and E1 share England). The ratings train on the service's closing line
(Pinnacle's, else the market average's, de-margined proportionally). Scored on each league's third
season on (2019/20-2023/24 for the seven-season leagues: the same 7,050 1x2 rows as
``bench/engine.py``): 1x2 RPS and over/under 2.5 log loss ÷ those of Pinnacle's closing line
(de-margined proportionally) for the goals-only Dixon-Coles (``engine.model.walkforward.run`` with
no market), the ratings alone (every row; uncovered ones on the newcomer prior), the ratings with
Dixon-Coles where they are not covered, and Pinnacle's pre-match line. E1 has two seasons only: its
second (2023/24, with one season of its own history and the Premier League's for relegated sides) is
printed on its own line and kept out of "all", so "all" compares with ``bench/engine.py``.
Then the model alone (ratings, else Dixon-Coles) learning from 1x2 and over/under 2.5 only
(before) and also from the closing Asian handicap (after: Pinnacle's, else the market
average's, de-margined by the service's ``MARGIN_METHOD``), the time of a whole run, the goals,
and the curves the defaults were chosen from: the observation weights are chosen on E0+SP1
("choice") and read on D1+F1 ("confirmation") and E1's second season.
``--smoke``: one file, scored on its one season, one timed run, no goal judged.
"""

import argparse
import statistics
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from bench.common import FOOTBALL_DATA, data_files, parse_arguments, timed
from config import DEFAULTS
from engine.betting import metrics
from engine.betting.odds import remove_margin, sharp_probabilities
from engine.markets import outcome_indices
from engine.model import implied_rates, market_ratings, walkforward
from engine.model.scores import market_probabilities, score_matrix
from enums import MARKET_SELECTIONS
from services.feeds.formats import footballdata

SCORED = (("1x2", metrics.rps, "1x2 RPS"), ("ou25", metrics.log_loss, "O/U 2.5 log loss"))
HALF_LIVES = (7, 10, 14, 17, 21, 28, 42, 60, 90, 120)
RIDGES = (0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0)
RHOS = (0.0, -0.04, -0.08, -0.12)
WINDOWS = (120, 180, 270, 365, 730)
NEWCOMER = (0.0, 0.1, 0.2, 0.3)
THRESHOLDS = (0, 1, 2, 3, 4, 6, 8, 10)
#: The service's margin removal, used for the Asian handicap line the ratings learn from.
MARGIN_METHOD = DEFAULTS["MARGIN_METHOD"]
#: Where the observation weights are chosen, and where the choice is confirmed and reported.
CHOICE_LEAGUES = ("E0", "SP1")
CONFIRMATION_LEAGUES = ("D1", "F1")
AH_WEIGHTS = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
OU25_WEIGHTS = (0.0, 0.25, 0.5, 1.0, 2.0)
#: 1x2 RPS ratios of the prototype (2019/20-2023/24, half-life 21 days), the bar to clear.
PROTOTYPE = {"E0": 1.0154, "SP1": 1.0139, "D1": 1.0185, "F1": 1.0085}


@dataclass
class Dataset:
    """Every parsed match as arrays, with the prices the benchmark needs per market."""

    league: np.ndarray  # division code
    season: np.ndarray  # "2019-20"
    group: np.ndarray  # int64, one per country
    kickoff: np.ndarray  # int64 epoch seconds
    home: np.ndarray  # int64 team ids, unique per (country, name)
    away: np.ndarray
    home_goals: np.ndarray
    away_goals: np.ndarray
    pinnacle_pre: dict  # market -> (n, k) de-margined proportionally, NaN where not quoted
    pinnacle_close: dict
    sharp_close: dict  # the service's closing line: Pinnacle's, else the market average's
    #: The closing Asian handicap: line (n,) and home/away probabilities (n, 2), Pinnacle's,
    #: else the market average's, de-margined by the service's MARGIN_METHOD; NaN where none.
    ah_close: tuple[np.ndarray, np.ndarray]
    on_target: np.ndarray  # (n, 2) home and away shots on target, NaN where the file has none

    def __len__(self):
        return len(self.kickoff)


def load(files: list[Path]) -> Dataset:
    """Parse the CSV ``files`` into one Dataset, in kick-off order."""
    matches = []
    for path in files:
        parsed = footballdata.parse(path.read_text(encoding="utf-8"))
        matches += [m for m in parsed.matches if m.home_goals is not None]
    matches.sort(key=lambda m: (m.kickoff_at, m.league.code, m.home_team))
    countries = sorted({m.league.country for m in matches})
    teams = sorted({(m.league.country, t) for m in matches for t in (m.home_team, m.away_team)})
    team_id = {key: index for index, key in enumerate(teams)}
    n = len(matches)
    cubes = {}  # (market, closing) -> {bookmaker: (n, k)}
    ah_lines = np.full(n, np.nan)  # football-data gives one closing line per row for every book
    for row, match in enumerate(matches):
        for quote in match.odds:
            if quote.market == "ah" and quote.is_closing:
                ah_lines[row] = quote.line
            books = cubes.setdefault((quote.market, quote.is_closing), {})
            prices = books.setdefault(
                quote.bookmaker, np.full((n, len(MARKET_SELECTIONS[quote.market])), 0.0)
            )
            prices[row, MARKET_SELECTIONS[quote.market].index(quote.selection)] = quote.price

    def pinnacle(market, closing):
        prices = cubes.get((market, closing), {}).get("pinnacle", np.zeros((n, 0)))
        return (
            remove_margin(prices)
            if prices.size
            else np.full((n, len(MARKET_SELECTIONS[market])), np.nan)
        )

    def sharp(market, method="proportional"):
        books = cubes.get((market, True), {})
        if not books:
            return np.full((n, len(MARKET_SELECTIONS[market])), np.nan)
        names = sorted(books)
        cube = np.stack([books[name] for name in names], axis=1)
        return sharp_probabilities(cube, names, method=method)[0]

    ah_probs = sharp("ah", MARGIN_METHOD)

    return Dataset(
        league=np.array([m.league.code for m in matches]),
        season=np.array([m.season for m in matches]),
        group=np.array([countries.index(m.league.country) for m in matches], dtype=np.int64),
        kickoff=np.array([int(m.kickoff_at.timestamp()) for m in matches], dtype=np.int64),
        home=np.array([team_id[(m.league.country, m.home_team)] for m in matches], np.int64),
        away=np.array([team_id[(m.league.country, m.away_team)] for m in matches], np.int64),
        home_goals=np.array([m.home_goals for m in matches], dtype=float),
        away_goals=np.array([m.away_goals for m in matches], dtype=float),
        pinnacle_pre={market: pinnacle(market, False) for market in ("1x2", "ou25")},
        pinnacle_close={market: pinnacle(market, True) for market in ("1x2", "ou25")},
        sharp_close={market: sharp(market) for market in ("1x2", "ou25")},
        ah_close=(np.where(np.isfinite(ah_probs).all(axis=1), ah_lines, np.nan), ah_probs),
        on_target=np.array(
            [m.shots_on_target or (np.nan, np.nan) for m in matches], dtype=float
        ).reshape(n, 2),
    )


def evaluation_sets(ds: Dataset, smoke=False) -> dict[str, np.ndarray]:
    """Boolean row masks: each league from its third season on, all of them, and E1's second.
    A smoke run's one file is one season: each league's every row."""
    sets = {}
    for league in sorted(set(ds.league)):
        seasons = sorted(set(ds.season[ds.league == league]))
        if smoke:
            sets[league] = ds.league == league
        elif len(seasons) > 2:
            sets[league] = (ds.league == league) & np.isin(ds.season, seasons[2:])
    sets["all"] = np.any(list(sets.values()), axis=0)
    if not smoke:
        for name, leagues in (("choice", CHOICE_LEAGUES), ("confirmation", CONFIRMATION_LEAGUES)):
            chosen = [sets[league] for league in leagues if league in sets]
            if chosen:
                sets[f"{name} ({'+'.join(leagues)})"] = np.any(chosen, axis=0)
    if "E1" in set(ds.league) and not smoke:
        sets["E1 (2nd season)"] = (ds.league == "E1") & (
            ds.season == max(ds.season[ds.league == "E1"])
        )
    return sets


def ratings_input(ds: Dataset, handicap: bool = True) -> market_ratings.RatingsInput:
    """The ratings' input: the service's closing line (Pinnacle, else market average), with
    the closing Asian handicap line unless ``handicap`` is False."""
    return market_ratings.RatingsInput(
        kickoff=ds.kickoff,
        group=ds.group,
        home=ds.home,
        away=ds.away,
        closing=ds.sharp_close,
        now=int(ds.kickoff.max()) + 1,
        closing_lines={"ah": ds.ah_close} if handicap else None,
    )


def dixon_coles(ds: Dataset) -> dict[str, np.ndarray]:
    """The goals-only Dixon-Coles forecasts of every row (the walk-forward with no market)."""
    out = walkforward.run(
        walkforward.WalkForwardInput(
            kickoff=ds.kickoff,
            group=ds.group,
            home=ds.home,
            away=ds.away,
            home_goals=ds.home_goals,
            away_goals=ds.away_goals,
            market={},
            now=int(ds.kickoff.max()) + 1,
        )
    )
    return out.model


def ratio(ds: Dataset, market: str, probs: np.ndarray, rows: np.ndarray) -> tuple[float, float]:
    """(score of ``probs`` ÷ Pinnacle closing's, its standard error) over ``rows`` where Pinnacle
    quotes both pre-match and closing; the error is the delta method's for a ratio of means."""
    score = {name: function for name, function, _ in SCORED}[market]
    outcome = outcome_indices(ds.home_goals, ds.away_goals)[market]
    keep = (
        rows
        & np.isfinite(ds.pinnacle_pre[market]).all(1)
        & np.isfinite(ds.pinnacle_close[market]).all(1)
    )
    value = score(probs[keep], outcome[keep]) / score(
        ds.pinnacle_close[market][keep], outcome[keep]
    )
    model, close = (
        _per_row(market, p[keep], outcome[keep]) for p in (probs, ds.pinnacle_close[market])
    )
    spread = (model - value * close).std() / np.sqrt(keep.sum()) / close.mean()
    return value, float(spread)


def _per_row(market, probs, outcome):
    """Each row's score (the per-row terms of engine.betting.metrics.rps / log_loss)."""
    if market == "1x2":
        gap = np.cumsum(probs - (outcome[:, None] == np.arange(3)), axis=1)[:, :-1]
        return (gap**2).sum(axis=1) / 2
    return -np.log(np.clip(probs[np.arange(len(outcome)), outcome], 1e-15, 1.0))


def print_table(ds, sets, forecasts):
    """Per league and all together: each forecast's 1x2 RPS and O/U log loss ratios."""
    names = list(forecasts)
    print("ratio to Pinnacle closing (de-margined proportionally) ± standard error:")
    for market, _, label in SCORED:
        print(f"{label}:")
        print(f"  {'league':16s} {'matches':>7s}  " + "  ".join(f"{n:>19s}" for n in names))
        for league, rows in sets.items():
            cells = []
            for name in names:
                value, se = ratio(ds, market, forecasts[name][market], rows)
                cells.append(f"{value:.4f} ± {se:.4f}".rjust(19))
            count = (
                rows
                & np.isfinite(ds.pinnacle_pre[market]).all(1)
                & np.isfinite(ds.pinnacle_close[market]).all(1)
            ).sum()
            print(f"  {league:16s} {count:7d}  " + "  ".join(cells))


def print_goals(ds, sets, probs):
    """The ratings-alone goals, each marked met or missed."""
    checks = [("all leagues", "all", 1.015)]
    checks += [(name, name, min(1.02, PROTOTYPE.get(name, 1.02))) for name in sets if name != "all"]
    cells = []
    for label, name, bar in checks:
        value, _ = ratio(ds, "1x2", probs["1x2"], sets[name])
        cells.append(f"{label} {value:.4f} <= {bar} {'met' if value <= bar else 'MISSED'}")
    print(
        "goals, ratings alone (1x2; <= 1.02 and <= the prototype per league): " + "; ".join(cells)
    )


def curve(ds, sets, inp, label, values, make, dc=None):
    """One line per value: the ratings (or the chain with Dixon-Coles) over all leagues."""
    print(f"{label} curve (all leagues; per-league 1x2 after the bar):")
    for value in values:
        out = market_ratings.run(inp, make(value))
        probs = out.probabilities if dc is None else market_ratings.with_fallback(out, dc)
        rps, _ = ratio(ds, "1x2", probs["1x2"], sets["all"])
        logloss, _ = ratio(ds, "ou25", probs["ou25"], sets["all"])
        leagues = " ".join(
            f"{name.split()[0]} {ratio(ds, '1x2', probs['1x2'], rows)[0]:.4f}"
            for name, rows in sets.items()
            if name != "all"
        )
        print(f"  {value!s:>6s}: 1x2 {rps:.4f}  O/U {logloss:.4f} | {leagues}")


def print_curves(ds, sets, inp, base, dc):
    """The curves the defaults were read from: each knob moved alone."""
    for label, values, field in (
        ("half-life (days)", HALF_LIVES, "half_life_days"),
        ("ridge", RIDGES, "ridge"),
        ("rho", RHOS, "rho"),
        ("window (days)", WINDOWS, "window_days"),
        ("newcomer strength", NEWCOMER, "newcomer_strength"),
    ):
        curve(ds, sets, inp, label, values, lambda v, f=field: replace(base, **{f: v}))
    curve(
        ds,
        sets,
        inp,
        "min priced matches (ratings where covered, else Dixon-Coles)",
        THRESHOLDS,
        lambda v: replace(base, min_priced_matches=v),
        dc=dc,
    )


def print_handicap(ds, sets, config, dc):
    """The model alone (ratings, else Dixon-Coles) 1x2 RPS ratio per set, learning from 1x2 and
    over/under 2.5 only (before) and with the closing Asian handicap line (after)."""
    before = market_ratings.run(ratings_input(ds, handicap=False), config)
    weights = {**dict(config.observation_weights), "ah": 1.0}
    after = market_ratings.run(
        ratings_input(ds), replace(config, observation_weights=tuple(weights.items()))
    )
    quoted = np.isfinite(ds.ah_close[0])
    print(
        "model alone (ratings, else Dixon-Coles), 1x2 RPS ÷ Pinnacle closing, learning from "
        f"1x2 + O/U 2.5 (before) and also the closing Asian handicap at weight 1 (after; "
        f"{quoted.sum()} "
        f"of {len(ds)} matches have one, de-margined by {MARGIN_METHOD}):"
    )
    for name, rows in sets.items():
        cells = []
        for label, out in (("before", before), ("after", after)):
            probs = market_ratings.with_fallback(out, dc)["1x2"]
            value, se = ratio(ds, "1x2", probs, rows)
            cells.append(f"{label} {value:.4f} ± {se:.4f}")
        print(f"  {name:26s} " + "  ".join(cells))


def print_weights(ds, sets, inp, base, dc):
    """The observation weights' curves (ratings, else Dixon-Coles; 1x2 RPS ratio): chosen on
    the choice leagues, read on the confirmation leagues."""
    weights = dict(base.observation_weights)
    for market, values in (("ah", AH_WEIGHTS), ("ou25", OU25_WEIGHTS)):
        print(f"{market} observation weight curve (1x2 and the others' weights as defaults):")
        for value in values:
            config = replace(base, observation_weights=tuple({**weights, market: value}.items()))
            probs = market_ratings.with_fallback(market_ratings.run(inp, config), dc)
            cells = " ".join(
                f"{name.split(' (')[0]} {ratio(ds, '1x2', probs['1x2'], rows)[0]:.4f}"
                for name, rows in sets.items()
                if name not in CHOICE_LEAGUES + CONFIRMATION_LEAGUES
            )
            print(f"  {value!s:>6s}: {cells}")


def own_line(ds, rho):
    """Each closing line put through its own solved rates (NaN rows where none): the part of
    the market the score matrix cannot reproduce, the floor of any ratings built on it."""
    home_rate, away_rate = implied_rates.solve_rates(
        ds.sharp_close["1x2"], ds.sharp_close["ou25"], rho
    )
    solved = np.isfinite(home_rate)
    refit = market_probabilities(score_matrix(home_rate[solved], away_rate[solved], rho))
    own = {m: np.full((len(ds), len(MARKET_SELECTIONS[m])), np.nan) for m in ("1x2", "ou25")}
    for m in own:
        own[m][solved] = refit[m]
    return own, solved


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=FOOTBALL_DATA)
    parser.add_argument("--no-curves", action="store_true", help="only the table and timing")
    args = parse_arguments(parser)
    files = data_files(parser, args)
    # As the service runs the engine: the fits are small, BLAS threads only fight for the cores.
    with threadpool_limits(limits=1, user_api="blas"):
        ds, seconds = timed(lambda: load(files))
        print(f"{len(files)} files from {args.data}: {len(ds)} matches, parsed in {seconds:.1f} s")
        sets = evaluation_sets(ds, args.smoke)
        inp = ratings_input(ds)
        config = market_ratings.RatingsConfig()
        print(f"defaults: {config}")
        runs = [
            timed(lambda: market_ratings.run(inp, config)) for _ in range(1 if args.smoke else 3)
        ]
        ratings = runs[0][0]
        _, solve_s = timed(
            lambda: implied_rates.solve_rates(
                ds.sharp_close["1x2"], ds.sharp_close["ou25"], config.rho
            )
        )
        dc, dc_s = timed(lambda: dixon_coles(ds))
        print(
            f"market-implied ratings, whole set: {statistics.median(s for _, s in runs):.2f} s "
            f"(median of {len(runs)}) for {ratings.priced} closing lines solved "
            f"({solve_s:.2f} s) and {ratings.fits} weekly fits; baseline, the Dixon-Coles "
            f"walk-forward: {dc_s:.1f} s"
        )
        print_table(
            ds,
            sets,
            {
                "Dixon-Coles alone": dc,
                "ratings alone": ratings.probabilities,
                "ratings, else DC": market_ratings.with_fallback(ratings, dc),
                "Pinnacle pre-match": ds.pinnacle_pre,
            },
        )
        print(
            f"covered (both sides priced at least {config.min_priced_matches}x in the window): "
            f"{ratings.covered[sets['all']].mean():.2%} of the rows scored; "
            "'ratings, else DC' is what the service would show"
        )
        own, solved = own_line(ds, config.rho)
        print(
            "the closing line through its own solved rates (what the score matrix loses): "
            f"1x2 {ratio(ds, '1x2', own['1x2'], sets['all'] & solved)[0]:.4f}, "
            f"O/U {ratio(ds, 'ou25', own['ou25'], sets['all'] & solved)[0]:.4f}"
        )
        print_handicap(ds, sets, config, dc)
        if not args.smoke:
            print_goals(ds, sets, ratings.probabilities)
        if not args.no_curves:
            print_weights(ds, sets, inp, config, dc)
            print_curves(ds, sets, inp, config, dc)


if __name__ == "__main__":
    main()
