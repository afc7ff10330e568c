"""``gluecat fsck``: verify a whole warehouse, file by file, and say what is damaged.

Everything a reader would verify is checked here at once, not only what the latest state needs: every
log entry (its checksum, its version, its link to the entry before, which finds replaced entries and
gaps), every checkpoint (the checksum its name carries, its version, its place in the log), and every
data file that a retained version names (its checksum, and that it decodes), and every merge whose run
can still be read (its segment holds what the run held). Files no version names are reported too, as
notes: a writer killed before its commit leaves them, and compaction removes them.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from gluecat.errors import StorageError
from gluecat.store import files, layout, log, placement
from gluecat.store.filesystems import open_fs
from gluecat.store.fs import Unanswered, WarehouseFS
from gluecat.store.snapshot import Link
from gluecat.store.store import Store


@dataclass
class Finding:
    path: str
    problem: str
    damage: bool


@dataclass
class FsckReport:
    warehouse: str
    version: int | None = None
    entries: int = 0
    expired_entries: int = 0
    checkpoints: int = 0
    data_files: int = 0
    inline_segments: int = 0
    findings: list[Finding] = field(default_factory=list)

    @property
    def damaged(self) -> bool:
        return any(f.damage for f in self.findings)

    def damage(self, path: str, problem: str) -> None:
        self.findings.append(Finding(path, problem, True))

    def note(self, path: str, problem: str) -> None:
        self.findings.append(Finding(path, problem, False))

    def to_json(self) -> dict[str, Any]:
        return {
            "warehouse": self.warehouse,
            "damaged": self.damaged,
            "version": self.version,
            "entries": self.entries,
            "expired_entries": self.expired_entries,
            "checkpoints": self.checkpoints,
            "data_files": self.data_files,
            "inline_segments": self.inline_segments,
            "findings": [{"path": f.path, "problem": f.problem, "damage": f.damage} for f in self.findings],
        }


def check(warehouse: str) -> FsckReport:
    """Verify every file of a warehouse; the report lists each damaged file and each stray one."""
    fs = open_fs(warehouse)
    report = FsckReport(fs.uri(""))
    if not fs.exists(layout.log_path(0)) and not fs.list_names(layout.LOG_DIR):
        report.damage(fs.uri(layout.LOG_DIR), "no log: not a gluecat warehouse")
        return report
    root_entries = _check_log(fs, layout.ROOT_LOG, report)
    report.version = max(root_entries, default=None)
    logs: list[tuple[layout.LogLayout, dict[int, log.Entry]]] = [(layout.ROOT_LOG, root_entries)]
    for name in sorted(fs.list_folders(layout.TABLES_DIR)):
        where = layout.table_log(name)
        if layout.layout_of(where.log_path(0)) is None:
            report.note(fs.uri(f"{layout.TABLES_DIR}/{name}"), "a foreign folder among the tables' logs")
            continue
        logs.append((where, _check_log(fs, where, report)))
    aborted = _check_markers(fs, report, root_entries, logs[1:])
    named: dict[str, str] = {}
    history: set[str] = set()
    inline: list[tuple[layout.LogLayout, log.Entry, log.AddSegment]] = []
    for where, entries in logs:
        checkpoint_segments = _check_checkpoints(fs, where, report, entries)
        live = {v: e for v, e in entries.items() if (where.base, v) not in aborted}
        _names(fs, where, live, checkpoint_segments, named, history, inline)
    _check_data(fs, report, named, history, inline)
    store = _check_opens(warehouse, report) if report.version is not None else None
    if store is not None and not report.damaged:
        for where, entries in logs:
            _check_merges(
                store, report, where, {v: e for v, e in entries.items() if (where.base, v) not in aborted}
            )
    return report


def _check_log(fs: WarehouseFS, where: layout.LogLayout, report: FsckReport) -> dict[int, log.Entry]:
    versions = []
    for name in fs.list_names(where.log_dir):
        v = layout.parse_log_name(name)
        if v is not None:
            versions.append(v)
        elif layout.is_temporary(name):
            report.note(fs.uri(f"{where.log_dir}/{name}"), "a temporary file of a writer that stopped")
        else:
            report.note(fs.uri(f"{where.log_dir}/{name}"), "a foreign file in the log folder")
    if not versions:
        if where is layout.ROOT_LOG:
            report.damage(fs.uri(where.log_dir), "the log is empty")
        return {}
    present = set(versions)
    first, last = min(versions), max(versions)
    if first > 0:
        report.note(
            fs.uri(where.log_path(0)),
            f"versions 0 to {first - 1} have no entries (deleted by an expiry of a gluecat before "
            f"format 4, or lost); time travel before version {first} is not possible",
        )
    entries: dict[int, log.Entry] = {}
    link: Link | None = None
    for v in range(first, last + 1):
        path = where.log_path(v)
        if v not in present:
            report.damage(fs.uri(path), f"missing, while the log goes on to version {last}: a gap in the log")
            link = None
            continue
        try:
            entry = log.parse(fs.read_bytes(path), fs.uri(path), v, link, where)
        except Unanswered:
            raise  # the store did not answer: nothing is known of the file
        except (StorageError, OSError) as e:
            report.damage(fs.uri(path), _why(e))
            link = None
            continue
        entries[v] = entry
        report.entries += 1
        if entry.expired is not None:
            report.expired_entries += 1
        link = entry.link
    return entries


def _check_markers(
    fs: WarehouseFS,
    report: FsckReport,
    root: dict[int, log.Entry],
    tables: list[tuple[layout.LogLayout, dict[int, log.Entry]]],
) -> set[tuple[str, int]]:
    """Each root entry that names a marker in a table's log finds it there, naming it back; the markers
    the root did not decide (aborted, or still waiting) are returned, by log and version: they count
    for nothing, and the files they name may be gone."""
    by_base = {where.base: entries for where, entries in tables}
    for version, entry in root.items():
        for action in entry.actions:
            if not isinstance(action, log.Marks):
                continue
            where = layout.table_log(placement.log_name(action.table))
            marker = by_base.get(where.base, {}).get(action.version)
            uri = fs.uri(where.log_path(action.version))
            if marker is None:
                report.damage(uri, f"missing: root version {version} committed it ({'.'.join(action.table)})")
            elif marker.expired is None and marker.decided_by != log.Decision(version, entry.commit_id):
                report.damage(uri, f"is not the marker root version {version} committed")
    out: set[tuple[str, int]] = set()
    newest_root = max(root, default=-1)
    for where, entries in tables:
        for version, entry in entries.items():
            ref = entry.decided_by
            if ref is None:
                continue
            decider = root.get(ref.version)
            if decider is None or decider.commit_id != ref.commit_id:
                out.add((where.base, version))
                if ref.version > newest_root:
                    report.note(
                        fs.uri(where.log_path(version)),
                        f"a marker waiting for root version {ref.version}: its writer stopped before "
                        "publishing it, or is publishing it now (the next writer of the table fences it)",
                    )
    return out


def _check_checkpoints(
    fs: WarehouseFS, where: layout.LogLayout, report: FsckReport, entries: dict[int, log.Entry]
) -> dict[int, list[str]]:
    """Verify each checkpoint of a log; returns the segments each names, by version."""
    segments: dict[int, list[str]] = {}
    for name in sorted(fs.list_names(where.checkpoint_dir)):
        path = f"{where.checkpoint_dir}/{name}"
        uri = fs.uri(path)
        if layout.is_temporary(name):
            report.note(uri, "a temporary file of a writer that stopped")
            continue
        parsed = layout.parse_checkpoint_name(name)
        if parsed is None:
            report.damage(uri, "a foreign file among the checkpoints (opening the warehouse refuses it)")
            continue
        version = parsed[0]
        try:
            data = fs.read_bytes(path)
            log.verify_named(data, path, uri)
            md = files.file_metadata(data, uri)
            if md.get("gluecat.checkpoint_version") != str(version):
                raise StorageError(f"{uri}: not a gluecat checkpoint of version {version}")
            rows = files.read_records(data, uri)
        except Unanswered:
            raise  # the store did not answer: nothing is known of the file
        except (StorageError, OSError) as e:
            report.damage(uri, _why(e))
            continue
        report.checkpoints += 1
        entry = entries.get(version)
        if version > max(entries, default=-1):
            # Its entry and those before it were read into it: the log lost its newest entries.
            report.damage(fs.uri(where.log_path(version)), f"missing, while checkpoint {version} folds it")
        chain = md.get("gluecat.chain")
        if chain and entry is not None and entry.chain != chain:
            report.damage(uri, f"its place in the log does not match version {version}'s entry")
        segments[version] = [key[-1] for kind, key, _ in rows if kind == files.SEGMENT_KIND]
    if not segments and entries and (0 not in entries or entries[0].expired is not None):
        # The stubs name the checkpoint their expiry kept: that one is missing or unreadable.
        kept = max((e.expired for e in entries.values() if e.expired is not None), default=None)
        where_kept = where.checkpoint_path(kept) if kept is not None else where.checkpoint_dir
        report.damage(
            fs.uri(where_kept), "no readable checkpoint, and the log's beginning is gone (expired into it)"
        )
    return segments


def _names(
    fs: WarehouseFS,
    where: layout.LogLayout,
    entries: dict[int, log.Entry],
    checkpoint_segments: dict[int, list[str]],
    named: dict[str, str],
    history: set[str],
    inline: list[tuple[layout.LogLayout, log.Entry, log.AddSegment]],
) -> None:
    """The data files a log's retained versions name (into ``named``, with who names them), those only
    its folded history names (``history``: an expiry may delete them), and its inline segments."""
    oldest = min(checkpoint_segments, default=-1)
    folded: set[str] = set()
    for version, paths in checkpoint_segments.items():
        for p in paths:
            named.setdefault(p, fs.uri(where.checkpoint_path(version)))
    for version, entry in entries.items():
        retained = version > oldest or oldest < 0
        for action in entry.actions:
            if isinstance(action, log.AddSegment) and action.inline is not None:
                inline.append((where, entry, action))
            for p in action.files():
                named.setdefault(p, fs.uri(where.log_path(version)))
                if not retained:
                    folded.add(p)
    history.update(folded - {p for paths in checkpoint_segments.values() for p in paths})


def _check_data(
    fs: WarehouseFS,
    report: FsckReport,
    named: dict[str, str],
    history: set[str],
    inline: list[tuple[layout.LogLayout, log.Entry, log.AddSegment]],
) -> None:
    """Every data file a retained version names: present, matching its checksum, and decoding."""
    for path, by in sorted(named.items()):
        carrier = layout.inline_segment_entry(path)
        if carrier is not None:
            if not fs.exists(carrier):
                report.damage(fs.uri(carrier), f"missing, while it carries segment {path} (named by {by})")
            continue
        uri = fs.uri(path)
        try:
            data = fs.read_bytes(path)
        except FileNotFoundError:
            if path not in history:
                report.damage(uri, f"missing (named by {by})")
            continue
        try:
            log.verify_named(data, path, uri)
            if path.endswith(".records.parquet"):
                files.read_records(data, uri)
            else:
                files.read_parquet_bytes(data, uri)
        except StorageError as e:
            report.damage(uri, _why(e))
            continue
        report.data_files += 1
    for where, entry, action in inline:
        name = f"{fs.uri(where.log_path(entry.version))} (segment {action.path})"
        assert action.inline is not None
        try:
            data = base64.b64decode(action.inline.data, validate=True)
            if action.inline.encoding is None:
                files.read_parquet_bytes(data, name)
            else:
                files.read_inline_segment(data, action.inline.encoding, action.inline.size, name)
        except (StorageError, ValueError) as e:
            report.damage(name, _why(e))
            continue
        report.inline_segments += 1
    for name in sorted(fs.list_names(layout.DATA_DIR)):
        path = f"{layout.DATA_DIR}/{name}"
        if path in named:
            continue
        if layout.is_temporary(name):
            report.note(fs.uri(path), "a temporary file of a writer that stopped")
        else:
            report.note(
                fs.uri(path),
                "stray: no retained version names it (a writer stopped before its commit, or history "
                "not expired yet); gluecat compact --apply removes it once it is an hour old",
            )


def _check_opens(warehouse: str, report: FsckReport) -> Store | None:
    """The warehouse opens at its latest version (this also replays the log after the newest checkpoint);
    the store opened, or None if it does not open."""
    try:
        store = Store(warehouse)
        store.latest()
    except StorageError as e:
        if not report.damaged:
            report.damage(report.warehouse, f"does not open: {_why(e)}")
        return None
    return store


IDENTITY, DELETED, DOC = "_vk", "_tomb", "doc"
"""The columns of a partition or object segment that a merge keeps (catalog/rows/segments.py): each
identity's newest row, deleted or not, and its document."""


