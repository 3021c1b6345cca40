"""The ``football-data`` adapter: the season files of the configured leagues
(``{FOOTBALL_DATA_URL}/mmz4281/<yyzz>/<Div>.csv``) and the upcoming fixtures
(``{FOOTBALL_DATA_URL}/fixtures.csv``, and ``new_league_fixtures.csv`` for the countries of
``FOOTBALL_DATA_NEW_LEAGUES``); free, so fetched every sync, conditionally."""

from datetime import datetime, timedelta

from services.feeds.formats import footballdata, text
from services.feeds.sources import fetching

#: A season file the source answered 404 for is asked for again only after this: a league a
#: mirror does not serve is one line in the sync's ``skipped`` a day, not an error every sync.
NOT_SERVED_AGAIN = timedelta(hours=24)


def season_code(now: datetime) -> str:
    """football-data's folder of the season ``now`` falls in: ``2324`` for 2023/24."""
    start = int(footballdata.season_label(now.date())[:4])
    return f"{start % 100:02d}{(start + 1) % 100:02d}"


def leagues(settings) -> list[str]:
    """The football-data divisions the settings configure."""
    return [code.strip() for code in settings["FOOTBALL_DATA_LEAGUES"].split(",") if code.strip()]


def collect(collected, settings, now, policy) -> None:
    """Fetch what is new from football-data into ``collected``."""
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
    known = fetching.validators(urls)
    for url in urls:
        before = known.get(url)
        if (
            before is not None
            and before.digest == fetching.NOT_SERVED
            and now - before.fetched_at < NOT_SERVED_AGAIN
        ):
            collected.skipped.append(f"{url}: not served (404); asked again in a day")
            continue
        body = fetching.fetch(collected, url, url, known, policy, now)
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
            fetching.forget(collected, url)
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
