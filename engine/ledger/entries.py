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
  ``pick.published`` entry, with what settled it: the match's kick-off as finally known, its
  status and final score, the closing price, its bookmaker and the de-margined closing
  probability (the margin method named), which closing line it is (``closingLine``: the
  source's closing columns, ``source``, or the service's own line, the latest price it saw
  before kick-off, ``seen``; null without a closing price), and whether the pick counts as live (see
  :func:`not_live_reasons`) and, if not, why. Outcomes written before these fields were added
  carry only status, profit, closing odds and CLV, and those written before the closing line
  was named carry no ``closingLine``; their bytes never change.

A pick of a market with a line (``LINE_MARKETS``: Asian handicap, over/under at a line but 2.5)
carries ``line`` (a decimal string) in its committed pick, its ``pick.published`` entry and its
outcome, which may then be ``half-won`` or ``half-lost`` too (``engine.model.lines``), a push being
``void``. Picks of the other markets carry no ``line`` key, so their entries keep the shape and
bytes they always had.

A pick is **live** only if it was made before its match's kick-off as finally known *and* its
``pick.published`` entry was covered by a signed checkpoint dated strictly before that kick-off
(:func:`not_live_reasons`): the entry's own ``kickoffAt``, written at publication, proves
nothing about when the match really started.
"""

import hashlib
import json
import operator
import re
from datetime import UTC, datetime
from decimal import Decimal
from itertools import compress, repeat

import numpy as np

from enums import CLOSING_LINES, LEDGER_KINDS, LINE_MARKETS, NOT_LIVE_REASONS

PUBLISHED, SETTLED, VOIDED = LEDGER_KINDS

#: Bytes of random salt behind each commitment: enough that no one can try every pick.
SALT_BYTES = 32

#: The outcome entry's kind for each status a pick settles with.
_KINDS = {
    "won": SETTLED,
    "lost": SETTLED,
    "void": VOIDED,
    "half-won": SETTLED,
    "half-lost": SETTLED,
}
#: The statuses only a line (a quarter line's two halves) can give.
_HALF_STATUSES = frozenset({"half-won", "half-lost"})

_HEX = re.compile("[0-9a-f]{64}")


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
    ``rating``, ``stake`` and ``created_at``, and ``line`` for a pick of a line market (a
    pick's fields never change once stored, but for settlement's)."""
    committed = {
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
    return _with_line(committed, pick)


def _with_line(fields: dict, pick: dict) -> dict:
    """``fields`` with the pick's ``line`` if its market has one; other markets' unchanged."""
    if pick["market"] not in LINE_MARKETS:
        return fields
    if pick.get("line") is None:
        raise ValueError(f"a {pick['market']} pick needs its line")
    return {**fields, "line": decimal(pick["line"])}


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
    # The line of a line-market pick is sealed in the commitment only: which line to back is
    # part of the pick, and the entry is public before kick-off.
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


def not_live_reasons(made_at, signed_at, kickoff_at, published=None) -> np.ndarray:
    """Why each pick is not live, None where it is: the live rule, applied by settlement and
    re-applied by the verifier from the entries alone.

    A pick is live only if it was made (``made_at``) strictly before its match's kick-off as
    finally known (``kickoff_at``), it has a ``pick.published`` entry (``published``, all True
    when omitted), and the first signed checkpoint covering that entry is dated (``signed_at``)
    strictly before the kick-off. Instants are epoch seconds; ``signed_at`` is NaN where no
    checkpoint covers the entry yet. Returns an object array of None or one of
    :data:`NOT_LIVE_REASONS`.
    """
    made_at = np.asarray(made_at, dtype=float)
    signed_at = np.asarray(signed_at, dtype=float)
    kickoff_at = np.asarray(kickoff_at, dtype=float)
    published = np.ones(made_at.shape, bool) if published is None else np.asarray(published, bool)
    signed_before = np.isfinite(signed_at) & (signed_at < kickoff_at)
    reasons = np.select(
        [~(made_at < kickoff_at), ~published, ~signed_before],
        list(NOT_LIVE_REASONS),
        default="",
    ).astype(object)
    reasons[reasons == ""] = None
    return reasons


def outcome_entry(
    *,
    pick_id,
    published,
    status,
    profit,
    closing_odds,
    clv,
    settled_at,
    kickoff_at,
    match_status,
    score,
    closing_bookmaker,
    closing_probability,
    closing_line,
    margin_method,
    not_live_reason,
    line=None,
) -> bytes:
    """The ``pick.settled`` (won, lost, half-won, half-lost) or ``pick.voided`` (void) entry of
    a pick, citing the leaf hash ``published`` (bytes) of its ``pick.published`` entry, with
    what settled it: the match's ``kickoff_at``, ``match_status`` and ``score`` (``(home,
    away)`` goals or None), the closing price, its bookmaker and de-margined probability (by
    ``margin_method``), the ``closing_line`` it comes from (one of ``CLOSING_LINES``, None
    without a closing price), and ``not_live_reason`` (None: the pick counts as live);
    ``line`` is the line of a pick of a line market, None for the others (whose entries carry
    no ``line``)."""
    if status not in _KINDS:
        raise ValueError(f"a pick settles won, lost, void, half-won or half-lost, not {status!r}")
    if status in _HALF_STATUSES and line is None:
        raise ValueError(f"only a pick at a line is {status}")
    if closing_line is not None and closing_line not in CLOSING_LINES:
        raise ValueError(f"not a closing line: {closing_line!r}")
    entry = {} if line is None else {"line": decimal(line)}
    return canonical(
        entry
        | {
            "type": _KINDS[status],
            "pickId": pick_id,
            "published": published.hex(),
            "status": status,
            "profit": decimal(profit),
            "closingOdds": decimal(closing_odds),
            "clv": decimal(clv),
            "settledAt": instant(settled_at),
            "kickoffAt": instant(kickoff_at),
            "matchStatus": match_status,
            "score": None if score is None else {"home": int(score[0]), "away": int(score[1])},
            "closingBookmaker": closing_bookmaker,
            "closingLine": closing_line,
            "closingProbability": decimal(closing_probability),
            "marginMethod": margin_method,
            "live": not_live_reason is None,
            "notLiveReason": not_live_reason,
        }
    )


def outcome_entries(*columns, **named) -> list[bytes]:
    """:func:`outcome_texts` as bytes, what the ledger hashes."""
    return list(map(str.encode, outcome_texts(*columns, **named)))


def outcome_texts(
    pick_ids,
    published,
    status,
    profit,
    closing_odds,
    clv,
    settled_at,
    *,
    kickoff_at,
    match_status,
    home_goals,
    away_goals,
    closing_bookmaker,
    closing_probability,
    closing_line,
    margin_method,
    not_live_reason,
    line=None,
):
    """:func:`outcome_entry` for many picks at once, as text (lists of one length, ``published``
    as hex, the score as ``home_goals``/``away_goals`` with None where there is none, one
    ``settled_at`` and ``margin_method``, a profit for every pick, ``closing_line`` a column
    like the others, ``line`` a column with None for the picks without one, or None for none at
    all): the same bytes (as text: the ledger stores the text and hashes the bytes, so
    neither is converted back), written from a template a column at a time, for settlement runs
    of a hundred thousand picks."""
    if line is None:
        line = [None] * len(pick_ids)
    columns = [
        list(column)
        for column in (
            pick_ids,
            published,
            status,
            profit,
            closing_odds,
            clv,
            kickoff_at,
            match_status,
            home_goals,
            away_goals,
            closing_bookmaker,
            closing_probability,
            closing_line,
            not_live_reason,
            line,
        )
    ]
    (
        pick_ids,
        published,
        status,
        profit,
        closing_odds,
        clv,
        kickoff_at,
        match_status,
        home_goals,
        away_goals,
        closing_bookmaker,
        closing_probability,
        closing_line,
        not_live_reason,
        line,
    ) = columns
    if len({len(column) for column in columns}) > 1:
        raise ValueError("the columns of outcomes differ in length")
    kinds = _KINDS
    if not set(status) <= kinds.keys() or not _all_hashes(published):
        for state, value in zip(status, published, strict=True):
            if state not in kinds or not isinstance(value, str) or not _HEX.fullmatch(value):
                raise ValueError(f"not an outcome: {state!r}, citing {value!r}")
    if None in profit:
        raise ValueError("a settled pick has a profit")
    if not _HALF_STATUSES.isdisjoint(status):
        for state, at_line in zip(status, line, strict=True):
            if state in _HALF_STATUSES and at_line is None:
                raise ValueError(f"only a pick at a line is {state}")
    if not set(closing_line) <= {*CLOSING_LINES, None}:
        unknown = sorted(set(closing_line) - {*CLOSING_LINES, None}, key=repr)
        raise ValueError(f"not a closing line: {unknown[0]!r}")
    # Each entry is the template's literal parts and its own values joined in one call
    # (``str.join`` over ``zip``): Python code runs per distinct value of a column (and per
    # null, zero or odd number there, see _quoted), not per entry.
    parts = (
        '{"closingBookmaker":',
        _texts(closing_bookmaker),
        ',"closingLine":',
        _texts(closing_line),
        ',"closingOdds":',
        _quoted(closing_odds),
        ',"closingProbability":',
        _quoted(closing_probability),
        ',"clv":',
        _quoted(clv),
        ',"kickoffAt":"',
        _instants(kickoff_at),
        '",',
        _written(_quoted(line), lambda text: "" if text == "null" else f'"line":{text},'),
        '"live":',
        _written(not_live_reason, lambda reason: "true" if reason is None else "false"),
        f',"marginMethod":{_text(margin_method)},"matchStatus":',
        _texts(match_status),
        ',"notLiveReason":',
        _texts(not_live_reason),
        ',"pickId":',
        map(str, map(int, pick_ids)),
        ',"profit":',
        _quoted(profit),
        ',"published":"',
        published,
        '","score":',
        _scores(home_goals, away_goals),
        f',"settledAt":"{instant(settled_at)}","status":"',
        _written(status, lambda state: f'{state}","type":"{kinds[state]}"}}'),
    )
    columns = (repeat(part) if isinstance(part, str) else part for part in parts)
    return list(map("".join, zip(*columns, strict=False)))  # literals repeat without end


def _all_hashes(values) -> bool:
    """Whether every value is a SHA-256 hash as lower-case hex text (checked all at once)."""
    if not set(map(type, values)) <= {str} or not set(map(len, values)) <= {64}:
        return False
    joined = "".join(values)
    return joined.isascii() and not joined.encode().translate(None, b"0123456789abcdef")


def _written(values, write) -> list[str]:
    """``write`` of each value, called once per distinct value (names, states and lines repeat):
    for values that compare equal only when written alike (strings, None)."""
    known = {value: write(value) for value in set(values)}
    return list(map(known.__getitem__, values))


def _text(value) -> str:
    """A nullable string as canonical JSON."""
    return "null" if value is None else json.dumps(value, ensure_ascii=False)


def _texts(values) -> list[str]:
    """:func:`_text` of each value, each distinct one written once (names and states repeat)."""
    return _written(values, _text)


def _instants(values) -> list[str]:
    """:func:`instant` of each datetime, each distinct one written once (kick-offs repeat; two
    datetimes equal as instants are written alike)."""
    return _written(values, instant)


def _scores(home, away) -> list[str]:
    """Each score as canonical JSON, ``null`` unless both goals are known: looked up by home
    goals, then away goals, in a table of the distinct ones (no pair made per score)."""
    aways = set(away)
    table = {
        h: {
            a: "null" if h is None or a is None else f'{{"away":{int(a)},"home":{int(h)}}}'
            for a in aways
        }
        for h in set(home)
    }
    return list(map(dict.__getitem__, map(table.__getitem__, home), away))


def _quoted(values: list) -> list[str]:
    """Nullable numbers as canonical JSON (``null`` or :func:`decimal`'s string in quotes), a
    column at a time: each distinct value written once when values repeat (settled prices and
    profits do), else every value through ``repr`` in one pass, :func:`decimal` called only for
    those ``repr`` writes otherwise (scientific notation, or not finite: refused)."""
    count = len(values)
    distinct = set(values)
    if len(distinct) * 4 <= count:
        known = {value: "null" if value is None else f'"{decimal(value)}"' for value in distinct}
        quoted = list(map(known.__getitem__, values))
        if 0 in known:  # 0.0 and -0.0 are one key, but their signs are written
            for index in compress(range(count), map(operator.eq, values, repeat(0))):
                quoted[index] = f'"{decimal(values[index])}"'
        return quoted
    # None is read as NaN here, and written "null" after; a number repr writes otherwise than
    # decimal does ("1e-05", "nan", "inf") goes through decimal, which writes it or refuses it.
    quoted = list(map('"%r"'.__mod__, map(float, map(_NONE_AS_NAN.get, values, values))))
    if None in distinct:
        for index in compress(range(count), map(operator.is_, values, repeat(None))):
            quoted[index] = "null"
    joined = "".join(quoted)
    if "e" in joined or '"nan"' in joined or 'inf"' in joined:
        for index, text in enumerate(quoted):
            if "e" in text or text in ('"nan"', '"inf"', '"-inf"'):
                quoted[index] = f'"{decimal(values[index])}"'
    return quoted


#: What :func:`_quoted` reads a None as, before writing it "null".
_NONE_AS_NAN = {None: "nan"}
