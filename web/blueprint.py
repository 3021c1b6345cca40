"""The Blueprint every endpoint group uses: flask-smorest's, with access rules, cached answers,
documented problems and our request parser."""

from http import HTTPStatus

import flask_smorest

from errors import PROBLEMS
from schemas.common import ProblemSchema
from web import caching
from web.access import guard
from web.arguments import RequestParser
from web.problems import PROBLEM_JSON, RETRY_AFTER


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
