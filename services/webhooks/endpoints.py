"""Webhook endpoints a Pro user or admin manages: register, list, change, delete, rotate the
secret, test, and look at or retry their deliveries.

An endpoint belongs to the user who made it: another user's endpoint is a 404, as if it did not
exist. Its URL passes the server-side request forgery check (``services.webhooks.egress``) when it
is registered or changed, and again before every delivery. The secret (``whsec_`` and 32 random
bytes in base64) is shown when it is made or rotated and never again: it is stored encrypted under
``WEBHOOK_SECRETS_KEY`` (``services.webhooks.encryption``) and never read back to be shown. After a
rotation the old secret signs beside the new one for ``WEBHOOK_SECRET_OVERLAP_HOURS``.
"""

import base64
import secrets
from datetime import timedelta

from errors import NotFound, WebhookDisabled, WebhookLimitReached
from models import Delivery, Event, User, WebhookEndpoint
from services.queries import paginate
from services.webhooks import egress, encryption, events
from services.webhooks.deliveries import message_id
from store.database import db, locked, writing

SECRET_BYTES = 32


def new_secret() -> str:
    """A fresh signing secret in the Standard Webhooks form."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def check_url(url: str, settings) -> None:
    """WebhookUrlRefused unless ``url`` may be delivered to (scheme, every address, port)."""
    egress.check(
        url,
        allow_private=settings["WEBHOOK_ALLOW_PRIVATE"],
        require_https=settings["APP_ENV"] == "production",
        allowed_ports=settings["WEBHOOK_ALLOWED_PORTS"],
    )


def describe(endpoint: WebhookEndpoint, secret: str | None = None) -> dict:
    """The endpoint as the API shows it, with ``secret`` when one was just made (the stored one
    is encrypted: never shown)."""
    shown = {
        "id": endpoint.id,
        "url": endpoint.url,
        "description": endpoint.description,
        "events": endpoint.events,
        "enabled": endpoint.enabled,
        "disabled_reason": endpoint.disabled_reason,
        "previous_secret_expires_at": endpoint.previous_secret_expires_at,
        "created_at": endpoint.created_at,
        "updated_at": endpoint.updated_at,
    }
    if secret is not None:
        shown["secret"] = secret
    return shown


def _own(viewer, endpoint_id: int, held=False) -> WebhookEndpoint:
    """The caller's endpoint ``endpoint_id``, or NotFound (also for another user's); ``held``:
    its row locked until the transaction ends."""
    query = WebhookEndpoint.select().where(
        (WebhookEndpoint.id == endpoint_id) & (WebhookEndpoint.user == viewer.id)
    )
    endpoint = (locked(query) if held else query).get_or_none()
    if endpoint is None:
        raise NotFound(f"Webhook endpoint {endpoint_id} does not exist.")
    return endpoint


def create(viewer, url: str, event_types, description: str, settings, now) -> dict:
    """Register an endpoint for ``viewer``; answers it with its secret (shown this once)."""
    check_url(url, settings)
    secret = new_secret()
    limit = settings["WEBHOOK_MAX_ENDPOINTS"]
    with writing():
        # The owner's row, held: concurrent registrations of one owner count one after another.
        locked(User.select(User.id).where(User.id == viewer.id)).execute()
        if WebhookEndpoint.select().where(WebhookEndpoint.user == viewer.id).count() >= limit:
            raise WebhookLimitReached(limit)
        endpoint = WebhookEndpoint.create(
            user=viewer.id,
            url=url,
            description=description,
            events=list(dict.fromkeys(event_types)),
            secret=encryption.encrypt(secret, settings["WEBHOOK_SECRETS_KEY"]),
            created_at=now,
            updated_at=now,
        )
    return describe(endpoint, secret)


def listing(viewer, settings) -> dict:
    """The caller's endpoints, oldest first, and how many they may have."""
    found = WebhookEndpoint.select().where(WebhookEndpoint.user == viewer.id)
    return {
        "items": [describe(endpoint) for endpoint in found.order_by(WebhookEndpoint.id)],
        "limit": settings["WEBHOOK_MAX_ENDPOINTS"],
    }


def get(viewer, endpoint_id: int) -> dict:
    """One of the caller's endpoints."""
    return describe(_own(viewer, endpoint_id))