def _check_merges(
    store: Store, report: FsckReport, where: layout.LogLayout, entries: dict[int, log.Entry]
) -> None:
    """Each merge's segment holds the newest row of each identity of its run: deletions kept, or (a merge
    of all of a table's segments) dropped. Runs an expiry has removed are not checked. gluecat before
    the fix of 2026-11-27 could merge another process's rows in place of a segment whose version that
    process had lost to the segment's writer, losing the writer's partitions: this finds such a merge."""
    merges = [
        (version, action)
        for version, entry in sorted(entries.items())
        for action in entry.actions
        if isinstance(action, log.MergeSegments)
    ]
    for version, merge in merges:
        try:
            run = [store.read_segment(p, cache=False) for p in merge.run]
            into = store.read_segment(merge.into, cache=False)
        except StorageError:
            continue  # expired history (a damaged file is reported by the checks above)
        columns = [IDENTITY, DELETED, DOC]
        if not all(set(columns) <= set(t.column_names) for t in [*run, into]):
            continue
        problem = _merge_difference([t.select(columns) for t in run], into.select(columns))
        if problem:
            report.damage(
                f"{report.warehouse.rstrip('/')}/{merge.into}",
                f"the merge of version {version} ({len(merge.run)} segments of {'.'.join(merge.table)}) "
                f"does not hold what they held: {problem}",
            )


