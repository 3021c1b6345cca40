"""Which stored match a record of a file or a source is: one match per meeting of a pair,
teams by name, kick-offs within a window. An import (``services.feeds.imports``) stores what
it finds; a sync and the contradictions find a record's match again by it.

A record is found again as one meeting of its pair (league, season, home team, away team). A pair
may meet more than once a season at the same ground (the Scottish divisions do), so the pair alone
does not name a match:

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
from datetime import UTC, date, timedelta

from enums import KICKED_OFF_STATUSES
from models import League, Match, Team

#: The fields of a match a record gives, which the import compares with the stored match's.
MATCH_FIELDS = (
    "kickoff_at",
    "status",
    "home_goals",
    "away_goals",
    "ht_home_goals",
    "ht_away_goals",
)


#: How far a match is taken to move when it is brought forward (a Sunday or Monday game to the
#: Friday, a midweek one to the weekend before it) or its date is corrected. A pair's meetings
#: at one ground are further apart, rounds and so at least a week, so a record further than
#: this from a stored match is another meeting, unless it comes after a stored fixture: a match
#: may be postponed by any time.
MOVED_WITHIN = timedelta(days=5)


def _pair(record) -> tuple:
    """A record's pair by names: its league, season and teams (one or more meetings)."""
    return (record.league.code, record.season, record.home_team, record.away_team)


def kickoff_day(kickoff) -> date:
    """The day of a kick-off as a match's slug spells it (UTC)."""
    return kickoff.astimezone(UTC).date()


def is_played(status, home_goals) -> bool:
    """Whether a match (stored or a record) has kicked off on its day: it has a result, or its
    status says so."""
    return home_goals is not None or status in KICKED_OFF_STATUSES


def deduplicate(records) -> list:
    """One record per meeting, in the order the meetings first appear: rows of one pair on one
    day are one meeting, and the last of them wins."""
    latest = {}
    for record in records:
        latest[(*_pair(record), kickoff_day(record.kickoff_at))] = record
    return list(latest.values())


def stored_matches(records) -> list[dict | None]:
    """Each record's stored match as the import finds it (its pair's meeting on its day, or
    moved within the window; see the module's docstring), or None: how a caller finds a
    record's match again, never by a slug rebuilt from the record's own day."""
    found, _ = find(records)
    return found


def find(records) -> tuple[list[dict | None], dict[int, str]]:
    """The stored match each record is (None: a new meeting), and the reason each record that
    cannot be told apart from another meeting of its pair is refused, by position."""
    return _match(records, _stored_meetings(records) if records else {})


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
        on_day = {kickoff_day(match["kickoff_at"]): match for match in meetings}
        for index in indexes:
            found[index] = on_day.get(kickoff_day(records[index].kickoff_at))
        found_days = {kickoff_day(found[i]["kickoff_at"]) for i in indexes if found[i] is not None}
        days = sorted(found_days)
        # Between two meetings found by day, what is left of the file and of the database.
        stretches = defaultdict(lambda: ([], []))
        for index in indexes:
            if found[index] is None:
                day = kickoff_day(records[index].kickoff_at)
                stretches[bisect.bisect(days, day)][0].append(index)
        for match in meetings:
            day = kickoff_day(match["kickoff_at"])
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
        (moved.get(id(match), match["kickoff_at"]), is_played(match["status"], match["home_goals"]))
        for match in meetings
    ]
    new = [i for i in indexes if found[i] is None and i not in refused]
    for index in sorted(new, key=lambda i: (records[i].kickoff_at, i)):
        record = records[index]
        played = is_played(record.status, record.home_goals)
        near = [
            kickoff
            for kickoff, other_played in kept
            if abs(kickoff - record.kickoff_at) <= MOVED_WITHIN and not (played and other_played)
        ]
        if near:
            refused[index] = (
                f"{describe(record)}: a second meeting of the pair within "
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
                f"{describe(record)}: the file says {record.home_goals}-{record.away_goals}, "
                f"the stored result is {stored[0]}-{stored[1]}: a finished match's result is "
                "kept (a sync refuses it too); only an operator's ruling on a contradiction "
                "changes it"
            )


def _match_stretch(records, left, others, found, refused) -> None:
    """Match the records ``left`` (positions, by kick-off) of one pair with its stored matches
    ``others`` (by kick-off) between the same two meetings found by day: fill ``found`` and
    ``refused``."""
    played = [match for match in others if is_played(match["status"], match["home_goals"])]
    if played:
        latest = played[-1]["kickoff_at"]
        still = []
        for index in left:
            record = records[index]
            nearest = min(played, key=lambda match: abs(match["kickoff_at"] - record.kickoff_at))
            stale = not is_played(record.status, record.home_goals) and record.kickoff_at < latest
            if stale or abs(nearest["kickoff_at"] - record.kickoff_at) <= MOVED_WITHIN:
                refused[index] = (
                    f"{describe(record)}: cannot tell which meeting of the pair this is: it "
                    f"may be the one played on {_shown_day(nearest['kickoff_at'])} on another "
                    "day (a played match keeps its day) or another"
                )
            else:
                still.append(index)
        left = still
    fixtures = [match for match in others if not is_played(match["status"], match["home_goals"])]
    if not left or not fixtures:
        return  # new meetings; or stored fixtures the file does not mention
    pairing = _least_moves(records, left, fixtures)
    if pairing is None:
        days = ", ".join(_shown_day(match["kickoff_at"]) for match in fixtures)
        for index in left:
            refused[index] = (
                f"{describe(records[index])}: cannot tell which meeting of the pair this is: "
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


def describe(record) -> str:
    """A record as a rejection names it."""
    return f"{record.home_team} v {record.away_team} on {_shown_day(record.kickoff_at)}"


def _shown_day(kickoff) -> str:
    """The day of a kick-off as a rejection shows it, as football-data writes dates."""
    return f"{kickoff_day(kickoff):%d/%m/%Y}"
