"""Walk-forward orchestration: no look-ahead, invariance to later matches, every row predicted."""

from dataclasses import replace

import numpy as np
import pytest

from engine.markets import MARKETS
from engine.model import dixon_coles, timeline, walkforward
from engine.model.scores import market_probabilities, score_matrix
from tests.helpers import assert_same_rows, epoch, schedule

CONFIG = replace(walkforward.ModelConfig(), min_pool_rows=30, min_league_matches=30)


def build_world(seed=1):
    """Two groups over two seasons, one round a week, with results up to ``now``.

    Group 1 swaps team 111 for the newcomer 112 in season two. Matches after ``now`` have no
    result. Markets are the true probabilities blurred enough for the model to earn a share of
    the pool, with a few rows missing.
    """
    rng = np.random.default_rng(seed)
    strength = {}
    rows = schedule({1: list(range(100, 112)), 2: list(range(200, 210))})
    for team in {r[2] for r in rows}:
        strength[team] = rng.normal(0.0, 0.3, 2)
    kickoff, group, home, away = (np.array(col) for col in zip(*rows, strict=True))
    lam = np.exp(
        0.15
        + 0.25
        + np.array([strength[h][0] - strength[a][1] for h, a in zip(home, away, strict=True)])
    )
    mu = np.exp(
        0.15 + np.array([strength[a][0] - strength[h][1] for h, a in zip(home, away, strict=True)])
    )
    truth = market_probabilities(score_matrix(lam, mu, -0.05))
    matrix = score_matrix(lam, mu, -0.05).reshape(len(lam), -1)
    draws = (matrix.cumsum(axis=1) < rng.random(len(lam))[:, None]).sum(axis=1)
    home_goals, away_goals = (draws // 11).astype(float), (draws % 11).astype(float)
    now = epoch(2022, 10, 5, 12)  # a Wednesday, a few weeks into season two
    later = kickoff >= now
    home_goals[later] = np.nan
    away_goals[later] = np.nan
    market = {}
    for name in ("1x2", "ou25"):
        noisy = truth[name] * np.exp(rng.normal(0.0, 0.4, truth[name].shape))
        market[name] = noisy / noisy.sum(axis=1, keepdims=True)
        market[name][rng.random(len(kickoff)) < 0.05] = np.nan
    market["btts"] = np.full((len(kickoff), 2), np.nan)
    return walkforward.WalkForwardInput(
        kickoff=kickoff.astype(np.int64),
        group=group.astype(np.int64),
        home=home.astype(np.int64),
        away=away.astype(np.int64),
        home_goals=home_goals,
        away_goals=away_goals,
        market=market,
        now=now,
    )


def subset(inp, rows, **changes):
    """The input restricted to ``rows`` (in that order), with fields replaced by ``changes``."""
    return replace(
        inp,
        kickoff=inp.kickoff[rows],
        group=inp.group[rows],
        home=inp.home[rows],
        away=inp.away[rows],
        home_goals=inp.home_goals[rows],
        away_goals=inp.away_goals[rows],
        market={name: probs[rows] for name, probs in inp.market.items()},
        **changes,
    )


def row_outputs(out, rows):
    """Every per-row output of ``out`` for ``rows``, flattened into named arrays."""
    fields = {
        "fitted_at": out.fitted_at,
        "history_home": out.history_home,
        "history_away": out.history_away,
        "strengths": out.strengths,
        "expected_goals": out.expected_goals,
        "league_history": out.league_history,
    }
    for name in MARKETS:
        fields[f"model {name}"] = out.model[name]
        fields[f"published {name}"] = out.published[name]
        fields[f"weight {name}"] = out.pool_weight[name]
    return {name: values[rows] for name, values in fields.items()}


@pytest.fixture(scope="module")
def world():
    """The synthetic input and its walk-forward output."""
    inp = build_world()
    return inp, walkforward.run(inp, CONFIG)


def test_week_start_is_monday_midnight_utc():
    wednesday = epoch(2024, 1, 3, 17, 30)
    assert timeline.week_start(wednesday) == epoch(2024, 1, 1)
    assert timeline.week_start(epoch(2024, 1, 1)) == epoch(2024, 1, 1)
    assert timeline.week_start(epoch(2023, 12, 31, 23, 59)) == epoch(2023, 12, 25)


def test_every_row_is_predicted(world):
    inp, out = world
    n = len(inp.kickoff)
    for name, selections in MARKETS.items():
        for probs in (out.model[name], out.published[name]):
            assert probs.shape == (n, len(selections))
            assert np.isfinite(probs).all()
            np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-12)
        assert out.pool_weight[name].shape == (n,)
    unplayed = np.isnan(inp.home_goals)
    assert unplayed.sum() > 20
    assert out.strengths.shape == (n, 5)
    assert np.isfinite(out.strengths).all()


