"""The live sources: each an adapter that fetches what is new (no transaction open) and gives
the records the import stores (``services.feeds.imports.store``).

An adapter's :func:`collect` reads what it needs from the database first (the validators of
its URLs, its credits), then makes its calls, and hands back a :class:`Collected`: the
records, what was refused and why, the validators to keep, the credits spent and the error
that stopped it, if any. ``services.feeds.sync`` stores all of it in one transaction.

- ``football-data``: the season files of the configured leagues
  (``{FOOTBALL_DATA_URL}/mmz4281/<yyzz>/<Div>.csv``) and the upcoming fixtures
  (``{FOOTBALL_DATA_URL}/fixtures.csv``, and ``new_league_fixtures.csv`` for the countries of
  ``FOOTBALL_DATA_NEW_LEAGUES``); free, so fetched every sync, conditionally.
- ``the-odds-api``: ``/v4/sports/{sport}/odds`` for each configured sport with a stored fixture
  in the coming ``ODDS_API_HORIZON_HOURS`` (or none fetched for a day), and
  ``/v4/sports/{sport}/scores?daysFrom=3`` while one of its matches awaits a result; every call
  within the month's ``ODDS_API_MONTHLY_CREDITS``.
"""

import hashlib
import json
import logging
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from urllib.parse import urlencode

from engine.records import MatchRecord
from models import League, Match, SourceFetch, SourceState
from services.feeds.formats import footballdata, oddsapi, text
from services.feeds.sources import http

log = logging.getLogger("picks.sources")

SOURCES = ("football-data", "the-odds-api")

#: How long after kick-off a match is taken to await its result from the scores endpoint.
RESULT_WINDOW = timedelta(days=3)

#: How often a sport with nothing coming up is still asked for its odds (new fixtures).
IDLE_REFRESH = timedelta(hours=24)

#: A season file the source answered 404 for is asked for again only after this: a league a
#: mirror does not serve is one line in the sync's ``skipped`` a day, not an error every sync.
NOT_SERVED_AGAIN = timedelta(hours=24)

#: The digest a season file's ``source_fetch`` row keeps while the source does not serve it.
NOT_SERVED = "not-served"

#: The largest credit count a header is taken to say: The Odds API's largest plan has some
#: millions a month, so a larger number is no count (and would overflow the column).
CREDITS_MAX = 10**9


@dataclass
class Collected:
    """What one source's sync fetched, before anything is stored."""

    source: str
    records: list[MatchRecord] = field(default_factory=list)
    origins: list[str] = field(default_factory=list)  # the URL of each record, as stored
    rejected: list[dict] = field(default_factory=list)  # {"url", "line", "reason"}
    fetched: list[dict] = field(default_factory=list)  # validators to keep, per URL
    calls: int = 0
    unchanged: int = 0  # answers with nothing new (304, or the body stored last time)
    credits_spent: int = 0
    credits_remaining: int | None = None
    credits_used: int | None = None
    skipped: list[str] = field(default_factory=list)  # calls not made, and why
    errors: list[str] = field(default_factory=list)  # what failed (the rest still counts)
    backoff_until: datetime | None = None


def configured(settings) -> list[str]:
    """The sources the settings turn on."""
    found = []
    if settings["FOOTBALL_DATA_URL"]:
        found.append("football-data")
    if settings["ODDS_API_KEY"]:
        found.append("the-odds-api")
    return found


def month_start(now: datetime) -> date:
    """The first day of ``now``'s month: the period credits count in."""
    return now.date().replace(day=1)


def days_in_month(now: datetime) -> int:
    """How many days ``now``'s month has."""
    start = month_start(now)
    return ((start.replace(day=28) + timedelta(days=4)).replace(day=1) - start).days


def state(source: str) -> SourceState:
    """The source's standing row (a blank one before its first sync, not stored)."""
    return SourceState.get_or_none(SourceState.source == source) or SourceState(
        source=source, credits_spent=0
    )


def spent_this_month(row: SourceState, now: datetime) -> int:
    """Credits the service spent on the source in ``now``'s month."""
    return row.credits_spent if row.period == month_start(now) else 0


def collect(source: str, settings, now: datetime, policy: http.Policy) -> Collected:
    """Fetch what is new from ``source``; nothing is stored (see the module's docstring)."""
    collected = Collected(source)
    row = state(source)
    if row.backoff_until is not None and row.backoff_until > now:
        collected.skipped.append(f"asked to wait until {row.backoff_until.isoformat()}")
        collected.backoff_until = row.backoff_until  # still paused: no call, no success
        return collected
    if source == "football-data":
        _football_data(collected, settings, now, policy)
    else:
        _odds_api(collected, settings, now, policy, row)
    return collected


def _validators(urls) -> dict[str, SourceFetch]:
    return {row.url: row for row in SourceFetch.select().where(SourceFetch.url.in_(list(urls)))}


