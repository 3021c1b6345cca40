"""Calibration of a market's forecasts beside a reference (engine.betting.calibration)."""

import json

import numpy as np
import pytest

from engine.betting import metrics
from engine.betting.calibration import evaluate

NAN = np.nan
PROBS = np.array([[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.6, 0.25, 0.15], [NAN, NAN, NAN]])
OUTCOME = np.array([0, 2, 1, 0])
REFERENCE = np.array([[0.45, 0.3, 0.25], [NAN, NAN, NAN], [0.5, 0.3, 0.2], [0.4, 0.3, 0.3]])


def test_model_alone_hand_worked():
    result = evaluate(PROBS, OUTCOME, ordered=True)
    # The fourth row has no forecast. Rows 0 and 1 are the metrics tests' pair (Brier 0.38 and
    # 0.78, RPS 0.145 and 0.265); row 2, outcome draw: Brier 0.36 + 0.5625 + 0.0225 = 0.945,
    # RPS ((0.6 − 0)² + (0.85 − 1)²) / 2 = (0.36 + 0.0225) / 2 = 0.19125.
    assert result["count"] == 3
    assert result["brier"] == pytest.approx((0.38 + 0.78 + 0.945) / 3)
    assert result["rps"] == pytest.approx((0.145 + 0.265 + 0.19125) / 3)
    assert result["log_loss"] == pytest.approx(-np.log([0.5, 0.3, 0.25]).mean())
    assert result["reference"] is None
    assert len(result["bins"]) == 10
    assert sum(b["count"] for b in result["bins"]) == 9


def test_unordered_market_has_no_rps():
    assert evaluate(PROBS[:3, :2] / PROBS[:3, :2].sum(1, keepdims=True), [0, 1, 1])["rps"] is None


def test_model_and_reference_share_their_rows():
    result = evaluate(PROBS, OUTCOME, reference=REFERENCE, ordered=True, bins=5)
    # Only rows 0 and 2 have both a forecast and a reference.
    rows = [0, 2]
    assert result["count"] == 2
    assert result["brier"] == pytest.approx((0.38 + 0.945) / 2)
    assert result["ece"] == pytest.approx(
        metrics.expected_calibration_error(PROBS[rows], OUTCOME[rows], bins=5)
    )
    reference = result["reference"]
    assert reference["count"] == 2
    # Reference row 0, home won: 0.55² + 0.3² + 0.25² = 0.3025 + 0.09 + 0.0625 = 0.455;
    # row 2, draw: 0.5² + 0.7² + 0.2² = 0.25 + 0.49 + 0.04 = 0.78.
    assert reference["brier"] == pytest.approx((0.455 + 0.78) / 2)
    assert reference["rps"] == pytest.approx(metrics.rps(REFERENCE[rows], OUTCOME[rows]))
    assert len(reference["bins"]) == 5
    assert "reference" not in reference


def test_reference_without_any_row_is_dropped():
    result = evaluate(PROBS, OUTCOME, reference=np.full(PROBS.shape, NAN))
    assert result["count"] == 3
    assert result["reference"] is None


def test_no_rows_at_all():
    result = evaluate(np.full((2, 3), NAN), [0, 1], reference=REFERENCE[:2], ordered=True)
    assert result["count"] == 0
    assert result["brier"] is result["log_loss"] is result["rps"] is result["ece"] is None
    assert result["reference"] is None


def test_result_is_plain_json():
    result = evaluate(PROBS, OUTCOME, reference=REFERENCE, ordered=True)
    json.dumps(result, allow_nan=False)


def test_shapes_are_checked():
    with pytest.raises(ValueError):
        evaluate(PROBS, OUTCOME[:2])
    with pytest.raises(ValueError):
        evaluate(PROBS, OUTCOME, reference=REFERENCE[:, :2])


def test_reliability_by_price_band_beside_the_reference():
    prices = np.array([[1.9, 3.4, 4.5], [4.8, 2.0, 3.3], [1.6, 4.0, 8.0], [2.0, 3.0, NAN]])
    result = evaluate(PROBS, OUTCOME, reference=REFERENCE, ordered=True, prices=prices)
    # Rows 0 and 2 remain: prices 1.9, 1.6 (under 2.0); 3.4 (2.0–4.0); 4.5, 4.0 (4.0–8.0); 8.0.
    bands = result["price_bands"]
    assert [(b["from"], b["to"], b["count"]) for b in bands] == [
        (1.0, 2.0, 2),
        (2.0, 4.0, 1),
        (4.0, 8.0, 2),
        (8.0, None, 1),
    ]
    # Under 2.0: the home sides of rows 0 (won, p 0.5) and 2 (lost, p 0.6).
    assert bands[0]["mean_predicted"] == pytest.approx(0.55)
    assert bands[0]["observed_rate"] == pytest.approx(0.5)
    assert bands[0]["std_error"] == pytest.approx(np.sqrt(0.25 + 0.24) / 2)
    reference = result["reference"]["price_bands"]
    assert reference[0]["mean_predicted"] == pytest.approx((0.45 + 0.5) / 2)
    assert [b["count"] for b in reference] == [2, 1, 2, 1]
    assert evaluate(PROBS, OUTCOME)["price_bands"] is None
    with pytest.raises(ValueError):
        evaluate(PROBS, OUTCOME, prices=prices[:, :2])
