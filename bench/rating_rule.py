"""The choosing step of ``bench/ratings.py``, apart from its database: the candidate picks as
arrays, the split of a football-data directory into the part that chooses the rating rule and
the parts that confirm it, and the search over the rule's parameters.

**The split** is derived from what the directory holds (see :func:`choice_leagues`): the leagues
with the most seasons, then the most matches (then by code), choose — two of them when the
directory holds three leagues or more, one when it holds two — over every season but their last
:data:`LATER_SEASONS`; every other league confirms, every season; the choice leagues' last
seasons are the *later* part. A directory of one league chooses on its earlier seasons and
confirms on its last ones; one season stands for every part.

**The rule** (``engine.betting.trust``): each pick's edge shrunk by the share of the edges of
earlier settled picks (1x2 and over/under 2.5, every league) that held at the close at its price
band and league, less ``caution`` standard errors; rated by the expected log growth of a Kelly
stake at the probability that leaves. The search takes, over :data:`TRUST_GRID` and the growth
thresholds of :data:`GROWTHS`, the rule whose weakest t-statistic among "C > 0", "B > C" and
"A > B", under power and Shin, **in each choice league apart**, is the largest, with at least
:data:`MIN_SHARE` of each league's picks in each rating.
"""

import itertools
from dataclasses import dataclass

import numpy as np

from engine.betting import trust
from engine.markets import FIXED_MARKETS

#: The calibrated methods every rating must be worth it under.
METHODS = ("power", "shin")
#: The choice leagues' last seasons, held out of the choice as a second confirmation.
LATER_SEASONS = 2
PARTS = ("choice", "confirmation", "later")
MIN_SHARE = 0.15
#: Two ratings are told apart when their means differ by at least this many standard errors.
TOLD_APART = 2.0
GROWTHS = tuple(g * 1e-4 for g in (1, 1.5, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40))
#: The rule's parameters searched: prior share, its spread, the leagues' spread, caution.
TRUST_GRID = tuple(
    trust.TrustConfig(prior, spread, league, caution)
    for prior, spread, league, caution in itertools.product(
        (0.25, 0.5, 0.75, 1.0), (0.25, 0.5, 1.0), (0.0, 0.1, 0.3), (0.0, 1.0, 2.0)
    )
)


@dataclass
class Candidates:
    """One candidate pick per row (match, market and line), as arrays."""

    market: np.ndarray
    line: np.ndarray  # NaN for a market without lines
    season: np.ndarray
    league: np.ndarray
    part: np.ndarray  # "choice", "confirmation" or "later"
    kickoff: np.ndarray  # epoch seconds
    cutoff: np.ndarray  # the cut-off of the fit that forecast it, epoch seconds
    odds: np.ndarray
    edge: np.ndarray
    growth: np.ndarray
    at_risk: np.ndarray  # expected share of the stake not refunded (1 without a line)
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

    def evidence(self, method: str, markets) -> trust.Evidence:
        """The settled picks the rule learns from, as the service does: the rows of the fixed
        ``markets`` (those that get picks), valued under ``method`` (``MARGIN_METHOD``)."""
        mine = np.isin(self.market, [m for m in markets if m in FIXED_MARKETS])
        return trust.Evidence(
            self.kickoff[mine].astype(float),
            self.league[mine],
            self.odds[mine],
            self.edge[mine],
            self.closing_ev[method][mine],
        )


def choice_leagues(matches: dict[str, tuple[int, int]]) -> tuple[str, ...]:
    """The leagues that choose, from ``{league: (seasons, matches)}`` of the directory: those
    with the most seasons, then matches, then by code; two of three or more, one of two, the
    one of one."""
    ranked = sorted(matches, key=lambda code: (-matches[code][0], -matches[code][1], code))
    return tuple(ranked[: 2 if len(ranked) >= 3 else 1])


def parts(league, season, matches) -> np.ndarray:
    """Each row's part (see the module's docstring); ``matches`` as :func:`choice_leagues`."""
    chosen = choice_leagues(matches)
    part = np.where(np.isin(league, chosen), "choice", "confirmation")
    for code in chosen:
        seasons = sorted(set(season[league == code].tolist()))
        later = min(LATER_SEASONS, len(seasons) - 1)
        if later <= 0:
            continue
        held = (league == code) & np.isin(season, seasons[-later:])
        # One league alone confirms on its own later seasons.
        part[held] = "later" if len(matches) > 1 else "confirmation"
    return part


