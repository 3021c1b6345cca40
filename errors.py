"""Domain errors: what went wrong, with its HTTP status and problem name, without Flask.

The services raise these; the one error handler in ``app.py`` turns them into problem+json.
``PROBLEMS`` is the catalogue served at ``GET /problems/<name>`` and documented in OpenAPI.
"""

PROBLEMS: dict[str, tuple[int, str, str]] = {
    # name: (status, title, description)
    "malformed-request": (
        400,
        "Malformed request",
        "The body is not valid JSON (UTF-8, each object naming a member once), or it is JSON but "
        "not an object, or it could not be read as sent (a malformed chunk, or fewer bytes than "
        "its `Content-Length`); or the request line or a header could not be parsed.",
    ),
    "unauthorized": (
        401,
        "Unauthorized",
        "No valid bearer token. This status has an empty body and a `WWW-Authenticate: Bearer` "
        'header, with `error="invalid_token"` when a token was sent but is malformed, badly '
        "signed, expired or belongs to no user; wrong credentials at login answer the same.",
    ),
    "subscription-required": (
        403,
        "Subscription required",
        "The Data API needs a Pro subscription or the admin role.",
    ),
    "role-required": (
        403,
        "Role required",
        "The endpoint needs a role the caller does not have; the detail names it.",
    ),
    "account-suspended": (
        403,
        "Account suspended",
        "The account is suspended: it cannot log in or call protected endpoints.",
    ),
    "not-found": (404, "Not found", "No route, record, slug or operation matches the request."),
    "method-not-allowed": (
        405,
        "Method not allowed",
        "The path exists but not with this method; the `Allow` header lists the methods it takes.",
    ),
    "not-acceptable": (
        406,
        "Not acceptable",
        "The `Accept` header admits none of the media types the answer can have (an export's "
        "`format` decides its type: `text/csv`, `application/json`, `application/x-ndjson`).",
    ),
    "email-taken": (409, "Email taken", "An account with this email (in any letter case) exists."),
    "operation-not-finished": (
        409,
        "Operation not finished",
        "The operation is still queued or running, so it has no result yet.",
    ),
    "operation-failed": (
        409,
        "Operation failed",
        "The operation failed, so it has no result; the detail carries its error.",
    ),
    "match-not-open": (
        409,
        "Match not open",
        "The match is finished or cancelled, so its intelligence can no longer be refreshed.",
    ),
    "last-admin": (
        409,
        "Last admin",
        "The change would leave the service without an active admin: another account is made "
        "an active admin first.",
    ),
    "source-not-configured": (
        409,
        "Source not configured",
        "A data sync of a live source that is unknown or not configured (no base URL, no API "
        "key), or of every source while none is.",
    ),
    "contradiction-not-open": (
        409,
        "Contradiction not open",
        "The contradiction was resolved already: its choice stands (see its `resolvedBy`).",
    ),
    "settled-result-protected": (
        409,
        "Settled result protected",
        "The match's picks were settled on its stored result before the other source disagreed: "
        'a settled result is never changed, so only `"stored"` resolves this contradiction.',
    ),
    "webhook-limit-reached": (
        409,
        "Webhook limit reached",
        "The account already has as many webhook endpoints as it may; delete one first.",
    ),
    "webhook-disabled": (
        409,
        "Webhook disabled",
        "The endpoint is disabled (it answered 410, or a delivery failed its last try): enable it "
        'with PATCH `{"enabled": true}` before testing it or retrying a delivery.',
    ),
    "alert-limit-reached": (
        409,
        "Alert limit reached",
        "The account already has as many alert subscriptions as it may; delete one first.",
    ),
    "alert-channel-unavailable": (
        409,
        "Alert channel unavailable",
        "This deployment does not send alerts by the channel asked for (email needs an SMTP "
        "server, Telegram a bot, and both the service's public address for the unsubscribe "
        "link); the detail says what is missing.",
    ),
    "payload-too-large": (413, "Payload too large", "The request body is larger than 1 MiB."),
    "unsupported-media-type": (
        415,
        "Unsupported media type",
        "The request has a body that is not `application/json`, or one sent content-coded "
        "(a `Content-Encoding` other than `identity`, answered with `Accept-Encoding: identity`).",
    ),
    "validation-error": (
        422,
        "Validation error",
        "A field is missing, of the wrong type, out of bounds or not allowed. `errors` maps each "
        "offending field or parameter, by its own name, to its messages.",
    ),
    "webhook-url-refused": (
        422,
        "Webhook URL refused",
        "The webhook URL cannot be delivered to: it must be `https` (in production), name a host "
        "that resolves, and every address it resolves to must be public (no loopback, private, "
        "link-local, multicast, reserved or cloud metadata address). The detail says why.",
    ),
    "rate-limited": (
        429,
        "Rate limited",
        "A rate-limit policy is exceeded. `Retry-After` gives the seconds to wait.",
    ),
    "quota-exceeded": (
        429,
        "Quota exceeded",
        "The monthly Data API quota is spent. `Retry-After` gives the seconds until it resets.",
    ),
    "too-many-exports": (
        429,
        "Too many exports at once",
        "The account, or the server, is already streaming as many exports as it may at once; "
        "nothing was charged. `Retry-After` gives the seconds to wait.",
    ),
    "internal-error": (
        500,
        "Internal error",
        "Something unexpected went wrong. The log holds the details under the request id.",
    ),
    "service-unavailable": (
        503,
        "Service unavailable",
        "The database cannot be reached. `Retry-After` gives the seconds to wait.",
    ),
    "sign-ins-busy": (
        503,
        "Sign-ins busy",
        "As many sign-ins and registrations as the server hashes passwords for at once are "
        "running, and as many are waiting: this one was refused before its password was read, so "
        "a flood of them never holds the threads that serve everyone else. `Retry-After` gives "
        "the seconds to wait.",
    ),
    "schema-outdated": (
        503,
        "Schema outdated",
        "The database's schema is older than this version of the service: an operator runs "
        "`flask db upgrade` (the release step). `Retry-After` gives the seconds to wait.",
    ),
}


