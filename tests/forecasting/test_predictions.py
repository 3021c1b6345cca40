"""The model pipeline on real data: walk-forward through the database, refresh, backtest."""

import itertools
import json
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from clock import utcnow
from engine.betting.odds import remove_margin
from engine.model import walkforward
from models import LedgerEntry, Match, MatchIntelligence, Pick, Prediction
from models.schema import create_tables, drop_tables
from schemas.spans import Span
from services.feeds import imports
from services.forecasting import backtests, forecast, predictions
from services.operations import jobs
from services.record import log_reading, settling, signed_log
from store.database import db
from tests import factories, helpers
from tests.data import FOOTBALL_DATA, needs_football_data


@pytest.fixture
def few_results(app):
    """These worlds hold a few dozen matches of one league: the goal model has seen it after
    ten (the service's minimum is made for real leagues)."""
    app.config["MODEL_MIN_LEAGUE_MATCHES"] = 10


SELECTIONS = ("home", "draw", "away")


def _backfill(files):
    drop_tables()
    create_tables()
    for name in files:
        imports.import_file(FOOTBALL_DATA / name)
    predictions.backfill(factories.settings())
    return {
        (match.slug, prediction.market): (
            prediction.probabilities,
            prediction.model_probabilities,
            prediction.fitted_at,
        )
        for prediction, match in (
            (p, p.match) for p in Prediction.select(Prediction, Match).join(Match)
        )
    }, {
        pick.match.slug + pick.market: (pick.selection, pick.odds, pick.edge)
        for pick in Pick.select(Pick, Match).join(Match)
    }


@pytest.mark.slow
@needs_football_data
def test_a_prediction_never_changes_when_later_matches_are_added(ctx):
    alone, alone_picks = _backfill(["D1_2223.csv"])
    with_later, later_picks = _backfill(["D1_2223.csv", "D1_2324.csv"])
    # Four predictions a match: 1x2, over/under 2.5, btts and Asian handicap at its one line.
    assert len(alone) == 306 * 4 and len(with_later) == 612 * 4
    assert {key: with_later[key] for key in alone} == alone
    assert {key: later_picks[key] for key in alone_picks} == alone_picks


@pytest.mark.slow
@needs_football_data
def test_changing_a_later_result_leaves_earlier_predictions_alone(ctx):
    before, _ = _backfill(["D1_2223.csv"])
    last = Match.select().order_by(Match.kickoff_at.desc()).get()
    drop_tables()
    create_tables()
    imports.import_file(FOOTBALL_DATA / "D1_2223.csv")
    Match.update(home_goals=9, away_goals=0).where(Match.slug == last.slug).execute()
    predictions.backfill(factories.settings())
    after = {
        (p.match.slug, p.market): p.probabilities
        for p in Prediction.select(Prediction, Match).join(Match)
    }
    assert all(after[key] == value[0] for key, value in before.items())


@pytest.mark.usefixtures("few_results")
def test_refresh_updates_an_open_match_and_keeps_what_was_published(ctx):
    now = utcnow()
    odds = [
        ("pinnacle", "1x2", s, p, False)
        for s, p in zip(("home", "draw", "away"), (2.0, 3.6, 3.9), strict=True)
    ]
    odds += [
        ("bet365", "1x2", s, p, False)
        for s, p in zip(("home", "draw", "away"), (2.3, 3.4, 3.5), strict=True)
    ]
    factories.played_days(now, range(30, 2, -1), odds)
    upcoming = factories.match(
        "T1", "T4", status="scheduled", kickoff=now + timedelta(days=2), odds=odds
    )
    predictions.backfill(factories.settings(), now=now)
    made = Prediction.get((Prediction.match == upcoming) & (Prediction.market == "1x2"))
    pick = Pick.get((Pick.match == upcoming) & (Pick.market == "1x2"))
    assert pick.is_live and (pick.selection, pick.bookmaker, pick.odds) == ("home", "bet365", 2.3)
    assert pick.edge == pytest.approx(made.probabilities["home"] * 2.3 - 1)

    later = now + timedelta(hours=1)
    result = predictions.refresh(
        predictions.check_open(upcoming.id), factories.settings(), now=later
    )
    assert result["match_id"] == upcoming.id and result["predictions"] == 3
    refreshed = Prediction.get_by_id(made.id)
    assert refreshed.made_at == later and refreshed.is_live
    assert MatchIntelligence.get(MatchIntelligence.match == upcoming).updated_at == later
    assert Pick.select().where(Pick.match == upcoming).count() == 1  # the pick stands as made

    kicked_off = now + timedelta(days=3)
    predictions.refresh(predictions.check_open(upcoming.id), factories.settings(), now=kicked_off)
    assert Prediction.get_by_id(made.id).made_at == later  # published before kick-off: kept


