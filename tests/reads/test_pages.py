"""The public pages read through the test client: the landing page and the JSON index it sits
beside, the prediction page in full, the track record, the sitemap (by the sitemap protocol's
rules) and robots.txt, the 404 page; all under the pages' Content-Security-Policy."""

import re
import xml.etree.ElementTree as ET
from datetime import datetime, timedelta
from urllib.parse import urlsplit

import pytest

from models import Match, Prediction
from services.forecasting import predictions
from services.reads.pages import CURVE_POINTS, _curve, _histogram
from tests import factories, world
from web import charts

HTML = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
SITEMAP_NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
#: W3C Datetime (https://www.w3.org/TR/NOTE-datetime), as the sitemap protocol takes it.
W3C_DATETIME = re.compile(
    r"^\d{4}(-\d{2}(-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?)?)?$"
)


@pytest.fixture
def app(make_app):
    return make_app(CLOCK=lambda: world.T0)


@pytest.fixture
def slugs(app):
    with app.app_context():
        return world.build()


def page(client, path, status=200):
    """The HTML page at ``path``: its text, after the checks every page passes."""
    response = client.get(path, headers=HTML)
    assert response.status_code == status and response.mimetype == "text/html"
    policy = response.headers["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "script-src" not in policy
    text = response.get_data(as_text=True)
    assert " style=" not in text  # only the hashed <style> element is allowed
    assert '<a href="http://localhost/">' in text  # every page links home
    return text


def test_the_landing_page_shows_the_coming_matches(client, slugs):
    text = page(client, "/")
    assert f'href="http://localhost/api/v1/seo/predictions/{slugs["locked"]}"' in text
    assert f'href="http://localhost/api/v1/seo/predictions/{slugs["later"]}"' in text
    assert slugs["settled"] not in text  # yesterday's match is not among the coming days
    assert 'href="http://localhost/track-record"' in text
    assert 'href="http://localhost/results"' in text
    assert "Sealed until kick-off" in text and "sealed" in text  # the A pick's 1x2 is withheld
    assert text.index('class="slate"') < text.index('id="how"')  # the matches first
    assert 'class="bar"' in text  # the other match's published 1x2


def test_api_clients_keep_the_json_index(client, slugs):
    for headers in ({}, {"Accept": "application/json"}, {"Accept": "*/*"}):
        response = client.get("/", headers=headers)
        assert response.status_code == 200 and response.mimetype == "application/json"
        assert response.get_json()["openapi"] == "http://localhost/openapi.json"
        assert response.headers["Vary"] == "Accept"  # a shared cache keeps the two apart
    assert "Accept" in client.get("/", headers=HTML).headers["Vary"]


def test_a_prediction_page_with_a_settled_pick(client, slugs):
    text = page(client, f"/api/v1/seo/predictions/{slugs['settled']}")
    for market in ("Match result", "Over/under 2.5 goals", "Both teams score"):
        assert f"<h2>{market}</h2>" in text
    assert "Market (fair)" in text and "Rovers win" in text
    assert "<td>won</td>" in text  # 2.2 odds, one unit staked: never wrapped before its unit
    assert '<td class="n nowrap">+1.20&nbsp;u</td>' in text
    assert "Fair closing EV" in text and "CLV" in text
    assert '2.00 <span class="small">(pinnacle)</span>' in text  # the close and whose it is
    assert '<script type="application/ld+json">' in text
    assert "<h2>Form</h2>" in text and "<h2>Head to head</h2>" in text
    assert 'aria-label="Breadcrumb"' in text and "Other Test League matches" in text


def test_a_finished_match_marks_its_result_on_the_forecast_it_settles(client, slugs):
    """Rovers 2–0 United: the score stands out above the markets, and in each market's bars
    the outcome that happened is marked (home win, under 2.5, not both scoring), once."""
    text = page(client, f"/api/v1/seo/predictions/{slugs['settled']}")
    assert '<span class="small muted">Final score</span> <strong>Rovers 2–0 United</strong>' in text
    assert text.index('class="score"') < text.index("<h2>Match result</h2>")
    marked = re.findall(r'<tr class="happened"><th scope="row"><strong>✓ ([^<]*)</strong>', text)
    assert marked == ["Rovers win", "Under 2.5", "Not both"]
    for market, outcome in (("Match result", "Rovers win"), ("Over/under 2.5 goals", "Under 2.5")):
        section = text.split(f"<h2>{market}</h2>")[1].split("</section>")[0]
        assert f"Result: <strong>{outcome}</strong> (2–0)" in section
    text = page(client, f"/api/v1/seo/predictions/{slugs['later']}")  # a match to come
    assert 'class="happened"' not in text and 'class="score"' not in text


def test_a_sealed_match_says_so_once_and_shows_what_it_can(client, slugs):
    """A sealed match says so once, above its markets, with the record of the sealed pick's
    rating; the sealed market says so in a sentence rather than rows of dashes, and the other
    markets show their forecasts."""
    text = page(client, f"/api/v1/seo/predictions/{slugs['locked']}")
    assert text.count("Sealed until kick-off: a pick rated A in Match result.") == 1
    assert text.index("Sealed until kick-off: a pick") < text.index("<h2>Match result</h2>")
    assert "Live picks rated A so far: 0 settled" in text  # the world's only live A is this one
    sealed = text.split("<h2>Match result</h2>")[1].split("</section>")[0]
    assert "<table" not in sealed and "–" not in sealed
    assert "Sealed until kick-off: this market has a pick rated A" in sealed
    other = text.split("<h2>Both teams score</h2>")[1].split("</section>")[0]
    assert '<table class="market">' in other and "%" in other


def test_a_prediction_page_says_how_to_read_it(client, slugs):
    text = page(client, f"/api/v1/seo/predictions/{slugs['settled']}")
    notes = " ".join(re.findall(r'<p class="small how">(.*?)</p>', text, re.S))
    for words in (
        "the same order and colours",
        "the column in bold is the forecast published",
        "the market's is the forecast published, not ours",
        "edge is the published probability × its price − 1",
        "rating (A the strongest",
        "A live pick was published before kick-off; a backfilled one",
        "stakes 1 unit (u)",
        "CLV is how much better its price was than the closing price",
        "fair closing EV is what it was worth at the close",
    ):
        assert words in notes, words


def _percent(value, places=1) -> str:
    """A share as a page writes it."""
    return f"{value * 100:.{places}f}%"


def _market_table(text, market="Match result") -> str:
    """The table of one market on a prediction page."""
    section = text.split(f"<h2>{market}</h2>")[1].split("</section>")[0]
    return section[section.index("<table") : section.index("</table>")]


def test_a_market_forecast_is_named_the_markets_with_the_goal_model_beside_it(client, slugs):
    """Where the goal model carries no weight (source `market`), every page showing the 1x2
    calls it the market's, never ours, and shows the goal model's own numbers beside it; the
    answer says `market` and carries those numbers as `modelProbabilities`."""
    with client.application.app_context():
        match = Match.get(Match.slug == slugs["later"])
        stored = Prediction.get((Prediction.match == match) & (Prediction.market == "1x2"))
    assert stored.source == "market" and stored.pool_weight == 0.0
    published, model = stored.probabilities, stored.model_probabilities
    assert abs(published["home"] - model["home"]) > 0.01  # two different sets of numbers

    text = page(client, f"/api/v1/seo/predictions/{slugs['later']}")
    table = _market_table(text)
    headings = re.findall(r'<th scope="col"[^>]*>([^<]*)</th>', table)
    assert headings == ["Outcome", "Market (fair)", "Goal model"]
    assert "Our forecast" not in table
    cells = re.findall(r"</svg>([\d.]+%)</td>", table.split("City win</th>")[1].split("</tr>")[0])
    assert cells == [_percent(published["home"]), _percent(model["home"])]
    description = re.search(r'<meta name="description" content="([^"]*)">', text)[1]
    assert f"Market: City {_percent(published['home'], 0)}" in description
    assert f"goal model: City {_percent(model['home'], 0)}" in description
    assert "Our forecast" not in description

    landing = page(client, "/")
    row = landing.split(slugs["later"])[1].split("</tr>")[0]
    # Each label and each set of figures kept on one line (a nowrap span each).
    nowrap = '</span> <span class="nowrap">'
    assert f"Market:{nowrap}{_percent(published['home'], 0)} · " in row
    assert f"Goal model:{nowrap}{_percent(model['home'], 0)} · " in row

    with client.application.app_context():
        settled = Match.get(Match.slug == slugs["settled"])
        shown = Prediction.get((Prediction.match == settled) & (Prediction.market == "1x2"))
    results = page(client, "/results/2026-03-09")
    row = results.split(slugs["settled"])[1].split("</tr>")[0]
    assert shown.source == "market" and "Market: <strong>Rovers win" in row
    assert f"Goal model: <strong>Rovers win {_percent(shown.model_probabilities['home'], 0)}" in row
    assert '<th scope="col">Our forecast</th>' not in results

    body = client.get(f"/api/matches/{match.id}").get_json()
    (answer,) = [p for p in body["predictions"] if p["market"] == "1x2"]
    assert answer["source"] == "market"
    assert answer["modelProbabilities"] == pytest.approx(model, abs=1e-6)
    assert answer["probabilities"] == pytest.approx(published, abs=1e-6)
    seo = client.get(f"/api/v1/seo/predictions/{slugs['later']}").get_json()["prediction"]
    assert seo["source"] == "market" and seo["modelProbabilities"] == answer["modelProbabilities"]


def test_a_market_picks_probability_is_the_markets_not_ours(client, slugs):
    text = page(client, f"/api/v1/seo/predictions/{slugs['settled']}")
    box = text.split("<h2>Match result</h2>")[1].split('<div class="pick">')[1].split("</div>")[0]
    assert "Rovers win at 2.20 (bet365): the market's fair probability 50.0%" in box
    assert "our probability" not in box


def test_a_pooled_forecast_is_ours_and_never_called_the_markets(client, slugs):
    """A pooled 1x2 (the goal model weighs 0.4) is "our forecast (pooled)": beside the market's
    fair line and the goal model's own on its page, with its label on the landing page, and
    never called the market's."""
    with client.application.app_context():
        match = Match.get(Match.slug == slugs["later"])
        stored = Prediction.get((Prediction.match == match) & (Prediction.market == "1x2"))
        fair, model = stored.market_probabilities, stored.model_probabilities
        pooled = {name: 0.6 * fair[name] + 0.4 * model[name] for name in fair}
        Prediction.update(source="pool", pool_weight=0.4, probabilities=pooled).where(
            Prediction.id == stored.id
        ).execute()
    text = page(client, f"/api/v1/seo/predictions/{slugs['later']}")
    table = _market_table(text)
    headings = re.findall(r'<th scope="col"[^>]*>([^<]*)</th>', table)
    # The same order and colours as every market: the market's, the goal model's, then ours.
    assert headings == ["Outcome", "Market (fair)", "Goal model", "Our forecast (pooled)"]
    assert '<th scope="col" class="published">Our forecast (pooled)</th>' in table
    cells = re.findall(r"</svg>([\d.]+%)</td>", table.split("City win</th>")[1].split("</tr>")[0])
    assert cells == [_percent(fair["home"]), _percent(model["home"]), _percent(pooled["home"])]
    description = re.search(r'<meta name="description" content="([^"]*)">', text)[1]
    assert f"Our forecast (pooled): City {_percent(pooled['home'], 0)}" in description
    assert "Market:" not in description and "goal model:" not in description

    row = page(client, "/").split(slugs["later"])[1].split("</tr>")[0]
    nowrap = '</span> <span class="nowrap">'
    assert f"Our forecast (pooled):{nowrap}{_percent(pooled['home'], 0)} · " in row
    assert "Market" not in row and "Goal model" not in row

    body = client.get(f"/api/matches/{match.id}").get_json()
    (answer,) = [p for p in body["predictions"] if p["market"] == "1x2"]
    assert answer["source"] == "pool"
    assert answer["probabilities"] == pytest.approx(pooled, abs=1e-6)
    assert answer["modelProbabilities"] == pytest.approx(model, abs=1e-6)


def test_the_api_description_says_whose_numbers_a_prediction_publishes(client):
    """`source` and `modelProbabilities` are described where a prediction is, in the export's
    row and in the webhook's: a market forecast is the market's, the goal model's beside it."""
    schemas = client.get("/openapi.json").get_json()["components"]["schemas"]
    prediction = schemas["Prediction"]
    assert {"source", "modelProbabilities"} <= set(prediction["required"])
    described = {
        name: field.get("description", "") for name, field in prediction["properties"].items()
    }
    assert "`market`: the sharp pre-match line alone" in described["source"]
    assert "the market's forecast, not the service's" in described["source"]
    assert described["modelProbabilities"].startswith("The goal model's own probabilities")
    webhook = schemas["PredictionUpdatedData"]["properties"]
    assert "modelProbabilities" in webhook and webhook["source"]["enum"][0] == "market"


def test_the_head_to_head_counts_the_meetings_it_lists(client, slugs):
    """ "Of their last 2 meetings" lists two; one meeting is told as one, not "last 1 meetings"."""
    text = page(client, f"/api/v1/seo/predictions/{slugs['settled']}")
    listed = text.split("<h2>Head to head</h2>")[1].split("</section>")[0].count("<tr><td>")
    assert f"Of their last {listed} meetings: Rovers won" in text and listed == 2
    with client.application.app_context():
        factories.match("Wanderers", "Rovers", kickoff=world.T0 - timedelta(days=20), goals=(1, 1))
        match = factories.match(
            "Rovers",
            "Wanderers",
            kickoff=world.T0 + timedelta(days=1),
            status="scheduled",
            odds=world.odds(2.0, 3.4, 3.9),
        )
        predictions.backfill(factories.settings(), now=world.T0)
        slug = Match.get_by_id(match.id).slug
    text = page(client, f"/api/v1/seo/predictions/{slug}")
    assert "Their one meeting on record: a draw." in text
    assert "last 1 meetings" not in text


def test_the_landing_pages_pick_names_its_market_and_selection_or_is_locked(client, slugs):
    with client.application.app_context():
        later = Match.get(Match.slug == slugs["later"])
        factories.pick(later, "ou25", "over", 1.95, probability=0.55, edge=0.07, rating="B")
    text = page(client, "/")
    picks = re.findall(
        r'<span class="rating r(\w)">\w</span> <span class="small">([^<]*)</span>', text
    )
    assert picks == [("A", "Match result: sealed"), ("B", "Over/under 2.5 goals: Over 2.5 at 1.95")]
    assert '<body class="wide">' in text and '<div class="grid">' in text  # a desktop's width


def test_a_prediction_page_keeps_a_locked_pick_locked(client, slugs):
    text = page(client, f"/api/v1/seo/predictions/{slugs['locked']}")
    assert "Pick rated A" in text and "This pick is sealed until kick-off" in text
    assert "City win at" not in text and "2.90" not in text  # nor what to back, nor its price


def test_the_track_record_page(client, slugs):
    text = page(client, "/track-record")
    assert text.index("<h2>Live record</h2>") < text.index("<h2>Backfilled record")
    assert "± one standard error" in text
    for title in (
        "Units won or lost, pick by pick, live",
        "Units won or lost, pick by pick, backfilled",
        "Return on investment by month, backfilled",
        "Return on investment by rating, backfilled",
        "Fair closing EV of the live picks",
        "Reliability, Match result",
    ):
        assert f"{title}</title>" in text and f"<caption>{title}</caption>" in text
    assert "Live picks by rating" in text and "Live picks by competition type" in text
    # The one settled live pick has no standard error: its rating and month are not drawn.
    assert "No rating has two settled live picks yet" in text
    assert "Return on investment by rating, live</title>" not in text
    # One live pick has no standard error: its ROI is shown without the words that name one.
    for before in re.findall(r"(\S+) \(± one standard error\)", text):
        assert re.fullmatch(r"\d+\.\d", before), before
    assert re.search(r"<dd>\+120\.0%</dd>", text)  # the live ROI alone, 1.20 u on 1 unit
    assert '<span class="nowrap">−' in text or '<span class="nowrap">+' in text
    assert "The latest checkpoint signs the first" in text and "verify_ledger.py" in text


def test_the_track_record_says_how_to_read_its_figures(client, slugs):
    """Beside each record's figures: units, ROI and its standard error, CLV and fair closing
    EV, edge and ratings, each month's and rating's error bars."""
    text = page(client, "/track-record")
    for record in text.split("<h2>Live record</h2>")[1].split("<h2>Backfilled record")[:2]:
        notes = " ".join(re.findall(r'<p class="small how">(.*?)</p>', record, re.S))
        for words in (
            "stakes 1 unit",
            "standard error says how far chance alone moves a figure",
            "Closing-line value (CLV)",
            "fair closing EV is what the pick was worth at the close",
            "edge is our probability × its price − 1",
            "A the strongest",
            "ROI with ± one standard error",
        ):
            assert words in notes, words


def _figures(text) -> list[dict]:
    """Each chart of a page: its title, its marks (bars, dots, a line's points), the marks it
    declares and the rows of its table."""
    found = []
    for figure in re.findall(r'<figure class="chart">(.*?)</figure>', text, re.S):
        points = re.findall(r'<polyline class="mark" points="([^"]*)"', figure)
        found.append(
            {
                "title": re.search(r"<title id=[^>]*>([^<]*)</title>", figure)[1],
                "marks": len(re.findall(r'<(?:rect|circle) class="mark"', figure))
                + sum(len(each.split()) for each in points),
                "declared": int(re.search(r'data-marks="(\d+)"', figure)[1]),
                "rows": figure.split("<tbody>")[1].count("<tr>"),
                "texts": re.findall(r"<text [^>]*>([^<]*)</text>", figure),
                "points": points,
            }
        )
    return found


#: A figure written with a minus sign and nothing but zeros: "-0%", "−0.0%", "-0.00".
NEGATIVE_ZERO = re.compile(r"[-−]0(?:\.0+)?(?![.\d])")


def test_the_track_records_charts_draw_their_tables_rows_on_axes_of_their_own(client, slugs):
    """One mark per row of each chart's table; the live units curve on its own axis (its last
    pick at the right edge, not squeezed beside the backfilled picks); no "−0"."""
    text = page(client, "/track-record")
    found = {chart["title"]: chart for chart in _figures(text)}
    assert len(found) >= 9
    for chart in found.values():
        assert chart["marks"] == chart["rows"] == chart["declared"] > 0, chart["title"]
    left, _, width, _ = charts.MARGIN[0], None, charts.WIDTH - sum(charts.MARGIN[:2]), None
    for name, picks in (("live", 1), ("backfilled", 16)):
        curve = found[f"Units won or lost, pick by pick, {name}"]
        last = curve["points"][0].split()[-1]
        assert float(last.split(",")[0]) == left + width  # the last pick at the right edge
        assert curve["texts"][-2] == str(picks)  # the axis ends at this record's last pick
    assert not NEGATIVE_ZERO.search(re.sub(r"<[^>]*>", " ", text))


def test_the_months_to_come_are_not_shown_in_any_answer(client, slugs):
    """A pending pick of next month (by the app's clock) has no month of its own, on the page
    nor in the Data API's `byMonth`; the months before it are there."""
    with client.application.app_context():
        ahead = factories.match(
            "City", "Athletic", kickoff=world.T0 + timedelta(days=30), status="scheduled"
        )
        factories.pick(ahead, rating="B", is_live=True, created_at=world.T0)
        headers = factories.people()["pro"][1]
    text = page(client, "/track-record")
    assert "2026-04" not in text
    answer = client.get("/api/v1/data/track-record", headers=headers).get_json()
    for part in ("live", "backfilled"):
        months = [row["month"] for row in answer[part]["byMonth"]]
        assert months and max(months) <= "2026-03", (part, months)


def test_an_empty_record_says_so_instead_of_bare_axes(client):
    text = page(client, "/track-record")
    assert '<figure class="chart">' not in text
    assert "No settled live pick yet" in text and "No settled backfilled pick yet" in text
    assert "No month has two settled live picks yet" in text
    assert "<dt>Largest drawdown</dt><dd>–</dd>" in text  # nothing settled: no figure


def test_the_roi_bars_carry_one_standard_error():
    rows = [
        {"month": "2026-01", "picks": 40, "roi": 0.1, "roi_std_error": 0.05},
        {"month": "2026-02", "picks": 30, "roi": -0.2, "roi_std_error": 0.1},
        {"month": "2026-03", "picks": 1, "roi": 1.2, "roi_std_error": None},
    ]
    chart = charts.monthly_roi(rows, "live")
    bars = chart["rects"]
    whiskers = [line for line in chart["lines"] if line["x1"] == line["x2"]]
    # A month of one pick has no error to show: it is not drawn (its table row neither).
    assert len(bars) == 2 and len(whiskers) == 2 and len(chart["rows"]) == 2
    for bar, whisker, row in zip(bars, whiskers, rows, strict=False):
        assert whisker["x1"] == round(bar["x"] + bar["width"] / 2, 2)
        # ROI ± SE: the whisker is twice the error long and centred on the bar's end
        roi_y = bar["y"] if row["roi"] >= 0 else bar["y"] + bar["height"]
        assert abs((whisker["y1"] + whisker["y2"]) / 2 - roi_y) < 0.02
    assert chart["rows"][1] == ("2026-02", 30, "-20.0%", "10.0%")
    ratings = charts.rating_roi(
        [{"rating": r, "picks": 9, "roi": 0.05, "roi_std_error": 0.2} for r in "ABC"], "live"
    )
    assert len(ratings["rects"]) == 3 and len([w for w in ratings["lines"] if w["x1"] == w["x2"]])


def test_the_closing_ev_axis_reads_right():
    """Its labels: the two edges inside the drawing, zero without a sign."""
    chart = charts.histogram(_histogram([-0.01, 0.03, 0.3]), "live")
    _, top, _, height = chart["plot"]
    labels = [(t["text"], t["anchor"]) for t in chart["texts"] if t["y"] == top + height + 16]
    assert labels == [("-20%", "start"), ("0%", "middle"), ("+20%", "end")]


@pytest.mark.parametrize(
    ("value", "args", "text"),
    [
        (-0.0004, (), "0.0%"),
        (-0.00001, (0,), "0%"),
        (-0.004, (2, 1, ""), "0.00"),
        (0.0004, (), "0.0%"),
        (-0.0006, (), "-0.1%"),
        (0.053, (), "+5.3%"),
        (None, (), "–"),
    ],
)
def test_a_signed_figure_is_never_minus_zero(value, args, text):
    assert charts.signed(value, *args) == text


def test_the_results_page_shows_the_latest_days_scores_forecasts_and_picks(client, slugs):
    """Without a day, the latest day with a finished match: each match with its score, its
    published forecast (the outcome that happened marked) and its pick's outcome; a link to the
    day before."""
    text = page(client, "/results")
    assert '<link rel="canonical" href="http://localhost/results">' in text
    assert '<time datetime="2026-03-09">Monday 9 March 2026</time>' in text
    assert "<h2>Test League</h2>" in text
    assert f'href="http://localhost/api/v1/seo/predictions/{slugs["settled"]}"' in text
    assert '</a> <strong class="final">2–0</strong>' in text  # beside the teams, not after
    assert text.index('class="slate"') < text.index('id="how"')  # the matches first
    assert re.search(r"<strong>Rovers win \d+%</strong> · Draw \d+% · United win \d+%", text)
    assert "Rovers win at 2.20<br>won" in text and "+1.20&nbsp;u" in text
    assert 'rel="prev"' in text and 'rel="next"' not in text
    assert slugs["locked"] not in text and slugs["later"] not in text  # still to come
    same = page(client, "/results/2026-03-09")
    assert '<link rel="canonical" href="http://localhost/results/2026-03-09">' in same
    assert same.split("<main>")[1] == text.split("<main>")[1]


def test_an_earlier_days_results_step_through_the_past(client, slugs):
    earlier = re.search(
        r'href="http://localhost/results/([0-9-]+)" rel="prev"', page(client, "/results")
    )[1]
    text = page(client, f"/results/{earlier}")
    assert "<strong>" in text and 'href="http://localhost/results/2026-03-09" rel="next"' in text
    empty = page(client, "/results/2026-03-08")  # between two match days
    assert "No match was played on this day." in empty and "<table" not in empty


@pytest.mark.parametrize(
    "path",
    [
        "/results/2026-02-30",
        "/results/2026-3-09",
        "/results/20260309",
        "/results/today",
        "/results/2026-03-11",
        "/results/2026-03-09/",
    ],
)
def test_a_malformed_or_future_day_is_a_404(client, slugs, path):
    page(client, "/results/2026-03-10")  # today's: its matches kicked off so far (none yet)
    text = page(client, path, status=404)
    assert "the matches of the coming days" in text
    api = client.get(path)
    assert api.status_code == 404 and api.mimetype == "application/problem+json"


def test_the_results_pages_are_described_like_the_other_pages(client):
    spec = client.get("/openapi.json").get_json()
    for path in ("/results", "/results/{day}"):
        answer = spec["paths"][path]["get"]["responses"]["200"]
        assert "text/html" in answer["content"] and "ignored" in answer["description"]
    (day,) = spec["paths"]["/results/{day}"]["parameters"]
    assert day["in"] == "path" and day["schema"] == {"type": "string", "format": "date"}


def test_the_sitemap_follows_the_protocol_and_lists_pages_that_answer(client, slugs):
    response = client.get("/sitemap.xml")
    assert response.status_code == 200 and response.mimetype == "application/xml"
    root = ET.fromstring(response.data)
    assert root.tag == f"{SITEMAP_NS}urlset"
    urls = root.findall(f"{SITEMAP_NS}url")
    assert 3 <= len(urls) <= 50_000 and len(response.data) <= 50 * 1024 * 1024
    locations = []
    for url in urls:
        location = url.findtext(f"{SITEMAP_NS}loc")
        parts = urlsplit(location)
        assert parts.scheme == "http" and parts.netloc == "localhost", location
        lastmod = url.findtext(f"{SITEMAP_NS}lastmod")
        if lastmod is not None:
            assert W3C_DATETIME.match(lastmod), lastmod
            datetime.fromisoformat(lastmod)
        locations.append(location)
    assert len(set(locations)) == len(locations)
    assert "http://localhost/" in locations and "http://localhost/track-record" in locations
    assert "http://localhost/results" in locations
    assert "http://localhost/results/2026-03-09" in locations  # the settled match's day
    for slug in slugs.values():
        assert f"http://localhost/api/v1/seo/predictions/{slug}" in locations
    for location in locations:
        assert client.get(urlsplit(location).path, headers=HTML).status_code == 200, location


def test_robots_txt_names_the_sitemap(client, slugs):
    response = client.get("/robots.txt")
    assert response.status_code == 200 and response.mimetype == "text/plain"
    lines = response.get_data(as_text=True).splitlines()
    assert "User-agent: *" in lines and "Sitemap: http://localhost/sitemap.xml" in lines
    assert "Allow: /api/v1/seo/predictions/" in lines


def test_a_sitemap_without_a_known_host_is_refused_not_relative(make_app):
    client = make_app(ALLOWED_HOSTS="picks.example.com").test_client()
    response = client.get("/sitemap.xml")
    assert response.status_code == 404 and "PUBLIC_BASE_URL" in response.get_json()["detail"]


def test_a_browser_gets_a_404_page_that_links_home(client):
    text = page(client, "/no-such-page", status=404)
    assert "the matches of the coming days" in text
    assert 'name="robots"' not in text  # a 404 is kept out of indexes by its status
    api = client.get("/no-such-page")
    assert api.status_code == 404 and api.mimetype == "application/problem+json"


def test_the_pages_are_cached_answers_with_etags(client, slugs):
    paths = ("/", "/track-record", "/results", "/results/2026-03-09")
    for path in (*paths, f"/api/v1/seo/predictions/{slugs['settled']}"):
        first = client.get(path, headers=HTML)
        again = client.get(path, headers={**HTML, "If-None-Match": first.headers["ETag"]})
        assert again.status_code == 304, path


def test_the_landing_page_counts_against_the_public_limit(make_app):
    client = make_app(CLOCK=lambda: world.T0, RATELIMIT_PUBLIC="2 per minute").test_client()
    answers = [client.get("/", headers=HTML) for _ in range(3)]
    assert [answer.status_code for answer in answers] == [200, 200, 429]
    assert answers[2].mimetype == "text/html"  # a browser refused gets a page, not JSON
    assert "Rate limited" in answers[2].get_data(as_text=True)
    assert int(answers[2].headers["Retry-After"]) >= 1
    assert client.get("/").status_code == 200  # the JSON index stays outside every limit


def test_the_units_curve_is_thinned_but_ends_on_the_last_pick():
    profits = [1.0 if n % 3 else -1.0 for n in range(500)]
    curve = _curve(profits)
    assert curve[0] == (0, 0.0) and len(curve) == CURVE_POINTS + 1
    assert curve[-1] == (500, sum(profits))
    assert [n for n, _ in curve] == sorted({n for n, _ in curve})
    assert _curve([]) == []
    bins = _histogram([-5.0, 0.0, 0.01, 5.0])  # beyond the range: counted in the outer bins
    assert bins[0]["count"] == 1 and bins[-1]["count"] == 1 and sum(b["count"] for b in bins) == 4
