"""What shots, past matches' results and the league table add to the goal model alone, no database.

    .venv/bin/python -m bench.goal_model [--data DIR] [--leagues E0,SP1] [--dixon-coles]
        [--stakes-only] [--smoke]

The goal model alone is what the service publishes where no sharp pre-match price is quoted:
the market-implied ratings (fitted on earlier matches' closing lines), else Dixon-Coles on
goals. Scored as ``bench/market_ratings.py`` scores it: 1x2 RPS ÷ Pinnacle's closing line
(de-margined proportionally), each league from its third season on, the Championship on its
second; no price of the match being forecast is used. Each addition is compared with the model
as it is, match by match: the paired difference of RPS per match ÷ the close's mean RPS, with
its standard error.

1. **Results and shots into the ratings** (``RatingsConfig.goal_weight`` and ``shots_weight``,
   ``engine.model.shots.moved_rates``): each past match's solved goal rates moved towards its
   goals and its shots on target × the running conversion (goals per shot on target of every
   earlier match) before the ratings fit them. Chosen on the choice leagues (E0, SP1), read on
   the confirmation leagues (D1, F1, and E1's second season), which the choice never saw.
2. With ``--dixon-coles`` (slow: two walk-forward fits per share): **Dixon-Coles on a goal
   proxy** (``engine.model.shots.goal_proxy``: goals blended with shots on target × the running
   conversion) alone, against Dixon-Coles on goals, and pooled with the ratings
   (p ∝ ratings^(1 − w) · proxy model^w).

3. **Memory and cut-off of the ratings** (``RatingsConfig.long_share``,
   ``long_half_life_days`` and ``daily_cutoff``): a long memory beside the 14-day one (each
   past match weighs 0.5^(age/14 d) + share · 0.5^(age/L)), and fits on every match kicked off
   before the forecast match's day rather than its week. Chosen on the choice leagues, read on
   the confirmation leagues, with each set's distance to the close (the mean RPS between the
   model's and the closing line's probabilities ÷ the close's mean RPS; nearly noiseless,
   but not the score: the score is that distance plus a covariance with the outcomes).

4. **What is at stake in the table** (``RatingsConfig.dead_attack``, ``dead_defence``,
   ``dead_learned``, ``dead_pace``, ``late_goals``; ``engine.model.standings``): from the
   table of each match's league and season at its cut-off, a side that can no longer move
   between its zones (title, European places, relegation) has its own goal rate and its
   opponent's moved by a factor, fixed or learned from earlier such matches' closing lines.
   Every setting is scored on the choice leagues only; the best there, and only it, is then
   read on every set, its last eight rounds apart (``--stakes-only``: this section alone).

Then the model alone as it is, on each set, with its standard error. ``--leagues`` keeps the
files of those divisions only (to iterate on one or two); ``--smoke``: one file, one season.
"""

import argparse
from dataclasses import replace
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from bench.common import FOOTBALL_DATA, data_files, parse_arguments, timed
from bench.market_ratings import (
    CHOICE_LEAGUES,
    CONFIRMATION_LEAGUES,
    evaluation_sets,
    load,
    ratings_input,
    ratio,
)
from engine.markets import outcome_indices
from engine.model import market_ratings, shots, standings, timeline, walkforward