class AppError(Exception):
    """An error a client can act on: a problem name, its status and a human detail."""

    problem = "internal-error"

    def __init__(self, detail=None, *, errors=None, headers=None):
        status, title, description = PROBLEMS[self.problem]
        super().__init__(detail or description)
        self.status = status
        self.title = title
        self.detail = detail or description
        self.errors = errors
        self.headers = headers or {}


class MalformedRequest(AppError):
    """The body is not a JSON object."""

    problem = "malformed-request"


class SubscriptionRequired(AppError):
    """The Data API was called without plan pro or role admin."""

    problem = "subscription-required"

    def __init__(self):
        super().__init__("A Pro subscription or admin role is required.")


class RoleRequired(AppError):
    """The caller's role is not one the endpoint accepts."""

    problem = "role-required"

    def __init__(self, roles):
        names = " or ".join(roles)
        super().__init__(f"The {names} role is required.")


class AccountSuspended(AppError):
    """The account is suspended."""

    problem = "account-suspended"

    def __init__(self):
        super().__init__("This account is suspended.")


class NotFound(AppError):
    """A record the request names does not exist."""

    problem = "not-found"


class EmailTaken(AppError):
    """Registration with an email that is already in use."""

    problem = "email-taken"

    def __init__(self):
        super().__init__("An account with this email already exists.")


class OperationNotFinished(AppError):
    """The result of an operation that is still queued or running."""

    problem = "operation-not-finished"


class OperationFailed(AppError):
    """The result of an operation that failed."""

    problem = "operation-failed"


class MatchNotOpen(AppError):
    """A refresh of a match that is finished or cancelled."""

    problem = "match-not-open"


class LastAdmin(AppError):
    """A change that would suspend or demote the only active admin."""

    problem = "last-admin"


class SourceNotConfigured(AppError):
    """A data sync of a source that is not configured."""

    problem = "source-not-configured"


class ContradictionNotOpen(AppError):
    """A resolution of a contradiction already resolved."""

    problem = "contradiction-not-open"


class SettledResultProtected(AppError):
    """A resolution that would change the result picks were already settled on."""

    problem = "settled-result-protected"


