"""Plain records that carry fixtures, results and odds from a source (a CSV file, the demo world)
into the services that store them. One shape for every source, so one importer stores them all."""

from dataclasses import dataclass, field
from datetime import datetime

#: Bookmakers whose prices are aggregates across the market, not a price anyone can take.
AGGREGATE_BOOKMAKERS = frozenset({"market-average"})

#: The sharp bookmaker whose de-margined prices anchor the published forecast.
SHARP_BOOKMAKER = "pinnacle"


@dataclass(frozen=True)
class LeagueRecord:
    """A competition: ``code`` is its stable key (football-data's division code, e.g. ``E0``)."""

    code: str
    name: str
    country: str
    competition_type: str  # top-flight | lower-league | cup | international


@dataclass(frozen=True)
class OddsRecord:
    """One decimal price for one selection, before kick-off (pre-match) or at the close."""

    bookmaker: str  # canonical slug: pinnacle, bet365, bwin, ..., market-average
    market: str  # 1x2 | ou25 | btts | ah | ou
    selection: str  # see engine.markets.MARKETS
    price: float  # decimal odds, > 1.0
    is_closing: bool = False
    line: float | None = None  # None for 1x2 and btts, 2.5 for ou25, the line for ah and ou


@dataclass
class MatchRecord:
    """A fixture with whatever is known of it: result, half-time score, odds."""

    league: LeagueRecord
    season: str  # "2023-24" for a season across two years, "2024" for a calendar-year one
    kickoff_at: datetime  # timezone-aware, UTC
    home_team: str
    away_team: str
    status: str = "scheduled"  # scheduled | live | finished | postponed | cancelled
    home_goals: int | None = None
    away_goals: int | None = None
    ht_home_goals: int | None = None
    ht_away_goals: int | None = None
    #: (home, away) shots and shots on target where the source gives both sides of both
    #: (football-data's HS, AS, HST, AST), else None; read by the goal model's benchmarks.
    shots: tuple[int, int] | None = None
    shots_on_target: tuple[int, int] | None = None
    odds: list[OddsRecord] = field(default_factory=list)
    line: int | None = None  # where the record came from in its source file, for error reports


@dataclass(frozen=True)
class RejectedRow:
    """A source row that could not be read, with where it was and why."""

    line: int
    reason: str
