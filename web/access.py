"""Who may call what: access rules as one decorator per view, in the order the contract gives.

token (401) → role, plan, status (403) → rate limit (429) → quota (429) → the view, whose
argument parsing gives 400/415/422 and whose lookups give 404/409. The rules are enforced by
admission (:mod:`web.admission`), the step the fast path takes too.
"""

from dataclasses import dataclass
from functools import partial, wraps

from flask import current_app, request
from flask_jwt_extended import get_current_user, get_jwt, verify_jwt_in_request

from errors import (
    AccountSuspended,
    RoleRequired,
    SubscriptionRequired,
)
from services.market import premium
from web import admission, client_keys, html, sessions

#: Rate-limit policy → the configuration key holding its limit.
POLICY_SETTINGS = {
    "public-read": "RATELIMIT_PUBLIC",
    "auth": "RATELIMIT_AUTH",
    "register": "RATELIMIT_REGISTER",
    "data": "RATELIMIT_DATA",
    "tiles": "RATELIMIT_TILES",
}


@dataclass(frozen=True)
class Rule:
    """One row of the access table: the token it needs, who passes, how it is counted."""

    who: str  # for the OpenAPI description
    token: str  # "none": never read; "optional": if sent, must be valid; "required"
    policy: str  # a key of POLICY_SETTINGS
    per: str  # "ip" or "user": what the rate limit counts by
    roles: tuple[str, ...] = ()  # roles allowed; empty means any
    pro_or_admin: bool = False
    quota: bool = False  # counts against the monthly Data API quota

    def __post_init__(self):
        if self.per == "user" and self.token != "required":
            raise ValueError(f"{self.who}: a limit counted per user needs a required token")

    def authorise(self, user):
        """The caller this rule admits for ``user``, signed in with a valid token: the user, or
        None when it reads as anonymous; AccountSuspended, RoleRequired or SubscriptionRequired
        when it may not call at all."""
        if user.status == "suspended":
            if self.token == "optional":
                return None  # a public endpoint: a suspended account reads as anonymous
            raise AccountSuspended()
        if self.roles and user.role not in self.roles:
            raise RoleRequired(self.roles)
        if self.pro_or_admin and not premium.has_premium(user):
            raise SubscriptionRequired()
        return user

    def rate_key(self, viewer, remote_addr, config) -> str:
        """The rate-limit counter a request of ``viewer`` from ``remote_addr`` adds to under
        ``config``: the user's, or the client address's (:func:`web.client_keys.client_key`)."""
        if self.per == "user":
            return f"user:{viewer.id}"
        return client_keys.client_key(remote_addr, config["RATELIMIT_IPV6_PREFIX"])

    def limit_value(self, config) -> str:
        """This policy's limit in ``config``, read at request time."""
        return config[POLICY_SETTINGS[self.policy]]

    @property
    def security(self):
        """OpenAPI security requirement."""
        if self.token == "none":
            return []
        if self.token == "optional":
            return [{}, {"bearerAuth": []}]
        return [{"bearerAuth": []}]

    @property
    def problems(self):
        """The problems (status → names) this rule can answer before the view runs."""
        found = {}
        if self.token == "required":
            found[403] = ["account-suspended"]
            if self.roles:
                found[403].append("role-required")
            if self.pro_or_admin:
                found[403].append("subscription-required")
        found[429] = ["rate-limited", "quota-exceeded"] if self.quota else ["rate-limited"]
        return found

    @property
    def summary(self):
        """A sentence for the OpenAPI description of each endpoint."""
        counted = "client IP" if self.per == "ip" else "user"
        text = f"**Access:** {self.who}. **Rate limit:** `{self.policy}`, counted per {counted}."
        if self.quota:
            text += " Counts 1 against the monthly Data API request quota."
        return text


PRO_OR_ADMIN = "Plan `pro` or role `admin`"

PUBLIC = Rule(
    "Anyone; a valid bearer token unlocks premium fields. A sent `Authorization` header must "
    "hold one: another scheme, a token without `Bearer` or an invalid token is a 401",
    "optional",
    "public-read",
    "ip",
)
REGISTER = Rule("Anyone", "none", "register", "ip")
# The ledger's tiles and the bulk answers an audit reads beside them: a thousand requests for a
# season, each cacheable (a CDN may front them), under a generous limit of their own.
TILES = Rule("Anyone", "none", "tiles", "ip")
LOGIN = Rule("Anyone", "none", "auth", "ip")
# An alert's unsubscribe link: no token (it is followed from an email or a chat), signed.
UNSUBSCRIBE = Rule("Anyone holding the signed link an alert carries", "none", "public-read", "ip")
SIGNED_IN = Rule("Any signed-in active user", "required", "auth", "user")
# The Data API pages and exports by the hundred: a policy of its own, sized for that, with the
# monthly quota as the real bound; logins and the other signed-in endpoints keep ``auth``.
DATA = Rule(PRO_OR_ADMIN, "required", "data", "user", pro_or_admin=True, quota=True)
DATA_USAGE = Rule(PRO_OR_ADMIN, "required", "data", "user", pro_or_admin=True)
OPS = Rule("Role `admin` or `operator`", "required", "auth", "user", roles=("admin", "operator"))
ADMIN = Rule("Role `admin`", "required", "auth", "user", roles=("admin",))


def normalise_bearer_scheme():
    """Spell the ``Authorization`` scheme ``Bearer`` as flask-jwt-extended expects it: HTTP
    auth schemes are case-insensitive (RFC 9110 11.1), so ``bearer …`` is the same token."""
    scheme, _, credentials = request.environ.get("HTTP_AUTHORIZATION", "").strip().partition(" ")
    if scheme != "Bearer" and scheme.lower() == "bearer":
        request.environ["HTTP_AUTHORIZATION"] = f"Bearer {credentials.strip()}"


def guard(rule, view):
    """``view`` behind ``rule``: admitted first (the caller, the rate limit, the quota)."""

    @wraps(view)
    def guarded(*args, **kwargs):
        app = current_app._get_current_object()
        admission.admit(app, request.environ, rule, now(), partial(verified, rule), request.method)
        return view(*args, **kwargs)

    return guarded


def verified(rule):
    """The user flask-jwt-extended verifies the request's token for, or None when it reads as
    anonymous (an optional token on an HTML page, where a browser sends what a
    password-protected proxy in front asked for); a 401 for a bad or missing one. A verified
    token is remembered, so the next request with it is read back without decoding it."""
    authorization = request.headers.get("Authorization")
    normalise_bearer_scheme()
    # A header holding no bearer token (another scheme, a token without one) is a client's
    # mistake to surface, as an invalid token is: a 401. Except on the HTML pages.
    if verify_jwt_in_request(optional=rule.token == "optional" and html.page_request()) is None:
        return None
    sessions.remember(current_app._get_current_object(), authorization, get_jwt())
    return get_current_user()


def current_viewer():
    """The user calling the current request, or None when anonymous."""
    return admission.of(request.environ).viewer


def settings():
    """The app's settings, as the services take them."""
    return current_app.config


def now():
    """The current time by the app's clock (see ``create_app``)."""
    return current_app.extensions["clock"]()


def started_at() -> float:
    """When this process's app was made (``time.monotonic()``)."""
    return current_app.extensions["started_at"]
