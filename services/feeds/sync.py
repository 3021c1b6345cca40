"""A sync: the live sources fetched, what is new stored, the upcoming matches whose prices moved
predicted and their picks published, a checkpoint signed, and what finished settled.

1. **Fetch** every source (``services.feeds.sources.collect``), no transaction open: a source
   that fails, answers an HTML page, a cut or unreadable file, or runs out of credits is
   recorded and the others go on.
2. **Store** each source's in a transaction of its own: the names mapped
   (``services.feeds.names``: records naming a team not mapped yet are held back), records
   contradicting a stored result held back, the rest through the import (``imports.store_records``),
   and every pre-match price of a match still to kick off into that source's price history
   (``services.feeds.prices``). A source whose records fail to store fails its own part only:
   the other's work lands, and its standing (last error, credits its calls cost) is written in
   a transaction of its own either way, so health shows it ``failing`` in the same cycle and
   the credit count never runs behind what the API charged. Then, in one transaction, the
   current quotes of the matches whose history moved are merged across sources
   (``prices.current``: the freshest change wins) and closing lines are taken from the history
   for matches that kicked off. Each URL's validators and body digest are kept with it, so the
   next sync asks conditionally, and a URL whose body failed keeps none: it is read again in
   full. A record naming a team not mapped yet is a poison row: held back and listed once, its
   URL keeping its validators (it is not read in full again at every sync) until the name is
   mapped, which forgets every validator so the next sync reads all again. A result
   contradicting a stored one is recorded once as a contradiction
   (``services.feeds.contradictions``), its URL's validators kept: an unchanged file costs
   nothing, and the match's settlement waits for an operator.
3. **Predict** the upcoming matches whose prices changed: the model fits with no transaction
   open, then one short transaction per country writes the predictions and picks, appends the
   picks to the ledger and writes the prices the public sees. No price this sync stores is
   public before that: an upcoming match's public prices are written only by the prediction
   that used them (``services.forecasting.publication``), so a Pro call's quota write never
   waits behind a model fit.
4. **Checkpoint**: signed in its own transaction once the picks committed.
5. **Settle** what finished (its outcomes appended to the ledger), and sign again.
"""

import logging
from collections import defaultdict
from dataclasses import replace

import numpy as np

from errors import SourceNotConfigured
from models import League, Match, SourceFetch, SourceState
from services.feeds import contradictions, imports, meetings, names, prices, sources
from services.feeds.sources import credits, fetching, http
from services.forecasting import forecast, publication
from services.record import publishing, settling
from store.database import DATABASE_ERRORS, exclusive, writing

log = logging.getLogger("picks.sync")

#: How many refused rows a sync's result lists (all are counted).
LISTED = 20

#: The PostgreSQL advisory lock held while a sync runs ("sync" in ASCII).
SYNC_LOCK = 0x73796E63


def run(settings, now, source: str | None = None, policy: http.Policy | None = None) -> dict:
    """One sync of ``source`` (every configured source if None) at ``now``; see the module's
    docstring. CommandError for a source that is unknown or not configured."""
    configured = check_source(source, settings)
    policy = policy or http.Policy.from_settings(settings)
    # One sync at a time in the whole deployment (the worker's, the CLI's, the API's): a
    # second waits for the first, then asks conditionally; credits, reports and quotes are
    # never written by two at once.
    with exclusive("sync", SYNC_LOCK):
        return _run(settings, now, source, configured, policy)


def _run(settings, now, source, configured, policy) -> dict:
    """:func:`run`, holding the sync lock."""
    # Every source is fetched before any is stored, so results two sources give in one sync
    # meet before anything settles on either.
    collected = [
        _collect_apart(name, settings, now, policy) for name in ([source] if source else configured)
    ]
    reports = [_store_apart(found, now) for found in collected]
    seen = set().union(*(report.pop("changed") for report in reports))
    new_matches = set().union(*(report.pop("new_matches") for report in reports))
    with writing():
        changed = prices.current(seen, now) | new_matches
        closed = prices.close(now)
    predicted, published = _predict(changed, now, settings)
    with publishing.publish_in_steps(settings, now) as signing:
        with signing.transaction():
            pass  # signs what the predictions published
        settled = settling.settle_pending(settings, now=now)
        with signing.transaction():
            pass  # signs what the settlement appended
    signed = signing.checkpoint
    for report in reports:
        for error in report["errors"]:
            log.warning("sync %s: %s", report["source"], error)
    return {
        "synced_at": now,
        "sources": reports,
        "closing_lines": len(closed),
        "predicted": predicted,
        "published": published,
        "settled": settling.settled_count(settled),
        "checkpoint_size": signed["size"] if signed else None,
    }


def check_source(source: str | None, settings) -> list[str]:
    """The configured sources; SourceNotConfigured for ``source`` unknown or not configured,
    or when none is."""
    configured = sources.configured(settings)
    if source is not None and source not in sources.SOURCES:
        raise SourceNotConfigured(
            f"Unknown source {source!r}: one of {', '.join(sources.SOURCES)}."
        )
    if (source or configured) and (source is None or source in configured):
        return configured
    raise SourceNotConfigured(
        f"The source {source!r} is not configured."
        if source
        else "No source is configured. See docs/operations.md, Live data."
    )


