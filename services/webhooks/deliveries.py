"""Deliveries: sending what is due, signed the Standard Webhooks way, and what each answer means.

One delivery is one event for one endpoint. It is tried at once, then after each failure by
``WEBHOOK_RETRY_SCHEDULE`` (the spec's 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h),
each try within ``WEBHOOK_TIMEOUT``:

- a 2xx answer delivers it;
- 410 Gone disables the endpoint (its other deliveries wait until it is enabled again);
- 429 and 503 wait at least their ``Retry-After`` (never longer than the schedule's longest
  step) before the next try;
- anything else (another status, a redirect, which is never followed, a refused address, no
  answer in time) waits for the next step; after the last, the delivery fails and the endpoint
  is disabled.

Every try, the first and each retry (a manual one too), reads the endpoint's owner again, in the
query that claims its batch: a delivery whose owner no longer may receive it (no longer Pro or
admin, suspended; for an operators' event, no longer an operator or admin) fails at once with
that reason and is sent to nobody. Its endpoint stays enabled: an owner who qualifies again
receives what is tried from then on.

Every try is signed with ``webhook-id`` (the event's id: the same on every try, so a receiver
can drop duplicates), ``webhook-timestamp`` and ``webhook-signature`` (``v1,`` HMAC-SHA256 of
``id.timestamp.body`` under each secret that signs: two during a rotation's overlap). The
secrets are stored encrypted (``services.webhooks.encryption``) and decrypted only here, as each
try is signed: a try whose secret no key of ``WEBHOOK_SECRETS_KEY`` decrypts is sent to nobody
and recorded as a failed try saying so.

A delivery is claimed with a lease (``WEBHOOK_LEASE_SECONDS``, longer than a try may take)
before it is sent: a worker that dies mid-delivery leaves the lease to run out, and the delivery
is sent again by whichever worker comes next. At least once, never lost.
"""

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from http.client import HTTPException

from standardwebhooks import Webhook

from clock import utcnow
from errors import WebhookUrlRefused
from models import Delivery, Event, User, WebhookEndpoint
from schemas.webhooks import payload
from services.webhooks import egress, encryption, events
from store.bulk import update_rows
from store.database import writing

log = logging.getLogger("picks.webhooks")

#: Statuses whose ``Retry-After`` is honoured.
BACK_OFF_STATUSES = (429, 503)

#: Deliveries claimed at a time.
CLAIM_BATCH = 200

#: The whole of what a try records when a public host gave no answer (see :func:`send`).
UNREACHABLE = "unreachable"

USER_AGENT = "sports-pick-service-webhooks/1"


@dataclass(frozen=True)
class Job:
    """A claimed delivery with what sending it needs."""

    delivery_id: int
    attempts: int
    event_id: int
    message_id: str
    event_type: str
    occurred_at: datetime
    data: dict | None  # None: what the event is about is no longer stored
    endpoint_id: int
    url: str
    secrets: tuple[str, ...]  # encrypted, as stored: decrypted only to sign (:func:`send`)
    #: Why the endpoint's owner, as the database says when the delivery is claimed, may no
    #: longer receive the event (downgraded, suspended); None when they may.
    refused: str | None = None


@dataclass(frozen=True)
class Outcome:
    """One try: the receiver's status (None without an answer), an error, ``Retry-After``."""

    status: int | None
    error: str | None = None
    retry_after: str | None = None
    final: bool = False  # no later try can do better

    @property
    def delivered(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


def message_id(event_id: int, subject: int | None = None) -> str:
    """The ``webhook-id`` of an event (of one subject of a bulk event): the same on every try
    and for every endpoint."""
    return f"evt_{event_id}" if subject is None else f"evt_{event_id}_{subject}"


def signing_secrets(endpoint, now) -> tuple[str, ...]:
    """The secrets that sign for ``endpoint`` at ``now``, encrypted as stored: its own, and the one
    it replaced while the rotation's overlap lasts."""
    found = [endpoint.secret]
    expires = endpoint.previous_secret_expires_at
    if endpoint.previous_secret and expires is not None and now < expires:
        found.append(endpoint.previous_secret)
    return tuple(found)


def signature(secrets, msg_id: str, timestamp: datetime, body: str) -> str:
    """The ``webhook-signature`` header: ``v1,<base64>`` under each secret, space-separated."""
    return " ".join(Webhook(secret).sign(msg_id, timestamp, body) for secret in secrets)


def headers(job: Job, secrets, body: str, sent_at: datetime) -> dict:
    """The request headers of one try, signed under ``secrets`` (opened)."""
    msg_id = job.message_id
    return {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(sent_at.timestamp())),
        "webhook-signature": signature(secrets, msg_id, sent_at, body),
    }


