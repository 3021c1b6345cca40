"""What the public pages show a person: the landing page's coming matches, the past matches of a
day (the results), a match's prediction page in full, the track record with its charts'
figures, and the sitemap's pages. Plain values out; the web layer draws them."""

from datetime import UTC, date, datetime, time, timedelta

from peewee import fn

from engine.markets import FIXED_MARKETS, outcome
from engine.model import lines
from enums import LINE_MARKETS, MARKET_SELECTIONS, MARKETS, PICK_RATINGS
from errors import NotFound
from models import LedgerCheckpoint, Match, Operation, Pick, Prediction
from schemas.ops import RESULT_SCHEMAS
from services.market.names import MARKET_NAMES, market_name, selection_name
from services.reads import cards, seo, track_record
from services.record import log_reading

#: The landing page shows today and the days after it, this many days in all.
LANDING_DAYS = 7
#: At most this many matches on the landing page (the earliest first).
LANDING_LIMIT = 200
#: The results page lists at most this many matches of its day.
RESULTS_LIMIT = 500
#: A prediction page links this many other matches of its league (the nearest in time).
LEAGUE_LINKS = 8
#: The sitemap lists the prediction pages of matches kicking off within these days of now.
SITEMAP_PAST_DAYS = 30
SITEMAP_FUTURE_DAYS = 14
#: The sitemap protocol's limit of URLs in one file.
SITEMAP_LIMIT = 50_000
#: The units curve is drawn through at most this many points (evenly spread, the last kept).
CURVE_POINTS = 120
#: The fair closing EV distribution's bins: width and the outer edges (values beyond are
#: counted in the outermost bins).
EV_BIN_WIDTH = 0.025
EV_RANGE = (-0.2, 0.2)
#: How a page names each competition type (the wire's slugs are for programs).
COMPETITION_TYPE_NAMES = {
    "top-flight": "Top flights",
    "lower-league": "Lower leagues",
    "cup": "Cups",
    "international": "Internationals",
}


#: How a prediction page heads the market's fair probabilities (the sharp line de-margined),
#: the published column too where they are what is published.
FAIR_NAME = "Market (fair)"


def _shares(probabilities: dict | None, home: str, away: str) -> list | None:
    """The 1x2 ``(name, share)`` pairs of ``probabilities`` (None when there are none, or they
    are withheld)."""
    if not probabilities:
        return None
    return [(selection_name(s, home, away), probabilities[s]) for s in MARKET_SELECTIONS["1x2"]]


def _headline(card: dict, home: str, away: str) -> dict | None:
    """A match's published 1x2 as a table cell shows it: whose numbers they are (``source``
    and its ``label``), the shares, and the goal model's own beside them where the published
    ones are the market's (``model``, else None); None without a 1x2 prediction or while it is
    withheld."""
    found = next((p for p in card["predictions"] if p["market"] == "1x2"), None)
    if found is None or found["probabilities"] is None:
        return None
    source = found["source"]
    return {
        "source": source,
        "label": seo.FORECAST_NAMES[source],
        "shares": _shares(found["probabilities"], home, away),
        "model": _shares(found["model_probabilities"], home, away) if source == "market" else None,
    }


def _best_pick(picks: list) -> dict | None:
    """The best-rated pick of a match (the 1x2 first among equals)."""
    ordered = sorted(
        picks, key=lambda pick: (PICK_RATINGS.index(pick["rating"]), MARKETS.index(pick["market"]))
    )
    return ordered[0] if ordered else None


def landing(viewer, now: datetime, settings, days: int = LANDING_DAYS) -> dict:
    """Today's and the coming days' matches, by UTC day, each with its published 1x2 as
    :func:`_headline` gives it (None when there is none or it is locked) and its best pick under
    the premium rule."""
    start = datetime.combine(now.date(), time(0), tzinfo=UTC)
    end = start + timedelta(days=days)
    query = (
        cards.matches()
        .where((Match.kickoff_at >= start) & (Match.kickoff_at < end))
        .order_by(Match.kickoff_at, Match.id)
        .limit(LANDING_LIMIT)
    )
    grouped = {}
    for card in cards.build(query, viewer, ("predictions", "picks"), now, settings):
        home, away = card["home_team"]["name"], card["away_team"]["name"]
        grouped.setdefault(card["kickoff_at"].date(), []).append(
            {
                **{key: card[key] for key in ("slug", "kickoff_at", "status", "league", "score")},
                "home": home,
                "away": away,
                "forecast": _headline(card, home, away),
                "locked": card["locked"],
                "pick": _named(_best_pick(card["picks"]), home, away),
            }
        )
    return {
        "date_from": start.date(),
        "date_to": (end - timedelta(days=1)).date(),
        "days": [{"date": day, "matches": rows} for day, rows in grouped.items()],
    }


