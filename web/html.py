"""Server-rendered HTML pages: when a client wants one, and the headers every page carries.

The pages are self-contained: their only style is inline and allowed by its hash, and they run
no script (the JSON-LD block is data, not code), so the Content-Security-Policy denies the rest.
"""

import base64
import hashlib

from flask import make_response, render_template, request

#: The pages' styles.
CSS = (
    "body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;"
    "color:#1b1b1b}h1{font-size:1.5rem}table{width:100%;border-collapse:collapse}"
    "td{padding:.35rem .25rem}meter{width:100%;height:1.1rem}.pick{border:1px solid #bbb;"
    "padding:.75rem;margin-top:1rem}.muted{color:#555}"
)
CSS_SOURCE = "sha256-" + base64.b64encode(hashlib.sha256(CSS.encode()).digest()).decode()
#: The pages' policy: nothing but their own hashed style (the JSON-LD block is data, never run).
POLICY = (
    f"default-src 'none'; style-src '{CSS_SOURCE}'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)

#: The docs page's policy: Swagger UI's script and styles from this service only, its calls to
#: this service only (its images include data: URIs).
DOCS_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)


def wants_html() -> bool:
    """Whether the client prefers HTML to JSON (a browser does); JSON when it does not say."""
    best = request.accept_mimetypes.best_match(["application/json", "text/html"])
    return best == "text/html"


def render(template: str, status: int = 200, policy: str = POLICY, **context):
    """A page as a response: the template rendered with the shared styles, as HTML under its
    Content-Security-Policy."""
    headers = {"Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": policy}
    return make_response(render_template(template, css=CSS, **context), status, headers)
