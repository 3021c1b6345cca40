"""``flask ledger``: the signed ledger's keys, and replays of a history into it."""

import os
import sys
from datetime import UTC, timedelta

import click
from flask import current_app

from cli.common import Commands, StartDay, fail
from config import ledger_key_name
from engine.ledger import notes
from errors import CommandError
from services.feeds import replay
from services.record import log_reading


@click.group("ledger", cls=Commands)
def ledger_group():
    """The signed ledger of live picks."""


@ledger_group.command("key", writes=False)
def ledger_key():
    """Print the public key that verifies the ledger's checkpoints."""
    click.echo(log_reading.signing_key(current_app.config).verifier_key)


@ledger_group.command("new-key", needs_config=False, with_appcontext=False)
@click.argument("name", required=False)
def ledger_new_key(name):
    """Print a new signing key for LEDGER_SIGNING_KEY, named NAME (your.host/ledger; by default
    after PUBLIC_BASE_URL's host, as a key made outside production is). Needs no configuration,
    so it runs in production before any key is set. On a terminal, how to set it follows."""
    name = name or ledger_key_name(os.environ.get("PUBLIC_BASE_URL"))
    try:
        key = notes.generate(name).encode()
    except notes.NoteError as error:
        fail(CommandError(str(error)))
    click.echo(key)
    if sys.stdout.isatty():  # captured (KEY=$(flask … new-key)), the key is all there is
        click.echo(
            "Set it as LEDGER_SIGNING_KEY in the service's environment, as a secret (never in "
            "the repository); `flask --app app ledger key` then prints the public key that "
            "verifies the checkpoints it signs.",
            err=True,
        )


@ledger_group.command("replay")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--start",
    required=True,
    type=StartDay(),
    help="The first day (UTC; a time of day sets when each day runs, default 00:00).",
)
@click.option("--days", type=click.IntRange(1, 3650), default=7, show_default=True)
@click.option("--horizon-days", type=click.IntRange(1, 60), default=7, show_default=True)
@click.option("--odds-lead-days", type=click.IntRange(0, 60), default=2, show_default=True)
def ledger_replay(files, start, days, horizon_days, odds_lead_days):
    """Replay football-data FILES day by day from --start, as the live service would have run:
    import what was known each day, predict upcoming matches live (into the ledger), settle,
    sign a checkpoint. Refused (nothing written) before what the database already holds, and
    outside 1900-01-01 to 2099-12-31."""
    records = replay.read_files(files)
    try:
        replay.replay(
            records,
            start.replace(tzinfo=UTC),
            days,
            current_app.config,
            horizon=timedelta(days=horizon_days),
            odds_lead=timedelta(days=odds_lead_days),
            progress=lambda day: click.echo(
                f"{day.now:%Y-%m-%d %H:%M}: {day.matches_new} new, {day.matches_updated} "
                f"updated, {day.predicted} predicted live, {day.published} published, "
                f"{day.settled} settled, ledger {day.ledger_size} entries"
            ),
        )
    except CommandError as error:
        fail(error)
