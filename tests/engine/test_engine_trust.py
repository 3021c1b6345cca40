"""How much of a pick's edge the rating trusts (engine.betting.trust), on hand-worked numbers."""

import numpy as np
import pytest

from engine.betting import picks
from engine.betting.trust import (
    Evidence,
    TrustConfig,
    ratio,
    shares,
    shrink,
    trust,
    trusted_probability,
    trusted_share,
)

#: Two settled picks at 2.5 (the 2.0–4.0 band) in league 7: edges 0.10 and 0.20, worth 0.05 and
#: 0.15 at the close. Share Σv/Σe = 0.2/0.3 = 2/3; residuals v − 2/3·e = ∓1/60, so
#: Σr²/(n − 1) · n/(Σe)² = (2/3600) · 2/0.09 = 1/81.
EVIDENCE = Evidence(
    kickoff=np.array([100.0, 200.0]),
    league=np.array([7, 7]),
    odds=np.array([2.5, 2.5]),
    edge=np.array([0.10, 0.20]),
    worth=np.array([0.05, 0.15]),
)
BANDS_ONLY = TrustConfig(
    prior=1.0, prior_spread=0.5, league_spread=0.0, caution=1.0, min_evidence=2
)


def test_the_share_that_held_and_its_variance_hand_worked():
    e, v = EVIDENCE.edge, EVIDENCE.worth
    share, variance = ratio(2, e.sum(), v.sum(), (e * e).sum(), (v * v).sum(), (e * v).sum())
    assert share == pytest.approx(2 / 3)
    assert variance == pytest.approx(1 / 81)
    # One pick, or no edge: nothing known.
    share, variance = ratio([1, 3], [0.1, 0.0], [0.1, 0.1], [0.01, 0.0], [0.01, 0.0], [0.01, 0])
    assert np.isnan(share).all() and np.isinf(variance).all()


def test_shrinking_is_a_precision_weighted_mean():
    # Prior 1 ± 0.5 (precision 4), estimate 2/3 with variance 1/81 (precision 81):
    # (4·1 + 81·2/3) / 85 = 58/85, variance 1/85.
    mean, variance = shrink(1.0, 0.25, 2 / 3, 1 / 81)
    assert mean == pytest.approx(58 / 85)
    assert variance == pytest.approx(1 / 85)
    # Nothing known: the prior as it was.
    mean, variance = shrink([1.0, 0.5], [0.25, 0.04], [np.nan, 0.2], [np.inf, np.inf])
    assert mean.tolist() == [1.0, 0.5] and variance.tolist() == [0.25, 0.04]


def test_a_band_learns_only_from_earlier_picks_of_its_own_band():
    # Picks at 3.0 (their band has the evidence) and 9.0 (it has none); cut-offs after both
    # settled picks, after the first only, and at the first's kick-off (strictly before: none).
    mean, error, count = shares(
        EVIDENCE, [3.0, 9.0, 3.0, 3.0], [7, 7, 7, 7], [300, 300, 150, 100], BANDS_ONLY
    )
    assert mean == pytest.approx([58 / 85, 1.0, 1.0, 1.0])
    assert error == pytest.approx([np.sqrt(1 / 85), 0.5, 0.5, 0.5])
    assert count.tolist() == [2, 0, 1, 0]


def test_a_league_is_shrunk_towards_its_band():
    # The band's 58/85 ± 1/85, widened by the league spread 0.1² to 1/85 + 0.01, meets the
    # league's own 2/3 ± 1/81; league 8 has no evidence of its own: the band's share, as
    # uncertain as a league drawn from the band is.
    config = TrustConfig(1.0, 0.5, league_spread=0.1, caution=1.0, min_evidence=2)
    mean, error, _ = shares(EVIDENCE, [3.0, 3.0], [7, 8], [300, 300], config)
    prior_precision = 1 / (1 / 85 + 0.01)
    expected = (prior_precision * 58 / 85 + 81 * 2 / 3) / (prior_precision + 81)
    assert mean == pytest.approx([expected, 58 / 85])
    assert error == pytest.approx([np.sqrt(1 / (prior_precision + 81)), np.sqrt(1 / 85 + 0.01)])


def test_too_little_evidence_keeps_the_prior():
    config = TrustConfig(0.5, 0.25, 0.0, 1.0, min_evidence=3)
    mean, error, _ = shares(EVIDENCE, [3.0], [7], [300], config)
    assert mean.tolist() == [0.5] and error.tolist() == [0.25]


def test_the_trusted_probability_and_its_growth_hand_worked():
    # 58/85 − 1·√(1/85) = 0.573893…; at 3.0 with p = 0.4: 1/3 + 0.573893·(0.4 − 1/3).
    share = trusted_share(58 / 85, np.sqrt(1 / 85), BANDS_ONLY)
    assert share == pytest.approx(58 / 85 - np.sqrt(1 / 85))
    assert trusted_probability(0.4, 3.0, share) == pytest.approx(1 / 3 + share * (0.4 - 1 / 3))
    # The share stays in [0, 1]: the model is never trusted beyond its own edge.
    assert trusted_share([1.5, -0.2], [0.1, 0.1], BANDS_ONLY).tolist() == [1.0, 0.0]
    assert trusted_probability(0.4, 3.0, 1.0) == pytest.approx(0.4)
    assert trusted_probability(0.4, 3.0, 0.0) == pytest.approx(1 / 3)
    found = trust([0.4], [3.0], [7], [300], EVIDENCE, BANDS_ONLY, at_risk=0.5)
    assert found.probability == pytest.approx([1 / 3 + share * (0.4 - 1 / 3)])
    assert found.growth == pytest.approx(0.5 * picks.growth(found.probability, [3.0]))
    # Trusted edge = share × edge: a Kelly stake on it stakes the trusted edge only.
    assert found.probability[0] * 3.0 - 1.0 == pytest.approx(share * (0.4 * 3.0 - 1.0))


def test_a_long_price_needs_more_edge_where_long_edges_melted():
    # Earlier long shots (10.0) lost their edges by the close; earlier favourites (1.8) kept
    # them. The same raw growth is then trusted at 1.8, hardly at 10.0.
    rng = np.random.default_rng(3)
    n = 60
    odds = np.r_[np.full(n, 1.8), np.full(n, 10.0)]
    edge = np.r_[rng.uniform(0.03, 0.06, n), rng.uniform(0.1, 0.3, n)]
    worth = np.r_[edge[:n] + rng.normal(0, 0.02, n), rng.normal(-0.02, 0.1, n)]
    evidence = Evidence(np.arange(2 * n, dtype=float), np.zeros(2 * n), odds, edge, worth)
    config = TrustConfig(1.0, 0.5, 0.0, 1.0)
    p = np.array([(1 + 0.05) / 1.8, (1 + 0.25) / 10.0])
    found = trust(p, [1.8, 10.0], [0, 0], [1e6, 1e6], evidence, config)
    assert found.share[0] > 0.7 and found.share[1] < 0.2
    raw = picks.growth(p, [1.8, 10.0])
    assert raw[1] > raw[0] and found.growth[1] < found.growth[0]


def test_the_config_refuses_nonsense():
    for bad in (
        {"prior_spread": 0.0},
        {"league_spread": -0.1},
        {"caution": -1.0},
        {"prior": 1.5},
        {"min_evidence": 1},
    ):
        with pytest.raises(ValueError):
            TrustConfig(**bad)
