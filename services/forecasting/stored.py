"""The stored matches and their quotes as the forecast reads them: every match of a country (or
all) in kick-off order, and the price cubes a backfill or a refresh of some of them needs."""

from dataclasses import dataclass, replace

import numpy as np

from engine.model import walkforward
from engine.model.timeline import DAY
from models import League, Match
from services.market import price_cubes


@dataclass
class History:
    """The stored matches as the model reads them, in kick-off order."""

    match_id: np.ndarray
    kickoff: np.ndarray  # epoch seconds
    status: np.ndarray
    home: np.ndarray
    away: np.ndarray
    home_goals: np.ndarray  # NaN without a result
    away_goals: np.ndarray
    group: np.ndarray  # the model's groups: one per country
    league: np.ndarray  # the league id: where history is counted and pool weights fitted
    finished: np.ndarray


def history(country=None) -> History | None:
    """Every stored match (of one country), or None when there are none."""
    query = (
        Match.select(
            Match.id,
            Match.kickoff_at,
            Match.status,
            Match.home_team,
            Match.away_team,
            Match.home_goals,
            Match.away_goals,
            League.country,
            League.id,
        )
        .join(League)
        .order_by(Match.kickoff_at, Match.id)
    )
    if country is not None:
        query = query.where(League.country == country)
    rows = list(query.tuples())
    if not rows:
        return None
    match_id, kickoff, status, home, away, hg, ag, countries, leagues = zip(*rows, strict=True)
    status = np.array(status)
    finished = status == "finished"
    groups = {name: index for index, name in enumerate(sorted(set(countries)))}
    return History(
        match_id=np.array(match_id, dtype=np.int64),
        kickoff=np.array([moment.timestamp() for moment in kickoff], dtype=np.int64),
        status=status,
        home=np.array(home, dtype=np.int64),
        away=np.array(away, dtype=np.int64),
        home_goals=np.where(finished, np.array(hg, dtype=float), np.nan),
        away_goals=np.where(finished, np.array(ag, dtype=float), np.nan),
        group=np.array([groups[name] for name in countries], dtype=np.int64),
        league=np.array(leagues, dtype=np.int64),
        finished=finished,
    )


def _scattered(match_id, wanted, closing: bool) -> dict[str, price_cubes.Cube]:
    """Cubes over every row of ``match_id`` with the quotes of the ``wanted`` rows only (NaN
    elsewhere): one query for what a single group's refresh needs."""
    loaded = price_cubes.load(match_id[wanted], closing=closing)
    cubes = {}
    for market, cube in loaded.items():
        prices = np.full((len(match_id), *cube.prices.shape[1:]), np.nan)
        prices[wanted] = cube.prices
        cubes[market] = price_cubes.Cube(prices, cube.bookmakers)
    return cubes


def _scattered_lines(match_id, wanted, closing: bool) -> dict[str, price_cubes.LineCube]:
    """Line cubes of the ``wanted`` rows of ``match_id``, their match rows indexing
    ``match_id``."""
    rows = np.flatnonzero(wanted)
    loaded = price_cubes.load_lines(match_id[rows], closing=closing)
    return {
        market: replace(cube, match_row=rows[cube.match_row]) for market, cube in loaded.items()
    }


@dataclass
class Quotes:
    """The quote cubes a forecast reads: pre-match and closing, per market; the markets with a
    line as line cubes (one row per match and line)."""

    pre_match: dict[str, price_cubes.Cube]
    closing: dict[str, price_cubes.Cube]
    pre_match_lines: dict[str, price_cubes.LineCube]
    closing_lines: dict[str, price_cubes.LineCube]


def all_quotes(history: History) -> Quotes:
    """Every stored quote of every match: what the backfill reads."""
    return Quotes(
        price_cubes.load(history.match_id, closing=False, only_listed=False),
        price_cubes.load(history.match_id, closing=True, only_listed=False),
        price_cubes.load_lines(history.match_id, closing=False, only_listed=False),
        price_cubes.load_lines(history.match_id, closing=True, only_listed=False),
    )


def group_quotes(history: History, targets, cutoff: int) -> Quotes:
    """What a refresh of ``targets`` reads: their pre-match quotes, and the closing quotes the
    ratings learn from in their window before ``cutoff`` (never the targets' own: nothing of
    a forecast may depend on what is only known once it kicks off)."""
    window = walkforward.RATINGS_CONFIG.window_days * DAY
    learning = history.finished & (history.kickoff >= cutoff - window) & (history.kickoff < cutoff)
    wanted = np.zeros(len(history.match_id), dtype=bool)
    wanted[targets] = True
    return Quotes(
        _scattered(history.match_id, wanted, closing=False),
        _scattered(history.match_id, learning, closing=True),
        _scattered_lines(history.match_id, wanted, closing=False),
        _scattered_lines(history.match_id, learning, closing=True),
    )
