"""What outlives a request must not: a match-feed cursor that loses its place, an export whose
snapshot stays open when its body is never read."""

import socket
from datetime import UTC, datetime, timedelta

import pytest

from models import Match
from services.data_api import exports
from tests import factories
from web import streams


def test_a_cursor_keeps_the_exact_kick_off(app, client, people):
    with app.app_context():
        kickoff = datetime(2026, 5, 1, 12, 0, 0, 500_000, tzinfo=UTC)  # half a second past
        for n in range(3):
            factories.match(f"H{n}", f"A{n}", kickoff=kickoff, status="scheduled")
        expected = [m.id for m in Match.select().order_by(Match.kickoff_at, Match.id)]
    seen, cursor = [], None
    for _ in range(10):
        query = "/api/v1/data/matches?limit=1" + (f"&cursor={cursor}" if cursor else "")
        page = client.get(query, headers=people["pro"][1]).get_json()
        seen += [item["id"] for item in page["items"]]
        cursor = page["nextCursor"]
        if cursor is None:
            break
    assert seen == expected


def test_an_export_never_read_lets_its_snapshot_go(app, people):
    with app.app_context():
        for day in range(3):
            factories.match(
                f"H{day}", f"A{day}", kickoff=datetime(2026, 5, 1, tzinfo=UTC) + timedelta(days=day)
            )
        user = people["pro"][0]
        prepared = exports.prepare(user, "matches", {}, "csv", factories.settings())
        snapshot = prepared.snapshot
        assert not snapshot.database.is_closed() and prepared.record.row_count == 3
        prepared.close()  # a response dropped before its body was read closes it like this
        assert snapshot.database.is_closed()
        prepared.close()  # and again, harmlessly, when the response closes too
        again = exports.prepare(user, "matches", {}, "csv", factories.settings())
        with app.test_request_context():
            body = b"".join(streams.response(again).iter_encoded())
        assert body.decode().count("\n") == 4  # header and three rows
        assert again.snapshot.database.is_closed()


class Ticks:
    """A clock the test moves: seconds, as ``time.monotonic`` gives them."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


CHUNK = 64 * 1024


@pytest.fixture
def sockets():
    """Connected sockets a test's streams write to, closed after it."""
    made = []

    def pair():
        made.extend(socket.socketpair())
        return made[-2]

    yield pair
    for sock in made:
        sock.close()


def _reader(exports_, clock, sock, seconds_per_chunk, chunks):
    """A stream whose reader takes each 64 KiB chunk in ``seconds_per_chunk``: the slot after
    ``chunks`` whole chunks, with the next one handed to the server."""
    slot = exports_.claim(1, sock)
    for _ in range(chunks):
        slot.sending()
        clock.now += seconds_per_chunk
        slot.sent(CHUNK)
    slot.sending()
    return slot


def test_a_reader_that_drips_is_cut_once_it_has_kept_the_stream_waiting_the_send_timeout(
    sockets,
):
    """A reader at 3 KB/s takes each chunk in 21 s, under the 30 s a chunk may wait: it held its
    place for ever. Under the minimum rate, it is cut once the stream has waited 30 s on it."""
    clock = Ticks()
    exports_ = streams.ExportStreams(2, 4, send_timeout=30.0, min_rate=16384, clock=clock)
    slot = _reader(exports_, clock, sockets(), CHUNK / 3072, 1)
    assert exports_.cut_slow(29.5) == [] and not slot.cut  # 29.5 s waited in all: not yet
    assert exports_.cut_slow(30.5) == [slot] and slot.cut
    slot.release()


def test_a_reader_at_the_minimum_rate_or_faster_is_never_cut(sockets):
    clock = Ticks()
    exports_ = streams.ExportStreams(2, 4, send_timeout=30.0, min_rate=16384, clock=clock)
    steady = _reader(exports_, clock, sockets(), CHUNK / 20_000, 40)  # 20 KB/s, 131 s waited
    fast = _reader(exports_, clock, sockets(), 0.001, 1000)
    clock.now += 1.0
    assert exports_.cut_slow(clock.now) == [] and not steady.cut and not fast.cut
    clock.now += 30.0  # a chunk unsent for 30 s is a stall, whatever the rate before
    assert set(exports_.cut_slow(clock.now)) == {steady, fast}
    steady.release()
    fast.release()


def test_no_minimum_rate_keeps_only_the_stall_rule(sockets):
    clock = Ticks()
    exports_ = streams.ExportStreams(2, 4, send_timeout=30.0, min_rate=0, clock=clock)
    slot = _reader(exports_, clock, sockets(), CHUNK / 3072, 5)
    clock.now += 29.0
    assert exports_.cut_slow(clock.now) == [] and not slot.cut
    slot.release()
