"""001: the schema of the last release before migrations (commit 4826b13), as its
``flask db init`` made it: the tables with their columns and indexes.

Its tables are created only where missing, so a database made by that release's ``db init``
(which has no migration history) is adopted as it is.
"""

import peewee as pw
from peewee_migrate import Migrator

from store.migrate import add_missing_columns


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """The tables, columns and indexes of the release, and its one data version row."""

    class Table(pw.Model):
        class Meta:
            legacy_table_names = False  # index names from the snake_case table names

    @migrator.create_model
    class DataVersion(Table):
        id = pw.AutoField()
        value = pw.BigIntegerField(default=0)

        class Meta:
            table_name = "data_version"

    @migrator.create_model
    class User(Table):
        id = pw.AutoField()
        email = pw.CharField(max_length=254, unique=True)
        password_hash = pw.CharField(max_length=255)
        token_stamp = pw.CharField(max_length=32, null=True)
        role = pw.CharField(default="user", index=True, max_length=16)
        plan = pw.CharField(default="free", index=True, max_length=16)
        status = pw.CharField(default="active", index=True, max_length=16)
        created_at = pw.DateTimeField()
        updated_at = pw.DateTimeField()

        class Meta:
            table_name = "user"

    @migrator.create_model
    class Export(Table):
        id = pw.AutoField()
        user = pw.ForeignKeyField(
            column_name="user_id",
            field="id",
            model=migrator.orm["user"],
            null=True,
            on_delete="SET NULL",
        )
        resource = pw.CharField(max_length=16)
        format = pw.CharField(max_length=8)
        parameters = pw.TextField()
        row_count = pw.IntegerField()
        created_at = pw.DateTimeField()

        class Meta:
            table_name = "export"

    @migrator.create_model
    class League(Table):
        id = pw.AutoField()
        code = pw.CharField(max_length=16, unique=True)
        name = pw.CharField(max_length=100)
        country = pw.CharField(max_length=64)
        competition_type = pw.CharField(index=True, max_length=16)

        class Meta:
            table_name = "league"

    @migrator.create_model
    class Team(Table):
        id = pw.AutoField()
        name = pw.CharField(max_length=100)
        country = pw.CharField(max_length=64)

        class Meta:
            table_name = "team"
            indexes = [(("name", "country"), True)]

    @migrator.create_model
    class Match(Table):
        id = pw.AutoField()
        league = pw.ForeignKeyField(
            column_name="league_id",
            field="id",
            model=migrator.orm["league"],
            on_delete="CASCADE",
            index=False,
        )
        season = pw.CharField(max_length=16)
        home_team = pw.ForeignKeyField(
            column_name="home_team_id",
            field="id",
            model=migrator.orm["team"],
            on_delete="CASCADE",
            index=False,
        )
        away_team = pw.ForeignKeyField(
            column_name="away_team_id",
            field="id",
            model=migrator.orm["team"],
            on_delete="CASCADE",
            index=False,
        )
        kickoff_at = pw.DateTimeField(index=True)
        status = pw.CharField(default="scheduled", max_length=16)
        home_goals = pw.IntegerField(null=True)
        away_goals = pw.IntegerField(null=True)
        ht_home_goals = pw.IntegerField(null=True)
        ht_away_goals = pw.IntegerField(null=True)
        slug = pw.CharField(max_length=255, unique=True)
        updated_at = pw.DateTimeField()

        class Meta:
            table_name = "match"
            indexes = [
                (("league", "season", "home_team", "away_team"), False),
                (("league", "kickoff_at"), False),
                (("home_team", "kickoff_at"), False),
                (("away_team", "kickoff_at"), False),
                (("status", "kickoff_at"), False),
            ]

    @migrator.create_model
    class MatchIntelligence(Table):
        id = pw.AutoField()
        match = pw.ForeignKeyField(
            column_name="match_id",
            field="id",
            model=migrator.orm["match"],
            on_delete="CASCADE",
            unique=True,
        )
        payload = pw.TextField()
        updated_at = pw.DateTimeField()

        class Meta:
            table_name = "match_intelligence"

    @migrator.create_model
    class OddsQuote(Table):
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
        is_closing = pw.BooleanField(default=False)

        class Meta:
            table_name = "odds_quote"
            indexes = [(("match", "market", "is_closing", "bookmaker", "selection"), True)]

    @migrator.create_model
    class OddsSummary(Table):
        id = pw.AutoField()
        match = pw.ForeignKeyField(
            column_name="match_id",
            field="id",
            model=migrator.orm["match"],
            on_delete="CASCADE",
            index=False,
        )
        market = pw.CharField(max_length=8)
        selection = pw.CharField(max_length=8)
        best_price = pw.DoubleField(null=True)
        best_bookmaker = pw.CharField(max_length=32, null=True)
        sharp_price = pw.DoubleField(null=True)
        sharp_bookmaker = pw.CharField(max_length=32, null=True)
        closing_price = pw.DoubleField(null=True)
        closing_bookmaker = pw.CharField(max_length=32, null=True)
        bookmakers = pw.IntegerField(default=0)

        class Meta:
            table_name = "odds_summary"
            indexes = [(("match", "market", "selection"), True)]

    @migrator.create_model
    class Operation(Table):
        id = pw.AutoField()
        kind = pw.CharField(max_length=32)
        status = pw.CharField(default="queued", max_length=16)
        params = pw.TextField()
        result = pw.TextField(null=True)
        error = pw.TextField(null=True)
        created_by = pw.ForeignKeyField(
            column_name="created_by_id",
            field="id",
            model=migrator.orm["user"],
            null=True,
            on_delete="SET NULL",
        )
        created_at = pw.DateTimeField()
        started_at = pw.DateTimeField(null=True)
        finished_at = pw.DateTimeField(null=True)

        class Meta:
            table_name = "operation"
            indexes = [(("kind", "status", "finished_at"), False)]

    @migrator.create_model
    class Pick(Table):
        id = pw.AutoField()
        match = pw.ForeignKeyField(
            column_name="match_id",
            field="id",
            model=migrator.orm["match"],
            on_delete="CASCADE",
            index=False,
        )
        market = pw.CharField(max_length=8)
        selection = pw.CharField(max_length=8)
        bookmaker = pw.CharField(max_length=32)
        odds = pw.DoubleField()
        probability = pw.DoubleField()
        edge = pw.DoubleField()
        rating = pw.CharField(max_length=1)
        data_quality = pw.DoubleField()
        stake = pw.DoubleField(default=1.0)
        is_live = pw.BooleanField(default=False)
        status = pw.CharField(default="pending", index=True, max_length=8)
        profit = pw.DoubleField(null=True)
        closing_odds = pw.DoubleField(null=True)
        closing_bookmaker = pw.CharField(max_length=32, null=True)
        closing_probability = pw.DoubleField(null=True)
        clv = pw.DoubleField(null=True)
        created_at = pw.DateTimeField()
        settled_at = pw.DateTimeField(null=True)

        class Meta:
            table_name = "pick"
            indexes = [(("match", "market"), True)]

    @migrator.create_model
    class Prediction(Table):
        id = pw.AutoField()
        match = pw.ForeignKeyField(
            column_name="match_id",
            field="id",
            model=migrator.orm["match"],
            on_delete="CASCADE",
            index=False,
        )
        market = pw.CharField(max_length=8)
        probabilities = pw.TextField()
        model_probabilities = pw.TextField()
        market_probabilities = pw.TextField(null=True)
        pool_weight = pw.DoubleField()
        source = pw.CharField(max_length=16, null=True)
        model_name = pw.CharField(max_length=64)
        model_version = pw.CharField(max_length=32)
        made_at = pw.DateTimeField()
        fitted_at = pw.DateTimeField()
        data_quality = pw.DoubleField()
        data_quality_parts = pw.TextField()
        is_live = pw.BooleanField(default=False)

        class Meta:
            table_name = "prediction"
            indexes = [(("match", "market"), True)]

    @migrator.create_model
    class UsageCounter(Table):
        id = pw.AutoField()
        user = pw.ForeignKeyField(
            column_name="user_id", field="id", model=migrator.orm["user"], on_delete="CASCADE"
        )
        period = pw.DateField()
        requests = pw.IntegerField(default=0)
        exports = pw.IntegerField(default=0)
        export_rows = pw.IntegerField(default=0)

        class Meta:
            table_name = "usage_counter"
            indexes = [(("user", "period"), True)]

    # A database made by `db init` before this release lacks some of its columns (all nullable).
    # It also lacks the odds summaries of the matches it stored before summaries existed: they
    # are the service's own computation, so `db upgrade` fills them once this step has run
    # (a migration imports nothing above the store).
    migrator.run(add_missing_columns, database, list(migrator.orm))
    migrator.run(DataVersion.insert(id=1, value=0).on_conflict_ignore().execute)


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    """Drop every table of the release."""
    migrator.remove_model("usage_counter")

    migrator.remove_model("prediction")

    migrator.remove_model("pick")

    migrator.remove_model("operation")

    migrator.remove_model("odds_summary")

    migrator.remove_model("odds_quote")

    migrator.remove_model("match_intelligence")

    migrator.remove_model("match")

    migrator.remove_model("team")

    migrator.remove_model("league")

    migrator.remove_model("export")

    migrator.remove_model("user")

    migrator.remove_model("data_version")
