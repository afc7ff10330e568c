"""The merged partition view of a table at a snapshot, cached per process.

The latest views are kept per (store, table) and extended in place as new segments appear, so a stream
of small writes costs O(batch) each; a view for an older snapshot (time travel) is built on demand and
kept with that snapshot.
"""

from __future__ import annotations

import json
import threading
import weakref
from typing import Any

from gluecat.catalog.partition_rows import TableView, extend, fold, refold
from gluecat.store.snapshot import Key, Snapshot
from gluecat.store.store import Store

_LATEST: weakref.WeakKeyDictionary[Store, dict[Key, TableView]] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()

# Refold the in-memory base when the deltas exceed this many rows (or a tenth of the base); squash the
# deltas into one when there are more than this many of them (costs only the delta rows).
MAX_DELTA_ROWS = 50_000
MAX_DELTA_SEGMENTS = 64


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
        return cached
    known = cached.segments if cached is not None else ()
    expanded = _expanded(store, known, segments) if cached is not None and cached.n_keys == n_keys else None
    if cached is not None and expanded is not None and tuple(expanded[: len(known)]) == known:
        # The cached rows are all still there (some now inside merged segments): add only what is newer.
        new_paths = expanded[len(known) :]
        fresh = extend(cached, new_paths, [store.read_segment(p, cache=False) for p in new_paths]).renamed(
            segments
        )
        if fresh.delta_rows() > max(MAX_DELTA_ROWS, fresh.base.num_rows // 10):
            fresh = refold(fresh, segments)
        elif len(fresh.deltas) > MAX_DELTA_SEGMENTS:
            fresh = fresh.squashed()
    else:
        fresh = fold(n_keys, segments, [store.read_segment(p, cache=False) for p in segments])
    with _LOCK:
        _LATEST.setdefault(store, {})[table_key] = fresh
    return fresh
