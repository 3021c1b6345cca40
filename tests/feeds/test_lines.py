"""Markets with lines, stored and served: quotes at each Asian handicap and over/under line found
again on re-import, the prices seen and the service's own closing line per line, the price cubes
of the line markets, ``line`` in every answer and export with a filter on it, the lock, and the
migration that gave every row stored before its line."""

import json
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from peewee import IntegrityError

from engine.records import LeagueRecord, MatchRecord, OddsRecord
from models import Match, OddsQuote, OddsSummary, Pick, Prediction, PriceSeen
from services.feeds import imports, prices
from services.market import price_cubes
from store import migrate
from store.database import db
from tests import factories
from tests.schema_state import differences, schema_of, wipe

LEAGUE = LeagueRecord("TST", "Test League", "Testland", "top-flight")
KICKOFF = datetime(2026, 3, 7, 15, 0, tzinfo=UTC)


def quotes(bookmaker, market, line, home, away, closing=False):
    """One bookmaker's two prices of a two-way market at ``line``."""
    first, second = ("home", "away") if market == "ah" else ("over", "under")
    return [
        OddsRecord(bookmaker, market, first, home, closing, line),
        OddsRecord(bookmaker, market, second, away, closing, line),
    ]


def record(odds, kickoff=KICKOFF, status="finished", goals=(2, 1)):
    """A match record of Alpha v Beta with ``odds``."""
    played = status == "finished"
    return MatchRecord(
        league=LEAGUE,
        season="2025-26",
        kickoff_at=kickoff,
        home_team="Alpha",
        away_team="Beta",
        status=status,
        home_goals=goals[0] if played else None,
        away_goals=goals[1] if played else None,
        odds=odds,
    )


#: A played match's prices as football-data gives them: 1x2 and over/under 2.5 (no line on the
#: records, as the parser wrote them before lines), and Asian handicap at two lines (the
#: pre-match line -0.25, the closing one -0.5).
ODDS = [
    OddsRecord("pinnacle", "1x2", "home", 2.1),
    OddsRecord("pinnacle", "1x2", "draw", 3.4),
    OddsRecord("pinnacle", "1x2", "away", 3.6),
    OddsRecord("pinnacle", "ou25", "over", 1.9),
    OddsRecord("pinnacle", "ou25", "under", 1.95),
    *quotes("pinnacle", "ah", -0.25, 1.93, 1.97),
    *quotes("bet365", "ah", -0.25, 1.9, 1.95),
    *quotes("pinnacle", "ah", -0.5, 2.12, 1.8, closing=True),
    *quotes("pinnacle", "ou", 3.0, 2.6, 1.5),
]


def stored_quotes() -> set:
    return set(
        OddsQuote.select(
            OddsQuote.market,
            OddsQuote.line,
            OddsQuote.is_closing,
            OddsQuote.bookmaker,
            OddsQuote.selection,
            OddsQuote.price,
        ).tuples()
    )


def test_quotes_are_stored_at_their_lines_and_found_again(ctx):
    summary = imports.store_records([record(ODDS)])
    assert summary.odds_stored == len(ODDS) == OddsQuote.select().count()
    lines = {(m, line) for m, line, *_ in stored_quotes()}
    assert lines == {("1x2", 0.0), ("ou25", 2.5), ("ah", -0.25), ("ah", -0.5), ("ou", 3.0)}
    # Importing the same again changes nothing.
    again = imports.store_records([record(ODDS)])
    assert (again.odds_stored, again.matches_updated) == (0, 0)
    before = stored_quotes()
    assert len(before) == len(ODDS)
    # A price at a new line is a new quote; a new price at one line reprices that line alone.
    moved = [
        *ODDS,
        *quotes("pinnacle", "ah", -0.75, 2.3, 1.66),
        *quotes("bet365", "ah", -0.25, 1.88, 1.97),
    ]
    changed = imports.store_records([record(moved)])
    assert changed.odds_stored == 2 + 2
    after = stored_quotes()
    assert after - before == {
        ("ah", -0.75, False, "pinnacle", "home", 2.3),
        ("ah", -0.75, False, "pinnacle", "away", 1.66),
        ("ah", -0.25, False, "bet365", "home", 1.88),
        ("ah", -0.25, False, "bet365", "away", 1.97),
    }
    assert before - after == {
        ("ah", -0.25, False, "bet365", "home", 1.9),
        ("ah", -0.25, False, "bet365", "away", 1.95),
    }


