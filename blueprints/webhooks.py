"""Webhook endpoints under the Data API: plan `pro` or role `admin`, counted like any Data API
call (the deliveries themselves are not)."""

from flask.views import MethodView

from schemas.webhooks import (
    ENVELOPES,
    EVENT_SUMMARIES,
    DeliveryPageSchema,
    DeliveryQuerySchema,
    DeliverySchema,
    EndpointCreateSchema,
    EndpointListSchema,
    EndpointSchema,
    EndpointUpdateSchema,
    EndpointWithSecretSchema,
)
from services import routes
from services.webhooks import endpoints
from web.access import DATA, current_viewer, now, settings
from web.blueprint import Blueprint
from web.paths import id_param

blp = Blueprint(
    "webhooks",
    __name__,
    url_prefix=routes.WEBHOOKS,
    description="Signed webhooks (Standard Webhooks 1.0) for Pro subscribers and admins: "
    "endpoints, their secrets, tests and deliveries. The events and their payloads are in the "
    "description's `webhooks`.",
    access=DATA,
)

ENDPOINT = id_param("endpoint_id")


@blp.route("")
class Endpoints(MethodView):
    @blp.response(200, EndpointListSchema)
    @blp.doc(operationId="listWebhooks")
    def get(self):
        """The caller's webhook endpoints"""
        return endpoints.listing(current_viewer(), settings())

    @blp.arguments(EndpointCreateSchema)
    @blp.response(201, EndpointWithSecretSchema)
    @blp.problems(409, "webhook-limit-reached")
    @blp.problems(422, "validation-error", "webhook-url-refused")
    @blp.doc(operationId="createWebhook")
    def post(self, body):
        """Register an endpoint; its signing secret is shown this once"""
        return endpoints.create(
            current_viewer(),
            body["url"],
            body["events"],
            body["description"],
            settings(),
            now(),
        )


@blp.route(f"/{ENDPOINT}")
class EndpointById(MethodView):
    @blp.response(200, EndpointSchema)
    @blp.problems(404, "not-found")
    @blp.doc(operationId="getWebhook")
    def get(self, endpoint_id):
        """One of the caller's webhook endpoints"""
        return endpoints.get(current_viewer(), endpoint_id)

    @blp.arguments(EndpointUpdateSchema)
    @blp.response(200, EndpointSchema)
    @blp.problems(404, "not-found")
    @blp.problems(422, "validation-error", "webhook-url-refused")
    @blp.doc(operationId="updateWebhook")
    def patch(self, body, endpoint_id):
        """Change an endpoint's URL, events, description, or enable it again"""
        return endpoints.update(current_viewer(), endpoint_id, body, settings(), now())

    @blp.response(204)
    @blp.problems(404, "not-found")
    @blp.doc(operationId="deleteWebhook")
    def delete(self, endpoint_id):
        """Delete an endpoint and its deliveries"""
        endpoints.delete(current_viewer(), endpoint_id)


@blp.route(f"/{ENDPOINT}/rotate-secret")
class RotateSecret(MethodView):
    @blp.response(200, EndpointWithSecretSchema)
    @blp.problems(404, "not-found")
    @blp.doc(operationId="rotateWebhookSecret")
    def post(self, endpoint_id):
        """A new signing secret (shown this once); the old one also signs for 24 hours"""
        return endpoints.rotate_secret(current_viewer(), endpoint_id, settings(), now())


@blp.route(f"/{ENDPOINT}/test")
class TestEndpoint(MethodView):
    @blp.response(202, DeliverySchema)
    @blp.problems(404, "not-found")
    @blp.problems(409, "webhook-disabled")
    @blp.doc(operationId="sendWebhookTest")
    def post(self, endpoint_id):
        """Send the endpoint a `ping` event; answers its delivery, which the worker sends"""
        return endpoints.test(current_viewer(), endpoint_id, now())


@blp.route(f"/{ENDPOINT}/deliveries")
class Deliveries(MethodView):
    @blp.arguments(DeliveryQuerySchema, location="query")
    @blp.response(200, DeliveryPageSchema)
    @blp.problems(404, "not-found")
    @blp.doc(operationId="listWebhookDeliveries")
    def get(self, query, endpoint_id):
        """An endpoint's deliveries, newest first: status, tries, last answer, next try"""
        return endpoints.deliveries(current_viewer(), endpoint_id, **query)


@blp.route(f"/{ENDPOINT}/deliveries/{id_param('delivery_id')}/retry")
class RetryDelivery(MethodView):
    @blp.response(202, DeliverySchema)
    @blp.problems(404, "not-found")
    @blp.problems(409, "webhook-disabled")
    @blp.doc(operationId="retryWebhookDelivery")
    def post(self, endpoint_id, delivery_id):
        """Send a delivery again at once, with a fresh retry schedule"""
        return endpoints.retry(current_viewer(), endpoint_id, delivery_id, now())


SIGNATURE_HEADERS = [
    {
        "name": "webhook-id",
        "in": "header",
        "required": True,
        "description": "The event's id (`evt_<n>`): the same on every try, so duplicates can be "
        "dropped.",
        "schema": {"type": "string"},
    },
    {
        "name": "webhook-timestamp",
        "in": "header",
        "required": True,
        "description": "Seconds since the epoch when this try was sent; refuse old ones.",
        "schema": {"type": "string"},
    },
    {
        "name": "webhook-signature",
        "in": "header",
        "required": True,
        "description": "`v1,<base64 HMAC-SHA256 of id.timestamp.body>` under the endpoint's "
        "secret, space-separated when two secrets sign (for 24 hours after a rotation).",
        "schema": {"type": "string"},
    },
]

DELIVERY_ANSWERS = {
    "2XX": {"description": "Delivered."},
    "410": {"description": "Gone: the endpoint is disabled and nothing more is sent to it."},
    "429": {
        "description": "Too many requests: the next try waits at least `Retry-After` "
        "(503 likewise)."
    },
    "default": {
        "description": "Anything else (a redirect too, which is never followed, or no answer "
        "within 15 s) is tried again: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h "
        "after each failure; after the last the endpoint is disabled."
    },
}


def document_events(spec) -> None:
    """Each event's payload in the OpenAPI description's top-level ``webhooks`` (3.1)."""
    documented = {}
    for event_type, envelope in ENVELOPES.items():
        name = type(envelope).__name__.removesuffix("Schema")
        spec.components.schema(name, schema=type(envelope))
        documented[event_type] = {
            "post": {
                "summary": EVENT_SUMMARIES[event_type],
                "operationId": f"event_{event_type.replace('.', '_')}",
                # The service calls the subscriber: no bearer token, the body is signed.
                "security": [],
                "parameters": SIGNATURE_HEADERS,
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {"schema": {"$ref": f"#/components/schemas/{name}"}}
                    },
                },
                "responses": DELIVERY_ANSWERS,
            }
        }
    spec.options["webhooks"] = documented
