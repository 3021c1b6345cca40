"""Two sources that overlap: football-data's fixture file and The Odds API both quote Pinnacle
and William Hill. Each source's price is an observation of its own (never a key collision), the
current quote is the freshest change, alternating answers write nothing, and a source whose
records fail to store fails its own part of the sync only, seen in health in the same cycle,
its credits counted all the same."""

import copy
import threading
from datetime import timedelta
from types import SimpleNamespace

import pytest

from models import Match, OddsQuote, PriceSeen, SourceState
from services.feeds import sync
from services.operations import health
from store.database import db, exclusive, is_sqlite
from tests import sync_world
from tests.data import needs_football_data
from tests.source_servers import OddsApiServer
from tests.syncing import KEY, odds_events, run_sync, serve, source_report, sync_app

pytestmark = needs_football_data


@pytest.fixture
def both(make_app, football_data):
    """Friday's files served by football-data and The Odds API's events for them, its
    Pinnacle pricing the match result otherwise: its ``app``, ``odds`` server, ``friday`` and
    ``files``."""
    (friday, files), *_ = sync_world.week()
    with OddsApiServer(key=KEY) as odds:
        odds.events["soccer_epl"] = _moved(odds_events(files))
        app = sync_app(make_app, football_data, odds)
        serve(football_data, files, friday)
        yield SimpleNamespace(app=app, odds=odds, friday=friday, files=files)


def _moved(events, factor=1.07, book="pinnacle"):
    """The Odds API's events with ``book``'s match-result prices moved by ``factor``: the same
    bookmaker priced otherwise than football-data's file."""
    events = copy.deepcopy(events)
    for event in events:
        for bookmaker in event["bookmakers"]:
            if bookmaker["key"] != book:
                continue
            for market in bookmaker["markets"]:
                if market["key"] == "h2h":
                    for outcome in market["outcomes"]:
                        outcome["price"] = round(outcome["price"] * factor, 2)
    return events


def _runs(source, book="pinnacle"):
    """The history's rows of ``book`` as ``source`` quoted it."""
    query = PriceSeen.select().where((PriceSeen.source == source) & (PriceSeen.bookmaker == book))
    return list(query)


def _quotes(book="pinnacle", market="1x2"):
    """The current pre-match quotes of ``book``: (match, selection) → price."""
    query = OddsQuote.select().where(
        (OddsQuote.bookmaker == book) & (OddsQuote.market == market) & ~OddsQuote.is_closing
    )
    return {(q.match_id, q.selection): q.price for q in query}


def _source_health(app, now, source):
    checked = health.report(app.config, lambda: ("ok", "memory"), 1.0, now)
    return next(s for s in checked["services"] if s["name"] == source)


def test_one_bookmaker_priced_differently_by_both_sources_in_one_sync_is_two_observations(
    both, waits
):
    """Both sources bring their own Pinnacle price in one sync: both are kept, apart, and the
    sync succeeds (it rolled back on the history's unique key, on every sync after)."""
    app, friday = both.app, both.friday
    with app.app_context():
        _, result = run_sync(app, friday, waits)
        assert source_report(result)["errors"] == []
        assert source_report(result, "the-odds-api")["errors"] == []
        from_file, from_api = _runs("football-data"), _runs("the-odds-api")
        assert from_file and from_api
        file_prices = {(r.match_id, r.market, r.selection): r.price for r in from_file}
        api_prices = {(r.match_id, r.market, r.selection): r.price for r in from_api}
        moved = [key for key in api_prices if key[1] == "1x2"]
        assert moved and all(api_prices[key] != file_prices[key] for key in moved)
        # A tie (both first seen now) goes to the live API.
        quotes = _quotes()
        assert all(quotes[(key[0], key[2])] == api_prices[key] for key in moved)

        later = friday + timedelta(minutes=5)
        _, result = run_sync(app, later, waits)  # and again: no collision either
        assert source_report(result, "the-odds-api")["errors"] == []


def test_alternating_answers_write_no_history_and_leave_the_current_price_still(
    both, football_data, waits
):
    """football-data's fixture file is rewritten (another match's price moves) between The
    Odds API's calls, which keep their own Pinnacle price: the history gains no row for the
    prices that did not move and the current quote stays put (it flipped between the sources,
    a row each time)."""
    app, friday, files = both.app, both.friday, both.files
    with app.app_context():
        run_sync(app, friday, waits, "football-data")
        run_sync(app, friday + timedelta(minutes=1), waits, "the-odds-api")
        runs = {source: len(_runs(source)) for source in ("football-data", "the-odds-api")}
        quotes = _quotes()
        for step in range(1, 5):
            now = friday + timedelta(minutes=2 * step)
            rewritten = dict(files)
            rewritten[sync_world.FIXTURES] = _bet365_moved(files[sync_world.FIXTURES], step)
            serve(football_data, rewritten, now)
            source = "football-data" if step % 2 else "the-odds-api"
            _, result = run_sync(app, now, waits, source)
            assert all(not report["errors"] for report in result["sources"])
        assert {s: len(_runs(s)) for s in runs} == runs
        assert _quotes() == quotes


