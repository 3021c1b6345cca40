"""What feeds the service: imports of fixtures, results and odds, the live sources' sync, and
replays of a history."""
