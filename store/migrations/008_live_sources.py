"""008: the live sources: each URL's validators for conditional requests (``source_fetch``),
each source's standing and credits (``source_state``), the names each source gives the stored
teams (``team_alias``) and every pre-match price seen with when (``price_seen``)."""

import peewee as pw
from peewee_migrate import Migrator


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """The four tables of the live sources."""

    class Table(pw.Model):
        class Meta:
            legacy_table_names = False  # index names from the snake_case table names

    @migrator.create_model
    class SourceFetch(Table):
        id = pw.AutoField()
        url = pw.CharField(max_length=1024, unique=True)
        etag = pw.CharField(max_length=255, null=True)
        last_modified = pw.CharField(max_length=64, null=True)
        digest = pw.CharField(max_length=64, null=True)
        fetched_at = pw.DateTimeField()

        class Meta:
            table_name = "source_fetch"

    @migrator.create_model
    class SourceState(Table):
        id = pw.AutoField()
        source = pw.CharField(max_length=32, unique=True)
        last_success_at = pw.DateTimeField(null=True)
        last_error_at = pw.DateTimeField(null=True)
        last_error = pw.TextField(null=True)
        period = pw.DateField(null=True)
        credits_spent = pw.IntegerField(default=0)
        credits_remaining = pw.IntegerField(null=True)
        credits_used = pw.IntegerField(null=True)
        backoff_until = pw.DateTimeField(null=True)

        class Meta:
            table_name = "source_state"

    @migrator.create_model
    class TeamAlias(Table):
        id = pw.AutoField()
        source = pw.CharField(max_length=32)
        country = pw.CharField(max_length=64)
        name = pw.CharField(max_length=100)
        team = pw.ForeignKeyField(
            column_name="team_id",
            field="id",
            model=migrator.orm["team"],
            null=True,
            on_delete="CASCADE",
            index=False,
        )
        first_seen_at = pw.DateTimeField()

        class Meta:
            table_name = "team_alias"
            indexes = [(("source", "country", "name"), True)]

    @migrator.create_model
    class PriceSeen(Table):
        id = pw.AutoField()
        match = pw.ForeignKeyField(
            column_name="match_id",
            field="id",
            model=migrator.orm["match"],
            on_delete="CASCADE",
            index=False,
        )
        bookmaker = pw.CharField(max_length=32)
        market = pw.CharField(max_length=8)
        selection = pw.CharField(max_length=8)
        price = pw.DoubleField()
        source = pw.CharField(max_length=32)
        first_seen_at = pw.DateTimeField()
        last_seen_at = pw.DateTimeField()

        class Meta:
            table_name = "price_seen"
            indexes = [(("match", "market", "bookmaker", "selection", "first_seen_at"), True)]


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    """Without the live sources' tables."""
    for table in ("price_seen", "team_alias", "source_state", "source_fetch"):
        migrator.remove_model(table)
