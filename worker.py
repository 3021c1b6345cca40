"""The worker (``python -m worker``, the Procfile's ``worker:``): a huey consumer that runs the
schedule and delivers webhooks and pick alerts.

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

Every minute the worker that holds the scheduler's lease enqueues two tasks:

- ``schedule``: records the operations due (settlement hourly, calibration daily, by
  ``SCHEDULE_*``) and starts each as an ``operation`` task under its kind's lock;
- ``deliveries``: one delivery pump at a time (its own lock) that fans events out and sends
  what is due, webhooks and pick alerts (``services.alerts.outbox``), looking again every
  ``WEBHOOK_POLL_SECONDS`` for most of the minute.

Locks: on SQLite the queue belongs to one worker process, which clears its locks when it
starts (a killed worker's locks would otherwise stay); on Redis locks expire by themselves
(``OPERATION_STALE_SECONDS`` for a run, two minutes for the pump), so several workers may run.

One scheduler, any number of workers: huey's consumer enqueues its periodic tasks in every
process that runs one, and its documentation asks for one consumer with them and every other
started with ``-n`` (no periodic tasks) — so a deployment whose one scheduling consumer dies
schedules nothing until someone notices. Here every consumer runs without huey's periodic
tasks, and the worker process that holds the scheduler's lease (``services.operations.lease``,
a row in the database with an expiry and a fencing token) enqueues the minute's tasks in its
stead: each worker takes or renews the lease every :data:`LEASE_POLL_SECONDS`; one that dies is
replaced once its :data:`LEASE_SECONDS` have passed unrenewed; what a deposed holder still
tries to record is refused by the token.

A worker starts only on a database whose schema is current and with the web processes' home for
the data version's copy (``RATELIMIT_STORAGE_URI``, see ``web/versions.py``): its changes must
reach the copy the web reads. Otherwise it exits at once, in one line.
"""

import logging
import os
import secrets
import socket
import threading
import time
from pathlib import Path

from dotenv import load_dotenv
from huey import RedisExpireHuey, SqliteHuey
from huey.consumer import Consumer, Scheduler
from huey.exceptions import TaskLockedException
from huey.storage import RedisExpireStorage
from peewee import DatabaseError, InterfaceError

from clock import utcnow
from config import ConfigError
from services.alerts import outbox
from services.operations import lease, schedule
from services.webhooks import deliveries
from store import migrate
from store.database import db
from web import versions

log = logging.getLogger("picks.worker")

QUEUE_NAME = "picks"

#: How long one delivery pump runs (seconds): it ends before the next minute's starts.
PUMP_SECONDS = 55.0

#: How long the pump's lock outlives a worker that died holding it (Redis only).
PUMP_LOCK_SECONDS = 120

#: How often, and how long apart, a run whose kind is locked is tried again.
LOCKED_RETRIES = 20
LOCKED_RETRY_SECONDS = 30

#: How long the scheduler's lease lasts unrenewed (seconds), and how often every worker takes
#: or renews it: a leader that dies is replaced within their sum (35 s).
LEASE_SECONDS = 30
LEASE_POLL_SECONDS = 5


def host_name() -> str:
    """This process's host as a lease holder names it: the host name and, on Linux, the inode of
    its PID namespace, so two containers sharing a host name (``network_mode: host``), each with
    pids of its own, are two hosts (where the namespace cannot be read, ``?``: never the same
    host as another process, see :func:`gone`)."""
    try:
        namespace = str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        namespace = "?"
    return f"{socket.gethostname()}@{namespace}"


def holder_name() -> str:
    """This process as a lease holder: its host, its pid and a random part (a pid is reused)."""
    return f"{host_name()}:{os.getpid()}:{secrets.token_hex(4)}"


