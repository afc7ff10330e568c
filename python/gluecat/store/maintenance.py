"""Keeping a warehouse small: checkpoints that fold small record files, and expiry of old history.

Destructive steps default to a dry run (they report what they would delete). Nothing reachable from a
retained version is ever deleted: a version is retained if it is newer than the retention period or is
the checkpoint that the oldest retained version is rebuilt from.

Expiry never frees a log entry's name: it puts a stub in the place of each expired entry (its version,
commit id, time and place in the chain, and the checkpoint to rebuild from). A process that missed the
expiry finds the stub at its next look for a new version and rebuilds from the newest checkpoint; a
writer that missed it loses its exclusive create to the stub and does the same. Expiries may run
concurrently with writers and with each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from gluecat.errors import StorageError
from gluecat.store import files, layout, log
from gluecat.store.logs import Log
from gluecat.store.store import Store


@dataclass
class ExpiryReport:
    base_checkpoint: int | None
    log_entries: list[str] = field(default_factory=list)
    """Entries replaced by stubs."""
    checkpoints: list[str] = field(default_factory=list)
    data_files: list[str] = field(default_factory=list)
    temporary_files: list[str] = field(default_factory=list)
    applied: bool = False

    def total(self) -> int:
        return (
            len(self.log_entries) + len(self.checkpoints) + len(self.data_files) + len(self.temporary_files)
        )


def expire(
    store: Store,
    *,
    retain: timedelta = timedelta(days=7),
    grace: timedelta = timedelta(hours=1),
    dry_run: bool = True,
    now: datetime | None = None,
    assume_checkpoint: bool = False,
) -> ExpiryReport:
    """Expire history older than ``retain`` that no retained version needs.

    ``grace`` protects files younger than it that no commit names yet: a writer may be about to publish
    a commit naming them. A concurrent expiry may remove a checkpoint this one reads; it then starts
    again from the new state. ``assume_checkpoint`` (for a dry run) reports as if the latest version
    had a checkpoint, as it has once compaction writes one before it expires.
    """
    if assume_checkpoint and not dry_run:
        raise ValueError("assume_checkpoint is for dry runs: write the checkpoint, then expire")
    for attempt in range(10):
        try:
            return _expire(store, retain, grace, dry_run, now or datetime.now(UTC), assume_checkpoint)
        except StorageError:
            if attempt == 9:
                raise
    raise AssertionError("unreachable")


def _expire(
    store: Store, retain: timedelta, grace: timedelta, dry_run: bool, now: datetime, assume_checkpoint: bool
) -> ExpiryReport:
    cutoff = now - retain
    report = ExpiryReport(base_checkpoint=None)
    needed: set[str] = set()
    stubs: list[tuple[Log, log.Entry, int]] = []
    root_base = None
    for where in [store.root, *store.table_logs()]:
        kept = _expire_log(where, cutoff, assume_checkpoint, report, stubs, needed)
        if where is store.root:
            root_base = kept
    report.base_checkpoint = root_base
    if root_base is None and not stubs and not report.checkpoints:
        return report
    for name in store.fs.list_names(layout.DATA_DIR):
        path = f"{layout.DATA_DIR}/{name}"
        if path not in needed and _older_than(store, path, now - grace):
            report.data_files.append(path)
    folders = [layout.DATA_DIR]
    for where in [store.root, *store.table_logs()]:
        folders += [where.where.log_dir, where.where.checkpoint_dir]
    for folder in folders:
        for name in store.fs.list_names(folder):
            if layout.is_temporary(name) and _older_than(store, f"{folder}/{name}", now - grace):
                report.temporary_files.append(f"{folder}/{name}")
    if not dry_run:
        # Stubs go first, oldest first, so that an interrupted expiry leaves a readable history: a
        # reader that meets one rebuilds from the checkpoint, which is deleted last of all it needs.
        for where, entry, base in stubs:
            stub = entry.stub(base)
            store.fs.replace(where.where.log_path(entry.version), log.encode(stub)[0])
            where.keep(stub)  # this process reads what the others will
        for path in report.checkpoints + report.data_files + report.temporary_files:
            store.fs.delete(path)
        report.applied = True
    return report


def _expire_log(
    where: Log,
    cutoff: datetime,
    assume_checkpoint: bool,
    report: ExpiryReport,
    stubs: list[tuple[Log, log.Entry, int]],
    needed: set[str],
) -> int | None:
    """One log's part of an expiry: its entries to stub and checkpoints to delete (into ``report`` and
    ``stubs``), and the data files its retained history names (into ``needed``); the checkpoint it
    keeps as its oldest, or None if nothing of it expires."""
    latest = where.latest()
    checkpoints = where.checkpoints()
    if assume_checkpoint and latest.version >= 0 and (not checkpoints or checkpoints[-1][0] < latest.version):
        checkpoints = [*checkpoints, (latest.version, "")]  # never deleted: nothing is older than base
    # The newest checkpoint made before the cutoff is where the oldest retained version is rebuilt from.
    old = [(v, path) for v, path in checkpoints if where.entry_time(v) <= cutoff]
    if not old:
        # Nothing of this log expires: every retained version of it stays readable.
        for v, path in checkpoints:
            if path:
                needed.update(p for paths in where.load_checkpoint(v, path).segments.values() for p in paths)
        for v in range(0, latest.version + 1):
            needed.update(_entry_files(where, v))
        return None
    base = old[-1][0]
    report.checkpoints += [path for v, path in checkpoints if v < base]
    live: set[str] = set()
    base_state = where.at_version(base)
    for paths in base_state.segments.values():
        live.update(paths)
    needed.update(live)
    # An old entry that carries a live segment inline stays as long as the segment does.
    carriers = {layout.inline_segment_entry(p) for p in live}
    for entry in _entries_to_stub(where, base, carriers):
        stubs.append((where, entry, base))
        report.log_entries.append(where.where.log_path(entry.version))
    for v in range(base + 1, latest.version + 1):
        needed.update(_entry_files(where, v))
    return base


def _entry_files(where: Log, version: int) -> list[str]:
    try:
        return where.read_entry(version).files()
    except StorageError:
        return []  # an expired or missing entry names nothing the state still needs


def _entries_to_stub(where: Log, base: int, carriers: set[str | None]) -> list[log.Entry]:
    """The entries at or before ``base`` that are not stubs yet and carry no live segment, oldest first.

    Entries are read back from ``base`` until the first stub (earlier expiries stubbed all before it),
    plus the carriers those earlier expiries kept whose segments a newer entry has since merged or
    removed (found in the entries read)."""
    found: list[log.Entry] = []
    released: set[int] = set()
    version = base
    while version >= 0:
        try:
            entry = where.read_entry(version)
        except StorageError:
            if where.fs.exists(where.where.log_path(version)):
                raise
            break  # deleted by an expiry before format 4
        if entry.expired is not None:
            break
        for action in entry.actions:
            gone = action.run if isinstance(action, log.MergeSegments) else ()
            if isinstance(action, log.RemoveSegment):
                gone = (action.path,)
            for path in gone:
                carrier = layout.inline_segment_entry(path)
                if carrier is not None and (v := where.where.parse_log_path(carrier)) is not None:
                    released.add(v)
        if where.where.log_path(version) not in carriers:
            found.append(entry)
        version -= 1
    for v in sorted(released):
        if v < version and where.where.log_path(v) not in carriers:
            try:
                entry = where.read_entry(v)
            except StorageError:
                continue
            if entry.expired is None:
                found.append(entry)
    return sorted(found, key=lambda e: e.version)


def _older_than(store: Store, path: str, when: datetime) -> bool:
    mtime = store.fs.mtime(path)
    return mtime is not None and mtime < when


def describe(store: Store) -> dict[str, object]:
    """Counts that say whether a warehouse needs a checkpoint or an expiry."""
    latest = store.latest()
    checkpoints = store.root.checkpoint_versions()
    return {
        "version": latest.version,
        "last_commit": latest.timestamp.isoformat(),
        "checkpoints": len(checkpoints),
        "newest_checkpoint": checkpoints[-1] if checkpoints else None,
        "log_entries": len(
            [n for n in store.fs.list_names(layout.LOG_DIR) if layout.parse_log_name(n) is not None]
        ),
        "data_files": len(store.fs.list_names(layout.DATA_DIR)),
        "table_logs": len(store.fs.list_folders(layout.TABLES_DIR)),
        "partition_segments": sum(len(v) for v in latest.segments.values())
        + sum(len(v) for t in store.table_logs() for v in t.latest().segments.values()),
        "format": files.FORMAT_VERSION,
    }
