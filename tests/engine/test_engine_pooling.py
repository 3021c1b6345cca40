"""Logarithmic pooling of model and market probabilities, and the fitted pool weight."""

import numpy as np
import pytest

from engine.model import pooling


def random_probs(rng, n, k):
    """n random probability rows over k outcomes, none tiny."""
    raw = rng.gamma(3.0, 1.0, size=(n, k))
    return raw / raw.sum(axis=1, keepdims=True)


def sample(rng, probs):
    """One outcome index per row drawn from its probabilities."""
    return (probs.cumsum(axis=1) < rng.random(len(probs))[:, None]).sum(axis=1)


@pytest.fixture
def pair():
    """Model and market probabilities that disagree, 3 outcomes."""
    rng = np.random.default_rng(11)
    return random_probs(rng, 50, 3), random_probs(rng, 50, 3)


def test_weight_one_is_the_model_and_zero_the_market(pair):
    model, market = pair
    np.testing.assert_allclose(pooling.pool(model, market, 1.0), model, atol=1e-12)
    np.testing.assert_allclose(pooling.pool(model, market, 0.0), market, atol=1e-12)


def test_pooled_rows_sum_to_one_and_lie_between(pair):
    model, market = pair
    pooled = pooling.pool(model, market, 0.3)
    np.testing.assert_allclose(pooled.sum(axis=1), 1.0, atol=1e-12)
    assert not np.allclose(pooled, model) and not np.allclose(pooled, market)
    # The geometric pool of two distributions is p ∝ m^w q^(1-w), checked directly.
    direct = model**0.3 * market**0.7
    np.testing.assert_allclose(pooled, direct / direct.sum(axis=1, keepdims=True), atol=1e-12)


def test_missing_market_falls_back_to_the_model(pair):
    model, market = pair
    market = market.copy()
    market[[2, 5]] = np.nan
    market[7, 1] = np.nan
    pooled = pooling.pool(model, market, 0.2)
    np.testing.assert_allclose(pooled[[2, 5, 7]], model[[2, 5, 7]], atol=1e-12)
    assert np.isfinite(pooled).all()
    assert not np.allclose(pooled[0], model[0])


def test_weight_per_row(pair):
    model, market = pair
    weights = np.linspace(0.0, 1.0, len(model))
    pooled = pooling.pool(model, market, weights)
    np.testing.assert_allclose(pooled[0], market[0], atol=1e-12)
    np.testing.assert_allclose(pooled[-1], model[-1], atol=1e-12)
    np.testing.assert_allclose(
        pooled[10], pooling.pool(model[10:11], market[10:11], weights[10])[0]
    )


def test_zero_probabilities_do_not_warn():
    model = np.array([[1.0, 0.0, 0.0]])
    market = np.array([[0.5, 0.3, 0.2]])
    pooled = pooling.pool(model, market, 0.5)
    assert np.isfinite(pooled).all()
    assert pooled[0, 0] > 0.99


@pytest.mark.parametrize("truth", [0.0, 0.3, 0.7, 1.0])
def test_fit_weight_finds_the_true_pool(truth):
    rng = np.random.default_rng(int(truth * 10) + 1)
    model = random_probs(rng, 20_000, 3)
    market = random_probs(rng, 20_000, 3)
    outcome = sample(rng, pooling.pool(model, market, truth))
    assert pooling.fit_weight(model, market, outcome) == pytest.approx(truth, abs=0.04)


def test_fit_weight_skips_rows_without_market_or_result():
    rng = np.random.default_rng(5)
    model = random_probs(rng, 10_000, 2)
    market = random_probs(rng, 10_000, 2)
    outcome = sample(rng, pooling.pool(model, market, 0.6))
    fitted = pooling.fit_weight(model, market, outcome)
    # Rows that cannot train, whatever their contents: the fit must ignore them.
    noise_model = random_probs(rng, 3_000, 2)
    noise_market = np.full((3_000, 2), np.nan)
    noise_market[:1_000] = noise_model[:1_000, ::-1]
    noise_outcome = np.where(np.arange(3_000) < 1_000, -1, 0)
    combined = pooling.fit_weight(
        np.vstack([model, noise_model]),
        np.vstack([market, noise_market]),
        np.concatenate([outcome, noise_outcome]),
    )
    assert combined == pytest.approx(fitted, abs=1e-9)
    assert fitted == pytest.approx(0.6, abs=0.06)