#: The ratings' (goal_weight, shots_weight) grid: each alone, then both.
WEIGHTS = (
    (0.0, 0.0),
    (0.02, 0.0),
    (0.05, 0.0),
    (0.1, 0.0),
    (0.0, 0.02),
    (0.0, 0.05),
    (0.0, 0.1),
    (-0.02, 0.02),
    (-0.05, 0.05),
)
#: The ratings' memories and cut-offs tried: (label, RatingsConfig changes).
MEMORIES = (
    *(
        (f"long {days} d at {share}", {"long_half_life_days": days, "long_share": share})
        for days in (60, 90, 120)
        for share in (0.02, 0.05, 0.1)
    ),
    ("daily cut-off", {"daily_cutoff": True}),
    *(
        (f"daily, long 90 d at {share}", {"daily_cutoff": True, "long_share": share})
        for share in (0.03, 0.05)
    ),
)
#: What is at stake, read from the table (``engine.model.standings``): (label, RatingsConfig
#: changes). Written down before any was scored: a dead side's opponent's goal rate up
#: (``dead_defence``), its own down (``dead_attack``), both learned walk-forward from earlier
#: dead rubbers' closing lines, and more goals in a season's last eight rounds (``late_goals``).
STAKES = (
    ("dead: opponent +5 %", {"dead_defence": 0.05}),
    ("dead: opponent +10 %", {"dead_defence": 0.1}),
    ("dead: opponent +15 %", {"dead_defence": 0.15}),
    ("dead: own -5 %", {"dead_attack": -0.05}),
    ("dead: own -5 %, opponent +10 %", {"dead_attack": -0.05, "dead_defence": 0.1}),
    ("dead: learned from earlier closes", {"dead_learned": True}),
    ("dead: opponent +10 %, late +3 %", {"dead_defence": 0.1, "late_goals": 0.03}),
    ("dead: learned, late +3 %", {"dead_learned": True, "late_goals": 0.03}),
    # Added after the eight above were scored on the choice leagues (the confirmation leagues
    # still unread): a side read as dead once it would need more than `dead_pace` points a
    # match to move between zones, not 3 (closes of such sides moved about half as far).
    *(
        (f"dead at {pace} points a match: {label}", {"dead_pace": pace, **changes})
        for pace in (2.0, 1.5)
        for label, changes in (
            ("opponent +7 %", {"dead_defence": 0.07}),
            ("own -5 %, opponent +10 %", {"dead_attack": -0.05, "dead_defence": 0.1}),
            ("learned from earlier closes", {"dead_learned": True}),
        )
    ),
)
#: Shares of shots on target × conversion in Dixon-Coles' goal proxy, and pool weights of it.
SHARES = (0.5,)
POOL_WEIGHTS = (0.05, 0.1, 0.2)
CHOICE = "choice (E0+SP1)"
CONFIRMATION = "confirmation (D1+F1, E1's 2nd season)"


def scored_sets(ds, smoke: bool) -> dict[str, np.ndarray]:
    """Rows scored, where Pinnacle quotes 1x2 pre-match and at the close: the choice and
    confirmation leagues and all together (a smoke run: its one file)."""
    base = evaluation_sets(ds, smoke)
    quoted = np.isfinite(ds.pinnacle_pre["1x2"]).all(1) & np.isfinite(ds.pinnacle_close["1x2"]).all(
        1
    )
    if smoke:
        return {"all": base["all"] & quoted}
    sets = {
        CHOICE: np.isin(ds.league, CHOICE_LEAGUES) & base["all"],
        CONFIRMATION: (np.isin(ds.league, CONFIRMATION_LEAGUES) & base["all"])
        | base.get("E1 (2nd season)", np.zeros(len(ds), dtype=bool)),
    }
    sets["all"] = sets[CHOICE] | sets[CONFIRMATION]
    return {name: rows & quoted for name, rows in sets.items() if (rows & quoted).any()}


def _rps(probs, outcome) -> np.ndarray:
    """Each row's RPS (the per-row terms of ``engine.betting.metrics.rps``)."""
    gap = np.cumsum(probs - (outcome[:, None] == np.arange(3)), axis=1)[:, :-1]
    return (gap**2).sum(axis=1) / 2


def per_match_rps(ds, probs) -> np.ndarray:
    """Each row's 1x2 RPS."""
    outcome = outcome_indices(ds.home_goals, ds.away_goals)["1x2"]
    return _rps(probs, outcome)


def compare(ds, rows, probs, base, against="now") -> str:
    """``probs``' ratio to the close on ``rows`` ± its error, and its paired difference from
    ``base`` ÷ the close's mean RPS ± the difference's standard error."""
    close = per_match_rps(ds, ds.pinnacle_close["1x2"])[rows].mean()
    new, old = per_match_rps(ds, probs)[rows], per_match_rps(ds, base)[rows]
    value, se = ratio(ds, "1x2", probs, rows)
    gap = new - old
    gap_se = gap.std(ddof=1) / np.sqrt(len(gap)) / close if len(gap) > 1 else float("nan")
    return f"{value:.4f} ± {se:.4f} (vs {against} {gap.mean() / close:+.5f} ± {gap_se:.5f})"


