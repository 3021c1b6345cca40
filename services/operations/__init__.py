"""Operations: recorded long-running jobs, the schedule the worker runs, and the service's
health."""
