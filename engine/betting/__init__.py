"""Prices and picks: margins and quote cubes, edges and ratings, settlement and closing-line value,
forecast scores and track-record figures, backtests, calibration, and comparable matches."""