def _fetch(collected, url, key, known, policy, now, cost=0) -> bytes | None:
    """One conditional GET: the new body, or None (unchanged, or failed: recorded either way).
    ``key`` is the URL as stored (without the API key); ``cost`` the credits an answer costs
    when it does not say (``x-requests-last``)."""
    before = known.get(key)
    collected.calls += 1
    try:
        answer = http.get(
            url,
            policy,
            etag=before.etag if before else None,
            last_modified=before.last_modified if before else None,
        )
    except http.FetchError as error:
        for headers in error.answered:  # answers whose body failed: charged all the same
            _charge(collected, headers, cost)
        if error.status == 404 and "/mmz4281/" in key:
            collected.skipped.append(f"{key}: not served (404); asked again in a day")
            collected.fetched.append(
                {"url": key, "etag": None, "last_modified": None, "digest": NOT_SERVED}
            )
            return None
        collected.errors.append(f"{key}: {error}")
        if error.retry_after is not None:
            wait = min(max(error.retry_after, 0.0), http.RETRY_AFTER_MAX)
            collected.backoff_until = now + timedelta(seconds=wait)
        return None
    for headers in [*answer.earlier, answer.headers]:
        _charge(collected, headers, cost)
    if answer.status == 304:
        collected.unchanged += 1
        return None
    digest = hashlib.sha256(answer.body).hexdigest()
    if before is not None and before.digest == digest:
        collected.unchanged += 1
        return None
    collected.fetched.append(
        {"url": key, "etag": answer.etag, "last_modified": answer.last_modified, "digest": digest}
    )
    return answer.body


def _charge(collected, headers, cost) -> None:
    """Count what one answer cost: what its headers say, else ``cost``."""
    if not _credits(collected, headers):
        collected.credits_spent += cost


def _credits(collected, headers) -> bool:
    """Read the credit headers; whether the answer said what it cost."""
    for name, attribute in (
        ("x-requests-remaining", "credits_remaining"),
        ("x-requests-used", "credits_used"),
    ):
        value = _whole(headers.get(name))
        if value is not None:
            setattr(collected, attribute, value)
    last = _whole(headers.get("x-requests-last"))
    if last is None:
        return False
    collected.credits_spent += last
    return True


def _whole(value: str | None) -> int | None:
    """A header's whole number (``12`` or ``12.0``) up to CREDITS_MAX, or None."""
    try:
        number = float(value) if value is not None else None
    except ValueError:
        return None
    if number is None or not 0 <= number <= CREDITS_MAX or not number.is_integer():
        return None  # NaN fails the range too
    return int(number)


def _forget(collected, key) -> None:
    """Keep no validators for ``key``: its body was not stored, so the next sync fetches it
    again in full rather than hearing 304 for what it never took."""
    collected.fetched = [entry for entry in collected.fetched if entry["url"] != key]


def season_code(now: datetime) -> str:
    """football-data's folder of the season ``now`` falls in: ``2324`` for 2023/24."""
    start = int(footballdata.season_label(now.date())[:4])
    return f"{start % 100:02d}{(start + 1) % 100:02d}"


def leagues(settings) -> list[str]:
    """The football-data divisions the settings configure."""
    return [code.strip() for code in settings["FOOTBALL_DATA_LEAGUES"].split(",") if code.strip()]


def _football_data(collected, settings, now, policy) -> None:
    base = settings["FOOTBALL_DATA_URL"].rstrip("/")
    wanted = leagues(settings)
    seasons = [code.strip() for code in settings["FOOTBALL_DATA_SEASONS"].split(",") if code]
    urls = [
        f"{base}/mmz4281/{season}/{division}.csv"
        for season in (seasons or [season_code(now)])
        for division in wanted
    ]
    urls.append(f"{base}/fixtures.csv")
    new_leagues = [
        code.strip() for code in settings["FOOTBALL_DATA_NEW_LEAGUES"].split(",") if code.strip()
    ]
    if new_leagues:
        urls.append(f"{base}/new_league_fixtures.csv")
    wanted = wanted + new_leagues
    known = _validators(urls)
    for url in urls:
        before = known.get(url)
        if (
            before is not None
            and before.digest == NOT_SERVED
            and now - before.fetched_at < NOT_SERVED_AGAIN
        ):
            collected.skipped.append(f"{url}: not served (404); asked again in a day")
            continue
        body = _fetch(collected, url, url, known, policy, now)
        if body is None:
            continue
        problem = _csv_problem(body)
        if problem is None:
            try:
                decoded = text.decode(body)
                if url.endswith("/new_league_fixtures.csv"):
                    parsed = footballdata.parse_new_leagues(decoded.text, today=now.date())
                else:
                    parsed = footballdata.parse(decoded.text, today=now.date())
                outside = footballdata.screen(parsed)
            except (text.UnreadableText, footballdata.FootballDataError) as error:
                problem = str(error)
        if problem is not None:
            collected.errors.append(f"{url}: {problem}; nothing of it stored")
            _forget(collected, url)
            continue
        collected.rejected += [
            {"url": url, "line": row.line, "reason": row.reason}
            for row in parsed.rejected
            if not row.reason.startswith("Div ")  # the fixture files list every league
        ]
        matches = [match for match in parsed.matches if match.league.code in wanted]
        lines = {match.line for match in matches}
        collected.rejected += [
            {"url": url, "line": row.line, "reason": row.reason}
            for row in outside
            if row.line in lines
        ]
        if matches and not any(match.odds for match in matches) and url.endswith("fixtures.csv"):
            collected.errors.append(f"{url}: no price column read (renamed?); fixtures kept")
        collected.records += matches
        collected.origins += [url] * len(matches)


