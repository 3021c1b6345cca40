"""Flask CLI commands (``flask --app app …``): the same services the API calls, for operators."""

import functools
import json
import logging
import os
import re
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import click
from flask import current_app
from flask.cli import AppGroup, ScriptInfo
from peewee import DatabaseError

from config import ledger_key_name
from engine.ledger import notes
from enums import (
    CALIBRATION_DAYS,
    CONTRADICTION_STATUSES,
    DATA_SOURCES,
    SETTLEMENT_DAYS,
    USER_PLANS,
    USER_ROLES,
    USER_STATUSES,
)
from errors import AppError, CommandError
from schemas.auth import RegisterSchema
from schemas.ops import OperationResultSchema
from services.accounts import users
from services.feeds import bootstrap, contradictions, demo_world, imports, names, replay, teams
from services.forecasting import price_cubes
from services.operations import jobs
from services.record import signed_log
from services.webhooks import sealing
from store import migrate


def _fail(error):
    raise click.ClickException(str(error)) from error


#: Where an app whose configuration was refused keeps the refusal (see ``unconfigured``).
REFUSED = "refused_configuration"


def unconfigured(app, error):
    """What ``create_app`` answers when the configuration is refused (``error``, a
    ``config.ConfigError``).

    The ``flask`` command loads the app to find its commands, and ``flask ledger new-key`` makes
    the very key production may lack: so while it looks a command up it gets ``app``, bare, with
    the command groups, in which the commands that need no configuration run and every other one
    says ``error`` in one line, exit status 1, never a traceback. A command of Flask's own
    (``run``, ``shell``, ``routes``) loading the app gets that same line; anywhere else
    ``error`` is raised as it is.
    """
    context = click.get_current_context(silent=True)
    if context is None or context.find_object(ScriptInfo) is None:
        raise error
    if context.parent is not None:
        raise click.ClickException(str(error)) from None
    app.extensions[REFUSED] = error
    app.cli = RefusedCommands(error)
    register_commands(app)
    return app


class Commands(AppGroup):
    """A group of the app's commands. Each needs the app's configuration unless declared with
    ``needs_config=False``: on an app whose configuration was refused (``unconfigured``) it says
    the refusal instead of running."""

    def command(self, *args, needs_config=True, **kwargs):
        register = super().command(*args, **kwargs)
        return lambda callback: register(_configured(callback) if needs_config else callback)


def _configured(callback):
    """``callback``, run only on an app whose configuration was accepted."""

    @functools.wraps(callback)
    def run(*args, **kwargs):
        if (refused := current_app.extensions.get(REFUSED)) is not None:
            raise click.ClickException(str(refused))
        return callback(*args, **kwargs)

    return run


class RefusedCommands(AppGroup):
    """The commands of an app whose configuration was refused: its own groups (``Commands``);
    any other name (one an extension adds once configured, such as ``openapi``, or a typo) is
    answered with the refusal, the reason it cannot be looked up."""

    def __init__(self, error):
        super().__init__()
        self.error = error

    def get_command(self, ctx, name):
        command = super().get_command(ctx, name)
        if command is None:
            raise click.ClickException(str(self.error))
        return command


class Text(click.ParamType):
    """Text as typed. An argument that is not valid UTF-8 (Python keeps its bytes as lone
    surrogates, which no database stores) is refused by name, before anything reads it."""

    name = "text"

    def convert(self, value, param, ctx):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            self.fail(f"{value!r} is not valid UTF-8 text.", param, ctx)
        return value


TEXT = Text()


