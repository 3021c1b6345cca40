"""Which margin removal is best calibrated: every method on Pinnacle's closing lines, no database.

    .venv/bin/python -m bench.margins [--data DIR] [--smoke]

Parses the football-data CSVs with ``services.feeds.formats.footballdata.parse`` and de-margins
Pinnacle's closing 1x2 and over/under 2.5 prices of every played match with each method of
``engine.betting.odds``. Prints, as Markdown tables, per market and method: log loss and RPS (1x2)
with the standard error of each one's difference to proportional removal (paired by match), and the
calibration by closing price band (under 2.0, 2.0-4.0, 4.0-8.0, 8.0 and over): the observed win rate
of the selections in the band with its standard error, and each method's mean probability with the
gap's standard error (√Σp(1 − p) / n: the spread of the observed rate were the method's
probabilities true). The calibration score of a method is χ² = Σ (gap / its standard error)² over
the bands of both markets; the best calibrated method has the lowest. The choice is then checked on
the earlier and the later half of the seasons apart, so it does not rest on one stretch of the data.
``--smoke``: one file, so one season and no halves to check.
"""

import argparse
from pathlib import Path

import numpy as np

from bench.common import FOOTBALL_DATA, commit, data_files, parse_arguments
from engine.betting import metrics
from engine.betting.odds import METHODS, remove_margin
from engine.markets import MARKETS, outcome_indices
from services.feeds.formats import footballdata

SCORED_MARKETS = ("1x2", "ou25")
#: Closing-price bands: [low, high) decimal odds.
BANDS = (
    (1.0, 2.0, "under 2.0"),
    (2.0, 4.0, "2.0–4.0"),
    (4.0, 8.0, "4.0–8.0"),
    (8.0, np.inf, "8.0 and over"),
)


def load(files: list[Path]) -> dict:
    """Pinnacle's closing prices of every played match, per market, with results and seasons."""
    matches = []
    for path in files:
        parsed = footballdata.parse(path.read_text(encoding="utf-8"))
        matches += [m for m in parsed.matches if m.home_goals is not None]
    matches.sort(key=lambda m: (m.kickoff_at, m.league.code, m.home_team))
    n = len(matches)
    prices = {market: np.full((n, len(MARKETS[market])), np.nan) for market in SCORED_MARKETS}
    for row, match in enumerate(matches):
        for quote in match.odds:
            if quote.bookmaker == "pinnacle" and quote.is_closing and quote.market in prices:
                prices[quote.market][row, MARKETS[quote.market].index(quote.selection)] = (
                    quote.price
                )
    goals = [
        np.array([getattr(m, side) for m in matches], dtype=float)
        for side in ("home_goals", "away_goals")
    ]
    return {
        "season": np.array([m.season for m in matches]),
        "league": np.array([m.league.code for m in matches]),
        "outcome": outcome_indices(*goals),
        "prices": prices,
        "files": len(files),
    }


def _per_match_scores(probs, outcome, market):
    """(n,) log loss and (for 1x2) RPS of each row, so differences can be paired by match."""
    rows = np.arange(len(outcome))
    log_loss = -np.log(np.clip(probs[rows, outcome], 1e-15, 1.0))
    if market != "1x2":
        return {"log loss": log_loss}
    gap = np.cumsum(probs - (outcome[:, None] == np.arange(probs.shape[1])), axis=1)[:, :-1]
    return {"log loss": log_loss, "RPS": (gap**2).sum(axis=1) / (probs.shape[1] - 1)}


def band_table(prices, probs_by_method, outcome):
    """Per price band: selections, observed rate and its standard error, and per method the mean
    probability, its gap to the observed rate and that gap's standard error."""
    bands = {
        m: metrics.reliability_by_price(p, outcome, prices) for m, p in probs_by_method.items()
    }
    table = []
    for index, (low, high) in enumerate(
        zip((1.0, *metrics.PRICE_BANDS), (*metrics.PRICE_BANDS, None), strict=True)
    ):
        first = next(iter(bands.values()))[index]
        if not first["count"]:
            continue
        observed, n = first["observed_rate"], first["count"]
        table.append(
            {
                "band": f"under {high:.1f}"
                if low == 1.0
                else (f"{low:.1f} and over" if high is None else f"{low:.1f}–{high:.1f}"),
                "selections": n,
                "observed": observed,
                "observed_error": np.sqrt(observed * (1 - observed) / n),
                "methods": {
                    m: (
                        rows[index]["mean_predicted"],
                        observed - rows[index]["mean_predicted"],
                        rows[index]["std_error"],
                    )
                    for m, rows in bands.items()
                },
            }
        )
    return table


def chi_square(table):
    """Σ over bands of (gap / its standard error)² for each method."""
    methods = table[0]["methods"] if table else {}
    return {
        method: float(
            sum((row["methods"][method][1] / row["methods"][method][2]) ** 2 for row in table)
        )
        for method in methods
    }


