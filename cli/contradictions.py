"""``flask data contradictions``: sources disagreeing with a stored result, held for an
operator."""

import os

import click
from flask import current_app

from cli.common import Commands, fail
from enums import CONTRADICTION_STATUSES
from errors import AppError, CommandError
from services.feeds import contradictions
from services.operations import jobs


@click.group("contradictions", cls=Commands)
def data_contradictions():
    """Sources disagreeing with a stored result: each holds its match's settlement until
    resolved."""


@data_contradictions.command("list", writes=False)
@click.option(
    "--status",
    type=click.Choice([*CONTRADICTION_STATUSES, "all"]),
    default="open",
    show_default=True,
)
def data_contradictions_list(status):
    """List the contradictions, the oldest open first."""
    page, shown = 1, 0
    while True:
        found = contradictions.listing(None if status == "all" else status, page, 100)
        for row in found["items"]:
            click.echo(_contradiction(row))
        shown += len(found["items"])
        if shown >= found["total"] or not found["items"]:
            break
        page += 1
    click.echo(f"{found['total']} {'' if status == 'all' else status + ' '}contradictions")


def _contradiction(row) -> str:
    """One contradiction as a line."""
    line = (
        f"#{row['id']} {row['status']} {row['match']} ({row['slug']}) {row['field']}: "
        f"{row['stored_value']} stored, {row['source_value']} from {row['source']}, "
        f"since {row['opened_at'].isoformat()}"
    )
    if row["status"] == "open":
        return f"{line}, {row['picks_held']} picks held"
    return f"{line}; {row['chosen_value']} chosen by {row['resolved_by']}"


@data_contradictions.command("resolve")
@click.argument("contradiction_id", type=int)
@click.option("--keep", "choice", flag_value="stored", help="Keep the stored value.")
@click.option("--accept", "choice", flag_value="source", help="Take the source's value.")
@click.option(
    "--by",
    "operator",
    default=lambda: os.environ.get("USER") or "operator",
    help="Who resolves it, recorded with the choice (default: $USER).",
)
def data_contradictions_resolve(contradiction_id, choice, operator):
    """Resolve contradiction ID: keep the stored value or accept the source's (recorded as an
    operation); the match settles at the next sync or settlement."""
    if choice is None:
        raise click.UsageError("give --keep or --accept")
    try:
        resolved = jobs.resolve_contradiction(
            contradiction_id,
            choice,
            operator=operator,
            now=current_app.extensions["clock"](),
        )
    except AppError as error:
        fail(CommandError(error.detail))
    click.echo(f"operation {resolved['operation_id']} contradiction-resolve: succeeded")
    click.echo(_contradiction(resolved))
