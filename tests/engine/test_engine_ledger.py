"""The ledger's mathematics: the RFC 9162 tree and its proofs, canonical entries and commitments,
signed notes and checkpoints, each against published vectors or an independent reference."""

import base64
import hashlib
import itertools
import json
from datetime import UTC, datetime, timedelta, timezone

import numpy as np
import pytest

from engine.ledger import entries, merkle, notes
from tests.verifier import load_verifier

verifier = load_verifier()

# The Certificate Transparency reference vectors (RFC 6962, as published with the
# transparency-dev/merkle proof tests): eight leaves, the root of each prefix, and some proofs.
CT_LEAVES = [
    bytes.fromhex(text)
    for text in (
        "",
        "00",
        "10",
        "2021",
        "3031",
        "40414243",
        "5051525354555657",
        "606162636465666768696a6b6c6d6e6f",
    )
]
CT_ROOTS = [
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]
CT_INCLUSION = [  # (leaf index, tree size, proof)
    (
        0,
        8,
        [
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ],
    ),
    (
        5,
        8,
        [
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
    (2, 3, ["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"]),
    (
        1,
        5,
        [
            "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        ],
    ),
]
CT_CONSISTENCY = [  # (old size, new size, proof)
    (1, 1, []),
    (
        1,
        8,
        [
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ],
    ),
    (
        6,
        8,
        [
            "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
    (
        2,
        5,
        [
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        ],
    ),
    (
        6,
        7,
        [
            "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
]

# Go's sumdb/note documentation example: a key pair, a text and its signed note.
GO_SIGNING_KEY = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
GO_VERIFIER_KEY = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
GO_TEXT = (
    "If you think cryptography is the answer to your problem,\n"
    "then you don't know what your problem is.\n"
)
GO_NOTE = (
    GO_TEXT + "\n\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZ"
    "SNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n"
)


def reference_root(leaves: list[bytes]) -> bytes:
    """MTH as RFC 9162 §2.1.1 writes it: recursive, on the data itself (an independent
    reference for the engine's stack of perfect subtrees)."""
    if not leaves:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return hashlib.sha256(b"\x00" + leaves[0]).digest()
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    left, right = reference_root(leaves[:k]), reference_root(leaves[k:])
    return hashlib.sha256(b"\x01" + left + right).digest()


class Store:
    """A tree kept as the service keeps it: leaf hashes, the perfect subtrees above them, and a
    record of every lookup."""

    def __init__(self, leaves=()):
        self.leaves, self.nodes, self.frontier, self.looked_up = [], {}, [], []
        self.add(leaves)

    def add(self, data) -> None:
        hashes = [merkle.leaf_hash(item) for item in data]
        made, self.frontier = merkle.append(self.frontier, len(self.leaves), hashes)
        self.leaves.extend(hashes)
        self.nodes.update(((level, index), value) for level, index, value in made)

    def lookup(self, addresses):
        self.looked_up.append(len(addresses))
        return [
            self.leaves[index] if level == 0 else self.nodes[(level, index)]
            for level, index in addresses
        ]


def data(count: int) -> list[bytes]:
    return [f"entry {number}".encode() for number in range(count)]


def test_roots_match_the_reference_vectors():
    for size, expected in enumerate(CT_ROOTS):
        leaves = [merkle.leaf_hash(item) for item in CT_LEAVES[:size]]
        assert merkle.root(leaves).hex() == expected
        assert merkle.tree_root(size, Store(CT_LEAVES[:size]).lookup).hex() == expected


@pytest.mark.parametrize(("index", "size", "proof"), CT_INCLUSION)
def test_inclusion_proofs_match_the_reference_vectors(index, size, proof):
    store = Store(CT_LEAVES[:size])
    assert [value.hex() for value in merkle.inclusion_proof(index, size, store.lookup)] == proof


@pytest.mark.parametrize(("old", "new", "proof"), CT_CONSISTENCY)
def test_consistency_proofs_match_the_reference_vectors(old, new, proof):
    store = Store(CT_LEAVES[:new])
    assert [value.hex() for value in merkle.consistency_proof(old, new, store.lookup)] == proof


def test_every_inclusion_proof_up_to_64_verifies_by_rfc_9162_and_nothing_else_does():
    store = Store(data(64))
    for size in range(1, 65):
        root = merkle.tree_root(size, store.lookup)
        assert root == reference_root(data(size))
        for index in range(size):
            proof = merkle.inclusion_proof(index, size, store.lookup)
            leaf = store.leaves[index]
            assert verifier.verify_inclusion(index, size, leaf, proof, root), (index, size)
            assert not verifier.verify_inclusion(index, size, store.leaves[index - 1], proof, root)
            if size > 1:
                assert not verifier.verify_inclusion((index + 1) % size, size, leaf, proof, root)
            if proof:
                flipped = [bytes([proof[0][0] ^ 8]) + proof[0][1:], *proof[1:]]
                assert not verifier.verify_inclusion(index, size, leaf, flipped, root)
                assert not verifier.verify_inclusion(index, size, leaf, proof[:-1], root)
                assert not verifier.verify_inclusion(index, size, leaf, [*proof, root], root)


def test_every_consistency_proof_up_to_64_verifies_by_rfc_9162_and_nothing_else_does():
    store = Store(data(64))
    roots = [merkle.tree_root(size, store.lookup) for size in range(65)]
    for new in range(1, 65):
        for old in range(new + 1):
            proof = merkle.consistency_proof(old, new, store.lookup)
            assert verifier.verify_consistency(old, new, roots[old], roots[new], proof), (old, new)
            if 0 < old < new:
                assert not verifier.verify_consistency(old, new, roots[old - 1], roots[new], proof)
                assert not verifier.verify_consistency(old, new, roots[old], roots[new - 1], proof)
                flipped = [*proof[:-1], bytes([proof[-1][0] ^ 16]) + proof[-1][1:]]
                assert not verifier.verify_consistency(old, new, roots[old], roots[new], flipped)
                assert not verifier.verify_consistency(old, new, roots[old], roots[new], proof[1:])


def test_appending_in_any_chunks_gives_the_same_tree():
    whole = Store(data(100))
    for chunk in (1, 3, 7, 64):
        pieces = Store()
        items = data(100)
        for start in range(0, 100, chunk):
            pieces.add(items[start : start + chunk])
        assert pieces.nodes == whole.nodes
        assert pieces.frontier == whole.frontier
    # One perfect subtree per leaf beyond the first, less one per set bit of the size.
    assert len(whole.nodes) == 100 - bin(100).count("1")


def test_a_root_or_proof_is_a_logarithmic_number_of_lookups():
    for size in (2**20 - 1, 2**20, 2**20 + 1, 987_654_321):
        depth = size.bit_length()
        assert len(merkle.range_addresses([(0, size)])) <= depth
        for index in (0, size // 3, size - 1):
            assert len(merkle.range_addresses(merkle.inclusion_ranges(index, size))) <= 2 * depth
        for old in (1, size // 2, size - 1):
            assert len(merkle.range_addresses(merkle.consistency_ranges(old, size))) <= 2 * depth
    store = Store(data(1000))
    merkle.consistency_proof(333, 1000, store.lookup)
    assert store.looked_up == [len(merkle.range_addresses(merkle.consistency_ranges(333, 1000)))]


def test_ranges_outside_the_tree_are_refused():
    with pytest.raises(ValueError, match="leaf 5 is not in a tree of 5 leaves"):
        merkle.inclusion_ranges(5, 5)
    with pytest.raises(ValueError, match="no consistency proof from 6 leaves to 5"):
        merkle.consistency_ranges(6, 5)
    with pytest.raises(ValueError, match=r"\[3, 7\) is not a range of the tree's recursion"):
        merkle.subtrees(3, 7)  # not a range the recursion ever names


def test_what_the_tree_cannot_be_made_of_is_refused_by_name():
    with pytest.raises(ValueError, match=r"^a tree of 1 leaves does not split$"):
        merkle.split(1)
    for start, end in ((3, 3), (4, 3), (-1, 2)):  # empty, backwards, before the first leaf
        with pytest.raises(ValueError, match=rf"^not a range of leaves: \[{start}, {end}\)$"):
            merkle.subtrees(start, end)
    # A tree of 3 leaves is made of 2 perfect subtrees (2 + 1): one frontier hash is too few.
    with pytest.raises(ValueError, match=r"^a tree of 3 leaves has 2 frontier subtrees$"):
        merkle.append([merkle.leaf_hash(b"x")], 3, [merkle.leaf_hash(b"y")])


def test_a_lookup_must_answer_one_hash_per_address():
    # A store that answers more or fewer hashes than it was asked for is broken: no root or
    # proof is made from what it said.
    store = Store(data(5))

    def extra(addresses):
        return [*store.lookup(addresses), bytes(32)]

    def fewer(addresses):
        return store.lookup(addresses)[:-1]

    assert merkle.tree_root(5, store.lookup) == reference_root(data(5))
    for lookup, said in ((extra, "longer"), (fewer, "shorter")):
        with pytest.raises(ValueError, match=f"argument 2 is {said} than argument 1"):
            merkle.tree_root(5, lookup)
        with pytest.raises(ValueError, match=f"argument 2 is {said} than argument 1"):
            merkle.inclusion_proof(2, 5, lookup)


def test_canonical_json_sorts_keys_drops_spaces_keeps_utf8_and_refuses_floats():
    assert (
        entries.canonical({"b": 1, "a": ["é", None, True]})
        == '{"a":["é",null,true],"b":1}'.encode()
    )
    with pytest.raises(TypeError, match="not a float"):
        entries.canonical({"odds": 2.1})
    for value in (2.1, 1.0, -1.0, 0.1 + 0.2, 1e-05, 123456.789, 2.0**60):
        text = entries.decimal(value)
        assert float(text) == value and "e" not in text


def settled_by(count, rng=None):
    """The columns of what settled ``count`` picks (kick-off, match status and score, closing
    bookmaker and probability, the live rule's verdict), varied, for ``outcome_entries``."""
    rng = rng or np.random.default_rng(7)
    kickoffs = [datetime(2026, 11, 21, 19, 45, tzinfo=UTC), NOW_ELSEWHERE]
    books = ["pinnacle", None, 'bet "365"', "Bookmäker\\ü", "\u2603"]
    statuses = ["finished", "cancelled", "postponed"]
    reasons = [None, None, "made-after-kickoff", "not-in-ledger", "signed-after-kickoff"]
    lines = [None, "source", "seen"]
    home = [None if rng.random() < 0.2 else int(rng.integers(0, 12)) for _ in range(count)]
    return {
        "kickoff_at": [kickoffs[int(rng.integers(0, 2))] for _ in range(count)],
        "match_status": [statuses[int(rng.integers(0, 3))] for _ in range(count)],
        "home_goals": home,
        "away_goals": [None if goals is None else int(rng.integers(0, 9)) for goals in home],
        "closing_bookmaker": [books[int(rng.integers(0, len(books)))] for _ in range(count)],
        "closing_probability": [
            None if rng.random() < 0.2 else float(rng.uniform(0, 1)) for _ in range(count)
        ],
        "closing_line": [lines[int(rng.integers(0, len(lines)))] for _ in range(count)],
        "margin_method": "power",
        "not_live_reason": [reasons[int(rng.integers(0, len(reasons)))] for _ in range(count)],
    }


def one_outcome(columns: dict, index: int) -> dict:
    """Row ``index`` of ``settled_by``'s columns as ``outcome_entry``'s keywords."""
    home, away = columns["home_goals"][index], columns["away_goals"][index]
    return {
        "kickoff_at": columns["kickoff_at"][index],
        "match_status": columns["match_status"][index],
        "score": None if home is None else (home, away),
        "closing_bookmaker": columns["closing_bookmaker"][index],
        "closing_probability": columns["closing_probability"][index],
        "closing_line": columns["closing_line"][index],
        "margin_method": columns["margin_method"],
        "not_live_reason": columns["not_live_reason"][index],
    }


def test_outcome_entries_from_the_template_equal_the_canonical_encoding():
    at = datetime(2026, 11, 21, 21, 40, tzinfo=UTC)
    cited = [hashlib.sha256(bytes([n])).digest() for n in range(4)]
    rows = (
        [1, 2, 3, 4],
        cited,
        ["won", "lost", "void", "won"],
        [1.1000000000000001, -1.0, 0.0, 11.5],
        [2.05, None, 3.0, 1e-05],
        [0.0243902439, None, -0.1, 3.5],
    )
    extra = settled_by(4)
    fast = entries.outcome_entries(
        rows[0], [value.hex() for value in cited], *rows[2:], at, **extra
    )
    for position, entry in enumerate(fast):
        pick_id, published, status, profit, closing, clv = (column[position] for column in rows)
        assert entry == entries.outcome_entry(
            pick_id=pick_id,
            published=published,
            status=status,
            profit=profit,
            closing_odds=closing,
            clv=clv,
            settled_at=at,
            **one_outcome(extra, position),
        )
        assert entries.canonical(json.loads(entry)) == entry


def test_an_outcome_records_what_settled_the_pick():
    entry = json.loads(
        entries.outcome_entry(
            pick_id=3,
            published=bytes(32),
            status="won",
            profit=1.5,
            closing_odds=2.4,
            clv=0.0417,
            settled_at=datetime(2026, 11, 22, 9, 0, tzinfo=UTC),
            kickoff_at=datetime(2026, 11, 21, 19, 45, tzinfo=UTC),
            match_status="finished",
            score=(2, 1),
            closing_bookmaker="pinnacle",
            closing_probability=0.4321,
            closing_line="seen",
            margin_method="power",
            not_live_reason="made-after-kickoff",
        )
    )
    assert entry["closingLine"] == "seen"
    assert entry["kickoffAt"] == "2026-11-21T19:45:00Z"
    assert (entry["matchStatus"], entry["score"]) == ("finished", {"home": 2, "away": 1})
    assert (entry["closingBookmaker"], entry["closingProbability"]) == ("pinnacle", "0.4321")
    assert entry["marginMethod"] == "power"
    assert (entry["live"], entry["notLiveReason"]) == (False, "made-after-kickoff")


H = 3600.0


@pytest.mark.parametrize(
    ("made", "signed", "published", "reason"),
    [
        (-10 * H, -9 * H, True, None),
        (-10 * H, -1.0, True, None),  # a second before kick-off is before it
        (0.0, -9 * H, True, "made-after-kickoff"),  # at kick-off is not before it
        (2 * H, -9 * H, True, "made-after-kickoff"),  # a fixture moved before the pick
        (-10 * H, -9 * H, False, "not-in-ledger"),
        (-10 * H, 0.0, True, "signed-after-kickoff"),
        (-10 * H, 5 * 24 * H, True, "signed-after-kickoff"),  # an entry appended late
        (-10 * H, float("nan"), True, "signed-after-kickoff"),  # no checkpoint covers it
    ],
)
def test_the_live_rule(made, signed, published, reason):
    kickoff = 1_790_000_000.0
    found = entries.not_live_reasons([kickoff + made], [kickoff + signed], [kickoff], [published])
    assert found.tolist() == [reason]


def test_the_live_rule_is_the_verifiers():
    """The standalone verifier re-implements the rule: the two agree on every case above."""
    kickoff = datetime(2026, 11, 21, 19, 45, tzinfo=UTC)
    for made in (-10 * H, -1.0, 0.0, 2 * H):
        for signed in (-9 * H, -1.0, 0.0, 5 * H, None):
            mine = entries.not_live_reasons(
                [kickoff.timestamp() + made],
                [np.nan if signed is None else kickoff.timestamp() + signed],
                [kickoff.timestamp()],
            )[0]
            theirs = verifier.live_reason(
                kickoff + timedelta(seconds=made),
                None if signed is None else kickoff + timedelta(seconds=signed),
                kickoff,
            )
            assert mine == theirs, (made, signed)


PICK = {
    "id": 7,
    "match_id": 42,
    "market": "1x2",
    "selection": "away",
    "odds": 4.33,
    "bookmaker": "bet365",
    "probability": 0.2712345,
    "edge": 0.174445385,
    "rating": "A",
    "stake": 1.0,
    "created_at": datetime(2026, 11, 20, 9, 0, tzinfo=UTC),
}


def test_a_reveal_opens_its_commitment_and_nothing_else_does():
    salt = bytes(range(32))
    entry = json.loads(
        entries.published_entry(
            PICK,
            salt,
            kickoff_at=datetime(2026, 11, 21, 19, 45, tzinfo=UTC),
            competition_type="top-flight",
            model_version="7",
        )
    )
    assert "selection" not in entry and "odds" not in entry
    opened = json.loads(json.dumps(entries.reveal(salt, PICK)))  # as a client reads it
    assert entries.opens(entry["commitment"], opened)
    assert verifier.opens(entry["commitment"], opened)
    for name, value in (("odds", "4.34"), ("selection", "home"), ("bookmaker", "pinnacle")):
        changed = {**opened, "pick": {**opened["pick"], name: value}}
        assert not verifier.opens(entry["commitment"], changed)
    other_salt = {**opened, "salt": bytes(32).hex()}
    assert not verifier.opens(entry["commitment"], other_salt)


def test_notes_sign_and_verify_as_gos_sumdb_note_does():
    key = notes.parse_signing_key(GO_SIGNING_KEY)
    assert key.verifier_key == GO_VERIFIER_KEY
    assert key.encode() == GO_SIGNING_KEY
    assert key.sign(GO_TEXT) == GO_NOTE  # Ed25519 is deterministic: the same bytes
    assert notes.parse_verifier_key(GO_VERIFIER_KEY).verify(GO_NOTE) == GO_TEXT
    assert verifier.Key.parse(GO_VERIFIER_KEY).open(GO_NOTE) == GO_TEXT
    tampered = GO_NOTE.replace("cryptography", "cryptographY")
    with pytest.raises(notes.NoteError):
        notes.parse_verifier_key(GO_VERIFIER_KEY).verify(tampered)
    with pytest.raises(verifier.Failed):
        verifier.Key.parse(GO_VERIFIER_KEY).open(tampered)


def test_a_note_signed_by_another_key_of_the_same_name_is_refused():
    impostor = notes.generate("PeterNeumann")
    forged = impostor.sign(GO_TEXT)
    with pytest.raises(notes.NoteError):
        notes.parse_verifier_key(GO_VERIFIER_KEY).verify(forged)
    with pytest.raises(verifier.Failed):
        verifier.Key.parse(GO_VERIFIER_KEY).open(forged)


def test_a_checkpoint_round_trips_through_its_signed_note():
    key = notes.generate("picks.example/track-record")
    root = merkle.root([merkle.leaf_hash(item) for item in data(5)])
    checkpoint = notes.Checkpoint(key.name, 5, root, ("time 2026-11-21T19:00:00Z",))
    note = key.sign(checkpoint.text())
    assert note.startswith(f"picks.example/track-record\n5\n{base64.b64encode(root).decode()}\n")
    assert notes.parse_checkpoint(notes.parse_verifier_key(key.verifier_key).verify(note)) == (
        checkpoint
    )
    opened = verifier.Checkpoint.open(verifier.Key.parse(key.verifier_key), note)
    assert (opened.size, opened.root) == (5, root)
    assert opened.time == datetime(2026, 11, 21, 19, tzinfo=UTC)


@pytest.mark.parametrize(
    "text",
    [
        "origin\n5\n",
        "origin\n05\nAAAA\n",
        "origin\nfive\n" + base64.b64encode(bytes(32)).decode() + "\n",
        "origin\n5\n" + base64.b64encode(bytes(31)).decode() + "\n",
        "origin\n5\n" + base64.b64encode(bytes(32)).decode() + "\n\n",
    ],
)
def test_malformed_checkpoints_are_refused(text):
    with pytest.raises(notes.NoteError):
        notes.parse_checkpoint(text)


@pytest.mark.parametrize(
    "encoded",
    [
        "PRIVATE+KEY+PeterNeumann+c74f20a4+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz",
        "PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz",
        "PRIVATE+KEY+Peter Neumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz",
        "PRIVATE+KEY+PeterNeumann+c74f20a3+not-base64",
    ],
)
def test_malformed_signing_keys_are_refused(encoded):
    with pytest.raises(notes.NoteError):
        notes.parse_signing_key(encoded)


#: A settlement instant given in another zone: entries write it in UTC.
NOW_ELSEWHERE = datetime(2026, 3, 29, 1, 30, tzinfo=timezone(timedelta(hours=-5)))


ODD_NUMBERS = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.1 + 0.2,
    1 / 3,
    2.05,
    1.1000000000000001,
    1e-05,
    -1e-05,
    0.0001,
    9.999999999999999e-05,
    1e-07,
    5e-324,
    2.2250738585072014e-308,
    1e15,
    9999999999999998.0,
    1e16,
    -1.5e16,
    2.0**60,
    1.7976931348623157e308,
    123456.789,
    3,  # an int, as a caller may pass
    np.float64(0.0243902439),
    np.float32(1.1),
    "2.5",  # float() reads it, as decimal() always has
]


def test_outcome_entries_keep_their_bytes_on_many_varied_outcomes():
    rng = np.random.default_rng(20261124)
    count = 5000
    draws = np.concatenate(
        [
            rng.normal(0, 1, count),
            rng.lognormal(0, 3, count),
            rng.uniform(-1e-4, 1e-4, count),
            10.0 ** rng.uniform(-12, 20, count) * rng.choice([-1, 1], count),
            np.round(rng.uniform(1, 20, count), 2),
        ]
    ).tolist()
    numbers = [*ODD_NUMBERS, *draws]
    total = len(numbers)

    def column(nullable):
        values = [numbers[index] for index in rng.permutation(total)]
        if nullable:
            values = [None if rng.random() < 0.2 else value for value in values]
        return values

    pick_ids = [*rng.integers(1, 2**53, total - 2).tolist(), np.int64(7), True]
    cited = [hashlib.sha256(str(n).encode()).hexdigest() for n in range(total)]
    status = rng.choice(["won", "lost", "void"], total).tolist()
    profit, closing, clv = column(False), column(True), column(True)
    extra = settled_by(total, rng)
    extra["closing_probability"] = column(True)
    for at in (datetime(2026, 11, 21, 21, 40, 59, 999999, tzinfo=UTC), NOW_ELSEWHERE):
        fast = entries.outcome_entries(pick_ids, cited, status, profit, closing, clv, at, **extra)
        for index in range(total):
            assert fast[index] == entries.outcome_entry(
                pick_id=int(pick_ids[index]),
                published=bytes.fromhex(cited[index]),
                status=status[index],
                profit=profit[index],
                closing_odds=closing[index],
                clv=clv[index],
                settled_at=at,
                **one_outcome(extra, index),
            )
    # Nothing but nulls, nothing at all.
    nulls = {
        "kickoff_at": [at],
        "match_status": ["cancelled"],
        "home_goals": [None],
        "away_goals": [None],
        "closing_bookmaker": [None],
        "closing_probability": [None],
        "closing_line": [None],
        "margin_method": "power",
        "not_live_reason": [None],
    }
    single = entries.outcome_entries([1], cited[:1], ["void"], [0.0], [None], [None], at, **nulls)
    assert single == [
        entries.outcome_entry(
            pick_id=1,
            published=bytes.fromhex(cited[0]),
            status="void",
            profit=0.0,
            closing_odds=None,
            clv=None,
            settled_at=at,
            **one_outcome(nulls, 0),
        )
    ]
    empty = {name: [] if isinstance(value, list) else value for name, value in nulls.items()}
    assert entries.outcome_entries([], [], [], [], [], [], at, **empty) == []


def test_outcome_entries_keep_their_bytes_where_values_repeat():
    """Columns of few distinct values (written once each): zeros of both signs, nulls, numbers
    that compare equal across types, scores and lines that repeat."""
    rng = np.random.default_rng(20261129)
    total = 400
    numbers = [0.0, -0.0, 1.0, 1, -1.0, 2.05, 1e-05, np.float64(0.5), None]

    def column(nullable):
        values = [numbers[index] for index in rng.integers(0, len(numbers), total)]
        return [0.0 if value is None and not nullable else value for value in values]

    pick_ids = rng.integers(1, 10**6, total).tolist()
    cited = [hashlib.sha256(str(n).encode()).hexdigest() for n in range(total)]
    status = rng.choice(["won", "lost", "void", "half-won", "half-lost"], total).tolist()
    line = [float(rng.choice([-0.25, 0.0, -0.0, 2.75])) for _ in range(total)]
    line = [
        None if state in ("won", "lost") and n % 2 else value
        for n, (state, value) in enumerate(zip(status, line, strict=True))
    ]
    profit, closing, clv = column(False), column(True), column(True)
    extra = settled_by(total, rng)
    extra["home_goals"] = [None if n % 7 == 0 else int(n % 3) for n in range(total)]
    extra["away_goals"] = [None if n % 7 == 0 else float(n % 2) for n in range(total)]
    extra["closing_probability"] = column(True)
    at = datetime(2026, 11, 29, 5, 0, tzinfo=UTC)
    fast = entries.outcome_entries(
        pick_ids, cited, status, profit, closing, clv, at, **extra, line=line
    )
    for index in range(total):
        assert fast[index] == entries.outcome_entry(
            pick_id=pick_ids[index],
            published=bytes.fromhex(cited[index]),
            status=status[index],
            profit=profit[index],
            closing_odds=closing[index],
            clv=clv[index],
            settled_at=at,
            line=line[index],
            **one_outcome(extra, index),
        )
    assert b'"profit":"-0.0"' in b"".join(fast) and b'"line":"-0.0"' in b"".join(fast)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"status": ["won", "pending"]}, "not an outcome: 'pending'"),
        ({"published": ["ab" * 32, "AB" * 32]}, "not an outcome: 'void', citing 'ABAB"),
        ({"published": ["ab" * 32, "ab" * 31]}, "not an outcome: 'void', citing 'abab"),
        ({"published": ["ab" * 32, bytes(32)]}, "not an outcome: 'void', citing b'"),
        ({"published": ["ab" * 32, "ab" * 32 + "\n"]}, "not an outcome: 'void', citing 'abab"),
        ({"profit": [1.0, None]}, "a settled pick has a profit"),
        ({"clv": [1.0, float("nan")]}, "nan is not a finite number"),
        ({"closing_odds": [float("inf"), 2.0]}, "inf is not a finite number"),
        ({"pick_ids": [1]}, "the columns of outcomes differ in length"),
        ({"closing_line": ["seen", "mine"]}, "not a closing line: 'mine'"),
    ],
)
def test_outcome_entries_refuse_what_is_not_an_outcome(change, message):
    rows = {
        "pick_ids": [1, 2],
        "published": ["ab" * 32, "cd" * 32],
        "status": ["won", "void"],
        "profit": [1.0, 0.0],
        "closing_odds": [2.0, None],
        "clv": [0.1, None],
    }
    at = datetime(2026, 1, 1, tzinfo=UTC)
    extra = {
        name: value[:2] if isinstance(value, list) else value
        for name, value in settled_by(2).items()
    }
    with pytest.raises(ValueError, match=message):
        entries.outcome_entries(**{**rows, **extra, **change}, settled_at=at)


AH_PICK = {**PICK, "id": 12, "market": "ah", "selection": "away", "line": -0.25, "odds": 2.0}


def test_picks_of_the_old_markets_carry_no_line():
    # Their entries keep the bytes they always had, whatever the pick dict holds.
    salt = bytes(range(32))
    at = {"kickoff_at": PICK["created_at"], "competition_type": "cup", "model_version": "7"}
    bare = entries.published_entry(PICK, salt, **at)
    assert b'"line"' not in bare
    assert entries.published_entry({**PICK, "line": None}, salt, **at) == bare
    totals = {**PICK, "market": "ou25", "selection": "over"}
    assert entries.published_entry({**totals, "line": 2.5}, salt, **at) == (
        entries.published_entry(totals, salt, **at)
    )
    assert "line" not in entries.committed_pick({**totals, "line": 2.5})


def test_a_line_pick_commits_to_its_line_and_does_not_publish_it():
    salt = bytes(range(32))
    at = {"kickoff_at": PICK["created_at"], "competition_type": "cup", "model_version": "7"}
    entry = json.loads(entries.published_entry(AH_PICK, salt, **at))
    # Which line to back is part of the pick: sealed in the commitment, public once revealed.
    assert entry["market"] == "ah" and "line" not in entry
    opened = json.loads(json.dumps(entries.reveal(salt, AH_PICK)))
    assert opened["pick"]["line"] == "-0.25"
    assert verifier.opens(entry["commitment"], opened)
    moved = {**opened, "pick": {**opened["pick"], "line": "-0.75"}}
    assert not verifier.opens(entry["commitment"], moved)
    with pytest.raises(ValueError, match="needs its line"):
        entries.published_entry({**AH_PICK, "line": None}, salt, **at)


def _outcome(**change):
    fields = {
        "pick_id": 12,
        "published": bytes(32),
        "status": "half-won",
        "profit": 0.5,
        "closing_odds": 1.95,
        "clv": 2.0 / 1.95 - 1.0,  # AH_PICK's odds against the closing price
        "settled_at": datetime(2026, 11, 22, 9, 0, tzinfo=UTC),
        "kickoff_at": datetime(2026, 11, 21, 19, 45, tzinfo=UTC),
        "match_status": "finished",
        "score": (1, 1),
        "closing_bookmaker": "pinnacle",
        "closing_probability": 0.49,
        "closing_line": "source",
        "margin_method": "power",
        "not_live_reason": None,
        "line": -0.25,
    }
    return entries.outcome_entry(**{**fields, **change})


def test_a_line_outcome_carries_its_line_and_half_statuses():
    entry = json.loads(_outcome())
    assert (entry["type"], entry["status"], entry["line"]) == ("pick.settled", "half-won", "-0.25")
    assert json.loads(_outcome(status="half-lost", profit=-0.5))["type"] == "pick.settled"
    assert json.loads(_outcome(status="void", profit=0.0, line=-1.0))["type"] == "pick.voided"
    assert b'"line"' not in _outcome(status="won", profit=1.0, line=None)
    with pytest.raises(ValueError, match="only a pick at a line is half-won"):
        _outcome(line=None)
    with pytest.raises(ValueError, match="not 'pushed'"):
        _outcome(status="pushed")


def test_outcome_entries_with_lines_equal_the_canonical_encoding():
    at = datetime(2026, 11, 21, 21, 40, tzinfo=UTC)
    status = ["won", "half-won", "void", "half-lost", "lost", "void"]
    line = [None, -0.25, 3.0, 2.75, 0.5, None]
    rows = (
        list(range(1, 7)),
        [hashlib.sha256(bytes([n])).hexdigest() for n in range(6)],
        status,
        [1.0, 0.45, 0.0, -0.5, -1.0, 0.0],
        [2.05, None, 1.9, 2.0, 1.8, None],
        [0.02, None, -0.1, 0.0, 0.05, None],
    )
    extra = settled_by(6)
    fast = entries.outcome_entries(*rows, at, **extra, line=line)
    for position, entry in enumerate(fast):
        pick_id, cited, state, profit, closing, clv = (column[position] for column in rows)
        assert entry == entries.outcome_entry(
            pick_id=pick_id,
            published=bytes.fromhex(cited),
            status=state,
            profit=profit,
            closing_odds=closing,
            clv=clv,
            settled_at=at,
            line=line[position],
            **one_outcome(extra, position),
        )
    # Without lines at all, a pick of an old market's entry is the same bytes.
    first = {name: value[:1] if isinstance(value, list) else value for name, value in extra.items()}
    assert entries.outcome_entries(*(column[:1] for column in rows), at, **first) == fast[:1]
    with pytest.raises(ValueError, match="only a pick at a line is half-lost"):
        entries.outcome_entries(*rows, at, **extra, line=[None, -0.25, 3.0, None, 0.5, None])


def test_the_verifiers_line_settlement_is_the_engines():
    """The verifier's own copy of line settlement agrees with engine.model.lines everywhere."""
    from engine.model import lines

    scores = list(itertools.product(range(6), range(6)))
    home, away = (np.array(column) for column in zip(*scores, strict=True))
    for market, candidates in (
        ("ah", np.arange(-3.0, 3.01, 0.25)),
        ("ou", np.arange(0.5, 5.01, 0.25)),
    ):
        for line, selection in itertools.product(candidates, verifier.LINE_MARKETS[market]):
            n = len(scores)
            mine = lines.results(market, [selection] * n, [line] * n, home, away)
            theirs = [verifier.line_result(market, selection, float(line), h, a) for h, a in scores]
            assert mine.tolist() == theirs, (market, line, selection)
            statuses = lines.statuses(mine).tolist()
            assert statuses == [verifier.LINE_STATUSES[r] for r in theirs]
            profits = lines.profits(mine, 1.87, 2.0)
            assert profits.tolist() == pytest.approx(
                [verifier.expected_profit(status, 2.0, 1.87) for status in statuses]
            )


def _line_ledger(pick, outcome_fields, match):
    """A verifier's ledger of one published pick and its outcome, and a fetch showing its match."""
    salt = bytes(range(32))
    kickoff = datetime(2026, 11, 21, 19, 45, tzinfo=UTC)
    published = entries.published_entry(
        pick, salt, kickoff_at=kickoff, competition_type="top-flight", model_version="7"
    )
    outcome = _outcome(published=merkle.leaf_hash(published), pick_id=pick["id"], **outcome_fields)
    raw = [published, outcome]
    book = verifier.Ledger(
        key=None,
        latest=None,
        entries=[json.loads(data) for data in raw],
        raw=raw,
        reveals=[json.loads(json.dumps(entries.reveal(salt, pick))), None],
        covering=[2, 2],
    )

    def fetch(path, authorized=False):
        assert path == f"/api/matches/{pick['match_id']}"
        return 200, {"kickoffAt": "2026-11-21T19:45:00Z", **match}

    return fetch, book


FINISHED_1_1 = {"status": "finished", "score": {"home": 1, "away": 1}}


@pytest.mark.parametrize(
    ("pick", "outcome", "match", "problem"),
    [
        # Away at the home side's -0.25 on 1-1: half the stake wins at 2.0, +0.5.
        (AH_PICK, {}, FINISHED_1_1, None),
        (AH_PICK, {"status": "won", "profit": 1.0}, FINISHED_1_1, "is won, but"),
        (AH_PICK, {"profit": 1.0}, FINISHED_1_1, "profit does not follow"),
        (AH_PICK, {"line": -0.75}, FINISHED_1_1, "different lines"),
        # Home at -1 on 2-1 is a push: void, profit 0.
        (
            {**AH_PICK, "selection": "home", "line": -1.0},
            {"status": "void", "profit": 0.0, "line": -1.0, "score": (2, 1)},
            {"status": "finished", "score": {"home": 2, "away": 1}},
            None,
        ),
        # Over 2.75 on 2-1: the 2.5 half wins, the 3 half pushes.
        (
            {**AH_PICK, "market": "ou", "selection": "over", "line": 2.75},
            {"line": 2.75, "profit": 0.5, "score": (2, 1)},
            {"status": "finished", "score": {"home": 2, "away": 1}},
            None,
        ),
        (
            {**AH_PICK, "market": "ou", "selection": "over", "line": 2.75},
            {"line": 2.75, "status": "half-lost", "profit": -0.5, "score": (2, 1)},
            {"status": "finished", "score": {"home": 2, "away": 1}},
            "is half-lost, but its match finished 2-1 makes it half-won",
        ),
        # A 1x2 outcome claiming a line it never had.
        (
            {**PICK, "id": 12, "odds": 2.0},
            {"status": "lost", "profit": -1.0, "line": 0.5},
            FINISHED_1_1,
            "carries a line",
        ),
    ],
)
def test_the_verifier_settles_line_picks_from_the_entries(pick, outcome, match, problem):
    fetch, book = _line_ledger(pick, outcome, match)
    (row,) = verifier.examine(fetch, book)
    if problem is None:
        assert row["problems"] == []
        assert row["status"] == json.loads(book.raw[1])["status"]
    else:
        assert any(problem in found for found in row["problems"]), row["problems"]