def dixon_coles(ds, home_goals, away_goals) -> dict[str, np.ndarray]:
    """Dixon-Coles walk-forward forecasts fitted on the given (perhaps fractional) goals."""
    out = walkforward.run(
        walkforward.WalkForwardInput(
            kickoff=ds.kickoff,
            group=ds.group,
            home=ds.home,
            away=ds.away,
            home_goals=home_goals,
            away_goals=away_goals,
            market={},
            now=int(ds.kickoff.max()) + 1,
        )
    )
    return out.model


def competitions(ds) -> np.ndarray:
    """Each match's league table: its division and season ("E0 2023-24")."""
    return np.char.add(np.char.add(ds.league.astype(str), " "), ds.season.astype(str))


def model_alone(ds, dc, goal_weight=0.0, shots_weight=0.0, **changes) -> np.ndarray:
    """The ratings (moved by results and shots at these weights, ``changes`` made to their
    config), else ``dc``: 1x2 (n, 3)."""
    inp = replace(
        ratings_input(ds, handicap=False),
        observed=(np.column_stack([ds.home_goals, ds.away_goals]), ds.on_target),
        competition=competitions(ds),
    )
    config = replace(
        market_ratings.RatingsConfig(),
        goal_weight=goal_weight,
        shots_weight=shots_weight,
        **changes,
    )
    out = market_ratings.run(inp, config)
    return market_ratings.with_fallback(out, {"1x2": dc["1x2"]})["1x2"]


def print_ratings_grid(ds, sets, dc, now) -> None:
    """Each (goal weight, shots weight) on every set; the choice's best, read on the others."""
    print("1. results and shots into the ratings: goal weight, shots weight -> 1x2 RPS ratio")
    choice_gap = {}
    for goal_weight, shots_weight in WEIGHTS:
        probs = model_alone(ds, dc, goal_weight, shots_weight)
        cells = "; ".join(f"{name}: {compare(ds, rows, probs, now)}" for name, rows in sets.items())
        print(f"  {goal_weight:+.2f}, {shots_weight:+.2f}: {cells}")
        rows = sets.get(CHOICE, sets["all"])
        choice_gap[(goal_weight, shots_weight)] = per_match_rps(ds, probs)[rows].mean()
    best = min(choice_gap, key=choice_gap.get)
    print(
        f"  chosen on {CHOICE if CHOICE in sets else 'all'}: goal weight {best[0]}, shots {best[1]}"
    )


def distance(ds, rows, probs) -> float:
    """The mean RPS between ``probs`` and Pinnacle's closing line on ``rows`` ÷ the close's
    mean RPS: how far the forecast is from the close, whatever happened."""
    close = ds.pinnacle_close["1x2"]
    gap = np.cumsum(probs - close, axis=1)[:, :-1]
    return float(((gap**2).sum(axis=1) / 2)[rows].mean() / per_match_rps(ds, close)[rows].mean())


def print_memories(ds, sets, dc, now) -> None:
    """Each memory and cut-off on every set; the choice's best, read on the others."""
    print("3. the ratings' memory and cut-off -> 1x2 RPS ratio")
    choice_rps = {}
    rows = sets.get(CHOICE, sets["all"])
    for label, changes in MEMORIES:
        probs = model_alone(ds, dc, **changes)
        cells = "; ".join(f"{name}: {compare(ds, sub, probs, now)}" for name, sub in sets.items())
        print(f"  {label}: {cells}")
        choice_rps[label] = (per_match_rps(ds, probs)[rows].mean(), probs)
    best = min(choice_rps, key=lambda label: choice_rps[label][0])
    chosen = choice_rps[best][1]
    cells = "; ".join(
        f"{name} {distance(ds, sub, chosen):.5f} (as it is {distance(ds, sub, now):.5f})"
        for name, sub in sets.items()
    )
    where = CHOICE if CHOICE in sets else "all"
    print(f"  chosen on {where}: {best}; distance to the close: {cells}")


