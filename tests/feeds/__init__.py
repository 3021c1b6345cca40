"""The feeds: file imports, the live sources and their sync, formats, prices, kick-offs,
contradictions, replays, the month on autopilot."""
