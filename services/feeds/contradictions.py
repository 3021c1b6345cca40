"""Contradictions: a source that disagrees with what is stored of a match (its score), recorded
once, holding the match's settlement until an operator chooses a value.

- **Recorded once.** A sync's record whose score differs from its finished match's stored one
  is never stored; it opens a ``contradiction`` (the stored value, the source's, the source). The
  same disagreement reported again writes nothing and is not listed again; a new, different
  value from a source updates the open row. One open row per match and field (an index holds
  it). A value an operator has already ruled on for the match (either side of a resolved
  contradiction) opens nothing again.
- **Holding settlement.** ``services.record.settling`` leaves the pending picks of a match with
  an open contradiction pending.
- **Resolved by an operator** (``flask data contradictions resolve``, the Operations API, both
  through ``services.operations.jobs``): ``stored`` keeps the stored value, ``source`` takes the
  source's, or a score of the operator's own. A chosen score other than the stored one is
  written to the match, unless its picks were settled on the stored result before the
  disagreement arrived: a settled result is never changed (SettledResultProtected).
"""

import re
from collections import Counter

from peewee import fn

from errors import ContradictionNotOpen, SettledResultProtected, ValidationFailed
from models import Contradiction, Match, Pick, Team
from services.feeds import imports, meetings
from services.queries import paginate
from services.webhooks import events

#: How an operator writes a score of their own: home goals, a hyphen, away goals.
SCORE = re.compile(r"^(\d{1,2})-(\d{1,2})$")
#: What a repeat of a known disagreement (or one an operator ruled on) is: nothing new.
KNOWN, DECIDED = "known", "decided"
OPENED, CHANGED = "opened", "changed"


def score_text(home: int, away: int) -> str:
    """A score as contradictions hold it: ``5-0``."""
    return f"{home}-{away}"


def parse_score(text: str) -> tuple[int, int]:
    """``5-0`` → (5, 0); ValidationFailed for anything else."""
    found = SCORE.match(text or "")
    if found is None:
        raise ValidationFailed(
            "A score is home goals, a hyphen and away goals: 2-1.",
            errors={"value": ['"stored", "source" or a score such as "2-1".']},
        )
    return int(found[1]), int(found[2])


def check(records, source: str, now) -> tuple[dict[int, dict], list[int]]:
    """The records of ``source`` whose score contradicts their finished match's stored one,
    each recorded (:func:`record`): ``{position: {"stored", "offered", "state"}}``, and the
    positions of the rest, to store. A record is its match's as the import finds it (its pair's
    meeting, on its day or moved), whatever day the source gives it."""
    scored = [
        i for i, r in enumerate(records) if r.home_goals is not None and r.away_goals is not None
    ]
    found = meetings.stored_matches([records[i] for i in scored])
    conflicts = {}
    for i, match in zip(scored, found, strict=True):
        if match is None or match["status"] != "finished" or match["home_goals"] is None:
            continue
        stored = score_text(match["home_goals"], match["away_goals"])
        offered = score_text(records[i].home_goals, records[i].away_goals)
        if offered == stored:
            continue
        state = record(match["id"], "score", stored, offered, source, now)
        conflicts[i] = {"stored": stored, "offered": offered, "state": state}
    return conflicts, [i for i in range(len(records)) if i not in conflicts]


def record(match_id: int, field: str, stored: str, offered: str, source: str, now) -> str:
    """Record that ``source`` says ``offered`` where ``stored`` is stored: ``opened`` (a new
    contradiction), ``changed`` (the open one given a new value), ``known`` (the open one says
    so already) or ``decided`` (an operator ruled on this value for the match already)."""
    current = Contradiction.get_or_none(
        (Contradiction.match == match_id)
        & (Contradiction.field == field)
        & (Contradiction.status == "open")
    )
    if current is not None:
        if (current.source_value, current.source, current.stored_value) == (
            offered,
            source,
            stored,
        ):
            return KNOWN
        Contradiction.update(
            source_value=offered, source=source, stored_value=stored, updated_at=now
        ).where(Contradiction.id == current.id).execute()
        return CHANGED
    ruled = (
        Contradiction.select()
        .where(
            (Contradiction.match == match_id)
            & (Contradiction.field == field)
            & (Contradiction.status == "resolved")
            & (
                (Contradiction.stored_value == offered)
                | (Contradiction.source_value == offered)
                | (Contradiction.chosen_value == offered)
            )
        )
        .exists()
    )
    if ruled:
        return DECIDED
    Contradiction.create(
        match=match_id,
        field=field,
        stored_value=stored,
        source_value=offered,
        source=source,
        status="open",
        opened_at=now,
        updated_at=now,
    )
    return OPENED


