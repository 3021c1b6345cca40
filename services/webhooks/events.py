"""Events: the outbox written with what caused them, and its fan-out to the endpoints.

A service that settles a pick, stores a result, publishes a pick or prediction or finishes an
operation calls :func:`emit` inside its own transaction: the event rows commit with the change
or not at all. Nothing is written when no enabled endpoint subscribes to the type, so an
installation without webhooks pays one indexed lookup per call.

The worker then fans each event out (:func:`dispatch`): one delivery per endpoint that
subscribes and whose owner may receive it (an active Pro user or admin; ``operators`` events
only to operators and admins; an event for one endpoint, a test ping, to that one alone). The
owner is read again at every try of a delivery (``services.webhooks.deliveries``): one whose
owner no longer qualifies fails, sent to nobody.

Event data is kept snake_case with the path of the resource it is about; the wire payload is
written from it at delivery by ``schemas.webhooks`` (camelCase, the ``url`` from
``PUBLIC_BASE_URL``).
"""

from peewee import OP, Expression, Value

from clock import utcnow
from models import Delivery, Event, Pick, User, WebhookEndpoint
from schemas.common import utc_z
from services import routes
from services.market import premium
from store.bulk import insert_rows
from store.database import writing

#: Events fanned out per transaction.
DISPATCH_BATCH = 2000

EVENT_COLUMNS = ["type", "occurred_at", "data", "audience"]


def moment(value) -> str | None:
    """A datetime as event data keeps it (the one wire format of datetimes)."""
    return None if value is None else utc_z(value)


def subscribed(event_type: str) -> bool:
    """Whether any enabled endpoint subscribes to ``event_type`` (one indexed query)."""
    # The list is JSON text: look for the quoted name in it (raw, not through the JSON field).
    named = Expression(
        WebhookEndpoint.events, OP.ILIKE, Value(f'%"{event_type}"%', converter=False)
    )
    return (
        WebhookEndpoint.select(WebhookEndpoint.id).where(WebhookEndpoint.enabled & named).exists()
    )


def emit(event_type: str, rows, now=None, audience="subscribers") -> int:
    """Write one ``event_type`` event per item of ``rows`` (each its ``data``, or a
    ``(data, audience)`` pair) into the outbox, in the caller's transaction; returns how many.

    Call it inside the transaction that makes the change, so both commit or neither does.
    """
    rows = list(rows)
    if not rows or not subscribed(event_type):
        return 0
    now = now or utcnow()
    values = [
        (event_type, now, *(row if isinstance(row, tuple) else (row, audience))) for row in rows
    ]
    insert_rows(Event, EVENT_COLUMNS, values)
    return len(values)


def emit_subjects(event_type: str, subjects, now=None, audience="subscribers") -> int:
    """Write one ``event_type`` event for each id in ``subjects`` as a single outbox row (what a
    bulk change, settling 100,000 picks, costs its transaction: one row); the worker gives each
    subject its own delivery, and reads its data when it sends it (see :data:`SUBJECTS`).
    Returns how many events that is."""
    subjects = list(subjects)
    if not subjects or not subscribed(event_type):
        return 0
    Event.create(type=event_type, occurred_at=now or utcnow(), subjects=subjects, audience=audience)
    return len(subjects)


def settled_picks(pick_ids) -> dict[int, dict]:
    """The ``pick.settled`` data of each of ``pick_ids`` still stored (a settled live pick
    never changes again, so it reads as it was settled)."""
    found = {}
    for start in range(0, len(pick_ids), 500):
        query = Pick.select(
            Pick.id,
            Pick.match,
            Pick.market,
            Pick.line,
            Pick.selection,
            Pick.status,
            Pick.odds,
            Pick.profit,
            Pick.closing_odds,
            Pick.closing_line,
            Pick.clv,
        ).where(Pick.id.in_(pick_ids[start : start + 500]))
        for (
            pick_id,
            match_id,
            market,
            handicap,
            selection,
            status,
            odds,
            profit,
            closing,
            line,
            clv,
        ) in query.tuples():
            found[pick_id] = {
                "id": pick_id,
                "path": routes.match(match_id),
                "match_id": match_id,
                "market": market,
                "line": handicap,
                "selection": selection,
                "status": status,
                "odds": odds,
                "profit": profit,
                "closing_odds": closing,
                "closing_line": line,
                "clv": clv,
            }
    return found


#: Event types written by subject → how their data is read back, many at a time.
SUBJECTS = {"pick.settled": settled_picks}


def ping(endpoint: WebhookEndpoint, now) -> Event:
    """A ``ping`` for one endpoint (its test), written to the outbox like any event."""
    return Event.create(
        type="ping",
        occurred_at=now,
        data={"id": endpoint.id, "path": routes.webhook(endpoint.id)},
        endpoint=endpoint,
    )


def refusal(owner, audience: str) -> str | None:
    """Why an endpoint's owner (its ``role``, ``plan`` and ``status``) may not receive an event
    meant for ``audience``, or None when they may. Asked at fan-out and again at every try of a
    delivery, so an owner downgraded or suspended meanwhile receives nothing more."""
    if owner.status != "active":
        return f"its owner's account is {owner.status}"
    if not premium.has_premium(owner):
        return "its owner has neither a Pro plan nor the admin role"
    if audience == "operators" and owner.role not in ("operator", "admin"):
        return "its owner is neither an operator nor an admin"
    return None  # "premium": locked picks, which every endpoint owner may see


def may_receive(owner, audience: str) -> bool:
    """Whether an endpoint's owner may receive an event meant for ``audience``."""
    return refusal(owner, audience) is None


def dispatch(now=None, batch=DISPATCH_BATCH) -> int:
    """Fan out the events not yet dispatched, oldest first, up to ``batch`` of them, in one
    transaction: a delivery per receiving endpoint, and the events marked dispatched.
    Returns how many events it handled (0: nothing waits)."""
    now = now or utcnow()
    with writing():
        events = list(
            Event.select(Event.id, Event.type, Event.audience, Event.endpoint, Event.subjects)
            .where(Event.dispatched_at.is_null())
            .order_by(Event.id)
            .limit(batch)
            .tuples()
        )
        if not events:
            return 0
        endpoints = list(
            WebhookEndpoint.select(
                WebhookEndpoint.id, WebhookEndpoint.events, User.role, User.plan, User.status
            )
            .join(User)
            .where(WebhookEndpoint.enabled)
            .objects()
        )
        rows = []
        for event_id, event_type, audience, target, subjects in events:
            for endpoint in endpoints:
                if target is not None:
                    wanted = endpoint.id == target
                else:
                    wanted = event_type in endpoint.events and may_receive(endpoint, audience)
                if wanted:
                    for subject in subjects or (None,):
                        rows.append((event_id, subject, endpoint.id, "pending", 0, now, now))
        insert_rows(
            Delivery,
            ["event", "subject", "endpoint", "status", "attempts", "next_attempt_at", "created_at"],
            rows,
        )
        # By id, never by range: on PostgreSQL an event with an id inside the range may commit
        # after the select above, and must wait for the next round rather than be skipped.
        ids = [event[0] for event in events]
        for start in range(0, len(ids), 500):
            Event.update(dispatched_at=now).where(Event.id.in_(ids[start : start + 500])).execute()
    return len(events)
