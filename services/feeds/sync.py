"""A sync: the live sources fetched, what is new stored, the upcoming matches whose prices moved
predicted and their picks published, a checkpoint signed, and what finished settled.

1. **Fetch** each source (``services.feeds.sources.collect``), no transaction open: a source
   that fails, answers an HTML page, a cut or unreadable file, or runs out of credits is
   recorded and the others go on.
2. **Store** in one transaction: the names mapped (``services.feeds.names``: records naming a
   team not mapped yet are held back), records contradicting a stored result held back, the
   rest through the import (``imports.store``), every pre-match price into the history
   (``services.feeds.prices``), and closing lines from the history for matches that kicked off.
   Each URL's validators and body digest are kept with it, so the next sync asks
   conditionally, and a URL whose body was not wholly taken (an error, a name not mapped, a
   contradiction) keeps none: it is read again in full.
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

import numpy as np

from errors import SourceNotConfigured
from models import League, Match, SourceFetch, SourceState
from services.feeds import imports, names, prices, sources
from services.feeds.sources import http
from services.forecasting import forecast, publication
from services.record import settling, signed_log
from store.database import db, writing

log = logging.getLogger("picks.sync")

#: How many refused rows a sync's result lists (all are counted).
LISTED = 20


def run(settings, now, source: str | None = None, policy: http.Policy | None = None) -> dict:
    """One sync of ``source`` (every configured source if None) at ``now``; see the module's
    docstring. CommandError for a source that is unknown or not configured."""
    configured = check_source(source, settings)
    policy = policy or http.Policy.from_settings(settings)
    collected = [
        sources.collect(name, settings, now, policy)
        for name in ([source] if source else configured)
    ]
    with writing():
        reports = [_store(found, now) for found in collected]
        changed = set().union(*(report.pop("changed") for report in reports))
        closed = prices.close(now)
    predicted, published = _predict(changed, now, settings)
    with db.atomic():
        signed = signed_log.checkpoint(now, settings)
    settled = settling.settle_pending(settings, now=now)
    with db.atomic():
        signed = signed_log.checkpoint(now, settings) or signed
    signed_log.stamp(settings, now)
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


def _store(found: sources.Collected, now) -> dict:
    """Store one source's records and standing (inside the sync's transaction)."""
    source = found.source
    forget = set()
    resolved = names.resolve(
        source,
        found.records,
        # the reference spelling: football-data's season files, as ``data import`` reads them
        lambda position: "/mmz4281/" in found.origins[position],
        now,
        founds=source == "football-data",
    )
    forget |= {found.origins[position] for position in resolved.held}
    records, origins = resolved.records, [found.origins[p] for p in resolved.positions]
    conflicts, keep = _contradictions(records)
    forget |= {origins[i] for i in conflicts}
    conflicting = [
        {
            "url": origins[i],
            "line": records[i].line,
            "reason": f"{records[i].home_team} v {records[i].away_team}: the source says "
            f"{records[i].home_goals}-{records[i].away_goals}, the stored result is "
            f"{conflicts[i]}; the stored result kept",
        }
        for i in sorted(conflicts)
    ]
    records, origins = [records[i] for i in keep], [origins[i] for i in keep]
    summary = imports.ImportSummary()
    by_file = defaultdict(list)  # each file in the order fetched: a later one wins
    for record, origin in zip(records, origins, strict=True):
        by_file[origin].append(record)
    for url, batch in by_file.items():
        stored = imports.store(batch, now)
        stored.rejected = [{"url": url, **row} for row in stored.rejected]
        summary.add(stored)
    if source == "football-data" and records:
        names.link_new(source, records, now)
    odds = _odds_by_match(records)
    changed = prices.record(odds, source, now)
    new_matches = _match_ids(records) if summary.matches_new else set()
    _keep_validators([entry for entry in found.fetched if entry["url"] not in forget], now)
    _standing(found, now)
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
        "changed": changed | new_matches,  # _predict keeps those still to kick off
    }


def _contradictions(records) -> tuple[dict[int, str], list[int]]:
    """Records whose result contradicts a stored one (position → the stored score), and the
    positions of the rest. A record is its match's by slug (the teams and the day)."""
    slugs = {
        i: Match.slug_for(r.home_team, r.away_team, r.kickoff_at)
        for i, r in enumerate(records)
        if r.home_goals is not None
    }
    stored = {}
    if slugs:
        query = Match.select(Match.slug, Match.home_goals, Match.away_goals).where(
            Match.slug.in_(sorted(set(slugs.values()))) & (Match.status == "finished")
        )
        stored = {slug: (home, away) for slug, home, away in query.tuples()}
    conflicts = {}
    for i, slug in slugs.items():
        score = stored.get(slug)
        if score is not None and score != (records[i].home_goals, records[i].away_goals):
            conflicts[i] = f"{score[0]}-{score[1]}"
    return conflicts, [i for i in range(len(records)) if i not in conflicts]


def _match_ids(records) -> set[int]:
    slugs = sorted({Match.slug_for(r.home_team, r.away_team, r.kickoff_at) for r in records})
    found = set()
    for start in range(0, len(slugs), 500):
        query = Match.select(Match.id).where(Match.slug.in_(slugs[start : start + 500]))
        found |= {match_id for (match_id,) in query.tuples()}
    return found


def _odds_by_match(records) -> dict[int, list]:
    """Each stored record's odds by its match's id (found by slug, as the import left it)."""
    priced = [r for r in records if r.odds]
    slugs = {}
    for r in priced:
        slugs.setdefault(Match.slug_for(r.home_team, r.away_team, r.kickoff_at), []).append(r)
    ids = {}
    keys = sorted(slugs)
    for start in range(0, len(keys), 500):
        query = Match.select(Match.slug, Match.id).where(Match.slug.in_(keys[start : start + 500]))
        ids.update(dict(query.tuples()))
    odds = defaultdict(list)
    for slug, found in slugs.items():
        if slug in ids:
            for r in found:
                odds[ids[slug]].extend(r.odds)
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


def _standing(found: sources.Collected, now) -> None:
    """The source's last success or error and its credits."""
    row = sources.state(found.source)
    period = sources.month_start(now)
    spent = sources.spent_this_month(row, now) + found.credits_spent
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
    else:
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
        fc = forecast.forecast(now, settings, match_ids=ids, country=country)
        if fc is None:
            continue
        rows = np.flatnonzero(np.isin(fc.match_id, ids))
        with writing():
            written = publication.store(fc, rows, now)
        predicted += len(rows)
        published += written["published"]
    return predicted, published