def update(viewer, endpoint_id: int, changes: dict, settings, now) -> dict:
    """Change an endpoint's URL, events, description or enabled state."""
    endpoint = _own(viewer, endpoint_id)
    if "url" in changes:
        check_url(changes["url"], settings)
        endpoint.url = changes["url"]
    if "events" in changes:
        endpoint.events = list(dict.fromkeys(changes["events"]))
    if "description" in changes:
        endpoint.description = changes["description"]
    if "enabled" in changes:
        endpoint.enabled = changes["enabled"]
        if endpoint.enabled:
            endpoint.disabled_reason = None
        elif endpoint.disabled_reason is None:
            endpoint.disabled_reason = "disabled by its owner"
    endpoint.updated_at = now
    endpoint.save(only=endpoint.dirty_fields)  # never the secrets, which a rotation may change
    return describe(endpoint)


def delete(viewer, endpoint_id: int) -> None:
    """Delete an endpoint with its deliveries."""
    endpoint = _own(viewer, endpoint_id)
    with db.atomic():
        Event.delete().where(Event.endpoint == endpoint.id).execute()  # its test pings
        endpoint.delete_instance()


def rotate_secret(viewer, endpoint_id: int, settings, now) -> dict:
    """A new secret for the endpoint; the old one signs too for the overlap. Answers the
    endpoint with its new secret (shown this once)."""
    secret = new_secret()
    with writing():
        # Held: a key rotation encrypting the old secret again meanwhile is never undone by it.
        endpoint = _own(viewer, endpoint_id, held=True)
        endpoint.previous_secret = endpoint.secret  # encrypted as it is
        endpoint.previous_secret_expires_at = now + timedelta(
            hours=settings["WEBHOOK_SECRET_OVERLAP_HOURS"]
        )
        endpoint.secret = encryption.encrypt(secret, settings["WEBHOOK_SECRETS_KEY"])
        endpoint.updated_at = now
        endpoint.save()
    return describe(endpoint, secret)


def _enabled(endpoint: WebhookEndpoint) -> WebhookEndpoint:
    if not endpoint.enabled:
        raise WebhookDisabled(endpoint.id, endpoint.disabled_reason)
    return endpoint


def test(viewer, endpoint_id: int, now) -> dict:
    """Send the endpoint a ``ping`` (the worker delivers it at once); answers its delivery."""
    endpoint = _enabled(_own(viewer, endpoint_id))
    with db.atomic():
        event = events.ping(endpoint, now)
        delivery = Delivery.create(
            event=event, endpoint=endpoint, next_attempt_at=now, created_at=now
        )
        event.dispatched_at = now  # it has its delivery already
        event.save()
    return describe_delivery(delivery, event)


def describe_delivery(delivery: Delivery, event) -> dict:
    """A delivery as the API shows it."""
    return {
        "id": delivery.id,
        "event_id": event.id,
        "event_type": event.type,
        "webhook_id": message_id(event.id, delivery.subject),
        "status": delivery.status,
        "attempts": delivery.attempts,
        "last_attempt_at": delivery.last_attempt_at,
        "last_status_code": delivery.last_status_code,
        "last_error": delivery.last_error,
        "next_attempt_at": delivery.next_attempt_at,
        "created_at": delivery.created_at,
    }


def deliveries(viewer, endpoint_id: int, status=None, page=1, page_size=20) -> dict:
    """One page of an endpoint's deliveries, newest first."""
    endpoint = _own(viewer, endpoint_id)
    query = (
        Delivery.select(Delivery, Event.id, Event.type)
        .join(Event)
        .where(Delivery.endpoint == endpoint.id)
    )
    if status:
        query = query.where(Delivery.status == status)
    found = paginate(query.order_by(Delivery.id.desc()), page, page_size)
    found["items"] = [describe_delivery(row, row.event) for row in found["items"]]
    return found


def retry(viewer, endpoint_id: int, delivery_id: int, now) -> dict:
    """Try a delivery again at once, with a fresh schedule (a succeeded one is sent again)."""
    endpoint = _enabled(_own(viewer, endpoint_id))
    delivery = Delivery.get_or_none(
        (Delivery.id == delivery_id) & (Delivery.endpoint == endpoint.id)
    )
    if delivery is None:
        raise NotFound(f"Delivery {delivery_id} of webhook endpoint {endpoint_id} does not exist.")
    delivery.status, delivery.attempts = "pending", 0
    delivery.next_attempt_at, delivery.finished_at, delivery.leased_until = now, None, None
    delivery.save()
    return describe_delivery(delivery, Event.get_by_id(delivery.event_id))
