"""The worker (``python -m worker``, the Procfile's ``worker:``): a huey consumer that runs the
schedule and delivers webhooks.

Why huey: it is small, kept by Peewee's author, and brings what this needs and nothing more —
cron-style periodic tasks, task locks, delayed retries, a consumer with worker threads — on
storage we already run: an SQLite file (no new service for ``make run``) or Redis. RQ has no
scheduler or locks of its own and needs Redis; Celery needs a broker and a beat process and
is far larger than two periodic jobs and an outbox need.

What the queue holds is only what to do next; what must not be lost lives in the database:
the outbox and its deliveries (``services.webhooks.deliveries``), the scheduled runs
(``services.operations.schedule``). So a worker stopped at any moment loses nothing, and the
queue may be an SQLite file only this worker reads (``WORKER_QUEUE_URL`` unset: beside an SQLite
database, or in the instance folder) or a Redis shared by several workers (``redis://…``).

Every minute the consumer's scheduler enqueues two tasks:

- ``schedule``: records the operations due (settlement hourly, calibration daily, by
  ``SCHEDULE_*``) and starts each as an ``operation`` task under its kind's lock;
- ``deliveries``: one delivery pump at a time (its own lock) that fans events out and sends
  what is due, looking again every ``WEBHOOK_POLL_SECONDS`` for most of the minute.

Locks: on SQLite the queue belongs to one worker process, which clears its locks when it
starts (a killed worker's locks would otherwise stay); on Redis locks expire by themselves
(``OPERATION_STALE_SECONDS`` for a run, two minutes for the pump), so several workers may run.
"""

import logging
import threading
from pathlib import Path

from dotenv import load_dotenv
from huey import RedisExpireHuey, SqliteHuey, crontab
from huey.exceptions import TaskLockedException
from huey.storage import RedisExpireStorage

from clock import utcnow
from config import ConfigError
from services.operations import schedule
from services.webhooks import deliveries
from store import migrate
from store.database import db

log = logging.getLogger("picks.worker")

QUEUE_NAME = "picks"

#: How long one delivery pump runs (seconds): it ends before the next minute's starts.
PUMP_SECONDS = 55.0

#: How long the pump's lock outlives a worker that died holding it (Redis only).
PUMP_LOCK_SECONDS = 120

#: How often, and how long apart, a run whose kind is locked is tried again.
LOCKED_RETRIES = 20
LOCKED_RETRY_SECONDS = 30


def queue_path(settings, instance_path) -> Path:
    """Where the SQLite queue lives: ``WORKER_QUEUE_URL`` (``sqlite:///path``), else beside an
    SQLite database (``app.db`` → ``app.queue.db``), else ``instance/queue.db``."""
    url = settings["WORKER_QUEUE_URL"]
    if url:
        return Path(url.removeprefix("sqlite:///"))
    database = settings["DATABASE_URL"]
    if database.startswith("sqlite:///"):
        path = Path(database.removeprefix("sqlite:///"))
        return path.with_name(f"{path.stem}.queue.db")
    return Path(instance_path) / "queue.db"


def make_huey(settings, instance_path, name=QUEUE_NAME):
    """The queue: Redis when ``WORKER_QUEUE_URL`` says ``redis://…``, else an SQLite file."""
    url = settings["WORKER_QUEUE_URL"] or ""
    if url.startswith(("redis://", "rediss://", "unix://")):
        return RedisExpireHuey(name, url=url, results=False, utc=True)
    path = queue_path(settings, instance_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return SqliteHuey(name, filename=str(path), results=False, utc=True)


class Worker:
    """The worker's tasks on one huey queue, for one app's settings and clock."""

    def __init__(self, settings, huey, clock=utcnow, pump_seconds=PUMP_SECONDS):
        schedule.check(settings)
        self.settings = settings
        self.huey = huey
        self.clock = clock
        self.pump_seconds = pump_seconds
        self.stopping = threading.Event()
        self.expiring = isinstance(huey.storage, RedisExpireStorage)

        every_minute = crontab()
        self.schedule_task = huey.periodic_task(every_minute, name="schedule")(self.tick)
        self.deliveries_task = huey.periodic_task(every_minute, name="deliveries")(self.deliver)
        self.operation_task = huey.task(
            retries=LOCKED_RETRIES, retry_delay=LOCKED_RETRY_SECONDS, name="operation"
        )(self.run_operation)

    def lock(self, name: str, seconds: float):
        """A huey task lock, expiring after ``seconds`` where the storage can (Redis)."""
        return self.huey.lock_task(name, ttl=int(seconds) if self.expiring else None)

    @staticmethod
    def lock_name(kind: str) -> str:
        return f"operation:{kind}"

    def tick(self):
        """Record the runs due and start them (and those a dead worker left)."""
        with db.connection_context():
            due = schedule.tick(
                self.settings,
                self.clock(),
                lambda kind: self.huey.is_locked(self.lock_name(kind)),
            )
        for operation_id, kind in due:
            log.info("starting scheduled %s (operation %s)", kind, operation_id)
            self.operation_task(operation_id, kind)

    def run_operation(self, operation_id: int, kind: str):
        """Run one scheduled operation under its kind's lock (held: huey tries again later)."""
        lock = self.lock(self.lock_name(kind), self.settings["OPERATION_STALE_SECONDS"])
        with lock, db.connection_context():
            schedule.execute(operation_id, self.settings, self.clock())

    def deliver(self):
        """Pump deliveries for most of a minute, unless another pump runs."""
        lock = self.lock("deliveries", PUMP_LOCK_SECONDS)
        try:
            lock.acquire()
        except TaskLockedException:
            return
        try:
            with db.connection_context():
                deliveries.pump(
                    self.settings, self.clock, self.pump_seconds, stop=self.stopping.is_set
                )
        finally:
            lock.release()

    def consumer(self):
        """huey's consumer for these tasks: worker threads, the scheduler each second."""
        # A killed worker's locks stay in an SQLite queue, which only this worker reads: clear
        # them at start. On Redis they expire, and another worker may hold them now.
        locks = [self.lock_name(job.kind) for job in schedule.JOBS] + ["deliveries"]
        consumer = self.huey.create_consumer(
            workers=self.settings["WORKER_THREADS"],
            worker_type="thread",
            periodic=True,
            scheduler_interval=1,
            extra_locks=None if self.expiring else ",".join(locks),
        )
        self.stopping = consumer.stop_flag
        return consumer


def main():
    """Run the worker until it is stopped (SIGTERM stops at once, SIGINT after the tasks)."""
    load_dotenv()
    from app import create_app  # the composition root: settings, database, logging

    try:
        app = create_app()
    except ConfigError as error:  # one line the platform shows, not a traceback; exit status 1
        raise SystemExit(f"Error: {error}") from None
    with app.app_context(), db.connection_context():
        missing = migrate.pending()
    if missing:  # its tasks would fail on what the schema lacks; the platform starts it again
        raise SystemExit(
            "the database's schema is behind this version (pending migration steps: "
            f"{', '.join(missing)}): run `flask db upgrade` (the release step)"
        )
    for name in ("huey", "picks"):
        logging.getLogger(name).setLevel(app.config["LOG_LEVEL"])
    handler = next(iter(logging.getLogger("picks").handlers), None)
    if handler is not None:
        logging.getLogger("huey").addHandler(handler)
    worker = Worker(app.config, make_huey(app.config, app.instance_path))
    worker.consumer().run()


if __name__ == "__main__":
    # Through the module's own name, so the tasks are named worker.* (not __main__.*).
    import worker

    worker.main()
