"""The track record: how the picks did, live and backfilled apart, overall and by month, market,
rating and competition type, and whether each rating can be told from the next; the picks set
apart (stored as live, failing the live rule when they settled) are in neither, listed on their
own with their reasons."""

import itertools

import numpy as np
from peewee import fn

from clock import utcnow
from engine.betting import metrics, stakes
from enums import COMPETITION_TYPES, DECIDED_STATUSES, MARKETS, NOT_LIVE_REASONS, PICK_RATINGS
from models import League, Match, Pick
from services.market import staking
from services.queries import within
from store.bulk import epoch_seconds, fetch_rows

#: Set-apart picks listed by id (all are counted).
SET_APART_LIMIT = 100

#: A rating is told from the next one down when its mean fair closing EV is above that one's by
#: at least this many standard errors of the difference (as bench/ratings.py asks on the choice
#: leagues; docs/method.md, Ratings).
TOLD_APART = 2.0

COLUMNS = (
    Match.kickoff_at,
    Pick.market,
    Pick.rating,
    League.competition_type,
    Pick.status,
    Pick.profit,
    Pick.odds,
    Pick.edge,
    Pick.clv,
    Pick.stake,
    Pick.closing_probability,
    staking.TRUSTED_PROBABILITY,
    Pick.data_quality,
    Pick.created_at,
)


def _frame(is_live=None, since=None, until=None) -> dict:
    """The picks as arrays, in settlement order (kick-off, then id)."""
    query = Pick.select(*COLUMNS).join(Match).join(League)
    if is_live is not None:
        query = query.where((Pick.is_live == is_live) & Pick.not_live_reason.is_null())
    query = within(query, Match.kickoff_at, since, until).order_by(Match.kickoff_at, Pick.id)
    rows = fetch_rows(query)
    columns = list(zip(*rows, strict=True)) or [()] * len(COLUMNS)
    kickoff, market, rating, competition, status, *numbers, created_at = columns
    frame = {
        "kickoff": epoch_seconds(kickoff),
        "created_at": epoch_seconds(created_at),
        "market": np.array(market, dtype=str),
        "rating": np.array(rating, dtype=str),
        "competition_type": np.array(competition, dtype=str),
        "status": np.array(status, dtype=str),
    }
    # As floats, NULL (a pending pick's profit, a missing CLV) becomes NaN.
    names = ("profit", "odds", "edge", "clv", "stake", "closing_probability", "trusted", "quality")
    for name, values in zip(names, numbers, strict=True):
        frame[name] = np.array(values, dtype=float)
    frame["price"] = frame["odds"].copy()  # the stakes need every pick's price
    # Average odds and edge are of settled picks: a pending pick's price (a locked one's, before
    # kick-off) must not be given back by the change it makes to an average.
    pending = frame["status"] == "pending"
    for name in ("odds", "edge"):
        frame[name][pending] = np.nan
    return frame


def _figures(frame, keys=None) -> dict:
    """Track-record figures of the frame, overall (``keys`` None) or per distinct key."""
    columns = (
        frame["status"],
        frame["profit"],
        frame["odds"],
        frame["edge"],
        frame["clv"],
        frame["stake"],
        frame["closing_probability"],
    )
    if keys is None:
        return metrics.track_record(*columns)
    return metrics.track_record_by(keys, *columns)


def _every(values, grouped) -> list[tuple]:
    """``(value, figures)`` for each of ``values``, zero figures where ``grouped`` has none."""
    nothing = metrics.track_record([], [], [], [], [], [])
    return [(value, grouped.get(value, nothing)) for value in values]


def by_competition_type(is_live: bool = True) -> dict:
    """The figures of one competition type per item, every type listed (zeros where none)."""
    frame = _frame(is_live=is_live)
    grouped = _figures(frame, frame["competition_type"])
    return {
        "is_live": is_live,
        "items": [
            {"competition_type": kind, **figures}
            for kind, figures in _every(COMPETITION_TYPES, grouped)
        ],
        "set_apart": set_apart(),
    }


def ratings_told(by_rating: list[dict]) -> list[dict]:
    """For each rating and the next one down (A and B, B and C), from their figures in
    ``by_rating``: the difference of their mean fair closing EVs, its standard error (the two
    errors in quadrature), and whether the higher rating is told apart from the lower (the
    difference positive and at least :data:`TOLD_APART` standard errors). Difference and error
    are None where a rating has too few picks with a closing price to give them; such a pair is
    not told apart."""
    figures = {row["rating"]: row for row in by_rating}
    pairs = []
    for higher, lower in itertools.pairwise(PICK_RATINGS):
        means = [figures[r]["avg_closing_ev"] for r in (higher, lower)]
        errors = [figures[r]["avg_closing_ev_std_error"] for r in (higher, lower)]
        difference = None if None in means else means[0] - means[1]
        error = None if None in errors else float(np.hypot(*errors))
        told = (
            difference is not None
            and error is not None
            and difference > 0
            and difference >= TOLD_APART * error
        )
        pairs.append(
            {
                "higher": higher,
                "lower": lower,
                "difference": difference,
                "standard_error": error,
                "told_apart": told,
            }
        )
    return pairs