def listing(status=None, page=1, page_size=20) -> dict:
    """One page of contradictions, the oldest open first (then the latest resolved), each with
    its match and how many of its picks wait on it."""
    query = Contradiction.select()
    if status:
        query = query.where(Contradiction.status == status)
    query = query.order_by(
        Contradiction.status.asc(),  # "open" before "resolved"
        Contradiction.opened_at.asc(),
        Contradiction.id.asc(),
    )
    found = paginate(query, page, page_size)
    found["items"] = described(found["items"])
    return found


def open_for(source: str, oldest: int = 3) -> tuple[int, list[dict]]:
    """How many contradictions ``source`` holds open, and the ``oldest`` few, described."""
    query = Contradiction.select().where(
        (Contradiction.source == source) & (Contradiction.status == "open")
    )
    count = query.count()
    rows = list(query.order_by(Contradiction.opened_at, Contradiction.id).limit(oldest))
    return count, described(rows) if count else []


def described(rows) -> list[dict]:
    """Contradiction rows as the API and the CLI show them (three queries, however many)."""
    rows = list(rows)
    if not rows:
        return []
    match_ids = sorted({row.match_id for row in rows})
    matches = {
        match_id: (slug, home, away)
        for match_id, slug, home, away in Match.select(
            Match.id, Match.slug, Match.home_team, Match.away_team
        )
        .where(Match.id.in_(match_ids))
        .tuples()
    }
    team_ids = sorted({team for _, home, away in matches.values() for team in (home, away)})
    teams = dict(Team.select(Team.id, Team.name).where(Team.id.in_(team_ids)).tuples())
    held = Counter(
        dict(
            Pick.select(Pick.match, fn.COUNT(Pick.id))
            .where(Pick.match.in_(match_ids) & (Pick.status == "pending"))
            .group_by(Pick.match)
            .tuples()
        )
    )
    return [_describe(row, matches[row.match_id], teams, held) for row in rows]


def _describe(row, match, teams, held) -> dict:
    slug, home, away = match
    return {
        "id": row.id,
        "match_id": row.match_id,
        "match": f"{teams[home]} v {teams[away]}",
        "slug": slug,
        "field": row.field,
        "stored_value": row.stored_value,
        "source_value": row.source_value,
        "source": row.source,
        "status": row.status,
        "opened_at": row.opened_at,
        "updated_at": row.updated_at,
        "picks_held": held[row.match_id] if row.status == "open" else 0,
        "resolved_at": row.resolved_at,
        "resolved_by": row.resolved_by,
        "chosen_value": row.chosen_value,
    }


def get(contradiction_id: int) -> dict:
    """One contradiction, described; NotFound."""
    return described([Contradiction.get_or_raise(contradiction_id, "Contradiction")])[0]


def choose(contradiction_id: int, value: str) -> str:
    """The value ``value`` chooses for an open contradiction (``stored``, ``source`` or a
    score), checked before anything is written or recorded: NotFound, ContradictionNotOpen,
    ValidationFailed for a malformed score, SettledResultProtected for a value other than the
    stored one where the match's picks were settled on it."""
    row = Contradiction.get_or_raise(contradiction_id, "Contradiction")
    if row.status != "open":
        raise ContradictionNotOpen(
            f"Contradiction {row.id} was resolved by {row.resolved_by} at "
            f"{row.resolved_at.isoformat()}: {row.chosen_value} kept."
        )
    if value == "stored":
        chosen = row.stored_value
    elif value == "source":
        chosen = row.source_value
    else:
        chosen = score_text(*parse_score(value))
    settled = (
        Pick.select().where((Pick.match == row.match_id) & (Pick.status != "pending")).exists()
    )
    if chosen != row.stored_value and settled:
        raise SettledResultProtected(
            f"Match {row.match_id}'s picks were settled on {row.stored_value} before "
            f"{row.source} said {row.source_value}: a settled result is never changed. "
            'Resolve it with "stored" (flask data contradictions resolve '
            f"{row.id} --keep)."
        )
    return chosen


def resolve(contradiction_id: int, value: str, by: str, now) -> dict:
    """Resolve an open contradiction with ``value`` (see :func:`choose`), ``by`` whom
    (``user:ID`` or ``cli:NAME``): the chosen score written to the match where it differs
    (with its ``match.result`` event), the contradiction closed. The match settles at the next
    settlement. Returns the contradiction as resolved."""
    chosen = choose(contradiction_id, value)
    row = Contradiction.get_by_id(contradiction_id)
    if chosen != row.stored_value:
        home, away = parse_score(chosen)
        Match.update(home_goals=home, away_goals=away, updated_at=now).where(
            Match.id == row.match_id
        ).execute()
        match = Match.get_by_id(row.match_id)
        events.emit("match.result", [imports._result_event(match.__data__)], now)
    updated = (
        Contradiction.update(
            status="resolved", resolved_at=now, resolved_by=by, chosen_value=chosen
        )
        .where((Contradiction.id == row.id) & (Contradiction.status == "open"))
        .execute()
    )
    if not updated:  # another operator's resolution committed first
        raise ContradictionNotOpen(f"Contradiction {row.id} was resolved meanwhile.")
    return get(row.id)