def test_a_line_market_price_without_its_line_is_refused(ctx):
    with pytest.raises(ValueError, match="needs its line"):
        imports.store_records([record([OddsRecord("pinnacle", "ah", "home", 1.9)])])


def test_the_price_cubes_keep_the_fixed_markets_and_give_a_row_per_line(ctx):
    imports.store_records([record(ODDS)])
    match_id = Match.get().id
    ids = [match_id + 1000, match_id]  # one listed match without quotes, then ours
    cubes = price_cubes.load(ids, closing=False)
    assert set(cubes) == {"1x2", "ou25", "btts"}
    assert cubes["1x2"].prices.shape == (2, 1, 3) and cubes["ou25"].prices.shape == (2, 1, 2)
    np.testing.assert_array_equal(cubes["ou25"].prices[1, 0], [1.9, 1.95])
    assert np.isnan(cubes["1x2"].prices[0]).all()
    lines = price_cubes.load_lines(ids, closing=False)
    assert set(lines) == {"ah", "ou"}
    ah = lines["ah"]
    assert ah.bookmakers == ["bet365", "pinnacle"]
    np.testing.assert_array_equal(ah.match_row, [1])
    np.testing.assert_array_equal(ah.line, [-0.25])
    np.testing.assert_array_equal(ah.prices[0], [[1.9, 1.95], [1.93, 1.97]])
    np.testing.assert_array_equal(lines["ou"].line, [3.0])
    closing = price_cubes.load_lines(ids, closing=True)["ah"]
    np.testing.assert_array_equal(closing.line, [-0.5])
    np.testing.assert_array_equal(closing.prices[0], [[2.12, 1.8]])
    empty = price_cubes.load_lines([], closing=False)["ah"]
    assert empty.prices.shape == (0, 0, 2) and empty.line.shape == (0,)
    # Several lines of several matches: sorted by match row, then line.
    other = record(quotes("pinnacle", "ah", 0.5, 1.8, 2.05), kickoff=KICKOFF + timedelta(days=9))
    imports.store_records([other, record([*ODDS, *quotes("pinnacle", "ah", -1.0, 2.6, 1.5)])])
    other_id = Match.get(Match.kickoff_at == other.kickoff_at).id
    ah = price_cubes.load_lines([other_id, match_id], closing=False)["ah"]
    np.testing.assert_array_equal(ah.match_row, [0, 1, 1])
    np.testing.assert_array_equal(ah.line, [0.5, -1.0, -0.25])


def test_summaries_and_answers_carry_the_line(client, ctx):
    imports.store_records([record(ODDS)])
    match = Match.get()
    summaries = set(
        OddsSummary.select(OddsSummary.market, OddsSummary.line, OddsSummary.selection).tuples()
    )
    assert ("ah", -0.25, "home") in summaries and ("ah", -0.5, "away") in summaries
    assert ("ou25", 2.5, "over") in summaries and ("1x2", 0.0, "draw") in summaries
    factories.pick(match, market="ah", selection="home", odds=1.93, line=-0.25)
    factories.pick(match, market="ou25", selection="over", odds=1.9, line=2.5)
    factories.pick(match, market="1x2", selection="home", odds=2.1)
    body = client.get(f"/api/matches/{match.id}").get_json()
    shown = [(item["market"], item["line"], item["bookmakers"]) for item in body["odds"]]
    assert shown == [
        ("1x2", None, 1),
        ("ou25", 2.5, 1),
        ("ah", -0.5, 0),  # quoted at the close only
        ("ah", -0.25, 2),
        ("ou", 3.0, 1),
    ]
    closing = body["odds"][2]["selections"]
    assert [(row["selection"], row["closingPrice"]) for row in closing] == [
        ("home", 2.12),
        ("away", 1.8),
    ]
    assert {(pick["market"], pick["line"]) for pick in body["picks"]} == {
        ("ah", -0.25),
        ("ou25", 2.5),
        ("1x2", None),
    }


