"""A dict that keeps only its newest entries.

A server runs for months over a warehouse that only grows, so each of its memos (opened logs, commit
ids and times, Parquet footers, the snapshots transactions read) keeps a bounded number of entries:
those put or looked at last. Memos bounded by what they hold rather than by count (rows, bytes) keep
their own tally.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Newest(OrderedDict[K, V]):
    """At most ``most`` entries. Putting one, or ``touch``-ing it, makes it the newest; the oldest are
    let go past ``most``. Each call is safe beside other threads' (a memo read without a lock may
    lose an entry to another thread's put, never raise); what takes several calls is the owner's
    lock's business."""

    def __init__(self, most: int) -> None:
        super().__init__()
        self.most = most

    def __setitem__(self, key: K, value: V) -> None:
        self.pop(key, None)  # put back at the end, rather than moved there: it may be gone meanwhile
        super().__setitem__(key, value)
        while len(self) > self.most:
            try:
                self.popitem(last=False)
            except KeyError:  # emptied by other threads' puts meanwhile
                break

    def touch(self, key: K) -> V | None:
        """The value kept for ``key`` (None if none is), made the newest. A memo that keeps None as a
        value tells it from a miss with ``in``, not with this."""
        try:
            self.move_to_end(key)
        except KeyError:
            return None
        return self.get(key)
