"""The explorer: a day's slate of one market, and the past matches most like a given one."""

import threading
from dataclasses import dataclass

import numpy as np

from engine.betting import picks
from engine.betting.comparable import nearest
from engine.markets import FIXED_MARKETS, outcome_indices
from enums import COMPARABLE_DEFAULT
from models import Match, Prediction, data_version
from services.queries import match_filters, within
from services.reads import cards


def slate(
    day,
    market="1x2",
    league_id=None,
    team_id=None,
    min_data_quality=None,
    viewer=None,
    now=None,
    settings=None,
):
    """The matches of ``day`` (a span; its UTC day counts) with ``market``'s prediction, best
    price and edge per selection, and the pick, as ``viewer`` may see them at ``now`` (a locked
    match shows no probability, price or edge); an unknown league or team gives no matches; the
    pick's stake by ``settings``'s rule."""
    day = day.whole_day()
    query = match_filters(within(cards.matches(), Match.kickoff_at, day, day), league_id, team_id)
    items = []
    for card in cards.build(
        query.order_by(Match.kickoff_at, Match.id), viewer, now=now, settings=settings
    ):
        prediction = _of_market(card.pop("predictions"), market)
        if min_data_quality is not None and (
            prediction is None or prediction["data_quality"] < min_data_quality
        ):
            continue
        odds = _of_market(card.pop("odds"), market)
        pick = _of_market(card.pop("picks"), market)
        selections = _selections(market, prediction, odds)
        items.append(
            {"match": card, "prediction": prediction, "selections": selections, "pick": pick}
        )
    return {"date": day.day, "market": market, "items": items}


def _of_market(items, market):
    """The item of ``market`` in a card's list, or None."""
    return next((item for item in items if item["market"] == market), None)


def _selections(market, prediction, odds) -> list[dict]:
    """Per selection: the published probability, the best price and its bookmaker, the edge."""
    names = FIXED_MARKETS[market]
    prices = {row["selection"]: row for row in odds["selections"]} if odds else {}
    shares = prediction["probabilities"] if prediction else None  # None too when locked
    probability = [shares[name] if shares else None for name in names]
    best = [prices[name]["best_price"] if name in prices else None for name in names]
    edge = picks.edges(np.array(probability, dtype=float), np.array(best, dtype=float)).tolist()
    return [
        {
            "selection": name,
            "probability": probability[index],
            "best_price": best[index],
            "bookmaker": prices[name]["best_bookmaker"] if name in prices else None,
            "edge": edge[index] if np.isfinite(edge[index]) else None,
        }
        for index, name in enumerate(names)
    ]


@dataclass(frozen=True)
class _History:
    """One market's finished matches with a published forecast, as arrays in the order ties
    keep (latest kick-off first, then the higher id)."""

    match_id: np.ndarray  # (n,) int
    kickoff: np.ndarray  # (n,) float, POSIX seconds
    league: np.ndarray  # (n,) int
    home: np.ndarray  # (n,) int
    away: np.ndarray  # (n,) int
    probabilities: np.ndarray  # (n, k) the published probability of each selection
    outcome: np.ndarray  # (n,) the index of the selection that won


def _history(market) -> _History:
    """Read ``market``'s finished history once: every later question is a few array masks."""
    names = FIXED_MARKETS[market]
    rows = list(
        Prediction.select(
            Prediction.match,
            Prediction.probabilities,
            Match.kickoff_at,
            Match.league,
            Match.home_team,
            Match.away_team,
            Match.home_goals,
            Match.away_goals,
        )
        .join(Match)
        .where((Prediction.market == market) & (Match.status == "finished"))
        .order_by(Match.kickoff_at.desc(), Match.id.desc())
        .tuples()
    )
    column = list(zip(*rows, strict=True)) if rows else [()] * 8
    goals = np.array(column[6:8], dtype=float).reshape(2, len(rows))
    return _History(
        match_id=np.array(column[0], dtype=np.int64),
        kickoff=np.array([moment.timestamp() for moment in column[2]], dtype=float),
        league=np.array(column[3], dtype=np.int64),
        home=np.array(column[4], dtype=np.int64),
        away=np.array(column[5], dtype=np.int64),
        probabilities=np.array(
            [[shares[name] for name in names] for shares in column[1]], dtype=float
        ).reshape(len(rows), len(names)),
        outcome=outcome_indices(goals[0], goals[1])[market],
    )


