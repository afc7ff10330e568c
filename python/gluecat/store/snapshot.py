"""The catalog's state as the store keeps it: each log's folded state (``LogState``), the state a reader
sees across logs (``Snapshot``), and the changes a commit makes (``Changes``).

A warehouse has one root log and, once its tables are kept apart (format 6), one log per table
(gluecat/store/placement.py says what goes where). A ``Snapshot`` is the root log's state at one version
with the table logs' states at the same moment, attached as they are first read: a table's log is cut
before the first commit that the root log decided after that version, so that every snapshot is one
consistent state of the whole warehouse however its tables were read.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any

import pyarrow as pa

from gluecat.errors import StorageError
from gluecat.store import codec, placement

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
class LogState:
    """One log's state after its commit ``version``: records by kind and key, and each row set's
    segments.

    States are never mutated; applying changes makes a new one that shares every untouched kind, so a
    reader holding a state keeps a consistent view while writers move on. ``timestamp`` is the time of
    the last commit applied (for a table log's commit that the root log decided, the root's decision).
    ``decided`` is, for a table log, the newest root version that decided one of its commits."""

    version: int
    timestamp: datetime
    meta: Mapping[str, Mapping[Key, Any]]
    segments: Mapping[Key, tuple[str, ...]]
    link: Link = Link()
    decided: int = -1
    _derived: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    def get(self, kind: str, key: Key) -> Any | None:
        """The document of one record, or None. Callers must not mutate it."""
        records = self.meta.get(kind)
        if records is None:
            return None
        doc = records.get(key)
        if isinstance(doc, Raw):
            decoded = doc.decode()
            # Replacing the placeholder by its decoded value changes nothing any state can see.
            records[key] = decoded  # type: ignore[index]
            return decoded
        return doc

    def records(self, kind: str) -> Mapping[Key, Any]:
        return self.meta.get(kind, MappingProxyType({}))

    def table_segments(self, table: Key) -> tuple[str, ...]:
        return self.segments.get(table, ())

    def sorted_keys(self, kind: str) -> list[Key]:
        """The keys of a kind in order, computed once per state (states never change)."""
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
        """A value computed from this state once and then reused."""
        if name not in self._derived:
            self._derived[name] = compute()
        return self._derived[name]

    def is_empty(self) -> bool:
        return not self.meta and not self.segments


Attach = Callable[[Key], LogState | None]
"""How a snapshot gets a table log's state when it is first read: the state at the snapshot's moment,
or None if the table has no log of its own (a warehouse of format 5 and older keeps it in the root)."""


class Snapshot:
    """The state a reader sees: the root log's state, and each table log's state at the same moment,
    attached when first read.

    The catalog reads records and row sets by kind and key, as if all were in one place; where each
    lives is the store's business (placement.py). A snapshot never changes once a table's state is
    attached to it, so a reader holding one keeps a consistent view while writers move on."""

    __slots__ = ("_attach", "_derived", "_lock", "_tables", "root", "sharded")

    def __init__(
        self,
        root: LogState,
        *,
        sharded: bool = False,
        tables: Mapping[Key, LogState | None] | None = None,
        attach: Attach | None = None,
    ) -> None:
        self.root = root
        self.sharded = sharded
        self._tables: dict[Key, LogState | None] = dict(tables or {})
        self._attach = attach
        self._lock = threading.Lock()
        self._derived: dict[Any, Any] = {}

    # -- what the snapshot is ------------------------------------------------------------------

    @property
    def version(self) -> int:
        """The root log's version: the warehouse's catalog-wide state (databases, table definitions)."""
        return self.root.version

    @property
    def timestamp(self) -> datetime:
        return self.root.timestamp

    @property
    def link(self) -> Link:
        return self.root.link

    @property
    def meta(self) -> Mapping[str, Mapping[Key, Any]]:
        """The root log's records (every record, in a warehouse whose tables share the root log)."""
        return self.root.meta

    @property
    def segments(self) -> Mapping[Key, tuple[str, ...]]:
        """The row sets the root log holds (every one, in a warehouse whose tables share the root log)."""
        return self.root.segments

    def table_state(self, table: Key) -> LogState | None:
        """The table log's state in this snapshot (attached now if not yet), or None if the table has
        no log of its own."""
        with self._lock:
            if table in self._tables:
                return self._tables[table]
        state = self._attach(table) if self._attach is not None else None
        with self._lock:
            return self._tables.setdefault(table, state)

    def attached(self) -> Mapping[Key, LogState | None]:
        """The table states read so far."""
        with self._lock:
            return dict(self._tables)

    def state_of(self, kind: str, key: Key) -> LogState:
        """The log state that holds a record of ``kind`` and ``key``."""
        table = placement.table_of(kind, key) if self.sharded else None
        if table is None:
            return self.root
        if kind == placement.TABLE:
            # Table definitions are in both logs: a snapshot that has read the table's log reads its own
            # copy (the root's is the same at the snapshot's moment), others read the root's.
            with self._lock:
                state = self._tables.get(table)
            return state if state is not None else self.root
        state = self.table_state(table)
        return state if state is not None else self.root

    def rows_state(self, rows: Key) -> LogState:
        """The log state that holds a row set's segments."""
        table = placement.table_of_rows(rows) if self.sharded else None
        if table is None:
            return self.root
        state = self.table_state(table)
        return state if state is not None else self.root

    # -- reading -------------------------------------------------------------------------------

    def get(self, kind: str, key: Key) -> Any | None:
        """The document of one record, or None. Callers must not mutate it."""
        return self.state_of(kind, key).get(kind, key)

    def records(self, kind: str) -> Mapping[Key, Any]:
        """Every record of a kind the root log holds (table logs' kinds are read by table)."""
        if self.sharded and not placement.in_root(kind):
            raise AssertionError(f"records of kind {kind} are kept by table: read them by key prefix")
        return self.root.records(kind)

    def sorted_keys(self, kind: str) -> list[Key]:
        if self.sharded and not placement.in_root(kind):
            raise AssertionError(f"records of kind {kind} are kept by table: read them by key prefix")
        return self.root.sorted_keys(kind)

    def keys_with_prefix(self, kind: str, prefix: Key) -> list[Key]:
        """The keys of a kind that start with ``prefix``, in order."""
        if self.sharded and kind in placement.TABLE_KINDS and kind != placement.TABLE:
            if len(prefix) < 2:
                raise AssertionError(f"records of kind {kind} are kept by table: give a table's prefix")
            return self.state_of(kind, prefix).keys_with_prefix(kind, prefix)
        return self.root.keys_with_prefix(kind, prefix)

    def table_segments(self, rows: Key) -> tuple[str, ...]:
        return self.rows_state(rows).table_segments(rows)

    def derived(self, name: Any, compute: Callable[[], Any]) -> Any:
        """A value computed from this snapshot once and then reused (e.g. a table's folded partitions
        at an older version)."""
        with self._lock:
            if name in self._derived:
                return self._derived[name]
        value = compute()
        with self._lock:
            return self._derived.setdefault(name, value)

    def with_root(self, root: LogState) -> Snapshot:
        """This snapshot with another root state and the same table states (a transaction's own view:
        its staged table records over its start state)."""
        return Snapshot(root, sharded=self.sharded, tables=self.attached(), attach=self._attach)

    def with_tables(self, tables: Mapping[Key, LogState | None]) -> Snapshot:
        """This snapshot with some table states replaced."""
        return Snapshot(
            self.root, sharded=self.sharded, tables={**self.attached(), **tables}, attach=self._attach
        )


