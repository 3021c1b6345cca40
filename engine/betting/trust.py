"""How much of a pick's edge the rating rule trusts: the edge shrunk by how far the model's edges
have held up to the close at the pick's price band and league, learnt walk-forward from earlier
settled picks only.

A pick at price o with published probability p has the edge e = p·o − 1; what it turns out to be
worth at the close is its fair closing EV, v = o·q − 1 with q the de-margined closing
probability. Over earlier settled picks of a group (a price band, or a league within a band)
the *share* of the edge that held is the ratio estimate r = Σv / Σe, with the variance of a ratio
of means, Σ(v − r·e)² / (n − 1) · n / (Σe)². Each band's share is shrunk towards a prior share
(``TrustConfig.prior``, spread ``prior_spread``), each league's within a band towards its band's
(``league_spread``): precision-weighted normal means, so a group with little evidence keeps the
level above it. The share the rule trusts is that mean less ``caution`` standard errors, between
0 and 1: a price band where edges have melted before the close (the long prices, where the
favourite–longshot bias lives) needs more edge for the same trust, and the model is never
trusted beyond its own edge.

The probability the rating rule trusts, :func:`trusted_probability`, is the probability whose
edge at the price is the trusted share of the pick's edge: 1/o + share·(p − 1/o). The rating is
then the expected log growth of a Kelly stake at that probability (``picks.growth``) against the
thresholds of ``picks.RatingThresholds``. A Kelly stake on it, (p_t·o − 1)/(o − 1), stakes the
trusted edge only.

Pure NumPy; kick-offs and cut-offs in epoch seconds. A pick is rated only from evidence that
kicked off strictly before its forecast's cut-off, never from itself or anything later.
"""

from dataclasses import dataclass

import numpy as np

from engine.betting import picks
from engine.betting.metrics import PRICE_BANDS, price_band


@dataclass(frozen=True)
class TrustConfig:
    """The rule's parameters (chosen by ``bench/ratings.py``; see docs/method.md).

    ``prior``: the share of an edge trusted at a band with no evidence; ``prior_spread``: how far
    a band's share may be from it (the standard deviation of the prior); ``league_spread``: how
    far a league's share may be from its band's (0: leagues are not told apart); ``caution``:
    standard errors of the share taken off before trusting it; ``min_evidence``: settled picks a
    group needs before its own ratio counts.
    """

    prior: float = 0.75
    prior_spread: float = 0.25
    league_spread: float = 0.0
    caution: float = 0.0
    min_evidence: int = 5

    def __post_init__(self):
        """Reject spreads that are negative, a prior outside [0, 1], too little evidence."""
        if self.prior_spread <= 0 or self.league_spread < 0 or self.caution < 0:
            raise ValueError("spreads must be positive (league_spread ≥ 0), caution ≥ 0")
        if not 0.0 <= self.prior <= 1.0:
            raise ValueError("the prior share must lie in [0, 1]")
        if self.min_evidence < 2:
            raise ValueError("a ratio's variance needs at least two picks")


@dataclass
class Evidence:
    """Settled picks the shares are learnt from, one per row: kick-off (epoch seconds), league
    (any hashable code), odds taken, edge at those odds and fair closing EV."""

    kickoff: np.ndarray
    league: np.ndarray
    odds: np.ndarray
    edge: np.ndarray
    worth: np.ndarray

    @classmethod
    def empty(cls) -> "Evidence":
        """No settled pick at all."""
        return cls(*(np.empty(0) for _ in range(5)))

    def usable(self) -> "Evidence":
        """The rows with a finite edge above 0, a finite worth and a price band."""
        keep = (
            np.isfinite(self.edge)
            & (self.edge > 0)
            & np.isfinite(self.worth)
            & np.isfinite(self.odds)
            & np.isfinite(self.kickoff)
        )
        return Evidence(*(np.asarray(value)[keep] for value in vars(self).values()))


def ratio(n, sum_edge, sum_worth, sum_edge2, sum_worth2, sum_cross):
    """The share Σv / Σe of a group's edges that held at the close and its variance, from the
    group's sums (count, Σe, Σv, Σe², Σv², Σe·v); NaN share and infinite variance where the
    group has fewer than two picks or no edge."""
    n = np.asarray(n, dtype=float)
    sum_edge = np.asarray(sum_edge, dtype=float)
    known = (n >= 2) & (sum_edge > 0)
    safe_n = np.where(known, n, 2.0)
    safe_e = np.where(known, sum_edge, 1.0)
    share = np.asarray(sum_worth, dtype=float) / safe_e
    residual = (
        np.asarray(sum_worth2, dtype=float)
        - 2.0 * share * np.asarray(sum_cross, dtype=float)
        + share**2 * np.asarray(sum_edge2, dtype=float)
    )
    variance = np.maximum(residual, 0.0) / (safe_n - 1.0) * safe_n / safe_e**2
    return np.where(known, share, np.nan), np.where(known, variance, np.inf)


