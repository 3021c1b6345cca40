"""Benchmark of the pick engine on the whole shared football-data set.

    .venv/bin/python -m bench.engine [--data DIR] [--database-url URL] [--smoke]

Prints import speed, backfill time, forecast quality against the Pinnacle closing line, CLV and
ROI of the backfilled picks by rating, backtest latency and the settlement of 100,000 picks.
Every speed figure stands beside a baseline measured in the same run on the same machine.
Uses a fresh SQLite file in a temporary folder unless --database-url names a database it may
wipe. ``--smoke``: one file (one season, so the quality is scored on every match of it), one run
of each timing, the settlement of 1,000 picks.
"""

import argparse
import csv
import statistics
from datetime import timedelta

import numpy as np
from flask import current_app

from bench.common import build_picks, data_arguments, fresh_app, parse_arguments, timed
from clock import utcnow
from engine.betting import calibration, metrics, odds
from engine.markets import MARKETS, outcome_indices
from engine.records import LeagueRecord, MatchRecord, OddsRecord
from models import League, Match, MatchIntelligence, OddsQuote, Pick, Prediction
from models.schema import create_tables, drop_tables
from services.feeds import imports
from services.forecasting import backtests, forecast, predictions
from services.market import price_cubes
from services.record import settling
from store.database import db

SETTLEMENT_PICKS = 100_000
SMOKE_SETTLEMENT_PICKS = 1_000


def bench_import(files):
    """Import every file; baseline: reading the same files with the csv module alone."""

    def read_only():
        rows = 0
        for path in files:
            with path.open(newline="", encoding="utf-8-sig") as handle:
                rows += sum(1 for row in csv.reader(handle) if any(row)) - 1
        return rows

    rows, baseline = timed(read_only)
    total = imports.ImportSummary()

    def import_all():
        for path in files:
            total.add(imports.import_file(path))
        return total

    _, seconds = timed(import_all)
    print(
        f"import: {total.rows_read} rows, {total.matches_new} matches, {total.odds_stored} odds "
        f"in {seconds:.1f} s = {total.rows_read / seconds:,.0f} rows/s "
        f"(baseline csv.reader only: {rows / baseline:,.0f} rows/s, ratio "
        f"{seconds / baseline:.0f}x); rejected {total.rows_rejected}"
    )
    _, again = timed(import_all)
    print(
        f"re-import (idempotent): {again:.1f} s, "
        f"{Match.select().count()} matches, {OddsQuote.select().count()} odds"
    )


def bench_backfill():
    """The whole walk-forward backfill (goal ≤ 120 s on 2 cores)."""
    result, seconds = timed(lambda: predictions.backfill(current_app.config))
    print(
        f"backfill: {seconds:.1f} s for {result['matches']} matches ({result['fits']} fits, "
        f"model {result['model_seconds']:.1f} s) -> {result['predictions']} predictions, "
        f"{result['picks']} picks; goal <= 120 s"
    )


def _scored_label(smoke):
    """What ``_third_season_on`` takes, as the figures' lines say it."""
    return "the smoke run's one season" if smoke else "each league's third season"


def _third_season_on(smoke=False):
    """Match ids of each league's third season onwards (two seasons of history before them); in
    a smoke run, whose one file is one season, every match."""
    if smoke:
        return np.array(sorted(m for (m,) in Match.select(Match.id).tuples()), dtype=np.int64)
    seasons = {}
    for league_id, season in Match.select(Match.league, Match.season).distinct().tuples():
        seasons.setdefault(league_id, []).append(season)
    keep = []
    for league_id, names in seasons.items():
        later = sorted(names)[2:]
        if later:
            keep += [
                m
                for (m,) in Match.select(Match.id)
                .where((Match.league == league_id) & Match.season.in_(later))
                .tuples()
            ]
    return np.array(sorted(keep), dtype=np.int64)


def _pinnacle(match_ids, market, closing, method=None):
    """Pinnacle's de-margined line (by ``MARGIN_METHOD`` unless ``method`` says)."""
    method = method or current_app.config["MARGIN_METHOD"]
    cube = price_cubes.load(match_ids, closing=closing)[market]
    if "pinnacle" not in cube.bookmakers:
        return np.full((len(match_ids), len(MARKETS[market])), np.nan)
    return odds.remove_margin(cube.prices[:, cube.bookmakers.index("pinnacle")], method=method)


def _pinnacle_prices(match_ids, market):
    """Pinnacle's closing prices of ``match_ids`` (NaN where it did not quote)."""
    cube = price_cubes.load(match_ids, closing=True)[market]
    if "pinnacle" not in cube.bookmakers:
        return np.full((len(match_ids), len(MARKETS[market])), np.nan)
    return cube.prices[:, cube.bookmakers.index("pinnacle")]


