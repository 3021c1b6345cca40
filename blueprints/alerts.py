"""Pick alerts: a signed-in user's subscriptions under ``/api/me/alerts``, and the one-click
unsubscribe link every message carries (no token: the link is signed)."""

from flask.views import MethodView

from schemas.alerts import (
    AlertCreateSchema,
    AlertListSchema,
    AlertMessagePageSchema,
    AlertSchema,
    UnsubscribeSchema,
)
from schemas.common import PageArgsSchema
from services import routes
from services.alerts import subscriptions
from web import html
from web.access import SIGNED_IN, UNSUBSCRIBE, current_viewer, now, settings
from web.blueprint import Blueprint
from web.paths import id_param

blp = Blueprint(
    "alerts",
    __name__,
    url_prefix=routes.ALERTS,
    description="Pick alerts by email or Telegram for any signed-in user: a message when a pick "
    "in the subscription's leagues, markets and ratings is published, or, for a pick locked "
    "for the subscriber (rated A, on a free plan), when its match kicks off and it unlocks. "
    "Every message carries a one-click unsubscribe link.",
    access=SIGNED_IN,
)

links = Blueprint(
    "unsubscribe",
    __name__,
    url_prefix=routes.UNSUBSCRIBE,
    description="The unsubscribe link of an alert (RFC 8058): `GET` answers what it would end "
    "(a page asking to confirm, for a browser), `POST` ends it. No token: the link is signed.",
    access=UNSUBSCRIBE,
    html_pages=True,
)

SUBSCRIPTION = id_param("subscription_id")

#: The page's policy: the pages' own, with its one form posting back to this service.
FORM_POLICY = html.POLICY.replace("form-action 'none'", "form-action 'self'")


@blp.route("")
class Alerts(MethodView):
    @blp.response(200, AlertListSchema)
    @blp.doc(operationId="listAlerts")
    def get(self):
        """The caller's alert subscriptions"""
        return subscriptions.listing(current_viewer())

    @blp.arguments(AlertCreateSchema)
    @blp.response(201, AlertSchema)
    @blp.problems(409, "alert-limit-reached", "alert-channel-unavailable")
    @blp.doc(operationId="createAlert")
    def post(self, body):
        """Subscribe to pick alerts by email or Telegram"""
        return subscriptions.create(
            current_viewer(),
            body["channel"],
            body["address"],
            body["league_ids"],
            body["markets"],
            body["ratings"],
            settings(),
            now(),
        )


@blp.route(f"/{SUBSCRIPTION}")
class AlertById(MethodView):
    @blp.response(200, AlertSchema)
    @blp.problems(404, "not-found")
    @blp.doc(operationId="getAlert")
    def get(self, subscription_id):
        """One of the caller's alert subscriptions"""
        return subscriptions.get(current_viewer(), subscription_id)

    @blp.response(204)
    @blp.problems(404, "not-found")
    @blp.doc(operationId="deleteAlert")
    def delete(self, subscription_id):
        """End an alert subscription; its messages not yet sent are never sent"""
        subscriptions.delete(current_viewer(), subscription_id)


@blp.route(f"/{SUBSCRIPTION}/messages")
class AlertMessages(MethodView):
    @blp.arguments(PageArgsSchema, location="query")
    @blp.response(200, AlertMessagePageSchema)
    @blp.problems(404, "not-found")
    @blp.doc(operationId="listAlertMessages")
    def get(self, query, subscription_id):
        """A subscription's messages, newest first: status, tries, last failure, next try"""
        return subscriptions.messages(current_viewer(), subscription_id, **query)


PAGE = {200: {"content": {"text/html": {"schema": {"type": "string"}}}}}

#: What a mail client's one-click unsubscribe sends (RFC 8058); any body, or none, does the same.
ONE_CLICK = {
    "required": False,
    "description": "`List-Unsubscribe=One-Click`, as a mail client sends it; ignored.",
    "content": {
        "application/x-www-form-urlencoded": {
            "schema": {
                "type": "object",
                "properties": {"List-Unsubscribe": {"type": "string", "enum": ["One-Click"]}},
            }
        }
    },
}


def _answer(link: dict, token: str):
    """``link`` as JSON, or for a browser as a page (asking to confirm while it is subscribed)."""
    if not html.wants_html():
        return link
    title = "Stop these alerts?" if link["subscribed"] else "Unsubscribed"
    return html.render(
        "unsubscribe.html",
        policy=FORM_POLICY,
        link=link,
        action=routes.unsubscribe(token),
        title=title,
        description="Stop the pick alerts this link was sent with.",
    )


@links.route("/<token>")
class Unsubscribe(MethodView):
    @links.response(200, UnsubscribeSchema)
    @links.doc(responses=PAGE)
    @links.problems(404, "not-found")
    @links.doc(operationId="readUnsubscribeLink")
    def get(self, token):
        """What an unsubscribe link would end (a browser gets a page with a button to confirm)"""
        return _answer(subscriptions.by_link(token, settings()), token)

    @links.response(200, UnsubscribeSchema)
    @links.doc(responses=PAGE, requestBody=ONE_CLICK)
    @links.problems(404, "not-found")
    @links.doc(operationId="unsubscribe")
    def post(self, token):
        """Unsubscribe in one click (RFC 8058's `List-Unsubscribe=One-Click`, any body)"""
        return _answer(subscriptions.unsubscribe(token, settings()), token)
