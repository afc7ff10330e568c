"""The warehouse store: immutable Parquet files plus an append-only commit log.

Version N of the state is published by creating ``_gluecat/log/N.json`` exclusively; the entry names the
files the commit added. A writer that loses the race for N re-reads what it missed, re-runs its change
against the new state (so every precondition is checked again) and tries N+1. Every few commits a
checkpoint folds the state into one file so that opening stays fast however long the log grows.

Everything read is verified (gluecat.store.log): entries against their own checksum and the chain,
data files and checkpoints against the checksum their names carry. An expiry never frees a log entry's
name: it leaves a stub there, so a process that was behind finds the stub at its next look for a new
version and rebuilds from the newest checkpoint, and a writer that was behind loses its exclusive create.
"""

from __future__ import annotations

import base64
import logging
import random
import secrets
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.fs as pafs

from gluecat.errors import OperationTimeoutException, StorageError
from gluecat.store import codec, files, layout, log
from gluecat.store.codec import from_micros, to_micros
from gluecat.store.fs import WarehouseFS
from gluecat.store.snapshot import Changes, Key, Link, Raw, Snapshot, apply, empty

T = TypeVar("T")
logger = logging.getLogger(__name__)

Build = Callable[[Snapshot], tuple[Changes, T]]
"""A commit's body: given the latest state, check preconditions (raising GlueErrors) and say what changes."""

_GENESIS_TIME = datetime(1970, 1, 1, tzinfo=UTC)
SEGMENT_CACHE_ROWS = 2_000_000
INLINE_SEGMENT_BYTES = 128 * 1024
"""A commit's segment up to this size (compressed) travels inside its log entry instead of a file of its
own: one file to create and sync per small commit instead of two. Merges move such rows into files."""
COMMIT_SETTLE = timedelta(milliseconds=100)
"""How long after the time a commit is stamped with its log entry is published, at the most in practice
(writing and syncing the entry comes between: a millisecond or a few on a local disk). A read as of a
time less than this ago waits until this has passed, so that it answers what the same read made later
answers; a commit published later than this after its stamp (a stalled disk or process) can still
change such an answer."""
RECENT_SEGMENT_ROWS = 50_000
"""Small segments this process wrote lately stay in memory up to this many rows, so that its own next
reads (the partition view catching up, the merge of the newest segments) need not read them back."""


class _Expired(StorageError):
    """History asked for has expired."""


class HistoryExpired(StorageError):
    """A version or time asked for is older than the history the warehouse keeps (expiry removed it):
    the caller's request, not damage, though a StorageError to callers that only tell those apart."""


