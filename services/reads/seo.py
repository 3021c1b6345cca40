"""Prediction pages for search engines and people: one match's forecast, its headline pick and
its schema.org SportsEvent, found by the match's slug."""

from enums import MARKETS, PICK_RATINGS
from services import routes
from services.reads import cards

#: schema.org's event status for each match status (a match played as planned was scheduled).
EVENT_STATUS = {
    "scheduled": "EventScheduled",
    "live": "EventScheduled",
    "finished": "EventScheduled",
    "postponed": "EventPostponed",
    "cancelled": "EventCancelled",
}

#: The market a page headlines.
HEADLINE_MARKET = "1x2"

#: How a page names whose numbers a published forecast is, by its source: the market's own
#: line where the goal model carries no weight in the pool (then never "ours"), the two pooled,
#: or the goal model alone; a prediction made before sources were recorded is "our forecast".
FORECAST_NAMES = {
    "market": "Market",
    "pool": "Our forecast (pooled)",
    "market-ratings": "Our forecast (goal model)",
    "dixon-coles": "Our forecast (goal model)",
    None: "Our forecast",
}


def page(slug: str, base_url: str, viewer=None, now=None, settings=None) -> dict:
    """The page of the match with ``slug``: title, description, canonical URL, the match, its
    headline prediction and pick (under the premium rule) and its SportsEvent; NotFound when no
    match has that slug. Stakes by ``settings``'s rule."""
    card = cards.by_slug(slug, viewer, ("predictions", "picks"), now, settings)
    return of_card(card, base_url)


def of_card(card: dict, base_url: str) -> dict:
    """The page of a match card with its predictions and picks (both popped from ``card``)."""
    slug = card["slug"]
    predictions = card.pop("predictions")
    prediction = next((p for p in predictions if p["market"] == HEADLINE_MARKET), None)
    picks = sorted(
        card.pop("picks"),
        key=lambda pick: (PICK_RATINGS.index(pick["rating"]), MARKETS.index(pick["market"])),
    )
    home, away = card["home_team"]["name"], card["away_team"]["name"]
    league = card["league"]["name"]
    when = card["kickoff_at"]
    url = f"{base_url}{routes.seo_prediction(slug)}"
    title = f"{home} vs {away} prediction, {when:%-d %B %Y} ({league})"
    return {
        "slug": slug,
        "title": title,
        "description": _description(home, away, league, when, prediction),
        "canonical_url": url,
        "match": card,
        "prediction": prediction,
        "pick": picks[0] if picks else None,
        "structured_data": {
            "name": f"{home} vs {away}",
            "description": f"{league}, {when:%-d %B %Y %H:%M} UTC",
            "url": url,
            "start_date": when,
            "event_status": f"https://schema.org/{EVENT_STATUS[card['status']]}",
            "sport": "Football",
            "home_team": {"name": home},
            "away_team": {"name": away},
        },
    }


def _description(home, away, league, when, prediction) -> str:
    """One sentence for the meta description: the match and its published 1x2 forecast, named
    by whose it is (the market's, with the goal model's own beside it, where the goal model
    carries no weight)."""
    text = f"{home} v {away}, {league}, {when:%-d %B %Y %H:%M} UTC."
    if prediction is None:
        return f"{text} No prediction yet."
    shares = prediction["probabilities"]
    if shares is None:  # the market's pick is locked until kick-off
        return f"{text} The forecast is sealed until kick-off."
    name = FORECAST_NAMES[prediction["source"]]
    if prediction["source"] != "market" or prediction["model_probabilities"] is None:
        # (the goal model's own are withheld where it made them with a sealed pick)
        return f"{text} {name}: {_spelled(shares, home, away)}."
    model = _spelled(prediction["model_probabilities"], home, away)
    return f"{text} {name}: {_spelled(shares, home, away)}; goal model: {model}."


def _spelled(shares: dict, home: str, away: str) -> str:
    """A 1x2 in words: ``Home 51%, draw 26%, Away 22%``."""
    return f"{home} {shares['home']:.0%}, draw {shares['draw']:.0%}, {away} {shares['away']:.0%}"
