"""The warehouse store: immutable Parquet files plus append-only commit logs, one for the whole catalog
(the root) and, from format 6, one per table (gluecat/store/logs.py, placement.py).

Two kinds of commit:

- **A commit to one table's log** (``commit(..., table=...)``): a table's partitions and statistics.
  It reads that log's latest state (one look, the only I/O of an unchanged one) and publishes the next
  version there with an exclusive create. Writers of different tables never meet. A writer that loses
  the race reads the entries it lost to and, when they changed nothing its commit read (its
  ``Changes.reads``: gluecat/store/conflicts.py), publishes the same commit again at the next version;
  otherwise it builds it again against the new state, so a precondition that no longer holds raises the
  Glue error instead of being overwritten.
- **A commit the root decides** (every other one): it reads the root log's latest state, and the
  tables' states at the same moment as it reads them. What it changes in tables' logs is published
  there first, as markers naming the root version the commit will take and its commit id; the root's
  entry is published last, and is the commit: a marker counts exactly if the root's entry of its
  version is its commit (Percolator's primary record). A commit that loses the root's race built on an
  old state and is built again; the markers it left count for nothing. A marker whose root entry does
  not come (its writer died) is fenced by the next writer of its table after a while: an empty root
  entry takes the version it names, so it can never count.

Readers of one table read its log alone: every change of the table the root decides leaves a marker
there. Readers of the catalog (databases, table listings) read the root.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import functools
import logging
import random
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.fs as pafs

from gluecat.errors import OperationTimeoutException, StorageError
from gluecat.newest import Newest
from gluecat.store import codec, conflicts, files, layout, log, placement
from gluecat.store.codec import from_micros, to_micros
from gluecat.store.filesystems import open_fs
from gluecat.store.logs import (
    Expired,
    HistoryExpired,
    Log,
    LogState,
    OutcomeUnknown,
    Stale,
    marks_record,
)
from gluecat.store.snapshot import Changes, Key, Link, Raw, Snapshot, apply

__all__ = ["COMMIT_SETTLE", "Build", "Expired", "HistoryExpired", "OutcomeUnknown", "Stale", "Store"]

T = TypeVar("T")
R = TypeVar("R")
logger = logging.getLogger(__name__)

Build = Callable[[Snapshot], tuple[Changes, T]]
"""A commit's body: given the latest state, check preconditions (raising GlueErrors) and say what changes."""

SEGMENT_CACHE_ROWS = 2_000_000
INLINE_SEGMENT_BYTES = 128 * 1024
"""A commit's segment up to this size (compressed) travels inside its log entry instead of a file of its
own: one file to create and sync per small commit instead of two. Merges move such rows into files."""
INLINE_RECORDS_BYTES = 64 * 1024
"""A commit's records up to this size (as JSON) travel inside its log entry instead of a record file of
their own: on an object store a round trip fewer for a table's definition or statistics."""
COMMIT_SETTLE = timedelta(milliseconds=100)
"""How long after the time a commit is stamped with its log entry is published, at the most in practice
(writing and syncing the entry comes between: a millisecond or a few on a local disk, tens of
milliseconds on an object store). A read as of a time less than this ago waits until this has passed,
so that it answers what the same read made later answers; a commit published later than this after its
stamp (a stalled disk or process) can still change such an answer. Across machines, their clocks must
agree to within this for reads as of a time to see each other's commits in their order."""
RECENT_SEGMENT_ROWS = 50_000
"""Small segments this process wrote lately stay in memory up to this many rows, so that its own next
reads (the partition view catching up, the merge of the newest segments) need not read them back."""
TABLE_LOGS_KEPT = 2048
"""Tables' logs a process keeps open, the least recently used let go first. Each keeps its state, a few
older ones, its latest entries as read (up to 64 of 128 KiB) and its versions' times: a server reading
tables made and dropped for months must not keep all of them. A log let go is opened again when next
used (its newest checkpoint and the entries after it), as another process would open it."""
FOOTERS_KEPT = 16_384
"""Segment footers (row count and metadata) this process keeps: every segment it writes or reads a
footer of would otherwise stay for the process's life (a server writes one per commit, over thousands of
tables). Far more than the live segments of the tables being merged; a footer pushed out is read again."""
OWN_KEPT = 4096
"""Segments this process remembers writing: a table's runs are merged by the writer of their oldest
segment (catalog/rows/merging.py), and a run is at most MAX_RUN segments of the newest few hundred."""
FENCE_AFTER = 5.0
"""How long a table's writer waits for the root to decide a marker at the end of the table's log before
it fences the marker (its writer has died, or stalled): a root commit publishes its markers and then its
root entry, a few requests apart."""


BUILD_ON_SEEN = 1.0
"""Seconds for which what a process saw of a table's log is what its next commit to it is built on,
on an object store (store.Log.recent)."""


def _weight(rows: pa.Table) -> int:
    """What a segment in memory counts against the caches' bounds in rows: at least one, so that empty
    segments (a whole merge of a row set whose rows were all deleted) cannot gather without bound."""
    return max(1, rows.num_rows)


class _Turn:
    """One table's commits in this process, one at a time: its lock, and the commits holding or
    waiting for it (counted under Store._tables_lock)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.users = 0


class _Written:
    """What one attempt of a commit wrote before publishing its entry."""

    def __init__(self) -> None:
        self.actions: list[log.Action] = []
        self.records: list[tuple[str, Key, Any | None]] = []
        self.seg_adds: list[tuple[Key, str]] = []
        self.seg_removes: list[tuple[Key, str]] = []
        self.seg_merges: list[tuple[Key, tuple[str, ...], str]] = []
        self.paths: list[str] = []
        """The files this attempt wrote (deleted if it loses the race; pre-written segments are not)."""
        self.inline: list[tuple[str, pa.Table]] = []
        """The segments carried in the entry, with their rows: cached only once the entry is published,
        for until then their names may be another process's (they name the version tried for)."""


@dataclasses.dataclass
class _Marker:
    """A root commit's marker in one table's log, as one attempt writes and publishes it."""

    table: Key
    where: Log
    base: LogState
    """The table's state the marker follows."""
    entry: log.Entry
    written: _Written
    chain: str = ""
    """Its chain value, once published."""
    unknown: bool = False
    """Whether its publication may have landed without this writer learning so: its files stay, and
    the root version it names is fenced so that it never becomes a commit."""

    def may_count(self) -> bool:
        """Whether the marker is, or may be, in the table's log."""
        return bool(self.chain) or self.unknown


class _RootMoved(Exception):
    """A root commit read a table whose log a newer root decided (Store._table_to_change). Not a
    GlueError: builds let it through."""


