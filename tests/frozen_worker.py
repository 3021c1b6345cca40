"""The worker (``python -m tests.frozen_worker``) with its clock standing still at ``FROZEN_NOW``
(ISO 8601, with its offset), as ``tests.frozen_wsgi`` serves the app: the schedule's instants
and every run it starts read that clock. Otherwise ``python -m worker`` as it is."""

import os
from datetime import datetime

import worker
from app import create_app

NOW = datetime.fromisoformat(os.environ["FROZEN_NOW"])


def main():
    """Run the worker on the frozen clock until it is stopped."""
    app = create_app({"CLOCK": lambda: NOW})
    with app.app_context():
        runner = worker.Worker(
            app.config, worker.make_huey(app.config, app.instance_path), clock=lambda: NOW
        )
        runner.consumer().run()


if __name__ == "__main__":
    main()
