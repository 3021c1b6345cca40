"""Cross-origin calls from browsers (CORS), off unless ``CORS_ORIGINS`` names the origins.

The API authenticates with a bearer token in a header, never a cookie, so a CORS answer never
carries credentials: allowing an origin lets its pages call the API with a token they hold, no
more.
"""

from flask_cors import CORS

#: The answer headers a browser script may read: paging and export counts, caching, rate limits
#: and the request id to quote in a report.
EXPOSED = (
    "ETag",
    "Retry-After",
    "X-Request-ID",
    "X-Export-Id",
    "X-Row-Count",
    "Content-Disposition",
    "RateLimit",
    "RateLimit-Policy",
    "X-RateLimit-Limit",
    "X-RateLimit-Remaining",
    "X-RateLimit-Reset",
)

#: How long a browser may keep a preflight's answer, seconds.
PREFLIGHT_MAX_AGE = 600


def init_app(app) -> None:
    """Answer the API's and its description's cross-origin requests from ``CORS_ORIGINS``."""
    origins = app.config["CORS_ORIGINS"]
    if not origins:
        return
    CORS(
        app,
        resources={r"/api/*": {}, r"/openapi.json": {}, r"/problems/*": {}},
        origins=list(origins),
        allow_headers=["Authorization", "Content-Type", "Accept", "If-None-Match", "X-Request-ID"],
        expose_headers=list(EXPOSED),
        supports_credentials=False,
        max_age=PREFLIGHT_MAX_AGE,
        vary_header=True,
    )