def _merge_difference(run: list[pa.Table], into: pa.Table) -> str | None:
    """What a merged segment lacks or has too many of, against the newest rows of its run; None if
    nothing."""
    rows = pa.concat_tables([t.cast(into.schema) for t in run])
    ordinal = pa.array(range(rows.num_rows), pa.int64())
    newest = (
        pa.table([rows.column(IDENTITY), ordinal], names=[IDENTITY, "_ord"])
        .group_by(IDENTITY, use_threads=False)
        .aggregate([("_ord", "max")])
        .column("_ord_max")
    )
    want = rows.take(newest)
    live_want = want.filter(pc.invert(want.column(DELETED)))
    live_got = into.filter(pc.invert(into.column(DELETED)))

    lost: list[Any] = []
    extra: list[Any] = []
    if not live_want.sort_by(IDENTITY).equals(live_got.sort_by(IDENTITY)):
        w = dict(zip(live_want.column(IDENTITY).to_pylist(), live_want.column(DOC).to_pylist(), strict=True))
        g = dict(zip(live_got.column(IDENTITY).to_pylist(), live_got.column(DOC).to_pylist(), strict=True))
        lost = sorted(k for k, doc in w.items() if k not in g or g[k] != doc)
        extra = sorted(k for k in g if k not in w)
    deleted_got = into.filter(into.column(DELETED)).column(IDENTITY)
    deleted_want = want.filter(want.column(DELETED)).column(IDENTITY)
    stray_deletions = deleted_got.filter(pc.invert(pc.is_in(deleted_got, value_set=deleted_want)))
    parts = []
    if lost:
        parts.append(f"{len(lost)} rows lost or changed (first {lost[0]})")
    if extra:
        parts.append(f"{len(extra)} rows it did not hold (first {extra[0]})")
    if len(stray_deletions):
        parts.append(f"{len(stray_deletions)} deletions it did not hold (first {stray_deletions[0]})")
    return "; ".join(parts) or None


