"""The interactive API docs at ``/docs``: Swagger UI served by the service itself, from the files
of the pinned ``swagger-ui-bundle-v2`` package, so the page needs no CDN (nor internet) and runs
only the code that was installed with the service."""

from flask import Blueprint, render_template, send_from_directory
from swagger_ui_bundle import swagger_ui_path

from errors import NotFound
from web import html

blp = Blueprint("docs", __name__)

#: The package's files the page loads; nothing else of the folder is served.
ASSETS = frozenset({"swagger-ui.css", "swagger-ui-bundle.js", "favicon-32x32.png"})

#: The files change only with the pinned package, so browsers may keep them for a day.
ASSET_MAX_AGE = 24 * 3600


@blp.get("/docs")
def page():
    """Swagger UI on this service's OpenAPI description."""
    return html.render("docs.html", policy=html.DOCS_POLICY)


@blp.get("/docs/docs.js")
def script():
    """The page's one script of its own: start Swagger UI (inline scripts are not allowed)."""
    return render_template("docs.js"), 200, {"Content-Type": "text/javascript; charset=utf-8"}


@blp.get("/docs/assets/<name>")
def asset(name):
    """One of Swagger UI's files."""
    if name not in ASSETS:
        raise NotFound(f"There is no docs asset {name!r}.")
    return send_from_directory(swagger_ui_path, name, max_age=ASSET_MAX_AGE)
