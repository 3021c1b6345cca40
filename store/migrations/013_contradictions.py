"""013: contradictions. A source that disagrees with what is stored of a match (its score) is a
``contradiction`` row: both values and the source, open until an operator resolves it (who, when
and the value chosen), at most one open per match and field (a partial unique index)."""

import peewee as pw
from peewee_migrate import Migrator


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """The contradiction table and its index of open rows."""

    class Table(pw.Model):
        class Meta:
            legacy_table_names = False  # index names from the snake_case table names

    @migrator.create_model
    class Contradiction(Table):
        id = pw.AutoField()
        match = pw.ForeignKeyField(
            column_name="match_id",
            field="id",
            model=migrator.orm["match"],
            on_delete="CASCADE",
            index=False,
        )
        field = pw.CharField(max_length=16)
        stored_value = pw.CharField(max_length=64)
        source_value = pw.CharField(max_length=64)
        source = pw.CharField(max_length=32)
        status = pw.CharField(max_length=16, default="open")
        opened_at = pw.DateTimeField()
        updated_at = pw.DateTimeField()
        resolved_at = pw.DateTimeField(null=True)
        resolved_by = pw.CharField(max_length=128, null=True)
        chosen_value = pw.CharField(max_length=64, null=True)

        class Meta:
            table_name = "contradiction"

    Contradiction.add_index(
        Contradiction.index(Contradiction.match, Contradiction.field, unique=True).where(
            Contradiction.status == "open"
        )
    )


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    """Without the contradictions."""
    migrator.remove_model("contradiction")
