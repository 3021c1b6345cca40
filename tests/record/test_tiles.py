"""The ledger served as C2SP tlog-tiles: every tile and entry bundle byte for byte against a tree
recomputed here from the entries (sizes 0, 1, 255, 256, 257 and 70,000), the spec's paths and
examples, the published test log of transparency-dev/serverless-log, caching and limits; and
the bulk answers an audit reads beside them (checkpoints, reveals, match facts)."""

import base64
import gzip
import hashlib
import json
from datetime import UTC, datetime, timedelta

import pytest

from engine.ledger import merkle, notes
from errors import NotFound, ValidationFailed
from models import LedgerCheckpoint, LedgerEntry, Match
from services.record import log_reading, settling, signed_log, tiles
from store.database import db
from tests import factories
from tests.helpers import counted_queries
from tests.verifier import load_verifier

verifier = load_verifier()
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
PREFIX = "/api/track-record/ledger/tiles"


def body(position: int) -> bytes:
    """A stand-in entry: canonical JSON of varied length (tiles carry any bytes)."""
    return json.dumps({"n": position, "pad": "x" * (position % 37)}, separators=(",", ":")).encode()


def grow(size: int, now=T0) -> None:
    """Append entries up to ``size`` and sign a checkpoint, as an operation that appends does
    (the entries written directly: no picks settled for a 70,000-entry tree)."""
    start = log_reading.size()
    bodies = [body(position) for position in range(start, size)]
    with db.atomic():
        signed_log._append(["pick.published"] * len(bodies), list(range(start, size)), bodies, now)
        signed_log.checkpoint(now, factories.settings())


def mth_levels(size: int) -> dict[int, list[bytes]]:
    """Every complete subtree hash of the tree over :func:`body` entries, by tree level,
    computed here from the entries alone (RFC 6962 §2.1, pairwise)."""
    level = [hashlib.sha256(b"\x00" + body(n)).digest() for n in range(size)]
    levels = {0: level}
    height = 0
    while len(level) > 1:
        level = [
            hashlib.sha256(b"\x01" + level[at] + level[at + 1]).digest()
            for at in range(0, len(level) - 1, 2)
        ]
        height += 1
        levels[height] = level
    return levels


def expected(tile_level: int, index: int, width: int, levels) -> bytes:
    """tlog-tiles: ``MTH(D[(n·256 + i)·256^l : (n·256 + i + 1)·256^l])`` for i < width."""
    row = levels[tile_level * 8]
    return b"".join(row[index * 256 + i] for i in range(width))


def expected_bundle(index: int, width: int) -> bytes:
    out = b""
    for n in range(index * 256, index * 256 + width):
        data = body(n)
        out += len(data).to_bytes(2, "big") + data
    return out


def get(client, path, **headers):
    return client.get(PREFIX + path, headers=headers)