def kickoff_near(now, within) -> bool:
    """Whether a stored match still to be played kicks off within ``within`` of ``now``."""
    return (
        Match.select(Match.id)
        .where((Match.kickoff_at > now) & (Match.kickoff_at <= now + within))
        .where(Match.status.in_(("scheduled", "postponed")))
        .exists()
    )


def _collect_apart(name: str, settings, now, policy) -> fetching.Collected:
    """One source's fetch; a database error while it reads what it needs (its validators, its
    credits) fails that source alone, recorded as its error."""
    try:
        return sources.collect(name, settings, now, policy)
    except DATABASE_ERRORS as exc:
        log.exception("sync %s: collecting failed", name)
        failed = fetching.Collected(name)
        failed.errors.append(f"fetching failed: {type(exc).__name__}: {exc}")
        return failed


def _store_apart(found: fetching.Collected, now) -> dict:
    """Store one source's records in a transaction of its own, then its standing in another:
    a source whose records fail to store (a database error, a record the import cannot take)
    fails its own part only, its error and the credits its calls cost recorded all the same."""
    try:
        with writing():
            report = _store(found, now)
    except (*DATABASE_ERRORS, ValueError) as exc:
        log.exception("sync %s: storing failed", found.source)
        found.errors.append(
            f"storing failed, nothing of this source kept: {type(exc).__name__}: {exc}"
        )
        report = _unstored(found)
    finally:
        # Whatever happened (an unforeseen error fails the operation, recorded with its
        # trace), the credits the calls cost and the error are counted.
        with writing():
            _standing(found, now)
    return report


def _unstored(found: fetching.Collected) -> dict:
    """The report of a source whose records were not stored."""
    return {
        "source": found.source,
        "calls": found.calls,
        "unchanged": found.unchanged,
        "matches_new": 0,
        "matches_updated": 0,
        "odds_stored": 0,
        "prices_changed": 0,
        "rejected": len(found.rejected),
        "rejected_rows": found.rejected[:LISTED],
        "contradictions": 0,
        "held_back": 0,
        "unmatched": [],
        "credits_spent": found.credits_spent,
        "credits_remaining": found.credits_remaining,
        "skipped": found.skipped,
        "errors": found.errors,
        "changed": set(),
        "new_matches": set(),
    }


def _store(found: fetching.Collected, now) -> dict:
    """Store one source's records (the caller owns the transaction): the matches and results
    through the import, the pre-match prices of matches still to kick off into the history
    (whose merge rule, :func:`services.feeds.prices.current`, makes their current quotes)."""
    source = found.source
    resolved = names.resolve(
        source,
        found.records,
        # the reference spelling: football-data's season files, as ``data import`` reads them
        lambda position: "/mmz4281/" in found.origins[position],
        now,
        founds=source == "football-data",
    )
    # A record held back (a name not mapped yet) is a poison row: its name is listed once and
    # its URL keeps its validators, so it is not read again in full at every sync; mapping the
    # name (``names.map_name``) forgets every validator, and the next sync reads it all again.
    records, origins = resolved.records, [found.origins[p] for p in resolved.positions]
    # A contradiction is recorded once (its URL keeps its validators: the body was taken) and
    # listed only when it opens or changes.
    conflicts, keep = _contradictions(records, source, now)
    conflicting = [
        {
            "url": origins[i],
            "line": records[i].line,
            "reason": f"{records[i].home_team} v {records[i].away_team}: the source says "
            f"{conflicts[i]['offered']}, the stored result is {conflicts[i]['stored']}; "
            f"the stored result kept, contradiction {conflicts[i]['state']} until an operator "
            "resolves it (flask data contradictions)",
        }
        for i in sorted(conflicts)
        if conflicts[i]["state"] in (contradictions.OPENED, contradictions.CHANGED)
    ]
    records, origins = [records[i] for i in keep], [origins[i] for i in keep]
    records, seen = _pre_match_apart(records, origins, now)
    summary = imports.ImportSummary()
    by_file = defaultdict(list)  # each file in the order fetched: a later one wins
    for record, origin in zip(records, origins, strict=True):
        by_file[origin].append(record)
    for url, batch in by_file.items():
        stored = imports.store_records(batch, now, source=source)
        stored.rejected = [{"url": url, **row} for row in stored.rejected]
        summary.add(stored)
    if source == "football-data" and records:
        names.link_new(source, records, now)
    changed = prices.record(_odds_by_match(seen), source, now)
    new_matches = _match_ids(records) if summary.matches_new else set()
    _keep_validators(found.fetched, now)
    rejected = found.rejected + summary.rejected + conflicting
    return {
        "source": source,
        "calls": found.calls,
        "unchanged": found.unchanged,
        "matches_new": summary.matches_new,
        "matches_updated": summary.matches_updated,
        "odds_stored": summary.odds_stored,
        "prices_changed": len(changed),
        "rejected": len(rejected),
        "rejected_rows": rejected[:LISTED],
        "contradictions": len(conflicting),
        "held_back": len(resolved.held),
        "unmatched": resolved.unmatched,
        "credits_spent": found.credits_spent,
        "credits_remaining": found.credits_remaining,
        "skipped": found.skipped,
        "errors": found.errors,
        "changed": changed,  # the history moved: the current quotes are merged again
        "new_matches": new_matches,  # _predict keeps those still to kick off
    }