class Store:
    """One process's handle on a warehouse; safe to share between threads."""

    def __init__(
        self,
        warehouse: str,
        *,
        single_writer: bool = False,
        fsync: bool = True,
        filesystem: pafs.FileSystem | None = None,
        checkpoint_interval: int = 100,
        max_attempts: int = 200,
        commit_seconds: float = 30.0,
    ) -> None:
        self.fs = open_fs(warehouse, single_writer=single_writer, fsync=fsync, filesystem=filesystem)
        self.checkpoint_interval = checkpoint_interval
        self.max_attempts = max_attempts
        self.commit_seconds = commit_seconds
        """How long a table's commit goes on losing races before it gives up: its attempts alone (up to
        ``max_attempts`` builds of ``max_attempts`` publications each) would take half an hour on S3,
        and clients time out long before (botocore after 60 s)."""
        self._root_commit_lock = threading.RLock()  # a failed root commit fences while it holds it
        self._table_commit_locks: dict[Key, _Turn] = {}
        """The turn of each table a commit of this process is under way or waiting for."""
        self._tables: Newest[Key, Log] = Newest(TABLE_LOGS_KEPT)
        """The tables' logs open in this process, the least recently used first (TABLE_LOGS_KEPT)."""
        self._tables_lock = threading.Lock()
        self._background_pool: ThreadPoolExecutor | None = None
        self._background_lock = threading.Lock()
        self._segment_cache: OrderedDict[str, pa.Table] = OrderedDict()
        self._segment_cache_lock = threading.Lock()
        self._segment_cache_rows = 0
        self._recent: OrderedDict[str, pa.Table] = OrderedDict()
        self._recent_rows = 0
        self._footers: Newest[str, tuple[int, dict[bytes, bytes]]] = Newest(FOOTERS_KEPT)
        self._own: Newest[str, bool] = Newest(OWN_KEPT)
        """The newest segments this store wrote (``wrote``)."""
        self.root = Log(
            self.fs, layout.ROOT_LOG, self._read_data, checkpoint_interval=checkpoint_interval, root=True
        )

    @property
    def secret(self) -> bytes:
        """The warehouse's own random key (signs continuation tokens); fixed when the warehouse is made."""
        return self.root.secret

    def close(self) -> None:
        pool, self._background_pool = self._background_pool, None
        if pool is not None:
            pool.shutdown(cancel_futures=True)
        self.fs.close()

    # -- the logs ------------------------------------------------------------------------------

    def sharded(self, state: LogState | None = None) -> bool:
        """Whether the warehouse keeps its tables in logs of their own (as of ``state``, or now)."""
        root = state if state is not None else self.root.state
        return root.get(placement.LAYOUT, placement.LAYOUT_KEY) is not None

    def table_log(self, table: Key) -> Log:
        """A table's log (opened on first use)."""
        with self._tables_lock:
            found = self._tables.touch(table)
        if found is not None:
            return found
        opened = Log(
            self.fs,
            layout.table_log(placement.log_name(table)),
            self._read_data,
            checkpoint_interval=self.checkpoint_interval,
            resolve=self._resolve,
        )
        with self._tables_lock:
            return self._tables.setdefault(table, opened)

    def table_logs(self) -> list[Log]:
        """Every table log the warehouse holds, made by any process (those of dropped tables too)."""
        found = []
        for name in sorted(self.fs.list_folders(layout.TABLES_DIR)):
            where = layout.table_log(name)
            with self._tables_lock:
                opened = next((w for w in self._tables.values() if w.where.base == where.base), None)
            found.append(
                opened
                if opened is not None
                else Log(
                    self.fs,
                    where,
                    self._read_data,
                    checkpoint_interval=self.checkpoint_interval,
                    resolve=self._resolve,
                )
            )
        return found

    def _log_at(self, where: layout.LogLayout) -> Log | None:
        """The log this process has open at ``where``, if any."""
        if where.base == self.root.where.base:
            return self.root
        with self._tables_lock:
            return next((w for w in self._tables.values() if w.where.base == where.base), None)

    def _resolve(self, decision: log.Decision) -> tuple[bool | None, datetime | None]:
        """Whether the root decided a marker: its entry of that version is the marker's commit."""
        if decision.version > self.root.state.version:
            self.root.latest()
            if decision.version > self.root.state.version:
                return None, None
        if self.root.commit_id(decision.version) != decision.commit_id:
            return False, None
        return True, self.root.entry_time(decision.version)

    # -- reading -------------------------------------------------------------------------------

    def latest(self) -> Snapshot:
        """The newest committed state, including other processes' commits made up to now: the root's
        (one look), and each table's at the same moment when first read (one look each)."""
        root = self.root.latest()
        return self._snapshot(root, functools.partial(self._table_at, root=root, until=None))

    def latest_for(self, table: Key) -> Snapshot:
        """The newest committed state of one table (one look at its log, the only I/O when nothing
        changed), with the root as this process last read it: everything the root decides about the
        table is in the table's log too. Other tables are read as for ``latest``."""
        if not self.sharded():
            return self.latest()
        state = self.table_log(table).latest()
        root = self.root.state  # resolving the table's markers read the root as far as they need
        state = self._whole(table, state, root)
        # Other tables read later are read as they are then (this snapshot's root may be older than
        # what they have seen decided; their own definitions are read from their logs).
        return self._snapshot(root, lambda t: self.table_log(t).latest(), {table: state})

    def cached(self) -> Snapshot:
        """The newest state this process knows of, without looking for other processes' commits."""
        return self._snapshot(self.root.state, lambda table: self.table_log(table).state)

    def is_latest(self, snap: Snapshot, rows: Key) -> bool:
        """Whether a snapshot's state of a row set is the newest this process knows of."""
        state = snap.rows_state(rows)
        if state is self.root.state:
            return True
        table = placement.table_of_rows(rows)
        return table is not None and snap.sharded and state is self.table_log(table).state

    def _snapshot(
        self,
        root: LogState,
        attach: Callable[[Key], LogState],
        tables: dict[Key, LogState | None] | None = None,
    ) -> Snapshot:
        if not self.sharded(root):
            return Snapshot(root)
        return Snapshot(root, sharded=True, tables=tables, attach=attach)

    def at_version(self, version: int, until: datetime | None = None) -> Snapshot:
        """The state right after root commit ``version`` (for time travel), with each table as it was
        then: without the table commits made after the root's next commit (or after ``until``, when
        sooner: a transaction's start)."""
        root = self.root.at_version(version)
        if root.version < self.root.state.version:
            before_next = self.root.entry_time(root.version + 1) - timedelta(microseconds=1)
            until = before_next if until is None else min(until, before_next)
        return self._snapshot(root, functools.partial(self._table_at, root=root, until=until))

    def as_of(self, when: datetime) -> Snapshot:
        """The state as of a time: after the last commit of each log made at or before it."""
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        _settle(when)
        root = self.root.as_of(when)
        return self._snapshot(root, functools.partial(self._table_at, root=root, until=when))

    def _table_at(self, table: Key, *, root: LogState, until: datetime | None) -> LogState:
        # With the root state in hand: asking the root log for it by version rebuilds it from a
        # checkpoint once other processes' commits have moved the log on (seconds on an object store).
        log_ = self.table_log(table)
        if until is not None:
            _settle(until)
        cut = self._whole(table, log_.at_root_cut(root.version), root)
        if until is None or cut.timestamp <= until:
            return cut
        by_time = log_.as_of(until)
        return by_time if by_time.version <= cut.version else cut

    def _table_to_change(
        self, table: Key, *, root: LogState, looked: bool, building: threading.Event, looked_at: set[Key]
    ) -> LogState:
        """A table's state for a root commit built on ``root``: its latest (``looked``), or as this
        process saw it within BUILD_ON_SEEN, with the entries it has read since (a marker of its own
        that the root did not take, when the commit lost a race). _RootMoved if a newer root decided
        a marker in it: the commit could not be published after ``root``, and cutting the table back
        to ``root`` may read the log from a checkpoint. Once the commit is built (``building``
        cleared), what a snapshot kept from it attaches is a reader's. ``looked_at``: the tables the
        commit looked at, which this adds to (their states are at least as new as that look)."""
        if not building.is_set():
            return self._table_at(table, root=root, until=None)
        where = self.table_log(table)
        seen = None if looked else where.seen(BUILD_ON_SEEN)
        if seen is None:
            state = where.latest()
            looked_at.add(table)
        else:
            state = where.caught_up(seen)
        if state.decided > root.version:
            raise _RootMoved
        return self._whole(table, state, root)

    def _whole(self, table: Key, state: LogState, root: LogState) -> LogState:
        """``state`` of a table's log, checked to hold every marker ``root`` committed there: a table log
        that lost one (its newest entries deleted) is damage, not an older table."""
        mark = root.get(placement.MARKS, table) if self.sharded(root) else None
        if mark is None or state.version >= mark["version"]:
            return state
        where = self.table_log(table)
        again = where.latest()  # the root may have been read after the table, and decided a marker since
        if again.version >= mark["version"]:
            return where.at_root_cut(root.version) if again.decided > root.version else again
        raise StorageError(
            f"{self.fs.uri(where.where.log_path(mark['version']))}: missing, while root version "
            f"{mark['root']} committed it: the log of table {'.'.join(table)} lost its newest entries (damage)"
        )

    def table_version(self, table: Key) -> int:
        """The version of a table's log now (one look): it moves on with every commit that changes the
        table, and with nothing else. In a warehouse whose tables share the root log, the root's."""
        if not self.sharded():
            return self.root.latest().version
        return self.table_log(table).latest().version

    def log_entries(self, after: int, upto: int) -> Iterator[log.Entry]:
        """The root log's published entries after version ``after`` up to ``upto``, oldest first and
        read as they are reached (a caller looking for one stops reading there): each names its
        operation and its actions. An expired entry is its stub (``expired`` set, no actions)."""
        return self.root.entries(after, upto)

    def table_entries(self, table: Key, after: int, upto: int) -> Iterator[log.Entry]:
        """A table log's entries after ``after`` up to ``upto`` (the root's, where tables share it)."""
        if not self.sharded():
            return self.root.entries(after, upto)
        return self.table_log(table).entries(after, upto)

    def entry_records(self, entry: log.Entry) -> list[tuple[str, Key]]:
        """The kind and key of each record a published entry puts or deletes (StorageError if the
        record file it names is gone: an expiry removed it)."""
        out: list[tuple[str, Key]] = []
        for action in entry.actions:
            if isinstance(action, log.InlineRecords):
                out.extend((kind, key) for kind, key, _ in action.records)
            elif isinstance(action, log.AddRecords):
                try:
                    data = self._read_data(action.path)
                except FileNotFoundError as e:
                    raise StorageError(f"{self.fs.uri(action.path)}: the record file is missing") from e
                out.extend((kind, key) for kind, key, _ in files.read_records(data, self.fs.uri(action.path)))
        return out

    # -- segments ------------------------------------------------------------------------------

    def read_segment(self, path: str, cache: bool = True) -> pa.Table:
        """A partition segment file's rows (segments are immutable, so they are cached by name).

        ``cache=False`` is for readers that keep the rows themselves (the latest partition views fold them
        into their own tables, compaction writes them out): caching them too would hold every row twice.
        """
        with self._segment_cache_lock:
            table = self._segment_cache.get(path)
            if table is not None:
                self._segment_cache.move_to_end(path)
                return table
            table = self._recent.get(path)
            if table is not None:
                return table
        table = self._read_segment_rows(path)
        if not cache:
            return table
        with self._segment_cache_lock:
            self._segment_cache[path] = table
            self._segment_cache_rows += _weight(table)
            # Bounded by rows, not files: merged segments are large and superseded ones are dead weight.
            while self._segment_cache_rows > SEGMENT_CACHE_ROWS and len(self._segment_cache) > 1:
                _, old = self._segment_cache.popitem(last=False)
                self._segment_cache_rows -= _weight(old)
        return table

    def read_segments(self, paths: list[str], cache: bool = True) -> list[pa.Table]:
        """Several segments' rows, the ones not in memory read at once (an object store's GETs in
        parallel)."""
        fetched: dict[str, pa.Table] = {}
        missing = [p for p in paths if not self._in_memory(p) and layout.inline_segment_entry(p) is None]
        if len(missing) > 1 and self.fs.parallelism > 1:
            for path, data in zip(missing, self.fs.read_many(missing), strict=True):
                if data is None:
                    continue  # read_segment says which is missing
                log.verify_named(data, path, self.fs.uri(path))
                rows = files.read_parquet_bytes(data, self.fs.uri(path))
                fetched[path] = rows
                if cache:
                    self._cache_segment(path, rows)
        return [fetched[p] if p in fetched else self.read_segment(p, cache) for p in paths]

    def _in_memory(self, path: str) -> bool:
        with self._segment_cache_lock:
            return path in self._segment_cache or path in self._recent

    def _cache_segment(self, path: str, rows: pa.Table) -> None:
        with self._segment_cache_lock:
            if path in self._segment_cache:
                return
            self._segment_cache[path] = rows
            self._segment_cache_rows += _weight(rows)
            while self._segment_cache_rows > SEGMENT_CACHE_ROWS and len(self._segment_cache) > 1:
                _, old = self._segment_cache.popitem(last=False)
                self._segment_cache_rows -= _weight(old)

    def segment_footer(self, path: str) -> tuple[int, dict[bytes, bytes]]:
        """A segment's row count and key-value metadata, from its Parquet footer alone (cached)."""
        with self._segment_cache_lock:
            found = self._footers.touch(path)
        if found is None:
            with self._segment_cache_lock:
                table = self._segment_cache.get(path)
            if table is None and layout.inline_segment_entry(path) is not None:
                table = self._read_segment_rows(path)  # a commit's few rows: no footer of their own
            if table is not None:
                found = (table.num_rows, dict(table.schema.metadata or {}))
            else:
                try:
                    found = files.footer(self._read_data(path), self.fs.uri(path))
                except FileNotFoundError as e:
                    raise StorageError(f"{self.fs.uri(path)}: the partition segment is missing") from e
            self._keep_footer(path, found)
        return found

    def _keep_footer(self, path: str, footer: tuple[int, dict[bytes, bytes]]) -> None:
        with self._segment_cache_lock:
            self._footers[path] = footer

    def segment_exists(self, path: str) -> bool:
        """Whether a segment can still be read (an expiry may have removed a replaced one, or left a
        stub in place of the entry that carried it)."""
        entry_name = layout.inline_segment_entry(path)
        if entry_name is None:
            return self.fs.exists(path)
        try:
            return self._carrier(path, entry_name, fresh=True).expired is None
        except StorageError:
            return False

    def _read_data(self, path: str) -> bytes:
        """A data file's bytes, verified against the checksum its name carries (FileNotFoundError if
        it is missing: the caller knows who named it)."""
        data = self.fs.read_bytes(path)
        log.verify_named(data, path, self.fs.uri(path))
        return data

    def _carrier(self, path: str, entry_name: str, *, fresh: bool = False) -> log.Entry:
        where = layout.layout_of(entry_name)
        version = where.parse_log_path(entry_name) if where is not None else None
        if where is None or version is None:
            raise StorageError(f"{path}: not a segment name")
        opened = self._log_at(where)
        if opened is not None and not fresh:
            try:
                return opened.read_entry(version)
            except StorageError as e:
                if self.fs.exists(entry_name):
                    raise
                raise StorageError(
                    f"{self.fs.uri(entry_name)}, which holds segment {path}, is missing"
                ) from e
        try:
            data = self.fs.read_bytes(entry_name)
        except FileNotFoundError as e:
            raise StorageError(f"{self.fs.uri(entry_name)}, which holds segment {path}, is missing") from e
        return log.parse(data, self.fs.uri(entry_name), version, where=where)

    def _read_segment_rows(self, path: str) -> pa.Table:
        entry_name = layout.inline_segment_entry(path)
        if entry_name is None:
            try:
                return files.read_parquet_bytes(self._read_data(path), self.fs.uri(path))
            except FileNotFoundError as e:
                raise StorageError(f"{self.fs.uri(path)}: the partition segment is missing") from e
        entry = self._carrier(path, entry_name)
        if entry.expired is not None:
            raise StorageError(f"{self.fs.uri(entry_name)}, which held segment {path}, has expired")
        for action in entry.actions:
            if isinstance(action, log.AddSegment) and action.path == path and action.inline is not None:
                return self._inline_rows(action, f"{self.fs.uri(entry_name)} (segment {path})")
        raise StorageError(f"{self.fs.uri(entry_name)} does not hold segment {path}")

    @staticmethod
    def _inline_rows(action: log.AddSegment, name: str) -> pa.Table:
        assert action.inline is not None
        try:
            data = base64.b64decode(action.inline.data, validate=True)
        except (TypeError, ValueError) as e:
            raise StorageError(f"{name}: the inline segment is not base64 ({e})") from e
        if action.inline.encoding is not None:
            return files.read_inline_segment(data, action.inline.encoding, action.inline.size, name)
        return files.read_parquet_bytes(data, name)  # storage format 2 carried Parquet

    def write_segment(self, rows: pa.Table) -> str:
        """Write a partition segment ahead of the commit that will name it (in ``Changes.segment_merges``),
        so that a large write does not hold up other commits; returns its path. If no commit ends up
        naming it, the caller calls ``discard_segment``."""
        data = files.segment_parquet_bytes(rows)
        path = layout.data_path(uuid.uuid4().hex, log.checksum(data), "partitions")
        self.fs.write_new(path, data)
        self.fs.sync_folder(layout.DATA_DIR)
        self._written_segment(path, rows)
        return path

    def discard_segment(self, path: str) -> None:
        """Delete a segment written by ``write_segment`` that no commit names."""
        self._forget_segment(path)
        self.fs.delete(path)

    def checkpoint(self) -> int:
        """Write a checkpoint of each log's latest state now (unless there is one of it); the root's
        version."""
        for where in self.table_logs():
            where.checkpoint()
        return self.root.checkpoint()

    # -- committing ----------------------------------------------------------------------------

    def commit(self, operation: str, build: Build[T], *, table: Key | None = None) -> T:
        """Run ``build`` against the latest state and publish its changes; returns what ``build``
        returned.

        ``table``: the commit reads and changes that table's log only (its partitions, statistics,
        versions, indexes; what else it reads, such as its database, every change of which leaves a
        marker in the table's log); otherwise the root decides it. On a lost race the whole of ``build``
        runs again on the newer state (unless, for a table's commit, what won changed nothing it read),
        so a precondition that no longer holds raises instead of being overwritten.
        """
        return self.commit_landing(operation, build, table=table)[0]

    def commit_landing(self, operation: str, build: Build[T], *, table: Key | None = None) -> tuple[T, int]:
        """``commit``, and the version of the log it landed in (the table's, for a commit to one table;
        the root's otherwise): what a caller that keeps something derived from that log labels it with.
        The version is -1 when there was nothing to commit."""
        if table is not None and self.sharded():
            return self._commit_to_table(operation, build, table)
        return self._commit_to_root(operation, build)

    def _commit_to_table(self, operation: str, build: Build[T], table: Key) -> tuple[T, int]:
        where = self.table_log(table)
        commit_id = uuid.uuid4().hex
        deadline = time.monotonic() + self.commit_seconds
        with self._table_turn(table):
            for attempt in range(self.max_attempts):
                if attempt and time.monotonic() > deadline:
                    raise OperationTimeoutException(
                        f"{operation}: gave up after {self.commit_seconds:g} s of lost races against "
                        "concurrent writers of the table; nothing was committed"
                    )
                if attempt == 0 and self.fs.takes_turns:
                    self._offer_turn(where)
                # A listing is a round trip on an object store: a first attempt builds on what this
                # process saw just now, since a log that moved on refuses its publication. What it
                # answers without publishing (an error, nothing to do) is checked against the log.
                seen = attempt == 0 and self.fs.listing_is_cheap and where.pending is None
                state = where.recent(BUILD_ON_SEEN) if seen else self._settled(where)
                built_on = state.version
                root = self.root.state
                state = self._whole(table, state, root)
                snap = Snapshot(
                    root, sharded=True, tables={table: state}, attach=lambda t: self.table_log(t).latest()
                )
                try:
                    changes, result = build(snap)
                except Exception:
                    if seen and self._settled(where).version != built_on:
                        continue  # built on a state others had moved past: build again on theirs
                    raise
                if changes.is_empty():
                    if seen and self._settled(where).version != built_on:
                        continue
                    return result, -1
                for rows in _rows_touched(changes):
                    if placement.table_of_rows(rows) != table:
                        raise AssertionError(
                            f"a commit to the log of {list(table)} changes row set {list(rows)}"
                        )
                for kind, key in _records_touched(changes):
                    if kind == placement.TABLE or placement.table_of(kind, key) != table:
                        raise AssertionError(
                            f"a commit to the log of {list(table)} changes {kind} {list(key)}"
                        )
                published = self._publish_to_table(
                    operation, where, table, state, changes, commit_id, deadline
                )
                if published is not None:
                    return result, published.version
                time.sleep(random.uniform(0, min(0.05, 0.001 * 2 ** min(attempt, 6))))
        raise OperationTimeoutException(
            f"{operation}: gave up after {self.max_attempts} attempts to commit against concurrent writers"
        )

    def _publish_to_table(
        self,
        operation: str,
        where: Log,
        table: Key,
        base: LogState,
        changes: Changes,
        commit_id: str,
        deadline: float,
    ) -> LogState | None:
        """Publish a table's commit after ``base``; on a lost race, again after the entries it lost to
        as long as they changed nothing it read (and ``deadline`` has not passed). The new state, or
        None to build it again."""
        written = _Written()
        version = base.version + 1
        try:
            self._write_files(changes, commit_id, where.where, version, written)
        except BaseException as e:
            self._discard(written)
            raise self._write_failure(e, written) from e
        # Its turn among this machine's writers of the table is kept across a lost race, so that the
        # entries it lost to are read and it publishes again before the next of them overtakes it.
        with where.queue() as queued:
            for _ in range(self.max_attempts):
                timestamp = max(datetime.now(UTC), base.timestamp)
                entry = log.Entry(
                    version=version,
                    commit_id=commit_id,
                    timestamp_us=to_micros(timestamp),
                    operation=operation,
                    actions=tuple(written.actions),
                    prev=base.link.chain,
                )
                data, chain = log.encode(entry)
                if self.fs.takes_turns:
                    self._read_note_if_due(where)
                started = time.monotonic()
                try:
                    published = (self.fs.listing_is_cheap or not where.gap_after(version)) and where.publish(
                        version, data, commit_id, queued=queued
                    )
                except OutcomeUnknown:
                    raise  # its entry may yet name the files: they stay (an expiry sweeps orphans)
                except StorageError:
                    self._discard(written)
                    raise
                if self.fs.takes_turns:
                    self._took_turn(where, time.monotonic() - started, published)
                if published:
                    return self._landed(where, base, entry, chain, written, timestamp)
                if changes.reads is None:
                    break
                newer = where.caught_up(where.taken(base))  # what took the version: read directly
                if newer.version == base.version:
                    newer = self._settled(where)  # a marker waiting for the root
                why = self._conflict(where, table, base, newer, changes.reads) or _misfit(newer, written)
                if why is not None:
                    logger.debug("%s on %s: built again (%s)", operation, list(table), why)
                    break
                if time.monotonic() > deadline:
                    break
                # Nothing it read changed: the same commit, after what won.
                base, version = newer, newer.version + 1
                if self.fs.takes_turns:
                    time.sleep(where.turns.backoff())
                _renumber(written, where.where, version)
        self._discard(written)
        return None

    def _offer_turn(self, where: Log) -> None:
        """Before a table's commit builds: if writers of other processes wait for the log and this one
        won the last version, give them time to publish the next, and build after theirs (turns.py)."""
        wait = where.turns.wait()
        while wait:
            time.sleep(wait)
            started = time.monotonic()
            try:
                found = where.peek()
            except OSError as e:  # only a look: the commit's own requests say whether the store works
                logger.debug("a look at %r failed: %s", where, e)
                found = False
            wait = where.turns.looked(found, time.monotonic() - started)

    def _read_note_if_due(self, where: Log) -> None:
        """Before a publication: if this writer keeps winning, read the log's note on a background
        thread (turns.py), whose content its next ``Turns.wait`` takes."""
        if where.turns.check_due():
            reading = self._in_background(self.fs.read_or_none, where.where.note_path)
            if reading is not None:
                where.turns.reading(reading)

    def _took_turn(self, where: Log, seconds: float, won: bool) -> None:
        """After a publication to a table's log: its time, and on a lost race a note that this process
        waits (turns.py), left on a background thread while it publishes again."""
        where.turns.published(seconds, won)
        note = None if won else where.turns.note_due()
        if note is not None:
            self._in_background(self._leave_note, where, note)

    def _leave_note(self, where: Log, note: bytes) -> None:
        try:
            self.fs.replace(where.where.note_path, note)
        except OSError as e:  # only a hint: the writer goes on losing until one lands
            logger.debug("the note of %r not left: %s", where, e)

    def _in_background(self, call: Callable[..., R], *args: Any) -> Future[R] | None:
        """``call`` on a thread of its own, for a request a commit does not wait for (the notes of
        turns.py); None where no thread can start (the interpreter is exiting): a note is only a hint,
        and a commit, published or not, must not fail for it."""
        try:
            with self._background_lock:
                if self._background_pool is None:
                    self._background_pool = ThreadPoolExecutor(2, thread_name_prefix="gluecat-turns")
                return self._background_pool.submit(call, *args)
        except RuntimeError:
            return None

    def _conflict(
        self, where: Log, table: Key, base: LogState, newer: LogState, reads: conflicts.Reads
    ) -> str | None:
        """Why the entries between ``base`` and ``newer`` conflict with ``reads`` (None if they do not)."""
        if newer.version <= base.version:
            return None
        for entry in where.entries(base.version, newer.version):
            if entry.expired is not None:
                return "history expired"
            written = conflicts.Written()
            if entry.decided_by is not None:
                committed, _ = self._resolve(entry.decided_by)
                if not committed:
                    continue
                written.decided = True
            for action in entry.actions:
                if isinstance(action, log.InlineRecords):
                    written.records.extend((kind, key) for kind, key, _ in action.records)
                elif isinstance(action, log.AddRecords):
                    written.records.extend(self.entry_records(log.Entry(0, "", 0, "", (action,))))
                elif isinstance(action, log.AddSegment):
                    rows = self.read_segment(action.path)  # kept: the table's view reads it next
                    vks = rows.column("_vk").to_pylist() if "_vk" in rows.column_names else []
                    written.identities.setdefault(action.table, set()).update(str(vk) for vk in vks)
                elif isinstance(action, log.RemoveSegment):
                    written.removed.setdefault(action.table, set()).add(action.path)
                elif isinstance(action, log.MergeSegments):
                    written.merged.setdefault(action.table, set()).update(action.run)
            why = conflicts.conflict(reads, written)
            if why is not None:
                return why
        return None

    def _settled(self, where: Log) -> LogState:
        """A table log's latest state, once no marker at its end waits for the root: a marker whose
        root entry has not come within FENCE_AFTER is fenced."""
        deadline = None
        delay = 0.005
        while True:
            state = where.latest()
            pending = where.pending
            if pending is None:
                return state
            now = time.monotonic()
            if deadline is None:
                deadline = now + FENCE_AFTER
            elif now >= deadline:
                self._fence(pending.version)
                deadline = None
                continue
            time.sleep(min(delay, max(deadline - now, 0.001)))
            delay = min(delay * 2, 0.25)

    def _fence(self, version: int) -> None:
        """Publish an empty root entry as ``version`` (if it is still free), so that no marker naming
        that version counts: its writer died or stalled before publishing it."""
        with self._root_commit_lock:
            root = self.root.latest()
            if root.version >= version:
                return
            if root.version != version - 1:
                raise StorageError(
                    f"{self.fs.uri(layout.LOG_DIR)}: a marker names root version {version}, but the root "
                    f"is at version {root.version}"
                )
            entry = log.Entry(
                version=version,
                commit_id=uuid.uuid4().hex,
                timestamp_us=to_micros(max(datetime.now(UTC), root.timestamp)),
                operation="FenceMarkers",
                prev=root.link.chain,
            )
            data, chain = log.encode(entry)
            if self.root.publish(version, data, entry.commit_id):
                logger.warning(
                    "fenced root version %d: a commit's markers were not followed by its entry", version
                )
                self.root.adopt(
                    apply(root, version, from_micros(entry.timestamp_us), [], [], [], (), Link(chain, True))
                )

    def _commit_to_root(self, operation: str, build: Build[T]) -> tuple[T, int]:
        with self._root_commit_lock:
            looked_at: set[Key] = set()
            lost: LogState | None = None
            look = True
            for attempt in range(self.max_attempts):
                if attempt == 0:
                    if self.fs.takes_turns:
                        self._offer_turn(self.root)  # writers of the root take turns as a table's do
                    # A listing is a round trip on an object store: a first attempt builds on what this
                    # process saw of the root and the tables it changes just now, since a log that moved
                    # on refuses the publication (the root's entry, a table's marker). What no
                    # publication checks (an error, nothing to do, a table only read) is looked at
                    # first. Not while others commit to the root: a loser's retry costs it a marker
                    # more, and a writer that built on a state others left behind would lose again.
                    look = not self.fs.listing_is_cheap or (self.fs.takes_turns and self.root.turns.others)
                commit_id = uuid.uuid4().hex  # one per attempt: an attempt's markers name it
                # After a lost race, built again on the entry that won, read back by the lost
                # publication, and on the tables as last read, without a look: a loser publishes
                # again within the turn the winner offers it (turns.py).
                if lost is not None:
                    root = lost
                else:
                    root = (
                        self.root.latest() if look else self.root.caught_up(self.root.recent(BUILD_ON_SEEN))
                    )
                looked = look and lost is None
                building = threading.Event()
                building.set()
                snap = self._snapshot(
                    root,
                    functools.partial(
                        self._table_to_change,
                        root=root,
                        looked=looked,
                        building=building,
                        looked_at=looked_at,
                    ),
                )
                try:
                    changes, result = build(snap)
                except _RootMoved:
                    newer = self.root.caught_up(self.root.state)  # resolving the table's markers read it
                    lost = newer if newer.version > root.version else self.root.latest()
                    continue
                except Exception:
                    if looked:
                        raise
                    lost, look = None, True  # an answer from state not looked at: build again on the log's
                    continue
                finally:
                    building.clear()
                if changes.is_empty():
                    if looked:
                        return result, -1
                    lost, look = None, True
                    continue
                root_changes, table_changes = _split(changes, snap.sharded)
                if not looked and any(
                    table not in table_changes and table not in looked_at for table in snap.attached()
                ):
                    lost, look = None, True  # a table read, not changed, as this process saw it earlier
                    continue
                if self._publish_to_root(
                    operation, root, snap, root_changes, table_changes, commit_id, recheck=lost is None
                ):
                    return result, root.version + 1
                newer = self.root.caught_up(self.root.state)  # what took the version, read back
                lost = newer if newer.version > root.version else None
                if lost is None:
                    look = True
                    time.sleep(random.uniform(0, min(0.05, 0.001 * 2 ** min(attempt, 6))))
                elif self.fs.takes_turns:
                    time.sleep(self.root.turns.backoff())  # losers, a round trip from the next version
        raise OperationTimeoutException(
            f"{operation}: gave up after {self.max_attempts} attempts to commit against concurrent writers"
        )

    def _publish_to_root(
        self,
        operation: str,
        root: LogState,
        snap: Snapshot,
        root_changes: Changes,
        table_changes: dict[Key, Changes],
        commit_id: str,
        *,
        recheck: bool,
    ) -> bool:
        """Publish a root commit (``root_changes``, and its markers of ``table_changes`` in the tables'
        logs) after ``root``; whether it landed. ``recheck``: whether markers in several tables wait
        for a look that finds none of them moved on since it was read (a fence undoes markers of which
        only some land); a retry after a lost race goes without, on tables read moments ago. One
        marker's put-if-absent says so itself."""
        version = root.version + 1
        markers: list[_Marker] = []
        written = _Written()
        try:
            if table_changes:
                attached = snap.attached()
                for table, part in table_changes.items():
                    where = self.table_log(table)
                    base = attached.get(table)
                    if base is None:
                        base = self._settled(where)
                    elif (
                        recheck and len(table_changes) > 1 and where.latest().version != base.version
                    ) or where.pending is not None:
                        # Another commit's marker waits for the root, or (markers in several tables,
                        # which a fence undoes if only some land) the table moved on since it was read:
                        # build again once it has settled. One marker's put-if-absent says so itself.
                        self._abandon(markers, None)
                        self._settled(where)
                        return False
                    marker_written = _Written()
                    self._write_files(part, commit_id, where.where, base.version + 1, marker_written)
                    entry = log.Entry(
                        version=base.version + 1,
                        commit_id=commit_id,
                        timestamp_us=to_micros(datetime.now(UTC)),
                        operation=operation,
                        actions=tuple(marker_written.actions),
                        prev=base.link.chain,
                        decided_by=log.Decision(version, commit_id),
                    )
                    markers.append(_Marker(table, where, base, entry, marker_written))
                if not self._publish_markers(markers):
                    if self.fs.takes_turns:
                        self._took_turn(self.root, 0.0, False)  # lost to another root commit's marker
                    return self._abandon(markers, version)
            self._write_files(root_changes, commit_id, layout.ROOT_LOG, version, written)
        except BaseException as e:
            self._discard(written)
            self._abandon(markers, version if markers else None)
            raise self._write_failure(e, written) from e
        timestamp = max(datetime.now(UTC), root.timestamp)
        actions = list(written.actions)
        marks = [log.Marks(m.table, m.base.version + 1) for m in markers]
        actions.extend(marks)
        written.records.extend(marks_record(version, m) for m in marks)
        entry = log.Entry(
            version=version,
            commit_id=commit_id,
            timestamp_us=to_micros(timestamp),
            operation=operation,
            actions=tuple(actions),
            prev=root.link.chain,
        )
        data, chain = log.encode(entry)
        if self.fs.takes_turns:
            self._read_note_if_due(self.root)
        started = time.monotonic()
        try:
            # A later entry without this one is a gap left by a deleted entry: publishing here would
            # put this commit under entries made without it.
            published = (self.fs.listing_is_cheap or not self.root.gap_after(version)) and self.root.publish(
                version, data, commit_id
            )
        except OutcomeUnknown:
            raise  # its entry may yet land: its files and markers stay, and the markers wait for it
        except StorageError:
            self._discard(written)
            self._abandon(markers, None)
            raise
        if self.fs.takes_turns:
            self._took_turn(self.root, time.monotonic() - started, published)
        if not published:
            self._discard(written)
            self._abandon(markers, None)  # the root's version is another commit's: they count for nothing
            return False
        self._landed(self.root, root, entry, chain, written, timestamp)
        for m in markers:
            self._landed(m.where, m.base, m.entry, m.chain, m.written, timestamp, decided=version)
        return True

    def _publish_markers(self, markers: list[_Marker]) -> bool:
        """Publish each table's marker (at once, on an object store); False if one lost its race, or
        could not learn whether it landed."""

        def one(m: _Marker) -> bool:
            data, chain = log.encode(m.entry)
            if not self.fs.listing_is_cheap and m.where.gap_after(m.entry.version):
                return False
            try:
                if not m.where.publish(m.entry.version, data, m.entry.commit_id):
                    return False
            except OutcomeUnknown:
                m.unknown = True  # it may be there, or land yet
                return False
            m.chain = chain
            # Kept, as if read: if the root's version is lost, the next attempt builds on the table's
            # state after it (Log.caught_up), a marker that counts for nothing.
            m.where.keep(dataclasses.replace(m.entry, chain=chain))
            return True

        if len(markers) > 1 and self.fs.parallelism > 1:
            with ThreadPoolExecutor(min(self.fs.parallelism, len(markers))) as pool:
                results = list(pool.map(one, markers))
        else:
            results = [one(m) for m in markers]
        return all(results)

    def _abandon(self, markers: list[_Marker], fence: int | None) -> bool:
        """Forget an attempt's markers (their files, but those of one that may have landed); with
        ``fence``, make sure the root version they name never becomes their commit (an attempt that will
        not publish it)."""
        for m in markers:
            if not m.unknown:
                self._discard(m.written)
        if fence is not None and any(m.may_count() for m in markers):
            try:
                self._fence(fence)
            except Exception as e:  # the next writer of those tables fences it after FENCE_AFTER
                logger.warning("could not fence root version %d: %s", fence, e)
        return False

    def _landed(
        self,
        where: Log,
        base: LogState,
        entry: log.Entry,
        chain: str,
        written: _Written,
        timestamp: datetime,
        decided: int | None = None,
    ) -> LogState:
        """A published entry applied to the state it was built on; a checkpoint every so often."""
        for path, rows in written.inline:
            self._written_segment(path, rows)
        state = apply(
            base,
            entry.version,
            timestamp,
            written.records,
            written.seg_adds,
            written.seg_removes,
            written.seg_merges,
            Link(chain, True),
            decided,
        )
        where.adopt(state)
        if where.root:
            where._remember(entry.version, entry.commit_id)
        if entry.version > 0 and entry.version % self.checkpoint_interval == 0:
            # The commit has landed: a checkpoint is only an optimisation, so failing to write one must
            # not make the caller believe its change failed.
            try:
                where.write_checkpoint(state)
            except Exception as e:
                logger.warning("checkpoint at version %d of %r not written: %s", entry.version, where, e)
        return state

    @contextlib.contextmanager
    def _table_turn(self, table: Key) -> Iterator[None]:
        """Hold this process's turn to commit to ``table``. The table's lock lives while a commit of it
        is under way or waiting: a server committing to many tables over its life keeps none for each."""
        with self._tables_lock:
            turn = self._table_commit_locks.setdefault(table, _Turn())
            turn.users += 1
        try:
            with turn.lock:
                yield
        finally:
            with self._tables_lock:
                turn.users -= 1
                if turn.users == 0 and self._table_commit_locks.get(table) is turn:
                    del self._table_commit_locks[table]

    def _write_failure(self, e: BaseException, written: _Written) -> BaseException:
        if isinstance(e, OSError) and written.paths:
            name = self.fs.uri(written.paths[-1])
            return StorageError(f"{name}: a file of the commit could not be written ({e})")
        return e

    def _write_files(
        self, changes: Changes, commit_id: str, where: layout.LogLayout, version: int, w: _Written
    ) -> None:
        """Write the files ``changes`` need into ``w``, naming each in ``w.paths`` before writing it (so
        that a failure part way can delete what was written, even in part)."""
        w.records = [(k, key, doc) for k, key, doc in changes.puts] + [
            (k, key, None) for k, key in changes.deletes
        ]
        records = _carried_records(w.records, changes.inline_records)
        if records is not None:
            w.actions.append(log.InlineRecords(records))
        elif w.records:
            data = files.to_parquet_bytes(files.record_table(w.records))
            path = layout.data_path(f"{commit_id}-{uuid.uuid4().hex[:8]}", log.checksum(data), "records")
            w.paths.append(path)
            self.fs.write_new(path, data)
            w.actions.append(log.AddRecords(path))
        for table_key, rows in changes.segment_adds:
            inline = None
            carried = files.inline_segment_bytes(rows, INLINE_SEGMENT_BYTES)
            if carried is not None:
                path = where.inline_segment_path(version, len(w.inline))
                data, size = carried
                inline = log.Inline(base64.b64encode(data).decode("ascii"), files.INLINE_ENCODING, size)
                w.inline.append((path, rows))
            else:
                data = files.segment_parquet_bytes(rows)
                stem = f"{commit_id}-{uuid.uuid4().hex[:8]}"
                path = layout.data_path(stem, log.checksum(data), "partitions")
                w.paths.append(path)
                self.fs.write_new(path, data)
                self._written_segment(path, rows)  # a name of its own: nobody else's rows can have it
            w.seg_adds.append((table_key, path))
            w.actions.append(log.AddSegment(path, table_key, rows.num_rows, inline))
        if w.paths:
            self.fs.sync_folder(layout.DATA_DIR)
        for table_key, path in changes.segment_removes:
            w.seg_removes.append((table_key, path))
            w.actions.append(log.RemoveSegment(path, table_key))
        for table_key, run, into in changes.segment_merges:
            w.seg_merges.append((table_key, run, into))
            w.actions.append(log.MergeSegments(run, into, table_key, self.segment_footer(into)[0]))
        w.actions.extend(changes.actions)

    def wrote(self, path: str) -> bool:
        """Whether this store wrote segment ``path`` (one of its newest OWN_KEPT)."""
        with self._segment_cache_lock:
            return path in self._own

    def _written_segment(self, path: str, rows: pa.Table) -> None:
        self._keep_footer(path, (rows.num_rows, dict(rows.schema.metadata or {})))
        with self._segment_cache_lock:
            self._own[path] = True
        if rows.num_rows > RECENT_SEGMENT_ROWS // 8:
            return
        with self._segment_cache_lock:
            self._recent[path] = rows
            self._recent_rows += _weight(rows)
            self._trim_recent()

    def _trim_recent(self) -> None:
        while self._recent_rows > RECENT_SEGMENT_ROWS and self._recent:
            _, old = self._recent.popitem(last=False)
            self._recent_rows -= _weight(old)

    def _forget_segment(self, path: str) -> None:
        with self._segment_cache_lock:
            self._footers.pop(path, None)
            self._own.pop(path, None)
            old = self._recent.pop(path, None)
            if old is not None:
                self._recent_rows -= _weight(old)

    def _discard(self, written: _Written) -> None:
        """Forget what an attempt that did not commit wrote."""
        for path in written.paths:  # definitely not committed: nobody will ever name these
            self._forget_segment(path)
            self.fs.delete(path)


