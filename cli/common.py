"""What the command groups share: the group class whose commands need the app's
configuration (and, when they write, the web processes' home for the data version's copy) and
the one answering for an app whose configuration was refused, the parameter types (text, a
start day), and how a command fails or reports an operation."""

import functools
import json
import re
import sys
from datetime import datetime

import click
from flask import current_app
from flask.cli import AppGroup

from schemas.ops import OperationResultSchema
from services.operations import jobs
from web import versions


def fail(error):
    """Stop the command with ``error`` as its one line, exit status 1."""
    raise click.ClickException(str(error)) from error


#: Where an app whose configuration was refused keeps the refusal (see ``unconfigured``).
REFUSED = "refused_configuration"


class Commands(AppGroup):
    """A group of the app's commands. Each needs the app's configuration unless declared with
    ``needs_config=False``: on an app whose configuration was refused (``unconfigured``) it says
    the refusal instead of running. Each may write unless declared with ``writes=False`` (the
    migrations, the listings): before it runs, its home for the data version's copy is compared
    with the web processes' (:func:`web.versions.home_refusal`), and where they differ it says
    so instead, since the web would not hear of its changes."""

    def command(self, *args, needs_config=True, writes=True, **kwargs):
        register = super().command(*args, **kwargs)
        return lambda callback: register(
            _configured(callback, writes) if needs_config else callback
        )


def _configured(callback, writes):
    """``callback``, run only on an app whose configuration was accepted and, when it
    ``writes``, whose home for the data version's copy is the web processes'."""

    @functools.wraps(callback)
    def run(*args, **kwargs):
        if (refused := current_app.extensions.get(REFUSED)) is not None:
            raise click.ClickException(str(refused))
        if writes and (refusal := versions.home_refusal(current_app)) is not None:
            raise click.ClickException(refusal)
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


def report_operation(operation: dict, full=True):
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
