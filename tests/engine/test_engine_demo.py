"""Tests of the synthetic demo world: determinism, calendar, statuses, results and odds."""

import itertools
import math
import re
from collections import Counter, defaultdict
from datetime import UTC, date, datetime, timedelta

import numpy as np
import pytest

from engine.demo import football
from engine.markets import MARKETS
from engine.records import SHARP_BOOKMAKER
from enums import MARKET_SELECTIONS

pytestmark = pytest.mark.slow  # each test generates demo worlds

TODAY = date(2026, 11, 21)
SOFT_BOOKS = ("bet365", "william-hill", "bwin", "unibet")


@pytest.fixture(scope="module")
def world():
    """The default world as of TODAY."""
    return football.generate(TODAY)


def _by_season(world):
    """Matches grouped by season label, oldest season first."""
    seasons = defaultdict(list)
    for match in world.matches:
        seasons[match.season].append(match)
    return dict(sorted(seasons.items()))


def _sets(match):
    """{(bookmaker, market, is_closing): {selection: price}} of one match."""
    sets = defaultdict(dict)
    for odd in match.odds:
        sets[(odd.bookmaker, odd.market, odd.is_closing)][odd.selection] = odd.price
    return sets


def _table(matches, code):
    """A league's order by points, goal difference, goals scored."""
    rows = defaultdict(lambda: [0, 0, 0])
    for m in matches:
        if m.league.code != code:
            continue
        for team, scored, conceded in (
            (m.home_team, m.home_goals, m.away_goals),
            (m.away_team, m.away_goals, m.home_goals),
        ):
            rows[team][0] += 3 if scored > conceded else (1 if scored == conceded else 0)
            rows[team][1] += scored - conceded
            rows[team][2] += scored
    return sorted(rows, key=lambda team: [-value for value in rows[team]])


def test_same_inputs_same_world_and_a_new_seed_changes_it(world):
    assert football.generate(TODAY) == world
    other = football.generate(TODAY, seed=8)
    assert [m.home_goals for m in other.matches] != [m.home_goals for m in world.matches]
    assert other.matches[0].odds != world.matches[0].odds


def test_every_competition_type_and_stable_codes(world):
    codes = {league.code: league for league in world.leagues}
    assert set(codes) == {"NL1", "NL2", "NLC", "SL1", "SLC", "INT"}
    assert {league.competition_type for league in world.leagues} == {
        "top-flight",
        "lower-league",
        "cup",
        "international",
    }
    assert codes["INT"].competition_type == "international"
    assert codes["NL2"].country == codes["NLC"].country == "Northland"
    assert codes["SLC"].country == codes["SL1"].country == "Southland"
    for season, matches in _by_season(world).items():
        assert {m.league.code for m in matches} == set(codes), season
    # Team names are unique across the world, so (name, country) never clashes.
    assert len(set(football.NORTHLAND_CLUBS + football.SOUTHLAND_CLUBS + football.NATIONS)) == 62


def test_seasons_sizes_and_calendar(world):
    seasons = _by_season(world)
    labels = list(seasons)
    assert len(labels) == 4
    for label, matches in seasons.items():
        start = min(m.kickoff_at for m in matches)
        assert re.fullmatch(r"\d{4}-\d{2}", label)
        assert label == f"{start.year}-{(start.year + 1) % 100:02d}"
        assert all(m.kickoff_at.tzinfo is UTC for m in matches)
    for label in labels[:-1]:
        sizes = Counter(m.league.code for m in seasons[label])
        assert sizes == {"NL1": 306, "NL2": 380, "SL1": 240, "SLC": 120, "INT": 56, "NLC": 31}
    # Past seasons end before the next one starts.
    for earlier, later in itertools.pairwise(labels):
        assert max(m.kickoff_at for m in seasons[earlier]) < min(
            m.kickoff_at for m in seasons[later]
        )
    assert 3_000 <= len(world.matches) <= 4_500


def test_the_current_season_runs_from_four_weeks_ago_to_a_week_ahead(world):
    current = list(_by_season(world).values())[-1]
    first = min(m.kickoff_at for m in current).date()
    last = max(m.kickoff_at for m in current).date()
    assert TODAY - timedelta(days=35) <= first <= TODAY - timedelta(days=21)
    assert TODAY + timedelta(days=5) <= last <= TODAY + timedelta(days=7)
    assert world.now == datetime(2026, 11, 21, tzinfo=UTC)


