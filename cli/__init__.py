"""Flask CLI commands (``flask --app app …``): the same services the API calls, for operators.

A module per command group; here the groups are attached to an app, and an app whose
configuration was refused gets them too (``unconfigured``)."""

import click
from flask.cli import ScriptInfo

from cli.common import REFUSED, RefusedCommands
from cli.data import data_group
from cli.db import db_group
from cli.ledger import ledger_group
from cli.model import model_group
from cli.ops import ops_group
from cli.users import users_group
from cli.webhooks import webhooks_group


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
