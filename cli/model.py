"""``flask model``: the prediction model's walk-forward backfill."""

import click
from flask import current_app

from cli import progress
from cli.common import Commands, report_operation
from services.operations import jobs


@click.group("model", cls=Commands)
def model_group():
    """The prediction model."""


@model_group.command("backfill")
@click.option(
    "--rebuild",
    is_flag=True,
    help="Also re-predict the backfilled history with the current model version "
    "(live predictions and picks are never rewritten).",
)
def model_backfill(rebuild):
    """Predict every match walk-forward, make the picks and settle what has finished."""
    with progress.Progress("fitting weeks") as bar:
        operation = jobs.backfill(current_app.config, rebuild=rebuild, progress=bar.update)
    report_operation(operation)