@pytest.mark.parametrize(
    "today",
    [date(2026, 1, 3), date(2025, 12, 31), date(2024, 7, 1), date(2016, 3, 28)],
)
def test_any_today_gives_four_distinct_ordered_seasons(today):
    world = football.generate(today)
    seasons = _by_season(world)
    assert len(seasons) == 4
    starts = [min(m.kickoff_at for m in matches) for matches in seasons.values()]
    assert starts == sorted(starts)
    current = list(seasons.values())[-1]
    assert max(m.kickoff_at for m in current).date() <= today + timedelta(days=7)


@pytest.mark.parametrize(
    "today",
    [TODAY + timedelta(days=n) for n in range(0, 28, 3)] + [date(2025, 12, 31), date(2024, 7, 1)],
)
def test_every_day_from_today_to_a_week_ahead_has_matches(today):
    days = Counter(m.kickoff_at.date() for m in football.generate(today).matches)
    for ahead in range(8):
        assert days[today + timedelta(days=ahead)] > 0, today + timedelta(days=ahead)


def test_copa_southland_is_a_single_round_robin_midweek(world):
    for matches in list(_by_season(world).values())[:-1]:
        ties = [m for m in matches if m.league.code == "SLC"]
        pairs = Counter(frozenset((m.home_team, m.away_team)) for m in ties)
        assert len(pairs) == 16 * 15 // 2 and set(pairs.values()) == {1}
        assert {m.kickoff_at.weekday() for m in ties} == {1, 2, 3}  # Tuesday to Thursday


def test_the_instant_decides_what_is_played():
    now = datetime(2026, 11, 21, 15, 0, tzinfo=UTC)
    world = football.generate(now)
    assert world.now == now
    midnight = football.generate(TODAY)
    # Same calendar and results: only the statuses (and closing prices) of the day move.
    assert [m.kickoff_at for m in world.matches] == [m.kickoff_at for m in midnight.matches]
    for m in world.matches:
        if m.kickoff_at + football.PLAYED_AFTER <= now:
            assert m.status in ("finished", "postponed", "cancelled")
        elif m.kickoff_at <= now:
            assert m.status == "live" and m.home_goals is None
            assert any(odd.is_closing for odd in m.odds)
        else:
            assert m.status == "scheduled"
    assert Counter(m.status for m in world.matches)["live"] > 0
    assert football.generate(now) == world


def test_statuses_scores_and_void_cases(world):
    now = world.now
    counts = Counter(m.status for m in world.matches)
    assert counts["postponed"] == counts["cancelled"] == 1
    assert counts["scheduled"] > 0 and counts["live"] == 0
    current_season = world.matches[-1].season
    for m in world.matches:
        if m.status == "finished":
            assert m.kickoff_at < now
            assert 0 <= m.ht_home_goals <= m.home_goals
            assert 0 <= m.ht_away_goals <= m.away_goals
        else:
            assert (m.home_goals, m.away_goals, m.ht_home_goals, m.ht_away_goals) == (None,) * 4
            assert not any(odd.is_closing for odd in m.odds)
        if m.status == "scheduled":
            assert m.kickoff_at >= now
        if m.status in ("postponed", "cancelled"):
            assert m.season == current_season
            assert m.kickoff_at < now - timedelta(hours=48)
            assert m.league.competition_type != "cup"


def test_no_team_plays_twice_on_one_day(world):
    days = Counter()
    for m in world.matches:
        days[(m.home_team, m.kickoff_at.date())] += 1
        days[(m.away_team, m.kickoff_at.date())] += 1
        assert m.home_team != m.away_team
    assert max(days.values()) == 1


def test_leagues_are_double_round_robins(world):
    for matches in list(_by_season(world).values())[:-1]:
        for code, teams in (("NL1", 18), ("NL2", 20), ("SL1", 16), ("INT", 8)):
            pairs = Counter((m.home_team, m.away_team) for m in matches if m.league.code == code)
            assert len(pairs) == teams * (teams - 1) and set(pairs.values()) == {1}


def test_promotion_and_relegation_follow_the_table(world):
    seasons = list(_by_season(world).values())
    for previous, following in itertools.pairwise(seasons):
        top = _table(previous, "NL1")
        lower = _table(previous, "NL2")
        next_top = {m.home_team for m in following if m.league.code == "NL1"}
        next_lower = {m.home_team for m in following if m.league.code == "NL2"}
        if len(next_top) < 18:  # the current season may not have seen everyone at home yet
            next_top |= {m.away_team for m in following if m.league.code == "NL1"}
            next_lower |= {m.away_team for m in following if m.league.code == "NL2"}
        assert next_top == set(top[:-3]) | set(lower[:3])
        assert set(top[-3:]) <= next_lower