def test_too_little_history_gives_the_prior():
    rng = np.random.default_rng(9)
    model = random_probs(rng, pooling.MIN_ROWS - 1, 3)
    market = random_probs(rng, pooling.MIN_ROWS - 1, 3)
    outcome = sample(rng, model)
    assert pooling.fit_weight(model, market, outcome) == pooling.PRIOR_WEIGHT
    assert pooling.fit_weight(model, market, outcome, prior=0.4, min_rows=10, min_gain_t=0) != 0.4
    assert pooling.fit_weight(model[:0], market[:0], outcome[:0], prior=0.25) == 0.25


def test_a_model_that_is_only_noise_needs_significant_help_to_move_the_market():
    # The outcomes follow the market; the model is the market blurred by noise. On these 2,000
    # rows the earlier half's weight (0.10) happens to help the later half a little, not
    # significantly: without the test it would be adopted, with it the market stays alone.
    rng = np.random.default_rng(3)
    market = random_probs(rng, 2000, 3)
    model = market * np.exp(rng.normal(0, 0.15, (2000, 3)))
    model /= model.sum(axis=1, keepdims=True)
    outcome = sample(rng, market)
    assert pooling.fit_weight(model, market, outcome, min_gain_t=0) == pytest.approx(
        0.105, abs=0.01
    )
    assert pooling.fit_weight(model, market, outcome) == 0.0


def test_a_row_half_decided_weighs_half_a_row_whole():
    # A quarter line's half won or lost (share ½) is half a whole result: the loss weighed by
    # shares (1, ½) is the loss of the same rows counted (2, 1) times; a share of 0 is no row.
    rng = np.random.default_rng(21)
    model, market = random_probs(rng, 3_000, 2), random_probs(rng, 3_000, 2)
    outcome = sample(rng, pooling.pool(model, market, 0.5))
    share = np.where(np.arange(3_000) % 3 == 0, 0.5, 1.0)
    twice = np.repeat(np.arange(3_000), np.where(share == 1.0, 2, 1))
    everything = {"min_gain_t": -np.inf}  # the best weight on every row, no significance test
    weighed = pooling.fit_weight(model, market, outcome, share=share, **everything)
    counted = pooling.fit_weight(model[twice], market[twice], outcome[twice], **everything)
    assert weighed == pytest.approx(counted, abs=1e-4)
    assert weighed != pytest.approx(pooling.fit_weight(model, market, outcome, **everything))
    pushes = np.r_[share, np.zeros(500)]
    more = (np.vstack([m, random_probs(rng, 500, 2)]) for m in (model, market))
    assert pooling.fit_weight(
        *more, np.r_[outcome, np.zeros(500, dtype=int)], share=pushes
    ) == pooling.fit_weight(model, market, outcome, share=share)
    # Whole shares are the rule without shares.
    assert pooling.fit_weight(model, market, outcome, share=np.ones(3_000)) == pooling.fit_weight(
        model, market, outcome
    )


def test_weights_fitted_side_by_side_are_tested_as_a_family():
    assert pooling.family_gain_t(1) == pooling.MIN_GAIN_T
    assert pooling.family_gain_t(20) == pytest.approx(2.807, abs=1e-3)  # one-sided 0.25 %
    # Four keys: three with enough rows (the family), one without. The model helps a little
    # everywhere: at 5 % each key adopts a weight, at 5 % ÷ 3 only the clearest do.
    rng = np.random.default_rng(10)
    sizes, helps = (900, 900, 900, 200), (0.06, 0.1, 0.5, 0.5)
    key = np.repeat(np.arange(4), sizes)
    market = random_probs(rng, len(key), 2)
    model = random_probs(rng, len(key), 2)
    truth = np.repeat(helps, sizes)
    outcome = sample(rng, pooling.pool(model, market, truth))
    together = pooling.family_weights(key, model, market, outcome)
    t = pooling.family_gain_t(3)
    for value in range(4):
        mine = key == value
        alone = pooling.fit_weight(model[mine], market[mine], outcome[mine])
        assert together[value] == pooling.fit_weight(
            model[mine], market[mine], outcome[mine], min_gain_t=t
        )
        assert (together[value] == 0.0) >= (alone == 0.0)
    assert together[3] == 0.0 and together[2] > 0.3
    kept_at_5 = [
        pooling.fit_weight(model[key == v], market[key == v], outcome[key == v]) for v in range(3)
    ]
    assert sum(w > 0 for w in kept_at_5) > sum(together[v] > 0 for v in range(3))

    # Walk-forward, the family at each cutoff is the keys with enough rows before it.
    kickoff = np.arange(len(key), dtype=np.int64)[np.argsort(rng.random(len(key)))]
    cutoff = np.full(len(key), kickoff.max() + 1)
    walked = pooling.walk_forward_weights(key, cutoff, kickoff, model, market, outcome, family=True)
    order = np.argsort(kickoff)
    by_time = pooling.family_weights(key[order], model[order], market[order], outcome[order])
    assert all(walked[key == value][0] == by_time[value] for value in range(4))


