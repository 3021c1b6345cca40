"""Flask CLI commands (``flask --app app …``): the same services the API calls, for operators."""

import click
from flask.cli import AppGroup

from errors import CommandError
from models import USER_PLANS, USER_ROLES, USER_STATUSES, create_tables
from services import users


def _fail(error):
    raise click.ClickException(str(error)) from error


@click.group("db", cls=AppGroup)
def db_group():
    """The database."""


@db_group.command("init")
def db_init():
    """Create the tables and indexes that are missing (safe to run again)."""
    create_tables()
    click.echo("database ready")


@click.group("users", cls=AppGroup)
def users_group():
    """Accounts."""


@users_group.command("create")
@click.argument("email")
@click.option("--password", required=True, help="8 to 128 characters.")
@click.option("--role", type=click.Choice(USER_ROLES), default="user", show_default=True)
@click.option("--plan", type=click.Choice(USER_PLANS), default="free", show_default=True)
def users_create(email, password, role, plan):
    """Create a user, or set an existing one's password, role and plan."""
    try:
        user, created = users.create(email, password, role=role, plan=plan)
    except CommandError as error:
        _fail(error)
    click.echo(f"{'created' if created else 'updated'} {user.email} ({user.role}, {user.plan})")


@users_group.command("update")
@click.argument("email")
@click.option("--role", type=click.Choice(USER_ROLES))
@click.option("--plan", type=click.Choice(USER_PLANS))
@click.option("--status", type=click.Choice(USER_STATUSES))
def users_update(email, role, plan, status):
    """Change an existing user's role, plan or status."""
    try:
        user = users.update(email, role=role, plan=plan, status=status)
    except CommandError as error:
        _fail(error)
    click.echo(f"updated {user.email} ({user.role}, {user.plan}, {user.status})")


def register_commands(app):
    """Attach every command group to ``app``."""
    for group in (db_group, users_group):
        app.cli.add_command(group)