def _csv_problem(body: bytes) -> str | None:
    """Why a body is not a whole CSV file: an HTML page, or cut short (every football-data file
    ends its last line)."""
    head = body.lstrip()[:64].lower()
    if head.startswith((b"<!doctype", b"<html", b"<?xml", b"<")):
        return "the answer is an HTML page, not CSV"
    if not body.endswith(b"\n"):
        return "the file is cut short (its last line is not whole)"
    return None


def _odds_api(collected, settings, now, policy, row) -> None:
    base = settings["ODDS_API_URL"].rstrip("/")
    sports = oddsapi.sports(settings["ODDS_API_SPORTS"])
    regions = [r.strip() for r in settings["ODDS_API_REGIONS"].split(",") if r.strip()]
    markets = [m.strip() for m in settings["ODDS_API_MARKETS"].split(",") if m.strip()]
    budget = paced_budget(settings["ODDS_API_MONTHLY_CREDITS"], now)
    spent = spent_this_month(row, now)
    horizon = now + timedelta(hours=settings["ODDS_API_HORIZON_HOURS"])
    coming, awaiting = _league_needs(list(sports.values()), now, horizon)
    calls = []
    for sport, division in sports.items():
        odds_key = (
            f"{base}/v4/sports/{sport}/odds?"
            + urlencode({"regions": ",".join(regions), "markets": ",".join(markets)})
            + "&oddsFormat=decimal"
        )
        cost = oddsapi.odds_cost(len(markets), len(regions))
        calls.append((sport, division, "odds", odds_key, cost))
        if division in awaiting:
            scores_key = f"{base}/v4/sports/{sport}/scores?daysFrom={RESULT_WINDOW.days}"
            calls.append(
                (sport, division, "scores", scores_key, oddsapi.scores_cost(RESULT_WINDOW.days))
            )
    known = _validators([key for *_, key, _ in calls])
    for sport, division, kind, key, cost in calls:
        if kind == "odds" and division not in coming:
            last = known.get(key)
            if last is not None and now - last.fetched_at < IDLE_REFRESH:
                collected.skipped.append(f"{sport} odds: nothing kicks off within the horizon")
                continue
        remaining = collected.credits_remaining
        if remaining is None:
            remaining = row.credits_remaining
        if spent + collected.credits_spent + cost > budget or (
            remaining is not None and remaining < cost
        ):
            collected.skipped.append(
                f"{sport} {kind}: {cost} credits would pass the budget by today's end "
                f"({spent + collected.credits_spent} of {budget} spent; "
                f"{settings['ODDS_API_MONTHLY_CREDITS']} for the month)"
            )
            continue
        separator = "&" if "?" in key else "?"
        url = f"{key}{separator}{urlencode({'apiKey': settings['ODDS_API_KEY']})}"
        body = _fetch(collected, url, key, known, policy, now, cost)
        if collected.backoff_until is not None:
            break  # 429: nothing more from this source now
        if body is None:
            continue
        try:
            payload = json.loads(body)
            parse = oddsapi.parse_odds if kind == "odds" else oddsapi.parse_scores
            parsed = parse(payload, division, today=now.date())
        except RecursionError:
            collected.errors.append(f"{key}: JSON nested too deep to read; nothing stored")
            _forget(collected, key)
            continue
        except (ValueError, oddsapi.OddsApiError) as error:
            collected.errors.append(f"{key}: not the documented JSON ({error}); nothing stored")
            _forget(collected, key)
            continue
        collected.rejected += [
            {"url": key, "line": rejected.line, "reason": rejected.reason}
            for rejected in parsed.rejected + parsed.refused
        ]
        collected.records += parsed.matches
        collected.origins += [key] * len(parsed.matches)


def paced_budget(monthly: int, now: datetime) -> int:
    """The credits that may be spent by the end of ``now``'s day: the month's budget spread
    evenly over its days, so the last days of a month keep their share."""
    return monthly * now.day // days_in_month(now)


def _league_needs(divisions, now, horizon) -> tuple[set[str], set[str]]:
    """The divisions with a stored fixture kicking off by ``horizon``, and those with a match
    kicked off in the last RESULT_WINDOW still without its result."""
    query = (
        Match.select(League.code, Match.kickoff_at, Match.home_goals)
        .join(League)
        .where(
            League.code.in_(divisions)
            & (Match.kickoff_at > now - RESULT_WINDOW)
            & (Match.kickoff_at <= horizon)
            & Match.status.not_in(("cancelled", "finished"))
        )
    )
    coming, awaiting = set(), set()
    for code, kickoff, home_goals in query.tuples():
        if kickoff > now:
            coming.add(code)
        elif home_goals is None:
            awaiting.add(code)
    return coming, awaiting
