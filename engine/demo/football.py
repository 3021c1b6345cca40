"""A deterministic synthetic football world: leagues, fixtures and results for demos, with the
odds its bookmakers (``engine.demo.bookmakers``) quote."""

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta

import numpy as np

from engine.demo.bookmakers import MatchTruth, compute_truths, quote_odds
from engine.model.scores import MAX_GOALS, score_matrix
from engine.records import LeagueRecord, MatchRecord, OddsRecord

#: The competitions of the world, by their stable codes.
LEAGUES: dict[str, LeagueRecord] = {
    league.code: league
    for league in (
        LeagueRecord("NL1", "Northland Premier Division", "Northland", "top-flight"),
        LeagueRecord("NL2", "Northland First Division", "Northland", "lower-league"),
        LeagueRecord("NLC", "Northland Cup", "Northland", "cup"),
        LeagueRecord("SL1", "Southland Primera", "Southland", "top-flight"),
        LeagueRecord("SLC", "Copa Southland", "Southland", "cup"),
        LeagueRecord("INT", "Continental Nations League", "International", "international"),
    )
}

#: Northland's clubs: the first TOP_FLIGHT_CLUBS start in NL1, the rest in NL2. Invented names.
NORTHLAND_CLUBS = (
    "Aldermoor Athletic",
    "Brackenholt United",
    "Caskbridge Rovers",
    "Dunmere City",
    "Eastwold Town",
    "Fernwick Albion",
    "Gallowmere",
    "Harrowdene United",
    "Ironbeck Athletic",
    "Juniper Vale",
    "Kestrelby Town",
    "Lowmarsh Rangers",
    "Millhaven City",
    "Northcairn United",
    "Oakenspire Wanderers",
    "Pellmoor Rovers",
    "Quarrymouth Athletic",
    "Ravenholme City",
    "Saltmere Town",
    "Thistlecombe United",
    "Umberwick Albion",
    "Valecross Rangers",
    "Wetherfold Town",
    "Yarrowmere United",
    "Ambervale Athletic",
    "Blackfen Rovers",
    "Copperhill Town",
    "Deepwell City",
    "Elmbrook Wanderers",
    "Foxhollow United",
    "Greymantle Athletic",
    "Highmarsh Town",
    "Kingsweir City",
    "Longbarrow Rovers",
    "Moorhaven United",
    "Nettlefield Town",
    "Orchardgate Albion",
    "Stormhaven Athletic",
)

#: Southland's top flight. All names are invented.
SOUTHLAND_CLUBS = (
    "Atletico Miramonte",
    "Deportivo Solterra",
    "Sporting Vallebruna",
    "Union Puertoalto",
    "Real Cantamar",
    "Racing Lunaverde",
    "CF Torrenegra",
    "Olimpico Sierrazul",
    "Academia Rocaclara",
    "Estrella Bahiafria",
    "Club Marisquero",
    "Ciudad Pinaroja",
    "Juventud Altomar",
    "Atlas Campoluz",
    "Fortaleza Arenadorada",
    "Nacional Riocristal",
)

#: The national teams of the international competition. All invented countries.
NATIONS = (
    "Aldoria",
    "Brevania",
    "Corvinia",
    "Drakmark",
    "Estovia",
    "Fenwald",
    "Halvonia",
    "Istrovar",
)

#: Kick-off slots as (days after the week's Monday, hour, minute UTC, relative weight).
NORTHLAND_WEEKEND = ((4, 19, 45, 1), (5, 11, 30, 1), (5, 14, 0, 5), (5, 16, 30, 1), (6, 13, 0, 1))
NORTHLAND_WEEKEND += ((6, 15, 30, 1), (7, 19, 0, 1))
SOUTHLAND_WEEKEND = ((4, 19, 0, 1), (5, 13, 0, 1), (5, 15, 15, 1), (5, 17, 30, 1), (5, 20, 0, 1))
SOUTHLAND_WEEKEND += ((6, 11, 0, 1), (6, 13, 15, 1), (6, 15, 30, 1), (6, 18, 0, 1), (7, 19, 0, 1))
MIDWEEK = ((1, 18, 45, 2), (1, 19, 0, 1), (2, 18, 45, 1), (2, 19, 45, 2))
INTERNATIONAL = {3: ((3, 16, 0, 1), (3, 18, 45, 2)), 6: ((6, 13, 0, 1), (6, 16, 0, 1))}
#: Copa Southland's rounds, Tuesday to Thursday (Thursday only in a league's midweek week):
#: with the leagues' Friday-to-Monday weekends every day of the week has football (each round
#: puts a match on each of its days).
SOUTHLAND_CUP = ((1, 19, 30, 1), (2, 19, 30, 1), (3, 19, 30, 1))
#: Copa Southland: the Southland clubs' single round robin, one round a week from the second.
SOUTHLAND_CUP_FIRST_WEEK = 1

