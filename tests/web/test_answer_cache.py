"""The answer cache's memory: each entry is charged what it really holds, and the entries are
bounded, so a flood of distinct requests keeps a process within its budget."""

import gc
import itertools
import logging
import tracemalloc
from datetime import UTC, date, datetime

from web.caching import AnswerCache, Entry, footprint

BUDGET = 256 * 1024


def _entry(index: int) -> tuple:
    """A small answer's key and entry, as ``web.caching.cached`` builds them (new objects)."""
    key = (
        None,
        "/api/explorer/slate",
        f"date=2026-03-07&page={index}",
        False,
        None,
        "http",
        "localhost",
        "localhost",
        "80",
        date(2026, 3, 7),
    )
    body = bytes(bytearray(b'{"date":"2026-03-07","matches":[]}'))  # 33 bytes of answer
    headers = (("Content-Type", "".join(["application/", "json"])),)
    return key, Entry(1, datetime(2026, 3, 7, tzinfo=UTC), body, f'"{index:032x}"', headers)


def _growth(fill) -> int:
    """Bytes still allocated after ``fill()`` than before it (traced by tracemalloc)."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = fill()
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    del kept
    return grown


def test_the_answer_cache_counts_what_an_entry_really_holds():
    """5,000 small answers into an unbounded cache: what it counts is at least what the process
    really spent on them (a 33-byte body costs about 900 bytes with its key and bookkeeping)."""
    cache = AnswerCache(1 << 30)

    def fill():
        for index in range(5000):
            cache.put(*_entry(index))
        return cache

    grown = _growth(fill)
    assert len(cache) == 5000
    assert cache.size >= grown, (cache.size, grown)
    assert cache.size / 5000 > 500  # a body's 33 bytes would be far short of it


def test_a_flood_of_small_answers_stays_within_the_cache_budget():
    cache = AnswerCache(BUDGET)

    def fill():
        for index in range(20_000):
            cache.put(*_entry(index))
        return cache

    grown = _growth(fill)
    assert cache.size <= BUDGET and grown <= BUDGET, (cache.size, grown)
    assert 0 < len(cache) < BUDGET // 500


def test_the_answer_cache_keeps_at_most_its_number_of_entries():
    cache = AnswerCache(1 << 30, max_entries=100)
    for index in range(250):
        cache.put(*_entry(index))
    assert len(cache) == 100
    assert cache.get(_entry(249)[0]) is not None and cache.get(_entry(0)[0]) is None
    assert cache.size == sum(footprint(key, entry) for key, (entry, _) in cache.entries.items())
    off = AnswerCache(1 << 30, max_entries=0)
    off.put(*_entry(1))
    assert len(off) == 0


def _spellings(value: str):
    """Every spelling of ``value`` with some of its characters percent-encoded: one query to
    the app, a distinct key to the cache (it keys the query string as it came)."""
    for mask in itertools.product((False, True), repeat=len(value)):
        yield "".join(
            f"%{ord(char):02X}" if encoded else char
            for char, encoded in zip(value, mask, strict=True)
        )


def test_distinct_query_strings_keep_the_process_within_the_cache_budget(make_app, caplog):
    """Spellings of one slate query, each a new cache key of a small answer. Once the cache is
    full (and the libraries' own bounded caches are too), 200 more leave the process no bigger:
    counted by their bodies alone, every one of them would have been kept."""
    app = make_app(ANSWER_CACHE_BYTES=BUDGET // 4, RATELIMIT_PUBLIC="100000 per minute")
    caplog.set_level(logging.WARNING, logger="picks.access")  # no lines kept by the capture
    client = app.test_client()
    paths = [
        f"/api/explorer/slate?date={spelling}"
        for spelling in itertools.islice(_spellings("2026-03-07"), 400)
    ]

    def get(batch):
        sizes = []
        for path in batch:
            response = client.get(path)
            assert response.status_code == 200
            sizes.append(len(response.get_data()))
            response.close()
        return sum(sizes)

    cache = app.extensions["answer_cache"]
    gc.collect()
    tracemalloc.start()  # from before the first entry, so evicting one is counted too
    try:
        get(paths[:200])
        assert 0 < len(cache) < 200 and cache.size <= BUDGET // 4
        gc.collect()
        full = tracemalloc.get_traced_memory()[0]
        bodies = get(paths[200:])
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - full
    finally:
        tracemalloc.stop()
    assert cache.size <= BUDGET // 4
    # Kept, the 200 answers would cost what the cache charges an entry (which the tests above
    # hold to what an entry really holds), over 150 KiB in all; what the process grows by is
    # the database driver's and the rate-limit storage's own small state.
    kept = (len(paths) - 200) * cache.size / len(cache)
    assert kept > 150 * 1024 and bodies < kept / 10
    assert grown <= kept / 4, (grown, kept)