class Progress:
    """A one-line progress bar with counts and elapsed time on ``stream`` when it is a terminal.

    Elsewhere (logs, CI, pipes) it writes nothing: the commands' plain summary lines say what
    happened. While the bar is drawn, every log handler first erases it and draws it again after
    its record, so a log line never lands on the bar's line.
    """

    WIDTH = 30

    def __init__(self, label: str, stream=None, unit: str = ""):
        self.stream = stream or sys.stderr
        self.shown = self.stream.isatty()
        self.label = label
        self.unit = unit
        self.started = time.monotonic()
        self.last = ""
        self.wrapped = {}
        if self.shown:
            self._wrap_log_handlers()

    def update(self, done: int, total: int, label: str | None = None) -> None:
        """Redraw the bar at ``done`` of ``total``."""
        if label is not None:
            self.label = label
        if not self.shown:
            return
        filled = self.WIDTH * min(done, total) // max(total, 1)
        bar = "#" * filled + "." * (self.WIDTH - filled)
        elapsed = time.monotonic() - self.started
        unit = f" {self.unit}" if self.unit else ""
        self.clear()
        self.last = f"{self.label} [{bar}] {done}/{total}{unit} {elapsed:6.1f} s"
        self.redraw()

    def clear(self) -> None:
        """Erase the bar's line (the cursor back at its start)."""
        if self.shown and self.last:
            self.stream.write("\r" + " " * len(self.last) + "\r")
            self.stream.flush()

    def redraw(self) -> None:
        """Draw the bar again where the cursor is."""
        if self.shown and self.last:
            self.stream.write("\r" + self.last)
            self.stream.flush()

    def echo(self, message: str, err: bool = False) -> None:
        """Print a line above the bar, then redraw it."""
        self.clear()
        click.echo(message, err=err)
        self.redraw()

    def close(self) -> None:
        """End the bar's line and give the log handlers back."""
        for handler, own in self.wrapped.items():
            if own is None:
                del handler.emit  # the class's method again
            else:
                handler.emit = own
        self.wrapped = {}
        if self.shown and self.last:
            self.stream.write("\n")
            self.stream.flush()
            self.last = ""

    def _wrap_log_handlers(self) -> None:
        handlers = set(logging.getLogger().handlers)
        for logger in logging.Logger.manager.loggerDict.values():
            if isinstance(logger, logging.Logger):
                handlers.update(logger.handlers)
        if logging.lastResort is not None:
            handlers.add(logging.lastResort)
        for handler in handlers:
            self.wrapped[handler] = vars(handler).get("emit")

            def emit(record, emit=handler.emit):
                self.clear()
                emit(record)
                self.redraw()

            handler.emit = emit


class StartDay(click.ParamType):
    """``YYYY-MM-DD`` or ``YYYY-MM-DDTHH:MM:SS`` (naive, UTC); a day that does not exist
    (2026-02-30) is said to be no real date rather than a wrong format."""

    name = "date"
    FORMATS = ("%Y-%m-%dT%H:%M:%S", "%Y-%m-%d")

    def convert(self, value, param, ctx):
        if isinstance(value, datetime):
            return value
        for form in self.FORMATS:
            try:
                return datetime.strptime(value, form)
            except ValueError:
                continue
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2})?", value):
            return self.fail(f"{value!r} is not a real date.", param, ctx)
        return self.fail(f"{value!r} is not YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS.", param, ctx)


@click.group("db", cls=Commands)
def db_group():
    """The database."""


@db_group.command("upgrade")
def db_upgrade():
    """Apply the pending migration steps (safe to run again, and from two places at once: the
    second waits for the first, then finds nothing to do). The release step."""
    _upgrade()


@db_group.command("init")
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
    if sealed := sealing.seal_plain(current_app.config["WEBHOOK_SECRETS_KEY"]):
        click.echo(f"sealed {sealed} webhook signing secrets stored in the clear")
    click.echo("database ready")


@db_group.command("status")
def db_status():
    """The migration steps applied and pending; exits 1 while some are pending."""
    done = set(migrate.applied())
    for name in migrate.steps():
        click.echo(f"{'applied' if name in done else 'pending'} {name}")
    if not done.issuperset(migrate.steps()):
        raise click.ClickException("migration steps pending: run `flask db upgrade`")


@click.group("users", cls=Commands)
def users_group():
    """Accounts."""


@users_group.command("create")
@click.argument("email", type=TEXT)
@click.option(
    "--password", type=TEXT, help="8 to 128 characters; asked for (hidden, twice) when left out."
)
@click.option(
    "--role",
    type=click.Choice(USER_ROLES),
    help="Default: user for a new account; an existing one keeps its own.",
)
@click.option(
    "--plan",
    type=click.Choice(USER_PLANS),
    help="Default: free for a new account; an existing one keeps its own.",
)
def users_create(email, password, role, plan):
    """Create a user, or set an existing one's password (and, when given, its role and plan).
    Without --password the password is asked for on the terminal, hidden and confirmed, so it
    stays out of the shell's history and the process list. A new account's email must be one
    POST /api/auth/register would take (checked before the password is asked for)."""
    if not users.exists(email):  # an account stored before the check still gets a password
        refused = RegisterSchema(only=("email",)).validate({"email": email})
        if refused:
            reasons = (f"{name}: {' '.join(why)}" for name, why in refused.items())
            _fail(CommandError("; ".join(reasons)))
    if password is None:
        password = click.prompt("Password", type=TEXT, hide_input=True, confirmation_prompt=True)
    try:
        user, created = users.create(
            email, password, current_app.extensions["password_hasher"], role=role, plan=plan
        )
    except CommandError as error:
        _fail(error)
    click.echo(f"{'created' if created else 'updated'} {user.email} ({user.role}, {user.plan})")