def _why(e: Exception) -> str:
    text = e.message if isinstance(e, StorageError) else str(e)
    return text


NOTES_SHOWN = 3
"""Notes of one kind shown by name before the rest are counted: an expiry inside the grace period leaves
a stray data file per expired commit, and a hundred identical lines would hide any damage."""


def render(report: FsckReport, *, verbose: bool = False) -> str:
    """The report as lines: every damage, then the notes (grouped by problem unless ``verbose``), then a
    summary."""
    lines = [f"DAMAGED  {f.path}: {f.problem}" for f in report.findings if f.damage]
    by_problem: dict[str, list[str]] = {}
    for f in report.findings:
        if not f.damage:
            by_problem.setdefault(f.problem, []).append(f.path)
    for problem, paths in by_problem.items():
        shown = paths if verbose else paths[:NOTES_SHOWN]
        lines.extend(f"note  {path}: {problem}" for path in shown)
        if len(paths) > len(shown):
            lines.append(f"note  ... and {len(paths) - len(shown)} more of the same (--verbose lists them)")
    damaged = sum(f.damage for f in report.findings)
    lines.append(
        f"{report.warehouse}: checked {report.entries} log entries ({report.expired_entries} expired), "
        f"{report.checkpoints} checkpoints, {report.data_files} data files, {report.inline_segments} "
        f"inline segments: {damaged} damaged, {len(report.findings) - damaged} notes"
        + (f"; latest version {report.version}" if report.version is not None else "")
    )
    return "\n".join(lines)
