"""The accounts' tables: users, their monthly Data API usage and their exports."""

import secrets

from peewee import CharField, DateField, ForeignKeyField, IntegerField

from clock import utcnow
from enums import EXPORT_FORMATS, EXPORT_RESOURCES, USER_PLANS, USER_ROLES, USER_STATUSES
from models.base import BaseModel, choices_of
from store.fields import JSONField, UTCDateTimeField


def new_token_stamp() -> str:
    """A fresh token stamp: random, so no two accounts or passwords ever share one."""
    return secrets.token_hex(16)


class User(BaseModel):
    """An account: role (user/operator/admin), plan (free/pro), status (active/suspended)."""

    email = CharField(max_length=254, unique=True)
    password_hash = CharField(max_length=255)
    #: Carried by every access token, which is good only while it matches: renewed with the
    #: password, so a new password ends the old tokens. Null on rows made before it existed.
    token_stamp = CharField(max_length=32, null=True, default=new_token_stamp)
    role = CharField(max_length=16, default="user", index=True, choices=choices_of(USER_ROLES))
    plan = CharField(max_length=16, default="free", index=True, choices=choices_of(USER_PLANS))
    status = CharField(
        max_length=16, default="active", index=True, choices=choices_of(USER_STATUSES)
    )
    created_at = UTCDateTimeField(default=utcnow)
    updated_at = UTCDateTimeField(default=utcnow)

    @classmethod
    def by_email(cls, email):
        """The user with this (already normalised) email, or None."""
        return cls.get_or_none(cls.email == email)

    @classmethod
    def by_id(cls, user_id: int):
        """The user with this id, or None (read on every authenticated request: role, plan and
        status apply at once)."""
        return cls.one_where(id=user_id)


class UsageCounter(BaseModel):
    """A user's Data API consumption in one calendar month (UTC)."""

    user = ForeignKeyField(User, backref="usage", on_delete="CASCADE")
    period = DateField()  # the first day of the month
    requests = IntegerField(default=0)
    exports = IntegerField(default=0)
    export_rows = IntegerField(default=0)

    class Meta:
        indexes = ((("user", "period"), True),)


class Export(BaseModel):
    """A Data API export: who asked for what, in which format, and how many rows it held."""

    user = ForeignKeyField(User, null=True, backref="exports", on_delete="SET NULL")
    resource = CharField(max_length=16, choices=choices_of(EXPORT_RESOURCES))
    format = CharField(max_length=8, choices=choices_of(EXPORT_FORMATS))
    parameters = JSONField()  # the filters, as the request gave them (wire names)
    row_count = IntegerField()
    created_at = UTCDateTimeField(default=utcnow)
