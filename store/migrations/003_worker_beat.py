"""003: the worker's beat (``worker_beat``): when a worker last ran the schedule, which the
health report reads to tell a stopped worker from an idle one."""

import peewee as pw
from peewee_migrate import Migrator


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """The one-row table of the latest beat."""

    @migrator.create_model
    class WorkerBeat(pw.Model):
        id = pw.AutoField()
        beat_at = pw.DateTimeField()

        class Meta:
            table_name = "worker_beat"


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    """Without the beat (the health report then knows of no worker)."""
    migrator.remove_model("worker_beat")
