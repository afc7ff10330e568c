"""The merged partition view of a table at a snapshot, cached per process.

The latest views are kept per (store, table) and extended in place as new segments appear, so a stream
of small writes costs O(batch) each; a view for an older snapshot (time travel) is built on demand and
kept with that snapshot.

Folding a view's deltas into its base (``refold``) copies every row (60 to 600 ms for a table of
100,000 to 160,000 partitions, refolded after 50,000 newer rows; 0.4 s and more at a million), so it
runs on a thread of its own: writes go on extending the view (and squashing the deltas that came after
those the refold folds), and the first view asked for after the refold ends takes its base, keeping
the deltas that came after it. Most of a refold is pyarrow work, which runs beside the writer's Python.
"""

from __future__ import annotations

import atexit
import json
import logging
import threading
import weakref
from typing import Any

from gluecat.catalog.partition_rows import TableView, extend, fold, refold
from gluecat.store.snapshot import Key, Snapshot
from gluecat.store.store import Store

_LATEST: weakref.WeakKeyDictionary[Store, dict[Key, TableView]] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()

# Refold the in-memory base when the deltas exceed this many rows (or a tenth of the base); squash the
# newest deltas into one when there are more than this many of them (merges only their identity maps).
MAX_DELTA_ROWS = 50_000
MAX_DELTA_SEGMENTS = 64
PENDING_DELTA_FACTOR = 3  # past this many times the refold threshold, a view waits for the pending refold

log = logging.getLogger(__name__)


class _Refold:
    """A refold of ``source`` running on its own thread."""

    def __init__(self, source: TableView) -> None:
        self.source = source
        self.result: TableView | None = None
        self.thread = threading.Thread(target=self._run, name="gluecat-refold", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.result = refold(self.source, self.source.segments)
        except Exception as e:  # only an optimisation: the next view that needs one refolds itself
            log.warning("refolding a partition view failed: %s", e)

    def done(self) -> bool:
        return not self.thread.is_alive()

    def adopt(self, fresh: TableView) -> TableView | None:
        """``fresh`` on the refolded base, if ``fresh`` still extends the view the refold started from
        (same base, its deltas first); else None."""
        self.thread.join()
        folded, source, k = self.result, self.source, len(self.source.deltas)
        if (
            folded is None
            or fresh.base is not source.base
            or len(fresh.deltas) < k
            or any(a is not b for a, b in zip(fresh.deltas[:k], source.deltas, strict=True))
        ):
            return None
        return TableView(
            n_keys=fresh.n_keys,
            base_segments=fresh.segments,
            base=folded.base,
            deltas=fresh.deltas[k:],
            delta_segments=(),
            delta_maps=fresh.delta_maps[k:],
            _live=folded._live,
        )


_REFOLDS: weakref.WeakKeyDictionary[Store, dict[Key, _Refold]] = weakref.WeakKeyDictionary()


@atexit.register
def _join_refolds() -> None:
    # A refold cut off inside pyarrow while the interpreter finalises can abort the process.
    with _LOCK:
        pending = [r for refolds in _REFOLDS.values() for r in refolds.values()]
    for r in pending:
        r.thread.join(timeout=60)


def partition_key_count(table: dict[str, Any]) -> int:
    return len(table.get("PartitionKeys") or [])


def _expanded(store: Store, known: tuple[str, ...], segments: tuple[str, ...]) -> list[str] | None:
    """``segments`` with each merged segment that replaced some of ``known`` written as the segments it
    replaced (recursively: a merge may have replaced merged segments this view never saw); None if a
    replaced file is gone (expired), so the caller rebuilds from the files."""
    known_set = set(known)

    def expand(path: str) -> list[str] | None:
        if path in known_set:
            return [path]
        replaces = store.segment_footer(path)[1].get(b"gluecat.replaces")
        if replaces is None:
            return [path]
        out: list[str] = []
        missing = False
        for name in json.loads(replaces):
            if name not in known_set and not store.segment_exists(name):
                missing = True
                continue
            sub = expand(name)
            if sub is None:
                return None
            out.extend(sub)
        if not any(n in known_set for n in out):
            return [path]  # nothing this view holds: read the merged file as it is
        return None if missing else out

    expanded: list[str] = []
    for path in segments:
        names = expand(path)
        if names is None:
            return None
        expanded.extend(names)
    return expanded


def view(store: Store, snap: Snapshot, table_key: Key, n_keys: int) -> TableView:
    segments = snap.table_segments(table_key)
    if snap.version < store.cached().version:
        return snap.derived(
            ("partition-view", table_key),
            lambda: fold(n_keys, segments, [store.read_segment(p) for p in segments]),
        )
    with _LOCK:
        cached = _LATEST.setdefault(store, {}).get(table_key)
    if cached is not None and cached.segments == segments and cached.n_keys == n_keys:
        if not _refold_ended(store, table_key):
            return cached
        fresh = _folded(store, table_key, cached)
        with _LOCK:
            if _LATEST[store].get(table_key) is cached:
                _LATEST[store][table_key] = fresh
        return fresh
    known = cached.segments if cached is not None else ()
    expanded = _expanded(store, known, segments) if cached is not None and cached.n_keys == n_keys else None
    if cached is not None and expanded is not None and tuple(expanded[: len(known)]) == known:
        # The cached rows are all still there (some now inside merged segments): add only what is newer.
        new_paths = expanded[len(known) :]
        fresh = extend(cached, new_paths, [store.read_segment(p, cache=False) for p in new_paths]).renamed(
            segments
        )
        fresh = _folded(store, table_key, fresh)
    else:
        fresh = fold(n_keys, segments, [store.read_segment(p, cache=False) for p in segments])
    with _LOCK:
        _LATEST.setdefault(store, {})[table_key] = fresh
    return fresh


def _refold_ended(store: Store, table_key: Key) -> bool:
    with _LOCK:
        pending = _REFOLDS.get(store, {}).get(table_key)
    return pending is not None and pending.done()


def _folded(store: Store, table_key: Key, fresh: TableView) -> TableView:
    """``fresh`` on the base of a refold that has ended; a refold started if its deltas have grown too
    big, and its newest deltas squashed if there are too many."""
    with _LOCK:
        refolds = _REFOLDS.setdefault(store, {})
        pending = refolds.get(table_key)
    limit = max(MAX_DELTA_ROWS, fresh.base.num_rows // 10)
    if pending is not None and (pending.done() or fresh.delta_rows() > PENDING_DELTA_FACTOR * limit):
        with _LOCK:
            if refolds.get(table_key) is pending:
                del refolds[table_key]
        adopted = pending.adopt(fresh)
        fresh, pending = (fresh if adopted is None else adopted), None
        limit = max(MAX_DELTA_ROWS, fresh.base.num_rows // 10)
    if fresh.delta_rows() > limit and pending is None:
        with _LOCK:
            pending = refolds.get(table_key)
            if pending is None:
                pending = refolds[table_key] = _Refold(fresh)
    # The deltas a pending refold folds stay as they are, so that the view still extends what it
    # started from and can take its base; those after them are squashed as usual.
    keep = len(pending.source.deltas) if pending is not None else 0
    if len(fresh.deltas) - keep > MAX_DELTA_SEGMENTS:
        return fresh.squashed(keep)
    return fresh