def print_stakes(ds, sets, dc, now) -> None:
    """Each stakes setting on the choice leagues only; the choice's best, then read on every
    set (the confirmation leagues never see the others), with the last eight rounds apart."""
    print("4. what is at stake in the table -> 1x2 RPS ratio")
    where = CHOICE if CHOICE in sets else "all"
    rows = sets[where]
    choice_rps = {}
    for label, changes in STAKES:
        probs = model_alone(ds, dc, **changes)
        print(f"  {label}: {where}: {compare(ds, rows, probs, now)}", flush=True)
        choice_rps[label] = (per_match_rps(ds, probs)[rows].mean(), changes)
    best = min(choice_rps, key=lambda label: choice_rps[label][0])
    chosen = model_alone(ds, dc, **choice_rps[best][1])
    print(f"  chosen on {where}: {best}")
    stakes = market_ratings_stakes(ds)
    late = stakes.left.min(axis=1) <= 8
    for name, sub in sets.items():
        cells = f"{compare(ds, sub, chosen, now)}; last eight rounds ({(sub & late).sum()})"
        if (sub & late).any():  # none in a season cut short (Ligue 1 2019/20, the smoke file)
            cells += f" {compare(ds, sub & late, chosen, now)}"
        cells += f"; distance to the close {distance(ds, sub, chosen):.5f}"
        cells += f" (as it is {distance(ds, sub, now):.5f})"
        print(f"    {name}: {cells}")


def market_ratings_stakes(ds) -> standings.Stakes:
    """The table's stakes at each match's weekly cut-off."""
    cut = timeline.cutoff(ds.kickoff, int(ds.kickoff.max()) + 1)
    return standings.at_stake(
        competitions(ds), ds.kickoff, cut, ds.home, ds.away, ds.home_goals, ds.away_goals
    )


def print_dixon_coles(ds, sets, dc, now) -> None:
    """Dixon-Coles on the goal proxy alone (vs on goals), and pooled with the ratings."""
    goals = np.column_stack([ds.home_goals, ds.away_goals])
    conversion = shots.running_conversion(ds.kickoff, goals, ds.on_target)
    print("2. Dixon-Coles on goals blended with shots on target x the running conversion")
    for share in SHARES:
        proxy = shots.goal_proxy(goals, ds.on_target, conversion, share)
        fitted, seconds = timed(lambda p=proxy: dixon_coles(ds, p[:, 0], p[:, 1]))
        cells = "; ".join(
            f"{name}: {compare(ds, rows, fitted['1x2'], dc['1x2'], 'goals')}"
            for name, rows in sets.items()
        )
        print(f"  share {share}, alone ({seconds:.0f} s), vs Dixon-Coles on goals: {cells}")
        for weight in POOL_WEIGHTS:
            pooled = now ** (1 - weight) * fitted["1x2"] ** weight
            pooled /= pooled.sum(axis=1, keepdims=True)
            cells = "; ".join(
                f"{name}: {compare(ds, rows, pooled, now)}" for name, rows in sets.items()
            )
            print(f"    pooled with the model at weight {weight}: {cells}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=FOOTBALL_DATA)
    parser.add_argument("--leagues", help="divisions to keep, e.g. E0,SP1 (default: every one)")
    parser.add_argument("--dixon-coles", action="store_true", help="also Dixon-Coles on shots")
    parser.add_argument("--stakes-only", action="store_true", help="section 4 only")
    args = parse_arguments(parser)
    files = data_files(parser, args)
    if args.leagues:
        keep = set(args.leagues.split(","))
        files = [path for path in files if path.name.split("_")[0] in keep]
        if not files:
            parser.error(f"no file of {args.leagues} in {args.data}")
    with threadpool_limits(limits=1, user_api="blas"):
        ds, seconds = timed(lambda: load(files))
        with_shots = np.isfinite(ds.on_target).all(axis=1).mean()
        print(
            f"{len(files)} files from {args.data}: {len(ds)} matches ({with_shots:.1%} with shots"
            f" on target), parsed in {seconds:.1f} s"
        )
        sets = scored_sets(ds, args.smoke)
        dc = dixon_coles(ds, ds.home_goals, ds.away_goals)
        now = model_alone(ds, dc)
        print("the model alone as it is (ratings, else Dixon-Coles on goals), 1x2 RPS ratio:")
        for name, rows in sets.items():
            value, se = ratio(ds, "1x2", now, rows)
            print(f"  {name}: {value:.4f} ± {se:.4f} ({rows.sum()} matches)")
        if not args.stakes_only:
            print_ratings_grid(ds, sets, dc, now)
            print_memories(ds, sets, dc, now)
        print_stakes(ds, sets, dc, now)
        if args.dixon_coles:
            print_dixon_coles(ds, sets, dc, now)


if __name__ == "__main__":
    main()
