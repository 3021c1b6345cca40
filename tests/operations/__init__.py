"""Operations: jobs, the worker and its schedule, health, the ops API, the demo world."""