def test_picks_of_the_day_filter_by_line(client, ctx):
    match = factories.match(kickoff=KICKOFF)
    factories.pick(match, market="ah", selection="home", odds=1.93, line=-0.25)
    factories.pick(match, market="ou25", selection="over", odds=1.9, line=2.5)
    factories.pick(match, market="1x2", selection="home", odds=2.1)

    def picked(query):
        response = client.get(f"/api/picks/today?date={KICKOFF.date()}&{query}")
        assert response.status_code == 200, response.get_json()
        return [(item["market"], item["line"]) for item in response.get_json()["items"]]

    assert sorted(picked(""), key=str) == sorted(
        [("1x2", None), ("ou25", 2.5), ("ah", -0.25)], key=str
    )
    assert picked("line=-0.25") == [("ah", -0.25)]
    assert picked("market=ou25&line=2.5") == [("ou25", 2.5)]
    assert picked("market=ah,ou") == [("ah", -0.25)]
    assert picked("line=0") == []  # the 1x2 pick has no line, though it is stored with 0
    assert picked("line=-2.5e-1") == picked("line=-0.250") == [("ah", -0.25)]
    # A line is a multiple of a quarter goal as written: 1e-400, which a float reads as 0, is
    # not the line 0.
    for wrong in ("x", "0.3", "0.125", "1e-400", "-1e-320", "2.5000000000000001"):
        response = client.get(f"/api/picks/today?date={KICKOFF.date()}&line={wrong}")
        assert response.status_code == 422, wrong
        assert response.get_json()["errors"]["line"], wrong


def test_exports_write_the_line_and_filter_by_it(client, ctx):
    imports.store_records([record(ODDS)])
    match = Match.get()
    Prediction.insert_many(
        [
            {
                "match": match.id,
                "market": market,
                "line": line,
                "probabilities": dict(zip(names, (0.5, 0.5), strict=True)),
                "model_probabilities": dict(zip(names, (0.5, 0.5), strict=True)),
                "pool_weight": 1.0,
                "model_name": "test",
                "model_version": "0",
                "fitted_at": KICKOFF,
                "data_quality": 1.0,
                "data_quality_parts": {},
            }
            for market, line, names in (
                ("ou25", 2.5, ("over", "under")),
                ("ah", -0.25, ("home", "away")),
                ("ah", -0.5, ("home", "away")),
                ("btts", 0.0, ("yes", "no")),
            )
        ]
    ).execute()
    factories.pick(match, market="ah", selection="away", odds=1.97, line=-0.25)
    headers = factories.people()["pro"][1]

    def exported(resource, **filters):
        body = {"resource": resource, "format": "ndjson", "parametersJson": json.dumps(filters)}
        response = client.post("/api/v1/data/exports", json=body, headers=headers)
        assert response.status_code == 200, response.get_data(as_text=True)
        rows = [json.loads(line) for line in response.get_data(as_text=True).splitlines()]
        return sorted({(row["market"], row["line"]) for row in rows}, key=str)

    assert exported("odds") == sorted(
        [("1x2", None), ("ou25", 2.5), ("ah", -0.25), ("ah", -0.5), ("ou", 3.0)], key=str
    )
    assert exported("odds", line=-0.25) == [("ah", -0.25)]
    assert exported("odds", market="ou25", line=2.5) == [("ou25", 2.5)]
    assert exported("odds", market="ou25,1x2") == [("1x2", None), ("ou25", 2.5)]
    assert exported("odds", line=0) == []
    assert exported("predictions", line=-0.5) == [("ah", -0.5)]
    assert exported("predictions", market="btts") == [("btts", None)]
    assert exported("picks", market="ah", line=-0.25) == [("ah", -0.25)]
    assert exported("picks", line=-0.5) == []
    # CSV: the line is the last column, empty for the markets without one.
    body = {"resource": "odds", "format": "csv", "parametersJson": json.dumps({"market": "1x2"})}
    text = client.post("/api/v1/data/exports", json=body, headers=headers).get_data(as_text=True)
    header, first, *_ = text.splitlines()
    assert header.endswith(",isClosing,line") and first.endswith(",")


