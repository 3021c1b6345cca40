"""How the rating rule was chosen, and whether it holds on other leagues and later seasons: fair
closing EV by market, rating and price band.

    .venv/bin/python -m bench.ratings [--data DIR] [--database-url URL] [--smoke]

Imports a directory of football-data files into a fresh database and runs the service's
walk-forward forecast (``services.forecasting.forecast.forecast``) with the configured
``MARGIN_METHOD``. For every match and market (and line, where the forecast quotes a market at
lines) it takes the candidate pick (the selection with the largest edge, at least
``PICK_MIN_EDGE``), its expected log growth, its data quality and its forecast's cut-off as the
service computes them, and values it at the fair closing price: odds × the selection's closing
probability − 1, the close (Pinnacle's, else the market average's, as settlement reads it)
de-margined by power and by Shin, the two best calibrated methods of ``bench/margins.py``.

The split of the directory into the part that chooses, the part that confirms and the later
seasons is derived from what it holds, and the search is ``bench/rating_rule.py``'s (both
described there). Printed: the parts and their leagues; the rule chosen on the choice part
beside the configured one (``TRUST_*``, ``RATING_A_GROWTH``, ``RATING_B_GROWTH``) and beside the
raw growth rule of model 3.0.0; on every part, per rating, picks, mean odds and fair closing EV
under power and Shin with standard errors, and the differences of adjacent ratings with theirs;
then, per market and rating and by price band (taken), the same, the report docs/method.md
carries; last, which markets' picks have a positive fair closing EV under both methods.

``--smoke``: one file, whose one season stands for every part.
"""

import argparse

import numpy as np

from bench import rating_rule
from bench.common import commit, data_arguments, fresh_app, parse_arguments
from bench.rating_rule import METHODS, PARTS, TOLD_APART, Candidates, Rule, mean_error
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

BAND_NAMES = ("< 2", "2–4", "4–8", "≥ 8")
#: The line of each fixed market that has one (the over/under at 2.5 goals).
FIXED_LINES = {"ou25": 2.5}


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
            columns["at_risk"].append(lm.at_risk[picked])
            columns["quality"].append(lm.quality[0][picked])
            columns["profit"].append(lines.profits(result, odds, np.ones(len(rows))))


def candidates(settings) -> Candidates:
    """The candidate picks of every finished match, from the service's own forecast (every
    market enabled: which markets get picks is read off them too)."""
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
    names = ("market", "line", "row", "odds", "edge", "growth", "at_risk", "quality", "profit")
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
        columns["at_risk"].append(np.ones(len(rows)))
        columns["quality"].append(forecasted.quality[market][0][rows])
        columns["profit"].append(np.where(outcome[rows] == chosen, odds - 1.0, -1.0))
    _line_candidates(forecasted, columns, fair)
    joined = {name: np.concatenate(values) for name, values in columns.items()}
    row = joined.pop("row")
    every = np.array([code for code, _ in facts.values()])
    matches = {
        code: (len({s for c, s in facts.values() if c == code}), int((every == code).sum()))
        for code in sorted(set(every.tolist()))
    }
    return Candidates(
        season=season[row],
        league=league[row],
        part=rating_rule.parts(league[row], season[row], matches),
        kickoff=forecasted.kickoff[row],
        cutoff=forecasted.output.fitted_at[row].astype(float),
        closing_ev={m: joined["odds"] * np.concatenate(fair[m]) - 1.0 for m in METHODS},
        **joined,
    )


def configured_rule(settings) -> Rule:
    """The rule the service rates by (``services.forecasting.forecast.trust_config``)."""
    return Rule(
        forecast.trust_config(settings), settings["RATING_A_GROWTH"], settings["RATING_B_GROWTH"]
    )


def raw_rule(settings) -> Rule:
    """Model 3.0.0's rule: the raw growth at its thresholds (0.001 and 0.0005)."""
    return Rule(None, 0.001, 0.0005)


def _ev(values) -> str:
    mean, error = mean_error(values)
    return f"{100 * mean:+.2f} % ± {100 * error:.2f}" if np.isfinite(error) else "–"


def _gaps(c: Candidates, kept, rating) -> str:
    """Adjacent ratings' differences under each method, ± their standard errors."""
    said = []
    for method in METHODS:
        for high, low, difference, error in rating_rule.differences(c, kept, rating, method):
            if not np.isfinite(error):
                said.append(f"{high} − {low} {method} –")
                continue
            told = "" if difference >= TOLD_APART * error else " (not told apart)"
            said.append(
                f"{high} − {low} {method} {100 * difference:+.2f} ± {100 * error:.2f}{told}"
            )
    return "; ".join(said)


