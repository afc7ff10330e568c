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

from gluecat.catalog.partition_rows import TableView, extend, fold
from gluecat.store.snapshot import Key, Snapshot
from gluecat.store.store import Store

_LATEST: weakref.WeakKeyDictionary[Store, dict[Key, TableView]] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()

# Refold the in-memory base when the deltas exceed this many rows or segments.
MAX_DELTA_ROWS = 50_000
MAX_DELTA_SEGMENTS = 64


def partition_key_count(table: dict[str, Any]) -> int:
    return len(table.get("PartitionKeys") or [])


def _covering_prefix(store: Store, known: tuple[str, ...], segments: tuple[str, ...]) -> int | None:
    """How many of ``segments`` hold exactly the rows of ``known`` (merged segments say what they
    replace), or None if they do not line up; the rest of ``segments`` is newer than ``known``."""
    if segments[: len(known)] == known:
        return len(known)
    known_set = set(known)
    expanded = 0
    for i, path in enumerate(segments):
        if expanded == len(known):
            return i
        if path in known_set:
            if known[expanded] != path:
                return None
            expanded += 1
            continue
        replaces = (store.read_segment(path).schema.metadata or {}).get(b"gluecat.replaces")
        if replaces is None:
            return None
        names = tuple(json.loads(replaces))
        if known[expanded : expanded + len(names)] != names:
            return None
        expanded += len(names)
    return len(segments) if expanded == len(known) else None


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
    covered = (
        _covering_prefix(store, known, segments) if cached is not None and cached.n_keys == n_keys else None
    )
    if cached is not None and covered is not None:
        new_paths = segments[covered:]
        fresh = extend(
            cached.renamed(segments[:covered]), new_paths, [store.read_segment(p) for p in new_paths]
        )
        too_big = fresh.delta_rows() > max(MAX_DELTA_ROWS, fresh.base.num_rows // 10)
        if too_big or len(fresh.delta_segments) > MAX_DELTA_SEGMENTS:
            fresh = fold(n_keys, segments, [fresh.base, *fresh.deltas])
    else:
        fresh = fold(n_keys, segments, [store.read_segment(p) for p in segments])
    with _LOCK:
        _LATEST.setdefault(store, {})[table_key] = fresh
    return fresh