def retry_after_seconds(value: str | None, now: datetime) -> float | None:
    """``Retry-After`` (seconds, or an HTTP date) as seconds from ``now``; None if unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return max(0.0, (moment - now).total_seconds())


def next_delay(attempts: int, schedule, outcome: Outcome, now) -> float | None:
    """Seconds until the next try after ``attempts`` failed tries, or None when none is left.

    ``schedule[k]`` is the wait after the k-th failure (``schedule[0]``, at once, is the first
    try); ``Retry-After`` on 429/503 lengthens the wait, up to the schedule's longest step.
    """
    if attempts >= len(schedule):
        return None
    delay = schedule[attempts]
    if outcome.status in BACK_OFF_STATUSES:
        asked = retry_after_seconds(outcome.retry_after, now)
        if asked is not None:
            delay = max(delay, min(asked, max(schedule)))
    return delay


def claim(now, lease_seconds: float, limit=CLAIM_BATCH) -> list[Job]:
    """Lease up to ``limit`` due deliveries of enabled endpoints, the longest waiting first,
    each with its owner's role, plan and status as they are now (read in the same query: a
    try, first or retry, never goes by what the owner was at fan-out)."""
    free = Delivery.leased_until.is_null() | (Delivery.leased_until <= now)
    with writing():
        rows = list(
            Delivery.select(
                Delivery.id,
                Delivery.attempts,
                Event.id,
                Event.type,
                Event.occurred_at,
                Event.data,
                Event.audience,
                Delivery.subject,
                WebhookEndpoint,
                User.role,
                User.plan,
                User.status,
            )
            .join(Event)
            .switch(Delivery)
            .join(WebhookEndpoint)
            .join(User)
            .where(
                (Delivery.status == "pending")
                & (Delivery.next_attempt_at <= now)
                & free
                & WebhookEndpoint.enabled
            )
            .order_by(Delivery.next_attempt_at, Delivery.id)
            .limit(limit)
        )
        if not rows:
            return []
        Delivery.update(leased_until=now + timedelta(seconds=lease_seconds)).where(
            Delivery.id.in_([row.id for row in rows]) & free
        ).execute()
    read = {
        event_type: events.SUBJECTS[event_type](
            sorted({row.subject for row in rows if row.event.type == event_type})
        )
        for event_type in {row.event.type for row in rows if row.event.data is None}
    }
    return [
        Job(
            delivery_id=row.id,
            attempts=row.attempts,
            event_id=row.event.id,
            event_type=row.event.type,
            occurred_at=row.event.occurred_at,
            message_id=message_id(row.event.id, row.subject),
            data=row.event.data
            if row.event.data is not None
            else read[row.event.type].get(row.subject),
            endpoint_id=row.endpoint.id,
            url=row.endpoint.url,
            secrets=signing_secrets(row.endpoint, now),
            refused=events.refusal(row.endpoint.user, row.event.audience),
        )
        for row in rows
    ]


def send(job: Job, settings) -> Outcome:
    """One try of ``job``: check its owner and the address again, sign, POST. Never raises for
    the receiver's sake: every failure is an outcome."""
    if job.refused is not None:
        return Outcome(None, f"not sent: {job.refused}", final=True)
    if job.data is None:
        return Outcome(None, f"its {job.event_type.split('.')[0]} no longer exists", final=True)
    try:
        target = egress.check(
            job.url,
            allow_private=settings["WEBHOOK_ALLOW_PRIVATE"],
            require_https=settings["APP_ENV"] == "production",
            allowed_ports=settings["WEBHOOK_ALLOWED_PORTS"],
        )
    except WebhookUrlRefused as refused:
        return Outcome(None, f"refused: {refused.errors['url'][0]}")
    try:
        secrets = encryption.decrypt_all(job.secrets, settings["WEBHOOK_SECRETS_KEY"])
    except encryption.SecretUnreadable as unreadable:
        return Outcome(None, f"not signed: {unreadable}")
    body = payload(job.event_type, job.occurred_at, job.data, settings.get("PUBLIC_BASE_URL") or "")
    # The signature's time is the moment of sending by the system clock: the receiver checks
    # it against its own clock to refuse replays.
    sent_at = datetime.now(UTC)
    try:
        answer = egress.post(
            target,
            body.encode(),
            headers(job, secrets, body, sent_at),
            settings["WEBHOOK_TIMEOUT"],
        )
    except (OSError, HTTPException) as exc:
        # Whether a public host refused, reset, timed out or failed TLS would tell the endpoint's
        # owner what listens where: its record says "unreachable", nothing more. A receiver on a
        # development machine (WEBHOOK_ALLOW_PRIVATE) keeps the reason, to be debugged.
        if not target.private:
            return Outcome(None, UNREACHABLE)
        return Outcome(None, f"no answer: {type(exc).__name__}: {exc}".strip())
    error = None
    if 300 <= answer.status < 400:
        error = f"answered {answer.status}: redirects are not followed"
    elif not 200 <= answer.status < 300:
        error = f"answered {answer.status}"
    return Outcome(answer.status, error, answer.retry_after)