#: Clubs in Northland's top flight; the rest of NORTHLAND_CLUBS play in NL2.
TOP_FLIGHT_CLUBS = 18
#: Weeks of the season with a cup round (Tuesday/Wednesday), from the first round to the final:
#: never a week with a midweek league round (week % 4 == 2), so no club plays twice a day.
CUP_WEEKS = (1, 7, 13, 19, 25)
#: Clubs in the cup's first round: one round per cup week down to the final.
CUP_ENTRANTS = 2 ** len(CUP_WEEKS)
#: Weeks of the season with an international window (a Thursday round and a Sunday round).
INTERNATIONAL_WEEKS = (3, 9, 15, 21, 27, 33, 39)
#: How long after kick-off a match is finished (its result and closing prices known).
PLAYED_AFTER = timedelta(hours=2)


@dataclass(frozen=True)
class DemoSettings:
    """The knobs of the world; the defaults give realistic football and bookmaker numbers."""

    #: Past (complete) seasons before the current one.
    past_seasons: int = 3
    #: The current season's first week starts about this many days before ``today``…
    days_before: int = 28
    #: …and its fixtures run to this many days after it.
    days_after: int = 7
    #: Mean goals of an average side away from home, per country (log-linear model's base).
    base_rate: tuple[tuple[str, float], ...] = (
        ("Northland", 1.3),
        ("Southland", 1.22),
        ("International", 1.2),
    )
    #: Home advantage on the log scale of the goal rate.
    home_advantage: float = 0.24
    #: The Dixon-Coles low-score correction of the true process.
    rho: float = -0.08
    #: Spread of attack and defence ratings at the start (clubs / national teams).
    club_spread: float = 0.2
    nation_spread: float = 0.28
    #: How much weaker NL2 clubs are, on both attack and defence, than NL1 clubs on average.
    lower_league_gap: float = 0.3
    #: Ratings revert this much towards their division's mean between seasons…
    season_reversion: float = 0.9
    #: …and drift by this much (standard deviation).
    season_drift: float = 0.08
    #: Clubs promoted from NL2 / relegated from NL1 each season.
    promoted: int = 3
    #: Share of a side's goals scored in the first half (binomial thinning).
    half_time_share: float = 0.45
    #: Bookmakers as (slug, margin, own pre-match noise on the log-probability scale). One
    #: book is slow to move its prices (its noise twice the others'): the value the picks find
    #: is mostly its, so upcoming picks of every rating are there on any day (a week's fixtures
    #: give about eight ``A`` picks under the default rating thresholds).
    bookmakers: tuple[tuple[str, float, float], ...] = (
        ("pinnacle", 0.025, 0.012),
        ("bet365", 0.05, 0.035),
        ("william-hill", 0.065, 0.04),
        ("bwin", 0.06, 0.035),
        ("unibet", 0.045, 0.08),
    )
    #: The market's shared pre-match error on the log-probability scale.
    market_noise: float = 0.03
    #: Share of the pre-match error still in the closing price (closing-line movement)…
    closing_carry: float = 0.4
    #: …plus a fresh shared error of this size, and each book's own noise shrunk by this factor.
    closing_noise: float = 0.015
    closing_book_factor: float = 0.3
    #: Lowest price a book offers.
    min_price: float = 1.02


