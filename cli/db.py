"""``flask db``: the database's migration steps."""

import click
from flask import current_app

from cli.common import Commands
from models import versions
from services.market import price_cubes
from services.webhooks import encryption
from store import migrate


@click.group("db", cls=Commands)
def db_group():
    """The database."""


@db_group.command("upgrade", writes=False)
def db_upgrade():
    """Apply the pending migration steps (safe to run again, and from two places at once: the
    second waits for the first, then finds nothing to do). The release step."""
    _upgrade()


@db_group.command("init", writes=False)
def db_init():
    """Make the database, or bring it to the newest schema: the same as `db upgrade`."""
    _upgrade()


def _upgrade():
    applied = migrate.upgrade(current_app.config["DATABASE_URL"])
    for name in applied:
        click.echo(f"applied {name}")
    if migrate.FIRST_STEP in applied:
        # A database older than the first step stored quotes before summaries existed.
        price_cubes.summarise_missing(current_app.extensions["clock"]())
    # Webhook secrets stored in the clear: before step 005, or since by a process of that
    # version still serving while the release ran. A step never has the key, so it is here.
    if encrypted := encryption.encrypt_plain(current_app.config["WEBHOOK_SECRETS_KEY"]):
        click.echo(f"sealed {encrypted} webhook signing secrets stored in the clear")
    click.echo("database ready")


@db_group.command("status", writes=False)
def db_status():
    """The migration steps applied and pending; exits 1 while some are pending."""
    done = set(migrate.applied())
    for name in migrate.steps():
        click.echo(f"{'applied' if name in done else 'pending'} {name}")
    if not done.issuperset(migrate.steps()):
        raise click.ClickException("migration steps pending: run `flask db upgrade`")


@db_group.command("retag", writes=False)
def db_retag():
    """Give the database a new data version tag: for a copy (a restored backup, a staging
    database) that runs beside its original on one Redis, so neither is told of the other's
    changes. Run it before the copy's processes start."""
    tag = versions.retag()
    if tag is None:
        raise click.ClickException("the database is not migrated yet: run `flask db upgrade`")
    click.echo(f"data version tag {tag}")
