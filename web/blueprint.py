"""The Blueprint every endpoint group uses: flask-smorest's, with access rules, cached answers,
documented problems and our request parser."""

from http import HTTPStatus

import flask_smorest

from errors import PROBLEMS
from schemas.problems import ProblemSchema
from web import caching
from web.access import guard
from web.arguments import RequestParser, refuse_query
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
        """As flask-smorest's, composing what runs for each method of the view: its access rule
        (the blueprint's when it names none), then its cached answers, then the view as its
        own decorators made it (argument parsing, the response's dump). A view without query
        arguments refuses any query parameter (:func:`web.arguments.refuse_query`) as webargs
        refuses an unknown one where there are some: before the view runs, so a refused
        spelling is never an answer of its own in the cache. A view marked :meth:`page` ignores
        the query instead, for the requests its mark names, and its answers are cached without
        it, so no spelling is an answer of its own either.

        So a cache hit costs the access rule, one rate-limit hit, the data version and the
        stored bytes: it is served before webargs parses anything, and the documentation
        decorators (``doc``, ``alt_response``, ``problems``, ``access``, ``cached``) add
        nothing at run time. An anonymous caller's hit on a public view is served before Flask
        even dispatches the request (:mod:`web.fastpath`).
        """
        register = super().route(rule, parameters=parameters, **options)

        def decorator(view):
            for method in view.methods:
                name = method.lower()
                handler = getattr(view, name)
                if getattr(handler, "access_rule", None) is None and self.default_access:
                    handler = self.access(self.default_access)(handler)
                page = getattr(handler, "page", None)
                if not _reads_query(handler):
                    if 422 not in _documented_statuses(handler) and page is not _always:
                        handler = self.problems(422, "validation-error")(handler)
                    handler = refuse_query(self.ARGUMENTS_PARSER, handler, page)
                elif page is not None:
                    raise TypeError(f"{view.__name__}.{name}: a page reads no query arguments")
                runtime, rule = handler, getattr(handler, "access_rule", None)
                if getattr(handler, "cache_variant", False) is not False:
                    own = getattr(handler, "cache_own", None)
                    if own is not None and (rule is None or rule.token != "required"):
                        raise TypeError(f"{view.__name__}.{name}: an own answer needs a token")
                    runtime = caching.cached(runtime, handler.cache_variant, rule, own, page)
                if rule is not None:
                    runtime = guard(rule, runtime)
                setattr(view, name, runtime)
            return register(view)

        return decorator

    def alt_response(self, *args, **kwargs):
        """As flask-smorest's, documenting only: nothing of it runs at request time."""
        return _documenting(super().alt_response(*args, **kwargs))

    @staticmethod
    def doc(**kwargs):
        """As flask-smorest's, documenting only: nothing of it runs at request time."""
        return _documenting(flask_smorest.Blueprint.doc(**kwargs))

    def access(self, rule):
        """Put a view behind ``rule``: documented here, enforced by :meth:`route` first of all
        (before arguments are parsed or an answer is looked up)."""

        def decorator(view):
            if rule.token != "none":
                view = self.alt_response(401, response=HTTPStatus(401).name)(view)
            for status, names in rule.problems.items():
                view = self.problems(status, *names)(view)
            view = self.doc(security=rule.security, description=rule.summary)(view)
            view.access_rule = rule
            return view

        return decorator

    @staticmethod
    def page(when=None):
        """Mark a view (of no query arguments) as a page for people or crawlers: a query
        parameter, which only a link's decoration can be (``utm_source``, ``fbclid``), is
        ignored rather than refused, and left out of the answer cache's key. ``when()`` tells
        the requests that ask for the page (``web.html.wants_html`` where the same path answers
        JSON too, which keeps its 422); without it, every request."""

        def decorator(view):
            view.page = when or _always
            return view

        return decorator

    def cached(self, variant=None, own=None):
        """Serve the view's 200 answers from the answer cache, with a strong ``ETag`` (answering
        ``If-None-Match`` with 304) and ``Cache-Control``; see :mod:`web.caching`.

        Placed anywhere among the view's decorators: :meth:`route` looks answers up before the
        arguments are parsed. ``variant`` names a representation chosen from the request (JSON
        or HTML). ``own(viewer, now)``, for a view answering from the caller's own data, makes
        each caller's answer their own, kept while what it gives (that data) is unchanged.
        """

        def decorator(view):
            view = self.alt_response(
                304, description="Not modified: the `ETag` sent in `If-None-Match` still holds."
            )(view)
            view.cache_variant = variant
            view.cache_own = own
            return view

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


def _always() -> bool:
    """A view that is a page for every request (:meth:`Blueprint.page` without ``when``)."""
    return True


def _reads_query(handler) -> bool:
    """Whether the view ``handler`` parses query arguments (as its documentation lists them)."""
    arguments = getattr(handler, "_apidoc", {}).get("arguments", {})
    return any(each["in"] == "query" for each in arguments.get("parameters", ()))


def _documented_statuses(handler) -> set:
    """The statuses the view ``handler`` documents among its responses."""
    return set(getattr(handler, "_apidoc", {}).get("response", {}).get("responses", {}))


def _documenting(decorator):
    """``decorator`` (one of flask-smorest's documentation decorators) applied for its
    documentation alone: the function keeps its own code, with the documentation merged in."""

    def apply(func):
        func._apidoc = decorator(func)._apidoc
        return func

    return apply
