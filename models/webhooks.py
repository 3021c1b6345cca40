"""The webhooks' tables: the endpoints users manage, the event outbox and the deliveries."""

from peewee import BooleanField, CharField, ForeignKeyField, IntegerField, TextField

from clock import utcnow
from enums import DELIVERY_STATUSES, EVENT_AUDIENCES, EVENT_TYPES
from models.accounts import User
from models.base import BaseModel, choices_of
from store.fields import JSONField, SequenceField, UTCDateTimeField


class WebhookEndpoint(BaseModel):
    """Where a Pro user or admin wants events delivered, and the secret that signs them.

    During a rotation the previous secret signs too, until ``previous_secret_expires_at``. Both
    are stored encrypted under ``WEBHOOK_SECRETS_KEY`` (a Fernet token of 164 characters for a
    ``whsec_`` secret), never as given.
    """

    id = SequenceField()
    user = ForeignKeyField(User, backref="webhook_endpoints", on_delete="CASCADE")
    url = CharField(max_length=2048)
    description = CharField(max_length=500, default="")
    events = JSONField()  # the event types it subscribes to
    secret = CharField(max_length=255)
    previous_secret = CharField(max_length=255, null=True)
    previous_secret_expires_at = UTCDateTimeField(null=True)
    enabled = BooleanField(default=True)
    disabled_reason = TextField(null=True)
    created_at = UTCDateTimeField(default=utcnow)
    updated_at = UTCDateTimeField(default=utcnow)


class Event(BaseModel):
    """The outbox: one row per thing that happened, written in the transaction that made it
    happen. The worker fans each out to the endpoints that subscribe (``dispatched_at``)."""

    id = SequenceField()
    type = CharField(max_length=32, choices=choices_of(EVENT_TYPES))
    occurred_at = UTCDateTimeField(default=utcnow)
    #: The payload's ``data``, snake_case; null for events written in bulk, one row for many
    #: causes: their ``subjects`` (the ids of the picks a settlement settled), whose data is read
    #: when each is sent.
    data = JSONField(null=True)
    subjects = JSONField(null=True)
    audience = CharField(max_length=16, default="subscribers", choices=choices_of(EVENT_AUDIENCES))
    #: An event for one endpoint only (an endpoint's test ping); null for everyone's events.
    endpoint = ForeignKeyField(WebhookEndpoint, null=True, on_delete="CASCADE", index=False)
    dispatched_at = UTCDateTimeField(null=True)

    class Meta:
        indexes = ((("dispatched_at", "id"), False),)


class Delivery(BaseModel):
    """One event for one endpoint: its attempts, the last answer, and when it is tried next.

    ``leased_until`` is set while a worker sends it: a worker that dies mid-delivery leaves a
    lease that runs out, and the delivery is sent again (at least once, never lost).
    """

    id = SequenceField()
    event = ForeignKeyField(Event, on_delete="CASCADE")
    subject = IntegerField(null=True)  # which of the event's subjects (bulk events)
    endpoint = ForeignKeyField(
        WebhookEndpoint, backref="deliveries", on_delete="CASCADE", index=False
    )
    status = CharField(max_length=16, default="pending", choices=choices_of(DELIVERY_STATUSES))
    attempts = IntegerField(default=0)
    next_attempt_at = UTCDateTimeField(null=True)
    leased_until = UTCDateTimeField(null=True)
    last_attempt_at = UTCDateTimeField(null=True)
    last_status_code = IntegerField(null=True)
    last_error = TextField(null=True)
    created_at = UTCDateTimeField(default=utcnow)
    finished_at = UTCDateTimeField(null=True)

    class Meta:
        indexes = (
            (("status", "next_attempt_at"), False),
            (("endpoint", "id"), False),
        )
