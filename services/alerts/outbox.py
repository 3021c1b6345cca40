"""The alerts' outbox: each subscription's messages made once, then sent by the worker, tried
again after a failure, never twice.

**What is said, and when.** A subscription tells of the live picks published after it was made
in its leagues, markets and ratings (an empty list is every one). Each pick is one message per
subscription, at one of two moments:

- at its **publication**, when its reader may see it then: every pick for a Pro user or an
  admin, and for everyone else the picks the premium rule leaves open
  (``services.market.premium``, market by market: a free user is never told before kick-off of
  a locked pick, nor of a pick sealed with it: of its market, or made with it or after it);
- at its match's **kick-off**, when the premium rule makes it public, for a reader who could not
  see it before (within :data:`KICKOFF_GRACE`: "it kicks off now" is news for a while only; a
  match postponed or cancelled says nothing).

The fan-out (:func:`fan_out`, every round of the worker's pump) makes the messages due, one row
per (subscription, pick, moment) under a unique key: a round made twice, or by two workers at
once, makes each message once. A pick whose messages of a moment are made is marked so
(``alert_fanout``): later rounds look only at new picks and newly kicked-off matches, so a
reader who becomes Pro after a pick was published hears of it at kick-off. A subscriber who no
longer qualifies is checked again at every try: a suspended account's messages fail, sent to
nobody; a message about a pick locked for its reader (a Pro user who became free since) waits
until the kick-off that unlocks it.

**Sending.** A message is claimed with a lease, sent, and its outcome recorded, one at a time:
sent; failed for good (an SMTP 5xx reply, a Telegram chat that refuses); or tried again by
``ALERT_RETRY_SCHEDULE`` (a Telegram 429 waits at least its ``retry_after``), and failed after
the last step. Every failure keeps its reason (``last_error``). A worker that dies while it sends
leaves a lease that runs out: that message is then recorded as failed ("interrupted"), not sent
again, since it may have gone out. So a message goes out at most once.
"""

import logging
from datetime import timedelta

from clock import utcnow
from enums import CALLED_OFF_STATUSES
from models import (
    AlertFanout,
    AlertMessage,
    AlertSubscription,
    League,
    Match,
    Pick,
    Team,
    User,
)
from services.alerts import channels, messages, subscriptions
from services.market import premium
from store.bulk import insert_rows
from store.database import locked, writing

log = logging.getLogger("picks.alerts")

#: How long after its kick-off a match's unlocked picks are still told of.
KICKOFF_GRACE = timedelta(hours=2)

#: Messages sent per round of the pump at most (the webhooks' deliveries take their turn).
ROUND = 100

#: A try's lease, in tries' timeouts: an SMTP try makes a handful of round trips, each within
#: ``ALERT_TIMEOUT``.
LEASE_TIMEOUTS = 10

INTERRUPTED = (
    "interrupted: the worker stopped during this try; not tried again, as it may have gone out"
)


def _candidates(now) -> list[dict]:
    """The live picks whose match opens after ``now`` less the grace, with what the fan-out
    needs: league, market, rating, when the pick was made and when its match opens."""
    unlock = premium.unlock_column()
    query = (
        Pick.select(
            Pick.id,
            Pick.match,
            Pick.market,
            Pick.rating,
            Pick.created_at,
            Match.league.alias("league"),
            unlock.alias("unlock"),
        )
        .join(Match)
        .where(
            Pick.is_live & (unlock > now - KICKOFF_GRACE) & Match.status.not_in(CALLED_OFF_STATUSES)
        )
        .dicts()
    )
    found = []
    for row in query:
        row["unlock"] = Match.kickoff_at.python_value(row["unlock"])
        if row["created_at"] < row["unlock"]:  # made before its match opened
            found.append(row)
    return found


def _of_picks(query_of, pick_ids) -> set:
    """The rows ``query_of(chunk)`` gives for ``pick_ids``, 500 ids at a time, as a set."""
    found = set()
    for start in range(0, len(pick_ids), 500):
        found.update(query_of(pick_ids[start : start + 500]).tuples())
    return found