def _named(pick: dict | None, home: str, away: str) -> dict | None:
    """A pick with the names a page gives its market and selection (the selection None while
    the pick is locked)."""
    if pick is None:
        return None
    selection = pick["selection"] and selection_name(
        pick["selection"], home, away, pick["market"], pick.get("line")
    )
    return {**pick, "name": selection, "market_name": MARKET_NAMES[pick["market"]]}


def _outcome(card: dict, market: str = "1x2", line=None) -> str | None:
    """The selection of ``market`` (at ``line`` for a market with lines) that a finished
    match's final score settles (None before the match is finished with a score, and for a
    push)."""
    score = card["score"]
    if card["status"] != "finished" or score is None:
        return None
    if market in LINE_MARKETS:
        index = lines.outcome_index(market, [line], [score["home"]], [score["away"]])[0]
        return MARKET_SELECTIONS[market][index] if index >= 0 else None
    return outcome(market, score["home"], score["away"])


def results(day: date | None, viewer, now: datetime, settings) -> dict:
    """The matches of one UTC day that have kicked off by ``now``, by league, each with its
    score, its published 1x2 as :func:`_headline` gives it (with the name of the outcome that
    happened, ``happened``) and its best pick with how it did; ``day`` None is the latest day
    with a finished match. The nearest earlier and later days with a finished match come with
    it, to step through the past. A day after today is NotFound: nothing of it has happened."""
    today = now.date()
    if day is not None and day > today:
        raise NotFound(f"{day.isoformat()} is still to come: it has no result yet.")
    finished = (Match.status == "finished") & (Match.kickoff_at <= now)
    if day is None:
        latest = Match.select(fn.MAX(Match.kickoff_at)).where(finished).scalar()
        day = _aware(latest).date() if latest is not None else today
    start = datetime.combine(day, time(0), tzinfo=UTC)
    end = start + timedelta(days=1)
    query = (
        cards.matches()
        .where((Match.kickoff_at >= start) & (Match.kickoff_at < end) & (Match.kickoff_at <= now))
        .order_by(Match.kickoff_at, Match.id)
        .limit(RESULTS_LIMIT)
    )
    leagues = {}
    for card in cards.build(query, viewer, ("predictions", "picks"), now, settings):
        home, away = card["home_team"]["name"], card["away_team"]["name"]
        happened = _outcome(card)
        headline = _headline(card, home, away)
        if headline is not None:
            headline["happened"] = selection_name(happened, home, away) if happened else None
        pick = _best_pick(card["picks"])
        league = card["league"]
        leagues.setdefault(league["id"], {"league": league, "matches": []})["matches"].append(
            {
                **{key: card[key] for key in ("slug", "kickoff_at", "status", "score")},
                "home": home,
                "away": away,
                "forecast": headline,
                "pick": _named(pick, home, away),
            }
        )
    earlier = Match.select(fn.MAX(Match.kickoff_at)).where(finished & (Match.kickoff_at < start))
    later = Match.select(fn.MIN(Match.kickoff_at)).where(finished & (Match.kickoff_at >= end))
    return {
        "day": day,
        "leagues": sorted(leagues.values(), key=lambda group: group["league"]["name"]),
        "previous": _day_of(earlier.scalar()),
        "next": _day_of(later.scalar()),
    }


def _day_of(value) -> date | None:
    """The UTC day of an aggregate's datetime (None stays None)."""
    return None if value is None else _aware(value).date()


