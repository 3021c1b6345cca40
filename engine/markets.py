"""Markets, their selections and the outcome a final score gives each of them."""

MARKETS: dict[str, tuple[str, ...]] = {
    "1x2": ("home", "draw", "away"),
    "ou25": ("over", "under"),
    "btts": ("yes", "no"),
}

#: Markets whose selections are ordered, so a ranked probability score is meaningful.
ORDERED_MARKETS = frozenset({"1x2"})


def selection_index(market: str, selection: str) -> int:
    """Position of ``selection`` within ``market``'s selections (ValueError when unknown)."""
    return MARKETS[market].index(selection)


def outcome(market: str, home_goals: int, away_goals: int) -> str:
    """The winning selection of ``market`` for a final score."""
    if market == "1x2":
        if home_goals > away_goals:
            return "home"
        return "draw" if home_goals == away_goals else "away"
    if market == "ou25":
        return "over" if home_goals + away_goals > 2 else "under"
    if market == "btts":
        return "yes" if home_goals > 0 and away_goals > 0 else "no"
    raise KeyError(market)
