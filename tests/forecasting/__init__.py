"""Forecasting: predictions, backfills and the pipeline from import to published picks."""