def prediction(slug: str, base_url: str, viewer, now: datetime, settings) -> dict:
    """A match's prediction page in full: the SEO page (title, description, canonical URL,
    SportsEvent), every market with its published probability named by whose it is (the
    market's, pooled or the goal model's) beside the market's fair one and the goal model's own
    (each once: not beside itself) and its pick under the premium rule, the sides' form and
    head-to-head, the league's other matches, and the largest suggested stake (``STAKE_CAP``)."""
    card = cards.by_slug(slug, viewer, ("predictions", "picks", "intelligence"), now, settings)
    home, away = card["home_team"]["name"], card["away_team"]["name"]
    predictions = {p["market"]: p for p in card["predictions"]}
    picks = {}
    for pick in sorted(card["picks"], key=lambda pick: PICK_RATINGS.index(pick["rating"])):
        picks.setdefault(pick["market"], pick)
    markets = [
        _market_view(market, predictions.get(market), picks.get(market), card, None)
        for market in FIXED_MARKETS
    ]
    for market in LINE_MARKETS:
        found = _shown_line(market, card["predictions"], picks.get(market))
        if found is not None:
            markets.append(_market_view(market, found, picks.get(market), card, found["line"]))
    intelligence = card.pop("intelligence")
    page = seo.of_card(card, base_url)
    sealed = sorted({m["pick"]["rating"] for m in markets if m["sealed"] and m["pick"]})
    return {
        **page,
        "locked": card["locked"],
        "sealed_markets": [m["name"] for m in markets if m["sealed"]],
        # What a sealed pick's rating has done so far: the live record of that rating.
        "rating_records": {rating: track_record.of_rating(rating) for rating in sealed},
        "markets": markets,
        "form": _form(intelligence, home, away),
        "head_to_head": _head_to_head(intelligence, card, home, away),
        "league_matches": _league_matches(card),
        "stake_cap": settings["STAKE_CAP"],  # what the page says a suggested stake is at most
    }


def _shown_line(market: str, predictions: list, pick: dict | None) -> dict | None:
    """The prediction of a market with lines a prediction page shows: at its pick's line, else
    at the line the market prices most evenly (the main line), else the first; None without."""
    found = [p for p in predictions if p["market"] == market]
    line = pick and pick.get("line")
    chosen = [p for p in found if line is not None and p["line"] == line]
    if chosen:
        return chosen[0]
    priced = [p for p in found if p["market_probabilities"]]
    if priced:
        first = MARKET_SELECTIONS[market][0]
        return min(priced, key=lambda p: abs(p["market_probabilities"][first] - 0.5))
    return found[0] if found else None


#: A prediction page's columns, in this order and these colours in every market: the market's
#: fair line, the goal model's own, and the two pooled (ours) where they are.
COLUMNS = (
    ("fair", FAIR_NAME, "#767676"),
    ("model", "Goal model", "#a3530f"),
    ("published", "Our forecast (pooled)", "#1f5fa8"),
)


def _columns(source: str | None, fair, model) -> list[dict]:
    """The columns of a market's table, in :data:`COLUMNS`' order, each shown once: the market's
    fair line and the goal model's where they have numbers, our pooled forecast only where it
    is neither of them (the published column is whichever the source says, marked)."""
    published = {"market": "fair", None: "published", "pool": "published"}.get(source, "model")
    shown = []
    for key, name, colour in COLUMNS:
        present = {"fair": fair is not None or source == "market", "model": model is not None}
        if key == "published" and published != "published":
            continue
        if key != "published" and not present[key] and published != key:
            continue
        if key == "published" and source is None:
            name = seo.FORECAST_NAMES[None]
        shown.append({"key": key, "name": name, "colour": colour, "published": key == published})
    return shown