class _Stale(Exception):
    """Catching up met history an expiry removed (a stub, or a file an old entry names): this process
    was behind, and must rebuild from a newer checkpoint. ``reached`` is the state caught up to."""

    def __init__(self, reached: Snapshot, error: StorageError) -> None:
        super().__init__(str(error))
        self.reached = reached
        self.error = error


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
    ) -> None:
        self.fs = WarehouseFS.open(warehouse, single_writer=single_writer, fsync=fsync, filesystem=filesystem)
        self.checkpoint_interval = checkpoint_interval
        self.max_attempts = max_attempts
        self._refresh_lock = threading.Lock()
        self._commit_lock = threading.Lock()
        self._segment_cache: OrderedDict[str, pa.Table] = OrderedDict()
        self._segment_cache_lock = threading.Lock()
        self._segment_cache_rows = 0
        self._recent: OrderedDict[str, pa.Table] = OrderedDict()
        self._recent_rows = 0
        self._footers: dict[str, tuple[int, dict[bytes, bytes]]] = {}
        self._old_snapshots: OrderedDict[int, Snapshot] = OrderedDict()
        self._old_snapshots_lock = threading.Lock()  # time-travel reads come from many threads
        self._entry_times: dict[int, datetime] = {}
        self.secret = b""
        """The warehouse's own random key (signs continuation tokens); fixed when the warehouse is made."""
        self._snap = self._open()

    # -- reading -------------------------------------------------------------------------------

    def latest(self) -> Snapshot:
        """The newest committed state, including other processes' commits made up to now."""
        snap = self._snap
        if not self.fs.exists(layout.log_path(snap.version + 1)):
            return snap
        with self._refresh_lock:
            snap = self._refresh(self._snap)
            self._snap = snap
            return snap

    def _refresh(self, snap: Snapshot) -> Snapshot:
        """``snap`` caught up with the log; past an expiry this process missed, from the newest checkpoint."""
        for _ in range(20):
            try:
                return self._catch_up(snap)
            except _Stale as stale:
                cps = self._checkpoints()
                if not cps or cps[-1][0] <= stale.reached.version:
                    raise stale.error from None
                try:
                    snap = self._load_checkpoint(*cps[-1])
                except FileNotFoundError:
                    continue  # expired by a newer expiry meanwhile: look again
        raise StorageError(f"{self.fs.uri(layout.LOG_DIR)}: could not catch up with concurrent expiries")

    def cached(self) -> Snapshot:
        """The newest state this process knows of, without looking for other processes' commits."""
        return self._snap

    def at_version(self, version: int) -> Snapshot:
        """The state right after commit ``version`` (for time travel)."""
        latest = self.latest()
        if version >= latest.version:
            return latest
        with self._old_snapshots_lock:
            found = self._old_snapshots.get(version)
            if found is not None:
                self._old_snapshots.move_to_end(version)
                return found
        base = self._base_for(version)
        try:
            snap = self._catch_up(base, upto=version)
        except _Stale as stale:
            raise HistoryExpired(
                f"version {version} is older than the retained history ({stale.error})"
            ) from stale.error
        if snap.version != version:
            raise StorageError(
                f"{self.fs.uri(layout.log_path(snap.version + 1))}: missing (version {version} was asked for)"
            )
        with self._old_snapshots_lock:
            self._old_snapshots[version] = snap
            while len(self._old_snapshots) > 8:
                self._old_snapshots.popitem(last=False)
        return snap

    def as_of(self, when: datetime) -> Snapshot:
        """The state as of a time: after the last commit made at or before it."""
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        latest = self.latest()
        if when >= latest.timestamp:
            # A commit is stamped before its entry is published (written and synced first), so one
            # stamped at or before ``when`` may still become visible: wait until any such commit has.
            # (A time still to come gets the latest state, which a read made later need not repeat.)
            settled = when + COMMIT_SETTLE
            now = datetime.now(UTC)
            if now < settled and when <= now:
                time.sleep((settled - now).total_seconds())
                latest = self.latest()
            if when >= latest.timestamp:
                return latest
        lo, hi = self._oldest_version(), latest.version
        if self._entry_time(lo) > when:
            if lo > 0:  # the log's beginning expired (before format 4 expiry deleted entries)
                raise HistoryExpired(
                    f"{when.isoformat()} is older than the retained history of {self.fs.uri('')}"
                )
            return empty(_GENESIS_TIME)
        # Commit times never decrease along the log, so the version is found by bisection.
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._entry_time(mid) <= when:
                lo = mid
            else:
                hi = mid - 1
        return self.at_version(lo)

    def log_entries(self, after: int, upto: int) -> Iterator[log.Entry]:
        """The published log entries of the commits after version ``after`` up to ``upto``, oldest first
        and read as they are reached (a caller looking for one stops reading there): each names its
        operation and its actions (the segments it added and removed, by table). An expired entry is
        its stub (``expired`` set, no actions)."""
        return (self._read_entry(version) for version in range(after + 1, upto + 1))

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
            self._segment_cache_rows += table.num_rows
            # Bounded by rows, not files: merged segments are large and superseded ones are dead weight.
            while self._segment_cache_rows > SEGMENT_CACHE_ROWS and len(self._segment_cache) > 1:
                _, old = self._segment_cache.popitem(last=False)
                self._segment_cache_rows -= old.num_rows
        return table

    def segment_footer(self, path: str) -> tuple[int, dict[bytes, bytes]]:
        """A segment's row count and key-value metadata, from its Parquet footer alone (cached)."""
        found = self._footers.get(path)
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
            self._footers[path] = found
        return found

    def segment_exists(self, path: str) -> bool:
        """Whether a segment can still be read (an expiry may have removed a replaced one, or left a
        stub in place of the entry that carried it)."""
        entry_name = layout.inline_segment_entry(path)
        if entry_name is None:
            return self.fs.exists(path)
        try:
            return self._carrier(path, entry_name).expired is None
        except StorageError:
            return False

    def _read_data(self, path: str) -> bytes:
        """A data file's bytes, verified against the checksum its name carries (FileNotFoundError if
        it is missing: the caller knows who named it)."""
        data = self.fs.read_bytes(path)
        log.verify_named(data, path, self.fs.uri(path))
        return data

    def _carrier(self, path: str, entry_name: str) -> log.Entry:
        version = layout.parse_log_path(entry_name)
        if version is None:
            raise StorageError(f"{path}: not a segment name")
        try:
            data = self.fs.read_bytes(entry_name)
        except FileNotFoundError as e:
            raise StorageError(f"{self.fs.uri(entry_name)}, which holds segment {path}, is missing") from e
        return log.parse(data, self.fs.uri(entry_name), version)

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
                name = f"{self.fs.uri(entry_name)} (segment {path})"
                try:
                    data = base64.b64decode(action.inline.data, validate=True)
                except (TypeError, ValueError) as e:
                    raise StorageError(f"{name}: the inline segment is not base64 ({e})") from e
                if action.inline.encoding is not None:
                    return files.read_inline_segment(data, action.inline.encoding, action.inline.size, name)
                return files.read_parquet_bytes(data, name)  # storage format 2 carried Parquet
        raise StorageError(f"{self.fs.uri(entry_name)} does not hold segment {path}")

    # -- writing -------------------------------------------------------------------------------

    def commit(self, operation: str, build: Build[T]) -> T:
        """Run ``build`` against the latest state and publish its changes as the next version.

        On a lost race the whole of ``build`` runs again on the newer state, so a precondition that no
        longer holds raises instead of being overwritten. Returns what ``build`` returned.
        """
        commit_id = uuid.uuid4().hex
        with self._commit_lock:
            for attempt in range(self.max_attempts):
                snap = self.latest()
                changes, result = build(snap)
                if changes.is_empty():
                    return result
                version = snap.version + 1
                written = Store._Written()
                try:
                    self._write_files(changes, commit_id, version, written)
                except BaseException as e:
                    self._discard(written)  # a file system that refused one file: none stays behind
                    if isinstance(e, OSError) and written.paths:
                        name = self.fs.uri(written.paths[-1])
                        raise StorageError(f"{name}: a file of the commit could not be written ({e})") from e
                    raise
                timestamp = max(datetime.now(UTC), snap.timestamp)
                entry = log.Entry(
                    version=version,
                    commit_id=commit_id,
                    timestamp_us=to_micros(timestamp),
                    operation=operation,
                    actions=tuple(written.actions),
                    prev=snap.link.chain,
                )
                data, chain = log.encode(entry)
                try:
                    # A later entry without this one is a gap left by a deleted entry: publishing here
                    # would put this commit under entries made without it.
                    published = not self._gap_after(version) and self._publish(version, data, commit_id)
                except StorageError:
                    self._discard(written)
                    raise
                if published:
                    for path, rows in written.inline:
                        self._written_segment(path, rows)
                    with self._refresh_lock:
                        new = apply(
                            snap,
                            version,
                            timestamp,
                            written.records,
                            written.seg_adds,
                            written.seg_removes,
                            written.seg_merges,
                            Link(chain, True),
                        )
                        self._entry_times[version] = timestamp
                        if self._snap.version < version:
                            self._snap = new
                    if version % self.checkpoint_interval == 0:
                        # The commit has landed: a checkpoint is only an optimisation, so failing to
                        # write one must not make the caller believe its change failed.
                        try:
                            self._write_checkpoint(new)
                        except Exception as e:
                            logger.warning("checkpoint at version %d not written: %s", version, e)
                    return result
                self._discard(written)
                time.sleep(random.uniform(0, min(0.05, 0.001 * 2 ** min(attempt, 6))))
        raise OperationTimeoutException(
            f"{operation}: gave up after {self.max_attempts} attempts to commit against concurrent writers"
        )

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
        """Write a checkpoint of the latest state now (unless there is one of it); returns its version."""
        snap = self.latest()
        if not any(v == snap.version for v, _ in self._checkpoints()):
            self._write_checkpoint(snap)
        return snap.version

    # -- internals -----------------------------------------------------------------------------

    class _Written:
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

    def _write_files(self, changes: Changes, commit_id: str, version: int, w: Store._Written) -> None:
        """Write the files ``changes`` need into ``w``, naming each in ``w.paths`` before writing it (so
        that a failure part way can delete what was written, even in part)."""
        w.records = [(k, key, doc) for k, key, doc in changes.puts] + [
            (k, key, None) for k, key in changes.deletes
        ]
        if w.records and changes.inline_records:
            w.actions.append(
                log.InlineRecords(tuple((kind, key, _doc_text(doc)) for kind, key, doc in w.records))
            )
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
                path = layout.inline_segment_path(version, len(w.inline))
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

    def _written_segment(self, path: str, rows: pa.Table) -> None:
        self._footers[path] = (rows.num_rows, dict(rows.schema.metadata or {}))
        if rows.num_rows > RECENT_SEGMENT_ROWS // 8:
            return
        with self._segment_cache_lock:
            self._recent[path] = rows
            self._recent_rows += rows.num_rows
            while self._recent_rows > RECENT_SEGMENT_ROWS:
                _, old = self._recent.popitem(last=False)
                self._recent_rows -= old.num_rows

    def _forget_segment(self, path: str) -> None:
        self._footers.pop(path, None)
        with self._segment_cache_lock:
            old = self._recent.pop(path, None)
            if old is not None:
                self._recent_rows -= old.num_rows

    def _discard(self, written: Store._Written) -> None:
        """Forget what an attempt that did not commit wrote."""
        for path in written.paths:  # definitely not committed: nobody will ever name these
            self._forget_segment(path)
            self.fs.delete(path)

    def _gap_after(self, version: int) -> bool:
        """Whether entry ``version + 1`` exists: a lost race if ``version`` does too, else a gap (an
        entry deleted from the middle of the log), which is damage."""
        if not self.fs.exists(layout.log_path(version + 1)):
            return False
        if not self.fs.exists(layout.log_path(version)):
            raise StorageError(
                f"{self.fs.uri(layout.log_path(version))}: missing, while version {version + 1} exists: "
                "a gap in the log (damage); nothing is committed over it"
            )
        return True

    def _publish(self, version: int, data: bytes, commit_id: str) -> bool:
        """Whether the entry is now version ``version``: False if another commit's is (a lost race);
        StorageError if there is none (the file system refused the write: retrying would not help)."""
        name = layout.log_path(version)
        try:
            return self.fs.publish(name, data)
        except OSError as e:
            # The create may or may not have happened: look, never guess.
            for _ in range(10):
                try:
                    if not self.fs.exists(name):
                        raise StorageError(
                            f"{self.fs.uri(name)}: the commit's log entry could not be written ({e})"
                        ) from e
                    found = log.parse(self.fs.read_bytes(name), self.fs.uri(name), version)
                    return found.commit_id == commit_id
                except OSError:
                    time.sleep(0.05)
            raise

    def _read_entry(self, version: int) -> log.Entry:
        return log.read(self.fs.read_bytes, self.fs.uri, version)

    def _entry_time(self, version: int) -> datetime:
        ts = self._entry_times.get(version)
        if ts is None:
            try:
                ts = from_micros(self._read_entry(version).timestamp_us)
            except StorageError:
                # Deleted by an expiry before format 4: a checkpoint of that version knows its time.
                found = [path for v, path in self._checkpoints() if v == version]
                if not found:
                    raise
                ts = from_micros(self._checkpoint_meta(found[0])[0])
            self._entry_times[version] = ts
        return ts

    def _catch_up(self, snap: Snapshot, upto: int | None = None) -> Snapshot:
        """Apply every published entry after ``snap`` (up to ``upto``); _Stale past an expiry."""
        while upto is None or snap.version < upto:
            version = snap.version + 1
            name = layout.log_path(version)
            try:
                data = self.fs.read_bytes(name)
            except FileNotFoundError:
                break
            entry = log.parse(data, self.fs.uri(name), version, snap.link)
            if entry.expired is not None:
                raise _Stale(
                    snap,
                    StorageError(
                        f"{self.fs.uri(name)}: version {version} has expired (its history was folded "
                        f"into checkpoint {entry.expired} or a later one)"
                    ),
                )
            snap = self._apply_entry(snap, entry)
        return snap

    def _apply_entry(self, snap: Snapshot, entry: log.Entry) -> Snapshot:
        records: list[tuple[str, Key, Any | None]] = []
        seg_adds: list[tuple[Key, str]] = []
        seg_removes: list[tuple[Key, str]] = []
        seg_merges: list[tuple[Key, tuple[str, ...], str]] = []
        name = self.fs.uri(layout.log_path(entry.version))
        for action in entry.actions:
            if isinstance(action, log.AddRecords):
                try:
                    data = self._read_data(action.path)
                except FileNotFoundError as e:
                    # An expiry that ran since this entry was read may have deleted it: then a newer
                    # checkpoint holds the state, and the caller rebuilds from it.
                    missing = StorageError(f"{name} names {self.fs.uri(action.path)}, which is missing")
                    raise _Stale(snap, missing) from e
                records.extend(files.read_records(data, self.fs.uri(action.path)))
            elif isinstance(action, log.AddSegment):
                seg_adds.append((action.table, action.path))
            elif isinstance(action, log.RemoveSegment):
                seg_removes.append((action.table, action.path))
            elif isinstance(action, log.MergeSegments):
                seg_merges.append((action.table, action.run, action.into))
            elif isinstance(action, log.InlineRecords):
                records.extend(
                    (kind, key, None if doc is None else Raw(doc, name)) for kind, key, doc in action.records
                )
            elif isinstance(action, log.CommitTransaction):
                pass  # it names the transaction the other actions of the entry are; it changes nothing
            else:
                raise StorageError(f"{name}: this store does not apply {type(action).__name__} actions")
        timestamp = from_micros(entry.timestamp_us)
        self._entry_times[entry.version] = timestamp
        return apply(snap, entry.version, timestamp, records, seg_adds, seg_removes, seg_merges, entry.link)

    def _checkpoints(self) -> list[tuple[int, str]]:
        """The checkpoints' versions and paths, oldest first."""
        found = []
        for name in self.fs.list_names(layout.CHECKPOINT_DIR):
            if layout.is_temporary(name):
                continue
            parsed = layout.parse_checkpoint_name(name)
            if parsed is None:
                raise StorageError(
                    f"{self.fs.uri(layout.CHECKPOINT_DIR + '/' + name)}: a foreign file among the checkpoints"
                )
            found.append((parsed[0], f"{layout.CHECKPOINT_DIR}/{name}"))
        return sorted(found)

    def _checkpoint_versions(self) -> list[int]:
        return sorted({v for v, _ in self._checkpoints()})

    def _oldest_version(self) -> int:
        if self.fs.exists(layout.log_path(0)):
            return 0
        cps = self._checkpoint_versions()
        return cps[0] if cps else 0

    def _base_for(self, version: int) -> Snapshot:
        """The best starting point for rebuilding ``version``: a checkpoint at or before it, or genesis."""
        cps = [(v, path) for v, path in self._checkpoints() if v <= version]
        if cps:
            try:
                return self._load_checkpoint(*cps[-1])
            except FileNotFoundError as e:
                raise StorageError(f"{self.fs.uri(cps[-1][1])}: expired while it was read") from e
        if not self.fs.exists(layout.log_path(0)):
            raise HistoryExpired(
                f"{self.fs.uri(layout.LOG_DIR)}: version {version} is older than the retained history"
            )
        try:
            return self._genesis()
        except _Expired as e:
            raise HistoryExpired(f"{e}: version {version} is older than the retained history") from None

    def _genesis(self) -> Snapshot:
        genesis = self._read_entry(0)
        if genesis.expired is not None:
            raise _Expired(
                f"{self.fs.uri(layout.log_path(0))}: the log's beginning has expired, and no checkpoint holds its state"
            )
        self.secret = bytes.fromhex(genesis.secret or "")
        return self._apply_entry(empty(_GENESIS_TIME), genesis)

    def _open(self) -> Snapshot:
        seen: list[tuple[int, str]] | None = None
        failure = StorageError(f"{self.fs.uri(layout.LOG_DIR)}: could not be read")
        for attempt in range(20):
            # Listed first, so that an entry beyond where catching up stops is a gap, not a newer commit.
            top = layout.newest_log_version(self.fs.list_names(layout.LOG_DIR))
            cps = self._checkpoints()
            if attempt and cps == seen:
                raise failure
            seen = cps
            try:
                if cps:
                    snap = self._catch_up(self._load_checkpoint(*cps[-1]))
                else:
                    if not self.fs.exists(layout.log_path(0)):
                        self._initialize()
                    snap = self._catch_up(self._genesis())
            except (_Stale, FileNotFoundError) as e:
                # An expiry may have written a newer checkpoint (and stubs) since we listed: list again,
                # and if the checkpoints are as they were, the log is damaged.
                failure = (
                    e.error if isinstance(e, _Stale) else StorageError(f"{self.fs.uri(cps[-1][1])}: {e}")
                )
                continue
            if top > snap.version:
                raise StorageError(
                    f"{self.fs.uri(layout.log_path(snap.version + 1))}: missing, while the log goes on to "
                    f"version {top}: a gap in the log (damage); the warehouse is not opened at an older version"
                )
            return snap
        raise failure

    def _initialize(self) -> None:
        for name in self.fs.list_names(layout.LOG_DIR):
            # Version 0 may have been published by a concurrent opener since we looked for it.
            if not layout.is_temporary(name) and name != layout.log_path(0).rsplit("/", 1)[-1]:
                raise StorageError(
                    f"{self.fs.uri(layout.LOG_DIR + '/' + name)}: the log has entries but no version 0 "
                    "and no checkpoint; refusing to start a new history over it"
                )
        for d in (layout.LOG_DIR, layout.DATA_DIR, layout.CHECKPOINT_DIR):
            self.fs.mkdirs(d)
        genesis = log.Entry(
            version=0,
            commit_id=uuid.uuid4().hex,
            timestamp_us=to_micros(datetime.now(UTC)),
            operation="CreateWarehouse",
            secret=secrets.token_hex(32),
        )
        self.fs.publish(layout.log_path(0), log.encode(genesis)[0])  # a concurrent creator may win

    def _checkpoint_meta(self, path: str, data: bytes | None = None) -> tuple[int, dict[str, str]]:
        """A checkpoint's time and metadata, checked against its name (the footer only, unless given
        the file's bytes, which are then verified against the checksum its name carries)."""
        uri = self.fs.uri(path)
        parsed = layout.parse_checkpoint_name(path.rsplit("/", 1)[-1])
        if data is None:
            md = files.file_metadata(self.fs.read_bytes(path), uri)
        else:
            log.verify_named(data, path, uri)
            md = files.file_metadata(data, uri)
        version = parsed[0] if parsed else -1
        when = md.get("gluecat.timestamp_us", "")
        if md.get("gluecat.checkpoint_version") != str(version) or not (when.isascii() and when.isdigit()):
            raise StorageError(f"{uri}: not a gluecat checkpoint of version {version}")
        if parsed is not None and parsed[1] is not None and "gluecat.chain" not in md:
            raise StorageError(f"{uri}: damaged: a checkpoint of format 4 without its place in the log")
        return int(when), md

    def _load_checkpoint(self, version: int, path: str) -> Snapshot:
        """The state a checkpoint holds, verified (FileNotFoundError if an expiry removed it meanwhile)."""
        uri = self.fs.uri(path)
        data = self.fs.read_bytes(path)
        when, md = self._checkpoint_meta(path, data)
        meta: dict[str, dict[Key, Any]] = {}
        segments: dict[Key, list[str]] = {}
        for kind, key, doc in files.read_records(data, uri):
            if kind == files.SEGMENT_KIND:
                segments.setdefault(key[:-1], []).append(key[-1])
            else:
                meta.setdefault(kind, {})[key] = doc
        timestamp = from_micros(when)
        self._entry_times[version] = timestamp
        try:
            self.secret = bytes.fromhex(md.get("gluecat.secret", ""))
        except ValueError as e:
            raise StorageError(f"{uri}: not a gluecat checkpoint (its secret is not hex)") from e
        if "gluecat.chain" in md:
            link = Link(md["gluecat.chain"], md.get("gluecat.strict") == "1")
        else:
            link = self._legacy_link(version)
        return Snapshot(
            version=version,
            timestamp=timestamp,
            meta=meta,
            segments={k: tuple(v) for k, v in segments.items()},
            link=link,
        )

    def _legacy_link(self, version: int) -> Link:
        """The link of a version whose checkpoint predates format 4: from its entry, if still there."""
        try:
            data = self.fs.read_bytes(layout.log_path(version))
        except FileNotFoundError:
            return Link()
        return log.parse(data, self.fs.uri(layout.log_path(version)), version).link

    def _write_checkpoint(self, snap: Snapshot) -> None:
        rows: list[tuple[str, Key, Any | None]] = [
            (kind, key, doc) for kind, recs in snap.meta.items() for key, doc in recs.items()
        ]
        rows.extend(
            (files.SEGMENT_KIND, (*table, path), None)
            for table, paths in snap.segments.items()
            for path in paths
        )
        data = files.to_parquet_bytes(
            files.record_table(rows),
            {
                "gluecat.secret": self.secret.hex(),
                "gluecat.checkpoint_version": str(snap.version),
                "gluecat.timestamp_us": str(to_micros(snap.timestamp)),
                "gluecat.chain": snap.link.chain,
                "gluecat.strict": "1" if snap.link.strict else "0",
            },
        )
        # Its name carries its checksum, so no flip inside it can make it pass for an older format's.
        self.fs.publish(layout.checkpoint_path(snap.version, log.checksum(data)), data)


def _doc_text(doc: Any | None) -> str | None:
    """A record's document as the canonical JSON an entry carries inline (None for a deletion)."""
    if doc is None:
        return None
    return doc.text if isinstance(doc, Raw) else codec.dumps(doc)
