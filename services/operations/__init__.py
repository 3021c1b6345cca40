"""Operations: recorded long-running jobs, the schedule the worker runs, the service's health, and
the demo world (built, then settled and calibrated as recorded jobs)."""
