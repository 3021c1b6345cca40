"""The Merkle tree of RFC 9162 (Certificate Transparency 2.0) over the ledger's entries.

Leaf hash ``SHA-256(0x00 ‖ entry)``, interior node ``SHA-256(0x01 ‖ left ‖ right)``, a tree of
``n`` leaves split at the largest power of two below ``n`` (RFC 9162 §2.1.1); inclusion and
consistency proofs as §2.1.3 and §2.1.4 define them.

The tree is stored as its **perfect subtrees**: the hash of every complete subtree of ``2^level``
leaves starting at leaf ``index × 2^level``, addressed ``(level, index)``. Every range the RFC's
recursion names is a run of at most ``log2 n`` such subtrees (:func:`subtrees`), so a root or
any proof is ``O(log n)`` lookups, never a rehash of every leaf, and appending ``k`` leaves
makes ``k`` new perfect subtrees in all (:func:`append`). The store itself (a table, a dict) is
the caller's: the functions here take a ``lookup`` that answers a list of addresses at once.
"""

import hashlib
from collections.abc import Callable, Sequence
from itertools import repeat

#: The root of the empty tree: the hash of the empty string (RFC 9162 §2.1.1).
EMPTY_ROOT = hashlib.sha256(b"").digest()

LEAF_PREFIX = b"\x00"
NODE_PREFIX = b"\x01"

#: ``(level, index)``: the perfect subtree of ``2^level`` leaves starting at ``index << level``.
Address = tuple[int, int]
#: Hashes of a list of addresses, in their order.
Lookup = Callable[[list[Address]], Sequence[bytes]]


def leaf_hash(entry: bytes) -> bytes:
    """The hash of a leaf: SHA-256(0x00 ‖ entry)."""
    return hashlib.sha256(LEAF_PREFIX + entry).digest()


def leaf_hashes(entries: Sequence[bytes]) -> list[bytes]:
    """:func:`leaf_hash` of each entry (a hundred thousand at a time: no call per entry)."""
    sha256 = hashlib.sha256
    return [sha256(LEAF_PREFIX + entry).digest() for entry in entries]


def node_hash(left: bytes, right: bytes) -> bytes:
    """The hash of an interior node: SHA-256(0x01 ‖ left ‖ right)."""
    return hashlib.sha256(NODE_PREFIX + left + right).digest()


def split(size: int) -> int:
    """The largest power of two smaller than ``size`` (``size`` ≥ 2): where RFC 9162 splits."""
    if size < 2:
        raise ValueError(f"a tree of {size} leaves does not split")
    return 1 << ((size - 1).bit_length() - 1)


def subtrees(start: int, end: int) -> list[Address]:
    """The perfect subtrees that make up the range ``[start, end)`` as the RFC's recursion
    splits it, left to right, largest first.

    ``start`` must be aligned as every range of that recursion is (a multiple of the largest
    power of two not above ``end − start``); the run has one subtree per set bit of the size.
    """
    if not 0 <= start < end:
        raise ValueError(f"not a range of leaves: [{start}, {end})")
    found = []
    while start < end:
        size = end - start
        level = size.bit_length() - 1  # the largest power of two ≤ size
        width = 1 << level
        if start % width:
            raise ValueError(f"[{start}, {end}) is not a range of the tree's recursion")
        found.append((level, start >> level))
        start += width
    return found


def fold(hashes: Sequence[bytes]) -> bytes:
    """The hash of a range from its perfect subtrees' hashes (left to right): each split's left
    half is the next perfect subtree, its right half the rest."""
    if not hashes:
        return EMPTY_ROOT
    result = hashes[-1]
    for left in reversed(hashes[:-1]):
        result = node_hash(left, result)
    return result


def root(leaf_hashes: Sequence[bytes]) -> bytes:
    """The root of the tree over ``leaf_hashes``, from nothing but the leaves (O(n))."""
    _, frontier = append([], 0, leaf_hashes)
    return fold(frontier)


def append(frontier: Sequence[bytes], size: int, leaves: Sequence[bytes]):
    """Append ``leaves`` (leaf hashes) to a tree of ``size`` leaves.

    ``frontier`` holds the hashes of the perfect subtrees of ``[0, size)``
    (``subtrees(0, size)``, left to right). Returns ``(nodes, frontier)``: every perfect
    subtree above the leaves that the new leaves complete, as ``(level, index, hash)`` with
    level ≥ 1, and the frontier of the grown tree (:func:`append_runs` gives the same nodes a
    level at a time).
    """
    runs, grown = append_runs(frontier, size, leaves)
    made = []
    for level, start, hashes in runs:
        made.extend(zip(repeat(level), range(start, start + len(hashes)), hashes))
    return made, grown


def append_runs(frontier: Sequence[bytes], size: int, leaves: Sequence[bytes]):
    """:func:`append`, its new nodes as one run per level: ``(level, first index, hashes)``,
    level 1 first (no tuple per node: a hundred thousand leaves make as many nodes).

    Level by level: the new nodes of a level are a run of consecutive positions; each pair of
    them (the first paired with the old tree's subtree of that level when it starts on a right
    child) makes the next level's run.
    """
    levels = _levels(size)
    if len(frontier) != len(levels):
        raise ValueError(f"a tree of {size} leaves has {len(levels)} frontier subtrees")
    old = dict(zip(levels, frontier, strict=True))
    total = size + len(leaves)
    last = {}  # level -> the hash of the run's last node there (the new frontier's, if any)
    runs = []
    level, start, run = 0, size, list(leaves)
    while run:
        last[level] = run[-1]
        if start & 1:  # the run starts on a right child: its left is the old subtree
            start, run = start - 1, [old[level], *run]
        # node_hash inlined: a hundred thousand leaves make as many nodes
        parents = [
            hashlib.sha256(NODE_PREFIX + left + right).digest()
            for left, right in zip(run[0::2], run[1::2], strict=False)  # an odd last waits
        ]
        level, start = level + 1, start >> 1
        if parents:
            runs.append((level, start, parents))
        run = parents
    grown = []
    for height in _levels(total):
        # The subtree ends at the new size: made now, or an old one when none was made above it.
        ends_new = (total >> height) > (size >> height)
        grown.append(last[height] if ends_new else old[height])
    return runs, grown


