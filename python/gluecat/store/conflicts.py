"""Delta Lake's conflict check, for commits to one table's log.

A commit that loses the race for its version does not build itself again when the commits it lost to
changed nothing it read: it is published again as it is, at the next version. What a commit read is
``Reads`` (declared by the operation that builds it: the records it looked at, the partitions whose
existence it checked, the segments a merge replaces); what a published commit changed is ``Written``
(read off its entry). A commit that declares nothing is built again after any other commit, as every
commit was before.

A marker (a commit the root decided: a change of the table's definition, a drop) always conflicts: the
table is then another, and the commit is built again against it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

Key = tuple[str, ...]


@dataclass
class Reads:
    """What a commit's checks read. ``identities[rows]`` None: every row of the row set (a count, a
    scan); a set: the rows of those identities (``_vk``) only."""

    records: set[tuple[str, Key]] = field(default_factory=set)
    prefixes: set[tuple[str, Key]] = field(default_factory=set)
    identities: dict[Key, set[str] | None] = field(default_factory=dict)
    segments: dict[Key, frozenset[str]] = field(default_factory=dict)
    """Segments the commit relies on still being in their row set (a merge's run)."""

    def record(self, kind: str, key: Key) -> Reads:
        self.records.add((kind, key))
        return self

    def prefix(self, kind: str, prefix: Key) -> Reads:
        self.prefixes.add((kind, prefix))
        return self

    def rows(self, rows: Key, identities: Iterable[str]) -> Reads:
        if rows in self.identities and self.identities[rows] is None:
            return self
        self.identities.setdefault(rows, set()).update(identities)  # type: ignore[union-attr]
        return self

    def all_rows(self, rows: Key) -> Reads:
        self.identities[rows] = None
        return self

    def run(self, rows: Key, segments: Iterable[str]) -> Reads:
        self.segments[rows] = self.segments.get(rows, frozenset()) | frozenset(segments)
        return self


@dataclass
class Written:
    """What a published commit changed in a table's log."""

    records: list[tuple[str, Key]] = field(default_factory=list)
    identities: dict[Key, set[str]] = field(default_factory=dict)
    """The identities of the rows it added (tombstones included), by row set."""
    removed: dict[Key, set[str]] = field(default_factory=dict)
    """Segments it took out of a row set, and their rows with them."""
    merged: dict[Key, set[str]] = field(default_factory=dict)
    """Segments it merged into another (the same rows, in another file)."""
    decided: bool = False
    """A marker the root decided: the table's definition (or more) changed."""


def conflict(reads: Reads, written: Written) -> str | None:
    """Why ``written`` changes something ``reads`` read (None: it changes nothing of it)."""
    if written.decided:
        return "the table was changed by a commit the root log decided"
    for kind, key in written.records:
        if (kind, key) in reads.records:
            return f"record {kind} {list(key)} changed"
        for pkind, prefix in reads.prefixes:
            if pkind == kind and key[: len(prefix)] == prefix:
                return f"record {kind} {list(key)} changed"
    for rows, added in written.identities.items():
        if rows not in reads.identities:
            continue
        wanted = reads.identities[rows]
        if wanted is None:
            return f"rows of {list(rows)} changed"
        both = wanted & added
        if both:
            return f"rows {sorted(both)[:3]} of {list(rows)} changed"
    for rows, gone in written.removed.items():
        if rows in reads.identities or gone & reads.segments.get(rows, frozenset()):
            return f"segments of {list(rows)} were removed"
    for rows, gone in written.merged.items():
        if gone & reads.segments.get(rows, frozenset()):
            return f"segments of {list(rows)} a merge relies on were merged"
    return None