def set_apart(since=None, until=None) -> dict:
    """The picks stored as live that failed the live rule when they settled: how many by
    reason, and the first :data:`SET_APART_LIMIT` of them (by id) with their match and
    reason."""
    query = within(
        Pick.select(Pick.id, Pick.match, Pick.not_live_reason, Pick.status)
        .join(Match)
        .where(Pick.not_live_reason.is_null(False)),
        Match.kickoff_at,
        since,
        until,
    )
    grouped = query.select(Pick.not_live_reason, fn.COUNT(Pick.id)).group_by(Pick.not_live_reason)
    counts = dict(grouped.tuples())
    items = [
        {"pick_id": pick_id, "match_id": match_id, "reason": reason, "status": status}
        for pick_id, match_id, reason, status in query.order_by(Pick.id)
        .limit(SET_APART_LIMIT)
        .tuples()
    ]
    return {
        "count": sum(counts.values()),
        "by_reason": [
            {"reason": reason, "count": counts.get(reason, 0)} for reason in NOT_LIVE_REASONS
        ],
        "items": items,
    }


def stake_figures(frame, settings, known=None) -> dict:
    """What the suggested stakes (by ``settings``' rule, :mod:`services.market.staking`) of the
    frame's picks with a result (won, lost, or half of either; a void returns nothing either way)
    would have made, beside a flat stake of ``STAKE_CAP`` on each, in settlement order:
    ``stakes.record``'s figures and the flat stake. ``known``: the settled picks' evidence (read
    when not given)."""
    decided = np.isin(frame["status"], DECIDED_STATUSES)
    moment = np.minimum(frame["created_at"], frame["kickoff"])[decided]
    suggested = staking.suggest(
        frame["trusted"][decided],
        frame["price"][decided],
        frame["rating"][decided],
        frame["quality"][decided],
        moment,
        settings,
        known,
    )
    unit_profit = np.nan_to_num(frame["profit"][decided] / frame["stake"][decided])
    flat = settings["STAKE_CAP"]
    return {**stakes.record(suggested, unit_profit, flat), "flat_stake": flat}


def report(since=None, until=None, settings=None, now=None) -> dict:
    """Live and backfilled picks apart, each overall and by month, market, rating and
    competition type, whether each rating is told from the next (:func:`ratings_told`), and,
    given ``settings``, what the suggested stakes would have made (:func:`stake_figures`), over
    matches kicking off in the range; the months listed are those up to ``now``'s (the clock's
    when None): a month still to come has pending picks at most, nothing to show."""
    answer = {"date_from": since, "date_to": until}
    known = None if settings is None else staking.evidence()
    this_month = (now or utcnow()).strftime("%Y-%m")
    for name, is_live in (("live", True), ("backfilled", False)):
        frame = _frame(is_live, since, until)
        month = frame["kickoff"].astype("datetime64[s]").astype("datetime64[M]")
        months = np.datetime_as_string(month, unit="M")
        answer[name] = {
            **_figures(frame),
            "by_month": [
                {"month": key, **figures}
                for key, figures in _figures(frame, months).items()
                if key <= this_month
            ],
            "by_market": [
                {"market": key, **figures}
                for key, figures in _every(MARKETS, _figures(frame, frame["market"]))
            ],
            "by_rating": [
                {"rating": key, **figures}
                for key, figures in _every(PICK_RATINGS, _figures(frame, frame["rating"]))
            ],
            "by_competition_type": [
                {"competition_type": key, **figures}
                for key, figures in _every(
                    COMPETITION_TYPES, _figures(frame, frame["competition_type"])
                )
            ],
        }
        answer[name]["ratings_told"] = ratings_told(answer[name]["by_rating"])
        if settings is not None:
            answer[name]["stakes"] = stake_figures(frame, settings, known)
    answer["set_apart"] = set_apart(since, until)
    return answer


def of_rating(rating: str, is_live: bool = True) -> dict:
    """The figures of the live (or backfilled) picks rated ``rating``, what a sealed pick's page
    shows of the record behind it."""
    frame = _frame(is_live)
    chosen = frame["rating"] == rating
    return _figures({name: values[chosen] for name, values in frame.items()})


def settled_series(is_live: bool) -> dict:
    """The settled picks of the live or the backfilled record, in settlement order: their
    profits (units won or lost per pick) and, for those with a closing probability, their fair
    closing EVs (odds × de-margined closing probability − 1)."""
    frame = _frame(is_live)
    settled = frame["status"] != "pending"
    closing_ev = frame["odds"][settled] * frame["closing_probability"][settled] - 1.0
    return {
        "profits": np.nan_to_num(frame["profit"][settled]).tolist(),
        "closing_evs": closing_ev[np.isfinite(closing_ev)].tolist(),
    }
