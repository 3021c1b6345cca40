"""``flask data``: fixtures, results and odds: files imported, the live sources synced, the
first day's seasons, the demo world; the team names and contradictions as sub-groups."""

import time
from pathlib import Path

import click
from flask import current_app
from peewee import DatabaseError

from cli import progress
from cli.common import Commands, fail, report_operation
from cli.contradictions import data_contradictions
from cli.teams import data_teams, echo_unmatched
from enums import DATA_SOURCES
from errors import AppError, CommandError
from services.feeds import bootstrap, imports, names
from services.operations import demo_world, jobs


@click.group("data", cls=Commands)
def data_group():
    """Fixtures, results and odds."""


data_group.add_command(data_teams)
data_group.add_command(data_contradictions)


@data_group.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
def data_import(files):
    """Import football-data.co.uk CSV files (re-importing changes nothing)."""
    total, failed = imports.ImportSummary(), []
    lines = [_data_lines(path) for path in files]  # the bar counts rows, known before reading
    done = 0
    with progress.Progress("importing", unit="rows") as bar:
        for path, count in zip(files, lines, strict=True):
            bar.update(done, sum(lines), f"importing {Path(path).name}")
            done += count
            try:
                summary = imports.import_file(path, now=current_app.extensions["clock"]())
            except (OSError, ValueError, DatabaseError) as error:  # its transaction rolled back
                failed.append(path)
                bar.echo(f"{path}: not imported: {error}", err=True)
                continue
            for row in summary.rejected:
                bar.echo(f"{row['file']}:{row['line']}: rejected: {row['reason']}", err=True)
            bar.echo(f"{path}: {_describe(summary)} (read as {summary.encoding})")
            total.add(summary)
        bar.update(done, sum(lines), "imported")
    click.echo(f"total: {_describe(total)}")
    if failed:
        raise click.ClickException(f"{len(failed)} of {len(files)} files could not be imported")


@data_group.command("sync")
@click.option("--source", type=click.Choice(DATA_SOURCES), help="One source (default: all).")
def data_sync(source):
    """Sync the live sources now: fetch, store, predict and publish, settle."""
    try:
        operation = jobs.data_sync(
            source, current_app.config, now=current_app.extensions["clock"]()
        )
    except AppError as error:
        fail(CommandError(error.detail))
    click.echo(f"operation {operation['id']} {operation['kind']}: {operation['status']}")
    if operation["status"] == "failed":
        raise click.ClickException(operation["error"])
    _kind, result = jobs.result(operation["id"], current_app.config)
    for report in result["sources"]:
        click.echo(
            f"{report['source']}: {report['calls']} calls, {report['unchanged']} unchanged, "
            f"{report['matches_new']} matches new, {report['matches_updated']} updated, "
            f"{report['odds_stored']} odds stored, {report['rejected']} rejected, "
            f"{report['credits_spent']} credits spent"
        )
        for line in report["skipped"]:
            click.echo(f"{report['source']}: skipped: {line}")
        for line in report["errors"]:
            click.echo(f"{report['source']}: error: {line}", err=True)
        for row in report["rejected_rows"]:
            click.echo(f"{row['url']}:{row['line']}: rejected: {row['reason']}", err=True)
    echo_unmatched(names.unmatched(source))
    click.echo(
        f"predicted {result['predicted']}, published {result['published']}, "
        f"closing lines {result['closing_lines']}, settled {result['settled']}"
    )