#: What recording a try sets on its delivery, with each column's SQL type (for PostgreSQL).
RECORDED = {
    "status": "text",
    "attempts": "integer",
    "next_attempt_at": "timestamp",
    "last_attempt_at": "timestamp",
    "last_status_code": "integer",
    "last_error": "text",
    "finished_at": "timestamp",
}


def decide(job: Job, outcome: Outcome, settings, now) -> tuple[tuple, str | None]:
    """What one try of ``job`` leaves: its delivery's row of :data:`RECORDED` values (after the
    id), and why its endpoint is disabled (None when it is not)."""
    attempts = job.attempts + 1
    status, next_at, finished, disable = "pending", None, None, None
    if outcome.delivered:
        status, finished = "succeeded", now
    else:
        delay = None
        if outcome.status == 410:
            disable = "it answered 410 Gone"
        elif not outcome.final:
            delay = next_delay(attempts, settings["WEBHOOK_RETRY_SCHEDULE"], outcome, now)
            if delay is None:
                disable = f"delivery {job.delivery_id} failed its last try ({outcome.error})"
        if delay is None:
            status, finished = "failed", now
        else:
            next_at = now + timedelta(seconds=delay)
    row = (job.delivery_id, status, attempts, next_at, now, outcome.status, outcome.error, finished)
    return row, disable


def record(tries, settings, now) -> dict:
    """Store what each ``(job, outcome)`` gave, in one transaction; disable an endpoint on 410
    or after a delivery's last try. Returns the count of each resulting status."""
    rows, disabled = [], {}
    for job, outcome in tries:
        row, disable = decide(job, outcome, settings, now)
        rows.append(row)
        if disable:
            disabled[job.endpoint_id] = disable
    with writing():
        update_rows(Delivery, RECORDED, rows, constants={"leased_until": None})
        for endpoint_id, reason in disabled.items():
            WebhookEndpoint.update(enabled=False, disabled_reason=reason, updated_at=now).where(
                WebhookEndpoint.id == endpoint_id
            ).execute()
            log.warning("webhook endpoint %s disabled: %s", endpoint_id, reason)
    counts = {"succeeded": 0, "failed": 0, "pending": 0}
    for row in rows:
        counts[row[1]] += 1
    return counts


def deliver_due(settings, clock=utcnow, pool=None) -> dict:
    """Fan out waiting events, then send every delivery due now (``pool`` sends them side by
    side); returns the counts of what happened."""
    counts = {"dispatched": 0, "succeeded": 0, "failed": 0, "pending": 0}
    while dispatched := events.dispatch(clock()):
        counts["dispatched"] += dispatched
    jobs = claim(clock(), settings["WEBHOOK_LEASE_SECONDS"])
    if not jobs:
        return counts
    own = pool is None
    pool = pool or ThreadPoolExecutor(settings["WEBHOOK_CONCURRENCY"])
    try:
        outcomes = pool.map(lambda job: send(job, settings), jobs)
        tries = list(zip(jobs, outcomes, strict=True))
    finally:
        if own:
            pool.shutdown()
    # Recorded together once the batch is sent: a worker that dies before this sends the batch
    # again when its leases run out (at least once).
    for name, value in record(tries, settings, clock()).items():
        counts[name] += value
    return counts


def pump(settings, clock=utcnow, seconds: float = 55.0, stop=None, rounds=(deliver_due,)) -> dict:
    """Deliver what is due, then again every ``WEBHOOK_POLL_SECONDS`` while nothing is, for
    ``seconds`` (at least one round; ``stop()`` ends it early). The worker runs one pump at a
    time, a new one every minute; returns the totals. Each round runs each of ``rounds`` (the
    webhooks' :func:`deliver_due`, and the outboxes the worker adds: the alerts')."""
    totals = {"dispatched": 0, "succeeded": 0, "failed": 0, "pending": 0}
    ends = time.monotonic() + seconds
    poll = settings["WEBHOOK_POLL_SECONDS"]
    with ThreadPoolExecutor(settings["WEBHOOK_CONCURRENCY"]) as pool:
        while True:
            counts = {}
            for deliver in rounds:
                counts.update(deliver(settings, clock, pool))
            for name, value in counts.items():
                totals[name] = totals.get(name, 0) + value
            if time.monotonic() >= ends or (stop is not None and stop()):
                return totals
            if not any(counts.values()):
                time.sleep(min(poll, max(0.0, ends - time.monotonic())))
