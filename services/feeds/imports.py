"""Storing fixtures, results and odds from any source: football-data files and the demo world.

Idempotent: a record is found again as one meeting of its pair (league, season, home team, away
team), so importing the same data twice changes nothing, and a later file (a result, a moved
kick-off, a closing price) updates what it knows better. A pair may meet more than once a
season at the same ground (the Scottish divisions do), so the pair alone does not name a match:

1. A record is the stored match of its pair on the same day (the UTC day its slug spells; the
   slug is unique, so there is at most one). Rows of one pair on one day are one meeting: the
   last one wins.
2. The pair's other records and stored matches are taken in kick-off order between the meetings
   found so, and the meetings keep their order: a record is never matched across one.
3. A stored match already played (finished or live) keeps its day, and a record on another day
   is another meeting, unless it may be that match after all: a record within ``MOVED_WITHIN``
   of it (its date corrected?), or a fixture before it (stale?), is rejected.
4. The records left are matched with the unplayed stored matches left (a fixture postponed or
   brought forward) in kick-off order, one each while either lasts, the pairing that moves
   kick-offs least in all; a kick-off is brought forward by at most ``MOVED_WITHIN`` (later it
   may move by any time). The records it leaves over are new meetings. When no pairing is
   possible, or two move kick-offs alike, those records are rejected: they cannot be told apart.

So a first-half results file and later the whole season's, a fixture list and later the results
(a postponed match included), or the days of a replay one by one, each find the same matches; a
rejected record is reported, never stored over another meeting.
"""

import bisect
from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import UTC, date, timedelta
from pathlib import Path

from clock import utcnow
from enums import KICKED_OFF_STATUSES, SOURCE_LINE
from models import League, Match, OddsQuote, Team, stored_line
from services import routes
from services.feeds import kickoffs, names
from services.feeds.formats import footballdata, text
from services.forecasting import price_cubes
from services.webhooks import events
from store.bulk import insert_rows, update_rows
from store.database import db

BATCH = 2000