@pytest.mark.usefixtures("few_results")
def test_a_league_the_model_has_not_seen_publishes_the_market_and_makes_no_pick(ctx):
    # Testland has played 28 matches; Newland's league is imported with its fixtures only.
    now = utcnow()
    sharp = [
        ("pinnacle", "1x2", s, p, False) for s, p in zip(SELECTIONS, (2.0, 3.6, 3.9), strict=True)
    ]
    soft = [
        ("bet365", "1x2", s, p, False) for s, p in zip(SELECTIONS, (2.3, 3.4, 3.5), strict=True)
    ]
    factories.played_days(now, range(30, 2, -1), sharp + soft)
    kickoff = now + timedelta(days=2)
    seen = factories.match("T1", "T4", status="scheduled", kickoff=kickoff, odds=sharp + soft)
    new = ("NEW", "New League", "Newland", "top-flight")
    priced = factories.match(
        "N1", "N2", status="scheduled", kickoff=kickoff, odds=sharp + soft, league=new
    )
    unpriced = factories.match(
        "N3", "N4", status="scheduled", kickoff=kickoff, odds=soft, league=new
    )
    predictions.backfill(factories.settings(), now=now)

    def check():
        assert Pick.select().where(Pick.match == seen).count() == 1  # the same prices pick here
        assert not Pick.select().where(Pick.match.in_([priced, unpriced])).exists()
        made = Prediction.get((Prediction.match == priced) & (Prediction.market == "1x2"))
        assert (made.pool_weight, made.source) == (0.0, "market")
        assert made.probabilities == pytest.approx(made.market_probabilities, abs=1e-12)
        # Neither history nor a sharp line: the goal model's prior, published as such, no pick.
        prior = Prediction.get((Prediction.match == unpriced) & (Prediction.market == "1x2"))
        assert prior.market_probabilities is None and prior.pool_weight == 1.0
        assert prior.source in walkforward.GOAL_SOURCES

    check()
    for match in (priced, unpriced):  # a refresh of the new league's matches agrees
        predictions.refresh(
            predictions.check_open(match.id), factories.settings(), now=now + timedelta(hours=1)
        )
    check()


