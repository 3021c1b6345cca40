"""``flask data teams``: the team names sources give, and which stored team each means."""

import click
from flask import current_app

from cli.common import TEXT, Commands, fail
from enums import DATA_SOURCES
from errors import AppError, CommandError
from services.feeds import names, teams


def echo_unmatched(found) -> None:
    """Print each name no stored team maps, with the command that maps it."""
    for name in found:
        click.echo(
            f"unmatched: {name['source']} {name['country']} {name['name']!r} "
            "(flask data teams map SOURCE COUNTRY NAME --team ID | --new)"
        )


@click.group("teams", cls=Commands, invoke_without_command=True)
@click.option("--source", type=click.Choice(DATA_SOURCES))
@click.pass_context
def data_teams(ctx, source):
    """List the team names a source gave that map to no stored team."""
    if ctx.invoked_subcommand is None:
        found = names.unmatched(source)
        echo_unmatched(found)
        click.echo(f"{len(found)} unmatched")


@data_teams.command("list", writes=False)
@click.option("--country", type=TEXT, help="Only the teams and names of this country.")
@click.option("--unmapped", is_flag=True, help="Only the names no team maps yet.")
def data_teams_list(country, unmapped):
    """List the stored teams with the ids `map --team` takes and each source's names of them,
    then the names no team maps yet."""
    page, shown = 1, 0
    while not unmapped:
        found = teams.listing(country=country, page=page, page_size=100)
        for team in found["items"]:
            aliases = "; ".join(f"{alias['source']}: {alias['name']}" for alias in team["aliases"])
            click.echo(f"{team['id']:>6}  {team['name']:<28} {team['country']:<16} {aliases}")
        shown += len(found["items"])
        if shown >= found["total"] or not found["items"]:
            click.echo(f"{found['total']} team{'' if found['total'] == 1 else 's'}")
            break
        page += 1
    found = names.unmatched(country=country)
    echo_unmatched(found)
    click.echo(f"{len(found)} unmatched")


@data_teams.command("map")
@click.argument("source", type=click.Choice(DATA_SOURCES))
@click.argument("country", type=TEXT)
@click.argument("name", type=TEXT)
@click.option("--team", "team_id", type=int, help="The stored team's id.")
@click.option("--new", is_flag=True, help="A team the service does not know yet.")
def data_teams_map(source, country, name, team_id, new):
    """Map a source's name of a team (in COUNTRY) to a stored team, or to a new one."""
    if (team_id is None) == (not new):
        raise click.UsageError("give --team ID or --new")
    try:
        mapped = names.map_name(
            source, country, name, team_id, new, current_app.extensions["clock"]()
        )
    except (AppError, CommandError) as error:
        fail(CommandError(getattr(error, "detail", str(error))))
    click.echo(f"{source} {country} {name!r} → team {mapped['team_id']} {mapped['team']!r}")