@dataclass(frozen=True)
class Rule:
    """A rating rule: the trust (None: the raw growth, the rule of model 3.0.0) and the growth
    thresholds of ``A`` and ``B``; quality thresholds as configured."""

    trust: trust.TrustConfig | None
    a: float
    b: float

    def label(self) -> str:
        """How docs/method.md writes it."""
        if self.trust is None:
            return f"raw growth: B ≥ {self.b:g}, A ≥ {self.a:g}"
        t = self.trust
        return (
            f"trusted growth: prior share {t.prior:g} ± {t.prior_spread:g}, league spread "
            f"{t.league_spread:g}, caution {t.caution:g}; B ≥ {self.b:g}, A ≥ {self.a:g}"
        )

    def scores(self, c: Candidates, evidence: trust.Evidence) -> np.ndarray:
        """The growth each candidate is rated by."""
        if self.trust is None:
            return c.growth
        return trusted_growth(c, evidence, self.trust)

    def apply(self, c: Candidates, settings, evidence) -> np.ndarray:
        """The rating of each candidate."""
        return rate(self.scores(c, evidence), c, settings, self.a, self.b)


def trusted_growth(c: Candidates, evidence, config) -> np.ndarray:
    """Each candidate's expected log growth at the probability the rule trusts."""
    probability = (1.0 + c.edge) / c.odds
    found = trust.trust(
        probability, c.odds, c.league, c.cutoff, evidence, config, at_risk=c.at_risk
    )
    return found.growth


def rate(score, c: Candidates, settings, a, b) -> np.ndarray:
    """``A``, ``B`` or ``C`` by the growth ``score`` and the configured quality thresholds."""
    is_a = (score >= a) & (c.quality >= settings["RATING_A_QUALITY"])
    is_b = (score >= b) & (c.quality >= settings["RATING_B_QUALITY"])
    return np.where(is_a, "A", np.where(is_b, "B", "C"))


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
    the picks (of a league), or there is no pick."""
    if by_league:
        codes = sorted(set(c.league[kept].tolist()))
        if not codes:
            return -np.inf
        return min(weakest_t(c, kept & (c.league == code), rating, min_share) for code in codes)
    counts = [(kept & (rating == r)).sum() for r in "ABC"]
    if not kept.any() or min(counts) < max(min_share * kept.sum(), 2):
        return -np.inf
    weakest = np.inf
    for method in METHODS:
        c_mean, c_error = mean_error(c.closing_ev[method][kept & (rating == "C")])
        weakest = min(weakest, c_mean / c_error)
        for _, _, difference, error in differences(c, kept, rating, method):
            weakest = min(weakest, difference / error)
    return float(weakest) if np.isfinite(weakest) else -np.inf


def search(c: Candidates, settings, evidence, configs=TRUST_GRID, grid=GROWTHS):
    """``(rule, weakest t)``: the rule of the grid with the largest weakest t-statistic, league
    by league, on the candidates ``c`` (ties to the first in grid order); the trust of each
    candidate learnt from ``evidence``. ``configs`` may hold None (the raw growth)."""
    best, best_t = None, -np.inf
    kept = np.ones(len(c), dtype=bool)
    for config in configs:
        score = Rule(config, 0.0, 0.0).scores(c, evidence)
        for a, b in itertools.product(grid, grid):
            if a <= b:
                continue
            t = weakest_t(c, kept, rate(score, c, settings, a, b), by_league=True)
            if t > best_t:
                best, best_t = Rule(config, a, b), t
    return best, best_t


def pick_markets(c: Candidates) -> tuple[str, ...]:
    """The markets whose candidates have a positive mean fair closing EV under every method of
    :data:`METHODS`."""
    return tuple(
        market
        for market in dict.fromkeys(c.market.tolist())
        if all(mean_error(c.closing_ev[m][c.of(market)])[0] > 0 for m in METHODS)
    )