def test_the_live_path_and_the_backfill_give_the_same_data_quality(ctx):
    # A Saturday fixture, refreshed live on the Thursday before it: its forecast is cut off at
    # the same Monday as the backfill's will be, so both read the same history.
    kickoff = datetime(2026, 3, 7, 15, tzinfo=UTC)
    thursday = kickoff - timedelta(days=2)
    books = [("pinnacle", 0.0), ("bet365", 0.1), ("bwin", 0.05), ("unibet", 0.08)]
    pre_match = [
        (book, market, selection, price + shift, False)
        for book, shift in books
        for market, selections, prices in (
            ("1x2", ("home", "draw", "away"), (2.0, 3.6, 3.9)),
            ("ou25", ("over", "under"), (1.9, 1.95)),
        )
        for selection, price in zip(selections, prices, strict=True)
    ]
    closing = [(book, m, s, price + 0.02, True) for book, m, s, price, _ in pre_match]
    pairs = itertools.permutations(range(8), 2)  # a match is found again by its teams
    imports.store_records(
        [
            factories.match_record(
                f"T{home}",
                f"T{away}",
                kickoff=kickoff - timedelta(days=day),
                goals=(day % 3, day % 2),
                odds=pre_match + closing,
            )
            for day, (home, away) in zip(range(50, 3, -1), pairs, strict=False)
        ]
    )
    fixture = factories.match(
        "T7",
        "T2",
        status="scheduled",
        kickoff=kickoff,
        odds=pre_match[:-2],  # unibet quotes no over/under before kick-off
    )
    predictions.refresh(predictions.check_open(fixture.id), factories.settings(), now=thursday)
    live = {
        p.market: (p.data_quality, p.data_quality_parts)
        for p in Prediction.select().where(Prediction.match == fixture)
    }
    assert all(p.is_live for p in Prediction.select().where(Prediction.match == fixture))
    # It is played, and its closing quotes arrive: more of them than quoted before kick-off.
    factories.match("T7", "T2", kickoff=kickoff, goals=(2, 2), odds=closing)
    fc = forecast.forecast(kickoff + timedelta(days=1), factories.settings())
    (row,) = np.flatnonzero(fc.match_id == fixture.id)
    for market in ("1x2", "ou25"):
        score, parts = fc.quality[market]
        backfilled = (float(score[row]), {name: float(part[row]) for name, part in parts.items()})
        assert backfilled == live[market]
    assert live["1x2"][1]["bookmakers"] == 0.8 and live["1x2"][1]["sharp_line"] == 1.0
    assert live["ou25"][1]["bookmakers"] == 0.6 and live["ou25"][1]["history"] > 0.2


def test_backtest_runs_over_backfilled_picks_only(ctx):
    first = factories.match("A1", "A2", kickoff=utcnow() - timedelta(days=40), goals=(1, 0))
    second = factories.match("B1", "B2", kickoff=utcnow() - timedelta(days=5), goals=(0, 2))
    factories.pick(first, "1x2", "home", odds=2.5, rating="A", edge=0.1, status="won", profit=1.5)
    factories.pick(
        second, "1x2", "home", odds=2.0, rating="B", edge=0.06, status="lost", profit=-1.0
    )
    factories.pick(
        second,
        "ou25",
        "under",
        odds=1.9,
        rating="C",
        edge=0.03,
        is_live=True,
        status="won",
        profit=0.9,
    )
    everything = backtests.run()["summary"]
    assert (everything["picks"], everything["won"], everything["lost"]) == (2, 1, 1)
    assert everything["profit"] == pytest.approx(0.5) and everything["roi"] == pytest.approx(0.25)
    only_a = backtests.run(ratings=["A"])
    assert only_a["summary"]["picks"] == 1 and len(only_a["by_month"]) == 1
    since = utcnow() - timedelta(days=10)
    recent = backtests.run(date_from=Span(since, since))["summary"]
    assert (recent["picks"], recent["profit"]) == (1, -1.0)
    assert backtests.run(markets=["ou25"])["summary"]["picks"] == 0


#: A match's 1x2 prices: Pinnacle and bet365 before kick-off, Pinnacle at the close.
PRICED = [
    (book, "1x2", selection, price, closing)
    for book, prices, closing in (
        ("pinnacle", (2.0, 3.6, 3.9), False),
        ("bet365", (2.4, 3.4, 3.5), False),
        ("pinnacle", (2.05, 3.5, 3.8), True),
    )
    for selection, price in zip(("home", "draw", "away"), prices, strict=True)
]


def _played(start, pairs) -> None:
    """Finished, priced matches of teams ``T<n>``: one every other day from ``start`` for 40
    days, between the ``pairs`` (home, away) in turn."""
    for day, (home, away) in zip(range(0, 40, 2), pairs, strict=False):
        factories.match(
            f"T{home}",
            f"T{away}",
            kickoff=start + timedelta(days=day),
            goals=(day % 3, 1),
            odds=PRICED,
        )


def _rows(table, where):
    """Every stored column of ``table``'s rows matching ``where``, as the database holds them."""
    return db.execute_sql(f'SELECT * FROM "{table}" WHERE {where} ORDER BY "id"').fetchall()