def test_the_cup_is_a_32_club_knockout(world):
    for matches in list(_by_season(world).values())[:-1]:
        ties = sorted((m for m in matches if m.league.code == "NLC"), key=lambda m: m.kickoff_at)
        top = {m.home_team for m in matches if m.league.code == "NL1"}
        lower = {m.home_team for m in matches if m.league.code == "NL2"}
        first_round = ties[:16]
        entrants = [team for m in first_round for team in (m.home_team, m.away_team)]
        assert len(set(entrants)) == 32 and top <= set(entrants)
        assert len(set(entrants) & lower) == 14
        alive = set(entrants)
        for size in (16, 8, 4, 2, 1):
            this_round, ties = ties[:size], ties[size:]
            teams = {team for m in this_round for team in (m.home_team, m.away_team)}
            assert teams <= alive and len(teams) == 2 * size
            alive = set()
            for m in this_round:
                if m.home_goals != m.away_goals:
                    alive.add(m.home_team if m.home_goals > m.away_goals else m.away_team)
                else:
                    alive |= {m.home_team, m.away_team}
        assert ties == []


def test_results_look_like_football(world):
    finished = [m for m in world.matches if m.status == "finished"]
    goals = np.array([(m.home_goals, m.away_goals) for m in finished])
    halves = np.array([(m.ht_home_goals, m.ht_away_goals) for m in finished])
    assert 2.4 <= goals.sum(axis=1).mean() <= 3.2
    assert 0.40 <= (goals[:, 0] > goals[:, 1]).mean() <= 0.50
    assert 0.20 <= (goals[:, 0] == goals[:, 1]).mean() <= 0.32
    assert 0.38 <= halves.sum() / goals.sum() <= 0.52


def test_the_truth_is_aligned_and_consistent(world):
    assert len(world.truth) == len(world.matches)
    for truth in world.truth[::50]:
        assert truth.home_rate > 0 and truth.away_rate > 0
        for market, selections in MARKETS.items():
            assert len(truth.probabilities[market]) == len(selections)
            assert math.isclose(sum(truth.probabilities[market]), 1.0)


def test_odds_are_complete_sane_and_close_nearer_the_truth(world):
    books = {slug for slug, _, _ in football.DemoSettings().bookmakers}
    assert SHARP_BOOKMAKER in books and len(books - {SHARP_BOOKMAKER}) >= 3
    errors = {False: [], True: []}
    beaten = selections = 0
    for m, truth in zip(world.matches, world.truth, strict=True):
        sets = _sets(m)
        closing = m.status == "finished"
        expected = {
            (b, market, c) for b in books for market in MARKET_SELECTIONS for c in {False, closing}
        }
        assert set(sets) == expected
        for (bookmaker, market, _), prices in sets.items():
            assert set(prices) == set(MARKET_SELECTIONS[market])
            assert all(price > 1.01 and round(price, 2) == price for price in prices.values())
            margin = sum(1 / price for price in prices.values())
            assert 1.02 <= margin <= 1.08, (bookmaker, market, prices)
        for market, names in MARKETS.items():
            true = np.array(truth.probabilities[market])
            for is_closing in {False, closing}:
                implied = np.array(
                    [1 / sets[(SHARP_BOOKMAKER, market, is_closing)][s] for s in names]
                )
                implied /= implied.sum()
                errors[is_closing].append(np.abs(np.log(implied / true)).mean())
            for index, name in enumerate(names):
                best = max(sets[(b, market, False)][name] for b in SOFT_BOOKS)
                beaten += best * true[index] > 1.0
                selections += 1
    assert np.mean(errors[True]) < 0.8 * np.mean(errors[False])
    # Soft books sometimes beat the fair price: value exists, but it is not everywhere.
    assert 0.03 <= beaten / selections <= 0.35


def test_the_line_moves_between_pre_match_and_close(world):
    moves = []
    for m in world.matches:
        if m.status != "finished":
            continue
        sets = _sets(m)
        moves.append(
            sets[(SHARP_BOOKMAKER, "1x2", True)]["home"]
            != sets[(SHARP_BOOKMAKER, "1x2", False)]["home"]
        )
    assert np.mean(moves) > 0.5
