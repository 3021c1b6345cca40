"""Margin removal and quote cubes (engine.odds)."""

import numpy as np
import pytest

from engine import odds
from engine.odds import (
    METHODS,
    best_prices,
    closing_prices,
    has_quote,
    overround,
    quoting_count,
    remove_margin,
    sharp_probabilities,
)

NAN = np.nan


def test_proportional_hand_worked():
    # 1/2.0 + 1/3.2 + 1/4.0 = 0.5 + 0.3125 + 0.25 = 1.0625, an overround of 6.25 %;
    # dividing by it: 0.5/1.0625 = 0.470588, 0.3125/1.0625 = 0.294118, 0.25/1.0625 = 0.235294.
    probs = remove_margin([2.0, 3.2, 4.0])
    assert probs == pytest.approx([0.470588235, 0.294117647, 0.235294118])
    assert overround([2.0, 3.2, 4.0]) == pytest.approx(0.0625)


def test_shin_with_two_selections_takes_the_margin_off_equally():
    # With two selections Shin's method removes the same amount from each implied probability:
    # 1/1.8 = 0.555556, 1/2.1 = 0.476190, booksum 1.031746, so each loses 0.031746 / 2 = 0.015873
    # → 0.539683 and 0.460317.
    probs = remove_margin([1.8, 2.1], method="shin")
    assert probs == pytest.approx([0.539683, 0.460317], abs=1e-6)


def test_shin_recovers_the_probabilities_its_model_priced():
    # Shin's bookmaker quotes π_i = s_i · Σ_j s_j with s_i = sqrt(z·p_i + (1 − z)·p_i²).
    true, z = np.array([0.5, 0.3, 0.2]), 0.02
    s = np.sqrt(z * true + (1 - z) * true**2)
    prices = 1.0 / (s * s.sum())
    assert remove_margin(prices, method="shin") == pytest.approx(true, abs=1e-10)


def test_power_recovers_the_exponent():
    # Prices (√2, 2, 2) imply (0.7071, 0.5, 0.5); with κ = 2 they become (0.5, 0.25, 0.25),
    # which sums to 1, so that is the power method's answer.
    assert remove_margin([np.sqrt(2.0), 2.0, 2.0], method="power") == pytest.approx(
        [0.5, 0.25, 0.25], abs=1e-10
    )
    true = np.array([0.55, 0.25, 0.2])
    prices = 1.0 / true ** (1 / 1.07)
    assert remove_margin(prices, method="power") == pytest.approx(true, abs=1e-10)


def test_shin_and_power_shade_the_longshot_more_than_proportional():
    prices = np.array([1.5, 4.2, 7.5])
    proportional = remove_margin(prices)
    for method in ("shin", "power"):
        probs = remove_margin(prices, method=method)
        assert probs[2] < proportional[2]
        assert probs[0] > proportional[0]


@pytest.mark.parametrize("method", METHODS)
def test_rows_sum_to_one_and_invalid_rows_are_nan(method):
    prices = np.array(
        [
            [[2.1, 3.4, 3.6], [NAN, 3.4, 3.6]],
            [[1.0, 3.4, 3.6], [1.3, 5.5, 11.0]],
            [[0.5, 3.4, 3.6], [2.9, 3.1, 2.6]],
        ]
    )
    probs = remove_margin(prices, method=method)
    assert probs.shape == prices.shape
    valid = np.array([[True, False], [False, True], [False, True]])
    assert np.isnan(probs[~valid]).all()
    assert probs[valid].sum(axis=-1) == pytest.approx(np.ones(3))
    assert (probs[valid] > 0).all()


@pytest.mark.parametrize("method", METHODS)
def test_vectorised_rows_match_row_by_row(method):
    rng = np.random.default_rng(7)
    fair = rng.dirichlet([4, 3, 3], size=50)
    prices = 1.0 / (fair * rng.uniform(1.01, 1.12, size=(50, 1)))
    together = remove_margin(prices, method=method)
    one_by_one = np.array([remove_margin(row, method=method) for row in prices])
    assert together == pytest.approx(one_by_one, abs=1e-12)


def test_shin_without_a_margin_is_proportional():
    prices = [2.2, 3.6, 4.0]  # booksum 0.990: no margin to attribute to insiders
    assert remove_margin(prices, method="shin") == pytest.approx(remove_margin(prices))


def test_unknown_method_and_overround_of_invalid_rows():
    with pytest.raises(ValueError, match="unknown margin-removal method"):
        remove_margin([2.0, 2.0], method="additive")
    assert np.isnan(overround([[NAN, 2.0], [1.9, 1.9]])[0])


