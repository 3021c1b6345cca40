"""What feeds the service: imports of fixtures, results and odds, the demo world, and replays of a
history."""
