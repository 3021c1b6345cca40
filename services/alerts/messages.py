"""What an alert says: one pick of one match, in plain text, with the match's page and the
unsubscribe link. Written only for a pick its reader may see (``services.alerts.outbox``)."""

from dataclasses import dataclass
from datetime import datetime

from schemas.common import utc_z
from services import routes

#: The markets as a reader names them (``ah`` and ``ou`` at the pick's line).
MARKET_NAMES = {
    "1x2": "Match result",
    "ou25": "Over/under 2.5 goals",
    "btts": "Both teams to score",
    "ah": "Asian handicap",
    "ou": "Over/under",
}


@dataclass(frozen=True)
class Alert:
    """One message: its subject (the email's; Telegram's first line) and its text, which ends
    with the unsubscribe link."""

    subject: str
    text: str
    unsubscribe_url: str


def selection_name(pick: dict) -> str:
    """The pick's selection as a reader says it: a team, the draw, over or under a line."""
    selection, line = pick["selection"], pick["line"]
    if selection in ("home", "away"):
        team = pick["home_team"] if selection == "home" else pick["away_team"]
        if pick["market"] == "ah":
            handicap = line if selection == "home" else -line
            return f"{team} {handicap:+g}"
        return team
    if selection in ("over", "under"):
        return f"{selection.title()} {2.5 if line is None else line:g}"
    return {"draw": "Draw", "yes": "Yes", "no": "No"}[selection]


def market_name(pick: dict) -> str:
    """The pick's market as a reader says it."""
    name = MARKET_NAMES.get(pick["market"], pick["market"])
    if pick["market"] == "ou" and pick["line"] is not None:
        return f"{name} {pick['line']:g}"
    return name


def compose(pick: dict, moment: str, base_url: str, unsubscribe_url: str) -> Alert:
    """The message about ``pick`` (its match's teams, league and kick-off with it) sent at
    ``moment``: at its publication, or at the kick-off that made it public."""
    fixture = f"{pick['home_team']} v {pick['away_team']}"
    kickoff: datetime = pick["kickoff_at"]
    when = utc_z(kickoff).replace("T", " ").removesuffix(":00Z") + " UTC"
    if moment == "kickoff":
        subject = f"Unlocked at kick-off: {pick['rating']} pick, {fixture}"
        opening = "This pick was locked until kick-off; the match has now started."
    else:
        subject = f"New {pick['rating']} pick: {fixture}"
        opening = "A new pick has been published."
    lines = [
        opening,
        "",
        f"{fixture} ({pick['league']}), kick-off {when}",
        f"{market_name(pick)}: {selection_name(pick)} at {pick['odds']:g} ({pick['bookmaker']})",
        f"Rating {pick['rating']}, our probability {pick['probability']:.1%}, "
        f"edge {pick['edge']:+.1%}",
        "",
        f"The match: {base_url}{routes.seo_prediction(pick['slug'])}",
        "A pick is a forecast with an edge, not a sure thing: stake only what you can lose.",
        "",
        f"Stop these alerts: {unsubscribe_url}",
    ]
    # One line, whatever a source named a team: a header never holds a line break.
    return Alert(" ".join(subject.split()), "\n".join(lines), unsubscribe_url)
