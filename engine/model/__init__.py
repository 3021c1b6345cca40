"""The goal model and what it is fitted with: score matrices, Dixon-Coles, market-implied ratings,
pooling with the market, markets with lines, the weekly timeline, the walk-forward run, and the
match intelligence read from history."""