def gone(holder: str | None, me: str) -> bool:
    """Whether ``holder`` is a process of this host (and PID namespace) that no longer runs: a
    worker restarted after it was killed takes its own lease back at once rather than after its
    expiry. (Its pid running, perhaps reused, or another host's: only the expiry tells.)"""
    host, _, rest = (holder or "").rpartition(":")[0].rpartition(":")
    here = host_name()
    if holder == me or host != here or here.endswith("@?") or not rest.isdigit():
        return False
    pid = rest
    if int(pid) == os.getpid():  # this pid's earlier process (a container started again)
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # another user's live process
        return False
    return False


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

    def __init__(
        self,
        settings,
        huey,
        clock=utcnow,
        pump_seconds=PUMP_SECONDS,
        holder=None,
        poll_seconds=LEASE_POLL_SECONDS,
    ):
        schedule.check(settings)
        self.settings = settings
        self.huey = huey
        self.clock = clock
        self.pump_seconds = pump_seconds
        self.stopping = threading.Event()
        self.expiring = isinstance(huey.storage, RedisExpireStorage)
        self.holder = holder or holder_name()
        self.poll_seconds = poll_seconds
        self.token = None  # the lease's fencing token while this worker holds it
        self.leading = None  # whether it held the lease at its latest try (None: not tried)
        self.minute = None  # the latest minute whose tasks this worker enqueued

        self.schedule_task = huey.task(name="schedule")(self.tick)
        self.deliveries_task = huey.task(name="deliveries")(self.deliver)
        self.operation_task = huey.task(
            retries=LOCKED_RETRIES, retry_delay=LOCKED_RETRY_SECONDS, name="operation"
        )(self.run_operation)

    def lock(self, name: str, seconds: float):
        """A huey task lock, expiring after ``seconds`` where the storage can (Redis)."""
        return self.huey.lock_task(name, ttl=int(seconds) if self.expiring else None)

    @staticmethod
    def lock_name(kind: str) -> str:
        return f"operation:{kind}"

    def lead(self, now=None) -> bool:
        """Take or renew the scheduler's lease; holding it, enqueue the ``schedule`` and
        ``deliveries`` tasks once in each minute of the clock. Whether this worker leads."""
        now = self.clock() if now is None else now
        try:
            with db.connection_context():
                held = lease.current(lease.SCHEDULER) if self.token is None else None
                vacated = held["holder"] if held and gone(held["holder"], self.holder) else None
                token = lease.hold(lease.SCHEDULER, self.holder, now, LEASE_SECONDS, vacated)
        except (DatabaseError, InterfaceError) as error:  # not renewed: the token fences it
            log.warning("the scheduler's lease could not be renewed: %s", error)
            token = None
        if token != self.token or self.leading is None:
            if token is not None:
                log.info("%s holds the scheduler's lease (token %s)", self.holder, token)
            elif self.token is not None:
                log.warning("%s no longer holds the scheduler's lease", self.holder)
            else:
                log.info("%s follows: another worker holds the scheduler's lease", self.holder)
            self.token, self.leading = token, token is not None
        if token is None:
            return False
        minute = now.replace(second=0, microsecond=0)
        if self.minute is None or minute > self.minute:
            self.minute = minute
            log.info("%s enqueues the tasks of %s (token %s)", self.holder, minute, token)
            self.schedule_task(token)
            self.deliveries_task()
        return True

    def resign(self) -> None:
        """Give the scheduler's lease up (a worker that stops), so another takes it at once."""
        if self.token is None:
            return
        with db.connection_context():
            lease.release(lease.SCHEDULER, self.holder, self.clock())
        self.token = None

    def tick(self, token: int):
        """Record the runs due and start them (and those a dead worker left), unless the
        lease has moved on from ``token`` since this task was enqueued."""
        fence = self.fence(token)
        with db.connection_context():
            try:
                due = schedule.tick(
                    self.settings,
                    self.clock(),
                    lambda kind: self.huey.is_locked(self.lock_name(kind)),
                    fence,
                )
            except lease.LeaseLost as lost:
                log.warning("a deposed scheduler's tick recorded nothing: %s", lost)
                return
        for operation_id, kind in due:
            log.info("starting scheduled %s (operation %s)", kind, operation_id)
            self.operation_task(operation_id, kind, token)

    @staticmethod
    def fence(token):
        """The check that the scheduler's lease still carries ``token`` (None: none)."""
        if token is None:
            return None
        return lambda: lease.fence(lease.SCHEDULER, token)

    def run_operation(self, operation_id: int, kind: str, token: int | None = None):
        """Run one scheduled operation under its kind's lock (held: huey tries again later),
        unless the scheduler that started it was deposed since (its successor hands it back)."""
        lock = self.lock(self.lock_name(kind), self.settings["OPERATION_STALE_SECONDS"])
        with lock, db.connection_context():
            try:
                schedule.execute(operation_id, self.settings, self.clock(), self.fence(token))
            except lease.LeaseLost as lost:
                log.warning("operation %s left to the scheduler's holder: %s", operation_id, lost)

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
                    self.settings,
                    self.clock,
                    self.pump_seconds,
                    stop=self.stopping.is_set,
                    rounds=(deliveries.deliver_due, outbox.deliver_due),
                )
        finally:
            lock.release()

    def consumer(self):
        """huey's consumer for these tasks: worker threads, and its scheduler each second,
        which also runs the lease (:class:`LeasedScheduler`) in place of huey's periodic tasks."""
        # A killed worker's locks stay in an SQLite queue, which only this worker reads: clear
        # them at start. On Redis they expire, and another worker may hold them now.
        locks = [self.lock_name(job.kind) for job in schedule.JOBS] + ["deliveries"]
        consumer = LeasedConsumer(
            self,
            self.huey,
            workers=self.settings["WORKER_THREADS"],
            worker_type="thread",
            periodic=False,  # huey's ``-n``: the lease's holder enqueues the minute's tasks
            scheduler_interval=1,
            extra_locks=None if self.expiring else ",".join(locks),
        )
        self.stopping = consumer.stop_flag
        return consumer

    def run(self):
        """Run the consumer until it is stopped, then give the lease up."""
        try:
            self.consumer().run()
        finally:
            self.resign()


