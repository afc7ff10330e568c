"""An immutable view of the catalog's state at one committed version, and the changes a commit makes."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any

import pyarrow as pa

from gluecat.errors import StorageError
from gluecat.store import codec

Key = tuple[str, ...]
"""The identity of a record within its kind, e.g. (database, table)."""


class Raw:
    """A stored document not decoded yet: opening a warehouse reads tens of thousands of records, and
    most of them are never looked at before the next checkpoint writes them back unchanged."""

    __slots__ = ("source", "text")

    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.source = source

    def decode(self) -> Any:
        try:
            return codec.loads(self.text)
        except ValueError as e:
            raise StorageError(f"{self.source}: a record is not valid JSON ({e})") from e


def _prefix_end(prefix: Key) -> Key:
    """The smallest key after every key that starts with ``prefix`` (names never contain U+0000)."""
    return (*prefix[:-1], prefix[-1] + "\x00")


@dataclass(frozen=True)
class Link:
    """Where a version stands in the log's chain: the chain value of its entry (the checksum the next
    entry must name as ``prev``; "" where it is not known) and whether that entry was checksummed (then
    every later entry must be)."""

    chain: str = ""
    strict: bool = False


@dataclass(frozen=True)
class Snapshot:
    """The state after commit ``version``: records by kind and key, and each table's partition segments.

    Snapshots are never mutated; applying changes makes a new one that shares every untouched kind, so a
    reader holding a snapshot keeps a consistent view while writers move on.
    """

    version: int
    timestamp: datetime
    meta: Mapping[str, Mapping[Key, Any]]
    segments: Mapping[Key, tuple[str, ...]]
    link: Link = Link()
    _derived: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    def get(self, kind: str, key: Key) -> Any | None:
        """The document of one record, or None. Callers must not mutate it."""
        records = self.meta.get(kind)
        if records is None:
            return None
        doc = records.get(key)
        if isinstance(doc, Raw):
            decoded = doc.decode()
            # Replacing the placeholder by its decoded value changes nothing any snapshot can see.
            records[key] = decoded  # type: ignore[index]
            return decoded
        return doc

    def records(self, kind: str) -> Mapping[Key, Any]:
        return self.meta.get(kind, MappingProxyType({}))

    def table_segments(self, table: Key) -> tuple[str, ...]:
        return self.segments.get(table, ())

    def sorted_keys(self, kind: str) -> list[Key]:
        """The keys of a kind in order, computed once per snapshot (snapshots never change)."""
        cache_key = ("sorted", kind)
        keys = self._derived.get(cache_key)
        if keys is None:
            keys = sorted(self.records(kind))
            self._derived[cache_key] = keys
        return keys

    def keys_with_prefix(self, kind: str, prefix: Key) -> list[Key]:
        """The keys of a kind that start with ``prefix``, in order."""
        keys = self.sorted_keys(kind)
        return keys[bisect.bisect_left(keys, prefix) : bisect.bisect_left(keys, _prefix_end(prefix))]

    def derived(self, name: Any, compute: Callable[[], Any]) -> Any:
        """A value computed from this snapshot once and then reused (e.g. a table's merged partitions)."""
        if name not in self._derived:
            self._derived[name] = compute()
        return self._derived[name]


@dataclass
class Changes:
    """What one commit does: record puts and deletes, and partition segments added or removed.

    Segment contents are Arrow tables; the store writes each as one immutable Parquet file.
    """

    puts: list[tuple[str, Key, Any]] = field(default_factory=list)
    deletes: list[tuple[str, Key]] = field(default_factory=list)
    segment_adds: list[tuple[Key, pa.Table]] = field(default_factory=list)
    segment_removes: list[tuple[Key, str]] = field(default_factory=list)
    segment_merges: list[tuple[Key, tuple[str, ...], str]] = field(default_factory=list)
    """(table, a contiguous run of its segments, an already written segment that takes the run's place)."""
    inline_records: bool = False
    """Carry the record changes inside the log entry instead of in a record file of their own (for a
    small commit: one file fewer to write and sync)."""
    actions: list[Any] = field(default_factory=list)
    """Further typed log actions (gluecat.store.log) that the entry names, e.g. a transaction's commit."""

    def put(self, kind: str, key: Key, doc: Any) -> None:
        self.puts.append((kind, key, doc))

    def delete(self, kind: str, key: Key) -> None:
        self.deletes.append((kind, key))

    def is_empty(self) -> bool:
        return not (
            self.puts
            or self.deletes
            or self.segment_adds
            or self.segment_removes
            or self.segment_merges
            or self.actions
        )


def run_at(segments: Sequence[str], run: tuple[str, ...]) -> int:
    """Where ``run`` lies in ``segments`` as a contiguous run, or -1."""
    if not run or run[0] not in segments:
        return -1
    at = segments.index(run[0])
    return at if tuple(segments[at : at + len(run)]) == run else -1


def apply(
    snap: Snapshot,
    version: int,
    timestamp: datetime,
    record_changes: list[tuple[str, Key, Any | None]],
    segment_adds: list[tuple[Key, str]],
    segment_removes: list[tuple[Key, str]],
    segment_merges: Sequence[tuple[Key, tuple[str, ...], str]] = (),
    link: Link = Link(),
) -> Snapshot:
    """The snapshot after a commit; a None document deletes the record. Changes apply in order.

    A merge replaces a run of a table's segments by one segment in the run's place, so that segments
    added after the run still override it."""
    meta = dict(snap.meta)
    copied: set[str] = set()
    for kind, key, doc in record_changes:
        if kind not in copied:
            meta[kind] = dict(meta.get(kind, {}))
            copied.add(kind)
        records = meta[kind]
        assert isinstance(records, dict)
        if doc is None:
            records.pop(key, None)
        else:
            records[key] = doc
    segments = snap.segments
    if segment_adds or segment_removes or segment_merges:
        seg = {k: list(v) for k, v in snap.segments.items()}
        for table, run, into in segment_merges:
            paths = seg.get(table, [])
            at = run_at(paths, run)
            if at < 0:
                raise StorageError(f"version {version} merges segments of {'.'.join(table)} it does not hold")
            paths[at : at + len(run)] = [into]
        for table, path in segment_removes:
            if path in seg.get(table, []):
                seg[table].remove(path)
        for table, path in segment_adds:
            seg.setdefault(table, []).append(path)
        segments = {k: tuple(v) for k, v in seg.items() if v}
    derived: dict[Any, Any] = {}
    for kind in copied:
        before = snap._derived.get(("sorted", kind))
        if before is not None:
            # Keep the parent's order up to date instead of sorting every key again after each commit.
            keys = list(before)
            for k, key, doc in record_changes:
                if k != kind:
                    continue
                i = bisect.bisect_left(keys, key)
                present = i < len(keys) and keys[i] == key
                if doc is None and present:
                    del keys[i]
                elif doc is not None and not present:
                    keys.insert(i, key)
            derived[("sorted", kind)] = keys
    for cache_key, value in snap._derived.items():
        if isinstance(cache_key, tuple) and cache_key[0] == "sorted" and cache_key[1] not in copied:
            derived[cache_key] = value
    return Snapshot(
        version=version, timestamp=timestamp, meta=meta, segments=segments, link=link, _derived=derived
    )


def empty(timestamp: datetime) -> Snapshot:
    return Snapshot(version=0, timestamp=timestamp, meta={}, segments={})