@dataclass
class ImportSummary:
    """What an import did, for the CLI and the operations log."""

    rows_read: int = 0
    matches_new: int = 0
    matches_updated: int = 0
    odds_stored: int = 0
    rows_rejected: int = 0
    prices_skipped: int = 0
    rejected: list[dict] = field(default_factory=list)  # {"file", "line", "reason"}
    #: What a file was read as ("utf-8", "utf-8-sig", "utf-16-le", "utf-16-be" or "cp1252", see
    #: ``services.feeds.formats.text.decode``); None for records from no file, and for a total of
    #: several.
    encoding: str | None = None

    def add(self, other):
        """Fold ``other`` into this summary."""
        for name in (
            "rows_read",
            "matches_new",
            "matches_updated",
            "odds_stored",
            "rows_rejected",
            "prices_skipped",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.rejected.extend(other.rejected)


def import_file(path, now=None) -> ImportSummary:
    """Read one football-data CSV and store it in one transaction; bad rows are reported (a
    fixture more than a year after ``now``, the current time by default, among them).

    The file is read as UTF-8 (with or without a byte-order mark), UTF-16 with a byte-order
    mark, or Windows-1252, and the summary says which; a file none of them reads raises
    ``text.UnreadableText`` (a ValueError naming the byte's offset) before anything is stored.
    """
    path = Path(path)
    today = (now or utcnow()).date()
    decoded = text.decode(path.read_bytes())
    parsed = footballdata.parse(decoded.text, today=today)
    footballdata.screen(parsed)  # sets outside the formats' bounds counted in prices_skipped
    with db.atomic():
        summary = store(parsed.matches, now)
    summary.encoding = decoded.encoding
    summary.rows_read = parsed.rows_read
    summary.prices_skipped = parsed.prices_skipped
    rejected = [{"line": row.line, "reason": row.reason} for row in parsed.rejected]
    rejected += summary.rejected  # rows that read well but cannot be stored
    summary.rejected = [
        {"file": str(path), **row} for row in sorted(rejected, key=lambda row: row["line"] or 0)
    ]
    summary.rows_rejected = len(summary.rejected)
    return summary


def _chunks(items, size=BATCH):
    items = list(items)
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _leagues(records) -> tuple[dict[str, int], bool]:
    """League ids by code, creating or updating what ``records`` say; and whether any
    changed."""
    wanted = {record.league.code: record.league for record in records}
    changed = False
    known = {league.code: league for league in League.select().where(League.code.in_(list(wanted)))}
    for code, league in wanted.items():
        fields = {
            "name": league.name,
            "country": league.country,
            "competition_type": league.competition_type,
        }
        if code not in known:
            known[code] = League.create(code=code, **fields)
            changed = True
        elif any(getattr(known[code], name) != value for name, value in fields.items()):
            League.update(fields).where(League.id == known[code].id).execute()
            changed = True
    return {code: league.id for code, league in known.items()}, changed


def _teams(records) -> dict[tuple[str, str], int]:
    wanted = set()
    for record in records:
        wanted.add((record.home_team, record.league.country))
        wanted.add((record.away_team, record.league.country))
    countries = sorted({country for _, country in wanted})

    def known():
        query = Team.select(Team.id, Team.name, Team.country).where(Team.country.in_(countries))
        return {(name, country): team_id for team_id, name, country in query.tuples()}

    found = known()
    # Sorted, so teams get the same ids whatever the process (set order follows string hashes).
    missing = [{"name": name, "country": country} for name, country in sorted(wanted - set(found))]
    for chunk in _chunks(missing):
        Team.insert_many(chunk).execute()
    return known() if missing else found


MATCH_FIELDS = (
    "kickoff_at",
    "status",
    "home_goals",
    "away_goals",
    "ht_home_goals",
    "ht_away_goals",
)


def _updates(existing, record):
    """The fields ``record`` changes on the stored match (a fixture never erases a result)."""
    changes = {}
    for name in MATCH_FIELDS:
        value = getattr(record, name)
        if value is None or (
            name == "status" and record.home_goals is None and existing[name] == "finished"
        ):
            continue
        if existing[name] != value:
            changes[name] = value
    return changes


#: How far a match is taken to move when it is brought forward (a Sunday or Monday game to the
#: Friday, a midweek one to the weekend before it) or its date is corrected. A pair's meetings
#: at one ground are further apart, rounds and so at least a week, so a record further than
#: this from a stored match is another meeting, unless it comes after a stored fixture: a match
#: may be postponed by any time.
MOVED_WITHIN = timedelta(days=5)


def _pair(record) -> tuple:
    """A record's pair by names: its league, season and teams (one or more meetings)."""
    return (record.league.code, record.season, record.home_team, record.away_team)


def _day(kickoff) -> date:
    """The day of a kick-off as a match's slug spells it (UTC)."""
    return kickoff.astimezone(UTC).date()


def _played(status, home_goals) -> bool:
    """Whether a match (stored or a record) has kicked off on its day: it has a result, or its
    status says so."""
    return home_goals is not None or status in KICKED_OFF_STATUSES


def _meetings(records) -> list:
    """One record per meeting, in the order the meetings first appear: rows of one pair on one
    day are one meeting, and the last of them wins."""
    latest = {}
    for record in records:
        latest[(*_pair(record), _day(record.kickoff_at))] = record
    return list(latest.values())


def stored_matches(records) -> list[dict | None]:
    """Each record's stored match as the import finds it (its pair's meeting on its day, or
    moved within the window; see the module's docstring), or None: how a caller finds a
    record's match again, never by a slug rebuilt from the record's own day."""
    if not records:
        return []
    found, _ = _match(records, _stored_meetings(records))
    return found


def _stored_meetings(records) -> dict[tuple, list[dict]]:
    """The stored matches of the leagues and seasons of ``records`` by pair (league code,
    season, team names), each pair's in kick-off order."""
    home, away = Team.alias(), Team.alias()
    query = (
        Match.select(
            Match.id,
            League.code.alias("league_code"),
            Match.season,
            home.name.alias("home_name"),
            away.name.alias("away_name"),
            *(getattr(Match, name) for name in MATCH_FIELDS),
            Match.public_since,
            Match.unlock_at,
        )
        .join(League, on=Match.league == League.id)
        .switch(Match)
        .join(home, on=Match.home_team == home.id)
        .switch(Match)
        .join(away, on=Match.away_team == away.id)
        .where(
            League.code.in_(sorted({record.league.code for record in records}))
            & Match.season.in_(sorted({record.season for record in records}))
        )
    )
    pairs = defaultdict(list)
    for row in query.dicts():
        names = (row.pop("league_code"), row["season"], row.pop("home_name"), row.pop("away_name"))
        pairs[names].append(row)
    for meetings in pairs.values():
        meetings.sort(key=lambda row: (row["kickoff_at"], row["id"]))
    return pairs


def _match(records, stored) -> tuple[list[dict | None], dict[int, str]]:
    """The stored match each record is (None: a new meeting), and the reason each record that
    cannot be told apart from another meeting of its pair is refused, by position (see the
    module's docstring for the rule)."""
    found: list[dict | None] = [None] * len(records)
    refused: dict[int, str] = {}
    by_pair = defaultdict(list)
    for index, record in enumerate(records):
        by_pair[_pair(record)].append(index)
    for pair, indexes in by_pair.items():
        meetings = stored.get(pair, [])
        on_day = {_day(match["kickoff_at"]): match for match in meetings}
        for index in indexes:
            found[index] = on_day.get(_day(records[index].kickoff_at))
        found_days = {_day(found[i]["kickoff_at"]) for i in indexes if found[i] is not None}
        days = sorted(found_days)
        # Between two meetings found by day, what is left of the file and of the database.
        stretches = defaultdict(lambda: ([], []))
        for index in indexes:
            if found[index] is None:
                day = _day(records[index].kickoff_at)
                stretches[bisect.bisect(days, day)][0].append(index)
        for match in meetings:
            day = _day(match["kickoff_at"])
            if day not in found_days:
                stretches[bisect.bisect(days, day)][1].append(match)
        for left, others in stretches.values():
            left.sort(key=lambda index: (records[index].kickoff_at, index))
            _match_stretch(records, left, others, found, refused)
        _one_per_meeting(records, indexes, meetings, found, refused)
    _settled_kept(records, found, refused)
    return found, refused


def _one_per_meeting(records, indexes, meetings, found, refused) -> None:
    """Refuse each new meeting (a record of ``indexes`` found as no stored match) within
    ``MOVED_WITHIN`` of another meeting of its pair, stored or earlier in kick-off order, unless
    both have a result: a pair meets once in that time, so a fixture row repeated two days later
    is a move of the one meeting (found as it, above) or a rejection, never a second match."""
    moved = {id(found[i]): records[i].kickoff_at for i in indexes if found[i] is not None}
    kept = [
        (moved.get(id(match), match["kickoff_at"]), _played(match["status"], match["home_goals"]))
        for match in meetings
    ]
    new = [i for i in indexes if found[i] is None and i not in refused]
    for index in sorted(new, key=lambda i: (records[i].kickoff_at, i)):
        record = records[index]
        played = _played(record.status, record.home_goals)
        near = [
            kickoff
            for kickoff, other_played in kept
            if abs(kickoff - record.kickoff_at) <= MOVED_WITHIN and not (played and other_played)
        ]
        if near:
            refused[index] = (
                f"{_meeting(record)}: a second meeting of the pair within "
                f"{MOVED_WITHIN.days} days of the one on {_shown_day(near[0])}, with no "
                "result between: a pair meets once in that time (a moved fixture is the same "
                "match, found by its new day alone)"
            )
        else:
            kept.append((record.kickoff_at, played))


def _settled_kept(records, found, refused) -> None:
    """Refuse each record offering another score for a finished match with a stored result, as
    a sync does (``services.feeds.contradictions``): a settled result changes only by an
    operator's ruling, never by a file."""
    for index, match in enumerate(found):
        record = records[index]
        if match is None or index in refused or record.home_goals is None:
            continue
        if match["status"] != "finished" or match["home_goals"] is None:
            continue
        stored = (match["home_goals"], match["away_goals"])
        if (record.home_goals, record.away_goals) != stored:
            refused[index] = (
                f"{_meeting(record)}: the file says {record.home_goals}-{record.away_goals}, "
                f"the stored result is {stored[0]}-{stored[1]}: a finished match's result is "
                "kept (a sync refuses it too); only an operator's ruling on a contradiction "
                "changes it"
            )


def _match_stretch(records, left, others, found, refused) -> None:
    """Match the records ``left`` (positions, by kick-off) of one pair with its stored matches
    ``others`` (by kick-off) between the same two meetings found by day: fill ``found`` and
    ``refused``."""
    played = [match for match in others if _played(match["status"], match["home_goals"])]
    if played:
        latest = played[-1]["kickoff_at"]
        still = []
        for index in left:
            record = records[index]
            nearest = min(played, key=lambda match: abs(match["kickoff_at"] - record.kickoff_at))
            stale = not _played(record.status, record.home_goals) and record.kickoff_at < latest
            if stale or abs(nearest["kickoff_at"] - record.kickoff_at) <= MOVED_WITHIN:
                refused[index] = (
                    f"{_meeting(record)}: cannot tell which meeting of the pair this is: it "
                    f"may be the one played on {_shown_day(nearest['kickoff_at'])} on another "
                    "day (a played match keeps its day) or another"
                )
            else:
                still.append(index)
        left = still
    fixtures = [match for match in others if not _played(match["status"], match["home_goals"])]
    if not left or not fixtures:
        return  # new meetings; or stored fixtures the file does not mention
    pairing = _least_moves(records, left, fixtures)
    if pairing is None:
        days = ", ".join(_shown_day(match["kickoff_at"]) for match in fixtures)
        for index in left:
            refused[index] = (
                f"{_meeting(records[index])}: cannot tell which meeting of the pair this is: "
                f"no stored match of the pair is on its day, and the stored fixtures it could "
                f"be ({days}) pair with the file's rows in no one way (a match is brought "
                f"forward by at most {MOVED_WITHIN.days} days)"
            )
        return
    for index, match in pairing:
        found[index] = match


def _least_moves(records, left, fixtures) -> list[tuple[int, dict]] | None:
    """The pairing of the records ``left`` with the stored ``fixtures`` that keeps both in
    kick-off order, pairs one of each while either lasts, brings no kick-off forward by more
    than MOVED_WITHIN and moves kick-offs least in all; None when there is none, or when
    two move them alike."""
    rows = [(index, records[index].kickoff_at) for index in left]
    stored = [(match, match["kickoff_at"]) for match in fixtures]
    swap = len(rows) > len(stored)
    short, long = (stored, rows) if swap else (rows, stored)

    def cost(i, j):
        (_, shorter), (_, longer) = short[i], long[j]
        kickoff, fixture = (longer, shorter) if swap else (shorter, longer)
        if kickoff < fixture - MOVED_WITHIN:
            return None
        return abs((kickoff - fixture).total_seconds())

    # best[i][j]: the least total move pairing all of short[:i] within long[:j], and how many
    # pairings reach it (at most 2: one is all that matters); None when there is none.
    n, m = len(short), len(long)
    best = [[(0.0, 1)] * (m + 1)] + [[None] * (m + 1) for _ in range(n)]
    for i in range(1, n + 1):
        for j in range(i, m + 1):
            options = []
            if best[i][j - 1] is not None:
                options.append(best[i][j - 1])  # long[j - 1] stays unpaired
            step = cost(i - 1, j - 1)
            if step is not None and best[i - 1][j - 1] is not None:
                options.append((best[i - 1][j - 1][0] + step, best[i - 1][j - 1][1]))
            if options:
                least = min(total for total, _ in options)
                ways = sum(count for total, count in options if total == least)
                best[i][j] = (least, min(ways, 2))
    if best[n][m] is None or best[n][m][1] > 1:
        return None
    pairing, j = [], m
    for i in range(n, 0, -1):
        while best[i][j - 1] is not None and best[i][j - 1][0] == best[i][j][0]:
            j -= 1  # the one pairing reaching best[i][j] leaves long[j - 1] out
        pairing.append((short[i - 1][0], long[j - 1][0]))
        j -= 1
    return [(b, a) for a, b in pairing] if swap else pairing


def _meeting(record) -> str:
    """A record as a rejection names it."""
    return f"{record.home_team} v {record.away_team} on {_shown_day(record.kickoff_at)}"


def _shown_day(kickoff) -> str:
    """The day of a kick-off as a rejection shows it, as football-data writes dates."""
    return f"{_day(kickoff):%d/%m/%Y}"


def _slug_clashes(records, found) -> tuple[list[tuple], list[dict]]:
    """The records whose match keeps a slug of its own, each as (record, its stored match or
    None, slug), and a rejection for each other one.

    A slug names one match's page, and two matches may slug alike (``Foo FC`` and ``Foo-FC``
    against the same side on one day): the first one, in the database or else in ``records``,
    keeps it, and a later record that would take it is rejected with its reason, so one such
    row never loses the rest of its file.
    """
    slugs = [
        Match.slug_for(record.home_team, record.away_team, record.kickoff_at) for record in records
    ]
    home, away = Team.alias(), Team.alias()
    owners = {}
    for chunk in _chunks(sorted(set(slugs)), 500):
        query = (
            Match.select(Match.slug, Match.id, home.name, away.name)
            .join(home, on=Match.home_team == home.id)
            .switch(Match)
            .join(away, on=Match.away_team == away.id)
            .where(Match.slug.in_(chunk))
        )
        for slug, match_id, home_team, away_team in query.tuples():
            owners[slug] = (("match", match_id), home_team, away_team, "a stored match")
    kept, rejected = [], []
    for position, (record, existing, slug) in enumerate(zip(records, found, slugs, strict=True)):
        me = ("match", existing["id"]) if existing is not None else ("record", position)
        claim = (me, record.home_team, record.away_team, f"line {record.line}")
        owner, home_team, away_team, where = owners.setdefault(slug, claim)
        if owner == me:
            kept.append((record, existing, slug))
            continue
        rejected.append(
            {
                "line": record.line,
                "reason": f"{record.home_team} v {record.away_team} would take the address "
                f"{slug!r} of {home_team} v {away_team} ({where}) on the same day",
            }
        )
    return kept, rejected


def store(records, now=None, source: str | None = None) -> ImportSummary:
    """Store match records with their odds (the caller owns the transaction), each found again
    as a meeting of its pair (see the module's docstring); a record that cannot be told apart
    from another meeting, or whose match would take another's slug, is left out and listed in
    ``rejected``.

    Prices reach the public only through a prediction that has made its picks: the odds
    summary the cards show is written here only for matches that have kicked off at ``now``
    (the current time by default); an upcoming match's is written by the prediction run (see
    :func:`services.forecasting.publication.store`). A match moved after it kicked off keeps
    the kick-off from which its picks were public (``public_since``).

    Records of a live ``source`` are its reports of their matches' kick-offs: a match takes the
    earliest any source reports as its kick-off and the latest as its ``unlock_at`` (see
    :mod:`services.feeds.kickoffs`); a record of no source (``data import``, the demo) sets the
    kick-off outright."""
    summary = ImportSummary()
    records, misnamed = _named(records)
    records = _meetings(records)
    found, refused = _match(records, _stored_meetings(records) if records else {})
    matched, summary.rejected = _slug_clashes(
        [record for index, record in enumerate(records) if index not in refused],
        [match for index, match in enumerate(found) if index not in refused],
    )
    summary.rejected += misnamed + [
        {"line": records[index].line, "reason": reason} for index, reason in refused.items()
    ]
    summary.rows_rejected = len(summary.rejected)
    if not matched:
        return summary
    kept = [record for record, _, _ in matched]
    league_ids, _ = _leagues(kept)
    team_ids = _teams(kept)

    def key(record):
        country = record.league.country
        return (
            league_ids[record.league.code],
            record.season,
            team_ids[(record.home_team, country)],
            team_ids[(record.away_team, country)],
        )

    now = now or utcnow()
    spans = {}
    if source is not None:
        reported = {match["id"]: record.kickoff_at for record, match, _ in matched if match}
        spans = kickoffs.report(source, reported, now)
    new_rows, results = [], []
    opens = {}  # when each stored match's sealed picks open, as it now stands
    for record, existing, slug in matched:
        if existing is None:
            new_rows.append(_new_match(key(record), record, slug, now))
            continue
        changes = _updates(existing, record)
        changes.pop("kickoff_at", None)
        changes |= _kickoff_changes(existing, record, spans.get(existing["id"]), slug, now)
        opens[existing["id"]] = kickoffs.unlocks_at(
            changes.get("kickoff_at", existing["kickoff_at"]),
            changes.get("unlock_at", existing["unlock_at"]),
        )
        if changes:
            Match.update(**changes, updated_at=now).where(Match.id == existing["id"]).execute()
            existing.update(changes)
            summary.matches_updated += 1
            if _decided(changes, existing):
                results.append(_result_event(existing))
    events.emit("match.result", results, now)
    for chunk in _chunks(new_rows):
        Match.insert_many(chunk).execute()
    summary.matches_new = len(new_rows)
    new_ids = {}
    if new_rows:
        query = Match.select(Match.slug, Match.id).where(
            Match.slug.in_([row["slug"] for row in new_rows])
        )
        new_ids = dict(query.tuples())
        if source is not None:
            kickoffs.report(
                source, {new_ids[row["slug"]]: row["kickoff_at"] for row in new_rows}, now
            )
    records_by_match = {
        new_ids[slug] if existing is None else existing["id"]: record
        for record, existing, slug in matched
    }
    summary.odds_stored, changed = _store_odds(records_by_match)
    price_cubes.summarise(
        match_id
        for match_id in changed
        if _kicked_off(records_by_match[match_id], opens.get(match_id), now)
    )
    return summary


def _named(records) -> tuple[list, list[dict]]:
    """The records with their team names in one spelling (``names.normal``), and the rejection
    of each whose name mixes scripts (``names.mixed_scripts``)."""
    kept, rejected = [], []
    for record in records:
        home, away = names.normal(record.home_team), names.normal(record.away_team)
        reason = names.mixed_scripts(home) or names.mixed_scripts(away)
        if reason:
            rejected.append({"line": record.line, "reason": f"{_meeting(record)}: {reason}"})
        elif (home, away) != (record.home_team, record.away_team):
            kept.append(replace(record, home_team=home, away_team=away))
        else:
            kept.append(record)
    return kept, rejected


def _kicked_off(record, opens, now) -> bool:
    """Whether the match of ``record`` (as stored now, its sealed picks opening at ``opens``;
    None: the record's kick-off) has kicked off at ``now``."""
    return (opens or record.kickoff_at) <= now or _played(record.status, record.home_goals)


def _kickoff_changes(existing, record, span, slug, now) -> dict:
    """The kick-off fields ``record`` changes on the stored match ``existing``: the earliest and
    latest of its sources' reports (``span``), or the record's own kick-off outright when it
    comes from no source (``span`` None). The slug follows the kick-off where it is the
    record's own day (checked for clashes); a match whose picks have opened keeps the instant
    they did (``public_since``). A match played has no disagreement left to keep it sealed."""
    kickoff_at, unlock_at = (
        kickoffs.governing(*span) if span is not None else (record.kickoff_at, None)
    )
    if _played(record.status, record.home_goals) or _played(
        existing["status"], existing["home_goals"]
    ):
        unlock_at = None  # played: it has started, whatever a source still says of its kick-off
    changes = {}
    if kickoff_at != existing["kickoff_at"]:
        changes["kickoff_at"] = kickoff_at
        if _day(kickoff_at) == _day(record.kickoff_at):
            changes["slug"] = slug
    if unlock_at != existing["unlock_at"]:
        changes["unlock_at"] = unlock_at
    opened = kickoffs.unlocks_at(existing["kickoff_at"], existing["unlock_at"])
    moved = kickoffs.unlocks_at(kickoff_at, unlock_at) != opened
    if moved and existing["public_since"] is None and opened <= now:
        # Its picks have been public since then: they stay so.
        changes["public_since"] = opened
    return changes


def _decided(changes, match) -> bool:
    """Whether ``changes`` gave a stored match its full-time result, or corrected it."""
    scored = {"status", "home_goals", "away_goals"} & set(changes)
    return bool(scored) and match["status"] == "finished" and match["home_goals"] is not None


def _result_event(match) -> dict:
    """The ``match.result`` event's data."""
    return {
        "id": match["id"],
        "path": routes.match(match["id"]),
        "status": match["status"],
        "kickoff_at": events.moment(match["kickoff_at"]),
        "score": {"home": match["home_goals"], "away": match["away_goals"]},
    }


def _new_match(match_key, record, slug, now) -> dict:
    league_id, season, home_id, away_id = match_key
    return {
        "league": league_id,
        "season": season,
        "home_team": home_id,
        "away_team": away_id,
        "slug": slug,
        "updated_at": now,
        **{name: getattr(record, name) for name in MATCH_FIELDS},
    }


QUOTE_KEY = ["match", "market", "line", "is_closing", "bookmaker", "selection"]


def _store_odds(records_by_match) -> tuple[int, set[int]]:
    """Insert new quotes and reprice changed ones; returns how many were written and the ids of
    the matches whose quotes changed. A quote is one bookmaker's price of one selection at one
    line (``models.stored_line``): a price at another line of the same market is another quote.
    A source's closing quote is marked as the source's (``closing_line``), replacing a closing
    line the service took from the prices it saw."""
    stored = {}
    for chunk in _chunks(records_by_match, 500):
        query = OddsQuote.select(
            OddsQuote.id,
            *(getattr(OddsQuote, name) for name in QUOTE_KEY),
            OddsQuote.price,
            OddsQuote.closing_line,
        ).where(OddsQuote.match.in_(chunk))
        for (
            quote_id,
            match_id,
            market,
            line,
            closing,
            book,
            selection,
            price,
            origin,
        ) in query.tuples():
            quote_key = (match_id, market, line, bool(closing), book, selection)
            stored[quote_key] = (quote_id, price, origin)
    new, repriced, changed = [], {}, set()
    for match_id, record in records_by_match.items():
        for quote in record.odds:
            line = stored_line(quote.market, quote.line)
            quote_key = (
                match_id,
                quote.market,
                line,
                quote.is_closing,
                quote.bookmaker,
                quote.selection,
            )
            origin = SOURCE_LINE if quote.is_closing else None
            existing = stored.get(quote_key)
            if existing is None:
                new.append((*quote_key, quote.price, origin))
                stored[quote_key] = (None, quote.price, origin)
                changed.add(match_id)
            elif existing[0] is not None and (
                existing[1] != quote.price or existing[2] not in (origin, None)
            ):
                # a quote given twice: the last price wins
                repriced[existing[0]] = (quote.price, origin)
                changed.add(match_id)
    insert_rows(OddsQuote, [*QUOTE_KEY, "price", "closing_line"], new)
    update_rows(
        OddsQuote,
        {"price": "float", "closing_line": "text"},
        [(quote_id, *values) for quote_id, values in repriced.items()],
    )
    return len(new) + len(repriced), changed
