"""Prediction pages by slug, as JSON or as a server-rendered HTML page."""

from flask.views import MethodView

from schemas.seo import PredictionPageSchema
from services import seo
from web import html
from web.access import PUBLIC, current_viewer, now
from web.blueprint import Blueprint
from web.links import base_url

blp = Blueprint(
    "seo",
    __name__,
    url_prefix="/api/v1/seo",
    description="Prediction pages for search engines and link previews: JSON by default, HTML "
    "for `Accept: text/html`.",
    access=PUBLIC,
    html_pages=True,
)


def representation() -> str:
    """Which representation the client asked for (a key of the answer cache)."""
    return "html" if html.wants_html() else "json"


@blp.route("/predictions/<slug:slug>")
class PredictionPage(MethodView):
    @blp.cached(variant=representation)
    @blp.response(
        200,
        PredictionPageSchema,
        description="The page as JSON; as a server-rendered HTML page (title, meta "
        "description, canonical link, Open Graph tags, the JSON-LD) for `Accept: text/html`.",
    )
    @blp.doc(responses={200: {"content": {"text/html": {"schema": {"type": "string"}}}}})
    @blp.problems(404, "not-found")
    @blp.doc(operationId="getPredictionPage")
    def get(self, slug):
        """A match's prediction page: title, description, canonical URL and SportsEvent"""
        page = seo.page(slug, base_url(), current_viewer(), now())
        if not html.wants_html():
            return page
        return html.render("prediction.html", page=PredictionPageSchema().dump(page))