def test_a_locked_handicap_pick_hides_its_line(client, ctx):
    upcoming = factories.now() + timedelta(days=1)
    match = factories.match(kickoff=upcoming, status="scheduled")
    factories.pick(match, market="ah", selection="home", odds=1.93, line=-0.25, rating="A")
    factories.pick(match, market="ou25", selection="over", odds=1.9, line=2.5, rating="B")
    people = factories.people()
    for kind, line in (("free", None), ("pro", -0.25)):
        picks = client.get(f"/api/matches/{match.id}", headers=people[kind][1]).get_json()["picks"]
        shown = {pick["market"]: (pick["line"], pick["locked"]) for pick in picks}
        locked = kind == "free"
        assert shown == {"ah": (line, locked), "ou25": (2.5, locked)}


def test_prices_seen_and_the_services_closing_line_are_per_line(ctx):
    kickoff = factories.now() + timedelta(hours=3)
    match = factories.match(kickoff=kickoff, status="scheduled")
    first = kickoff - timedelta(hours=2)
    seen = [*quotes("bet365", "ah", -0.25, 1.9, 1.95), *quotes("bet365", "ah", -0.5, 2.1, 1.75)]
    assert prices.record({match.id: seen}, "the-odds-api", first) == {match.id}
    later = [*quotes("bet365", "ah", -0.25, 1.85, 2.0), *quotes("bet365", "ah", -0.5, 2.1, 1.75)]
    prices.record({match.id: later}, "the-odds-api", first + timedelta(hours=1))
    rows = PriceSeen.select(PriceSeen.line, PriceSeen.selection, PriceSeen.price).tuples()
    assert sorted(rows) == sorted(
        [
            (-0.5, "home", 2.1),
            (-0.5, "away", 1.75),
            (-0.25, "home", 1.9),
            (-0.25, "away", 1.95),
            (-0.25, "home", 1.85),
            (-0.25, "away", 2.0),
        ]
    )
    assert prices.close(kickoff + timedelta(hours=1)) == {match.id}
    closing = OddsQuote.select(
        OddsQuote.line, OddsQuote.selection, OddsQuote.price, OddsQuote.closing_line
    ).where(OddsQuote.is_closing)
    assert sorted(closing.tuples()) == [
        (-0.5, "away", 1.75, "seen"),
        (-0.5, "home", 2.1, "seen"),
        (-0.25, "away", 2.0, "seen"),
        (-0.25, "home", 1.85, "seen"),
    ]


def test_a_status_of_a_quarter_line_fits(ctx):
    match = factories.match()
    pick = factories.pick(match, market="ah", selection="home", line=-0.25)
    Pick.update(status="half-lost").where(Pick.id == pick.id).execute()
    assert Pick.get_by_id(pick.id).status == "half-lost"


# The migration: a database at step 009 with rows of before.

