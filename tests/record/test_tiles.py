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
from models import LedgerEntry
from services.record import signed_log, tiles
from store.database import db
from tests import factories
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
    start = signed_log.size()
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
        notes.parse_verifier_key(signed_log.head(factories.settings())["verifier_key"]).verify(
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
    assert first["verifierKey"] == signed_log.head(factories.settings())["verifier_key"]
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
