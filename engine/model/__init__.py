"""The goal model and what it is fitted with: score matrices, Dixon-Coles, market-implied ratings,
pooling with the market, markets with lines, the weekly timeline, the walk-forward run, and the
match intelligence read from history.

SciPy (its optimisers, the normal quantile, the log-gamma) is imported where a fit or a test
calls it, not when a module is: the web processes, the CLI and the worker import the model with
the services, and most of them never fit one; loading SciPy is about half of their start-up.
``tests/system/test_architecture.py`` holds that importing the app loads no SciPy."""