@dataclass
class DemoWorld:
    """The generated world: competitions, matches (oldest first) and the truth of each match."""

    leagues: list[LeagueRecord]
    matches: list[MatchRecord]
    truth: list[MatchTruth] = field(default_factory=list)  # aligned with matches
    now: datetime | None = None  # the instant of the world: what kicked off before it is played


@dataclass
class _Fixture:
    """A match while the world is being built."""

    code: str
    season: str
    kickoff: datetime
    home: str
    away: str
    home_rate: float = 0.0
    away_rate: float = 0.0
    home_goals: int = 0
    away_goals: int = 0
    ht_home: int = 0
    ht_away: int = 0


def generate(
    now: datetime | date, seed: int = 7, settings: DemoSettings | None = None
) -> DemoWorld:
    """The world as of the instant ``now``: the same ``now`` and ``seed`` give it exactly.

    Northland (NL1 18 clubs, NL2 20 clubs with 3 up / 3 down by the table, a 32-club knockout
    cup NLC), Southland (SL1, 16 clubs, and their midweek single round robin SLC) and an
    8-nation double round robin (INT). There are ``past_seasons`` complete seasons and the
    current one, whose fixtures run from about four weeks before ``now``'s day to a week after
    it, with matches on every one of those days. Results follow a Dixon-Coles process with
    drifting attack/defence ratings; a match is finished ``PLAYED_AFTER`` its kick-off, live
    from its kick-off until then, scheduled before, and one past league match of the current
    season is postponed and one cancelled (both more than 48 hours before ``now``, without
    scores or closing odds). Every match has pre-match 1x2, ou25 and btts odds from each
    bookmaker, and Asian handicap and over/under odds at its most balanced line; matches that
    kicked off also have closing odds, nearer the truth than the pre-match ones. ``now`` may
    also be a date (its midnight UTC); a naive datetime is UTC. The calendar and every result
    depend on ``now``'s UTC day only; which matches are finished, on the instant. ``settings``
    (default ``DemoSettings()``) holds every other knob.
    """
    settings = settings or DemoSettings()
    if isinstance(now, datetime):
        now = now.astimezone(UTC) if now.tzinfo else now.replace(tzinfo=UTC)
    else:
        now = datetime.combine(now, time(0), UTC)
    today = now.date()
    streams = np.random.SeedSequence(seed).spawn(2)
    results_rng = np.random.Generator(np.random.PCG64(streams[0]))
    odds_rng = np.random.Generator(np.random.PCG64(streams[1]))
    first_monday = today - timedelta(days=settings.days_before)
    first_monday -= timedelta(days=first_monday.weekday())
    cutoff = today + timedelta(days=settings.days_after)
    base = dict(settings.base_rate)

    ratings = _initial_ratings(results_rng, settings)
    northland = {
        "NL1": list(NORTHLAND_CLUBS[:TOP_FLIGHT_CLUBS]),
        "NL2": list(NORTHLAND_CLUBS[TOP_FLIGHT_CLUBS:]),
    }
    fixtures: list[_Fixture] = []
    starts = _season_starts(first_monday, settings.past_seasons)
    for index, start in enumerate(starts):
        current = index == len(starts) - 1
        label = f"{start.year}-{(start.year + 1) % 100:02d}"
        last_day = cutoff if current else None
        season: list[_Fixture] = []
        divisions = (
            ("NL1", northland["NL1"], NORTHLAND_WEEKEND),
            ("NL2", northland["NL2"], NORTHLAND_WEEKEND),
            ("SL1", list(SOUTHLAND_CLUBS), SOUTHLAND_WEEKEND),
        )
        for code, teams, weekend in divisions:
            rounds = _double_round_robin(_shuffled(results_rng, teams))
            for slot, pairs in zip(_league_slots(start, weekend), rounds, strict=False):
                season += _place(results_rng, code, label, slot, pairs, last_day)
        rounds = _double_round_robin(_shuffled(results_rng, NATIONS))
        for slot, pairs in zip(_international_slots(start), rounds, strict=False):
            season += _place(results_rng, "INT", label, slot, pairs, last_day)
        rounds = _double_round_robin(_shuffled(results_rng, SOUTHLAND_CLUBS))
        single = rounds[: len(SOUTHLAND_CLUBS) - 1]
        for slot, pairs in zip(_cup_slots(start), single, strict=False):
            season += _place(results_rng, "SLC", label, slot, pairs, last_day)
        _play(results_rng, season, ratings, base, settings)
        season += _cup(results_rng, label, start, northland, ratings, base, settings, last_day, now)
        fixtures += season
        if not current:
            northland = _promote(season, northland, settings.promoted)
            ratings = _drift(results_rng, ratings, northland, settings)

    fixtures.sort(key=lambda f: (f.kickoff, f.code, f.home))
    statuses = _statuses(results_rng, fixtures, now, starts[-1])
    truths = compute_truths(fixtures, settings.rho)
    closed = [status in ("finished", "live") for status in statuses]
    odds = quote_odds(odds_rng, truths, closed, settings)
    matches = [
        _record(fixture, status, quotes)
        for fixture, status, quotes in zip(fixtures, statuses, odds, strict=True)
    ]
    return DemoWorld(leagues=list(LEAGUES.values()), matches=matches, truth=truths, now=now)