def _misfit(state: LogState, written: _Written) -> str | None:
    """Why an attempt's changes do not apply to ``state`` as they are (a merge whose run is no longer
    there), which its declared reads did not foresee; None if they apply. Checked before an entry is
    published again after others: an entry that cannot be applied must never be published."""
    try:
        apply(
            state,
            state.version + 1,
            state.timestamp,
            [],
            written.seg_adds,
            written.seg_removes,
            written.seg_merges,
        )
    except StorageError as e:
        return str(e)
    return None


def _settle(when: datetime) -> None:
    """Wait until commits stamped at or before ``when`` are published: a commit is stamped before its
    entry is published (written and synced first), so one stamped then may still become visible. (A
    time still to come gets the latest state, which a read made later need not repeat.)"""
    settled = when + COMMIT_SETTLE
    now = datetime.now(UTC)
    if now < settled and when <= now:
        time.sleep((settled - now).total_seconds())


def _renumber(written: _Written, where: layout.LogLayout, version: int) -> None:
    """An attempt's entry moved to another version: its inline segments' names say the version."""
    renames = {path: where.inline_segment_path(version, i) for i, (path, _) in enumerate(written.inline)}
    if not renames:
        return
    written.inline = [(renames[p], rows) for p, rows in written.inline]
    written.seg_adds = [(t, renames.get(p, p)) for t, p in written.seg_adds]
    written.actions = [
        log.AddSegment(renames[a.path], a.table, a.rows, a.inline)
        if isinstance(a, log.AddSegment) and a.path in renames
        else a
        for a in written.actions
    ]