class LeasedScheduler(Scheduler):
    """huey's scheduler (delayed and retried tasks, each second) that also runs the worker's
    lease: every ``poll_seconds`` it takes or renews it, and as its holder enqueues each
    minute's tasks (:meth:`Worker.lead`)."""

    def __init__(self, worker, **options):
        super().__init__(**options)
        self.worker = worker
        self.next_lead = time.monotonic()

    def loop(self, now=None):
        """One round: the lease when its time has come, then huey's own round."""
        if time.monotonic() >= self.next_lead:
            self.next_lead = time.monotonic() + self.worker.poll_seconds
            self.worker.lead()
        super().loop(now)


class LeasedConsumer(Consumer):
    """huey's consumer with the :class:`LeasedScheduler` of ``worker``."""

    def __init__(self, worker, huey, **options):
        self.worker = worker  # before huey's constructor, which makes the scheduler
        super().__init__(huey, **options)

    def _create_scheduler(self):
        return LeasedScheduler(
            self.worker,
            huey=self.huey,
            stop_flag=self.stop_flag,
            interval=self.scheduler_interval,
            periodic=False,
        )


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
    # Its changes must reach the data version's copy the web processes read, or the web serves
    # answers older than them (see web/versions.py): one line, exit status 1, as for settings.
    if refusal := versions.home_refusal(app):
        raise SystemExit(f"Error: {refusal}")
    for name in ("huey", "picks"):
        logging.getLogger(name).setLevel(app.config["LOG_LEVEL"])
    handler = next(iter(logging.getLogger("picks").handlers), None)
    if handler is not None:
        logging.getLogger("huey").addHandler(handler)
    worker = Worker(app.config, make_huey(app.config, app.instance_path))
    worker.run()


if __name__ == "__main__":
    # Through the module's own name, so the tasks are named worker.* (not __main__.*).
    import worker

    worker.main()
