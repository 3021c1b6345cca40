"""Forecasting: the walk-forward model over stored matches and prices, the predictions and picks it
publishes, backtests and calibration runs."""