def print_by_rating(c: Candidates, rule: Rule, settings, evidence, title):
    """Picks, mean odds and fair closing EV per rating (every market together), and whether
    adjacent ratings are told apart."""
    rating = rule.apply(c, settings, evidence)
    kept = np.ones(len(c), dtype=bool)
    t = rating_rule.weakest_t(c, kept, rating, min_share=0.0)
    print(f"\n{title}: {rule.label()}; weakest t {t:.2f}\n")
    print("| rating | picks | mean odds | fair closing EV, power | fair closing EV, Shin |")
    print("|---|---|---|---|---|")
    for r in "ABC":
        mine = rating == r
        odds_mean = f"{c.odds[mine].mean():.2f}" if mine.any() else "–"
        print(
            f"| {r} | {mine.sum():,} | {odds_mean} | {_ev(c.closing_ev['power'][mine])} | "
            f"{_ev(c.closing_ev['shin'][mine])} |"
        )
    print(f"\n{_gaps(c, kept, rating)}")


def print_report(c: Candidates, rule: Rule, settings, evidence):
    """Per market (lines together), price band and rating: picks, mean odds, fair closing EV
    under power and Shin, ROI; and the adjacent ratings' differences in each band."""
    rating = rule.apply(c, settings, evidence)
    print(
        "\n| market | price band | rating | picks | mean odds | fair closing EV, power "
        "| fair closing EV, Shin | ROI |"
    )
    print("|---|---|---|---|---|---|---|---|")
    band = metrics.price_band(c.odds)
    gaps = []
    for market in dict.fromkeys(c.market.tolist()):
        for b, name in [*enumerate(BAND_NAMES), (None, "all")]:
            where = c.of(market) & ((band == b) | (b is None))
            for r in ("A", "B", "C", "all"):
                mine = where & ((rating == r) | (r == "all"))
                if not mine.any():
                    print(f"| {market} | {name} | {r} | 0 | – | – | – | – |")
                    continue
                roi, roi_error = mean_error(c.profit[mine])
                roi_text = f"{100 * roi:+.1f} % ± {100 * roi_error:.1f}" if mine.sum() > 1 else "–"
                print(
                    f"| {market} | {name} | {r} | {mine.sum():,} | {c.odds[mine].mean():.2f} | "
                    f"{_ev(c.closing_ev['power'][mine])} | {_ev(c.closing_ev['shin'][mine])} | "
                    f"{roi_text} |"
                )
            if where.any():
                gaps.append(f"{market}, {name}: {_gaps(c, where, rating)}")
    print("\nadjacent ratings, fair closing EV difference ± standard error:")
    for line in gaps:
        print(f"  {line}")


def _describe(c: Candidates) -> str:
    leagues = ", ".join(sorted(set(c.league.tolist())))
    seasons = sorted(set(c.season.tolist()))
    span = f"{seasons[0]}–{seasons[-1]}" if seasons else "no season"
    return f"{leagues or 'no league'}, {span}, {len(c):,} candidates"


def report(
    c: Candidates, settings, smoke=False, grid=(rating_rule.TRUST_GRID, rating_rule.GROWTHS)
):
    """Print the choice of the rule over ``grid`` (trust parameters, growth thresholds), how it
    holds elsewhere, and the markets that get picks."""
    split = {part: c if smoke else c.where(c.part == part) for part in PARTS}
    for part in PARTS:
        print(f"{part}: {_describe(split[part])}")
    evidence = c.evidence(settings["MARGIN_METHOD"], settings["PICK_MARKETS"])
    configured = configured_rule(settings)
    chosen, chosen_t = rating_rule.search(split["choice"], settings, evidence, *grid)
    raw, raw_t = rating_rule.search(split["choice"], settings, evidence, (None,), grid[1])
    print(
        f"\nchosen on the choice part: {chosen.label() if chosen else 'none'} (weakest t, "
        f"league by league, {chosen_t:.2f}); the configured rule is "
        f"{'that one' if chosen == configured else configured.label()}"
    )
    print(
        f"best raw growth rule on the choice part: {raw.label() if raw else 'none'} "
        f"(weakest t, league by league, {raw_t:.2f})"
    )
    rules = [(configured, "configured rule"), (raw_rule(settings), "model 3.0.0's")]
    if chosen is not None and chosen != configured:
        rules.insert(1, (chosen, "chosen rule"))
    for rule, name in rules:
        for part in PARTS:
            print_by_rating(split[part], rule, settings, evidence, f"{part}, {name}")
    for rule, name in rules[:-1]:
        for part in ("confirmation", "later", "choice"):
            print(f"\nthe {name} on the {part} part, per market, price band and rating:")
            print_report(split[part], rule, settings, evidence)
    print(
        f"\nmarkets whose picks have a positive fair closing EV under {' and '.join(METHODS)}: "
        f"choice {','.join(rating_rule.pick_markets(split['choice'])) or 'none'}; confirmation "
        f"{','.join(rating_rule.pick_markets(split['confirmation'])) or 'none'} (PICK_MARKETS "
        f"is {','.join(settings['PICK_MARKETS']) or 'empty'})"
    )


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
        f"commit {commit()}; {len(files)} files from {args.data}; "
        f"MARGIN_METHOD={settings['MARGIN_METHOD']}; "
        f"candidate picks (edge ≥ {settings['PICK_MIN_EDGE']}) of finished matches"
        + ("; a smoke run: its one season is every part" if args.smoke else "")
    )
    report(c, settings, args.smoke)


if __name__ == "__main__":
    main()