def _levels(size: int) -> list[int]:
    """The levels of the perfect subtrees of ``[0, size)``, left to right."""
    return [level for level in range(size.bit_length() - 1, -1, -1) if size >> level & 1]


def inclusion_ranges(index: int, size: int) -> list[tuple[int, int]]:
    """The ranges whose hashes form the inclusion proof of leaf ``index`` in a tree of ``size``
    leaves, in the proof's order (the leaf's neighbour first): RFC 9162 §2.1.3.1's PATH."""
    if not 0 <= index < size:
        raise ValueError(f"leaf {index} is not in a tree of {size} leaves")
    ranges = []
    start, end = 0, size
    while end - start > 1:
        middle = start + split(end - start)
        if index < middle:
            ranges.append((middle, end))
            end = middle
        else:
            ranges.append((start, middle))
            start = middle
    return ranges[::-1]


def consistency_ranges(old: int, new: int) -> list[tuple[int, int]]:
    """The ranges whose hashes form the consistency proof from a tree of ``old`` leaves to one
    of ``new`` leaves, in the proof's order: RFC 9162 §2.1.4.1's PROOF (empty when ``old`` is 0
    or equals ``new``)."""
    if not 0 <= old <= new:
        raise ValueError(f"no consistency proof from {old} leaves to {new}")
    if old in (0, new):
        return []
    ranges = []
    start, end, whole = 0, new, True  # ``whole``: the old tree is this subtree's left edge
    wanted = old
    while True:
        size = end - start
        if wanted == size:
            if not whole:
                ranges.append((start, end))
            break
        middle = start + split(size)
        if wanted <= middle - start:
            ranges.append((middle, end))
            end = middle
        else:
            ranges.append((start, middle))
            wanted -= middle - start
            start, whole = middle, False
    return ranges[::-1]


def range_addresses(ranges) -> list[Address]:
    """Every perfect subtree the ``ranges`` are made of, without repeats, in a stable order."""
    return list(dict.fromkeys(address for span in ranges for address in subtrees(*span)))


def hashes_of(ranges, lookup: Lookup) -> list[bytes]:
    """The hash of each range, from one ``lookup`` of the perfect subtrees they are made of."""
    addresses = range_addresses(ranges)
    known = dict(zip(addresses, lookup(addresses), strict=True))
    return [fold([known[address] for address in subtrees(*span)]) for span in ranges]


def tree_root(size: int, lookup: Lookup) -> bytes:
    """The root of the first ``size`` leaves of a stored tree: ``O(log size)`` lookups."""
    if size == 0:
        return EMPTY_ROOT
    return hashes_of([(0, size)], lookup)[0]


def inclusion_proof(index: int, size: int, lookup: Lookup) -> list[bytes]:
    """The inclusion proof of leaf ``index`` in the first ``size`` leaves of a stored tree."""
    return hashes_of(inclusion_ranges(index, size), lookup)


def consistency_proof(old: int, new: int, lookup: Lookup) -> list[bytes]:
    """The consistency proof from the first ``old`` leaves of a stored tree to its first
    ``new``."""
    return hashes_of(consistency_ranges(old, new), lookup)


#: A tile (C2SP tlog-tiles) holds the hashes of ``2^TILE_HEIGHT`` consecutive nodes of one level
#: of the tree: tile level ``L`` holds tree level ``L × TILE_HEIGHT``.
TILE_HEIGHT = 8
TILE_WIDTH = 1 << TILE_HEIGHT


def tile_nodes(level: int, index: int, width: int) -> list[Address]:
    """The perfect subtrees whose hashes make tile ``index`` of tile level ``level``, ``width``
    of them (``TILE_WIDTH`` for a full tile), left to right."""
    if not 1 <= width <= TILE_WIDTH or index < 0 or not 0 <= level * TILE_HEIGHT < 64:
        raise ValueError(f"not a tile: level {level}, index {index}, width {width}")
    start = index << TILE_HEIGHT
    return [(level * TILE_HEIGHT, position) for position in range(start, start + width)]


def tile_complete(level: int, index: int, width: int, size: int) -> bool:
    """Whether a tree of ``size`` leaves holds every hash of that tile (its last subtree's leaves
    all appended)."""
    last = (index << TILE_HEIGHT) + width  # one past the tile's last node, at its level
    return last << (level * TILE_HEIGHT) <= size


def tiles_of(size: int) -> list[tuple[int, int, int]]:
    """Every tile of a tree of ``size`` leaves as ``(level, index, width)``: the full ones and,
    at each level, the partial one at the right edge (C2SP tlog-tiles), lowest level first."""
    found = []
    level = 0
    while size >> (level * TILE_HEIGHT):
        nodes = size >> (level * TILE_HEIGHT)  # complete subtrees at this tile level's height
        found += [(level, index, TILE_WIDTH) for index in range(nodes >> TILE_HEIGHT)]
        if nodes % TILE_WIDTH:
            found.append((level, nodes >> TILE_HEIGHT, nodes % TILE_WIDTH))
        level += 1
    return found