def shrink(prior_mean, prior_variance, estimate, variance):
    """The precision-weighted mean of a prior and an estimate, and its variance; where the
    estimate is unknown (NaN or infinite variance) the prior alone. A zero prior variance keeps
    the prior."""
    prior_mean = np.asarray(prior_mean, dtype=float)
    prior_variance = np.asarray(prior_variance, dtype=float)
    known = np.isfinite(estimate) & np.isfinite(variance) & (prior_variance > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        prior_precision = np.where(prior_variance > 0, 1.0 / prior_variance, np.inf)
        precision = np.where(known, 1.0 / np.maximum(variance, 1e-12), 0.0)
        total = prior_precision + precision
        mean = np.where(
            known,
            (prior_mean * prior_precision + np.nan_to_num(estimate) * precision) / total,
            prior_mean,
        )
        posterior = np.where(known, 1.0 / total, prior_variance)
    return mean, posterior


def _sums_before(kickoff, values, cutoff) -> list[np.ndarray]:
    """Per cut-off, the count and the sums of ``values`` (each (m,)) over the rows that kicked
    off strictly before it."""
    order = np.argsort(kickoff, kind="stable")
    at = np.searchsorted(np.asarray(kickoff)[order], cutoff, side="left")
    sums = [at.astype(float)]
    for value in values:
        running = np.concatenate([[0.0], np.cumsum(np.asarray(value, dtype=float)[order])])
        sums.append(running[at])
    return sums


def _group_ratio(evidence: Evidence, chosen, cutoff, min_evidence):
    """The ratio estimate of the evidence rows ``chosen`` before each ``cutoff``."""
    e, v = evidence.edge[chosen], evidence.worth[chosen]
    n, *sums = _sums_before(evidence.kickoff[chosen], (e, v, e * e, v * v, e * v), cutoff)
    share, variance = ratio(n, *sums)
    few = n < min_evidence
    return np.where(few, np.nan, share), np.where(few, np.inf, variance), n


def shares(evidence: Evidence, odds, league, cutoff, config: TrustConfig = TrustConfig()):
    """For each pick (odds taken, league, its forecast's cut-off in epoch seconds, all (n,)):
    the share of its edge that held at the close at its price band and league, learnt from the
    ``evidence`` that kicked off before the cut-off. Returns ``(mean, standard error,
    evidence)``: the shrunk share, its standard error, and how many settled picks of the band
    it was learnt from."""
    odds = np.asarray(odds, dtype=float)
    league = np.asarray(league)
    cutoff = np.asarray(cutoff, dtype=float)
    evidence = evidence.usable()
    band, known_band = price_band(odds), price_band(evidence.odds)
    mean = np.full(len(odds), config.prior)
    variance = np.full(len(odds), config.prior_spread**2)
    count = np.zeros(len(odds))
    for value in range(len(PRICE_BANDS) + 1):
        rows = np.flatnonzero(band == value)
        if not len(rows):
            continue
        chosen = known_band == value
        estimate, error, n = _group_ratio(evidence, chosen, cutoff[rows], config.min_evidence)
        mean[rows], variance[rows] = shrink(mean[rows], variance[rows], estimate, error)
        count[rows] = n
        if config.league_spread <= 0:
            continue
        for code in np.unique(league[rows]).tolist():
            mine = rows[league[rows] == code]
            estimate, error, _ = _group_ratio(
                evidence, chosen & (evidence.league == code), cutoff[mine], config.min_evidence
            )
            mean[mine], variance[mine] = shrink(
                mean[mine], variance[mine] + config.league_spread**2, estimate, error
            )
    return mean, np.sqrt(variance), count


def trusted_share(mean, error, config: TrustConfig = TrustConfig()):
    """The share of the edge the rule trusts: the shrunk share less ``caution`` standard errors,
    within [0, 1]."""
    return np.clip(np.asarray(mean) - config.caution * np.asarray(error), 0.0, 1.0)


def trusted_probability(probs, prices, share):
    """The probability the rating rule trusts: the one whose edge at ``prices`` is ``share`` of
    the edge of ``probs``, 1/o + share·(p − 1/o); (n,) or (n, k) with ``share`` broadcast. Where
    the share is 1 it is ``probs``, where 0 the price's own probability (no edge); NaN where a
    probability or price is."""
    p = np.asarray(probs, dtype=float)
    o = np.asarray(prices, dtype=float)
    implied = 1.0 / np.where(np.isfinite(o) & (o > 1.0), o, np.nan)
    return implied + np.asarray(share, dtype=float) * (p - implied)


@dataclass
class Trusted:
    """What the rule trusts of each pick: the share of its edge (mean and standard error of
    the shrunk share, the trusted share), the trusted probability, and its expected log growth
    at the price (times the share of the stake at risk)."""

    mean: np.ndarray
    error: np.ndarray
    share: np.ndarray
    probability: np.ndarray
    growth: np.ndarray


def trust(probs, prices, league, cutoff, evidence: Evidence, config=TrustConfig(), at_risk=1.0):
    """The trust of each pick (its published probability and the price taken, (n,); league and
    cut-off as :func:`shares` reads them): see :class:`Trusted`. ``at_risk`` is the expected
    share of a stake not refunded (a pushed line bet comes back), 1 for a market without
    lines."""
    mean, error, _ = shares(evidence, prices, league, cutoff, config)
    share = trusted_share(mean, error, config)
    probability = trusted_probability(probs, prices, share)
    growth = picks.growth(probability, prices) * np.asarray(at_risk, dtype=float)
    return Trusted(mean, error, share, probability, growth)
