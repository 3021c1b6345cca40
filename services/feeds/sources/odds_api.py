"""The ``the-odds-api`` adapter: ``/v4/sports/{sport}/odds`` for each configured sport with a
stored fixture in the coming ``ODDS_API_HORIZON_HOURS`` (or none fetched for a day), and
``/v4/sports/{sport}/scores?daysFrom=3`` while one of its matches awaits a result; every call
within the month's ``ODDS_API_MONTHLY_CREDITS``, paced over its days."""

import json
from datetime import datetime, timedelta
from urllib.parse import urlencode

from models import League, Match
from services.feeds.formats import oddsapi
from services.feeds.sources import credits, fetching

#: How long after kick-off a match is taken to await its result from the scores endpoint.
RESULT_WINDOW = timedelta(days=3)

#: How often a sport with nothing coming up is still asked for its odds (new fixtures).
IDLE_REFRESH = timedelta(hours=24)


def collect(collected, settings, now, policy, row) -> None:
    """Fetch what is new from The Odds API into ``collected``, within the credits left
    (``row``, the source's standing)."""
    base = settings["ODDS_API_URL"].rstrip("/")
    sports = oddsapi.sports(settings["ODDS_API_SPORTS"])
    regions = [r.strip() for r in settings["ODDS_API_REGIONS"].split(",") if r.strip()]
    markets = [m.strip() for m in settings["ODDS_API_MARKETS"].split(",") if m.strip()]
    budget = paced_budget(settings["ODDS_API_MONTHLY_CREDITS"], now)
    spent = credits.spent_this_month(row, now)
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
    known = fetching.validators([key for *_, key, _ in calls])
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
        body = fetching.fetch(collected, url, key, known, policy, now, cost)
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
            fetching.forget(collected, key)
            continue
        except (ValueError, oddsapi.OddsApiError) as error:
            collected.errors.append(f"{key}: not the documented JSON ({error}); nothing stored")
            fetching.forget(collected, key)
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
    return monthly * now.day // credits.days_in_month(now)


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
