"""Who may call what: access rules as one decorator per view, in the order the contract gives.

token (401) → role, plan, status (403) → rate limit (429) → quota (429) → the view, whose
argument parsing gives 400/415/422 and whose lookups give 404/409.
"""

from dataclasses import dataclass
from functools import wraps
from http import HTTPStatus

import flask_smorest
from flask import current_app, g, request
from flask_jwt_extended import get_current_user, verify_jwt_in_request
from flask_limiter.util import get_remote_address
from webargs import core
from webargs.flaskparser import FlaskParser, is_json_request

import caching
import ratelimits
from enums import ID_RANGE
from errors import (
    PROBLEMS,
    AccountSuspended,
    MalformedRequest,
    RoleRequired,
    SubscriptionRequired,
    UnsupportedMediaType,
)
from extensions import PROBLEM_JSON, RETRY_AFTER
from schemas.common import ProblemSchema
from services import premium, quotas

#: Rate-limit policy → the configuration key holding its limit.
POLICY_SETTINGS = {
    "public-read": "RATELIMIT_PUBLIC",
    "auth": "RATELIMIT_AUTH",
    "register": "RATELIMIT_REGISTER",
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

    def admit(self):
        """Authenticate and authorise the request; the caller (or None when anonymous)."""
        if self.token == "none":
            return None
        if self.token == "optional" and "Authorization" not in request.headers:
            return None  # tokens travel only in this header: an anonymous reader
        normalise_bearer_scheme()
        if verify_jwt_in_request(optional=self.token == "optional") is None:
            return None
        user = get_current_user()
        if user.status == "suspended":
            if self.token == "optional":
                return None  # a public endpoint: a suspended account reads as anonymous
            raise AccountSuspended()
        if self.roles and user.role not in self.roles:
            raise RoleRequired(self.roles)
        if self.pro_or_admin and not premium.has_premium(user):
            raise SubscriptionRequired()
        return user

    def rate_key(self):
        """The rate-limit counter this request adds to."""
        if self.per == "user":
            return f"user:{g.viewer.id}"
        return f"ip:{get_remote_address()}"

    def limit_value(self):
        """This policy's limit, from configuration at request time."""
        return current_app.config[POLICY_SETTINGS[self.policy]]

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
    "Anyone; a valid bearer token unlocks premium fields", "optional", "public-read", "ip"
)
REGISTER = Rule("Anyone", "none", "register", "ip")
LOGIN = Rule("Anyone", "none", "auth", "ip")
SIGNED_IN = Rule("Any signed-in active user", "required", "auth", "user")
DATA = Rule(PRO_OR_ADMIN, "required", "auth", "user", pro_or_admin=True, quota=True)
DATA_USAGE = Rule(PRO_OR_ADMIN, "required", "auth", "user", pro_or_admin=True)
OPS = Rule("Role `admin` or `operator`", "required", "auth", "user", roles=("admin", "operator"))
ADMIN = Rule("Role `admin`", "required", "auth", "user", roles=("admin",))


def normalise_bearer_scheme():
    """Spell the ``Authorization`` scheme ``Bearer`` as flask-jwt-extended expects it: HTTP
    auth schemes are case-insensitive (RFC 9110 11.1), so ``bearer …`` is the same token."""
    scheme, _, credentials = request.environ.get("HTTP_AUTHORIZATION", "").strip().partition(" ")
    if scheme != "Bearer" and scheme.lower() == "bearer":
        request.environ["HTTP_AUTHORIZATION"] = f"Bearer {credentials.strip()}"


def guard(rule, view):
    """``view`` behind ``rule``: admit the caller, then the rate limit, then the quota."""

    @wraps(view)
    def guarded(*args, **kwargs):
        g.viewer = rule.admit()
        ratelimits.hit(rule.policy, rule.limit_value(), rule.rate_key())
        if rule.quota and request.method != "HEAD":  # HEAD sends no data, so it is not charged
            quotas.consume_request(g.viewer)
        return view(*args, **kwargs)

    return guarded


def id_param(name: str) -> str:
    """A path segment for a positive int32 id called ``name``: anything else does not route."""
    low, high = ID_RANGE
    return f"<int(min={low}, max={high}):{name}>"


