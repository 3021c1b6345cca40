"""How a reader is told of a market and a selection: the names the pages, the calendars and the
alerts write (one set of words, so a pick reads the same wherever it is told)."""

#: Each market as a reader names it (without its line).
MARKET_NAMES = {
    "1x2": "Match result",
    "ou25": "Over/under 2.5 goals",
    "btts": "Both teams score",
    "ah": "Asian handicap",
    "ou": "Over/under goals",
}
#: The selections named the same in every market (the sides of 1x2 are their teams).
SELECTION_NAMES = {
    "draw": "Draw",
    "over": "Over 2.5",
    "under": "Under 2.5",
    "yes": "Both score",
    "no": "Not both",
}


def selection_name(selection: str, home: str, away: str, market="1x2", line=None) -> str:
    """How a page names a selection (the teams' names for the 1x2 sides; a side and its
    handicap for an Asian handicap, "Over 2.75" for an over/under at a line; the side alone
    where the line is withheld)."""
    if market == "ah":
        team, handicap = (home, line) if selection == "home" else (away, line and -line)
        return team if line is None else f"{team} {handicap:+g}".replace("-", "−")
    if market == "ou":
        return selection.capitalize() if line is None else f"{selection.capitalize()} {line:g}"
    return {"home": f"{home} win", "away": f"{away} win"}.get(
        selection, SELECTION_NAMES.get(selection, selection)
    )


def market_name(market: str, line) -> str:
    """How a page names a market, with its line where it has one (and it is not withheld)."""
    if line is None:
        return MARKET_NAMES[market]
    if market == "ah":
        return f"Asian handicap (home {line:+g})".replace("-", "−")
    if market == "ou":
        return f"Over/under {line:g} goals"
    return MARKET_NAMES[market]
