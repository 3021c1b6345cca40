"""The rating rule's bench (bench/rating_rule.py, bench/ratings.py) without a database: the split
a directory of football-data files gets, a directory without England or Spain included, and the
choice of the rule reproducible from the bench's choosing step."""

import itertools

import numpy as np

from bench import rating_rule, ratings
from config import DEFAULTS
from engine.betting import trust
from services.forecasting import forecast

SETTINGS = {**DEFAULTS, "PICK_MARKETS": ("1x2", "ou25", "ah")}


def fixture(leagues, seasons, per_season=40, seed=5) -> rating_rule.Candidates:
    """Candidate picks of ``leagues`` × ``seasons``: prices from 1.5 to 12, edges whose
    share held at the close falls with the price (long shots' edges melt), qualities that
    allow any rating."""
    rng = np.random.default_rng(seed)
    rows = [(code, season) for code in leagues for season in seasons for _ in range(per_season)]
    n = len(rows)
    league = np.array([code for code, _ in rows])
    season = np.array([season for _, season in rows])
    order = np.array([seasons.index(s) for s in season])
    kickoff = order * 31_536_000.0 + rng.uniform(0, 3e7, n)
    odds = np.exp(rng.uniform(np.log(1.5), np.log(12.0), n))
    edge = rng.uniform(0.02, 0.25, n)
    held = np.clip(1.2 - odds / 6.0, -0.5, 1.0)
    worth = held * edge + rng.normal(0, 0.01 * odds, n)
    matches = {code: (len(seasons), 380 - 10 * i) for i, code in enumerate(leagues)}
    return rating_rule.Candidates(
        market=np.full(n, "1x2"),
        line=np.full(n, np.nan),
        season=season,
        league=league,
        part=rating_rule.parts(league, season, matches),
        kickoff=kickoff,
        cutoff=kickoff - 86_400.0,
        odds=odds,
        edge=edge,
        growth=trust.picks.growth((1 + edge) / odds, odds),
        at_risk=np.ones(n),
        quality=np.full(n, 0.9),
        profit=np.where(rng.uniform(size=n) < (1 + edge) / odds, odds - 1, -1.0),
        closing_ev={"power": worth, "shin": worth + rng.normal(0, 0.002, n)},
    )


def test_the_split_comes_from_what_the_directory_holds():
    seasons = ["2019-20", "2020-21", "2021-22", "2022-23"]
    # No England, no Spain: the two leagues with the most seasons, then matches, choose.
    league = np.array(["D1", "F1", "I1", "N1"] * 4)
    season = np.repeat(seasons, 4)
    matches = {"D1": (4, 306), "F1": (4, 380), "I1": (4, 380), "N1": (3, 306)}
    assert rating_rule.choice_leagues(matches) == ("F1", "I1")
    part = rating_rule.parts(league, season, matches)
    assert set(part[np.isin(league, ["D1", "N1"])]) == {"confirmation"}
    for code in ("F1", "I1"):
        mine = part[league == code].tolist()
        assert mine == ["choice", "choice", "later", "later"]
    # Two leagues: one chooses, the other confirms.
    assert rating_rule.choice_leagues({"D1": (2, 306), "I1": (2, 380)}) == ("I1",)
    # One league: it chooses on its earlier seasons and confirms on its last two.
    one = rating_rule.parts(np.array(["B1"] * 4), np.array(seasons), {"B1": (4, 306)})
    assert one.tolist() == ["choice", "choice", "confirmation", "confirmation"]
    # One season alone is the choice (a smoke run takes it for every part).
    assert rating_rule.parts(np.array(["B1"]), np.array(["x"]), {"B1": (1, 9)}).tolist() == [
        "choice"
    ]


def test_the_report_runs_on_a_directory_without_england_or_spain(capsys):
    c = fixture(["D1", "I1", "N1"], ["2019-20", "2020-21", "2021-22", "2022-23"], per_season=12)
    ratings.report(c, SETTINGS, grid=(rating_rule.TRUST_GRID[::20], (2e-4, 1e-3, 5e-3)))
    out = capsys.readouterr().out
    assert "choice: I1, N1" not in out  # N1 and I1 have the same seasons: matches decide
    assert out.startswith("choice: D1, I1, 2019-20–2020-21")
    assert "confirmation: N1, 2019-20–2022-23" in out
    assert "chosen on the choice part:" in out
    assert "| 1x2 | ≥ 8 | A |" in out  # the report by market, price band and rating


def test_the_choice_is_the_grid_rule_with_the_largest_weakest_t():
    """The bench's choosing step takes, over its grid, the rule whose weakest t-statistic,
    league by league, is the largest: checked here against every rule of a small grid."""
    c = fixture(["D1", "I1", "N1"], ["2019-20", "2020-21", "2021-22"], per_season=40)
    choice = c.where(c.part == "choice")
    evidence = c.evidence("power", SETTINGS["PICK_MARKETS"])
    configs = (None, *rating_rule.TRUST_GRID[::18])
    growths = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2)
    chosen, best_t = rating_rule.search(choice, SETTINGS, evidence, configs, growths)
    every = {}
    for config, a, b in itertools.product(configs, growths, growths):
        if a > b:
            rule = rating_rule.Rule(config, a, b)
            rating = rule.apply(choice, SETTINGS, evidence)
            every[rule] = rating_rule.weakest_t(
                choice, np.ones(len(choice), bool), rating, by_league=True
            )
    assert np.isfinite(best_t) and best_t == max(every.values())
    assert chosen == next(rule for rule, t in every.items() if t == best_t)
    # Where long shots' edges melt, the rule that knows the price beats the raw growth.
    assert chosen.trust is not None
    assert best_t > max(t for rule, t in every.items() if rule.trust is None)
    # Run again, the same rule: nothing in the choice is left to chance.
    assert rating_rule.search(choice, SETTINGS, evidence, configs, growths) == (chosen, best_t)


def test_the_configured_rule_lies_on_the_grid_the_bench_searches():
    """The configured rule is one the bench can choose (docs/method.md gives its run)."""
    assert forecast.trust_config(DEFAULTS) in rating_rule.TRUST_GRID
    assert DEFAULTS["RATING_A_GROWTH"] in rating_rule.GROWTHS
    assert DEFAULTS["RATING_B_GROWTH"] in rating_rule.GROWTHS
    assert ratings.configured_rule(DEFAULTS).trust == forecast.trust_config(DEFAULTS)
