"""The synthetic demo world: its competitions, fixtures and results, and its bookmakers' odds."""
