"""012: kick-offs from two sources. ``kickoff_report`` keeps the kick-off each live source last
reported for a match (one row per match and source, with since when it says so), and
``match.unlock_at`` the latest of them while the sources disagree (null while they agree):
``match.kickoff_at`` is then the earliest, which governs the pick cut-off and the live rule,
and ``unlock_at`` when the match's sealed picks open.

Every row stored before keeps its meaning: no disagreement is known, so none has an
``unlock_at``, and the next sync reports each source's kick-off."""

import peewee as pw
from peewee_migrate import Migrator


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """The nullable column and the report table; the column kept where a database made by
    ``db init`` from this version already has it."""

    class Table(pw.Model):
        class Meta:
            legacy_table_names = False  # index names from the snake_case table names

    # (While faking, to rebuild the models' state, peewee-migrate answers no query.)
    if fake or "unlock_at" not in {column.name for column in database.get_columns("match")}:
        migrator.add_fields("match", unlock_at=pw.DateTimeField(null=True))

    @migrator.create_model
    class KickoffReport(Table):
        id = pw.AutoField()
        match = pw.ForeignKeyField(
            column_name="match_id",
            field="id",
            model=migrator.orm["match"],
            on_delete="CASCADE",
            index=False,
        )
        source = pw.CharField(max_length=32)
        kickoff_at = pw.DateTimeField()
        reported_at = pw.DateTimeField()

        class Meta:
            table_name = "kickoff_report"
            indexes = [(("match", "source"), True)]


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    """Without them: a match whose sources disagree opens at its earliest kick-off again."""
    migrator.remove_model("kickoff_report")
    migrator.remove_fields("match", "unlock_at")
