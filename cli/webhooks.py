"""``flask webhooks``: the webhook endpoints' signing secrets, sealed again under a new key."""

import click
from flask import current_app

from cli.common import Commands
from services.webhooks import encryption


@click.group("webhooks", cls=Commands)
def webhooks_group():
    """Webhook endpoints' signing secrets."""


@webhooks_group.command("rotate-key")
def webhooks_rotate_key():
    """Seal every stored webhook signing secret again under the newest key of
    WEBHOOK_SECRETS_KEY (the first), once every process lists the new key first. It reports
    how many moved; when none is left under an older key, the older keys may leave the list.
    Secrets no key opens are named, left as they are, with exit status 1."""
    rotation = encryption.rotate(current_app.config["WEBHOOK_SECRETS_KEY"])
    click.echo(
        f"resealed {rotation.reencrypted} webhook signing secrets under the newest key; "
        f"{rotation.current} already were"
    )
    if rotation.unreadable:
        ids = ", ".join(str(endpoint_id) for endpoint_id in rotation.unreadable)
        raise click.ClickException(
            f"no key of WEBHOOK_SECRETS_KEY opens the secrets of webhook endpoints {ids}: "
            "add the key they were sealed under, or have their owners rotate them"
        )