def _stored_forecasts(match_ids, market):
    """Per forecast of ``market`` on ``match_ids``: published, goal chain, Dixon-Coles alone and
    the market-implied ratings alone (NaN where a match has none), from the stored predictions
    and intelligence."""
    selections = MARKETS[market]
    stored = {
        match_id: (published, chain)
        for match_id, published, chain in Prediction.select(
            Prediction.match, Prediction.probabilities, Prediction.model_probabilities
        )
        .where(Prediction.market == market)
        .tuples()
    }
    views = dict(
        MatchIntelligence.select(MatchIntelligence.match, MatchIntelligence.payload).tuples()
    )
    nothing = [np.nan] * len(selections)
    rows = {"published": [], "goal chain": [], "Dixon-Coles alone": [], "ratings alone": []}
    for match_id in match_ids:
        published, chain = stored[match_id]
        model = views[match_id]["model"]
        ratings = (model.get("marketRatings") or {}).get("probabilities", {}).get(market)
        rows["published"].append([published[s] for s in selections])
        rows["goal chain"].append([chain[s] for s in selections])
        rows["Dixon-Coles alone"].append([model["probabilities"][market][s] for s in selections])
        rows["ratings alone"].append([ratings[s] for s in selections] if ratings else nothing)
    return {name: np.array(values, dtype=float) for name, values in rows.items()}


def bench_quality(smoke=False):
    """Forecast quality against de-margined Pinnacle closing odds on the same matches: each goal
    model alone, the chain the service publishes where no sharp line is quoted, the published
    forecast, and Pinnacle's pre-match line; per league for the ratings."""
    match_ids = _third_season_on(smoke)
    facts = {
        match_id: (home, away, code)
        for match_id, home, away, code in Match.select(
            Match.id, Match.home_goals, Match.away_goals, League.code
        )
        .join(League)
        .tuples()
    }
    hg = np.array([facts[m][0] for m in match_ids], dtype=float)
    ag = np.array([facts[m][1] for m in match_ids], dtype=float)
    league = np.array([facts[m][2] for m in match_ids])
    for market, score, name in (
        ("1x2", metrics.rps, "RPS"),
        ("ou25", metrics.log_loss, "log loss"),
    ):
        forecasts = _stored_forecasts(match_ids, market)
        pre = _pinnacle(match_ids, market, closing=False)
        close = _pinnacle(match_ids, market, closing=True)
        outcome = outcome_indices(hg, ag)[market]
        rows = np.isfinite(pre).all(1) & np.isfinite(close).all(1) & (outcome >= 0)
        rows &= np.isfinite(forecasts["ratings alone"]).all(1)
        reference = score(close[rows], outcome[rows])
        figures = {**forecasts, "Pinnacle pre-match": pre}
        method = current_app.config["MARGIN_METHOD"]
        print(
            f"{market} {name} / Pinnacle closing {name} ({method} margin removal), "
            f"{rows.sum()} matches from {_scored_label(smoke)} (closing {reference:.5f}):"
        )
        for label, values in figures.items():
            value = score(values[rows], outcome[rows])
            note = ""
            if label == "goal chain":
                note = "  (what is published where no sharp pre-match line is quoted)"
            print(f"  {label:20s} {value:.5f}  ratio {value / reference:.4f}{note}")
        per_league = []
        for code in sorted(set(league[rows])):
            mine = rows & (league == code)
            closing_score = score(close[mine], outcome[mine])
            ratings = score(forecasts["ratings alone"][mine], outcome[mine]) / closing_score
            goals = score(forecasts["Dixon-Coles alone"][mine], outcome[mine]) / closing_score
            per_league.append(f"{code} {ratings:.4f} (Dixon-Coles {goals:.4f})")
        print(f"  ratings alone by league: {'; '.join(per_league)}")
        by_method = {
            method: score(_pinnacle(match_ids, market, True, method)[rows], outcome[rows])
            for method in odds.METHODS
        }
        print(
            f"  margin removal of the closing odds ({name}): "
            + ", ".join(f"{method} {value:.5f}" for method, value in by_method.items())
        )
        published = score(forecasts["published"][rows], outcome[rows])
        print(
            f"  published / the proportionally de-margined close (as model 2.0.0 was measured): "
            f"{published / by_method['proportional']:.4f}"
        )
        calibrated = calibration.evaluate(
            forecasts["published"][rows],
            outcome[rows],
            reference=close[rows],
            prices=_pinnacle_prices(match_ids, market)[rows],
        )
        print(
            f"  ECE (10 bins): published {calibrated['ece']:.4f}, closing line "
            f"{calibrated['reference']['ece']:.4f} (goal <= 0.02)"
        )
        bands = [
            (f"{band['from']:.0f}–{band['to']:.0f}" if band["to"] else f"{band['from']:.0f}+")
            + f": {100 * band['mean_predicted']:.2f} % "
            f"predicted, {100 * band['observed_rate']:.2f} % ± {100 * band['std_error']:.2f} won"
            for band in calibrated["price_bands"]
            if band["count"]
        ]
        print(f"  published by Pinnacle's closing price: {'; '.join(bands)}")
    print(
        "  goals: ratings alone <= 1.015 over the leagues together, no league above 1.02; "
        "published <= 1.008 and <= Pinnacle pre-match"
    )


