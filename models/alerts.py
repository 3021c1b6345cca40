"""The alerts' tables: the subscriptions users make, and the outbox of their messages."""

from peewee import CharField, ForeignKeyField, IntegerField, TextField

from clock import utcnow
from enums import ALERT_CHANNELS, ALERT_MOMENTS, ALERT_STATUSES
from models.accounts import User
from models.base import BaseModel, choices_of
from models.football import Pick
from store.fields import JSONField, SequenceField, UTCDateTimeField


class AlertSubscription(BaseModel):
    """Picks a user wants to hear of (by league, market and rating; an empty list is every one),
    and where: an email address or a Telegram chat. Its id is never given twice: the signed
    unsubscribe link of a deleted subscription must not reach a later one."""

    id = SequenceField()
    user = ForeignKeyField(User, backref="alert_subscriptions", on_delete="CASCADE")
    channel = CharField(max_length=16, choices=choices_of(ALERT_CHANNELS))
    address = CharField(max_length=254)
    leagues = JSONField()  # league ids
    markets = JSONField()
    ratings = JSONField()
    created_at = UTCDateTimeField(default=utcnow)


class AlertMessage(BaseModel):
    """The outbox: one message about one pick for one subscription, at one moment (its
    publication, or the kick-off that unlocks it), at most once (the unique key). Tried until
    it is sent or fails for good; ``leased_until`` is set while a worker sends it."""

    id = SequenceField()
    subscription = ForeignKeyField(
        AlertSubscription, backref="messages", on_delete="CASCADE", index=False
    )
    pick = ForeignKeyField(Pick, on_delete="CASCADE", index=False)
    moment = CharField(max_length=16, choices=choices_of(ALERT_MOMENTS))
    status = CharField(max_length=16, default="pending", choices=choices_of(ALERT_STATUSES))
    attempts = IntegerField(default=0)
    next_attempt_at = UTCDateTimeField(null=True)
    leased_until = UTCDateTimeField(null=True)
    last_attempt_at = UTCDateTimeField(null=True)
    last_error = TextField(null=True)
    created_at = UTCDateTimeField(default=utcnow)
    finished_at = UTCDateTimeField(null=True)

    class Meta:
        indexes = (
            (("pick", "subscription", "moment"), True),
            (("subscription", "id"), False),
            (("status", "next_attempt_at"), False),
        )


class AlertFanout(BaseModel):
    """A pick whose messages of one moment are made: the fan-out looks at it no more for that
    moment, so a round's work follows what is new, not every subscription times every pick."""

    pick = ForeignKeyField(Pick, on_delete="CASCADE", index=False)
    moment = CharField(max_length=16, choices=choices_of(ALERT_MOMENTS))
    done_at = UTCDateTimeField(default=utcnow)

    class Meta:
        indexes = ((("pick", "moment"), True),)
