"""The tables of running the service: recorded long-running jobs, the workers' beat and the
scheduler's lease, and what the live sources last answered and spent."""

from peewee import BigIntegerField, CharField, DateField, ForeignKeyField, IntegerField, TextField

from clock import utcnow
from enums import OPERATION_KINDS, OPERATION_STATUSES
from models.accounts import User
from models.base import BaseModel, choices_of
from store.fields import JSONField, UTCDateTimeField


class Operation(BaseModel):
    """A long-running job (refresh, settlement, calibration): its parameters, state and result."""

    kind = CharField(max_length=32, choices=choices_of(OPERATION_KINDS))
    status = CharField(max_length=16, default="queued", choices=choices_of(OPERATION_STATUSES))
    params = JSONField()
    result = JSONField(null=True)
    error = TextField(null=True)
    created_by = ForeignKeyField(User, null=True, on_delete="SET NULL")
    created_at = UTCDateTimeField(default=utcnow)
    started_at = UTCDateTimeField(null=True)
    finished_at = UTCDateTimeField(null=True)
    #: The schedule's instant this run was due at (null unless the scheduler started it); one
    #: run per kind and instant, so two workers' schedulers never start the same run twice.
    scheduled_for = UTCDateTimeField(null=True)

    class Meta:
        indexes = (
            (("kind", "status", "finished_at"), False),
            (("kind", "scheduled_for"), True),
        )


class WorkerBeat(BaseModel):
    """When a worker last ran the schedule (one row, id 1: the latest beat of any worker), so
    the health report can tell a worker that stopped from one with nothing to do."""

    beat_at = UTCDateTimeField()


class SchedulerLease(BaseModel):
    """Which worker process enqueues the periodic jobs (one row per lease ``name``): ``holder``
    until ``expires_at`` unless it renews; ``token`` grows by one at each change of holder (a
    fencing token), so what a deposed holder still tries to record is refused."""

    name = CharField(max_length=32, primary_key=True)
    holder = CharField(max_length=128)
    token = BigIntegerField()
    acquired_at = UTCDateTimeField()
    expires_at = UTCDateTimeField()


class SourceFetch(BaseModel):
    """What a source's URL last answered: its validators (``ETag``, ``Last-Modified``) for the
    next conditional request, and a digest of the body, so an unchanged answer stores nothing."""

    url = CharField(max_length=1024, unique=True)
    etag = CharField(max_length=255, null=True)
    last_modified = CharField(max_length=64, null=True)
    digest = CharField(max_length=64, null=True)  # SHA-256 of the last body stored
    fetched_at = UTCDateTimeField()


class SourceState(BaseModel):
    """One live source's standing: its last success and error, and the credits it spent this
    month (The Odds API charges per call; football-data.co.uk costs nothing)."""

    source = CharField(max_length=32, unique=True)
    last_success_at = UTCDateTimeField(null=True)
    last_error_at = UTCDateTimeField(null=True)
    last_error = TextField(null=True)
    period = DateField(null=True)  # the first day of the month the credits count in
    credits_spent = IntegerField(default=0)  # by this service, this month
    credits_remaining = IntegerField(null=True)  # as the source's last answer said
    credits_used = IntegerField(null=True)  # as the source's last answer said
    backoff_until = UTCDateTimeField(null=True)  # a 429's Retry-After: no call before it
