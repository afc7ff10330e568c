"""The warehouse store: immutable Parquet files plus an append-only commit log.

Version N of the state is published by creating ``_gluecat/log/N.json`` exclusively; the entry names the
files the commit added. A writer that loses the race for N re-reads what it missed, re-runs its change
against the new state (so every precondition is checked again) and tries N+1. Every few commits a
checkpoint folds the state into one file so that opening stays fast however long the log grows.
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
from datetime import UTC, datetime
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.fs as pafs

from gluecat.errors import OperationTimeoutException, StorageError
from gluecat.store import files, layout
from gluecat.store.codec import from_micros, to_micros
from gluecat.store.fs import WarehouseFS
from gluecat.store.snapshot import Changes, Key, Snapshot, apply, empty

T = TypeVar("T")
log = logging.getLogger(__name__)

Build = Callable[[Snapshot], tuple[Changes, T]]
"""A commit's body: given the latest state, check preconditions (raising GlueErrors) and say what changes."""

_GENESIS_TIME = datetime(1970, 1, 1, tzinfo=UTC)
SEGMENT_CACHE_ROWS = 2_000_000
INLINE_SEGMENT_BYTES = 128 * 1024
"""A commit's segment up to this size (compressed) travels inside its log entry instead of a file of its
own: one file to create and sync per small commit instead of two. Merges move such rows into files."""
RECENT_SEGMENT_ROWS = 50_000
"""Small segments this process wrote lately stay in memory up to this many rows, so that its own next
reads (the partition view catching up, the merge of the newest segments) need not read them back."""