def bench_without_sharp_line(smoke=False):
    """The published forecast where no sharp pre-match line exists: every Pinnacle and market
    average pre-match quote is hidden (in a transaction rolled back afterwards) and the whole
    forecast runs again, so the goal chain is all it has."""
    match_ids = _third_season_on(smoke)
    facts = dict(Match.select(Match.id, Match.home_goals).tuples())
    away = dict(Match.select(Match.id, Match.away_goals).tuples())
    hg = np.array([facts[m] for m in match_ids], dtype=float)
    ag = np.array([away[m] for m in match_ids], dtype=float)
    with db.atomic() as transaction:
        hidden = (
            OddsQuote.delete()
            .where(~OddsQuote.is_closing & OddsQuote.bookmaker.in_(["pinnacle", "market-average"]))
            .execute()
        )
        run = forecast.forecast(utcnow(), current_app.config)
        transaction.rollback()
    position = {match_id: row for row, match_id in enumerate(run.match_id.tolist())}
    at = np.array([position[match_id] for match_id in match_ids])
    print(f"with every sharp pre-match line hidden ({hidden:,} quotes), the published forecast:")
    for market, score, name in (
        ("1x2", metrics.rps, "RPS"),
        ("ou25", metrics.log_loss, "log loss"),
    ):
        close = _pinnacle(match_ids, market, closing=True)
        outcome = outcome_indices(hg, ag)[market]
        published = run.output.published[market][at]
        rows = np.isfinite(close).all(1) & (outcome >= 0)
        ratio = score(published[rows], outcome[rows]) / score(close[rows], outcome[rows])
        sources = np.unique(run.source[market][at][rows], return_counts=True)
        made = ", ".join(f"{source} {count}" for source, count in zip(*sources, strict=True))
        print(f"  {market} {name} ratio {ratio:.4f} over {rows.sum()} matches (made by: {made})")


def bench_refresh(runs=5, code="E0"):
    """One match's refresh (a fixture added after the last match of league ``code``), which fits
    only its group's cut-off; baseline: the whole forecast the refresh used to run (every group,
    every week)."""
    last = (
        Match.select(Match)
        .join(League)
        .where(League.code == code)
        .order_by(Match.kickoff_at.desc())
        .first()
    )
    kickoff = last.kickoff_at + timedelta(days=70)
    fixture = MatchRecord(
        league=LeagueRecord(
            code, last.league.name, last.league.country, last.league.competition_type
        ),
        season="2024-25",
        kickoff_at=kickoff,
        home_team=last.home_team.name,
        away_team=last.away_team.name,
        odds=[
            OddsRecord(book, "1x2", selection, price)
            for book, prices in (("pinnacle", (2.1, 3.5, 3.6)), ("bet365", (2.2, 3.4, 3.4)))
            for selection, price in zip(("home", "draw", "away"), prices, strict=True)
        ],
    )
    imports.store_records([fixture])
    match = Match.get(Match.kickoff_at == kickoff)
    now = kickoff - timedelta(days=2)
    times = [
        timed(
            lambda: predictions.refresh(
                predictions.check_open(match.id), current_app.config, now=now
            )
        )[1]
        for _ in range(runs)
    ]
    quick = Prediction.get((Prediction.match == match) & (Prediction.market == "1x2"))
    full, baseline = timed(lambda: forecast.forecast(now, current_app.config))
    (row,) = np.flatnonzero(full.match_id == match.id)
    gap = max(
        abs(quick.probabilities[s] - full.output.published["1x2"][row, i])
        for i, s in enumerate(("home", "draw", "away"))
    )
    chain_gap = max(
        abs(quick.model_probabilities[s] - full.output.model["1x2"][row, i])
        for i, s in enumerate(("home", "draw", "away"))
    )
    group = Match.select().join(League).where(League.country == last.league.country).count()
    print(
        f"refresh of one match ({last.league.country}, {group} matches in its group): median "
        f"{statistics.median(times):.3f} s over {runs} runs; baseline, the whole forecast: "
        f"{baseline:.2f} s (ratio {baseline / statistics.median(times):.0f}x); largest gap to "
        f"the whole forecast's published probability {gap:.2e}, goal chain {chain_gap:.2e}; "
        "goal <= 0.5 s"
    )