def _market_view(market, found, pick, card, line) -> dict:
    """One market of a prediction page (at ``line`` for a market with lines): its columns
    (:func:`_columns`), its selections, what happened, whether a finished match pushed it
    (a handicap or goal line met exactly: stakes returned) and its pick."""
    home, away = card["home_team"]["name"], card["away_team"]["name"]
    source = found and found["source"]
    published = found["probabilities"] if found else None
    fair = found["market_probabilities"] if found else None
    model = found["model_probabilities"] if found else None
    if source == "market":
        fair = fair or published
    happened = _outcome(card, market, line)
    settled = card["status"] == "finished" and card["score"] is not None
    values = {"fair": fair, "model": model, "published": published}
    # Sealed where the lock seals this market (a locked pick's own, or both goal totals); a
    # pick locked only for being made with it keeps its market's public columns.
    sealed = market in card["sealed_markets"]
    columns = [  # a column sealed with a locked pick is left out, not drawn as dashes
        column
        for column in (_columns(source, fair, model) if found and not sealed else [])
        if values[column["key"]] is not None
    ]
    return {
        "market": market,
        "name": market_name(market, line),
        "predicted": bool(columns),
        "sealed": sealed,
        "columns": columns,
        "selections": [
            {
                "selection": selection,
                "name": selection_name(selection, home, away, market, line),
                "values": [(values[column["key"]] or {}).get(selection) for column in columns],
                "happened": selection == happened,
            }
            for selection in MARKET_SELECTIONS[market]
        ],
        "happened": happened and selection_name(happened, home, away, market, line),
        "push": settled and happened is None and market in LINE_MARKETS and line is not None,
        "pick": _named(pick, home, away),
        "source": source,
        "label": FAIR_NAME if source == "market" else seo.FORECAST_NAMES[source],
    }


def _form(intelligence, home: str, away: str) -> list[dict]:
    """Each side's recent results from the intelligence (empty before it is made)."""
    if intelligence is None:
        return []
    return [{"team": name, **intelligence[side]} for side, name in (("home", home), ("away", away))]


def _head_to_head(intelligence, card: dict, home: str, away: str) -> dict | None:
    """The earlier meetings with the teams named, and the tally (None without intelligence)."""
    if intelligence is None:
        return None
    names = {card["home_team"]["id"]: home, card["away_team"]["id"]: away}
    meetings = intelligence["head_to_head"]
    return {
        **{key: meetings[key] for key in ("home_wins", "draws", "away_wins")},
        "matches": [
            {
                "kickoff_at": meeting["kickoff_at"],
                "home": names.get(meeting["home_team_id"], "?"),
                "away": names.get(meeting["away_team_id"], "?"),
                "home_goals": meeting["home_goals"],
                "away_goals": meeting["away_goals"],
            }
            for meeting in meetings["matches"]
        ],
    }


def _league_matches(card: dict) -> list[dict]:
    """The league's other matches nearest in time to this one, in kick-off order."""
    league = card["league"]["id"]
    base = cards.matches().where((Match.league == league) & (Match.id != card["id"]))
    before = base.where(Match.kickoff_at <= card["kickoff_at"]).order_by(
        Match.kickoff_at.desc(), Match.id.desc()
    )
    after = base.where(Match.kickoff_at > card["kickoff_at"]).order_by(Match.kickoff_at, Match.id)
    half = LEAGUE_LINKS // 2
    rows = list(after.limit(half).dicts()) + list(before.limit(half).dicts())
    rows.sort(key=lambda row: (row["kickoff_at"], row["id"]))
    return [
        {
            "slug": row["slug"],
            "kickoff_at": row["kickoff_at"],
            "home": row["home_name"],
            "away": row["away_name"],
        }
        for row in rows
    ]


def track_record_page(settings, now: datetime) -> dict:
    """The track record as its page shows it: live and backfilled apart, each with its figures
    (and their standard errors), its units curve, its months up to ``now``'s (a month to come
    has pending picks at most: nothing to show), its fair closing EVs and its tables; the
    latest calibration run's reliability per market; the ledger's latest checkpoint."""
    report = track_record.report(settings=settings, now=now)
    for name, is_live in (("live", True), ("backfilled", False)):
        series = track_record.settled_series(is_live)
        report[name]["curve"] = _curve(series["profits"])
        report[name]["closing_ev_bins"] = _histogram(series["closing_evs"])
    return {
        **report,
        "calibration": latest_calibration(),
        "ledger": log_reading.head(settings),
    }


