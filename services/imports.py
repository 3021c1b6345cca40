"""Storing fixtures, results and odds from any source: football-data files and the demo world.

Idempotent: a record is found again by (league, season, home team, away team), so importing the
same data twice changes nothing, and a later file (a result, a moved kick-off, a closing price)
updates what it knows better.
"""

from dataclasses import dataclass, field
from pathlib import Path

from clock import utcnow
from engine import footballdata
from models import League, Match, OddsQuote, Team, bump_data_version
from services import events, odds
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
    fixture more than a year after ``now``, the current time by default, among them)."""
    path = Path(path)
    today = (now or utcnow()).date()
    text = path.read_bytes().decode("utf-8-sig", errors="replace")
    parsed = footballdata.parse(text, today=today)
    with db.atomic():
        summary = store(parsed.matches)
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


def _record_key(record) -> tuple:
    """A record's match by names: its league, season and teams (one match in the database)."""
    return (record.league.code, record.season, record.home_team, record.away_team)


def _slug_clashes(records) -> tuple[list, list[dict]]:
    """The records whose match keeps a slug of its own, and a rejection for each other one.

    A slug names one match's page, and two matches may slug alike (``Foo FC`` and ``Foo-FC``
    against the same side on one day): the first one, in the database or else in ``records``,
    keeps it, and a later record that would take it is rejected with its reason, so one such
    row never loses the rest of its file.
    """
    latest = {_record_key(record): record for record in records}  # a repeated row: the last
    slugs = {
        key: Match.slug_for(record.home_team, record.away_team, record.kickoff_at)
        for key, record in latest.items()
    }
    home, away = Team.alias(), Team.alias()
    owners = {}
    for chunk in _chunks(sorted(set(slugs.values())), 500):
        query = (
            Match.select(Match.slug, League.code, Match.season, home.name, away.name)
            .join(League, on=Match.league == League.id)
            .switch(Match)
            .join(home, on=Match.home_team == home.id)
            .switch(Match)
            .join(away, on=Match.away_team == away.id)
            .where(Match.slug.in_(chunk))
        )
        for slug, *key in query.tuples():
            owners[slug] = (tuple(key), "a stored match")
    kept, rejected = [], []
    for record in records:
        key = _record_key(record)
        slug = slugs[key]
        owner, where = owners.setdefault(slug, (key, f"line {record.line}"))
        if owner == key:
            kept.append(record)
            continue
        _league, _season, home_team, away_team = owner
        rejected.append(
            {
                "line": record.line,
                "reason": f"{record.home_team} v {record.away_team} would take the address "
                f"{slug!r} of {home_team} v {away_team} ({where}) on the same day",
            }
        )
    return kept, rejected