def evaluate(data, rows):
    """Scores, band tables and χ² per market over the matches in ``rows``."""
    report = {}
    for market in SCORED_MARKETS:
        prices = data["prices"][market]
        outcome = data["outcome"][market]
        keep = rows & np.isfinite(prices).all(axis=1) & (outcome >= 0)
        probs = {method: remove_margin(prices[keep], method=method) for method in METHODS}
        scores = {
            method: _per_match_scores(p, outcome[keep], market) for method, p in probs.items()
        }
        table = band_table(prices[keep], probs, outcome[keep])
        report[market] = {
            "matches": int(keep.sum()),
            "scores": scores,
            "table": table,
            "chi_square": chi_square(table),
            "ece": {
                m: metrics.expected_calibration_error(p, outcome[keep]) for m, p in probs.items()
            },
        }
    return report


def _pct(value):
    return f"{100 * value:.2f} %"


def print_scores(report):
    """Log loss and RPS per method, with the paired standard error of the gap to proportional."""
    print("| market | score | " + " | ".join(METHODS) + " |")
    print("|---|---|" + "---|" * len(METHODS))
    for market, figures in report.items():
        for score in figures["scores"]["proportional"]:
            base = figures["scores"]["proportional"][score]
            cells = []
            for method in METHODS:
                values = figures["scores"][method][score]
                if method == "proportional":
                    cells.append(f"{values.mean():.5f}")
                    continue
                gap = values - base
                error = gap.std(ddof=1) / np.sqrt(len(gap))
                cells.append(f"{values.mean():.5f} ({gap.mean():+.5f} ± {error:.5f})")
            print(
                f"| {market} ({figures['matches']:,} matches) | {score} | "
                + " | ".join(cells)
                + " |"
            )
    for market, figures in report.items():
        print(
            f"| {market} | ECE (10 bins) | "
            + " | ".join(f"{figures['ece'][m]:.4f}" for m in METHODS)
            + " |"
        )
        print(
            f"| {market} | band χ² ({len(figures['table'])} bands) | "
            + " | ".join(f"{figures['chi_square'][m]:.1f}" for m in METHODS)
            + " |"
        )


def print_bands(market, figures):
    """The calibration table of one market by closing price band."""
    print(
        f"\n{market}: observed win rate and each method's mean probability, by Pinnacle's "
        "closing price"
    )
    print("(gap = observed − method, ± its standard error)\n")
    print("| closing price | selections | observed | " + " | ".join(METHODS) + " |")
    print("|---|---|---|" + "---|" * len(METHODS))
    for row in figures["table"]:
        cells = [
            f"{_pct(mean)} ({100 * gap:+.2f} ± {100 * error:.2f})"
            for mean, gap, error in (row["methods"][m] for m in METHODS)
        ]
        print(
            f"| {row['band']} | {row['selections']:,} | {_pct(row['observed'])} ± "
            f"{100 * row['observed_error']:.2f} | " + " | ".join(cells) + " |"
        )


def best(report):
    """The method with the lowest χ² over both markets' bands (log loss breaks a tie)."""
    total = {m: sum(f["chi_square"][m] for f in report.values()) for m in METHODS}
    loss = {m: sum(f["scores"][m]["log loss"].mean() for f in report.values()) for m in METHODS}
    return min(METHODS, key=lambda m: (round(total[m], 6), loss[m])), total


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=FOOTBALL_DATA)
    args = parse_arguments(parser)
    data = load(data_files(parser, args))
    print(f"commit {commit()}; {data['files']} files from {args.data}")
    everything = np.ones(len(data["season"]), dtype=bool)
    report = evaluate(data, everything)
    print("\nPinnacle closing lines, every played match it priced:\n")
    print_scores(report)
    for market, figures in report.items():
        print_bands(market, figures)
    chosen, total = best(report)
    print(
        "\nband χ² of both markets: "
        + ", ".join(f"{m} {total[m]:.1f}" for m in sorted(METHODS, key=total.get))
        + f"\nbest calibrated: {chosen}"
    )
    seasons = sorted(set(data["season"]))
    if len(seasons) < 2:
        print(f"one season ({seasons[0]}): no earlier and later halves to check the choice on")
        return
    half = len(seasons) // 2
    for label, chosen_seasons in (
        (f"earlier seasons ({seasons[0]} to {seasons[half - 1]})", seasons[:half]),
        (f"later seasons ({seasons[half]} to {seasons[-1]})", seasons[half:]),
    ):
        part = evaluate(data, np.isin(data["season"], chosen_seasons))
        winner, part_total = best(part)
        losses = {
            m: " / ".join(f"{f['scores'][m]['log loss'].mean():.5f}" for f in part.values())
            for m in METHODS
        }
        print(
            f"{label}: band χ² "
            + ", ".join(f"{m} {part_total[m]:.1f}" for m in sorted(METHODS, key=part_total.get))
            + f"; best calibrated {winner}; log loss 1x2 / ou25: "
            + "; ".join(f"{m} {losses[m]}" for m in METHODS)
        )


if __name__ == "__main__":
    main()