def _bet365_moved(fixtures: bytes, step: int) -> bytes:
    """The fixture file with the first fixture's bet365 home price moved by ``step`` hundredths
    (the file is rewritten; Pinnacle's prices in it are not)."""
    lines = fixtures.decode().split("\r\n")
    header = lines[0].split(",")
    column = header.index("B365H")
    first = lines[1].split(",")
    first[column] = f"{float(first[column]) + step / 100:.2f}"
    lines[1] = ",".join(first)
    return "\r\n".join(lines).encode()


def _refuse_the_odds_api():
    """A real database failure for one source's part: a trigger refusing its history rows."""
    if is_sqlite():
        db.execute_sql(
            "CREATE TRIGGER refuse_odds_api BEFORE INSERT ON price_seen "
            "WHEN NEW.source = 'the-odds-api' BEGIN SELECT RAISE(ABORT, 'disk full'); END"
        )
        return
    db.execute_sql(
        "CREATE FUNCTION refuse_odds_api() RETURNS trigger AS $$ BEGIN "
        "IF NEW.source = 'the-odds-api' THEN RAISE EXCEPTION 'disk full'; END IF; "
        "RETURN NEW; END $$ LANGUAGE plpgsql"
    )
    db.execute_sql(
        "CREATE TRIGGER refuse_odds_api BEFORE INSERT ON price_seen "
        "FOR EACH ROW EXECUTE FUNCTION refuse_odds_api()"
    )


def _allow_the_odds_api():
    db.execute_sql(
        "DROP TRIGGER IF EXISTS refuse_odds_api" + ("" if is_sqlite() else " ON price_seen")
    )
    if not is_sqlite():
        db.execute_sql("DROP FUNCTION IF EXISTS refuse_odds_api()")


def test_a_source_that_fails_to_store_fails_its_own_part_seen_at_once_credits_counted(both, waits):
    """The Odds API's records fail to store: football-data's part lands, the sync succeeds,
    the source is ``failing`` in health with its error in the same cycle, and the credits its
    calls cost are counted (the rollback dropped them, and health said ``ok``)."""
    app, odds, friday = both.app, both.odds, both.friday
    with app.app_context():
        _refuse_the_odds_api()
        try:
            _, result = run_sync(app, friday, waits)
            failed = source_report(result, "the-odds-api")
            assert failed["errors"] and "disk full" in failed["errors"][-1]
            assert failed["credits_spent"] == odds.used > 0
            landed = source_report(result)
            assert landed["errors"] == [] and landed["matches_new"] > 0
            assert _runs("football-data") and not _runs("the-odds-api")
            assert Match.select().count() == landed["matches_new"]

            entry = _source_health(app, friday, "the-odds-api")
            assert entry["status"] == "failing"
            assert entry["last_error_at"] == friday and "disk full" in entry["last_error"]
            assert _source_health(app, friday, "football-data")["status"] != "failing"
            assert SourceState.get(source="the-odds-api").credits_spent == odds.used

            later = friday + timedelta(minutes=5)
            _, result = run_sync(app, later, waits, "the-odds-api")
            assert SourceState.get(source="the-odds-api").credits_spent == odds.used
        finally:
            _allow_the_odds_api()
        recovered = later + timedelta(minutes=5)
        _, result = run_sync(app, recovered, waits, "the-odds-api")
        assert source_report(result, "the-odds-api")["errors"] == []
        assert _runs("the-odds-api")
        entry = _source_health(app, recovered, "the-odds-api")
        assert entry["status"] != "failing" and entry["last_success_at"] == recovered
        assert SourceState.get(source="the-odds-api").credits_spent == odds.used


def test_a_sync_waits_for_the_one_under_way(make_app, football_data):
    """Two syncs at once (the worker's and an operator's) would both fetch and write the same
    credits, reports and quotes: the second waits for the first's lock, then runs."""
    (friday, files), *_ = sync_world.week()
    app = sync_app(make_app, football_data)
    serve(football_data, files, friday)
    done = []

    def second():
        with app.app_context():
            done.append(sync.run(app.config, friday, "football-data"))

    with app.app_context(), exclusive("sync", sync.SYNC_LOCK):
        waiting = threading.Thread(target=second)
        waiting.start()
        waiting.join(timeout=1.0)
        assert waiting.is_alive() and football_data.requests == []  # held back, not fetching
    waiting.join(timeout=60)
    assert not waiting.is_alive() and done[0]["sources"][0]["matches_new"] > 0