@users_group.command("list")
@click.option("--search", type=TEXT, help="Part of the email.")
@click.option("--plan", type=click.Choice(USER_PLANS))
@click.option("--status", type=click.Choice(USER_STATUSES))
def users_list(search, plan, status):
    """List users, newest first: id, email, role, plan, status and when each was created."""
    page, shown = 1, 0
    while True:
        found = users.search(search=search, plan=plan, status=status, page=page, page_size=100)
        for user in found["items"]:
            click.echo(
                f"{user.id:>6}  {user.email:<40} {user.role:<8} {user.plan:<4} {user.status:<9} "
                f"{user.created_at:%Y-%m-%d}"
            )
        shown += len(found["items"])
        if shown >= found["total"] or not found["items"]:
            break
        page += 1
    click.echo(f"{found['total']} user{'' if found['total'] == 1 else 's'}")


@users_group.command("update")
@click.argument("email", type=TEXT)
@click.option("--role", type=click.Choice(USER_ROLES))
@click.option("--plan", type=click.Choice(USER_PLANS))
@click.option("--status", type=click.Choice(USER_STATUSES))
def users_update(email, role, plan, status):
    """Change an existing user's role, plan or status."""
    try:
        user = users.update(email, role=role, plan=plan, status=status)
    except CommandError as error:
        _fail(error)
    except AppError as error:
        _fail(CommandError(error.detail))
    click.echo(f"updated {user.email} ({user.role}, {user.plan}, {user.status})")


@click.group("data", cls=Commands)
def data_group():
    """Fixtures, results and odds."""


@data_group.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
def data_import(files):
    """Import football-data.co.uk CSV files (re-importing changes nothing)."""
    total, failed = imports.ImportSummary(), []
    bar = Progress("importing", unit="rows")
    lines = [_data_lines(path) for path in files]  # the bar counts rows, known before reading
    done = 0
    for path, count in zip(files, lines, strict=True):
        bar.update(done, sum(lines), f"importing {Path(path).name}")
        done += count
        try:
            summary = imports.import_file(path, now=current_app.extensions["clock"]())
        except (OSError, ValueError, DatabaseError) as error:  # the file's transaction rolled back
            failed.append(path)
            bar.echo(f"{path}: not imported: {error}", err=True)
            continue
        for row in summary.rejected:
            bar.echo(f"{row['file']}:{row['line']}: rejected: {row['reason']}", err=True)
        bar.echo(f"{path}: {_describe(summary)} (read as {summary.encoding})")
        total.add(summary)
    bar.update(done, sum(lines), "imported")
    bar.close()
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
        _fail(CommandError(error.detail))
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
    _unmatched(names.unmatched(source))
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
    bar = Progress("fitting weeks")
    try:
        operation = jobs.data_bootstrap(
            seasons, current_app.config, now=current_app.extensions["clock"](), progress=bar.update
        )
    except AppError as error:
        _fail(CommandError(error.detail))
    finally:
        bar.close()
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
    _unmatched(names.unmatched())
    click.echo(f"bootstrap took {result['seconds']:.1f} s")


def _unmatched(found) -> None:
    for name in found:
        click.echo(
            f"unmatched: {name['source']} {name['country']} {name['name']!r} "
            "(flask data teams map SOURCE COUNTRY NAME --team ID | --new)"
        )


@data_group.group("teams", cls=Commands, invoke_without_command=True)
@click.option("--source", type=click.Choice(DATA_SOURCES))
@click.pass_context
def data_teams(ctx, source):
    """List the team names a source gave that map to no stored team."""
    if ctx.invoked_subcommand is None:
        found = names.unmatched(source)
        _unmatched(found)
        click.echo(f"{len(found)} unmatched")


@data_teams.command("list")
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
    _unmatched(found)
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
        _fail(CommandError(getattr(error, "detail", str(error))))
    click.echo(f"{source} {country} {name!r} → team {mapped['team_id']} {mapped['team']!r}")


