"""The explorer: a day's slate of one market, and the past matches most like a given one.

A market with lines (Asian handicap, over/under) is a set of selections per line: the slate has
an item per match and line, comparable matches are compared at one line. A match locked for the
caller (:mod:`services.market.premium`) withholds its lines: one item, its line null."""

import threading
from dataclasses import dataclass

import numpy as np

from engine.betting import picks
from engine.betting.comparable import nearest
from engine.markets import market_line, outcome_indices
from engine.model import lines
from enums import COMPARABLE_DEFAULT, LINE_MARKETS, MARKET_SELECTIONS
from models import Match, Prediction, data_version, stored_line
from services.queries import match_filters, within
from services.reads import cards


def slate(
    day,
    market="1x2",
    line=None,
    league_id=None,
    team_id=None,
    min_data_quality=None,
    viewer=None,
    now=None,
    settings=None,
):
    """The matches of ``day`` (a span; its UTC day counts) with ``market``'s prediction, best
    price and edge per selection, and the pick, as ``viewer`` may see them at ``now`` (a locked
    match shows no probability, price or edge); an unknown league or team gives no matches.

    A market with lines gives an item per match and line quoted (predicted or priced), by line;
    a match with none, or locked (its lines withheld), one item with its line null. ``line``
    keeps the items at exactly that line (as answers write it: 2.5 for "ou25", none for 1x2 and
    btts) and a locked match's one item, whatever its lines: which matches it keeps must not
    tell a locked match's lines. The pick's stake by ``settings``'s rule."""
    day = day.whole_day()
    query = match_filters(within(cards.matches(), Match.kickoff_at, day, day), league_id, team_id)
    items = []
    for card in cards.build(
        query.order_by(Match.kickoff_at, Match.id), viewer, now=now, settings=settings
    ):
        predictions = _of_market(card.pop("predictions"), market)
        odds = _of_market(card.pop("odds"), market)
        chosen = _of_market(card.pop("picks"), market)
        withheld = market in LINE_MARKETS and market in card.pop("sealed_markets")
        for at in [None] if withheld else _lines(market, predictions + odds + chosen):
            shown = market_line(market, at)
            if line is not None and shown != line and not withheld:
                continue
            prediction = _at_line(predictions, at)
            if min_data_quality is not None and (
                prediction is None or prediction["data_quality"] < min_data_quality
            ):
                continue
            items.append(
                {
                    "match": card,
                    "line": shown,
                    "prediction": prediction,
                    "selections": _selections(market, prediction, _at_line(odds, at)),
                    # At most one pick per match and market: a locked one's line is withheld.
                    "pick": (chosen or [None])[0] if withheld else _at_line(chosen, at),
                }
            )
    return {"date": day.day, "market": market, "items": items}


def _of_market(items, market) -> list:
    """The items of ``market`` in a card's list."""
    return [item for item in items if item["market"] == market]


def _lines(market, rows) -> list:
    """The stored lines of ``market`` a match's items stand at: the one line of a market
    without lines; each line of its ``rows`` (predictions, prices and pick) of a market with
    lines, in order, or None alone where it has none."""
    if market not in LINE_MARKETS:
        return [stored_line(market, None)]
    quoted = {row["line"] for row in rows} - {None}
    return sorted(quoted) or [None]


def _at_line(rows, line):
    """The row of ``rows`` (one market's) at the stored ``line``, or None."""
    return next((row for row in rows if row["line"] == line), None)


def _selections(market, prediction, odds) -> list[dict]:
    """Per selection: the published probability, the best price and its bookmaker, the edge."""
    names = MARKET_SELECTIONS[market]
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
    """One market's finished matches with a published forecast at one line, as arrays in the
    order ties keep (latest kick-off first, then the higher id)."""

    match_id: np.ndarray  # (n,) int
    kickoff: np.ndarray  # (n,) float, POSIX seconds
    league: np.ndarray  # (n,) int
    home: np.ndarray  # (n,) int
    away: np.ndarray  # (n,) int
    probabilities: np.ndarray  # (n, k) the published probability of each selection
    outcome: np.ndarray  # (n,) the index of the selection that won, -1 for a push
    share: np.ndarray  # (n,) the share of a stake the result decided (a quarter line: ½ or 1)


def _history(market, line) -> _History:
    """Read ``market``'s finished history at the stored ``line`` once: every later question is
    a few array masks."""
    names = MARKET_SELECTIONS[market]
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
        .where(
            (Prediction.market == market) & (Prediction.line == line) & (Match.status == "finished")
        )
        .order_by(Match.kickoff_at.desc(), Match.id.desc())
        .tuples()
    )
    column = list(zip(*rows, strict=True)) if rows else [()] * 8
    goals = np.array(column[6:8], dtype=float).reshape(2, len(rows))
    if market in LINE_MARKETS:
        outcome = lines.outcome_index(market, np.full(len(rows), line), *goals)
        share = lines.outcome_share(market, np.full(len(rows), line), *goals)
    else:
        outcome = outcome_indices(*goals)[market]
        share = (outcome >= 0).astype(float)
    return _History(
        match_id=np.array(column[0], dtype=np.int64),
        kickoff=np.array([moment.timestamp() for moment in column[2]], dtype=float),
        league=np.array(column[3], dtype=np.int64),
        home=np.array(column[4], dtype=np.int64),
        away=np.array(column[5], dtype=np.int64),
        probabilities=np.array(
            [[shares[name] for name in names] for shares in column[1]], dtype=float
        ).reshape(len(rows), len(names)),
        outcome=outcome,
        share=share,
    )


