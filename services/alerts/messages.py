"""What an alert says: one pick of one match, in plain text, with the match's page and the
unsubscribe link. Written only for a pick its reader may see (``services.alerts.outbox``)."""

from dataclasses import dataclass
from datetime import UTC, datetime

from services import routes
from services.market.names import market_name, selection_name


@dataclass(frozen=True)
class Alert:
    """One message: its subject (the email's; Telegram's first line) and its text, which ends
    with the unsubscribe link."""

    subject: str
    text: str
    unsubscribe_url: str


def compose(pick: dict, moment: str, base_url: str, unsubscribe_url: str) -> Alert:
    """The message about ``pick`` (its match's teams, league and kick-off with it) sent at
    ``moment``: at its publication, or at the kick-off that made it public."""
    teams = (pick["home_team"], pick["away_team"])
    fixture = f"{teams[0]} v {teams[1]}"
    kickoff: datetime = pick["kickoff_at"]
    when = kickoff.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
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
        f"{market_name(pick['market'], pick['line'])}: "
        f"{selection_name(pick['selection'], *teams, pick['market'], pick['line'])} "
        f"at {pick['odds']:g} ({pick['bookmaker']})",
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
