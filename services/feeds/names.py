"""Team names per source: how each live source names the stored teams, never a silent duplicate.

A name a source gives is looked up as ``(source, country, name)`` in ``team_alias``:

- mapped to a team: the record takes that team's stored name;
- not known yet: a stored team of that exact name and country is taken (and remembered); else
  a new team is made only where the name is the reference spelling (football-data's season
  files, which ``data import`` reads too, and its fixture files for a league nothing is stored
  of yet); else the name is remembered unmapped and every record naming it is held back until
  an operator maps it (``flask data teams map``) or says it is a new team (``--new``). The Odds
  API's names never make a team;
- remembered unmapped: held back again.

Before any of this, and before an import finds a record's match, a name is put in one spelling
(:func:`normal`): Unicode NFC (a decomposed "Münster" is the composed one), variation selectors and
zero-width characters dropped. A name whose letters mix scripts (a Cyrillic "А" in "Аrsenal") is
refused with its reason (:func:`mixed_scripts`), never stored as a team beside the real one.

The unmapped names are listed by ``flask data teams`` (``list`` shows every team with its id and
aliases, as ``GET /api/v1/ops/teams`` does), ``flask data sync`` and the health report.
"""

import dataclasses
import unicodedata
from collections import defaultdict

from errors import CommandError, NotFound
from models import League, Match, SourceFetch, Team, TeamAlias
from services.feeds.sources import fetching
from store.database import db

#: What :func:`normal` drops: variation selectors (U+FE00-FE0F and the supplement), zero-width
#: spaces and joiners, the word joiner and the byte-order mark: invisible, they only make two
#: spellings of one name.
INVISIBLE = frozenset(
    [chr(code) for code in range(0xFE00, 0xFE10)]
    + [chr(code) for code in range(0xE0100, 0xE01F0)]
    + ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]
)


def normal(name: str) -> str:
    """``name`` in the one spelling names are matched in: NFC, without the :data:`INVISIBLE`
    characters."""
    return unicodedata.normalize("NFC", "".join(c for c in name if c not in INVISIBLE))


def _script(character: str) -> str | None:
    """The script of a letter by its Unicode name's first word (LATIN, CYRILLIC, GREEK...);
    None for anything else (digits, spaces, punctuation, modifier letters such as the ʻokina).
    Japanese writes its kana and kanji side by side: they count as one."""
    category = unicodedata.category(character)
    if not category.startswith("L") or category == "Lm":
        return None
    script = unicodedata.name(character, "UNKNOWN").split(" ")[0]
    return "CJK" if script in ("HIRAGANA", "KATAKANA") else script


def mixed_scripts(name: str) -> str | None:
    """Why ``name`` is refused when its letters are of more than one script (a look-alike
    spelling of another team's name), else None."""
    # By each letter's compatibility form: a styled letter (Fraktur 𝔉) is the script's own.
    scripts = sorted({s for s in map(_script, unicodedata.normalize("NFKC", name)) if s})
    if len(scripts) < 2:
        return None
    shown = ", ".join(script.title() for script in scripts)
    return f"the team name {name!r} mixes scripts ({shown}): a look-alike of another spelling?"


@dataclasses.dataclass
class Resolved:
    """Records ready to store, and the positions of those held back for a name not mapped."""

    records: list
    positions: list[int]  # of each record kept, in the input
    held: list[int]
    unmatched: list[dict]  # {"source", "country", "name"}


def resolve(source: str, records, creates, now, founds: bool = False) -> Resolved:
    """Map the team names of ``records`` (see the module's docstring); ``creates(position)``
    says whether that record's spelling may make a new team, ``founds`` whether the source's
    names may make the teams of a league nothing is stored of yet. Writes the aliases it learns
    (call inside the sync's transaction)."""
    records = [
        dataclasses.replace(r, home_team=normal(r.home_team), away_team=normal(r.away_team))
        for r in records
    ]
    wanted = {(r.league.country, name) for r in records for name in (r.home_team, r.away_team)}
    countries = sorted({country for country, _ in wanted})
    aliases = {}
    query = TeamAlias.select(TeamAlias.country, TeamAlias.name, TeamAlias.team).where(
        (TeamAlias.source == source) & TeamAlias.country.in_(countries)
    )
    for country, name, team_id in query.tuples():
        aliases[(country, name)] = team_id
    teams = {}
    for team_id, name, country in (
        Team.select(Team.id, Team.name, Team.country).where(Team.country.in_(countries)).tuples()
    ):
        teams[(country, name)] = team_id
    names = {team_id: name for (_, name), team_id in teams.items()}
    stored_leagues = _leagues_with_matches({r.league.code for r in records})
    learned, unmapped = {}, set()
    may_create = defaultdict(bool)
    for position, record in enumerate(records):
        if creates(position) or (founds and record.league.code not in stored_leagues):
            for name in (record.home_team, record.away_team):
                may_create[(record.league.country, name)] = True
    stored_as = {}  # the name each source name is stored under; None: held back
    for key in sorted(wanted):
        if key in aliases:
            stored_as[key] = names.get(aliases[key]) if aliases[key] is not None else None
        elif key in teams or may_create[key]:
            learned[key] = teams.get(key)  # None: the import makes the team under this name
            stored_as[key] = key[1]
        else:
            unmapped.add(key)
            stored_as[key] = None
    _remember(source, learned, unmapped, now)
    kept, positions, held = [], [], []
    for position, record in enumerate(records):
        country = record.league.country
        home = stored_as[(country, record.home_team)]
        away = stored_as[(country, record.away_team)]
        if home is None or away is None:
            held.append(position)
            continue
        kept.append(dataclasses.replace(record, home_team=home, away_team=away))
        positions.append(position)
    unmatched = [
        {"source": source, "country": country, "name": name}
        for (country, name), target in sorted(stored_as.items())
        if target is None
    ]
    return Resolved(kept, positions, held, unmatched)


