"""Suggested stakes of stored picks (``engine.betting.stakes``): computed when a pick is read, from
what it was made with and the results known when it was made, never stored.

A stake is a function of the pick's sealed fields (its probability and price, through the
probability the rating rule trusts), its data quality, the settled picks of its rating and price
band known when it was made, and the configuration; so it is not written with the pick and the
ledger's entries keep their format. A pick's *moment* is when it was made, or its match's
kick-off if that came first (a backfilled pick is made after its match, as of its kick-off); a
settled pick (not set apart) is known a day after its match kicked off
(``stakes.RESULT_DELAY``).
"""

import numpy as np
from peewee import fn

from engine.betting import stakes
from enums import DECIDED_STATUSES
from models import Match, Pick
from store.bulk import epoch_seconds, fetch_rows

#: The probability a pick's stake is sized from: the one the rating rule trusted when it made the
#: pick (its edge shrunk by how far earlier edges at its price held to the close:
#: ``engine.betting.trust``), stored with the pick; for a pick made before that was stored, its
#: published probability. The one place the stakes read it from.
TRUSTED_PROBABILITY = fn.COALESCE(Pick.trusted_probability, Pick.probability)


def settings_rule(settings) -> dict:
    """The stake rule's settings, as ``stakes.suggested`` takes them."""
    return {
        "fraction": settings["STAKE_KELLY_FRACTION"],
        "cap": settings["STAKE_CAP"],
        "min_quality": settings["RATING_B_QUALITY"],
        "min_settled": settings["STAKE_MIN_SETTLED"],
    }


def evidence(read=fetch_rows) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The settled picks' ``(known_at, rating, odds)``: every pick with a result (won, lost, or
    half of either), set-apart ones left out, known a day after its match kicked off. One
    query, read by ``read`` (its rows as the driver returns them: ``fetch_rows``, or a
    snapshot's ``fetch``)."""
    rows = read(
        Pick.select(Match.kickoff_at, Pick.rating, Pick.odds)
        .join(Match)
        .where(Pick.status.in_(DECIDED_STATUSES) & Pick.not_live_reason.is_null())
    )
    kickoff, rating, odds = list(zip(*rows, strict=True)) or [(), (), ()]
    known_at = epoch_seconds(kickoff).astype(float) + stakes.RESULT_DELAY
    return known_at, np.array(rating, dtype=str), np.array(odds, dtype=float)


def suggest(probability, odds, rating, data_quality, moment, settings, known=None) -> np.ndarray:
    """The suggested stake of each pick (arrays, or lists: the trusted probability, price,
    rating, data quality, and moment in epoch seconds, see the module's docstring); ``known`` is
    :func:`evidence`'s answer, read when not given."""
    known_at, known_rating, known_odds = evidence() if known is None else known
    counts = stakes.settled_before(moment, rating, odds, known_at, known_rating, known_odds)
    return stakes.suggested(probability, odds, data_quality, counts, **settings_rule(settings))


def moments(created_at, kickoff_at) -> np.ndarray:
    """Each pick's moment (epoch seconds): when it was made, or its kick-off if that came first
    (aware datetimes)."""
    return np.minimum(
        [moment.timestamp() for moment in created_at],
        [moment.timestamp() for moment in kickoff_at],
    )


def with_stakes(picks: list[dict], kickoffs: dict, settings) -> list[dict]:
    """``picks`` (dicts with ``trusted_probability``, ``odds``, ``rating``, ``data_quality``,
    ``created_at`` and ``match_id``), each given its ``suggested_stake``; ``kickoffs`` maps
    each match id to its kick-off. One query, none without picks."""
    if not picks:
        return picks
    stake = suggest(  # lists: the engine makes arrays of them
        [pick.pop("trusted_probability") for pick in picks],
        [pick["odds"] for pick in picks],
        [pick["rating"] for pick in picks],
        [pick["data_quality"] for pick in picks],
        moments(
            [pick["created_at"] for pick in picks],
            [kickoffs[pick["match_id"]] for pick in picks],
        ),
        settings,
    )
    for pick, value in zip(picks, stake.tolist(), strict=True):
        pick["suggested_stake"] = value
    return picks