@data_group.group("contradictions", cls=Commands)
def data_contradictions():
    """Sources disagreeing with a stored result: each holds its match's settlement until
    resolved."""


@data_contradictions.command("list")
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
        _fail(CommandError(error.detail))
    click.echo(f"operation {resolved['operation_id']} contradiction-resolve: succeeded")
    click.echo(_contradiction(resolved))


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
    bar = Progress("replaying the demo world's last days")
    started = time.monotonic()
    try:
        built = (demo_world.rebuild if rebuild else demo_world.build)(
            now, current_app.config, progress=bar.update
        )
    except CommandError as error:
        _fail(error)
    bar.close()
    click.echo(
        f"demo world at {now:%Y-%m-%d %H:%M} UTC: {len(built['leagues'])} leagues, "
        f"{built['matches']} matches, {built['days']} days replayed live, "
        f"{built['published']} live picks published, ledger {built['ledger_size']} entries "
        f"({time.monotonic() - started:.0f} s)"
    )
    for operation in built["operations"]:
        _report(operation, full=False)


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
    bar = Progress("fitting weeks")
    operation = jobs.backfill(current_app.config, rebuild=rebuild, progress=bar.update)
    bar.close()
    _report(operation)


@click.group("ops", cls=Commands)
def ops_group():
    """Operations, for a scheduler: the same work as the Operations API."""


@ops_group.command("settle")
@click.option("--last-days", type=click.IntRange(*SETTLEMENT_DAYS), default=7, show_default=True)
def ops_settle(last_days):
    """Settle pending picks of matches from the last N days."""
    _report(jobs.settle(last_days, current_app.config))


@ops_group.command("calibrate")
@click.option(
    "--window-days", type=click.IntRange(*CALIBRATION_DAYS), default=90, show_default=True
)
def ops_calibrate(window_days):
    """Score the published probabilities of the last N days against the closing odds."""
    _report(jobs.calibrate(window_days, current_app.config))


@ops_group.command("refresh")
@click.argument("match_id", type=int)
def ops_refresh(match_id):
    """Refresh one open match's intelligence, prediction and pick."""
    try:
        operation = jobs.refresh(match_id, current_app.config)
    except AppError as error:
        _fail(CommandError(error.detail))
    _report(operation)


@click.group("ledger", cls=Commands)
def ledger_group():
    """The signed ledger of live picks."""


@ledger_group.command("key")
def ledger_key():
    """Print the public key that verifies the ledger's checkpoints."""
    click.echo(signed_log.signing_key(current_app.config).verifier_key)


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
        _fail(CommandError(str(error)))
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
        _fail(error)


@click.group("webhooks", cls=Commands)
def webhooks_group():
    """Webhook endpoints' signing secrets."""


@webhooks_group.command("rotate-key")
def webhooks_rotate_key():
    """Seal every stored webhook signing secret again under the newest key of
    WEBHOOK_SECRETS_KEY (the first), once every process lists the new key first. It reports
    how many moved; when none is left under an older key, the older keys may leave the list.
    Secrets no key opens are named, left as they are, with exit status 1."""
    rotation = sealing.rotate(current_app.config["WEBHOOK_SECRETS_KEY"])
    click.echo(
        f"resealed {rotation.resealed} webhook signing secrets under the newest key; "
        f"{rotation.current} already were"
    )
    if rotation.unreadable:
        ids = ", ".join(str(endpoint_id) for endpoint_id in rotation.unreadable)
        raise click.ClickException(
            f"no key of WEBHOOK_SECRETS_KEY opens the secrets of webhook endpoints {ids}: "
            "add the key they were sealed under, or have their owners rotate them"
        )


def _report(operation: dict, full=True):
    """Print an operation's outcome (and its whole result when ``full``); a failure fails."""
    click.echo(f"operation {operation['id']} {operation['kind']}: {operation['status']}")
    if operation["status"] == "failed":
        raise click.ClickException(operation["error"])
    if full:
        json.dump(
            OperationResultSchema().dump(jobs.result(operation["id"], current_app.config)),
            sys.stdout,
            indent=2,
        )
        click.echo()


def register_commands(app):
    """Attach every command group to ``app``."""
    for group in (
        db_group,
        users_group,
        data_group,
        model_group,
        ops_group,
        ledger_group,
        webhooks_group,
    ):
        app.cli.add_command(group)
