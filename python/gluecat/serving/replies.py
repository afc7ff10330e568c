"""Encoded replies of read calls, reused while the warehouse has not changed.

Many clients planning queries over the same table ask for the same answer; encoding a thousand
partitions costs far more than sending them. A reply is keyed by call, arguments and protocol and
labelled with the warehouse version read *before* it was computed, so it is only ever served while that
version is still the latest: any commit anywhere makes every cached reply a miss. Every endpoint (the
Hive Metastore's Thrift, the AWS APIs' JSON) keeps its encoded replies here.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable

MAX_BYTES = 256 * 1024 * 1024
ENTRY_BYTES = 512
"""What an entry costs beyond its body, counted against ``max_bytes``: its key (the call and its
arguments), the tuple and the table's own node. Without it, replies of a few bytes each (distinct
requests for a table's name, say) could fill the bound with millions of keys taking gigabytes."""


class ReplyCache:
    """Least-recently-used encoded reply bodies, at most ``max_bytes`` in all (with their keys)."""

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[Hashable, tuple[int, bytes, int]] = OrderedDict()
        """version, body, and what the entry counts against ``max_bytes``."""
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable, version: int) -> bytes | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry[0] != version:
                return None
            self._entries.move_to_end(key)
            return entry[1]

    def put(self, key: Hashable, version: int, body: bytes, key_bytes: int = 0) -> None:
        """Keep ``body``; ``key_bytes`` is what the key holds beyond ENTRY_BYTES (a request's body)."""
        cost = ENTRY_BYTES + key_bytes + len(body)
        if cost > self.max_bytes // 4:
            return  # one huge reply must not push out everything else
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old[2]
            self._entries[key] = (version, body, cost)
            self._bytes += cost
            while self._bytes > self.max_bytes and self._entries:
                _, (_, _, evicted) = self._entries.popitem(last=False)
                self._bytes -= evicted
