"""The ledger's entries: canonical JSON, the commitment that seals a pick until it may be shown,
and the reveal that opens it.

An entry is canonical JSON: keys sorted, no spaces, UTF-8, numbers that are not integers written
as decimal strings (``"2.1"``, never ``2.1``), instants as ``YYYY-MM-DDTHH:MM:SSZ``. So its bytes
are a function of its content, and anyone re-encoding what they parsed gets the same bytes.

- ``pick.published``: a live pick was stored before kick-off. It names the pick, its match,
  kick-off, market, rating, competition type, publication time and model version, and carries
  ``commitment = SHA-256(salt ‖ canonical pick)``: the pick's selection, price, bookmaker,
  probability and edge stay sealed until the salt and the pick are revealed.
- ``pick.settled`` / ``pick.voided``: the pick's outcome, citing the leaf hash of its
  ``pick.published`` entry.
"""

import hashlib
import json
import re
from datetime import UTC, datetime
from decimal import Decimal

from enums import LEDGER_KINDS

PUBLISHED, SETTLED, VOIDED = LEDGER_KINDS

#: Bytes of random salt behind each commitment: enough that no one can try every pick.
SALT_BYTES = 32

_HEX = re.compile("[0-9a-f]{64}")
_HEXES = re.compile("[0-9a-f]*")


def canonical(value) -> bytes:
    """``value`` as canonical JSON bytes: sorted keys, no spaces, UTF-8.

    Floats are refused: a number that is not an integer is written as a decimal string
    (:func:`decimal`), so no two encoders can disagree on its digits.
    """
    _check(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _check(value) -> None:
    if isinstance(value, float):
        raise TypeError(f"write {value!r} as a decimal string, not a float")
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"object keys are strings, not {key!r}")
            _check(item)
    elif isinstance(value, list | tuple):
        for item in value:
            _check(item)


def decimal(value) -> str | None:
    """A float as the decimal string of its shortest exact form (``2.1`` → ``"2.1"``,
    ``1e-05`` → ``"0.00001"``), None for None; parsing the string gives the same float back."""
    if value is None:
        return None
    text = repr(float(value))
    if "e" in text:  # repr's scientific form, below 1e-4 or from 1e16
        return format(Decimal(text), "f")
    if text in ("nan", "inf", "-inf"):
        raise ValueError(f"{value!r} is not a finite number")
    return text


def instant(moment: datetime) -> str:
    """A timezone-aware datetime as ``YYYY-MM-DDTHH:MM:SSZ`` (UTC, to the second)."""
    if moment.tzinfo is None:
        raise ValueError("instants must be timezone-aware")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def committed_pick(pick: dict) -> dict:
    """The part of a pick its commitment seals, in the ledger's names: ``pick`` holds ``id``,
    ``match_id``, ``market``, ``selection``, ``odds``, ``bookmaker``, ``probability``, ``edge``,
    ``rating``, ``stake`` and ``created_at`` (a pick's fields never change once stored, but
    for settlement's)."""
    return {
        "id": pick["id"],
        "matchId": pick["match_id"],
        "market": pick["market"],
        "selection": pick["selection"],
        "odds": decimal(pick["odds"]),
        "bookmaker": pick["bookmaker"],
        "probability": decimal(pick["probability"]),
        "edge": decimal(pick["edge"]),
        "rating": pick["rating"],
        "stake": decimal(pick["stake"]),
        "publishedAt": instant(pick["created_at"]),
    }


def commitment(salt: bytes, pick: dict) -> str:
    """SHA-256(salt ‖ canonical pick), hex: binds the pick without showing it."""
    if len(salt) != SALT_BYTES:
        raise ValueError(f"a salt is {SALT_BYTES} bytes")
    return hashlib.sha256(salt + canonical(committed_pick(pick))).hexdigest()


def reveal(salt: bytes, pick: dict) -> dict:
    """What opens a commitment: the committed pick and its salt (hex)."""
    return {"pick": committed_pick(pick), "salt": salt.hex()}