def store(records) -> ImportSummary:
    """Store match records with their odds (the caller owns the transaction); a record whose
    match would take another's slug is left out and listed in ``rejected``."""
    summary = ImportSummary()
    records, summary.rejected = _slug_clashes(records)
    summary.rows_rejected = len(summary.rejected)
    if not records:
        return summary
    league_ids, leagues_changed = _leagues(records)
    team_ids = _teams(records)

    def key(record):
        country = record.league.country
        return (
            league_ids[record.league.code],
            record.season,
            team_ids[(record.home_team, country)],
            team_ids[(record.away_team, country)],
        )

    seasons = sorted({record.season for record in records})
    stored = {}
    query = Match.select(
        Match.id,
        Match.league,
        Match.season,
        Match.home_team,
        Match.away_team,
        *(getattr(Match, name) for name in MATCH_FIELDS),
    ).where(Match.league.in_(sorted(set(league_ids.values()))) & Match.season.in_(seasons))
    for row in query.dicts():
        stored[(row["league"], row["season"], row["home_team"], row["away_team"])] = row

    now = utcnow()
    keyed = {key(record): record for record in records}  # a repeated row: the last one wins
    new_rows, results = [], []
    for match_key, record in keyed.items():
        existing = stored.get(match_key)
        if existing is None:
            new_rows.append(_new_match(match_key, record, now))
            continue
        changes = _updates(existing, record)
        if changes:
            if "kickoff_at" in changes:
                changes["slug"] = Match.slug_for(
                    record.home_team, record.away_team, changes["kickoff_at"]
                )
            Match.update(**changes, updated_at=now).where(Match.id == existing["id"]).execute()
            existing.update(changes)
            summary.matches_updated += 1
            if _decided(changes, existing):
                results.append(_result_event(existing))
    events.emit("match.result", results, now)
    for chunk in _chunks(new_rows):
        Match.insert_many(chunk).execute()
    summary.matches_new = len(new_rows)
    if new_rows:
        query = Match.select(
            Match.id, Match.league, Match.season, Match.home_team, Match.away_team
        ).where(Match.slug.in_([row["slug"] for row in new_rows]))
        for match_id, *match_key in query.tuples():
            stored[tuple(match_key)] = {"id": match_id}
    summary.odds_stored, changed = _store_odds(
        {stored[match_key]["id"]: record for match_key, record in keyed.items()}
    )
    odds.summarise(changed)
    if leagues_changed or summary.matches_new or summary.matches_updated or summary.odds_stored:
        bump_data_version()
    return summary


def _decided(changes, match) -> bool:
    """Whether ``changes`` gave a stored match its full-time result, or corrected it."""
    scored = {"status", "home_goals", "away_goals"} & set(changes)
    return bool(scored) and match["status"] == "finished" and match["home_goals"] is not None


def _result_event(match) -> dict:
    """The ``match.result`` event's data."""
    return {
        "id": match["id"],
        "path": f"/api/matches/{match['id']}",
        "status": match["status"],
        "kickoff_at": events.moment(match["kickoff_at"]),
        "score": {"home": match["home_goals"], "away": match["away_goals"]},
    }


def _new_match(match_key, record, now) -> dict:
    league_id, season, home_id, away_id = match_key
    return {
        "league": league_id,
        "season": season,
        "home_team": home_id,
        "away_team": away_id,
        "slug": Match.slug_for(record.home_team, record.away_team, record.kickoff_at),
        "updated_at": now,
        **{name: getattr(record, name) for name in MATCH_FIELDS},
    }


QUOTE_KEY = ["match", "market", "is_closing", "bookmaker", "selection"]


def _store_odds(records_by_match) -> tuple[int, set[int]]:
    """Insert new quotes and reprice changed ones; returns how many were written and the ids of
    the matches whose quotes changed."""
    stored = {}
    for chunk in _chunks(records_by_match, 500):
        query = OddsQuote.select(
            OddsQuote.id,
            OddsQuote.match,
            OddsQuote.market,
            OddsQuote.is_closing,
            OddsQuote.bookmaker,
            OddsQuote.selection,
            OddsQuote.price,
        ).where(OddsQuote.match.in_(chunk))
        for quote_id, match_id, market, closing, bookmaker, selection, price in query.tuples():
            stored[(match_id, market, bool(closing), bookmaker, selection)] = (quote_id, price)
    new, repriced, changed = [], {}, set()
    for match_id, record in records_by_match.items():
        for quote in record.odds:
            quote_key = (match_id, quote.market, quote.is_closing, quote.bookmaker, quote.selection)
            existing = stored.get(quote_key)
            if existing is None:
                new.append((*quote_key, quote.price))
                stored[quote_key] = (None, quote.price)
                changed.add(match_id)
            elif existing[1] != quote.price and existing[0] is not None:
                repriced[existing[0]] = quote.price  # a quote given twice: the last price wins
                changed.add(match_id)
    insert_rows(OddsQuote, [*QUOTE_KEY, "price"], new)
    update_rows(OddsQuote, {"price": "float"}, list(repriced.items()))
    return len(new) + len(repriced), changed
