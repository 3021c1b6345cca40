"""Flask CLI commands (``flask --app app …``): the same services the API calls, for operators."""

import json
import sys

import click
from flask.cli import AppGroup
from peewee import DatabaseError

from enums import CALIBRATION_DAYS, SETTLEMENT_DAYS, USER_PLANS, USER_ROLES, USER_STATUSES
from errors import AppError, CommandError
from models import create_tables
from schemas.ops import OperationResultSchema
from services import demo, imports, operations, users


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


@click.group("data", cls=AppGroup)
def data_group():
    """Fixtures, results and odds."""


@data_group.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
def data_import(files):
    """Import football-data.co.uk CSV files (re-importing changes nothing)."""
    total, failed = imports.ImportSummary(), []
    for path in files:
        try:
            summary = imports.import_file(path)
        except (OSError, ValueError, DatabaseError) as error:  # the file's transaction rolled back
            failed.append(path)
            click.echo(f"{path}: not imported: {error}", err=True)
            continue
        for row in summary.rejected:
            click.echo(f"{row['file']}:{row['line']}: rejected: {row['reason']}", err=True)
        click.echo(f"{path}: {_describe(summary)}")
        total.add(summary)
    click.echo(f"total: {_describe(total)}")
    if failed:
        raise click.ClickException(f"{len(failed)} of {len(files)} files could not be imported")


def _describe(summary):
    return (
        f"{summary.rows_read} rows read, {summary.matches_new} matches new, "
        f"{summary.matches_updated} updated, {summary.odds_stored} odds stored, "
        f"{summary.rows_rejected} rows rejected, {summary.prices_skipped} prices skipped"
    )


@data_group.command("demo")
def data_demo():
    """Load the deterministic demo world, then backfill, settle and calibrate over it."""
    loaded = demo.load()
    click.echo(
        f"demo world: {len(loaded['leagues'])} leagues, {loaded['matches']} matches, "
        f"{loaded['odds']} odds"
    )
    for work in (
        operations.backfill,
        lambda: operations.settle(SETTLEMENT_DAYS[1]),
        lambda: operations.calibrate(CALIBRATION_DAYS[1]),
    ):
        _report(work(), full=False)


@click.group("model", cls=AppGroup)
def model_group():
    """The prediction model."""


@model_group.command("backfill")
def model_backfill():
    """Predict every match walk-forward, make the picks and settle what has finished."""
    _report(operations.backfill())


@click.group("ops", cls=AppGroup)
def ops_group():
    """Operations, for a scheduler: the same work as the Operations API."""


@ops_group.command("settle")
@click.option("--last-days", type=click.IntRange(*SETTLEMENT_DAYS), default=7, show_default=True)
def ops_settle(last_days):
    """Settle pending picks of matches from the last N days."""
    _report(operations.settle(last_days))


@ops_group.command("calibrate")
@click.option(
    "--window-days", type=click.IntRange(*CALIBRATION_DAYS), default=90, show_default=True
)
def ops_calibrate(window_days):
    """Score the published probabilities of the last N days against the closing odds."""
    _report(operations.calibrate(window_days))


@ops_group.command("refresh")
@click.argument("match_id", type=int)
def ops_refresh(match_id):
    """Refresh one open match's intelligence, prediction and pick."""
    try:
        operation = operations.refresh(match_id)
    except AppError as error:
        _fail(CommandError(error.detail))
    _report(operation)


def _report(operation: dict, full=True):
    """Print an operation's outcome (and its whole result when ``full``); a failure fails."""
    click.echo(f"operation {operation['id']} {operation['kind']}: {operation['status']}")
    if operation["status"] == "failed":
        raise click.ClickException(operation["error"])
    if full:
        json.dump(
            OperationResultSchema().dump(operations.result(operation["id"])), sys.stdout, indent=2
        )
        click.echo()


def register_commands(app):
    """Attach every command group to ``app``."""
    for group in (db_group, users_group, data_group, model_group, ops_group):
        app.cli.add_command(group)