@data_group.command("bootstrap")
@click.option(
    "--seasons",
    type=click.IntRange(0, bootstrap.MAX_SEASONS),
    default=bootstrap.DEFAULT_SEASONS,
    show_default=True,
    help="Earlier seasons fetched besides the current one (the goal model's window is three).",
)
def data_bootstrap(seasons):
    """The first day: fetch the current and earlier seasons of FOOTBALL_DATA_LEAGUES from
    football-data's season files through the sync, then run the first model backfill. Safe to
    run again: the files are asked for conditionally and nothing new changes nothing."""
    try:
        with progress.Progress("fitting weeks") as bar:
            operation = jobs.data_bootstrap(
                seasons,
                current_app.config,
                now=current_app.extensions["clock"](),
                progress=bar.update,
            )
    except AppError as error:
        fail(CommandError(error.detail))
    click.echo(f"operation {operation['id']} {operation['kind']}: {operation['status']}")
    if operation["status"] == "failed":
        raise click.ClickException(operation["error"])
    _kind, result = jobs.result(operation["id"], current_app.config)
    (report,) = result["sync"]["sources"]
    click.echo(
        f"seasons {', '.join(result['seasons'])} of {', '.join(result['leagues'])}: "
        f"{result['files']} season files, {len(result['missing'])} not served; "
        f"{report['calls']} calls, {report['unchanged']} unchanged, "
        f"{report['matches_new']} matches new, {report['matches_updated']} updated, "
        f"{report['odds_stored']} odds stored, {report['rejected']} rejected"
    )
    for file in result["missing"]:
        click.echo(f"missing: {file['league']} {file['season']}: not served ({file['url']})")
    for line in report["errors"]:
        if not any(line.startswith(f"{file['url']}: ") for file in result["missing"]):
            click.echo(f"football-data: error: {line}", err=True)
    backfill = result["backfill"]
    if backfill is None:
        click.echo(f"backfill skipped: {result['backfill_skipped']}")
    else:
        click.echo(
            f"backfill: {backfill['matches']} matches, {backfill.get('predictions', 0)} "
            f"predictions, {backfill.get('picks', 0)} picks"
        )
    echo_unmatched(names.unmatched())
    click.echo(f"bootstrap took {result['seconds']:.1f} s")


def _data_lines(path) -> int:
    """The lines of a CSV file after its header (0 for a file that cannot be read)."""
    try:
        with open(path, "rb") as file:
            return max(sum(1 for line in file if line.strip()) - 1, 0)
    except OSError:
        return 0


def _describe(summary):
    return (
        f"{summary.rows_read} rows read, {summary.matches_new} matches new, "
        f"{summary.matches_updated} updated, {summary.odds_stored} odds stored, "
        f"{summary.rows_rejected} rows rejected, {summary.prices_skipped} prices skipped"
    )


@data_group.command("demo")
@click.option(
    "--rebuild",
    is_flag=True,
    help="Build the world again at this instant in an emptied database (refused when it holds "
    "imported leagues; users and the ledger go too).",
)
@click.option(
    "--if-empty",
    is_flag=True,
    help="Build it only in a database without leagues: one holding imported leagues is left as "
    "it is (what make run does).",
)
def data_demo(rebuild, if_empty):
    """Build the demo world at the app clock's instant, its last days replayed live (picks,
    settlement, ledger checkpoints), then calibrate; a database that already holds it is kept."""
    if rebuild and if_empty:
        raise click.UsageError("--rebuild and --if-empty do not go together")
    now = current_app.extensions["clock"]()
    if not rebuild and (matches := demo_world.present()):
        click.echo(f"demo world kept: {matches} matches (flask data demo --rebuild builds it anew)")
        return
    if if_empty and (others := demo_world.other_leagues()):
        click.echo(
            f"the database holds {len(others)} imported league{'' if len(others) == 1 else 's'} "
            f"({', '.join(others)}): served as it is, without the demo world"
        )
        return
    started = time.monotonic()
    try:
        with progress.Progress("replaying the demo world's last days") as bar:
            built = (demo_world.rebuild if rebuild else demo_world.build)(
                now, current_app.config, progress=bar.update
            )
    except CommandError as error:
        fail(error)
    click.echo(
        f"demo world at {now:%Y-%m-%d %H:%M} UTC: {len(built['leagues'])} leagues, "
        f"{built['matches']} matches, {built['days']} days replayed live, "
        f"{built['published']} live picks published, ledger {built['ledger_size']} entries "
        f"({time.monotonic() - started:.0f} s)"
    )
    for operation in built["operations"]:
        report_operation(operation, full=False)