def _leagues_with_matches(codes) -> set[str]:
    query = (
        League.select(League.code)
        .where(League.code.in_(sorted(codes)))
        .where(League.id.in_(Match.select(Match.league).distinct()))
    )
    return {code for (code,) in query.tuples()}


def _remember(source, learned, unmapped, now) -> None:
    """Store what was learned: names taken as an existing team, and names left for an operator
    (a name taken as a new team is remembered by :func:`link_new` once the import made it)."""
    rows = [
        {"source": source, "country": country, "name": name, "team": team_id, "first_seen_at": now}
        for (country, name), team_id in learned.items()
        if team_id is not None
    ]
    rows += [
        {"source": source, "country": country, "name": name, "team": None, "first_seen_at": now}
        for country, name in sorted(unmapped)
    ]
    if rows:
        TeamAlias.insert_many(rows).on_conflict_ignore().execute()


def link_new(source: str, records, now) -> None:
    """Remember the names of ``records`` taken as new teams, now the import made them."""
    keys = {(r.league.country, name) for r in records for name in (r.home_team, r.away_team)}
    known = set(
        TeamAlias.select(TeamAlias.country, TeamAlias.name)
        .where((TeamAlias.source == source) & TeamAlias.country.in_(sorted({c for c, _ in keys})))
        .tuples()
    )
    missing = keys - known
    if not missing:
        return
    query = Team.select(Team.id, Team.name, Team.country).where(
        Team.country.in_(sorted({c for c, _ in missing}))
    )
    rows = [
        {"source": source, "country": country, "name": name, "team": team_id, "first_seen_at": now}
        for team_id, name, country in query.tuples()
        if (country, name) in missing
    ]
    if rows:
        TeamAlias.insert_many(rows).on_conflict_ignore().execute()


def unmatched(source: str | None = None, country: str | None = None) -> list[dict]:
    """The names a source gave that map to no team yet (of one source, one country), with when
    each was first seen."""
    query = TeamAlias.select(
        TeamAlias.source, TeamAlias.country, TeamAlias.name, TeamAlias.first_seen_at
    ).where(TeamAlias.team.is_null())
    if source is not None:
        query = query.where(TeamAlias.source == source)
    if country is not None:
        query = query.where(TeamAlias.country == country)
    query = query.order_by(TeamAlias.source, TeamAlias.country, TeamAlias.name)
    return [
        {"source": s, "country": c, "name": n, "first_seen_at": seen}
        for s, c, n, seen in query.tuples()
    ]


def aliases_of(team_ids) -> dict[int, list[dict]]:
    """How each source names each of ``team_ids``: team id → ``[{"source", "name"}]``, by
    source and name (one query)."""
    found = {team_id: [] for team_id in team_ids}
    if not found:
        return found
    query = (
        TeamAlias.select(TeamAlias.team, TeamAlias.source, TeamAlias.name)
        .where(TeamAlias.team.in_(sorted(found)))
        .order_by(TeamAlias.source, TeamAlias.name)
    )
    for team_id, source, name in query.tuples():
        found[team_id].append({"source": source, "name": name})
    return found


def map_name(source: str, country: str, name: str, team_id: int | None, new: bool, now) -> dict:
    """Map one source name to a stored team, or (``new``) to a new team of that name; the
    mapping replaces any before it. NotFound for an unknown team; CommandError when a team of
    that name already exists and ``new`` was asked (map to it instead)."""
    with db.atomic():
        return _map(source, country, name, team_id, new, now)


def _map(source, country, name, team_id, new, now) -> dict:
    if new:
        if Team.get_or_none((Team.name == name) & (Team.country == country)) is not None:
            raise CommandError(f"A team {name!r} of {country} exists: map the name to it.")
        team = Team.create(name=name, country=country)
    else:
        team = Team.get_or_raise(team_id, "Team")
        if team.country != country:
            raise NotFound(f"Team {team_id} is of {team.country}, not {country}.")
    TeamAlias.insert(
        source=source, country=country, name=name, team=team.id, first_seen_at=now
    ).on_conflict(
        conflict_target=[TeamAlias.source, TeamAlias.country, TeamAlias.name],
        update={TeamAlias.team: team.id},
    ).execute()
    # The files that held this name's records back kept their validators: every one is read
    # again in full at the next sync, which stores what they held.
    SourceFetch.update(etag=None, last_modified=None, digest=None).where(
        SourceFetch.digest != fetching.NOT_SERVED
    ).execute()
    return {
        "source": source,
        "country": country,
        "name": name,
        "team_id": team.id,
        "team": team.name,
    }
