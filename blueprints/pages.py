"""The public pages a person reads in a browser: the landing page's matches, the results of past
days, the track record with its charts, and what search engines read (``/sitemap.xml``,
``/robots.txt``).

A link to a page carries what campaigns and social sites append (``?utm_source=newsletter``,
``?fbclid=…``): the pages read no query parameter and ignore any (``Blueprint.page``), where the
JSON API answers an unknown one with a 422."""

from flask.views import MethodView

from errors import NotFound
from services.market import names
from services.reads import pages
from web import charts, html
from web.access import PUBLIC, current_viewer, guard, now, settings
from web.blueprint import Blueprint
from web.caching import cached
from web.links import base_url

blp = Blueprint(
    "pages",
    __name__,
    description="Server-rendered pages for people (no script, under a strict "
    "Content-Security-Policy), and the sitemap and robots.txt for search engines.",
    access=PUBLIC,
    html_pages=True,
)

HTML = {"text/html": {"schema": {"type": "string"}}}


def _landing():
    """The landing page: today's and the coming days' matches."""
    page = pages.landing(current_viewer(), now(), settings())
    return html.render(
        "landing.html",
        page=page,
        title="Football predictions and rated picks for the coming days",
        description="Forecasts of the coming days' football matches: the 1x2 probabilities "
        "(the market's, ours or our goal model's, each named), the picks we rate A, B or C, "
        "and a public track record of every pick.",
        canonical=f"{base_url()}/",
    )


#: The landing page as ``GET /`` serves it to a browser (``Accept: text/html``): behind the
#: public access rule and its rate limit, through the answer cache, keyed without the query it
#: ignores (``meta.Index`` lets it through for a browser); API clients keep the index.
landing = guard(PUBLIC, cached(_landing, variant=lambda: "html", page=html.wants_html))


#: What a page's answer is, as the description says it.
PAGE_DOC = (
    "The page. Query parameters (a link's `utm_source`, `fbclid`…) are ignored: the page "
    "reads none."
)


@blp.route("/track-record")
class TrackRecordPage(MethodView):
    @blp.page()
    @blp.cached()
    @blp.doc(
        operationId="getTrackRecordPage",
        responses={200: {"description": PAGE_DOC, "content": HTML}},
    )
    def get(self):
        """The track record as a page: live and backfilled picks apart, charts, the ledger"""
        page = pages.track_record_page(settings(), now())
        return html.render(
            "track_record.html",
            page=page,
            charts=charts.for_track_record(page),
            market_names=names.MARKET_NAMES,
            competition_names=pages.COMPETITION_TYPE_NAMES,
            title="Track record of every pick, live and backfilled",
            description="How our football picks did: the live record (every pick published "
            "before kick-off in a signed ledger) and the walk-forward backfill, with ROI, its "
            "standard error, closing-line value and calibration.",
            canonical=f"{base_url()}/track-record",
        )


def _results(day=None):
    """The results page of ``day`` (the latest day with a finished match when None)."""
    page = pages.results(day, current_viewer(), now(), settings())
    shown = page["day"].strftime("%-d %B %Y")
    path = "/results" if day is None else f"/results/{day.isoformat()}"
    return html.render(
        "results.html",
        page=page,
        title=f"Football results of {shown}: scores, forecasts and picks",
        description=f"The matches of {shown} by league: each final score beside the forecast "
        "and how our pick did.",
        canonical=f"{base_url()}{path}",
    )


@blp.route("/results")
class LatestResults(MethodView):
    @blp.page()
    @blp.cached()
    @blp.doc(
        operationId="getLatestResultsPage",
        responses={200: {"description": PAGE_DOC, "content": HTML}},
    )
    def get(self):
        """The results page of the latest day with a finished match"""
        return _results()


@blp.route("/results/<day:day>")
class ResultsOfDay(MethodView):
    @blp.page()
    @blp.cached()
    @blp.doc(
        operationId="getResultsPage",
        responses={
            200: {
                "description": PAGE_DOC + " A malformed day, or one still to come, is 404.",
                "content": HTML,
            }
        },
    )
    @blp.problems(404, "not-found")
    def get(self, day):
        """The results page of one UTC day (YYYY-MM-DD): its matches by league, each score
        beside the forecast and how its pick did"""
        return _results(day)


@blp.route("/sitemap.xml")
class Sitemap(MethodView):
    @blp.page()
    @blp.cached()
    @blp.doc(
        operationId="getSitemap",
        responses={
            200: {
                "description": "The sitemap (sitemaps.org protocol): the landing page, the "
                "track record and the prediction pages of recent and upcoming matches, each "
                "with its `lastmod`. Query parameters are ignored.",
                "content": {"application/xml": {"schema": {"type": "string"}}},
            }
        },
    )
    @blp.problems(404, "not-found")
    def get(self):
        """The sitemap: the pages search engines should know, with when each last changed"""
        base = base_url()
        if not base:
            raise NotFound("A sitemap names absolute URLs: set PUBLIC_BASE_URL.")
        return html.render_text(
            "sitemap.xml", "application/xml", base=base, page=pages.sitemap(now())
        )


@blp.route("/robots.txt")
class Robots(MethodView):
    @blp.page()
    @blp.doc(
        operationId="getRobots",
        responses={
            200: {
                "description": "Crawl anything public; the sitemap's address. Query "
                "parameters are ignored.",
                "content": {"text/plain": {"schema": {"type": "string"}}},
            }
        },
    )
    def get(self):
        """robots.txt: what crawlers may read, and where the sitemap is"""
        return html.render_text("robots.txt", "text/plain", base=base_url())