def _season_starts(first_monday: date, past_seasons: int) -> list[date]:
    """The Monday each season starts, oldest first: one calendar year apart, each in its own year.

    Past seasons start on the Monday of the same week of the year, moved a week later if that
    Monday falls in the previous year, so labels (by start year) never collide.
    """
    starts = []
    for back in range(past_seasons, 0, -1):
        year = first_monday.year - back
        try:
            anchor = first_monday.replace(year=year)
        except ValueError:  # 29 February
            anchor = first_monday.replace(year=year, day=28)
        monday = anchor - timedelta(days=anchor.weekday())
        if monday.year < year:
            monday += timedelta(days=7)
        starts.append(monday)
    return [*starts, first_monday]


def _initial_ratings(rng, settings: DemoSettings) -> dict[str, np.ndarray]:
    """Attack and defence (log scale, higher defence concedes less) of every team."""
    ratings = {}
    for position, club in enumerate(NORTHLAND_CLUBS):
        offset = 0.0 if position < TOP_FLIGHT_CLUBS else -settings.lower_league_gap
        ratings[club] = offset + rng.normal(0.0, settings.club_spread, 2)
    for club in SOUTHLAND_CLUBS:
        ratings[club] = rng.normal(0.0, settings.club_spread, 2)
    for nation in NATIONS:
        ratings[nation] = rng.normal(0.0, settings.nation_spread, 2)
    return ratings


def _shuffled(rng, teams) -> list[str]:
    """The teams in a random order, so each season's fixture list differs."""
    return [teams[i] for i in rng.permutation(len(teams))]