def weekly_rows(rng, n, weight):
    """``n`` rows kicking off in weekly cut-offs of 20 rows, drawn from a pool at ``weight``."""
    model, market = random_probs(rng, n, 3), random_probs(rng, n, 3)
    kickoff = np.arange(n, dtype=np.int64) * 100
    cutoff = kickoff // 2_000 * 2_000  # the start of each row's week of 20
    return kickoff, cutoff, model, market, sample(rng, pooling.pool(model, market, weight))


def test_walk_forward_weights_of_one_key_are_fit_weight_on_the_past():
    # The significance rule is fit_weight's, unchanged: one key is today's 1x2 weights.
    rng = np.random.default_rng(21)
    kickoff, cutoff, model, market, outcome = weekly_rows(rng, 2_000, 0.5)
    weights = pooling.walk_forward_weights(
        np.zeros(2_000), cutoff, kickoff, model, market, outcome, min_rows=300
    )
    for cut in np.unique(cutoff)[::10]:
        past = kickoff < cut
        expected = pooling.fit_weight(model[past], market[past], outcome[past], min_rows=300)
        assert (weights[cutoff == cut] == expected).all()
    assert weights[-1] == pytest.approx(0.5, abs=0.1)  # adopted once there is evidence


def test_a_weight_fitted_on_one_key_is_never_applied_to_another():
    # Key 0 has 3,000 rows where the model earns half the pool; key 1 starts late with rows
    # where it earns nothing. Key 1 rows get the prior until their own key has the evidence.
    rng = np.random.default_rng(22)
    k0, c0, m0, q0, o0 = weekly_rows(rng, 3_000, 0.5)
    k1, c1, m1, q1, o1 = weekly_rows(rng, 400, 0.0)
    k1, c1 = k1 + k0[-1], c1 + k0[-1] // 2_000 * 2_000
    key = np.repeat([0, 1], [3_000, 400])
    parts = [np.concatenate(pair) for pair in ((k0, k1), (c0, c1), (m0, m1), (q0, q1), (o0, o1))]
    kickoff, cutoff, model, market, outcome = parts
    weights = pooling.walk_forward_weights(key, cutoff, kickoff, model, market, outcome)
    alone = pooling.walk_forward_weights(key[:3_000], c0, k0, m0, q0, o0)
    np.testing.assert_array_equal(weights[:3_000], alone)  # key 1 never trains key 0's weight
    assert weights[2_999] > 0.3
    assert (weights[3_000:] == pooling.PRIOR_WEIGHT).all()


def test_rows_not_eligible_get_the_market_alone_and_train_nothing():
    rng = np.random.default_rng(23)
    kickoff, cutoff, model, market, outcome = weekly_rows(rng, 2_000, 0.6)
    eligible = kickoff >= 1_000 * 100
    weights = pooling.walk_forward_weights(
        np.zeros(2_000), cutoff, kickoff, model, market, outcome, min_rows=300, eligible=eligible
    )
    assert (weights[~eligible] == 0.0).all()
    cut = cutoff[-1]
    train = eligible & (kickoff < cut)
    expected = pooling.fit_weight(model[train], market[train], outcome[train], min_rows=300)
    assert weights[-1] == expected > 0.0