@dataclass
class Changes:
    """What one commit does: record puts and deletes, and partition segments added or removed.

    Segment contents are Arrow tables; the store writes each as one immutable Parquet file (or carries
    a small one inside the commit's log entry).
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
    reads: Any = None
    """What the commit's checks read (gluecat.store.conflicts.Reads), for a commit to one table's log:
    a commit that loses the race for its version to commits that changed none of it is published again
    as it is, instead of being built again. None: any commit in between makes it build again."""

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
    state: LogState,
    version: int,
    timestamp: datetime,
    record_changes: list[tuple[str, Key, Any | None]],
    segment_adds: list[tuple[Key, str]],
    segment_removes: list[tuple[Key, str]],
    segment_merges: Sequence[tuple[Key, tuple[str, ...], str]] = (),
    link: Link = Link(),
    decided: int | None = None,
) -> LogState:
    """The state after a commit; a None document deletes the record. Changes apply in order.

    A merge replaces a run of a table's segments by one segment in the run's place, so that segments
    added after the run still override it."""
    meta = dict(state.meta)
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
    for kind in copied:
        if not meta[kind]:
            del meta[kind]
    segments = state.segments
    if segment_adds or segment_removes or segment_merges:
        seg = {k: list(v) for k, v in state.segments.items()}
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
        before = state._derived.get(("sorted", kind))
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
    for cache_key, value in state._derived.items():
        if isinstance(cache_key, tuple) and cache_key[0] == "sorted" and cache_key[1] not in copied:
            derived[cache_key] = value
    return LogState(
        version=version,
        timestamp=timestamp,
        meta=meta,
        segments=segments,
        link=link,
        decided=state.decided if decided is None else max(decided, state.decided),
        _derived=derived,
    )


def empty(timestamp: datetime, version: int = 0) -> LogState:
    return LogState(version=version, timestamp=timestamp, meta={}, segments={})


def overlay(
    snap: Snapshot, record_changes: list[tuple[str, Key, Any | None]], segment_removes: list[tuple[Key, str]]
) -> Snapshot:
    """``snap`` with changes applied in place of a commit (a transaction's staged writes over its start
    state): each to the log state that keeps it, versions unchanged."""

    def onto(
        state: LogState, records: list[tuple[str, Key, Any | None]], removes: list[tuple[Key, str]]
    ) -> LogState:
        if not records and not removes:
            return state
        return apply(state, state.version, state.timestamp, records, [], removes, (), state.link)

    if not snap.sharded:
        return Snapshot(onto(snap.root, record_changes, segment_removes))
    root_records = [(k, key, doc) for k, key, doc in record_changes if placement.in_root(k)]
    root_removes = [(rows, p) for rows, p in segment_removes if placement.table_of_rows(rows) is None]
    by_table: dict[Key, tuple[list[tuple[str, Key, Any | None]], list[tuple[Key, str]]]] = {}
    for k, key, doc in record_changes:
        table = placement.table_of(k, key)
        if table is not None:
            by_table.setdefault(table, ([], []))[0].append((k, key, doc))
    for rows, p in segment_removes:
        table = placement.table_of_rows(rows)
        if table is not None:
            by_table.setdefault(table, ([], []))[1].append((rows, p))
    tables: dict[Key, LogState | None] = {}
    for table, (records, removes) in by_table.items():
        state = snap.table_state(table)
        if state is not None:
            tables[table] = onto(state, records, removes)
    return Snapshot(
        onto(snap.root, root_records, root_removes),
        sharded=True,
        tables={**snap.attached(), **tables},
        attach=snap._attach,
    )