@pytest.mark.parametrize("size", [0, 1, 255, 256, 257])
def test_every_tile_and_bundle_is_the_recomputed_tree_byte_for_byte(ctx, app, size):
    client = app.test_client()
    if size:
        grow(size)
    levels = mth_levels(size)
    listed = merkle.tiles_of(size)
    assert len(listed) == {0: 0, 1: 1, 255: 1, 256: 2, 257: 3}[size]
    for level, index, width in listed:
        response = get(client, "/" + tiles.tile_path(level, index, width))
        assert response.status_code == 200, (level, index, width)
        assert response.mimetype == "application/octet-stream"
        assert response.data == expected(level, index, width, levels)
        if level == 0:
            bundle = get(client, "/" + tiles.tile_path(None, index, width))
            assert bundle.data == expected_bundle(index, width)
            full = width == 256
            assert ("immutable" in bundle.headers["Cache-Control"]) is full
        assert ("immutable" in response.headers["Cache-Control"]) is (width == 256)
    # nothing beyond the signed tree: one hash more is a 404 (a full tile where only a partial
    # one is complete, too)
    beyond = tiles.tile_path(0, size // 256, size % 256 + 1)
    assert get(client, "/" + beyond).status_code == 404
    assert get(client, "/" + beyond.replace("tile/0/", "tile/entries/")).status_code == 404
    checkpoint = get(client, "/checkpoint")
    if size == 0:
        assert checkpoint.status_code == 404
        return
    assert checkpoint.mimetype == "text/plain"
    assert checkpoint.mimetype_params["charset"] == "utf-8"
    opened = notes.parse_checkpoint(
        notes.parse_verifier_key(log_reading.head(factories.settings())["verifier_key"]).verify(
            checkpoint.get_data(as_text=True)
        )
    )
    assert opened.size == size
    assert opened.root == merkle.root(levels[0])


def test_a_tree_of_70000_entries_is_the_specs_example_and_its_tiles_are_the_tree(ctx, app):
    """tlog-tiles' own example: 273 full level-0 tiles, a partial one of 112, one full level-1
    tile, a partial one of 17 and a level-2 tile of 1; each checked against the recomputed
    tree (every tile above level 0, and level-0 tiles and bundles at both ends and between)."""
    client = app.test_client()
    grow(70_000)
    levels = mth_levels(70_000)
    listed = merkle.tiles_of(70_000)
    partial = [tile for tile in listed if tile[2] != 256]
    assert partial == [(0, 273, 112), (1, 1, 17), (2, 0, 1)]
    assert sum(1 for level, _, width in listed if level == 0 and width == 256) == 273
    assert [(level, index) for level, index, width in listed if level == 1] == [(1, 0), (1, 1)]
    for level, index, width in listed:
        if level == 0 and index not in (0, 1, 136, 272, 273):
            continue
        response = get(client, "/" + tiles.tile_path(level, index, width))
        assert response.data == expected(level, index, width, levels), (level, index, width)
        if level == 0:
            bundle = get(
                client, "/" + tiles.tile_path(None, index, width), **{"Accept-Encoding": "gzip"}
            )
            assert bundle.headers["Content-Encoding"] == "gzip"
            assert gzip.decompress(bundle.data) == expected_bundle(index, width)
    # a client verifies the root from the tiles alone (verifier's reading of them)
    assert verifier.root_from_tiles(
        70_000,
        lambda level, index, width: get(client, "/" + tiles.tile_path(level, index, width)).data,
    ) == merkle.root(levels[0])


@pytest.mark.parametrize(
    ("index", "path"),
    [
        (0, "000"),
        (5, "005"),
        (255, "255"),
        (999, "999"),
        (1000, "x001/000"),
        (1234067, "x001/x234/067"),
        (999999999999999999, "x999/x999/x999/x999/x999/999"),
    ],
)
def test_tile_indexes_are_written_as_the_spec_writes_them(index, path):
    """tlog-tiles: "index 1234067 will be encoded as x001/x234/067" (and transparency-dev's
    path tests: the 63rd level, partial widths)."""
    assert tiles.encode_index(index) == path
    assert tiles.parse(f"0/{path}") == tiles.Tile(0, index, 256)
    assert tiles.parse(f"63/{path}.p/255") == tiles.Tile(63, index, 255)
    assert tiles.parse(f"entries/{path}.p/1") == tiles.Tile(None, index, 1)
    assert tiles.tile_path(1, index, 7) == f"tile/1/{path}.p/7"
    assert verifier.tile_path(1, index, 7) == f"tile/1/{path}.p/7"


@pytest.mark.parametrize(
    "path",
    [
        "0/1",  # not 3 digits
        "0/0001",
        "00/000",  # a level with a leading zero
        "64/000",  # levels are 0 to 63
        "63/000",  # a level the spec spells, but no tree reaches
        "0/x000/001",  # a leading zero group: another spelling of 1
        "0/001/002",  # a last-but-one group without x
        "0/000.p/0",  # widths are 1 to 255
        "0/000.p/256",
        "0/000.p/07",
        "data/000",
        "0/000/",
    ],
)
def test_a_path_the_spec_does_not_spell_is_a_404(client, path):
    response = client.get(f"{PREFIX}/tile/{path}")
    assert response.status_code == 404
    assert response.mimetype == "application/problem+json"


SERVERLESS_LEAVES = [
    *("one", "two", "three", "four", "five", "six", "seven", "eit", "nain", "ten"),
    *("ileven", "twelf", "threeten", "fourten", "fivten"),
]
#: transparency-dev/serverless-log testdata/log: the test log's public key and checkpoints of
#: its first sizes, over the leaves above (testdata/build_log.sh), as published.
SERVERLESS_KEY = "astra+cad5a3d2+AZJqeuyE/GnknsCNh1eCtDtwdAwKBddOlS8M2eI1Jt4b"
SERVERLESS_CHECKPOINTS = {
    0: "example.com/testdata\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n\n"
    "— astra ytWj0vyk8mOOKGTcc4inCsUD4jQTYNX/r820NAqdU6Fsj8PpEU+m74Z6SMW0BGapHgIw2xsYd9P3+E8PdXWc"
    "j0zTeAs=\n",
    1: "example.com/testdata\n1\n0Nc2CrefWKseHj/mStd+LqC8B+NrX0btIiPt2SmN+ek=\n\n"
    "— astra ytWj0qJ+vbcrczZs9oOK0B9o0Z2H0BJB+ekrNMeJclrjpCY60XqAE5CJV9q6jRnUqthwdpkXLMhxCkv/7OUU"
    "CtZvNwM=\n",
    2: "example.com/testdata\n2\nT1X2GdkhUjV3iyufF9b0kVsWFxIU0VI4EpNml2Teci4=\n\n"
    "— astra ytWj0hjRw9ubRMzxxs+mNZaMlB9++99U9CUeomuJ+GkPOb+/fcbOk4mWcWEG6P0QW5saBs7v+GRFOfaPQg5+"
    "8GxXxgg=\n",
    15: "example.com/testdata\n15\nrKbDipCvhuX1GZ7g5BBe8sA6BbJ7ja/1nk427v383cs=\n\n"
    "— astra ytWj0iUyv3abfvt9ea52PCdTsNBiHBss+L7Z1nMhVcsoh+Re7YASWz78PrjiocC8gvkBUaDrV2Y3Ez2THNxC"
    "WnbpkQE=\n",
}


@pytest.mark.parametrize("size", sorted(SERVERLESS_CHECKPOINTS))
def test_a_published_tile_log_checks_out_with_our_hashing_and_the_verifiers_notes(size):
    """An outside vector: transparency-dev's serverless test log. Its signed checkpoints verify
    under its key with the verifier's signed-note code, and their roots are the tree our
    tiles hold over its leaves (a level-0 partial tile, read back by the verifier)."""
    key = verifier.Key.parse(SERVERLESS_KEY)
    text = key.open(SERVERLESS_CHECKPOINTS[size])
    origin, size_line, root_line = text.split("\n")[:3]
    assert origin == "example.com/testdata" and int(size_line) == size
    leaves = [merkle.leaf_hash(leaf.encode()) for leaf in SERVERLESS_LEAVES[:size]]
    tile = b"".join(leaves)
    assert merkle.root(leaves) == base64.b64decode(root_line)
    if size:
        assert verifier.root_from_tiles(size, lambda level, index, width: tile) == merkle.root(
            leaves
        )
    tampered = SERVERLESS_CHECKPOINTS[size].replace(f"\n{size}\n", f"\n{size + 1}\n")
    with pytest.raises(verifier.Failed):
        key.open(tampered)


def test_tiles_have_a_generous_limit_of_their_own(make_app):
    """Tiles and the bulk answers count against RATELIMIT_TILES, not the public reads' 120 a
    minute: an audit's thousand requests pass; the limit still holds."""
    app = make_app(RATELIMIT_TILES="3 per minute", RATELIMIT_PUBLIC="1000 per minute")
    client = app.test_client()
    with app.app_context():
        grow(3)
    for _ in range(3):
        assert client.get(f"{PREFIX}/tile/0/000.p/3").status_code == 200
    refused = client.get(f"{PREFIX}/checkpoint")
    assert refused.status_code == 429 and "Retry-After" in refused.headers
    assert refused.mimetype == "application/problem+json"
    assert client.get("/api/track-record/ledger").status_code == 200  # another counter


def test_checkpoints_are_listed_page_by_page(ctx, app, monkeypatch):
    client = app.test_client()
    for size in (2, 5, 9):
        grow(size, T0 + timedelta(minutes=size))
    monkeypatch.setattr(tiles, "CHECKPOINTS_PAGE", 2)
    first = client.get("/api/track-record/ledger/checkpoints").get_json()
    assert [item["size"] for item in first["items"]] == [2, 5] and first["more"] is True
    assert first["verifierKey"] == log_reading.head(factories.settings())["verifier_key"]
    rest = client.get("/api/track-record/ledger/checkpoints?after=5").get_json()
    assert [item["size"] for item in rest["items"]] == [9] and rest["more"] is False
    assert rest["items"][0]["signedNote"] == client.get(f"{PREFIX}/checkpoint").get_data(
        as_text=True
    )


class Clock:
    def __init__(self, now):
        self.now = now

    def __call__(self):
        return self.now


def test_bundles_hold_the_entries_bytes_and_no_sealed_field(make_app):
    """A published pick's entry bundle holds its canonical entry (the commitment), never the
    sealed selection or price: a pick rated A stays sealed until kick-off, and its reveal comes
    from /ledger/reveals only then, while the bundle's bytes never change."""
    clock = Clock(T0)
    app = make_app(CLOCK=clock)
    client = app.test_client()
    kickoff = T0 + timedelta(days=1)
    with app.app_context():
        match = factories.match("Alpha", "Beta", kickoff=kickoff, status="scheduled")
        factories.pick(match, "1x2", "home", 3.1, is_live=True, rating="A", created_at=T0)
        with db.atomic():
            signed_log.publish_new([match.id], T0, "test-1")
            signed_log.checkpoint(T0, factories.settings())
        stored = LedgerEntry.get(LedgerEntry.position == 0).body.encode()
    data = client.get(f"{PREFIX}/tile/entries/000.p/1").data
    assert data == len(stored).to_bytes(2, "big") + stored
    assert b"3.1" not in data and b'"selection"' not in data and b"commitment" in data
    sealed = client.get("/api/track-record/ledger/reveals").get_json()
    assert sealed == {"start": 0, "end": 1, "items": []}
    clock.now = kickoff
    shown = client.get("/api/track-record/ledger/reveals").get_json()["items"]
    assert [item["index"] for item in shown] == [0]
    assert shown[0]["reveal"]["pick"]["selection"] == "home"
    assert client.get(f"{PREFIX}/tile/entries/000.p/1").data == data


def test_match_facts_give_a_span_of_days(make_app):
    app = make_app(CLOCK=Clock(T0))
    client = app.test_client()
    with app.app_context():
        first = factories.match("Alpha", "Beta", kickoff=T0, status="finished", goals=(2, 1))
        second = factories.match(
            "Gamma", "Delta", kickoff=T0 + timedelta(days=2), status="scheduled"
        )
        factories.match("Eta", "Theta", kickoff=T0 + timedelta(days=9))
    answer = client.get("/api/track-record/ledger/matches?from=2026-03-01&days=7")
    assert answer.status_code == 200 and "max-age" in answer.headers["Cache-Control"]
    items = answer.get_json()["items"]
    assert [item["id"] for item in items] == [first.id, second.id]
    assert items[0] == {
        "id": first.id,
        "kickoffAt": "2026-03-01T09:00:00Z",
        "status": "finished",
        "score": {"home": 2, "away": 1},
    }
    assert items[1]["score"] is None
    refused = client.get("/api/track-record/ledger/matches?from=2026-03-01&days=8")
    assert refused.status_code == 422 and refused.mimetype == "application/problem+json"


# The service's answers at their edges, called directly


def test_a_bundle_holds_entries_up_to_a_uint16_and_refuses_a_longer_one():
    largest = b"x" * tiles.MAX_ENTRY
    assert tiles.bundle([b"", largest]) == b"\x00\x00" + b"\xff\xff" + largest
    assert tiles.bundle([b"ab" * 150]) == b"\x01\x2c" + b"ab" * 150  # 300: big-endian
    with pytest.raises(ValueError, match=r"^an entry of 65536 bytes does not fit a bundle$"):
        tiles.bundle([b"ok", largest + b"x"])


def test_a_bundle_is_gzipped_from_a_kilobyte_the_same_bytes_every_time():
    small = bytes(range(256)) * 3 + b"y" * (tiles.GZIP_FROM - 769)
    assert len(small) == tiles.GZIP_FROM - 1
    assert tiles.compressed(small, True) == (small, False)
    large = small + b"z"
    assert tiles.compressed(large, False) == (large, False)
    data, gzipped = tiles.compressed(large, True)
    assert gzipped and gzip.decompress(data) == large
    # RFC 1952: MTIME, bytes 4 to 7, is 0 (no time): a tile's gzipped bytes never change.
    assert data[4:8] == b"\x00\x00\x00\x00"
    assert tiles.compressed(large, True) == (data, True)


def test_a_path_is_parsed_within_the_specs_ranges_or_refused_by_name():
    assert tiles.parse("63/000") == tiles.Tile(63, 0, 256)
    assert tiles.parse("0/000.p/255") == tiles.Tile(0, 0, 255)
    assert tiles.parse("entries/x001/000") == tiles.Tile(None, 1000, 256)
    for path, why in (
        ("64/000", "No tile at '64/000'."),
        ("0/0001", "No tile at '0/0001'."),
        ("0/000.p/256", "No tile at '0/000.p/256': a partial tile is 1 to 255 wide."),
        ("0/x000/001", "No tile at '0/x000/001'."),
    ):
        with pytest.raises(NotFound) as refused:
            tiles.parse(path)
        assert refused.value.detail == why


def test_a_tile_past_the_signed_ledger_is_not_found_at_any_level(ctx):
    grow(255)
    assert len(tiles.read(tiles.Tile(0, 0, 255))) == 255 * 32
    # A level-1 tile of one hash needs 256 entries, whatever level 0 holds.
    with pytest.raises(NotFound) as refused:
        tiles.read(tiles.Tile(1, 0, 1))
    assert refused.value.detail == "No tile tile/1/000.p/1 in the signed ledger."
    with pytest.raises(NotFound):
        tiles.read(tiles.Tile(None, 0, 256))


def signed_past_the_entries(size: int) -> None:
    """A checkpoint row of ``size`` with the ledger holding fewer entries (a database restored
    from two backups): what is signed and what is stored disagree."""
    latest = LedgerCheckpoint.select().order_by(LedgerCheckpoint.size.desc()).first()
    LedgerCheckpoint.insert(
        size=size,
        root_hash=latest.root_hash,
        published_at=latest.published_at,
        signed_note=latest.signed_note,
        key_id=latest.key_id,
    ).execute()


def test_a_tile_the_stored_tree_cannot_give_is_an_error_never_short_bytes(ctx):
    grow(3)
    signed_past_the_entries(7 * 256)
    with pytest.raises(RuntimeError, match=r"^the ledger lacks entries of tile/0/000\.p/5$"):
        tiles.read(tiles.Tile(0, 0, 5))
    with pytest.raises(RuntimeError, match=r"^the ledger lacks entries of tile/entries/000$"):
        tiles.read(tiles.Tile(None, 0, 256))
    expected_message = r"^the ledger tree lacks the tile tile/1/000\.p/6's nodes \[0, 1, 2, 3, 4\]$"
    with pytest.raises(RuntimeError, match=expected_message):
        tiles.read(tiles.Tile(1, 0, 6))


def test_the_checkpoint_note_is_not_found_before_the_first(ctx):
    with pytest.raises(NotFound) as refused:
        tiles.checkpoint_note()
    assert refused.value.detail == "The ledger has no signed checkpoint yet."
    grow(1)
    assert tiles.checkpoint_note() == LedgerCheckpoint.get().signed_note


def test_a_page_of_checkpoints_says_whether_more_follow_in_a_fixed_number_of_queries(
    ctx, monkeypatch
):
    for size in (2, 5, 9, 12):
        grow(size, T0 + timedelta(minutes=size))
    monkeypatch.setattr(tiles, "CHECKPOINTS_PAGE", 2)
    settings = factories.settings()
    key = log_reading.head(settings)
    with counted_queries() as two_rows:
        page = tiles.checkpoints(5, settings)
    assert {name: page[name] for name in ("origin", "verifier_key", "after", "more")} == {
        "origin": key["origin"],
        "verifier_key": key["verifier_key"],
        "after": 5,
        "more": False,  # exactly a page left
    }
    assert page["items"] == [
        log_reading.checkpoint_record(LedgerCheckpoint.get(LedgerCheckpoint.size == size))
        for size in (9, 12)
    ]
    with counted_queries() as one_row:
        assert [item["size"] for item in tiles.checkpoints(9, settings)["items"]] == [12]
    assert len(two_rows) == len(one_row) == 3  # the page, its time-stamps, its cosignatures
    assert tiles.checkpoints(0, settings)["more"] is True


def reveal_history(clock):
    """Three live B picks published before their kick-off (entries 0 to 2), the first two then
    settled (entries 3 and 4), each operation signing a checkpoint: the picks."""
    picks = []
    for home in ("Alpha", "Gamma", "Epsilon"):
        match = factories.match(
            home, f"{home} Away", kickoff=T0 + timedelta(days=1), status="scheduled"
        )
        picks.append(
            factories.pick(match, "1x2", "home", 2.5, is_live=True, rating="B", created_at=T0)
        )
    with db.atomic():
        signed_log.publish_new([pick.match_id for pick in picks], T0, "test-1")
        signed_log.checkpoint(T0, factories.settings())
    for pick in picks[:2]:
        factories.match(
            pick.match.home_team.name, pick.match.away_team.name, kickoff=T0 + timedelta(days=1)
        )
    clock.now = T0 + timedelta(days=2)
    settling.run(7, factories.settings(), now=clock.now)
    return picks


def test_reveals_span_a_range_of_entries_published_ones_only(make_app):
    clock = Clock(T0)
    app = make_app(CLOCK=clock)
    with app.app_context():
        picks = reveal_history(clock)
        assert log_reading.signed_size() == 5
        now = clock.now

        def shown(start, end=None):
            answer = tiles.reveals(start, end, now)
            return answer["start"], answer["end"], [item["index"] for item in answer["items"]]

        assert shown(0) == (0, 5, [0, 1, 2])  # not the settled entries 3 and 4
        assert shown(1, 2) == (1, 2, [1])
        assert shown(2, 2) == (2, 2, [])
        assert shown(5) == (5, 5, [])  # at the signed size: nothing yet
        first = tiles.reveals(0, 1, now)["items"][0]["reveal"]
        assert first["pick"]["id"] == picks[0].id and first["pick"]["selection"] == "home"
        for start, end, field, message, errors in (
            (6, None, "start", "start is past the signed ledger's 5 entries.", "at most 5."),
            (
                2,
                1,
                "end",
                "end must lie in [start, start + 10000] and not past the signed "
                "ledger's 5 entries.",
                "at least 2, at most 5.",
            ),
            (0, 6, "end", None, "at least 0, at most 5."),
        ):
            with pytest.raises(ValidationFailed) as refused:
                tiles.reveals(start, end, now)
            assert message is None or refused.value.detail == message
            assert refused.value.errors == {field: [f"Must be {errors}"]}


def test_match_facts_take_whole_utc_days_the_last_one_excluded(ctx):
    midnight = datetime(2026, 3, 1, tzinfo=UTC)
    later = factories.match("Gamma", "Delta", kickoff=midnight + timedelta(hours=30))
    first = factories.match("Alpha", "Beta", kickoff=midnight, status="scheduled")
    factories.match("Eta", "Theta", kickoff=midnight + timedelta(days=2))  # the third day
    factories.match("Iota", "Kappa", kickoff=midnight - timedelta(seconds=1))
    half = factories.match("Mu", "Nu", kickoff=midnight + timedelta(hours=12))
    Match.update(away_goals=None).where(Match.id == half.id).execute()  # a score half stored
    facts = tiles.match_facts(midnight.date(), 2)
    assert facts["first"] == midnight.date() and facts["days"] == 2
    assert [item["id"] for item in facts["items"]] == [later.id, first.id, half.id]  # by id
    assert facts["items"][0] == {
        "id": later.id,
        "kickoff_at": midnight + timedelta(hours=30),
        "status": "finished",
        "score": {"home": 2, "away": 1},
    }
    assert [item["score"] for item in facts["items"][1:]] == [None, None]
    assert [item["id"] for item in tiles.match_facts(midnight.date(), 1)["items"]] == [
        first.id,
        half.id,
    ]
    for days in (0, 8):
        with pytest.raises(ValidationFailed) as refused:
            tiles.match_facts(midnight.date(), days)
        assert refused.value.detail == "days must be 1 to 7."
        assert refused.value.errors == {"days": ["Must be 1 to 7."]}