class ComparableIndex:
    """Each market's finished history (per line) held as arrays by one process, read again
    only when the data version moves (every import, backfill, settlement, refresh, checkpoint
    and calibration run bumps it): a comparable question then costs a few array masks and one
    nearest-neighbour pass, not a read and decoding of the whole history (0.2-0.3 s on the
    shared set), whatever its ``limit``."""

    def __init__(self):
        self._lock = threading.Lock()
        self._version = None
        self._markets: dict[tuple, _History] = {}

    def history(self, market, line=None) -> _History:
        """``market``'s history at ``line`` (stored; a market without lines has its one) as of
        the current data version."""
        key = (market, stored_line(market, line))
        version = data_version()  # read before the data: the arrays are never older than it
        with self._lock:
            if version != self._version:
                self._version, self._markets = version, {}
            if key not in self._markets:
                self._markets[key] = _history(*key)
            return self._markets[key]


def comparable(
    match_id,
    market="1x2",
    line=None,
    scope="league",
    limit=COMPARABLE_DEFAULT,
    viewer=None,
    now=None,
    index=None,
):
    """Finished matches that kicked off before ``match_id`` whose published ``market``
    probabilities lie nearest to its own, within ``scope`` (``league``, ``teams`` of either
    side, or ``global``); with what happened to them, summed up per selection. A market with
    lines is compared at one line: ``line``, else the match's main line (its most balanced
    forecast); a past match counts at the same line only. ``line`` for a market without lines
    finds its prediction only at its line (2.5 for "ou25"). A match locked for ``viewer`` at
    ``now`` (see :mod:`services.market.premium`) lists none, and names no line: which matches
    are nearest, and how near, would give its probabilities back, and its main line which
    lines it quotes. ``index`` is the process's :class:`ComparableIndex` (a new one when
    None)."""
    target = cards.one(match_id, viewer, include=("predictions",), now=now)
    # Locked where the lock seals this market, or hides what its forecast was made with.
    predictions = _of_market(target.pop("predictions"), market)
    locked = market in target.pop("sealed_markets") or any(
        row["probabilities"] is None for row in predictions
    )
    at, prediction = _compared(market, predictions, line, locked)
    names = MARKET_SELECTIONS[market]
    found = {
        "match": target,
        "market": market,
        "line": None if locked and market in LINE_MARKETS else market_line(market, at),
        "scope": scope,
        "locked": locked,
        "prediction": prediction,
    }
    positions = np.zeros(0, dtype=np.intp)
    history = None
    if prediction is not None and not locked:
        history = (index or ComparableIndex()).history(market, at)
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
        share = history.share[positions]
        wanted = [prediction["probabilities"][name] for name in names]
    else:
        candidates = np.zeros((0, len(names)))
        outcome = np.zeros(0, dtype=np.intp)
        share = np.zeros(0)
        wanted = [0.0] * len(names)
    near = nearest(wanted, candidates, outcome, limit, share)
    ids = [int(history.match_id[positions[i]]) for i in near.index] if history else []
    matches = {card["id"]: card for card in cards.load(ids, include=())}
    found["items"] = [
        {
            "match": matches[match],
            "probabilities": dict(zip(names, candidates[i].tolist(), strict=True)),
            "outcome": names[outcome[i]] if outcome[i] >= 0 else None,
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


def _compared(market, predictions, line, locked) -> tuple:
    """The stored line to compare ``market`` at and the match's prediction there (None without
    one): a market without lines at its own (where ``line``, as answers write it, names it or
    is not given); a market with lines at ``line``, else at its main line (the prediction
    nearest even odds, then the lower line). A locked match's prediction is its market's one
    row, its line withheld, and it is compared at none."""
    if market not in LINE_MARKETS:
        at = stored_line(market, None)
        if line is not None and market_line(market, at) != line:
            return at, None
        return at, _at_line(predictions, at)
    if locked:
        return None, (predictions or [None])[0]
    if line is not None:
        return line, _at_line(predictions, line)
    if not predictions:
        return None, None
    first = MARKET_SELECTIONS[market][0]
    main = min(predictions, key=lambda row: (abs(row["probabilities"][first] - 0.5), row["line"]))
    return main["line"], main


def _number(value) -> float | None:
    """A float, None for NaN (no neighbours)."""
    return float(value) if np.isfinite(value) else None
