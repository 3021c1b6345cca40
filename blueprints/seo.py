"""Prediction pages by slug, as JSON or as a server-rendered HTML page."""

from flask.views import MethodView

from schemas.seo import PredictionPageSchema, SportsEventSchema
from services import routes
from services.reads import pages, seo
from web import html
from web.access import PUBLIC, current_viewer, now, settings
from web.blueprint import Blueprint
from web.links import base_url

blp = Blueprint(
    "seo",
    __name__,
    url_prefix=routes.SEO,
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
    @blp.page(when=html.wants_html)
    @blp.cached(variant=representation)
    @blp.response(
        200,
        PredictionPageSchema,
        description="The page as JSON; as a server-rendered HTML page for `Accept: text/html`: "
        "title, meta description, canonical link, Open Graph tags and the JSON-LD; every market "
        "(1x2, over/under 2.5, both teams to score) with its published probability, named by "
        "whose it is (`Market (fair)` where the source is `market`, else ours), beside the "
        "market's fair one and the goal model's own, its pick under the premium rule and, "
        "once settled, its result, profit, CLV and fair closing EV; the sides' form and "
        "head-to-head; links home, to the league's other matches and to the track record. The "
        "HTML page ignores query parameters (a link's `utm_source`, `fbclid`…); the JSON "
        "answers one with a 422 naming it.",
    )
    @blp.doc(responses={200: {"content": {"text/html": {"schema": {"type": "string"}}}}})
    @blp.problems(404, "not-found")
    @blp.doc(operationId="getPredictionPage")
    def get(self, slug):
        """A match's prediction page: title, description, canonical URL and SportsEvent"""
        if not html.wants_html():
            return seo.page(slug, base_url(), current_viewer(), now(), settings())
        page = pages.prediction(slug, base_url(), current_viewer(), now(), settings())
        return html.render(
            "prediction.html",
            page=page,
            title=page["title"],
            description=page["description"],
            canonical=page["canonical_url"],
            structured_data=SportsEventSchema().dump(page["structured_data"]),
        )