def _curve(profits: list[float]) -> list[tuple[int, float]]:
    """``(pick number, units after it)`` along the cumulative profit from ``(0, 0)`` (before
    the first pick), then at most :data:`CURVE_POINTS` points, evenly spread and ending on the
    last pick; empty without a settled pick."""
    total, running = 0.0, []
    for profit in profits:
        total += profit
        running.append(total)
    count = len(running)
    if not count:
        return []
    if count <= CURVE_POINTS:
        chosen = range(1, count + 1)
    else:
        chosen = sorted({round(count * (k + 1) / CURVE_POINTS) for k in range(CURVE_POINTS)})
    return [(0, 0.0)] + [(number, running[number - 1]) for number in chosen]


def _histogram(values: list[float]) -> list[dict]:
    """Counts of ``values`` in the bins of :data:`EV_BIN_WIDTH` over :data:`EV_RANGE`."""
    low, high = EV_RANGE
    count = round((high - low) / EV_BIN_WIDTH)
    counts = [0] * count
    for value in values:
        index = min(max(int((value - low) // EV_BIN_WIDTH), 0), count - 1)
        counts[index] += 1
    return [
        {"from": low + k * EV_BIN_WIDTH, "to": low + (k + 1) * EV_BIN_WIDTH, "count": n}
        for k, n in enumerate(counts)
    ]


def latest_calibration() -> dict | None:
    """The latest succeeded calibration run's result and when it finished (None before one)."""
    found = (
        Operation.select(Operation.result, Operation.finished_at)
        .where((Operation.kind == "calibration-run") & (Operation.status == "succeeded"))
        .order_by(Operation.finished_at.desc(), Operation.id.desc())
        .first()
    )
    if found is None:
        return None
    return {
        **RESULT_SCHEMAS["calibration-run"]().load(found.result),
        "finished_at": found.finished_at,
    }


def sitemap(now: datetime) -> dict:
    """The pages a search engine should know, with when each last changed: the landing page,
    the track record, the results of each day of the last :data:`SITEMAP_PAST_DAYS` with a
    finished match, and the prediction pages of the matches kicking off from
    :data:`SITEMAP_PAST_DAYS` days ago to :data:`SITEMAP_FUTURE_DAYS` days ahead."""
    since = now - timedelta(days=SITEMAP_PAST_DAYS)
    until = now + timedelta(days=SITEMAP_FUTURE_DAYS)
    window = (Match.kickoff_at >= since) & (Match.kickoff_at <= until)
    rows = list(
        Match.select(Match.id, Match.slug, Match.updated_at)
        .where(window)
        .order_by(Match.kickoff_at, Match.id)
        .limit(SITEMAP_LIMIT - 4 - SITEMAP_PAST_DAYS)
        .tuples()
    )
    days = {}
    played = Match.select(Match.kickoff_at, Match.updated_at).where(
        (Match.kickoff_at >= since) & (Match.kickoff_at <= now) & (Match.status == "finished")
    )
    for kickoff_at, updated_at in played.tuples():
        day = _aware(kickoff_at).date()
        days[day] = max(days.get(day, updated_at), updated_at)
    changes = {}
    for model, column in ((Prediction, Prediction.made_at), (Pick, Pick.settled_at)):
        query = (
            model.select(model.match, fn.MAX(column))
            .join(Match)
            .where(window & column.is_null(False))
            .group_by(model.match)
            .tuples()
        )
        for match_id, at in query:
            changes.setdefault(match_id, []).append(_aware(at))
    matches = [
        {"slug": slug, "lastmod": max([updated_at, *changes.get(match_id, [])])}
        for match_id, slug, updated_at in rows
    ]
    latest = max((row["lastmod"] for row in matches), default=None)
    settled_at = Pick.select(fn.MAX(Pick.settled_at)).scalar()
    signed = LedgerCheckpoint.select(fn.MAX(LedgerCheckpoint.published_at)).scalar()
    record = [_aware(value) for value in (settled_at, signed) if value is not None]
    return {
        "landing": latest,
        "track_record": max(record) if record else None,
        "results": max(days.values(), default=None),
        "result_days": [{"day": day, "lastmod": days[day]} for day in sorted(days)],
        "matches": matches,
    }


def _aware(value) -> datetime:
    """A datetime read from an aggregate (which Peewee leaves as the driver gives it) as an
    aware UTC datetime."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value if value.tzinfo else value.replace(tzinfo=UTC)
