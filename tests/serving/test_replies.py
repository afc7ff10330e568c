"""The cache of encoded replies: what it keeps, and within what bound."""

from __future__ import annotations

from gluecat.serving.replies import ReplyCache


def test_a_reply_is_served_only_at_the_version_it_was_read_at() -> None:
    cache = ReplyCache(max_bytes=1024 * 1024)
    cache.put(("get_table", "db", "t"), 3, b"body")
    assert cache.get(("get_table", "db", "t"), 3) == b"body"
    assert cache.get(("get_table", "db", "t"), 4) is None


def test_many_tiny_replies_of_distinct_requests_are_kept_to_a_bounded_number() -> None:
    """Each entry costs its key and bookkeeping as well as its body: replies of a few bytes for
    millions of distinct requests must not fill the byte bound with keys that take far more than it."""
    cache = ReplyCache(max_bytes=64 * 1024)
    for i in range(20_000):
        cache.put(("get_table", "db", f"t{i}"), 1, b"x")
    assert len(cache._entries) <= 200
    assert cache.get(("get_table", "db", "t19999"), 1) == b"x"
    assert cache.get(("get_table", "db", "t0"), 1) is None


def test_a_key_holding_a_large_request_counts_against_the_bound() -> None:
    """The AWS endpoint keys a reply by its request's body: large requests with small replies must not
    hold more than the bound in keys."""
    cache = ReplyCache(max_bytes=1024 * 1024)
    for i in range(1000):
        request = f'{{"Expression": "{i:08d}{"x" * 10_000}"}}'.encode()
        cache.put(("GetPartitions", request), 1, b"{}", key_bytes=len(request))
    assert sum(len(key[1]) for key in cache._entries) <= 1024 * 1024
