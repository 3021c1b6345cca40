"""``flask ops``: the operations a scheduler runs, the same work as the Operations API."""

import click
from flask import current_app

from cli.common import Commands, fail, report_operation
from enums import CALIBRATION_DAYS, SETTLEMENT_DAYS
from errors import AppError, CommandError
from services.operations import jobs


@click.group("ops", cls=Commands)
def ops_group():
    """Operations, for a scheduler: the same work as the Operations API."""


@ops_group.command("settle")
@click.option("--last-days", type=click.IntRange(*SETTLEMENT_DAYS), default=7, show_default=True)
def ops_settle(last_days):
    """Settle pending picks of matches from the last N days."""
    report_operation(jobs.settle(last_days, current_app.config))


@ops_group.command("calibrate")
@click.option(
    "--window-days", type=click.IntRange(*CALIBRATION_DAYS), default=90, show_default=True
)
def ops_calibrate(window_days):
    """Score the published probabilities of the last N days against the closing odds."""
    report_operation(jobs.calibrate(window_days, current_app.config))


@ops_group.command("refresh")
@click.argument("match_id", type=int)
def ops_refresh(match_id):
    """Refresh one open match's intelligence, prediction and pick."""
    try:
        operation = jobs.refresh(match_id, current_app.config)
    except AppError as error:
        fail(CommandError(error.detail))
    report_operation(operation)
