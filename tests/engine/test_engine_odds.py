"""Margin removal and quote cubes (engine.betting.odds)."""

import numpy as np
import pytest

from engine.betting import odds
from engine.betting.odds import (
    METHODS,
    PARAMETERS,
    best_prices,
    closing_prices,
    fit_margin,
    has_quote,
    overround,
    quoting_count,
    remove_margin,
    sharp_probabilities,
    sharp_quotes,
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


def test_each_method_on_an_even_two_way_market():
    # 1.9 and 1.9: π = 1/1.9 = 0.526316 each, booksum β = 2/1.9 = 1.052632. Every method gives
    # 0.5 and 0.5; what each solves for is worked by hand:
    # additive: d = (β − 1)/2 = 0.026316; power: 2·(1/1.9)^κ = 1, κ = ln 2 / ln 1.9 = 1.079935;
    # Shin: 0.5 = (√(z² + 4(1 − z)·π²/β) − z) / (2(1 − z)) with π²/β = 1/3.8 reduces to
    # z² − βz + (β − 1) = 0, so z = β − 1 = 1/19 = 0.052632;
    # odds ratio: π/(1 − π) = 1/0.9, fair odds 1, so c = 1.111111.
    expected = {
        "proportional": 2 / 1.9,
        "additive": (2 / 1.9 - 1) / 2,
        "power": np.log(2) / np.log(1.9),
        "shin": 1 / 19,
        "odds-ratio": 1 / 0.9,
    }
    for method, parameter in expected.items():
        probs, solved = fit_margin([1.9, 1.9], method=method)
        assert probs == pytest.approx([0.5, 0.5], abs=1e-12)
        assert solved == pytest.approx(parameter, abs=1e-10), method
    assert set(PARAMETERS) == set(METHODS)


def test_shin_recovers_its_z_from_a_three_way_book():
    # Shin's bookmaker quotes π_i = s_i · Σ_j s_j with s_i = √(z·p_i + (1 − z)·p_i²); here fair
    # (0.5, 0.3, 0.2) and z = 0.02. The solver returns both the probabilities and z.
    true, z = np.array([0.5, 0.3, 0.2]), 0.02
    s = np.sqrt(z * true + (1 - z) * true**2)
    probs, solved = fit_margin(1.0 / (s * s.sum()), method="shin")
    assert probs == pytest.approx(true, abs=1e-10)
    assert solved == pytest.approx(z, abs=1e-10)


def test_power_recovers_its_kappa_from_a_three_way_book():
    # Prices 1/p^(1/κ) with κ = 1.07: the solver finds κ and the p it was built from.
    true = np.array([0.55, 0.25, 0.2])
    probs, kappa = fit_margin(1.0 / true ** (1 / 1.07), method="power")
    assert probs == pytest.approx(true, abs=1e-10) and kappa == pytest.approx(1.07, abs=1e-10)


def test_odds_ratio_recovers_its_ratio_from_a_three_way_book():
    # Implied odds π/(1 − π) = c · p/(1 − p) with c = 1.12, so π = cp / (1 − p + cp).
    true, ratio = np.array([0.6, 0.25, 0.15]), 1.12
    implied = ratio * true / (1 - true + ratio * true)
    probs, solved = fit_margin(1.0 / implied, method="odds-ratio")
    assert probs == pytest.approx(true, abs=1e-10) and solved == pytest.approx(ratio, abs=1e-10)


def test_additive_hand_worked_and_floored_at_zero():
    # 1/2.0 + 1/3.2 + 1/4.0 = 1.0625: each selection loses 0.0625/3 = 0.0208333.
    probs, deduction = fit_margin([2.0, 3.2, 4.0], method="additive")
    assert deduction == pytest.approx(0.0625 / 3)
    assert probs == pytest.approx([0.4791667, 0.2916667, 0.2291667], abs=1e-7)
    # 1/1.05 + 1/12 + 1/60 = 1.052381: an equal share (0.017460) would leave the 60.0 shot below
    # zero, so it gets 0 and the other two share the margin: (1.035714 − 1)/2 = 0.017857.
    probs, deduction = fit_margin([1.05, 12.0, 60.0], method="additive")
    assert deduction == pytest.approx((1 / 1.05 + 1 / 12 - 1) / 2)
    assert probs == pytest.approx([1 / 1.05 - deduction, 1 / 12 - deduction, 0.0], abs=1e-12)


def test_methods_order_the_long_shot_as_the_literature_says():
    # A 1.25 / 6.5 / 13.0 book (margin 3.1 %) leaves the long shot 0.0667 by additive, 0.0680 by
    # power, 0.0688 by Shin, 0.0711 by the odds ratio and 0.0746 by proportional removal.
    long_shot = {m: remove_margin([1.25, 6.5, 13.0], method=m)[2] for m in METHODS}
    assert long_shot["additive"] < long_shot["power"] < long_shot["proportional"]
    assert long_shot["shin"] < long_shot["odds-ratio"] < long_shot["proportional"]


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
    # Exactly: a walk-forward prediction may not move when later matches join its batch.
    assert np.array_equal(together, one_by_one)
    assert np.array_equal(remove_margin(prices[:7], method=method), together[:7])


def test_shin_without_a_margin_is_proportional():
    prices = [2.2, 3.6, 4.0]  # booksum 0.990: no margin to attribute to insiders
    assert remove_margin(prices, method="shin") == pytest.approx(remove_margin(prices))


def test_unknown_method_and_overround_of_invalid_rows():
    with pytest.raises(ValueError, match="unknown margin-removal method"):
        remove_margin([2.0, 2.0], method="logit")
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


def test_overround_row_by_row_with_missing_prices():
    # 2/1.9 − 1 = 0.052632 and 2/2.0 − 1 = 0 per row; a row with a price missing (NaN, or None as
    # a database column gives it) has none.
    margins = overround([[1.9, 1.9], [2.0, 2.0], [NAN, 2.0], [None, 2.0]])
    assert margins == pytest.approx([2 / 1.9 - 1, 0.0, NAN, NAN], nan_ok=True)
    assert margins.dtype == float


def test_shin_finds_no_insiders_in_a_book_without_a_margin():
    # A book summing to exactly 1 (2.0, 2.0) or to less (booksum 0.990) has no margin for
    # insiders to explain: z is 0 exactly, not the bisection's last step near it.
    for prices in ([2.0, 2.0], [2.2, 3.6, 4.0]):
        probs, z = fit_margin(prices, method="shin")
        assert z == 0.0
        assert probs == pytest.approx(remove_margin(prices))


def test_sharp_quotes_need_the_sharp_books_full_quote():
    quoted = sharp_quotes(cube(), BOOKS)
    assert quoted.dtype == bool and quoted.tolist() == [True, False, False, False]
    # Without the sharp book in the cube nobody quotes for it: one False per match.
    absent = sharp_quotes(cube()[:, 1:], BOOKS[1:])
    assert absent.dtype == bool and absent.tolist() == [False] * 4
    with pytest.raises(ValueError, match="shape"):
        sharp_quotes(cube(), BOOKS[1:])


def test_a_cube_may_hold_none_for_a_missing_price():
    # None where a bookmaker did not quote (as a database column gives it) reads as NaN.
    with_none = np.where(np.isnan(cube()), None, cube().astype(object))
    assert odds.valid_rows(with_none).tolist() == odds.valid_rows(cube()).tolist()
    assert quoting_count(with_none, BOOKS).tolist() == [3, 1, 0, 0]
    for read in (best_prices, sharp_probabilities, closing_prices):
        for got, expected in zip(read(with_none, BOOKS), read(cube(), BOOKS), strict=True):
            assert got.dtype == expected.dtype
            np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("method", METHODS)
def test_a_row_with_a_price_missing_as_none_has_no_probabilities(method):
    probs, parameter = fit_margin([[None, 2.0, 2.0], [2.0, 3.2, 4.0]], method=method)
    assert np.isnan(probs[0]).all() and np.isnan(parameter[0])
    assert probs[1] == pytest.approx(remove_margin([2.0, 3.2, 4.0], method=method))
    assert parameter.dtype == float


def test_proportional_is_the_default_method():
    probs, booksum = fit_margin([2.0, 3.2, 4.0])
    assert probs == pytest.approx([0.470588235, 0.294117647, 0.235294118])
    assert booksum == pytest.approx(1.0625)


def test_prices_need_a_last_axis_and_a_cube_three_axes():
    with pytest.raises(ValueError, match=r"^prices need a last axis of selections$"):
        fit_margin(2.0)
    with pytest.raises(
        ValueError, match=r"^prices must have shape \(n_matches, 4 bookmakers, k\), got \(2, 4\)$"
    ):
        quoting_count(np.ones((2, 4)), BOOKS)


def test_the_bisection_stops_once_its_bracket_is_no_wider_than_tol():
    # Shin's z is sought in [0, 1]: with tol = 2⁻¹⁰ exactly ten halvings leave a bracket of width
    # 2⁻¹⁰ holding z = 1/19 (the even 1.9/1.9 book), and the answer is its midpoint, an odd
    # multiple of 2⁻¹¹.
    _, z = fit_margin([1.9, 1.9], method="shin", tol=2**-10)
    assert abs(z - 1 / 19) <= 2**-11
    steps = z * 2**11
    assert steps == int(steps) and int(steps) % 2 == 1
