"""Request parsing: webargs' parser answering our problems for a body it cannot read, and
refusing a query parameter no endpoint reads (a page for browsers ignores it instead)."""

import json
import sys
from functools import wraps

from flask import request
from marshmallow import RAISE, Schema
from webargs import core
from webargs.flaskparser import FlaskParser, is_json_request

from errors import MalformedRequest, UnsupportedMediaType
from schemas.text import DuplicateName, load_json
from web.problems import clipped


class RequestParser(FlaskParser):
    """webargs' parser, answering our problems: 415 for a body that is not JSON or that is
    content-coded, 400 for a non-object.

    A query parameter the endpoint does not know is a 422 naming it, as an unknown member of a
    body is: ignored, each spelling of a request would be an answer of its own to compute and
    cache (see :func:`refuse_query`).
    """

    DEFAULT_UNKNOWN_BY_LOCATION = {
        **FlaskParser.DEFAULT_UNKNOWN_BY_LOCATION,
        "query": RAISE,
        "querystring": RAISE,
    }

    def _raw_load_json(self, req):
        body = req.get_data(cache=True)
        limit = req.max_content_length
        if req.content_length is None and limit is not None and len(body) >= limit:
            # A streamed (chunked) body stops being read at the limit without a word; one more
            # read answers werkzeug's 413 if anything is left.
            req.stream.read(1)
        if req.content_length is not None and len(body) < req.content_length:
            # gunicorn hands over what came before the client closed its side, as if complete.
            raise MalformedRequest(
                f"The body ended after {len(body):,} of the {req.content_length:,} bytes its "
                "Content-Length announced."
            )
        if not body:
            return core.missing
        if not is_json_request(req):
            raise UnsupportedMediaType(
                f"The body must be application/json, not {clipped(req.mimetype) or 'untyped'}."
            )
        coding = req.headers.get("Content-Encoding", "").strip()
        if coding and coding.lower() != "identity":
            # Read as it came, a gzip body is not JSON: say why (RFC 9110, 15.5.16).
            raise UnsupportedMediaType(
                f"The body must be sent as it is, not content-coded ({clipped(coding)}).",
                headers={"Accept-Encoding": "identity"},
            )
        try:
            data = load_json(body.decode())  # JSON is UTF-8 (RFC 8259), never guessed
        except RecursionError as exc:
            raise MalformedRequest("The body is nested too deeply.") from exc
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise MalformedRequest("The body is not valid JSON.") from exc
        except DuplicateName as exc:
            raise MalformedRequest(f"The body names {clipped(exc.args[0])!r} twice.") from exc
        except ValueError as exc:  # Python's limit on the digits of an integer it converts
            raise MalformedRequest(
                "The body holds a number too long to read "
                f"(more than {sys.get_int_max_str_digits():,} digits)."
            ) from exc
        if not isinstance(data, dict):
            raise MalformedRequest("The body must be a JSON object.")
        return data


class NoArguments(Schema):
    """The query of an endpoint that reads none: every parameter is unknown."""


def refuse_query(parser: RequestParser, view, page=None):
    """``view``, for an endpoint without query arguments, answering a request that sends some
    with the 422 an unknown parameter gets where there are arguments (naming each).

    ``page()``, when given, tells whether the request asks for a page for people (HTML, the
    sitemap, robots.txt): a page ignores the query instead, since links to it carry what
    campaigns and social sites append (``?utm_source=newsletter``, ``?fbclid=…``), and the
    answer cache keys it without its query (:func:`web.caching.request_key`)."""

    @wraps(view)
    def refusing(*args, **kwargs):
        if request.args and not (page is not None and page()):
            parser.parse(NoArguments(), request, location="query")
        return view(*args, **kwargs)

    return refusing