def test_fits_use_a_weekly_cutoff_capped_at_now(world):
    inp, out = world
    assert (out.fitted_at <= inp.kickoff).all()
    assert (out.fitted_at <= inp.now).all()
    monday = out.fitted_at == timeline.week_start(inp.kickoff)
    assert (monday | (out.fitted_at == inp.now)).all()
    assert (
        out.fitted_at[inp.kickoff >= timeline.week_start(inp.now) + timeline.WEEK] == inp.now
    ).all()
    # At most one fit per group and week: one per distinct (group, cutoff) with enough data.
    assert 0 < out.fits <= len(set(zip(inp.group, out.fitted_at, strict=True)))
    assert out.unconverged == 0


@pytest.mark.parametrize("split", ["before now", "after now"])
def test_appending_later_matches_changes_no_earlier_row(world, split):
    inp, whole = world
    cut = inp.now - 10 * timeline.WEEK if split == "before now" else inp.now + 2 * timeline.WEEK
    # The earlier matches in a shuffled order (the order is no matter: the test below).
    shuffled = np.random.default_rng(3).permutation(len(inp.kickoff))
    early = shuffled[inp.kickoff[shuffled] <= cut]
    assert 50 < len(early) < len(shuffled) - 50
    prefix = walkforward.run(subset(inp, early), CONFIG)
    assert_same_rows(row_outputs(prefix, slice(None)), row_outputs(whole, early), atol=1e-12)
    # Pool weights were fitted (not the prior) well before the cut, so they were tested too.
    assert ((prefix.pool_weight["1x2"] > 0.0) & (prefix.pool_weight["1x2"] < 1.0)).any()


def test_input_order_does_not_matter(world):
    inp, out = world
    perm = np.random.default_rng(8).permutation(len(inp.kickoff))
    permuted = walkforward.run(subset(inp, perm), CONFIG)
    assert_same_rows(row_outputs(permuted, slice(None)), row_outputs(out, perm), atol=0.0)