@pytest.mark.usefixtures("few_results")
def test_a_rebuild_redoes_the_backfilled_history_and_never_what_was_published(ctx, monkeypatch):
    start = utcnow() - timedelta(days=60)
    quotes = PRICED
    _played(start, ((day % 6, (day + 1) % 6) for day in range(0, 40, 2)))
    # Three fixtures are predicted (and picked) live, before they kick off …
    fixtures = [start + timedelta(days=45 + day) for day in range(3)]
    for n, kickoff in enumerate(fixtures):
        factories.match(f"T{n}", f"T{n + 3}", status="scheduled", kickoff=kickoff, odds=quotes)
    # The model of before: proportional margins, every edge of 0.02 a pick, every pick a C.
    before = {
        **factories.settings(),
        "MARGIN_METHOD": "proportional",
        "PICK_MIN_GROWTH": 0.0,
        "RATING_A_GROWTH": 9.0,
        "RATING_B_GROWTH": 9.0,
    }
    monkeypatch.setattr(walkforward, "MODEL_VERSION", "2.0.0")
    predictions.backfill(before, now=start + timedelta(days=44))
    # … then they are played, and more history arrives.
    for n, kickoff in enumerate(fixtures):
        factories.match(f"T{n}", f"T{n + 3}", kickoff=kickoff, goals=(1, n), odds=quotes)
    predictions.backfill(before, now=start + timedelta(days=50))
    live_predictions = _rows("prediction", '"is_live"')
    live_picks = _rows("pick", '"is_live"')
    assert len(live_predictions) == 9 and live_picks
    assert {p.status for p in Pick.select().where(Pick.is_live)} <= {"won", "lost"}
    backfilled = Prediction.select().where(~Prediction.is_live).count()
    assert {p.rating for p in Pick.select()} == {"C"}
    monkeypatch.setattr(walkforward, "MODEL_VERSION", "3.0.0")  # the model changes

    now = factories.settings()  # power margins, ratings by growth
    result = jobs.backfill({**now, "RATING_A_GROWTH": 0.0, "RATING_A_QUALITY": 0.0}, rebuild=True)
    assert result["status"] == "succeeded" and result["params"] == {"rebuild": True}
    # Every live prediction and pick is byte for byte what was published, its settlement (with
    # its proportional closing probability) included …
    assert _rows("prediction", '"is_live"') == live_predictions
    assert _rows("pick", '"is_live"') == live_picks
    # … and the backfilled history is the new model's, its picks made, rated and settled again.
    rebuilt = Prediction.select().where(~Prediction.is_live)
    assert {(p.model_version, p.margin_method) for p in rebuilt} == {("3.0.0", "power")}
    assert {(p.model_version, p.margin_method) for p in Prediction.select().where(
        Prediction.is_live
    )} == {("2.0.0", "proportional")}  # fmt: skip
    assert Prediction.select().where(~Prediction.is_live).count() == backfilled
    assert {p.rating for p in Pick.select().where(~Pick.is_live)} == {"A"}
    assert not Pick.select().where(~Pick.is_live & (Pick.status == "pending")).count()
    fair = remove_margin([2.05, 3.5, 3.8], method="power")
    for pick in Pick.select().where(~Pick.is_live):
        index = ("home", "draw", "away").index(pick.selection)
        assert pick.closing_probability == pytest.approx(fair[index])
    # A plain backfill never rewrites a kicked-off match's prediction.
    monkeypatch.setattr(walkforward, "MODEL_VERSION", "10.0.0")
    predictions.backfill(factories.settings(), now=start + timedelta(days=50))
    assert "10.0.0" not in {p.model_version for p in Prediction.select()}


