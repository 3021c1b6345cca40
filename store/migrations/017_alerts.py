"""017: pick alerts. ``alert_subscription`` holds what a user wants to hear of (leagues,
markets, ratings) and where (an email address or a Telegram chat); ``alert_message`` is their
outbox, one row per subscription, pick and moment (the pick's publication, or the kick-off that
unlocks it), unique, so a message is never made twice; ``alert_fanout`` marks the picks whose
messages of a moment are all made, so the worker's rounds look only at what is new. The first
two tables' ids are never given twice (SQLite's ``AUTOINCREMENT``): an unsubscribe link names
its subscription's id. Empty until users subscribe; nothing stored before changes."""

import peewee as pw
from peewee_migrate import Migrator

from store.fields import SequenceField


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """The three tables and their indexes."""

    class Table(pw.Model):
        class Meta:
            legacy_table_names = False  # index names from the snake_case table names

    @migrator.create_model
    class AlertSubscription(Table):
        id = SequenceField()
        user = pw.ForeignKeyField(
            column_name="user_id", field="id", model=migrator.orm["user"], on_delete="CASCADE"
        )
        channel = pw.CharField(max_length=16)
        address = pw.CharField(max_length=254)
        leagues = pw.TextField()
        markets = pw.TextField()
        ratings = pw.TextField()
        created_at = pw.DateTimeField()

        class Meta:
            table_name = "alert_subscription"

    @migrator.create_model
    class AlertMessage(Table):
        id = SequenceField()
        subscription = pw.ForeignKeyField(
            column_name="subscription_id",
            field="id",
            model=migrator.orm["alert_subscription"],
            on_delete="CASCADE",
            index=False,
        )
        pick = pw.ForeignKeyField(
            column_name="pick_id",
            field="id",
            model=migrator.orm["pick"],
            on_delete="CASCADE",
            index=False,
        )
        moment = pw.CharField(max_length=16)
        status = pw.CharField(max_length=16, default="pending")
        attempts = pw.IntegerField(default=0)
        next_attempt_at = pw.DateTimeField(null=True)
        leased_until = pw.DateTimeField(null=True)
        last_attempt_at = pw.DateTimeField(null=True)
        last_error = pw.TextField(null=True)
        created_at = pw.DateTimeField()
        finished_at = pw.DateTimeField(null=True)

        class Meta:
            table_name = "alert_message"
            indexes = [
                (("pick", "subscription", "moment"), True),
                (("subscription", "id"), False),
                (("status", "next_attempt_at"), False),
            ]

    @migrator.create_model
    class AlertFanout(Table):
        id = pw.AutoField()
        pick = pw.ForeignKeyField(
            column_name="pick_id",
            field="id",
            model=migrator.orm["pick"],
            on_delete="CASCADE",
            index=False,
        )
        moment = pw.CharField(max_length=16)
        done_at = pw.DateTimeField()

        class Meta:
            table_name = "alert_fanout"
            indexes = [(("pick", "moment"), True)]


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    """Without the alerts (their subscriptions and messages are lost)."""
    migrator.remove_model("alert_fanout")
    migrator.remove_model("alert_message")
    migrator.remove_model("alert_subscription")
