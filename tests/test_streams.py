"""What outlives a request must not: a match-feed cursor that loses its place, an export whose
snapshot stays open when its body is never read."""

from datetime import UTC, datetime, timedelta

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