BOOKS = ["pinnacle", "bet365", "market-average", "bwin"]


def cube():
    """Four matches quoted by four books (1x2)."""
    return np.array(
        [
            # everyone quotes; the aggregate has the highest home price but is not a real book
            [[2.0, 3.4, 4.0], [2.1, 3.3, 3.8], [2.5, 3.5, 4.2], [2.05, 3.5, 3.9]],
            # the sharp book's quote is incomplete, so it does not count; bwin has a bad price
            [[1.8, NAN, 4.5], [1.9, 3.6, 4.2], [1.85, 3.5, 4.3], [1.95, 3.7, 1.0]],
            # only the aggregate
            [[NAN] * 3, [NAN] * 3, [2.2, 3.2, 3.3], [NAN] * 3],
            # nobody
            [[NAN] * 3] * 4,
        ]
    )


def test_has_quote_and_quoting_count():
    quoted = has_quote(cube(), BOOKS)
    assert quoted.tolist() == [
        [True, True, True, True],
        [False, True, True, False],
        [False, False, True, False],
        [False, False, False, False],
    ]
    assert quoting_count(cube(), BOOKS).tolist() == [3, 1, 0, 0]
    assert quoting_count(cube(), BOOKS, exclude=()).tolist() == [4, 2, 1, 0]


def test_best_prices_skip_aggregates_and_partial_quotes():
    best, book = best_prices(cube(), BOOKS)
    assert best[0].tolist() == [2.1, 3.5, 4.0]
    assert book[0].tolist() == [1, 3, 0]  # bwin's 3.5 is the only real 3.5
    assert best[1].tolist() == [1.9, 3.6, 4.2]  # bet365 alone has a full valid quote
    assert book[1].tolist() == [1, 1, 1]
    assert np.isnan(best[2:]).all()
    assert (book[2:] == -1).all()


def test_best_prices_tie_goes_to_the_first_listed_book():
    prices = np.array([[[2.0, 2.0], [2.0, 1.9]]])
    assert best_prices(prices, ["a", "b"])[1].tolist() == [[0, 0]]


def test_sharp_probabilities_fall_back_to_the_aggregate():
    probs, source = sharp_probabilities(cube(), BOOKS)
    assert source.tolist() == [0, 2, 2, -1]
    assert probs[0] == pytest.approx(remove_margin([2.0, 3.4, 4.0]))
    assert probs[1] == pytest.approx(remove_margin([1.85, 3.5, 4.3]))
    assert np.isnan(probs[3]).all()
    shin, _ = sharp_probabilities(cube(), BOOKS, method="shin")
    assert shin[0] == pytest.approx(remove_margin([2.0, 3.4, 4.0], method="shin"))


def test_sharp_probabilities_without_fallback_or_sharp_book():
    _, source = sharp_probabilities(cube(), BOOKS, fallback=None)
    assert source.tolist() == [0, -1, -1, -1]
    others = ["bet365", "market-average"]
    _, source = sharp_probabilities(cube()[:, 1:3], others)
    assert source.tolist() == [1, 1, 1, -1]


def test_closing_prices_are_the_anchor_books_raw_prices():
    price, source = closing_prices(cube(), BOOKS)
    assert source.tolist() == [0, 2, 2, -1]
    assert price[0].tolist() == [2.0, 3.4, 4.0]
    assert price[2].tolist() == [2.2, 3.2, 3.3]
    assert np.isnan(price[3]).all()


def test_cube_shape_must_match_bookmakers():
    with pytest.raises(ValueError, match="shape"):
        best_prices(cube(), BOOKS[:3])
    with pytest.raises(ValueError, match="shape"):
        quoting_count(np.ones((2, 4)), BOOKS)


def test_a_market_nobody_quotes_gives_nan_and_no_bookmaker():
    empty = np.empty((3, 0, 2))
    best, book = odds.best_prices(empty, [])
    assert np.isnan(best).all() and best.shape == (3, 2) and (book == -1).all()
    probs, source = odds.sharp_probabilities(empty, [])
    assert np.isnan(probs).all() and probs.shape == (3, 2) and (source == -1).all()
    price, source = odds.closing_prices(empty, [])
    assert np.isnan(price).all() and (source == -1).all()
    assert (odds.quoting_count(empty, []) == 0).all()
    assert odds.has_quote(empty, []).shape == (3, 0)
