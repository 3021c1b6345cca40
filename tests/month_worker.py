"""The worker (``python -m tests.month_worker``) as ``python -m worker`` runs it, on the clock
the month's test advances (``MONTH_CLOCK_FILE``) and at its pace: every ``MONTH_TICK_SECONDS``
of wall time (instead of every minute, or every few seconds for the scheduler's lease) it looks
whether the minute moved, its worker threads look at an idle queue at least that often, and a
delivery pump lasts half of it; so each move of the clock is seen at once. Every run it starts
reads the moved clock. ``MONTH_QUEUE_NAME`` names its queue (the test's own on a shared Redis)."""

import os

from huey import consumer as huey_consumer

import worker
from app import create_app
from tests.month_clock import from_environment

TICK = float(os.environ.get("MONTH_TICK_SECONDS", "1"))


def _paced() -> None:
    """huey's scheduler and idle worker threads at the month's pace (this process only)."""
    huey_consumer.Scheduler.periodic_task_seconds = TICK
    made = huey_consumer.Consumer.__init__

    def init(self, *args, **options):
        options["max_delay"] = TICK / 4
        made(self, *args, **options)

    huey_consumer.Consumer.__init__ = init


def main():
    """Run the worker on the file's clock until it is stopped."""
    _paced()
    clock = from_environment()
    app = create_app({"CLOCK": clock})
    options = {"pump_seconds": TICK / 2}
    if hasattr(worker, "LEASE_POLL_SECONDS"):  # one scheduler across workers: try it as often
        options["poll_seconds"] = TICK
    with app.app_context():
        name = os.environ.get("MONTH_QUEUE_NAME", worker.QUEUE_NAME)
        queue = worker.make_huey(app.config, app.instance_path, name)
        runner = worker.Worker(app.config, queue, clock=clock, **options)
        if hasattr(runner, "run"):
            runner.run()  # gives the scheduler's lease up when stopped
        else:
            runner.consumer().run()


if __name__ == "__main__":
    main()
