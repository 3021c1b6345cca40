"""``flask users``: accounts, as operators make and change them."""

import click
from flask import current_app

from cli.common import TEXT, Commands, fail
from enums import USER_PLANS, USER_ROLES, USER_STATUSES
from errors import AppError, CommandError
from schemas.auth import RegisterSchema
from services.accounts import users


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
            fail(CommandError("; ".join(reasons)))
    if password is None:
        password = click.prompt("Password", type=TEXT, hide_input=True, confirmation_prompt=True)
    try:
        user, created = users.create(
            email, password, current_app.extensions["password_hasher"], role=role, plan=plan
        )
    except CommandError as error:
        fail(error)
    click.echo(f"{'created' if created else 'updated'} {user.email} ({user.role}, {user.plan})")


@users_group.command("list", writes=False)
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
        fail(error)
    except AppError as error:
        fail(CommandError(error.detail))
    click.echo(f"updated {user.email} ({user.role}, {user.plan}, {user.status})")