def test_a_result_never_feeds_its_own_or_earlier_forecasts(world):
    inp, out = world
    played = np.flatnonzero(~np.isnan(inp.home_goals) & (inp.group == 1))
    row = played[len(played) // 2]
    changed = replace(inp, home_goals=inp.home_goals.copy(), away_goals=inp.away_goals.copy())
    changed.home_goals[row] += 5
    changed.away_goals[row] = 0.0
    after = walkforward.run(changed, CONFIG)
    not_after = out.fitted_at <= inp.kickoff[row]
    assert not_after[row]
    assert_same_rows(row_outputs(after, not_after), row_outputs(out, not_after), atol=0.0)
    later_same_group = ~not_after & (inp.group == 1)
    moved = np.abs(after.model["1x2"] - out.model["1x2"]).max(axis=1)
    assert (moved[later_same_group] > 1e-4).any()
    # Other groups' models are fitted apart; only their pool weights may learn from it.
    np.testing.assert_array_equal(
        after.model["1x2"][inp.group == 2], out.model["1x2"][inp.group == 2]
    )


def test_a_result_before_the_cutoff_changes_the_forecast(world):
    inp, out = world
    row = int(np.flatnonzero((inp.group == 1) & (inp.kickoff > inp.now))[0])
    team = inp.home[row]
    past = np.flatnonzero(
        (inp.kickoff < out.fitted_at[row]) & ((inp.home == team) | (inp.away == team))
    )
    previous = past[np.argmax(inp.kickoff[past])]
    changed = replace(inp, home_goals=inp.home_goals.copy(), away_goals=inp.away_goals.copy())
    scored = 6.0 if inp.home[previous] == team else 0.0
    changed.home_goals[previous], changed.away_goals[previous] = scored, 6.0 - scored
    after = walkforward.run(changed, CONFIG)
    assert np.abs(after.model["1x2"][row] - out.model["1x2"][row]).max() > 1e-3
    assert after.model["1x2"][row, 0] > out.model["1x2"][row, 0]


def test_results_after_now_are_ignored(world):
    inp, out = world
    leaked = replace(inp, home_goals=inp.home_goals.copy(), away_goals=inp.away_goals.copy())
    future = inp.kickoff >= inp.now
    leaked.home_goals[future] = 7.0
    leaked.away_goals[future] = 0.0
    again = walkforward.run(leaked, CONFIG)
    assert_same_rows(row_outputs(again, slice(None)), row_outputs(out, slice(None)), atol=0.0)


def test_unplayed_rows_of_a_team_without_history(world):
    inp, out = world
    newcomer = (inp.home == 112) | (inp.away == 112)
    first = np.flatnonzero(newcomer)[inp.kickoff[newcomer].argmin()]
    history = np.where(inp.home[first] == 112, out.history_home[first], out.history_away[first])
    assert history == 0
    deficit = -CONFIG.newcomer_strength
    columns = [0, 1] if inp.home[first] == 112 else [2, 3]
    np.testing.assert_allclose(out.strengths[first, columns], deficit)
    # A fresh id in a match after now, in a brand-new group too: predicted, history 0.
    extra = subset(inp, np.r_[np.arange(len(inp.kickoff)), 0, 0])
    extra.kickoff[-2:] = inp.now + 3 * timeline.WEEK
    extra.group[-1] = 99
    extra.home[-2:] = 999
    extra.home_goals[-2:] = np.nan
    extra.away_goals[-2:] = np.nan
    result = walkforward.run(extra, CONFIG)
    assert (result.history_home[-2:] == 0).all()
    assert np.isfinite(result.published["1x2"][-2:]).all()
    assert result.model["1x2"][-2, 0] < result.model["1x2"][-1, 0]  # vs the same team, at home


def test_history_counts_matches_inside_the_window(world):
    inp, out = world
    window = CONFIG.window_days * walkforward.DAY
    for row in np.random.default_rng(4).choice(len(inp.kickoff), 25, replace=False):
        cut = out.fitted_at[row]
        inside = (
            (inp.group == inp.group[row])
            & (inp.kickoff < cut)
            & (inp.kickoff >= cut - window)
            & ~np.isnan(inp.home_goals)
        )
        for team, counted in (
            (inp.home[row], out.history_home[row]),
            (inp.away[row], out.history_away[row]),
        ):
            assert counted == (inside & ((inp.home == team) | (inp.away == team))).sum()


def test_missing_markets_publish_the_model(world):
    inp, out = world
    np.testing.assert_allclose(out.published["btts"], out.model["btts"], atol=1e-12)
    assert (out.pool_weight["btts"] == 1.0).all()
    missing = np.isnan(inp.market["1x2"]).any(axis=1)
    assert missing.any()
    np.testing.assert_allclose(out.published["1x2"][missing], out.model["1x2"][missing], atol=1e-12)
    assert (out.pool_weight["1x2"][missing] == 1.0).all()
    has = ~missing
    assert ((out.pool_weight["1x2"][has] >= 0) & (out.pool_weight["1x2"][has] <= 1)).all()


def test_pool_weight_starts_at_the_prior(world):
    inp, out = world
    first_week = out.fitted_at == out.fitted_at.min()
    has = ~np.isnan(inp.market["1x2"]).any(axis=1)
    assert (out.pool_weight["1x2"][first_week & has] == CONFIG.pool_prior_weight).all()
    assert (out.pool_weight["1x2"][has] != CONFIG.pool_prior_weight).any()


def test_model_follows_the_strengths(world):
    inp, out = world
    rows = np.flatnonzero((out.fitted_at == inp.now) & (inp.group == 1))[:10]
    a_h, d_h, a_a, d_a, home = out.strengths[rows].T
    ratio_home = out.expected_goals[rows, 0] / np.exp(home + a_h - d_a)
    ratio_away = out.expected_goals[rows, 1] / np.exp(a_a - d_h)
    np.testing.assert_allclose(ratio_home, ratio_home[0])  # the same intercept in one fit
    np.testing.assert_allclose(ratio_home, ratio_away)


def test_empty_input():
    empty = np.array([], dtype=np.int64)
    out = walkforward.run(
        walkforward.WalkForwardInput(
            kickoff=empty,
            group=empty,
            home=empty,
            away=empty,
            home_goals=np.array([]),
            away_goals=np.array([]),
            market={},
            now=0,
        )
    )
    assert out.model["1x2"].shape == (0, 3)
    assert out.fits == 0


def test_mismatched_shapes_are_rejected(world):
    inp, _ = world
    with pytest.raises(ValueError):
        walkforward.run(replace(inp, home=inp.home[:-1]))
    with pytest.raises(ValueError):
        walkforward.run(replace(inp, market={"1x2": inp.market["1x2"][:, :2]}))


def test_prior_fit_below_min_matches(world):
    inp, _ = world
    out = walkforward.run(inp, replace(CONFIG, min_matches=10**6))
    assert out.fits == 0
    assert np.isfinite(out.model["1x2"]).all()
    np.testing.assert_allclose(out.strengths[:, 4], dixon_coles.PRIOR_HOME)


def with_closing(inp, seed=3):
    """``inp`` with de-margined closing lines of the played matches: the truth, lightly blurred
    (a closing line is sharper than the pre-match one)."""
    rng = np.random.default_rng(seed)
    played = np.isfinite(inp.home_goals)
    closing = {}
    for name in ("1x2", "ou25"):
        line = np.where(np.isfinite(inp.market[name]), inp.market[name], 0.5)
        sharp = line * np.exp(rng.normal(0.0, 0.05, line.shape))
        closing[name] = np.where(played[:, None], sharp / sharp.sum(axis=1, keepdims=True), np.nan)
    return replace(inp, closing=closing)


@pytest.fixture(scope="module")
def chained():
    """The world with closing lines, and its walk-forward output (the goal chain at work)."""
    inp = with_closing(build_world())
    return inp, walkforward.run(inp, CONFIG)


def test_the_goal_model_is_the_ratings_where_they_cover_else_dixon_coles(chained):
    inp, out = chained
    covered = out.ratings.covered
    assert covered.any() and (~covered).any()
    assert set(out.goal_source[covered]) == {walkforward.RATINGS_SOURCE}
    assert set(out.goal_source[~covered]) == {walkforward.GOALS_SOURCE}
    for name in MARKETS:
        np.testing.assert_array_equal(
            out.model[name][covered], out.ratings.probabilities[name][covered]
        )
        np.testing.assert_array_equal(out.model[name][~covered], out.dixon_coles[name][~covered])
    # Without closing lines nothing is covered: Dixon-Coles alone, as before.
    plain = walkforward.run(replace(inp, closing=None), CONFIG)
    assert plain.ratings is None and set(plain.goal_source) == {walkforward.GOALS_SOURCE}
    for name in MARKETS:
        np.testing.assert_array_equal(plain.model[name], out.dixon_coles[name])


def test_the_goal_rates_are_the_ones_the_chain_used(chained):
    # Read back through a score matrix, each row's goal rates and rho give the model's own
    # probabilities: the ratings' where they cover, Dixon-Coles' elsewhere.
    inp, out = chained
    covered = out.ratings.covered
    np.testing.assert_array_equal(out.goal_rates[covered], out.ratings.expected_goals[covered])
    np.testing.assert_array_equal(out.goal_rho[covered], walkforward.RATINGS_CONFIG.rho)
    np.testing.assert_array_equal(out.goal_rates[~covered], out.expected_goals[~covered])
    rebuilt = market_probabilities(
        score_matrix(out.goal_rates[:, 0], out.goal_rates[:, 1], out.goal_rho)
    )
    for name in MARKETS:
        np.testing.assert_allclose(rebuilt[name], out.model[name], atol=1e-9)
    plain = walkforward.run(replace(inp, closing=None), CONFIG)
    np.testing.assert_array_equal(plain.goal_rates, plain.expected_goals)


@pytest.mark.parametrize("split", [200, 333])
def test_the_chain_never_looks_ahead_either(chained, split):
    inp, out = chained
    order = np.argsort(inp.kickoff, kind="stable")
    early = order[:split]
    alone = walkforward.run(
        replace(subset(inp, early), closing={k: v[early] for k, v in inp.closing.items()}),
        CONFIG,
    )
    assert_same_rows(row_outputs(alone, np.arange(split)), row_outputs(out, early))


def test_a_run_over_some_rows_fits_only_their_week_and_agrees_with_the_whole_run(chained):
    inp, out = chained
    rows = np.flatnonzero((inp.group == 1) & (inp.kickoff >= inp.now))[:4]
    weights = {}
    for name in MARKETS:  # the week's fitted weight, where a market line takes part
        quoted = rows[np.isfinite(inp.market[name][rows]).all(axis=1)]
        weights[name] = float(out.pool_weight[name][quoted[0]]) if len(quoted) else 0.0
    some = walkforward.run(inp, CONFIG, rows=rows, pool_weights=weights)
    assert some.fits == 1  # one group, one week
    for name in MARKETS:
        # Dixon-Coles starts cold instead of from last week's fit: the same optimum.
        np.testing.assert_allclose(some.published[name][rows], out.published[name][rows], atol=1e-6)
        np.testing.assert_array_equal(
            some.ratings.probabilities[name][rows], out.ratings.probabilities[name][rows]
        )
    same_fit = (inp.group == 1) & (out.fitted_at == out.fitted_at[rows[0]])
    assert np.isfinite(some.expected_goals[same_fit]).all()
    assert np.isnan(some.expected_goals[~same_fit]).all()  # no other fit was made
    with pytest.raises(ValueError, match="pool weights"):
        walkforward.run(inp, CONFIG, rows=rows)


def test_a_new_league_is_unseen_until_its_history_and_then_shares_the_seen_leagues_weight(world):
    # Group 2's second season is a new league of the same country (group): one goal model, but
    # its history starts at 0: the market alone until the model has seen the league, then the
    # one weight fitted on the seen leagues.
    inp, out = world
    new = (inp.group == 2) & (inp.kickoff >= epoch(2022, 8, 1))
    league = np.where(new, 3, inp.group)
    split = walkforward.run(replace(inp, league=league), CONFIG)
    cutoff = out.fitted_at
    window = CONFIG.window_days * timeline.DAY
    played = np.isfinite(inp.home_goals) & (inp.kickoff < inp.now)
    for row in range(len(inp.kickoff)):
        inside = (league == league[row]) & played & (inp.kickoff < cutoff[row])
        assert split.league_history[row] == (inside & (inp.kickoff >= cutoff[row] - window)).sum()
    assert split.league_history[new].min() == 0
    unseen = split.league_history < CONFIG.min_league_matches
    priced = np.isfinite(inp.market["1x2"]).all(axis=1)
    assert (new & unseen & priced).any() and (new & unseen & ~priced).any()
    # Unseen and priced: the market alone; unseen without a market: the model's prior, flagged.
    assert (split.pool_weight["1x2"][unseen & priced] == 0.0).all()
    np.testing.assert_allclose(
        split.published["1x2"][unseen & priced], inp.market["1x2"][unseen & priced], atol=1e-12
    )
    assert (split.pool_weight["1x2"][unseen & ~priced] == 1.0).all()
    # Once seen, the new league's rows get the weight every seen league's rows of their week get.
    seen_new = np.flatnonzero(new & ~unseen & priced)
    assert len(seen_new)
    for row in seen_new:
        week = ~new & ~unseen & priced & (cutoff == cutoff[row])
        assert (split.pool_weight["1x2"][week] == split.pool_weight["1x2"][row]).all()


def test_a_refresh_uses_the_callers_weight_where_the_league_is_seen(chained):
    inp, out = chained
    rows = np.flatnonzero((inp.group == 1) & (inp.kickoff >= inp.now))[:4]
    assert (out.league_history[rows] >= CONFIG.min_league_matches).all()
    priced = rows[np.isfinite(inp.market["1x2"][rows]).all(axis=1)]
    assert len(priced)
    given = dict.fromkeys(MARKETS, 0.8)
    some = walkforward.run(inp, CONFIG, rows=rows, pool_weights=given)
    assert (some.pool_weight["1x2"][priced] == 0.8).all()
    unseen = walkforward.run(
        inp, replace(CONFIG, min_league_matches=10**6), rows=rows, pool_weights=given
    )
    assert (unseen.pool_weight["1x2"][priced] == 0.0).all()
