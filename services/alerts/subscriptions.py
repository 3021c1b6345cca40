"""Alert subscriptions a user manages under ``/api/me/alerts``, and their one-click unsubscribe.

A subscription names the picks its owner wants to hear of (leagues, markets, ratings: an empty
list is every one) and where: an email address or a Telegram chat id. It concerns the picks
published after it is made (see ``services.alerts.outbox``). A subscription belongs to its
owner: another user's is a 404, as if it did not exist.

Every message carries a link that ends its subscription without signing in: the subscription's
id and an HMAC-SHA256 of it under ``JWT_SECRET_KEY`` (so a new key ends the old links; ids are
never given twice, so a link never reaches a later subscription). A link whose subscription is
gone unsubscribes nothing and says so as done: unsubscribing is idempotent (RFC 8058).
"""

import base64
import hashlib
import hmac

from enums import ALERT_SUBSCRIPTIONS_MAX
from errors import AlertChannelUnavailable, AlertLimitReached, NotFound, ValidationFailed
from models import AlertMessage, AlertSubscription, League, User
from services import routes
from services.queries import paginate
from store.database import locked, writing

#: What the unsubscribe signature signs, before the subscription's id (a key used elsewhere
#: signs nothing that reads as this).
TOKEN_CONTEXT = b"sports-pick-service/alert-unsubscribe/"


def unavailable(channel: str, settings) -> str | None:
    """Why this deployment cannot send alerts by ``channel``, or None when it can."""
    if not settings["PUBLIC_BASE_URL"]:
        return "PUBLIC_BASE_URL is not set, so no message could carry its unsubscribe link"
    if channel == "email" and not (settings["SMTP_URL"] and settings["SMTP_FROM"]):
        return "email alerts need SMTP_URL and SMTP_FROM"
    if channel == "telegram" and not settings["TELEGRAM_BOT_TOKEN"]:
        return "Telegram alerts need TELEGRAM_BOT_TOKEN"
    return None


def token(subscription_id: int, secret: str) -> str:
    """The unsubscribe token of ``subscription_id``: ``<id>.<signature>``."""
    return f"{subscription_id}.{_signature(subscription_id, secret)}"


def _signature(subscription_id: int, secret: str) -> str:
    digest = hmac.new(
        secret.encode(), TOKEN_CONTEXT + str(subscription_id).encode(), hashlib.sha256
    ).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def token_subscription(value: str, secret: str) -> int:
    """The subscription id ``value`` was signed for; NotFound when it is no such token."""
    head, _, signature = value.partition(".")
    readable = head.isascii() and head.isdigit() and len(head) <= 10 and head[0] != "0"
    if readable and hmac.compare_digest(
        signature.encode("utf-8", "replace"), _signature(int(head), secret).encode()
    ):
        return int(head)
    raise NotFound("No alert subscription has this unsubscribe link.")


def unsubscribe_url(subscription_id: int, settings) -> str:
    """The absolute unsubscribe link of ``subscription_id`` (``PUBLIC_BASE_URL`` is set where
    alerts are sent: :func:`unavailable`)."""
    base = settings["PUBLIC_BASE_URL"].rstrip("/")
    return base + routes.unsubscribe(token(subscription_id, settings["JWT_SECRET_KEY"]))


def describe(subscription: AlertSubscription) -> dict:
    """The subscription as its owner sees it."""
    return {
        "id": subscription.id,
        "channel": subscription.channel,
        "address": subscription.address,
        "league_ids": subscription.leagues,
        "markets": subscription.markets,
        "ratings": subscription.ratings,
        "created_at": subscription.created_at,
    }


def wants(subscription, league_id: int, market: str, rating: str) -> bool:
    """Whether ``subscription`` (its ``leagues``, ``markets`` and ``ratings``, an empty list
    every one) asks for a pick of ``market`` rated ``rating`` in the league ``league_id``."""
    return (
        (not subscription.leagues or league_id in subscription.leagues)
        and (not subscription.markets or market in subscription.markets)
        and (not subscription.ratings or rating in subscription.ratings)
    )


def held(user) -> list[AlertSubscription]:
    """``user``'s subscriptions, oldest first."""
    return list(
        AlertSubscription.select()
        .where(AlertSubscription.user == user.id)
        .order_by(AlertSubscription.id)
    )