class ComparableIndex:
    """Each market's finished history held as arrays by one process, read again only when the
    data version moves (every import, backfill, settlement, refresh, checkpoint and calibration
    run bumps it): a comparable question then costs a few array masks and one nearest-neighbour
    pass, not a read and decoding of the whole history (0.2-0.3 s on the shared set), whatever
    its ``limit``."""

    def __init__(self):
        self._lock = threading.Lock()
        self._version = None
        self._markets: dict[str, _History] = {}

    def history(self, market) -> _History:
        """``market``'s history as of the current data version."""
        version = data_version()  # read before the data: the arrays are never older than it
        with self._lock:
            if version != self._version:
                self._version, self._markets = version, {}
            if market not in self._markets:
                self._markets[market] = _history(market)
            return self._markets[market]


def comparable(
    match_id,
    market="1x2",
    scope="league",
    limit=COMPARABLE_DEFAULT,
    viewer=None,
    now=None,
    index=None,
):
    """Finished matches that kicked off before ``match_id`` whose published ``market``
    probabilities lie nearest to its own, within ``scope`` (``league``, ``teams`` of either
    side, or ``global``); with what happened to them, summed up per selection. A match locked
    for ``viewer`` at ``now`` (see :mod:`services.market.premium`) lists none: which matches are
    nearest, and how near, would give its probabilities back. ``index`` is the process's
    :class:`ComparableIndex` (a new one when None)."""
    target = cards.one(match_id, viewer, include=("predictions",), now=now)
    prediction = _of_market(target.pop("predictions"), market)
    locked = target.pop("locked")
    names = FIXED_MARKETS[market]
    found = {
        "match": target,
        "market": market,
        "scope": scope,
        "locked": locked,
        "prediction": prediction,
    }
    positions = np.zeros(0, dtype=np.intp)
    history = None
    if prediction is not None and not locked:
        history = (index or ComparableIndex()).history(market)
        chosen = (history.kickoff < target["kickoff_at"].timestamp()) & (
            history.match_id != match_id
        )
        if scope == "league":
            chosen &= history.league == target["league"]["id"]
        elif scope == "teams":
            teams = [target["home_team"]["id"], target["away_team"]["id"]]
            chosen &= np.isin(history.home, teams) | np.isin(history.away, teams)
        positions = np.flatnonzero(chosen)
    if history is not None and positions.size:
        candidates = history.probabilities[positions]
        outcome = history.outcome[positions]
        wanted = [prediction["probabilities"][name] for name in names]
    else:
        candidates = np.zeros((0, len(names)))
        outcome = np.zeros(0, dtype=np.intp)
        wanted = [0.0] * len(names)
    near = nearest(wanted, candidates, outcome, limit)
    ids = [int(history.match_id[positions[i]]) for i in near.index] if history else []
    matches = {card["id"]: card for card in cards.load(ids, include=())}
    found["items"] = [
        {
            "match": matches[match],
            "probabilities": dict(zip(names, candidates[i].tolist(), strict=True)),
            "outcome": names[outcome[i]],
            "distance": float(distance),
        }
        for match, i, distance in zip(ids, near.index.tolist(), near.distance, strict=True)
    ]
    found["summary"] = {
        "count": len(found["items"]),
        "selections": [
            {
                "selection": name,
                "mean_predicted": _number(near.mean_predicted[position]),
                "observed_rate": _number(near.observed_rate[position]),
            }
            for position, name in enumerate(names)
        ],
    }
    return found


def _number(value) -> float | None:
    """A float, None for NaN (no neighbours)."""
    return float(value) if np.isfinite(value) else None
