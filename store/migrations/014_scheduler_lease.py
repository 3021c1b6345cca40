"""014: the scheduler's lease (``scheduler_lease``): which worker process enqueues the periodic
jobs, until when, and the fencing token that refuses what a deposed one still tries to record.
Empty until a worker starts; nothing stored before changes."""

import peewee as pw
from peewee_migrate import Migrator


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """The table of leases, one row per lease name."""

    @migrator.create_model
    class SchedulerLease(pw.Model):
        name = pw.CharField(max_length=32, primary_key=True)
        holder = pw.CharField(max_length=128)
        token = pw.BigIntegerField()
        acquired_at = pw.DateTimeField()
        expires_at = pw.DateTimeField()

        class Meta:
            table_name = "scheduler_lease"


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    """Without the lease (every worker then enqueues the periodic jobs, as before)."""
    migrator.remove_model("scheduler_lease")