class WebhookLimitReached(AppError):
    """A user asked for one more webhook endpoint than they may have."""

    problem = "webhook-limit-reached"

    def __init__(self, limit):
        super().__init__(f"An account may have at most {limit} webhook endpoints.")


class WebhookDisabled(AppError):
    """A test or retry on a disabled endpoint."""

    problem = "webhook-disabled"

    def __init__(self, endpoint_id, reason):
        super().__init__(f"Webhook endpoint {endpoint_id} is disabled: {reason}")


class WebhookUrlRefused(AppError):
    """A webhook URL that would reach somewhere it must not (or nowhere at all)."""

    problem = "webhook-url-refused"

    def __init__(self, reason):
        super().__init__(f"The webhook URL is refused: {reason}.", errors={"url": [reason]})


class AlertLimitReached(AppError):
    """A user asked for one more alert subscription than they may have."""

    problem = "alert-limit-reached"

    def __init__(self, limit):
        super().__init__(f"An account may have at most {limit} alert subscriptions.")


class AlertChannelUnavailable(AppError):
    """An alert subscription by a channel this deployment does not send by."""

    problem = "alert-channel-unavailable"


class UnsupportedMediaType(AppError):
    """A body that is not JSON."""

    problem = "unsupported-media-type"


class NotAcceptable(AppError):
    """The client's ``Accept`` admits no media type the answer would have."""

    problem = "not-acceptable"


class ValidationFailed(AppError):
    """Input that parsed but breaks a rule (fields named in ``errors``)."""

    problem = "validation-error"


class RateLimited(AppError):
    """A rate-limit policy is exceeded until ``retry_after`` seconds from now."""

    problem = "rate-limited"

    def __init__(self, policy, limit, retry_after):
        super().__init__(
            f"The {policy} policy allows {limit}; retry in {retry_after} s.",
            headers={"Retry-After": str(retry_after)},
        )


class ServiceUnavailable(AppError):
    """The database cannot serve right now; worth trying again in ``retry_after`` seconds."""

    problem = "service-unavailable"

    def __init__(self, retry_after=5):
        super().__init__(
            "The database cannot be reached right now.",
            headers={"Retry-After": str(retry_after)},
        )


class SignInsBusy(AppError):
    """Every password-hashing turn is taken and the queue for them is full."""

    problem = "sign-ins-busy"

    def __init__(self, retry_after=1):
        super().__init__(
            "The server is hashing as many passwords as it may, with as many waiting: try again "
            "in a moment.",
            headers={"Retry-After": str(retry_after)},
        )


class SchemaOutdated(AppError):
    """The database has not applied every migration step of this version (``pending``)."""

    problem = "schema-outdated"

    def __init__(self, pending, retry_after=30):
        super().__init__(
            # The command first: a long list of steps is what a cut detail loses.
            "The database's schema is behind this version of the service: run `flask db "
            f"upgrade` (pending migration steps: {', '.join(pending)}).",
            headers={"Retry-After": str(retry_after)},
        )


class QuotaExceeded(AppError):
    """The monthly Data API quota has no room left until ``retry_after`` seconds from now."""

    problem = "quota-exceeded"

    def __init__(self, what, retry_after, remaining=0):
        room = "is spent" if not remaining else f"has {remaining} left, not enough for this"
        super().__init__(
            f"The monthly {what} quota {room}; it resets at the start of next month (UTC).",
            headers={"Retry-After": str(max(1, int(retry_after)))},
        )


class TooManyExports(AppError):
    """As many export streams as allowed are open already (the caller's, or the process's)."""

    problem = "too-many-exports"

    def __init__(self, whose, limit, retry_after=5):
        super().__init__(
            f"{whose} already streams {limit} export{'s' if limit != 1 else ''} at once, as many "
            f"as it may; retry when one has finished. Nothing was charged.",
            headers={"Retry-After": str(retry_after)},
        )


class InvalidCredentials(Exception):
    """Login with an unknown email or a wrong password (answered as a bare 401)."""


class CommandError(Exception):
    """A CLI command cannot do what was asked; the message says why."""