def fan_out(now) -> int:
    """Make the messages due at ``now`` that are not made yet (see the module's description),
    and mark each pick whose messages of a moment are made, so no later round looks at it again
    for that moment; returns how many messages it made."""
    picks = _candidates(now)
    done = _of_picks(
        lambda ids: AlertFanout.select(AlertFanout.pick, AlertFanout.moment).where(
            AlertFanout.pick.in_(ids)
        ),
        [pick["id"] for pick in picks],
    )
    due = []
    for pick in picks:
        moment = "kickoff" if now >= pick["unlock"] else "publication"
        if (pick["id"], moment) not in done:
            due.append((pick, moment))
    if not due:
        return 0
    subscribers = list(
        AlertSubscription.select(AlertSubscription, User.role, User.plan, User.status)
        .join(User)
        .where(User.status == "active")
    )
    made = _of_picks(
        lambda ids: AlertMessage.select(AlertMessage.subscription, AlertMessage.pick).where(
            AlertMessage.pick.in_(ids)
        ),
        [pick["id"] for pick, _ in due],
    )
    upcoming = {pick["match"]: pick["unlock"] for pick, moment in due if moment == "publication"}
    closed = premium.locked_matches(upcoming, None, now)
    rows = []
    for pick, moment in due:
        hidden = moment == "publication" and premium.pick_locked(pick, closed, pick["match"])
        for subscription in subscribers:
            if (subscription.id, pick["id"]) in made or pick[
                "created_at"
            ] < subscription.created_at:
                continue
            if not subscriptions.wants(
                subscription, pick["league"], pick["market"], pick["rating"]
            ):
                continue
            if not hidden or premium.has_premium(subscription.user):
                rows.append((subscription.id, pick["id"], moment, "pending", 0, now, now))
    # Every column without a null: a row the database refused would be skipped unsaid.
    names = [
        "subscription",
        "pick",
        "moment",
        "status",
        "attempts",
        "next_attempt_at",
        "created_at",
    ]
    marks = [(pick["id"], moment, now) for pick, moment in due]
    with writing():
        insert_rows(AlertMessage, names, rows, skip_taken=True)
        insert_rows(AlertFanout, ["pick", "moment", "done_at"], marks, skip_taken=True)
    return len(rows)


def _claim(now, lease_seconds: float) -> int | None:
    """Lease the message due the longest, and record as failed every message whose lease ran
    out (its worker died while it sent it); the leased message's id, or None."""
    free = AlertMessage.leased_until.is_null()
    with writing():
        AlertMessage.update(
            status="failed", last_error=INTERRUPTED, finished_at=now, leased_until=None
        ).where((AlertMessage.status == "pending") & (AlertMessage.leased_until <= now)).execute()
        found = locked(
            AlertMessage.select(AlertMessage.id)
            .where(
                (AlertMessage.status == "pending") & (AlertMessage.next_attempt_at <= now) & free
            )
            .order_by(AlertMessage.next_attempt_at, AlertMessage.id)
            .limit(1)
        ).scalar()
        if found is None:
            return None
        leased = AlertMessage.update(leased_until=now + timedelta(seconds=lease_seconds)).where(
            (AlertMessage.id == found) & free
        )
        return found if leased.execute() else None


def _job(message_id: int) -> dict | None:
    """The leased message with its subscription, owner, pick, match, teams and league."""
    home, away = Team.alias(), Team.alias()
    row = (
        AlertMessage.select(
            AlertMessage.id,
            AlertMessage.attempts,
            AlertMessage.moment,
            AlertSubscription.id.alias("subscription_id"),
            AlertSubscription.channel,
            AlertSubscription.address,
            User.role,
            User.plan,
            User.status.alias("owner_status"),
            Pick.id.alias("pick_id"),
            Pick.market,
            Pick.line,
            Pick.selection,
            Pick.odds,
            Pick.bookmaker,
            Pick.probability,
            Pick.edge,
            Pick.rating,
            Pick.created_at,
            Match.id.alias("match_id"),
            Match.slug,
            Match.kickoff_at,
            premium.unlock_column().alias("unlock"),
            League.name.alias("league"),
            home.name.alias("home_team"),
            away.name.alias("away_team"),
        )
        .join(AlertSubscription)
        .join(User)
        .switch(AlertMessage)
        .join(Pick)
        .join(Match)
        .join(League)
        .switch(Match)
        .join(home, on=Match.home_team == home.id)
        .switch(Match)
        .join(away, on=Match.away_team == away.id)
        .where(AlertMessage.id == message_id)
        .dicts()
        .get_or_none()
    )
    if row is not None:
        row["unlock"] = Match.kickoff_at.python_value(row["unlock"])
    return row