def _contradictions(records, source, now) -> tuple[dict[int, dict], list[int]]:
    """Records whose result contradicts a stored one, each recorded as a contradiction
    (position → its stored and offered scores and what recording it did, see
    ``contradictions.check``), and the positions of the rest."""
    return contradictions.check(records, source, now)


def _match_ids(records) -> set[int]:
    """The ids of the stored matches of ``records`` (as the import found them)."""
    return {match["id"] for match in meetings.stored_matches(records) if match is not None}


def _pre_match_apart(records, origins, now) -> tuple[list, list[tuple]]:
    """The records without the pre-match prices a live source gave, and those prices as
    ``(record, odds)``: they go to the history (which keeps only those of matches still to
    kick off, by the match's governing kick-off), never straight to the quotes, so an in-play
    price is never taken for a pre-match one. A season file's rows (``/mmz4281/``: played
    matches with their pre-match and closing columns) keep their prices, as ``data import``."""
    kept, seen = [], []
    for record, origin in zip(records, origins, strict=True):
        if "/mmz4281/" in origin:
            kept.append(record)
            continue
        pre_match = [quote for quote in record.odds if not quote.is_closing]
        kept.append(replace(record, odds=[quote for quote in record.odds if quote.is_closing]))
        if pre_match and record.home_goals is None and record.kickoff_at > now:
            seen.append((record, pre_match))
    return kept, seen


def _odds_by_match(seen) -> dict[int, list]:
    """The odds of each ``(record, odds)`` of ``seen`` by its match's id, the match found as
    the import finds it (never by a slug rebuilt from the record's own day: a source whose
    kick-off falls on another day than the stored one is the same match)."""
    found = meetings.stored_matches([record for record, _ in seen])
    odds = defaultdict(list)
    for (_, quotes), match in zip(seen, found, strict=True):
        if match is not None:
            odds[match["id"]].extend(quotes)
    return dict(odds)


def _keep_validators(entries, now) -> None:
    for entry in entries:
        SourceFetch.insert(**entry, fetched_at=now).on_conflict(
            conflict_target=[SourceFetch.url],
            update={
                SourceFetch.etag: entry["etag"],
                SourceFetch.last_modified: entry["last_modified"],
                SourceFetch.digest: entry["digest"],
                SourceFetch.fetched_at: now,
            },
        ).execute()


def _standing(found: fetching.Collected, now) -> None:
    """The source's last success or error and its credits."""
    row = credits.state(found.source)
    period = credits.month_start(now)
    spent = credits.spent_this_month(row, now) + found.credits_spent
    fields = {"period": period, "credits_spent": spent}
    if found.credits_remaining is not None:
        fields["credits_remaining"] = found.credits_remaining
    if found.credits_used is not None:
        fields["credits_used"] = found.credits_used
    if found.errors:
        fields["last_error_at"] = now
        fields["last_error"] = "; ".join(found.errors)[:2000]
    # A success: an answer came (or nothing was due), and the source is not pausing us.
    answered = found.calls > len(found.errors) or (not found.errors and not found.calls)
    if answered and found.backoff_until is None:
        fields["last_success_at"] = now
    fields["backoff_until"] = found.backoff_until
    changed = {name: value for name, value in fields.items() if getattr(row, name) != value}
    if not changed:
        return
    if row.id is None:
        SourceState.create(source=found.source, **fields)
        return
    if "credits_spent" in changed and row.period == period:
        # Added in the statement, not written as read: a count never runs behind the API's.
        changed["credits_spent"] = SourceState.credits_spent + found.credits_spent
    SourceState.update(changed).where(SourceState.id == row.id).execute()


def _predict(match_ids, now, settings) -> tuple[int, int]:
    """Predict live the upcoming matches among ``match_ids`` (one forecast per country, fitting
    only what they need, with no transaction open), each country's predictions, picks, ledger
    entries and public prices written in one transaction; (predicted, published)."""
    if not match_ids:
        return 0, 0
    groups = defaultdict(list)
    query = (
        Match.select(Match.id, League.country)
        .join(League)
        .where(Match.id.in_(sorted(match_ids)) & (Match.kickoff_at > now))
        .where(Match.status.in_(("scheduled", "postponed")))
    )
    for match_id, country in query.tuples():
        groups[country].append(match_id)
    predicted = published = 0
    for country, ids in sorted(groups.items()):
        group_forecast = forecast.forecast(now, settings, match_ids=ids, country=country)
        if group_forecast is None:
            continue
        rows = np.flatnonzero(np.isin(group_forecast.match_id, ids))
        with writing():
            written = publication.write_forecast(group_forecast, rows, now, settings)
        predicted += len(rows)
        published += written["published"]
    return predicted, published
