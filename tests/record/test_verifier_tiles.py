"""The verifier reading the ledger from its tiles: green on an honest log, a second run fetching
only the tiles that are new (and at most ten requests), red when a cached tile no longer matches
what the server signs; its pacing under the server's limits."""

import gzip
import io
import threading
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from bench.common import build_picks
from services.record import log_reading, settling, signed_log
from store.database import db
from tests import factories, helpers
from tests.verifier import load_verifier

verifier = load_verifier()
KICKOFF = datetime(2026, 3, 7, 15, 0, tzinfo=UTC)


class Clock:
    def __init__(self, now):
        self.now = now

    def __call__(self):
        return self.now


def tile_fetcher(client, paths):
    """The verifier's ``fetch`` (and ``fetch.raw``) over a test client, logging each path."""

    def fetch(path, authorized=False):
        paths.append(path)
        response = client.get(path, headers={"Accept": "application/json"})
        return response.status_code, response.get_json()

    def raw(path):
        paths.append(path)
        response = client.get(path, headers={"Accept-Encoding": "gzip"})
        data = response.data
        if response.headers.get("Content-Encoding") == "gzip":
            data = gzip.decompress(data)
        return response.status_code, data

    fetch.raw = raw
    return fetch


def run(client, cache, saved_key=None):
    paths = []
    report, key, latest = verifier.verify(
        tile_fetcher(client, paths), saved_key, [], out=io.StringIO(), cache=cache
    )
    verdicts = "\n".join(f"{v} {name}: {detail}" for v, name, detail in report.verdicts)
    return report, key, latest, paths, verdicts


@pytest.fixture
def world(make_app):
    """600 live picks on 120 matches kicking off at once, published the day before: 600
    entries (two full tiles and a partial one)."""
    clock = Clock(KICKOFF - timedelta(days=1))
    app = make_app(CLOCK=clock)
    with app.app_context():
        match_ids = build_picks(595, KICKOFF, is_live=True, created_at=KICKOFF - timedelta(days=2))
        with db.atomic():
            signed_log.publish_new(match_ids, clock.now, "test-1")
            signed_log.checkpoint(clock.now, factories.settings())
        assert log_reading.size() == 600
    return app, clock


def settle(app, clock):
    clock.now = KICKOFF + timedelta(hours=3)
    with app.app_context(), db.atomic():
        settling.settle_pending(factories.settings(), now=clock.now)
        signed_log.checkpoint(clock.now, factories.settings())


def test_a_second_run_fetches_only_the_new_tiles(world, tmp_path):
    app, clock = world
    client = app.test_client()
    cache = verifier.TileCache(tmp_path / "tiles")
    report, key, latest, first, verdicts = run(client, cache)
    assert not report.failed, verdicts
    assert "PASS tiles:" in verdicts
    assert f"{verifier.TILES}/tile/entries/000" in first
    assert f"{verifier.TILES}/tile/entries/002.p/88" in first
    cache.commit(key.text, latest.size)

    settle(app, clock)  # 600 outcome entries: 1,200, tiles 002 and 003 full, 004 partial
    with app.app_context():
        assert log_reading.size() == 1200
    again = verifier.TileCache(tmp_path / "tiles")
    report, _, latest, second, verdicts = run(client, again, key.text)
    assert not report.failed, verdicts
    assert latest.size == 1200
    tiles = [path.removeprefix(verifier.TILES + "/") for path in second if "/tiles/" in path]
    assert sorted(tiles) == [
        "checkpoint",
        "tile/0/004.p/176",
        "tile/1/000.p/4",
        "tile/entries/002",
        "tile/entries/003",
        "tile/entries/004.p/176",
    ]
    assert again.hits == 2  # bundles 000 and 001, from the cache
    assert len(second) <= 10, second
    assert "600 outcomes follow" in verdicts


def test_a_warm_recheck_of_an_unchanged_log_is_a_handful_of_requests(world, tmp_path):
    app, clock = world
    settle(app, clock)
    client = app.test_client()
    cache = verifier.TileCache(tmp_path / "tiles")
    report, key, latest, cold, verdicts = run(client, cache)
    assert not report.failed, verdicts
    cache.commit(key.text, latest.size)
    report, _, _, warm, verdicts = run(client, verifier.TileCache(tmp_path / "tiles"), key.text)
    assert not report.failed, verdicts
    assert len(warm) <= 10 and len(cold) > len(warm), (cold, warm)
    assert not any("/api/matches/" in path for path in warm)


def test_red_when_a_cached_tile_is_not_the_signed_tree(world, tmp_path):
    """A full bundle kept from an earlier run that the server's signed root no longer covers (a
    rewritten history, or a tampered cache) fails the run."""
    app, _ = world
    client = app.test_client()
    cache = verifier.TileCache(tmp_path / "tiles")
    report, key, latest, _, verdicts = run(client, cache)
    assert not report.failed, verdicts
    cache.commit(key.text, latest.size)
    kept = tmp_path / "tiles" / "tile" / "entries" / "000"
    kept.write_bytes(kept.read_bytes().replace(b'"rating":"B"', b'"rating":"A"', 1))
    report, _, _, _, verdicts = run(client, verifier.TileCache(tmp_path / "tiles"), key.text)
    assert report.failed
    assert "FAIL root:" in verdicts


class Limited(BaseHTTPRequestHandler):
    """A server that refuses the first request with a 429 and empties its counter on the next."""

    calls = []

    def do_GET(self):
        Limited.calls.append(self.path)
        if len(Limited.calls) == 1:
            self.send_response(429)
            self.send_header("Retry-After", "7")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = b'{"ok": true}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("RateLimit", '"tiles";r=0;t=3')
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_the_fetcher_waits_out_a_429_and_an_emptied_counter():
    Limited.calls = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Limited)
    thread = threading.Thread(
        target=server.serve_forever, args=(helpers.SHUTDOWN_POLL,), daemon=True
    )
    thread.start()
    slept = []
    now = [0.0]
    pacer = verifier.Pacer(sleep=slept.append, clock=lambda: now[0])
    try:
        fetch = verifier.http_fetcher(f"http://127.0.0.1:{server.server_port}", pacer=pacer)
        assert fetch("/api/track-record/ledger/tiles/checkpoint") == (200, {"ok": True})
        assert slept == [7]  # the 429's Retry-After
        assert fetch("/api/track-record/ledger/tiles/tile/0/000")[0] == 200
        assert slept == [7, 3]  # the counter the last answer emptied, before the same family
        assert pacer.requests == 3
    finally:
        server.shutdown()
        server.server_close()