def _own(viewer, subscription_id: int) -> AlertSubscription:
    """The caller's subscription ``subscription_id``, or NotFound (also for another user's)."""
    found = AlertSubscription.get_or_none(
        (AlertSubscription.id == subscription_id) & (AlertSubscription.user == viewer.id)
    )
    if found is None:
        raise NotFound(f"Alert subscription {subscription_id} does not exist.")
    return found


def listing(viewer) -> dict:
    """The caller's subscriptions, oldest first, and how many they may have."""
    return {"items": [describe(row) for row in held(viewer)], "limit": ALERT_SUBSCRIPTIONS_MAX}


def get(viewer, subscription_id: int) -> dict:
    """One of the caller's subscriptions."""
    return describe(_own(viewer, subscription_id))


def create(viewer, channel, address, league_ids, markets, ratings, settings, now) -> dict:
    """Subscribe ``viewer`` to the picks of ``league_ids``, ``markets`` and ``ratings`` (each
    sorted, an empty list for every one) at ``address`` by ``channel``."""
    if reason := unavailable(channel, settings):
        raise AlertChannelUnavailable(f"This service sends no {channel} alerts: {reason}.")
    league_ids = sorted(set(league_ids))
    known = {row.id for row in League.select(League.id).where(League.id.in_(league_ids))}
    if unknown := [league_id for league_id in league_ids if league_id not in known]:
        message = f"No league has the id {', '.join(map(str, unknown))}."
        raise ValidationFailed(message, errors={"leagueIds": [message]})
    with writing():
        # The owner's row, held: concurrent subscriptions of one owner count one after another.
        locked(User.select(User.id).where(User.id == viewer.id)).execute()
        held = AlertSubscription.select().where(AlertSubscription.user == viewer.id).count()
        if held >= ALERT_SUBSCRIPTIONS_MAX:
            raise AlertLimitReached(ALERT_SUBSCRIPTIONS_MAX)
        made = AlertSubscription.create(
            user=viewer.id,
            channel=channel,
            address=address,
            leagues=league_ids,
            markets=sorted(set(markets)),
            ratings=sorted(set(ratings)),
            created_at=now,
        )
    return describe(made)


def delete(viewer, subscription_id: int) -> None:
    """End one of the caller's subscriptions; its messages not yet sent are never sent."""
    _own(viewer, subscription_id).delete_instance()


def messages(viewer, subscription_id: int, page: int, page_size: int) -> dict:
    """A page of one of the caller's subscriptions' messages, newest first: the pick and moment
    each is about, its status, tries, last failure and next try."""
    _own(viewer, subscription_id)
    query = (
        AlertMessage.select(
            AlertMessage.id,
            AlertMessage.pick.alias("pick_id"),
            AlertMessage.moment,
            AlertMessage.status,
            AlertMessage.attempts,
            AlertMessage.last_attempt_at,
            AlertMessage.last_error,
            AlertMessage.next_attempt_at,
            AlertMessage.created_at,
            AlertMessage.finished_at,
        )
        .where(AlertMessage.subscription == subscription_id)
        .order_by(AlertMessage.id.desc())
        .dicts()
    )
    found = paginate(query, page, page_size)
    for item in found["items"]:
        if item["status"] != "pending":
            item["next_attempt_at"] = None
    return found


def by_link(value: str, settings) -> dict:
    """What an unsubscribe link names: its subscription's id, channel and address while it
    exists (``subscribed``), else only that it is gone; NotFound for a link that is no link."""
    subscription_id = token_subscription(value, settings["JWT_SECRET_KEY"])
    found = AlertSubscription.get_or_none(AlertSubscription.id == subscription_id)
    return {
        "id": subscription_id,
        "subscribed": found is not None,
        "channel": found.channel if found else None,
        "address": found.address if found else None,
    }


def unsubscribe(value: str, settings) -> dict:
    """End the subscription an unsubscribe link names (done already: nothing to do)."""
    subscription_id = token_subscription(value, settings["JWT_SECRET_KEY"])
    AlertSubscription.delete().where(AlertSubscription.id == subscription_id).execute()
    return {"id": subscription_id, "subscribed": False, "channel": None, "address": None}