def _double_round_robin(teams: list[str]) -> list[list[tuple[str, str]]]:
    """Rounds of (home, away) in which every pair meets twice, once at each ground."""
    size = len(teams)
    order = list(teams)
    first_half = []
    for number in range(size - 1):
        pairs = []
        for i in range(size // 2):
            home, away = order[i], order[size - 1 - i]
            # Alternate grounds so no club is at home (or away) all the time.
            if (i == 0 and number % 2) or (i > 0 and i % 2):
                home, away = away, home
            pairs.append((home, away))
        first_half.append(pairs)
        order = [order[0], order[-1], *order[1:-1]]
    return first_half + [[(away, home) for home, away in pairs] for pairs in first_half]


def _league_slots(start: date, weekend):
    """Round dates of a league: every weekend, plus a midweek round every fourth week."""
    week = 0
    while True:
        monday = start + timedelta(weeks=week)
        # A midweek round comes before that week's weekend round; see CUP_WEEKS.
        if week % 4 == 2:
            yield monday, MIDWEEK
        yield monday, weekend
        week += 1


def _international_slots(start: date):
    """Round dates of the nations' competition: two rounds per international window."""
    for week in INTERNATIONAL_WEEKS:
        monday = start + timedelta(weeks=week)
        for day in sorted(INTERNATIONAL):
            yield monday, INTERNATIONAL[day]


def _cup_slots(start: date):
    """Round dates of Copa Southland: Tuesday to Thursday of every week from its first, but
    only Thursday in the weeks the leagues play a midweek round (see ``_league_slots``)."""
    week = SOUTHLAND_CUP_FIRST_WEEK
    while True:
        times = SOUTHLAND_CUP if week % 4 != 2 else SOUTHLAND_CUP[-1:]
        yield start + timedelta(weeks=week), times
        week += 1


def _place(rng, code, season, slot, pairs, last_day) -> list[_Fixture]:
    """Fixtures of one round at kick-offs drawn from the slot; those after last_day dropped.

    When the round has at least as many matches as the slot has days, each day gets one (the
    first pairs, themselves in a random order, go one to each day), so no day of a round is
    without football.
    """
    monday, times = slot
    weights = np.array([weight for *_, weight in times], dtype=float)
    picks = rng.choice(len(times), size=len(pairs), p=weights / weights.sum())
    days = sorted({days for days, *_ in times})
    if len(pairs) >= len(days):
        for index, day in enumerate(days):
            if picks[index] in [i for i, (d, *_) in enumerate(times) if d == day]:
                continue
            options = [i for i, (d, *_) in enumerate(times) if d == day]
            chances = weights[options] / weights[options].sum()
            picks[index] = options[int(rng.choice(len(options), p=chances))]
    fixtures = []
    for (home, away), pick in zip(pairs, picks.tolist(), strict=True):
        days, hour, minute, _ = times[pick]
        day = monday + timedelta(days=days)
        if last_day is not None and day > last_day:
            continue
        kickoff = datetime.combine(day, time(hour, minute), UTC)
        fixtures.append(_Fixture(code, season, kickoff, home, away))
    return fixtures


def _play(rng, fixtures: list[_Fixture], ratings, base, settings: DemoSettings) -> None:
    """Give fixtures their true goal rates and sampled full- and half-time scores."""
    if not fixtures:
        return
    home = np.array([ratings[f.home] for f in fixtures])
    away = np.array([ratings[f.away] for f in fixtures])
    level = np.log([base[LEAGUES[f.code].country] for f in fixtures])
    home_rate = np.exp(level + settings.home_advantage + home[:, 0] - away[:, 1])
    away_rate = np.exp(level + away[:, 0] - home[:, 1])
    matrix = score_matrix(home_rate, away_rate, settings.rho).reshape(len(fixtures), -1)
    cells = (matrix.cumsum(axis=1) < rng.random(len(fixtures))[:, None]).sum(axis=1)
    cells = np.minimum(cells, matrix.shape[1] - 1)
    home_goals, away_goals = np.divmod(cells, MAX_GOALS + 1)
    ht_home = rng.binomial(home_goals, settings.half_time_share)
    ht_away = rng.binomial(away_goals, settings.half_time_share)
    columns = zip(
        fixtures,
        home_rate.tolist(),
        away_rate.tolist(),
        home_goals.tolist(),
        away_goals.tolist(),
        ht_home.tolist(),
        ht_away.tolist(),
        strict=True,
    )
    for fixture, *values in columns:
        (
            fixture.home_rate,
            fixture.away_rate,
            fixture.home_goals,
            fixture.away_goals,
            fixture.ht_home,
            fixture.ht_away,
        ) = values


def _cup(rng, season, start, northland, ratings, base, settings, last_day, now) -> list[_Fixture]:
    """The knockout cup: all NL1 clubs and 14 drawn NL2 clubs, single ties, 31 matches.

    A drawn tie is decided by a shoot-out (a coin toss) that the recorded score does not show.
    Rounds stop at ``last_day``, and after a round not yet fully played by ``now``.
    """
    extra = CUP_ENTRANTS - len(northland["NL1"])
    lower = northland["NL2"]
    drawn = sorted(rng.choice(len(lower), extra, replace=False).tolist())
    remaining = _shuffled(rng, northland["NL1"] + [lower[i] for i in drawn])
    fixtures: list[_Fixture] = []
    for week in CUP_WEEKS:
        pairs = list(zip(remaining[::2], remaining[1::2], strict=True))
        slot = (start + timedelta(weeks=week), MIDWEEK)
        ties = _place(rng, "NLC", season, slot, pairs, last_day)
        if len(ties) < len(pairs):
            break
        _play(rng, ties, ratings, base, settings)
        fixtures += ties
        if any(tie.kickoff >= now for tie in ties):
            break
        shoot_out = (rng.random(len(ties)) < 0.5).tolist()
        winners = []
        for tie, home_wins_shoot_out in zip(ties, shoot_out, strict=True):
            if tie.home_goals == tie.away_goals:
                winners.append(tie.home if home_wins_shoot_out else tie.away)
            else:
                winners.append(tie.home if tie.home_goals > tie.away_goals else tie.away)
        remaining = _shuffled(rng, winners)
    return fixtures


def _table(fixtures: list[_Fixture], code: str) -> list[str]:
    """A league's final order: points, goal difference, goals scored, then name."""
    rows: dict[str, list[int]] = {}
    for f in fixtures:
        if f.code != code:
            continue
        home = rows.setdefault(f.home, [0, 0, 0])
        away = rows.setdefault(f.away, [0, 0, 0])
        home_points, away_points = (
            (3, 0)
            if f.home_goals > f.away_goals
            else ((1, 1) if f.home_goals == f.away_goals else (0, 3))
        )
        home[0] += home_points
        away[0] += away_points
        home[1] += f.home_goals - f.away_goals
        away[1] += f.away_goals - f.home_goals
        home[2] += f.home_goals
        away[2] += f.away_goals
    return sorted(rows, key=lambda team: (-rows[team][0], -rows[team][1], -rows[team][2], team))


def _promote(fixtures, northland, promoted: int) -> dict[str, list[str]]:
    """Next season's divisions: NL1's bottom ``promoted`` swap with NL2's top ``promoted``."""
    top, lower = _table(fixtures, "NL1"), _table(fixtures, "NL2")
    return {
        "NL1": sorted(top[:-promoted] + lower[:promoted]),
        "NL2": sorted(lower[promoted:] + top[-promoted:]),
    }


def _drift(rng, ratings, northland, settings: DemoSettings) -> dict[str, np.ndarray]:
    """Ratings one season on: pulled towards their division's mean, plus a random drift."""
    means = dict.fromkeys(northland["NL2"], -settings.lower_league_gap)
    drifted = {}
    for team, rating in ratings.items():
        mean = means.get(team, 0.0)
        noise = rng.normal(0.0, settings.season_drift, 2)
        drifted[team] = mean + settings.season_reversion * (rating - mean) + noise
    return drifted


def _statuses(rng, fixtures: list[_Fixture], now: datetime, current_start: date) -> list[str]:
    """Finished from PLAYED_AFTER after kick-off, live until then, scheduled before; one recent
    league match postponed, one cancelled.

    Both are drawn from the current season's NL1 and SL1 matches 3 to 21 days before ``now``,
    so they are void cases well past the usual 48-hour grace of settlement.
    """
    statuses = [
        "finished"
        if f.kickoff + PLAYED_AFTER <= now
        else ("live" if f.kickoff <= now else "scheduled")
        for f in fixtures
    ]
    start = datetime.combine(current_start, time(0), UTC)
    window = (max(start, now - timedelta(days=21)), now - timedelta(days=3))
    candidates = [
        i
        for i, f in enumerate(fixtures)
        if f.code in ("NL1", "SL1") and window[0] <= f.kickoff <= window[1]
    ]
    if len(candidates) >= 2:
        postponed, cancelled = rng.choice(candidates, 2, replace=False).tolist()
        statuses[postponed] = "postponed"
        statuses[cancelled] = "cancelled"
    return statuses


def _record(fixture: _Fixture, status: str, odds: list[OddsRecord]) -> MatchRecord:
    """The MatchRecord of a fixture with its status (scores only when finished)."""
    played = status == "finished"
    return MatchRecord(
        league=LEAGUES[fixture.code],
        season=fixture.season,
        kickoff_at=fixture.kickoff,
        home_team=fixture.home,
        away_team=fixture.away,
        status=status,
        home_goals=fixture.home_goals if played else None,
        away_goals=fixture.away_goals if played else None,
        ht_home_goals=fixture.ht_home if played else None,
        ht_away_goals=fixture.ht_away if played else None,
        odds=odds,
    )