@pytest.mark.usefixtures("few_results")
def test_a_clock_set_before_kick_offs_never_makes_a_kicked_off_match_live(ctx):
    """A backfill whose clock is earlier than what is stored (as a replay's can be) leaves every
    prediction of a match that has kicked off as it is, and makes none of them live: what is
    stored says so, whatever the clock says."""
    start = datetime(2026, 3, 1, 15, 0, tzinfo=UTC)
    quotes = PRICED
    _played(start, itertools.permutations(range(6), 2))  # each pair once
    # A match whose result never came: only its backfilled prediction says it has kicked off.
    factories.match("T5", "T0", status="scheduled", kickoff=start + timedelta(days=41), odds=quotes)
    predictions.backfill(factories.settings(), now=start + timedelta(days=50))
    assert Prediction.select().count() == 21 * 3 and Pick.select().where(~Pick.is_live).exists()
    stored = helpers.stored_rows(Prediction, Pick, MatchIntelligence)
    # A result arrives that was never predicted; then the clock is set before every kick-off.
    late = factories.match(
        "T5", "T1", kickoff=start + timedelta(days=42), goals=(1, 1), odds=quotes
    )
    predictions.backfill(factories.settings(), now=start - timedelta(days=1))

    assert not Prediction.select().where(Prediction.is_live).exists()
    assert not Pick.select().where(Pick.is_live).exists() and not LedgerEntry.select().exists()
    others = f'"match_id" != {late.id}'
    for table, rows in stored.items():
        assert _rows(table, others) == rows, table
    made = Prediction.select().where(Prediction.match == late)
    assert [p.made_at for p in made] == [start - timedelta(days=1)] * 3  # backfilled, not live


@pytest.mark.usefixtures("few_results")
def test_a_prediction_run_signs_its_picks_at_once_so_they_settle_live(ctx):
    """The run that appends a live pick signs a checkpoint in its own transaction, at its own
    time: the pick, settled after its match, passes the live rule and its outcome says so."""
    now = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
    odds = [
        ("pinnacle", "1x2", s, p, False)
        for s, p in zip(("home", "draw", "away"), (2.0, 3.6, 3.9), strict=True)
    ]
    odds += [
        ("bet365", "1x2", s, p, False)
        for s, p in zip(("home", "draw", "away"), (2.3, 3.4, 3.5), strict=True)
    ]
    factories.played_days(now, range(30, 2, -1), odds)
    kickoff = now + timedelta(days=2)
    upcoming = factories.match("T1", "T4", status="scheduled", kickoff=kickoff, odds=odds)
    predictions.backfill(factories.settings(), now=now)
    pick = Pick.get((Pick.match == upcoming) & (Pick.market == "1x2"))
    assert pick.is_live and not signed_log.unsigned()
    assert log_reading.first_signed([pick.id]) == {pick.id: now}
    factories.match("T1", "T4", kickoff=kickoff, goals=(2, 0), odds=odds)
    settling.run(7, factories.settings(), now=kickoff + timedelta(hours=3))
    settled = Pick.get_by_id(pick.id)
    assert (settled.status, settled.is_live, settled.not_live_reason) == ("won", True, None)
    outcome = json.loads(LedgerEntry.select().order_by(LedgerEntry.position.desc()).get().body)
    assert (outcome["pickId"], outcome["live"], outcome["notLiveReason"]) == (pick.id, True, None)


def test_only_the_pick_markets_get_picks(ctx):
    start = utcnow() - timedelta(days=60)
    _played(start, ((day % 6, (day + 1) % 6) for day in range(0, 40, 2)))
    # The small world's league has 20 results: seen, with no minimum.
    seen = {**factories.settings(), "MODEL_MIN_LEAGUE_MATCHES": 0}
    every = forecast.forecast(utcnow(), {**seen, "PICK_MARKETS": ("1x2",)})
    none = forecast.forecast(utcnow(), {**seen, "PICK_MARKETS": ()})
    assert (every.choice["1x2"][0] >= 0).any()  # the sharp line's 2.0 is beaten: picks
    for market, (selection, edge, _, _) in none.choice.items():
        assert (selection == -1).all(), market
        # The edge is still reported (the prediction shows it), only the pick is withheld.
        np.testing.assert_array_equal(edge, every.choice[market][1])
