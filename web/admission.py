"""Admission: the one step a request behind an access rule passes before its answer, on the full
path (:func:`web.access.guard`) and on the fast path (:mod:`web.fastpath`) alike, in the order
the contract gives: who calls (401), whether the rule lets them (403), one hit on the rule's
rate limit (429), the monthly quota (429). Then, for an answer stored in the answer cache, the
version it must have been made at; and the rate-limit headers of the answer. Each rule and each
of these headers is written here, or in what this calls, once.

What admission decided is kept in the request's WSGI environ (:data:`ADMISSION`): a request the
fast path hands over to the full path (an answer stored at another data version, a limit or a
quota that refuses, a failure) is taken over as it stands, never identified, counted or
charged a second time.
"""

from dataclasses import dataclass

from services.accounts import quotas
from web import ratelimits, sessions, versions

#: Where a request keeps its :class:`Admission`.
ADMISSION = "picks.admission"


@dataclass
class Admission:
    """What admission decided for a request under ``rule``: its caller (None when anonymous),
    the hit on its rate limit (None with the limits off), whether its quota was charged."""

    rule: object
    viewer: object = None
    counted: ratelimits.Counted | None = None
    charged: bool = False

    def version(self, app, own, now):
        """The version an answer stored with ``own`` (see :class:`web.caching.Entry`) must have
        been made at to be served to this caller now: their own (``own(viewer, now)``), or the
        data version, found through the rate-limit hit (on Redis, read with it)."""
        return versions.current(app, self.counted) if own is None else own(self.viewer, now)

    def rate_limit_headers(self, app) -> list[tuple[str, str]]:
        """Where the caller stands against the rate limit the request was counted on."""
        return ratelimits.header_items(app, self.counted)


def admit(app, environ, rule, now, verify, method="GET") -> Admission:
    """Admit the request of ``environ`` under ``rule`` at ``now``, or raise the problem that
    refuses it: the caller (:func:`caller`, with ``verify``), one hit on the rule's rate limit,
    then, for a rule that charges one, a request of the caller's quota (a HEAD is refused as its
    GET would be, but sends no data, so it is not charged). What an earlier call decided for
    the same request and rule stands."""
    admission = environ.get(ADMISSION)
    if admission is None or admission.rule is not rule:
        viewer = caller(app, rule, environ.get("HTTP_AUTHORIZATION"), verify)
        admission = environ[ADMISSION] = Admission(rule, viewer)
    if admission.counted is None:
        key = rule.rate_key(admission.viewer, environ.get("REMOTE_ADDR"), app.config)
        admission.counted = ratelimits.count(app, rule.policy, rule.limit_value(app.config), key)
        environ[ratelimits.REPORTED] = admission.counted
    if admission.counted is not None and not admission.counted.allowed:
        raise ratelimits.refused(admission.counted)
    if rule.quota and method == "HEAD":
        quotas.check_request(admission.viewer, app.config, now)
    elif rule.quota and not admission.charged:
        quotas.consume_request(admission.viewer, app.config, now)
        admission.charged = True
    return admission


def caller(app, rule, authorization, verify):
    """The caller ``rule`` admits for a request sending ``authorization`` (None: no such
    header): None when the rule reads no token, when none is sent where one is optional, or
    when the token's caller reads as anonymous; else the user the token names.

    A token verified before is read back (its account read now); any other is given to
    ``verify()``, which answers the user, or None for an anonymous reader, or raises: the full
    path's verifies it with flask-jwt-extended (a 401 for a bad or missing token), the fast
    path's hands the request over. AccountSuspended, RoleRequired or SubscriptionRequired when
    the user may not call (:meth:`web.access.Rule.authorise`)."""
    if rule.token == "none" or (rule.token == "optional" and authorization is None):
        return None  # tokens travel only in this header: an anonymous reader
    claims = sessions.remembered_claims(app, authorization)
    user = sessions.caller(claims) if claims else None
    if user is None:  # not verified before, or its account changed since
        user = verify()
    return None if user is None else rule.authorise(user)


def of(environ) -> Admission:
    """What admission decided for the request of ``environ`` (an anonymous caller, uncounted,
    before it ran)."""
    return environ.get(ADMISSION) or Admission(None)
