"""Storing fixtures, results and odds from any source: football-data files and the demo world.

Idempotent: a record is found again as one meeting of its pair (league, season, home team, away
team), as ``services.feeds.meetings`` finds it, so importing the same data twice changes nothing,
and a later file (a result, a moved kick-off, a closing price) updates what it knows better; a
record that cannot be told apart from another meeting is reported, never stored over it.
"""

from dataclasses import dataclass, field, replace
from pathlib import Path

from clock import utcnow
from enums import SOURCE_LINE
from models import League, Match, OddsQuote, Team, stored_line
from services import routes
from services.feeds import kickoffs, meetings, names
from services.feeds.formats import footballdata, text
from services.market import price_cubes
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
        summary = store_records(parsed.matches, now)
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


def _updates(existing, record):
    """The fields ``record`` changes on the stored match (a fixture never erases a result)."""
    changes = {}
    for name in meetings.MATCH_FIELDS:
        value = getattr(record, name)
        if value is None or (
            name == "status" and record.home_goals is None and existing[name] == "finished"
        ):
            continue
        if existing[name] != value:
            changes[name] = value
    return changes


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


def store_records(records, now=None, source: str | None = None) -> ImportSummary:
    """Store match records with their odds (the caller owns the transaction), each found again
    as a meeting of its pair (see ``services.feeds.meetings``); a record that cannot be told apart
    from another meeting, or whose match would take another's slug, is left out and listed in
    ``rejected``.

    Prices reach the public only through a prediction that has made its picks: the odds
    summary the cards show is written here only for matches that have kicked off at ``now``
    (the current time by default); an upcoming match's is written by the prediction run (see
    :func:`services.forecasting.publication.write_forecast`). A match moved after it kicked off
    keeps the kick-off from which its picks were public (``public_since``).

    Records of a live ``source`` are its reports of their matches' kick-offs: a match takes the
    earliest any source reports as its kick-off and the latest as its ``unlock_at`` (see
    :mod:`services.feeds.kickoffs`); a record of no source (``data import``, the demo) sets the
    kick-off outright."""
    summary = ImportSummary()
    records, misnamed = _named(records)
    records = meetings.deduplicate(records)
    found, refused = meetings.find(records)
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
    opens = {}  # when each stored match's locked picks open, as it now stands
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
            rejected.append(
                {"line": record.line, "reason": f"{meetings.describe(record)}: {reason}"}
            )
        elif (home, away) != (record.home_team, record.away_team):
            kept.append(replace(record, home_team=home, away_team=away))
        else:
            kept.append(record)
    return kept, rejected


def _kicked_off(record, opens, now) -> bool:
    """Whether the match of ``record`` (as stored now, its locked picks opening at ``opens``;
    None: the record's kick-off) has kicked off at ``now``."""
    return (opens or record.kickoff_at) <= now or meetings.is_played(
        record.status, record.home_goals
    )


def _kickoff_changes(existing, record, span, slug, now) -> dict:
    """The kick-off fields ``record`` changes on the stored match ``existing``: the earliest and
    latest of its sources' reports (``span``), or the record's own kick-off outright when it
    comes from no source (``span`` None). The slug follows the kick-off where it is the
    record's own day (checked for clashes); a match whose picks have opened keeps the instant
    they did (``public_since``). A match played has no disagreement left to keep it locked."""
    kickoff_at, unlock_at = (
        kickoffs.governing(*span) if span is not None else (record.kickoff_at, None)
    )
    if meetings.is_played(record.status, record.home_goals) or meetings.is_played(
        existing["status"], existing["home_goals"]
    ):
        unlock_at = None  # played: it has started, whatever a source still says of its kick-off
    changes = {}
    if kickoff_at != existing["kickoff_at"]:
        changes["kickoff_at"] = kickoff_at
        if meetings.kickoff_day(kickoff_at) == meetings.kickoff_day(record.kickoff_at):
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
        **{name: getattr(record, name) for name in meetings.MATCH_FIELDS},
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