def _rows_touched(changes: Changes) -> set[Key]:
    out = {rows for rows, _ in changes.segment_adds}
    out.update(rows for rows, _ in changes.segment_removes)
    out.update(rows for rows, _, _ in changes.segment_merges)
    return out


def _records_touched(changes: Changes) -> list[tuple[str, Key]]:
    return [(kind, key) for kind, key, _ in changes.puts] + list(changes.deletes)


def _split(changes: Changes, sharded: bool) -> tuple[Changes, dict[Key, Changes]]:
    """A commit's changes as the root keeps them and as each table's log keeps them (a table's
    definition goes to both)."""
    if not sharded:
        return changes, {}
    root = Changes(inline_records=changes.inline_records, actions=list(changes.actions))
    tables: dict[Key, Changes] = {}

    def part(table: Key) -> Changes:
        found = tables.get(table)
        if found is None:
            found = tables[table] = Changes(inline_records=True)
        return found

    for kind, key, doc in changes.puts:
        table = placement.table_of(kind, key)
        if table is not None:
            part(table).puts.append((kind, key, doc))
        if placement.in_root(kind):
            root.puts.append((kind, key, doc))
    for kind, key in changes.deletes:
        table = placement.table_of(kind, key)
        if table is not None:
            part(table).deletes.append((kind, key))
        if placement.in_root(kind):
            root.deletes.append((kind, key))
    for rows, rows_table in changes.segment_adds:
        t = placement.table_of_rows(rows)
        (part(t) if t is not None else root).segment_adds.append((rows, rows_table))
    for rows, path in changes.segment_removes:
        t = placement.table_of_rows(rows)
        (part(t) if t is not None else root).segment_removes.append((rows, path))
    for rows, run, into in changes.segment_merges:
        t = placement.table_of_rows(rows)
        (part(t) if t is not None else root).segment_merges.append((rows, run, into))
    return root, tables


def _carried_records(
    records: list[tuple[str, Key, Any | None]], always: bool
) -> tuple[tuple[str, Key, str | None], ...] | None:
    """A commit's records as its entry carries them inline, or None for a record file of their own:
    up to INLINE_RECORDS_BYTES of them unless ``always``."""
    if not records:
        return None
    carried = []
    size = 0
    for kind, key, doc in records:
        text = _doc_text(doc)
        size += len(text or "")
        if size > INLINE_RECORDS_BYTES and not always:
            return None
        carried.append((kind, key, text))
    return tuple(carried)


def _doc_text(doc: Any | None) -> str | None:
    """A record's document as the canonical JSON an entry carries inline (None for a deletion)."""
    if doc is None:
        return None
    return doc.text if isinstance(doc, Raw) else codec.dumps(doc)