def opens(commitment_hex: str, opened: dict) -> bool:
    """Whether a reveal (as :func:`reveal` writes it, or as parsed from JSON) opens the
    commitment."""
    salt = bytes.fromhex(opened["salt"])
    digest = hashlib.sha256(salt + canonical(opened["pick"])).hexdigest()
    return digest == commitment_hex


def published_entry(pick: dict, salt: bytes, *, kickoff_at, competition_type, model_version):
    """The ``pick.published`` entry of a live pick (see :func:`committed_pick` for ``pick``)."""
    return canonical(
        {
            "type": PUBLISHED,
            "pickId": pick["id"],
            "matchId": pick["match_id"],
            "kickoffAt": instant(kickoff_at),
            "market": pick["market"],
            "rating": pick["rating"],
            "competitionType": competition_type,
            "publishedAt": instant(pick["created_at"]),
            "modelVersion": model_version,
            "commitment": commitment(salt, pick),
        }
    )


def outcome_entry(*, pick_id, published, status, profit, closing_odds, clv, settled_at) -> bytes:
    """The ``pick.settled`` (won, lost) or ``pick.voided`` (void) entry of a pick, citing the
    leaf hash ``published`` (bytes) of its ``pick.published`` entry."""
    if status not in ("won", "lost", "void"):
        raise ValueError(f"a pick settles won, lost or void, not {status!r}")
    return canonical(
        {
            "type": VOIDED if status == "void" else SETTLED,
            "pickId": pick_id,
            "published": published.hex(),
            "status": status,
            "profit": decimal(profit),
            "closingOdds": decimal(closing_odds),
            "clv": decimal(clv),
            "settledAt": instant(settled_at),
        }
    )


def outcome_entries(pick_ids, published, status, profit, closing_odds, clv, settled_at):
    """:func:`outcome_entry` for many picks at once (lists of one length, ``published`` as hex,
    one ``settled_at``, a profit for every pick): the same bytes, written from a template a
    column at a time, for settlement runs of a hundred thousand picks."""
    columns = [list(column) for column in (pick_ids, published, status, profit, closing_odds, clv)]
    pick_ids, published, status, profit, closing_odds, clv = columns
    if len({len(column) for column in columns}) > 1:
        raise ValueError("the columns of outcomes differ in length")
    kinds = {"won": SETTLED, "lost": SETTLED, "void": VOIDED}
    if (
        not set(status) <= kinds.keys()
        or not set(map(type, published)) <= {str}
        or not set(map(len, published)) <= {64}
        or not _HEXES.fullmatch("".join(published))
    ):
        for state, value in zip(status, published, strict=True):
            if state not in kinds or not isinstance(value, str) or not _HEX.fullmatch(value):
                raise ValueError(f"not an outcome: {state!r}, citing {value!r}")
    if None in profit:
        raise ValueError("a settled pick has a profit")
    tail = f'"settledAt":"{instant(settled_at)}",'
    texts = [
        f'{{"closingOdds":{closing},"clv":{value},"pickId":{pick_id},"profit":{gain},'
        f'"published":"{cited}",{tail}"status":"{state}","type":"{kinds[state]}"}}'
        for closing, value, pick_id, gain, cited, state in zip(
            _quoted(closing_odds),
            _quoted(clv),
            map(int, pick_ids),
            _quoted(profit),
            published,
            status,
            strict=True,
        )
    ]
    return list(map(str.encode, texts))


def _quoted(values: list) -> list[str]:
    """Nullable numbers as canonical JSON (``null`` or :func:`decimal`'s string in quotes), a
    column at a time: each distinct value written once when values repeat (settled prices and
    profits do)."""
    distinct = set(values)
    if len(distinct) * 4 > len(values):
        return ["null" if value is None else f'"{decimal(value)}"' for value in values]
    known = {value: "null" if value is None else f'"{decimal(value)}"' for value in distinct}
    quoted = list(map(known.__getitem__, values))
    if 0 in known:  # 0.0 and -0.0 are one key, but their signs are written
        quoted = [
            f'"{decimal(value)}"' if value == 0 else text
            for value, text in zip(values, quoted, strict=True)
        ]
    return quoted
