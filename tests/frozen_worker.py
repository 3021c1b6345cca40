"""The worker (``python -m tests.frozen_worker``) on a clock the test sets, as ``tests.frozen_wsgi``
serves the app: standing still at ``FROZEN_NOW`` (ISO 8601, with its offset), or, with
``FROZEN_CLOCK_FILE``, at the instant that file holds when it is read (the test moves it by
writing the file). The schedule's instants, the scheduler's lease and every run it starts read
that clock. ``FROZEN_LEASE_POLL_SECONDS`` shortens how often the lease is tried;
``FROZEN_QUEUE_NAME`` names the queue (a test's own on a shared Redis); ``FROZEN_HOST`` the host
it holds the lease as (one of several hosts, whose processes the others cannot see). Otherwise
``python -m worker`` as it is."""

import os
import secrets
from datetime import datetime
from pathlib import Path

import worker
from app import create_app


def clock():
    """The instant the test set: ``FROZEN_CLOCK_FILE``'s content, else ``FROZEN_NOW``."""
    path = os.environ.get("FROZEN_CLOCK_FILE")
    text = Path(path).read_text() if path else os.environ["FROZEN_NOW"]
    return datetime.fromisoformat(text.strip())


def main():
    """Run the worker on the test's clock until it is stopped."""
    app = create_app({"CLOCK": clock})
    poll = float(os.environ.get("FROZEN_LEASE_POLL_SECONDS", worker.LEASE_POLL_SECONDS))
    name = os.environ.get("FROZEN_QUEUE_NAME", worker.QUEUE_NAME)
    host = os.environ.get("FROZEN_HOST")
    with app.app_context():
        runner = worker.Worker(
            app.config,
            worker.make_huey(app.config, app.instance_path, name),
            clock=clock,
            poll_seconds=poll,
            holder=f"{host}:{os.getpid()}:{secrets.token_hex(4)}" if host else None,
        )
        runner.run()


if __name__ == "__main__":
    main()