def _figure(value, spec) -> str:
    """``value`` formatted, or a dash where it is None (too few picks for it: a smoke run's)."""
    return "–" if value is None else format(value, spec)


def bench_picks(smoke=False):
    """The backfilled picks by rating, as the track record reports them: all of them, and those
    of each league's third season on."""
    later = set(_third_season_on(smoke).tolist())
    rows = list(
        Pick.select(
            Pick.match,
            Pick.rating,
            Pick.status,
            Pick.profit,
            Pick.odds,
            Pick.edge,
            Pick.clv,
            Pick.stake,
            Pick.closing_probability,
        )
        .join(Match)
        .where(~Pick.is_live)
        .order_by(Match.kickoff_at, Pick.id)
        .tuples()
    )
    match_id, rating, status, *numbers = (np.array(column) for column in zip(*rows, strict=True))
    numbers = [column.astype(float) for column in numbers]
    method = current_app.config["MARGIN_METHOD"]
    for label, keep in (
        ("every season", np.ones(len(rows), dtype=bool)),
        (_scored_label(smoke) + ("" if smoke else " on"), np.isin(match_id, list(later))),
    ):
        grouped = metrics.track_record_by(
            rating[keep], status[keep], *(column[keep] for column in numbers)
        )
        print(f"backfilled picks by rating, {label} (avgClosingEv: {method} margin removal):")
        for key, f in grouped.items():
            print(
                f"  {key}: {f['picks']:5d} picks, avg odds {_figure(f['avg_odds'], '.2f')}, hit "
                f"rate {_figure(f['hit_rate'], '.3f')}, avg CLV {_figure(f['avg_clv'], '+.4f')}, "
                f"avgClosingEv {_figure(f['avg_closing_ev'], '+.4f')} ± "
                f"{_figure(f['avg_closing_ev_std_error'], '.4f')}, ROI "
                f"{_figure(f['roi'], '+.4f')} ± {_figure(f['roi_std_error'], '.4f')}"
            )


def bench_backtest(runs=31):
    """Median milliseconds of a backtest over every backfilled pick; baseline: loading them."""
    load_times = [timed(backtests.pick_frame)[1] for _ in range(runs)]
    run_times = [timed(backtests.run)[1] for _ in range(runs)]
    picks = len(backtests.pick_frame()["pick_id"])
    print(
        f"backtest over {picks} backfilled picks: median {statistics.median(run_times) * 1000:.1f}"
        f" ms (baseline, loading the picks alone: {statistics.median(load_times) * 1000:.1f} ms)"
        f"; goal <= 50 ms"
    )


def bench_settlement(picks=SETTLEMENT_PICKS):
    """Settle 100,000 pending picks; baseline: one UPDATE touching the same rows."""
    drop_tables()
    create_tables()
    build_picks(picks, utcnow() - timedelta(days=1))
    total = Pick.select().count()

    def baseline():
        with db.atomic():
            Pick.update(status="pending", profit=None, settled_at=None).execute()

    _, floor = timed(baseline)

    def settle():
        with db.atomic():
            return settling.settle_pending(current_app.config)

    counts, seconds = timed(settle)
    print(
        f"settlement of {total:,} pending picks: {seconds:.2f} s (won {counts['won']:,}, lost "
        f"{counts['lost']:,}); baseline, one UPDATE of the same rows: {floor:.2f} s, ratio "
        f"{seconds / floor:.1f}x; goal <= 5 s"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    data_arguments(parser)
    args = parse_arguments(parser)
    with fresh_app(parser, args) as (_, files):
        print(f"database: {db.obj.__class__.__name__}; {len(files)} files from {args.data}")
        bench_import(files)
        bench_backfill()
        bench_quality(args.smoke)
        bench_without_sharp_line(args.smoke)
        if args.smoke:  # the league of its one file
            bench_refresh(runs=1, code=League.select(League.code).scalar())
        else:
            bench_refresh()
        bench_picks(args.smoke)
        bench_backtest(runs=1 if args.smoke else 31)
        bench_settlement(SMOKE_SETTLEMENT_PICKS if args.smoke else SETTLEMENT_PICKS)


if __name__ == "__main__":
    main()
