"""Server-rendered HTML pages: when a client wants one, and the headers every page carries.

The pages are self-contained: their only style is inline and allowed by its hash, and they run
no script (the JSON-LD block is data, not code), so the Content-Security-Policy denies the rest.
"""

import base64
import hashlib

from flask import current_app, make_response, render_template, request
from jinja2 import BytecodeCache

from web.charts import signed
from web.links import base_url

#: The pages' styles (the charts and bars draw with SVG presentation attributes).
CSS = (
    "body{font-family:system-ui,sans-serif;max-width:48rem;margin:0 auto;padding:0 1rem 2rem;"
    "color:#1b1b1b;line-height:1.45}a{color:#0b57a4}h1{font-size:1.5rem}h2{font-size:1.2rem;"
    "margin-top:2rem}h3{font-size:1rem}.site{padding:.75rem 0;border-bottom:1px solid #ddd}"
    # The site's navigation is one line: the brand on the left, the pages on the right.
    ".site nav{display:flex;flex-wrap:wrap;column-gap:1rem}.site a{padding:.5rem 0;"
    "white-space:nowrap}.site .brand{margin-right:auto}"
    # The landing page spreads its days over a desktop's width, two columns from 1024 px.
    "@media (min-width:64rem){body.wide{max-width:80rem}.wide h1+p{max-width:48rem}"
    ".grid{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));column-gap:2.5rem}"
    ".grid>.empty{grid-column:1/-1}}"
    ".score{font-size:1.5rem;margin:.25rem 0 1rem}.score .small{display:block}"
    ".sealed{border-left:4px solid #a3530f;padding-left:.75rem}"
    "tr.happened th,tr.happened td{background:#e8f1e4}"
    ".brand{font-weight:600}footer{margin-top:3rem;border-top:1px solid #ddd}"
    "table{width:100%;border-collapse:collapse}th,td{padding:.4rem .3rem;text-align:left;"
    "vertical-align:top;border-bottom:1px solid #e6e6e6}.n{text-align:right}"
    "td a{display:inline-block;padding:.2rem 0}.bar{display:block;width:100%;height:10px}"
    ".small{font-size:.85rem}.muted{color:#555}.pick{border:1px solid #bbb;padding:.75rem;"
    "margin-top:1rem}.rating{font-weight:700}.crumbs{padding:0;list-style:none}"
    ".crumbs li{display:inline}.crumbs li+li:before{content:' › '}"
    "figure{margin:1rem 0}figure svg{max-width:100%;height:auto}.key{vertical-align:middle}"
    # Chart text in the drawing's units (a chart is 350 wide, shown at most 640 px wide), so
    # that it is at least 12 px as drawn at any width: 15.5 units below 360 px, 13.5 up to
    # 480 (about 14 px at 390), 9.5 up to 640, 7.5 beyond (about 13.7 px at 640).
    ".chart text{font-size:13.5px}@media (max-width:22.5rem){.chart text{font-size:15.5px}}"
    "@media (min-width:30rem){.chart .wide text{font-size:9.5px}}"
    "@media (min-width:40rem){.chart .wide text{font-size:7.5px}}"
    ".empty{border:1px dashed #bbb;padding:.75rem;color:#555}.nowrap{white-space:nowrap}"
    ".days a{display:inline-block;padding:.5rem 1rem .5rem 0}"
    ".sr-only{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;"
    "clip:rect(0,0,0,0);white-space:nowrap;border:0}.note{overflow-wrap:anywhere;"
    "white-space:pre-wrap;font-size:.8rem;background:#f4f4f4;padding:.5rem}"
    "code{overflow-wrap:anywhere}.figures{display:grid;grid-template-columns:max-content 1fr;"
    "gap:.2rem 1rem}.figures dt{font-weight:600}.figures dd{margin:0}"
    # A market's columns: the published one in bold; a finished match's score beside its teams.
    ".market thead th{font-weight:400}.market thead th.published{font-weight:700}"
    ".final{font-size:1.1rem;white-space:nowrap}.lead{margin:.25rem 0 .5rem}"
    # On a phone the navigation stays one line and complete: a little smaller, the brand short
    # (its full name is the link's accessible name); the first matches come right under the
    # title, and the slate's forecast cells keep each figure on one line.
    "@media (max-width:30rem){table{font-size:.85rem}th,td{padding:.3rem .15rem}"
    "h1{font-size:1.25rem;margin:.5rem 0}.wide h2{margin-top:1rem}"
    ".site{padding:.25rem 0}.site nav{flex-wrap:nowrap;column-gap:.6rem;font-size:.875rem}"
    ".site .full{display:none}}@media (min-width:30.01rem){.site .short{display:none}}"
)
CSS_SOURCE = "sha256-" + base64.b64encode(hashlib.sha256(CSS.encode()).digest()).decode()
#: The pages' policy: nothing but their own hashed style (the JSON-LD block is data, never run).
#: ``connect-src 'self'`` lets a page's context fetch this origin (no script of ours runs, so
#: nothing of ours uses it): auditors such as Lighthouse read /robots.txt from the page.
POLICY = (
    f"default-src 'none'; style-src '{CSS_SOURCE}'; connect-src 'self'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)

#: The docs page's policy: Swagger UI's script and styles from this service only, its calls to
#: this service only (its images include data: URIs).
DOCS_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)