def _locked_for(job: dict, now) -> bool:
    """Whether the job's pick is locked for its owner at ``now`` (the premium rule)."""
    owner = User(role=job["role"], plan=job["plan"])
    locked_now = premium.locked_matches({job["match_id"]: job["unlock"]}, owner, now)
    return premium.pick_locked(job, locked_now, job["match_id"])


def send(job: dict, settings, now) -> channels.Outcome | None:
    """One try of ``job``; None when it must wait (its pick still locked for its reader)."""
    if job["owner_status"] != "active":
        return channels.Outcome(
            False, f"not sent: its owner's account is {job['owner_status']}", True
        )
    if _locked_for(job, now):
        return None
    if reason := subscriptions.unavailable(job["channel"], settings):
        return channels.Outcome(False, f"not sent: {reason}")
    alert = messages.compose(
        job,
        job["moment"],
        settings["PUBLIC_BASE_URL"].rstrip("/"),
        subscriptions.unsubscribe_url(job["subscription_id"], settings),
    )
    if job["channel"] == "email":
        domain = settings["SMTP_FROM"].rpartition("@")[2].strip("> ") or "localhost"
        return channels.send_email(alert, job["address"], f"<alert-{job['id']}@{domain}>", settings)
    return channels.send_telegram(alert, job["address"], settings)


def next_delay(attempts: int, schedule, outcome: channels.Outcome) -> float | None:
    """Seconds until the next try after ``attempts`` failed tries (None: none is left); a
    ``retry_after`` the far side asked for lengthens it, up to the schedule's longest step."""
    if outcome.final or attempts >= len(schedule):
        return None
    delay = schedule[attempts]
    if outcome.retry_after is not None:
        delay = max(delay, min(outcome.retry_after, max(schedule)))
    return delay


def record(job: dict, outcome: channels.Outcome | None, settings, now) -> str:
    """Store what one try of ``job`` gave, its lease ended; returns the message's status."""
    changes = {"leased_until": None}
    if outcome is None:  # waits for the kick-off that opens its pick; not a try
        changes.update(next_attempt_at=job["unlock"])
        status = "pending"
    else:
        attempts = job["attempts"] + 1
        changes.update(attempts=attempts, last_attempt_at=now, last_error=outcome.error)
        delay = (
            None
            if outcome.sent
            else next_delay(attempts, settings["ALERT_RETRY_SCHEDULE"], outcome)
        )
        if outcome.sent:
            status = "sent"
        elif delay is None:
            status = "failed"
            log.warning("alert %s failed: %s", job["id"], outcome.error)
        else:
            status = "pending"
            changes["next_attempt_at"] = now + timedelta(seconds=delay)
        if status != "pending":
            changes["finished_at"] = now
    changes["status"] = status
    with writing():
        AlertMessage.update(**changes).where(AlertMessage.id == job["id"]).execute()
    return status


def deliver_due(settings, clock=utcnow, pool=None) -> dict:
    """Make the messages due, then send what is due, one at a time, up to :data:`ROUND` of
    them; returns the counts of what happened (``pool`` is the pump's, unused: one at a time
    keeps a dying worker's loss to the one message it was sending)."""
    counts = {"alerts made": fan_out(clock()), "alerts sent": 0, "alerts failed": 0}
    lease = settings["ALERT_TIMEOUT"] * LEASE_TIMEOUTS
    for _ in range(ROUND):
        message_id = _claim(clock(), lease)
        if message_id is None:
            break
        job = _job(message_id)
        if job is None:  # its subscription was deleted meanwhile
            continue
        outcome = send(job, settings, clock())
        status = record(job, outcome, settings, clock())
        if status in ("sent", "failed"):
            counts[f"alerts {status}"] += 1
    return counts