NOW = "2026-03-01 12:00:00"
OLD_ROWS = f"""
INSERT INTO league (id, code, name, country, competition_type)
    VALUES (1, 'TST', 'Test League', 'Testland', 'top-flight');
INSERT INTO team (id, name, country) VALUES (1, 'Alpha', 'Testland'), (2, 'Beta', 'Testland');
INSERT INTO match (id, league_id, season, home_team_id, away_team_id, kickoff_at, status,
    home_goals, away_goals, slug, updated_at)
    VALUES (1, 1, '2025-26', 1, 2, '2026-02-01 15:00:00', 'finished', 2, 1,
    'alpha-vs-beta-2026-02-01', '{NOW}');
INSERT INTO odds_quote (match_id, bookmaker, market, selection, price, is_closing) VALUES
    (1, 'pinnacle', '1x2', 'home', 2.1, FALSE), (1, 'pinnacle', 'ou25', 'over', 1.9, FALSE),
    (1, 'pinnacle', 'ou25', 'over', 1.85, TRUE);
INSERT INTO odds_summary (match_id, market, selection, best_price, bookmakers) VALUES
    (1, 'ou25', 'over', 1.9, 1), (1, '1x2', 'home', 2.1, 1);
INSERT INTO price_seen (match_id, bookmaker, market, selection, price, source, first_seen_at,
    last_seen_at) VALUES (1, 'pinnacle', 'ou25', 'over', 1.9, 'the-odds-api', '{NOW}', '{NOW}');
INSERT INTO prediction (match_id, market, probabilities, model_probabilities, pool_weight,
    model_name, model_version, made_at, fitted_at, data_quality, data_quality_parts, is_live)
    VALUES (1, 'ou25', '{{"over": 0.5, "under": 0.5}}', '{{"over": 0.5, "under": 0.5}}', 1.0,
    'test', '0', '{NOW}', '{NOW}', 1.0, '{{}}', FALSE),
    (1, 'btts', '{{"yes": 0.5, "no": 0.5}}', '{{"yes": 0.5, "no": 0.5}}', 1.0,
    'test', '0', '{NOW}', '{NOW}', 1.0, '{{}}', FALSE);
INSERT INTO pick (match_id, market, selection, bookmaker, odds, probability, edge, rating,
    data_quality, stake, is_live, status, profit, created_at) VALUES
    (1, 'ou25', 'over', 'pinnacle', 1.9, 0.55, 0.045, 'B', 1.0, 1.0, FALSE, 'won', 0.9,
    '{NOW}');
"""


def test_the_migration_keeps_every_row_and_gives_it_its_line(app, client):
    url = app.config["DATABASE_URL"]
    models_schema = schema_of(url)
    wipe(url)
    migrate.upgrade(url, "009_closing_lines_and_timestamps")
    with app.app_context():
        for statement in OLD_ROWS.split(";"):
            if statement.strip():
                db.execute_sql(statement)
        db.close()
    assert migrate.upgrade(url) == [step for step in migrate.steps() if step >= "010"]
    assert not differences(models_schema, schema_of(url), ("models", "migrations"))
    with app.app_context():
        assert sorted(OddsQuote.select(OddsQuote.market, OddsQuote.line).tuples()) == [
            ("1x2", 0.0),
            ("ou25", 2.5),
            ("ou25", 2.5),
        ]
        assert sorted(OddsSummary.select(OddsSummary.market, OddsSummary.line).tuples()) == [
            ("1x2", 0.0),
            ("ou25", 2.5),
        ]
        assert list(PriceSeen.select(PriceSeen.line).tuples()) == [(2.5,)]
        assert sorted(Prediction.select(Prediction.market, Prediction.line).tuples()) == [
            ("btts", 0.0),
            ("ou25", 2.5),
        ]
        assert list(Pick.select(Pick.line, Pick.status).tuples()) == [(2.5, "won")]
        # Another line of a market is another row; the same line is still one.
        for line in (-0.25, -0.5):
            OddsQuote.create(
                match=1, bookmaker="pinnacle", market="ah", line=line, selection="home", price=2.0
            )
        with pytest.raises(IntegrityError), db.atomic():
            OddsQuote.create(
                match=1, bookmaker="pinnacle", market="ou25", line=2.5, selection="over", price=2
            )
        Pick.update(status="half-lost").execute()  # sixteen characters now
        db.close()
    body = client.get("/api/matches/1").get_json()
    assert {(p["market"], p["line"]) for p in body["predictions"]} == {
        ("ou25", 2.5),
        ("btts", None),
    }
    assert [(pick["market"], pick["line"]) for pick in body["picks"]] == [("ou25", 2.5)]
    assert [(odds["market"], odds["line"]) for odds in body["odds"]] == [
        ("ou25", 2.5),
        ("1x2", None),
    ]