#: Endpoints outside a blueprint of pages that still answer a browser with a page: the landing
#: page at ``/`` (a JSON index for every other client).
PAGE_ENDPOINTS = frozenset({"meta.Index"})


class CompiledTemplates(BytecodeCache):
    """Templates compiled once per process, for every app it makes (a worker makes one; the
    test suite thousands, each of which compiled every page it rendered again). Jinja keys a
    template by its name and file and checks its source's checksum before it reuses the code,
    so an edited template is compiled again. The code also holds the environment's settings
    (autoescaping, filters): only environments configured alike may share one, as every
    ``hooks.App`` is."""

    def __init__(self):
        self._code: dict[str, bytes] = {}

    def load_bytecode(self, bucket) -> None:
        if (code := self._code.get(bucket.key)) is not None:
            bucket.bytecode_from_string(code)

    def dump_bytecode(self, bucket) -> None:
        self._code[bucket.key] = bucket.bytecode_to_string()

    def clear(self) -> None:
        self._code.clear()


#: The process's compiled templates (``hooks.App.jinja_options``).
COMPILED_TEMPLATES = CompiledTemplates()


def page_request() -> bool:
    """Whether this request is for one of the HTML pages: an endpoint of a blueprint marked
    ``html_pages``, or one of :data:`PAGE_ENDPOINTS`."""
    blueprint = current_app.blueprints.get(request.blueprint)
    return getattr(blueprint, "html_pages", False) or request.endpoint in PAGE_ENDPOINTS


def wants_html() -> bool:
    """Whether the client prefers HTML to JSON (a browser does); JSON when it does not say."""
    best = request.accept_mimetypes.best_match(["application/json", "text/html"])
    return best == "text/html"


def render(template: str, status: int = 200, policy: str = POLICY, **context):
    """A page as a response: the template rendered with the shared styles, the base of its links,
    where a reader gets Pro (``PRO_URL``) and ``signed`` (figures with their sign, never "−0"),
    as HTML under its Content-Security-Policy."""
    headers = {"Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": policy}
    pro_url = current_app.config["PRO_URL"]
    body = render_template(
        template, css=CSS, base=base_url(), pro_url=pro_url, signed=signed, **context
    )
    return make_response(body, status, headers)


def render_text(template: str, mimetype: str, **context):
    """A text resource (the sitemap, robots.txt) rendered from ``template``."""
    headers = {"Content-Type": f"{mimetype}; charset=utf-8"}
    return make_response(render_template(template, **context), 200, headers)