def current_viewer():
    """The user calling the current request, or None when anonymous."""
    return g.get("viewer")


class RequestParser(FlaskParser):
    """webargs' parser, answering our problems: 415 for a non-JSON body, 400 for a non-object."""

    def _raw_load_json(self, req):
        body = req.get_data(cache=True)
        limit = req.max_content_length
        if req.content_length is None and limit is not None and len(body) >= limit:
            # A streamed (chunked) body stops being read at the limit without a word; one more
            # read answers werkzeug's 413 if anything is left.
            req.stream.read(1)
        if not body:
            return core.missing
        if not is_json_request(req):
            raise UnsupportedMediaType(
                f"The body must be application/json, not {req.mimetype or 'untyped'}."
            )
        try:
            data = core.parse_json(body)
        except RecursionError as exc:
            raise MalformedRequest("The body is nested too deeply.") from exc
        if not isinstance(data, dict):
            raise MalformedRequest("The body must be a JSON object.")
        return data

    def _handle_invalid_json_error(self, error, req, *args, **kwargs):
        raise MalformedRequest("The body is not valid JSON.")


class Blueprint(flask_smorest.Blueprint):
    """flask-smorest's Blueprint with access rules, cached answers and our request parser.

    ``access`` is the rule of every view of the blueprint that does not name its own, so no
    endpoint is ever left without one. A blueprint with ``html_pages`` serves pages to browsers:
    its errors are small pages too for a client that prefers HTML.
    """

    ARGUMENTS_PARSER = RequestParser()

    def __init__(self, *args, access=None, html_pages=False, **kwargs):
        super().__init__(*args, **kwargs)
        self.default_access = access
        self.html_pages = html_pages

    def route(self, rule, *, parameters=None, **options):
        """As flask-smorest's, applying the blueprint's access rule to views without one."""
        register = super().route(rule, parameters=parameters, **options)

        def decorator(view):
            if self.default_access is not None:
                for method in view.methods:
                    handler = getattr(view, method.lower())
                    if not hasattr(handler, "access_rule"):
                        setattr(view, method.lower(), self.access(self.default_access)(handler))
            return register(view)

        return decorator

    def access(self, rule):
        """Decorate a view with ``rule``, at run time and in the OpenAPI description."""

        def decorator(view):
            guarded = guard(rule, view)
            if rule.token != "none":
                guarded = self.alt_response(401, response=HTTPStatus(401).name)(guarded)
            for status, names in rule.problems.items():
                guarded = self.problems(status, *names)(guarded)
            guarded = self.doc(security=rule.security, description=rule.summary)(guarded)
            guarded.access_rule = rule
            return guarded

        return decorator

    def cached(self, variant=None):
        """Serve the view's 200 answers from the answer cache, with a strong ``ETag`` (answering
        ``If-None-Match`` with 304) and ``Cache-Control``; see :mod:`caching`.

        Goes between ``arguments`` (the key includes the parsed arguments) and ``response``.
        ``variant`` names a representation chosen from the request (JSON or HTML).
        """

        def decorator(view):
            answered = caching.cached(view, variant)
            return self.alt_response(
                304, description="Not modified: the `ETag` sent in `If-None-Match` still holds."
            )(answered)

        return decorator

    def problems(self, status, *names):
        """Document that the view may answer ``status`` with these problem types."""
        lines = [f"`{name}`: {PROBLEMS[name][2]}" for name in names]
        headers = {"Retry-After": RETRY_AFTER} if status in (429, 503) else None
        return self.alt_response(
            status,
            schema=ProblemSchema,
            content_type=PROBLEM_JSON,
            description="  \n".join(lines),
            headers=headers,
        )

    def arguments(self, schema, *, location="json", **kwargs):
        """As flask-smorest's, and a JSON body also documents what a bad body answers."""
        decorator = super().arguments(schema, location=location, **kwargs)
        if location != "json":
            return decorator

        def with_body_errors(view):
            documented = decorator(view)
            for status, name in BODY_PROBLEMS.items():
                documented = self.problems(status, name)(documented)
            return documented

        return with_body_errors


#: What a JSON body can get wrong before its fields are even read.
BODY_PROBLEMS = {
    400: "malformed-request",
    413: "payload-too-large",
    415: "unsupported-media-type",
    422: "validation-error",
}