def added_files(action: dict[str, Any]) -> list[str]:
    """The data files a log entry's action brings into the state."""
    return [action[k] for k in ("records", "add_segment", "into") if k in action]


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
            snap = self._catch_up(self._snap)
            self._snap = snap
            return snap

    def cached(self) -> Snapshot:
        """The newest state this process knows of, without looking for other processes' commits."""
        return self._snap

    def at_version(self, version: int) -> Snapshot:
        """The state right after commit ``version`` (for time travel)."""
        latest = self.latest()
        if version >= latest.version:
            return latest
        if version in self._old_snapshots:
            self._old_snapshots.move_to_end(version)
            return self._old_snapshots[version]
        base = self._base_for(version)
        snap = self._catch_up(base, upto=version)
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
            return latest
        lo, hi = self._oldest_version(), latest.version
        if self._entry_time(lo) > when:
            return empty(_GENESIS_TIME)
        # Commit times never decrease along the log, so the version is found by bisection.
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._entry_time(mid) <= when:
                lo = mid
            else:
                hi = mid - 1
        return self.at_version(lo)

    def log_entries(self, after: int, upto: int) -> Iterator[dict[str, Any]]:
        """The published log entries of the commits after version ``after`` up to ``upto``, oldest first
        and read as they are reached (a caller looking for one stops reading there): each names its
        operation and its actions (the segments it added and removed, by table)."""
        return (self._read_entry(version) for version in range(after + 1, upto + 1))

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
                found = files.footer(self.fs.read_bytes(path), self.fs.uri(path))
            self._footers[path] = found
        return found

    def segment_exists(self, path: str) -> bool:
        """Whether a segment can still be read (an expiry may have removed a replaced one)."""
        return self.fs.exists(layout.inline_segment_entry(path) or path)

    def _read_segment_rows(self, path: str) -> pa.Table:
        entry_name = layout.inline_segment_entry(path)
        if entry_name is None:
            return files.read_parquet_bytes(self.fs.read_bytes(path), self.fs.uri(path))
        version = layout.parse_log_name(entry_name.rsplit("/", 1)[-1])
        assert version is not None
        try:
            entry = files.decode_entry(self.fs.read_bytes(entry_name), self.fs.uri(entry_name), version)
        except FileNotFoundError as e:
            raise StorageError(f"{self.fs.uri(entry_name)}, which holds segment {path}, is missing") from e
        for action in entry["actions"]:
            if action.get("add_segment") == path and "inline" in action:
                name = f"{self.fs.uri(entry_name)} (segment {path})"
                try:
                    data = base64.b64decode(action["inline"], validate=True)
                except (TypeError, ValueError) as e:
                    raise StorageError(f"{name}: the inline segment is not base64 ({e})") from e
                if "inline_encoding" in action:
                    encoding, size = action["inline_encoding"], action.get("inline_size")
                    return files.read_inline_segment(data, encoding, size, name)
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
                entry = {
                    "format": layout.FORMAT_VERSION,
                    "version": version,
                    "commit_id": commit_id,
                    "timestamp_us": to_micros(timestamp),
                    "operation": operation,
                    "actions": written.actions,
                }
                try:
                    published = self._publish(version, entry, commit_id)
                except StorageError:
                    self._discard(written)
                    raise
                if published:
                    with self._refresh_lock:
                        new = apply(
                            snap,
                            version,
                            timestamp,
                            written.records,
                            written.seg_adds,
                            written.seg_removes,
                            written.seg_merges,
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
                            log.warning("checkpoint at version %d not written: %s", version, e)
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
        path = f"{layout.DATA_DIR}/{uuid.uuid4().hex}.partitions.parquet"
        self.fs.write_new(path, files.segment_parquet_bytes(rows))
        self.fs.sync_folder(layout.DATA_DIR)
        self._written_segment(path, rows)
        return path

    def discard_segment(self, path: str) -> None:
        """Delete a segment written by ``write_segment`` that no commit names."""
        self._forget_segment(path)
        self.fs.delete(path)

    def checkpoint(self) -> int:
        """Write a checkpoint of the latest state now; returns its version."""
        snap = self.latest()
        self._write_checkpoint(snap)
        return snap.version

    # -- internals -----------------------------------------------------------------------------

    class _Written:
        def __init__(self) -> None:
            self.actions: list[dict[str, Any]] = []
            self.records: list[tuple[str, Key, Any | None]] = []
            self.seg_adds: list[tuple[Key, str]] = []
            self.seg_removes: list[tuple[Key, str]] = []
            self.seg_merges: list[tuple[Key, tuple[str, ...], str]] = []
            self.paths: list[str] = []
            """The files this attempt wrote (deleted if it loses the race; pre-written segments are not)."""
            self.inline: list[str] = []

    def _write_files(self, changes: Changes, commit_id: str, version: int, w: Store._Written) -> None:
        """Write the files ``changes`` need into ``w``, naming each in ``w.paths`` before writing it (so
        that a failure part way can delete what was written, even in part)."""
        w.records = [(k, key, doc) for k, key, doc in changes.puts] + [
            (k, key, None) for k, key in changes.deletes
        ]
        if w.records:
            path = f"{layout.DATA_DIR}/{commit_id}-{uuid.uuid4().hex[:8]}.records.parquet"
            w.paths.append(path)
            self.fs.write_new(path, files.to_parquet_bytes(files.record_table(w.records)))
            w.actions.append({"records": path})
        for table_key, rows in changes.segment_adds:
            action: dict[str, Any] = {"table": list(table_key), "rows": rows.num_rows}
            carried = files.inline_segment_bytes(rows, INLINE_SEGMENT_BYTES)
            if carried is not None:
                path = layout.inline_segment_path(version, len(w.inline))
                data, size = carried
                action["inline"] = files.Base64Text(base64.b64encode(data).decode("ascii"))
                action["inline_encoding"] = files.INLINE_ENCODING
                action["inline_size"] = size
                w.inline.append(path)
            else:
                path = f"{layout.DATA_DIR}/{commit_id}-{uuid.uuid4().hex[:8]}.partitions.parquet"
                w.paths.append(path)
                self.fs.write_new(path, files.segment_parquet_bytes(rows))
            self._written_segment(path, rows)
            w.seg_adds.append((table_key, path))
            w.actions.append({"add_segment": path, **action})
        if w.paths:
            self.fs.sync_folder(layout.DATA_DIR)
        for table_key, path in changes.segment_removes:
            w.seg_removes.append((table_key, path))
            w.actions.append({"remove_segment": path, "table": list(table_key)})
        for table_key, run, into in changes.segment_merges:
            w.seg_merges.append((table_key, run, into))
            w.actions.append(
                {
                    "merge_segments": list(run),
                    "into": into,
                    "table": list(table_key),
                    "rows": self.segment_footer(into)[0],
                }
            )

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
        for path in written.inline:  # the name is, or will be, another commit's
            self._forget_segment(path)

    def _publish(self, version: int, entry: dict[str, Any], commit_id: str) -> bool:
        """Whether the entry is now version ``version``: False if another commit's is (a lost race);
        StorageError if there is none (the file system refused the write: retrying would not help)."""
        name = layout.log_path(version)
        try:
            return self.fs.publish(name, files.encode_entry(entry))
        except OSError as e:
            # The create may or may not have happened: look, never guess.
            for _ in range(10):
                try:
                    if not self.fs.exists(name):
                        raise StorageError(
                            f"{self.fs.uri(name)}: the commit's log entry could not be written ({e})"
                        ) from e
                    found = files.decode_entry(self.fs.read_bytes(name), self.fs.uri(name), version)
                    return bool(found.get("commit_id") == commit_id)
                except OSError:
                    time.sleep(0.05)
            raise

    def _read_entry(self, version: int) -> dict[str, Any]:
        name = layout.log_path(version)
        return files.decode_entry(self.fs.read_bytes(name), self.fs.uri(name), version)

    def _entry_time(self, version: int) -> datetime:
        ts = self._entry_times.get(version)
        if ts is None:
            ts = from_micros(int(self._read_entry(version)["timestamp_us"]))
            self._entry_times[version] = ts
        return ts

    def _catch_up(self, snap: Snapshot, upto: int | None = None) -> Snapshot:
        """Apply every published entry after ``snap`` (up to ``upto``)."""
        while upto is None or snap.version < upto:
            version = snap.version + 1
            name = layout.log_path(version)
            try:
                data = self.fs.read_bytes(name)
            except FileNotFoundError:
                break
            entry = files.decode_entry(data, self.fs.uri(name), version)
            snap = self._apply_entry(snap, entry)
        return snap

    def _apply_entry(self, snap: Snapshot, entry: dict[str, Any]) -> Snapshot:
        records: list[tuple[str, Key, Any | None]] = []
        seg_adds: list[tuple[Key, str]] = []
        seg_removes: list[tuple[Key, str]] = []
        seg_merges: list[tuple[Key, tuple[str, ...], str]] = []
        name = self.fs.uri(layout.log_path(entry["version"]))
        for action in entry["actions"]:
            if "records" in action:
                path = action["records"]
                try:
                    data = self.fs.read_bytes(path)
                except FileNotFoundError as e:
                    raise StorageError(f"{name} names {self.fs.uri(path)}, which is missing") from e
                records.extend(files.read_records(data, self.fs.uri(path)))
            elif "add_segment" in action:
                seg_adds.append((tuple(action["table"]), action["add_segment"]))
            elif "remove_segment" in action:
                seg_removes.append((tuple(action["table"]), action["remove_segment"]))
            elif "merge_segments" in action:
                seg_merges.append((tuple(action["table"]), tuple(action["merge_segments"]), action["into"]))
            else:
                raise StorageError(f"{name}: unknown action {sorted(action)}")
        timestamp = from_micros(int(entry["timestamp_us"]))
        self._entry_times[entry["version"]] = timestamp
        return apply(snap, entry["version"], timestamp, records, seg_adds, seg_removes, seg_merges)

    def _checkpoint_versions(self) -> list[int]:
        versions = []
        for name in self.fs.list_names(layout.CHECKPOINT_DIR):
            if layout.is_temporary(name):
                continue
            v = layout.parse_checkpoint_name(name)
            if v is None:
                raise StorageError(
                    f"{self.fs.uri(layout.CHECKPOINT_DIR + '/' + name)}: a foreign file among the checkpoints"
                )
            versions.append(v)
        return sorted(versions)

    def _oldest_version(self) -> int:
        if self.fs.exists(layout.log_path(0)):
            return 0
        cps = self._checkpoint_versions()
        return cps[0] if cps else 0

    def _base_for(self, version: int) -> Snapshot:
        """The best starting point for rebuilding ``version``: a checkpoint at or before it, or genesis."""
        cps = [v for v in self._checkpoint_versions() if v <= version]
        if cps:
            return self._load_checkpoint(cps[-1])
        if not self.fs.exists(layout.log_path(0)):
            raise StorageError(
                f"{self.fs.uri(layout.LOG_DIR)}: version {version} is older than the retained history"
            )
        return empty(_GENESIS_TIME)

    def _open(self) -> Snapshot:
        cps = self._checkpoint_versions()
        if cps:
            return self._catch_up(self._load_checkpoint(cps[-1]))
        if not self.fs.exists(layout.log_path(0)):
            self._initialize()
        genesis = self._read_entry(0)
        self.secret = bytes.fromhex(str(genesis.get("secret", "")))
        return self._catch_up(self._apply_entry(empty(_GENESIS_TIME), genesis))

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
        genesis = {
            "format": layout.FORMAT_VERSION,
            "version": 0,
            "commit_id": uuid.uuid4().hex,
            "timestamp_us": to_micros(datetime.now(UTC)),
            "operation": "CreateWarehouse",
            "actions": [],
            "secret": secrets.token_hex(32),
        }
        self.fs.publish(layout.log_path(0), files.encode_entry(genesis))  # a concurrent creator may win

    def _load_checkpoint(self, version: int) -> Snapshot:
        name = layout.checkpoint_path(version)
        uri = self.fs.uri(name)
        data = self.fs.read_bytes(name)
        md = files.file_metadata(data, uri)
        if md.get("gluecat.checkpoint_version") != str(version) or "gluecat.timestamp_us" not in md:
            raise StorageError(f"{uri}: not a gluecat checkpoint of version {version}")
        meta: dict[str, dict[Key, Any]] = {}
        segments: dict[Key, list[str]] = {}
        for kind, key, doc in files.read_records(data, uri):
            if kind == files.SEGMENT_KIND:
                segments.setdefault(key[:-1], []).append(key[-1])
            else:
                meta.setdefault(kind, {})[key] = doc
        timestamp = from_micros(int(md["gluecat.timestamp_us"]))
        self._entry_times[version] = timestamp
        self.secret = bytes.fromhex(md.get("gluecat.secret", ""))
        return Snapshot(
            version=version,
            timestamp=timestamp,
            meta=meta,
            segments={k: tuple(v) for k, v in segments.items()},
        )

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
            },
        )
        self.fs.publish(layout.checkpoint_path(snap.version), data)  # another writer may have made it first
