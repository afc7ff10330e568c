"""Keeping a warehouse small: checkpoints that fold small record files, and expiry of old history.

Destructive steps default to a dry run (they report what they would delete). Nothing reachable from a
retained version is ever deleted: a version is retained if it is newer than the retention period or is
the checkpoint that the oldest retained version is rebuilt from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from gluecat.store import files, layout
from gluecat.store.store import Store, added_files


@dataclass
class ExpiryReport:
    base_checkpoint: int | None
    log_entries: list[str] = field(default_factory=list)
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
) -> ExpiryReport:
    """Delete history older than ``retain`` that no retained version needs.

    ``grace`` protects files younger than it that no commit names yet: a writer may be about to publish
    a commit naming them.
    """
    now = now or datetime.now(UTC)
    latest = store.latest()
    cutoff = now - retain
    checkpoints = store._checkpoint_versions()
    # The newest checkpoint made before the cutoff is where the oldest retained version is rebuilt from.
    old = [v for v in checkpoints if store._entry_time(v) <= cutoff]
    if not old:
        return ExpiryReport(base_checkpoint=None)
    base = old[-1]
    report = ExpiryReport(base_checkpoint=base)
    report.checkpoints = [layout.checkpoint_path(v) for v in checkpoints if v < base]
    needed: set[str] = set()
    base_snap = store.at_version(base)
    for paths in base_snap.segments.values():
        needed.update(paths)
    # An old entry that carries a live segment inline stays as long as the segment does.
    carriers = {layout.inline_segment_entry(p) for p in needed}
    report.log_entries = [
        layout.log_path(v)
        for name in store.fs.list_names(layout.LOG_DIR)
        if (v := layout.parse_log_name(name)) is not None and v <= base and layout.log_path(v) not in carriers
    ]
    for v in range(base + 1, latest.version + 1):
        for action in store._read_entry(v)["actions"]:
            needed.update(added_files(action))
    for name in store.fs.list_names(layout.DATA_DIR):
        path = f"{layout.DATA_DIR}/{name}"
        if path in needed:
            continue
        info = store.fs.fs.get_file_info(store.fs.full(path))
        if info.mtime is not None and info.mtime.replace(tzinfo=info.mtime.tzinfo or UTC) < now - grace:
            report.data_files.append(path)
    for folder in (layout.LOG_DIR, layout.CHECKPOINT_DIR):
        for name in store.fs.list_names(folder):
            if layout.is_temporary(name):
                info = store.fs.fs.get_file_info(store.fs.full(f"{folder}/{name}"))
                if (
                    info.mtime is not None
                    and info.mtime.replace(tzinfo=info.mtime.tzinfo or UTC) < now - grace
                ):
                    report.temporary_files.append(f"{folder}/{name}")
    if not dry_run:
        # Log entries go first, oldest first, so that an interrupted expiry leaves a readable history.
        for path in (
            sorted(report.log_entries) + report.checkpoints + report.data_files + report.temporary_files
        ):
            store.fs.delete(path)
        report.applied = True
    return report


def describe(store: Store) -> dict[str, object]:
    """Counts that say whether a warehouse needs a checkpoint or an expiry."""
    latest = store.latest()
    checkpoints = store._checkpoint_versions()
    return {
        "version": latest.version,
        "last_commit": latest.timestamp.isoformat(),
        "checkpoints": len(checkpoints),
        "newest_checkpoint": checkpoints[-1] if checkpoints else None,
        "log_entries": len(
            [n for n in store.fs.list_names(layout.LOG_DIR) if layout.parse_log_name(n) is not None]
        ),
        "data_files": len(store.fs.list_names(layout.DATA_DIR)),
        "partition_segments": sum(len(v) for v in latest.segments.values()),
        "format": files.FORMAT_VERSION,
    }
