"""Merging a table's partition segments.

Every partition write adds one small segment, so segments are merged as they accumulate, by size tier
as LSM trees do: the newest run of ``MERGE_WIDTH`` becomes one, keeping deletions (which may cancel rows
of older segments), whenever the run's oldest holds at most twice the mean of the rest, so segments of
about one size are merged together and the result may complete the next tier. A table keeps at most
about twenty segments at a million partitions, and each row is rewritten about 4.5 times (merging
whenever the oldest held at most twice the *sum* of the rest rewrote each row about 8 times).
``compact_table`` merges all segments into a single base with no deletions, sorted by the first ACTIVE
partition index's keys (by identity otherwise) in row groups with Parquet statistics.

Merges run on a background thread of the writing process (``after_write``), so writers do not wait for
them. A merge writes its file first and then commits a short ``merge_segments`` action that puts the
merged segment in the place of its run: segments other writers added meanwhile stay newer than it.

A merged segment records the segments it replaces in its Parquet metadata (``gluecat.replaces``), so a
reader whose merged view already covers them swaps names instead of rebuilding.
"""

from __future__ import annotations

import atexit
import json
import logging
import threading
import weakref
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from gluecat.catalog import indexes
from gluecat.catalog.context import TABLE, Context
from gluecat.catalog.partition_rows import (
    dedupe_last,
    distinct_identities,
    latest_by_identity,
    segment_schema,
    sort_by_identity,
)
from gluecat.catalog.partition_views import partition_key_count
from gluecat.expressions import key_type, typed_column
from gluecat.store.snapshot import Changes, Key, Snapshot, run_at
from gluecat.store.store import Store

OPERATION = "CompactPartitions"
"""The operation name of merge commits: they rewrite segments but never change which partitions exist."""
MERGE_WIDTH = 8
MAX_SEGMENTS = 96  # past this, merge the newest MERGE_WIDTH whatever their sizes
MAX_CASCADE = 8  # merges one write may trigger: 8 tiers of 8 cover 16M one-row writes (Glue allows 10M)
MAX_RUN = 4 * MERGE_WIDTH
BACKLOG = MAX_SEGMENTS // 2
"""Past this many segments a writer merges itself instead of leaving it to the background (a table at
10M partitions holds up to about 40 in its tiers)."""
IDLE_SECONDS = 2.0  # a store's merge thread ends after this long without work

log = logging.getLogger(__name__)


def _merged(store: Store, n_keys: int, paths: tuple[str, ...], *, keep_deletions: bool) -> pa.Table:
    schema = segment_schema(n_keys)
    rows = pa.concat_tables([store.read_segment(p, cache=False).select(schema.names) for p in paths])
    if distinct_identities(rows) and (keep_deletions or not pc.any(rows.column("_tomb")).as_py()):
        # Already one row an identity, as a merge keeps: the run's order can stay (readers sort as they
        # fold), which spares copying every row (a third of a 100,000-row merge).
        return rows
    if keep_deletions:
        return latest_by_identity(rows, keep_deletions=True)
    return dedupe_last(rows)


def _sorted_for_index(table: dict[str, Any], snap: Snapshot, rows: pa.Table) -> pa.Table:
    active = indexes.usable_indexes(snap, table)
    if not active:
        return sort_by_identity(rows)
    positions = {k["Name"].lower(): i for i, k in enumerate(table.get("PartitionKeys") or [])}
    cols = {}
    for key in active[0]["Keys"]:
        i = positions[key["Name"].lower()]
        cols[f"_s{i}"] = typed_column(rows.column(f"p{i}"), key_type(key["Type"]))
    keyed = rows
    for name, col in cols.items():
        keyed = keyed.append_column(name, col)
    order = pc.sort_indices(keyed, sort_keys=[(n, "ascending") for n in cols] + [("_vk", "ascending")])
    return rows.take(order)


def _merge(ctx: Context, database: str, name: str, *, whole: bool) -> bool:
    """Merge a table's segments (all, or a run of MERGE_WIDTH of one size); False if there was nothing
    to do or the segments changed under the merge.

    The merged file is written before the commit, so the commit itself is short; it puts the merged
    segment in the run's place, so other writers' segments added meanwhile stay newer than it.
    """
    key: Key = (database, name)
    snap = ctx.store.latest()
    table = snap.get(TABLE, key)
    segments = snap.table_segments(key)
    if table is None or len(segments) < 2:
        return False
    chosen = segments if whole else _run_to_merge(ctx.store, segments)
    if not chosen:
        return False
    n_keys = partition_key_count(table)
    # Deletions in the run may cancel rows of older segments, so they are kept unless none is older.
    rows = _merged(ctx.store, n_keys, chosen, keep_deletions=chosen[0] != segments[0])
    if whole:
        rows = _sorted_for_index(table, snap, rows)
    rows = rows.replace_schema_metadata({b"gluecat.replaces": json.dumps(list(chosen)).encode()})
    into = ctx.store.write_segment(rows)

    def build(latest: Snapshot) -> tuple[Changes, bool]:
        changes = Changes()
        now = latest.table_segments(key)
        if (now != segments) if whole else run_at(now, chosen) < 0:
            return changes, False
        if not whole and chosen[0] == segments[0] and now[0] != chosen[0]:
            return changes, False  # the run is no longer the oldest, but its deletions were dropped
        changes.segment_merges.append((key, chosen, into))
        return changes, True

    merged = False
    try:
        merged = bool(ctx.store.commit(OPERATION, build))
    finally:
        if not merged:
            ctx.store.discard_segment(into)
    return merged


def _run_to_merge(store: Store, segments: tuple[str, ...]) -> tuple[str, ...]:
    """The newest run of at least MERGE_WIDTH segments of one size tier: the run's oldest (normally its
    largest) holds at most twice the mean of the others, so a big segment is rewritten only when as many
    rows as it holds have gathered behind it in segments of its size. Past MAX_SEGMENTS, the newest
    MERGE_WIDTH."""
    if len(segments) < MERGE_WIDTH:
        return ()
    if len(segments) > MAX_SEGMENTS:
        return segments[-MERGE_WIDTH:]
    rows = [store.segment_footer(p)[0] for p in segments]
    for at in range(len(segments) - MERGE_WIDTH, -1, -1):
        run = rows[at : at + MERGE_WIDTH]
        if run[0] * (MERGE_WIDTH - 1) <= 2 * sum(run[1:]):
            # Writes that outpaced the merging leave more than a run's worth of the tier: take the older
            # ones of it too, or they would be stranded between bigger segments and merged too often.
            total, end = sum(run), at + MERGE_WIDTH
            while at > 0 and end - at < MAX_RUN and rows[at - 1] * (end - at) <= 2 * total:
                at -= 1
                total += rows[at]
            return segments[at:end]
    return ()


class _Merger:
    """A store's background merging: one thread, started when there is work, that merges the tables
    written to and ends when idle. ``lock`` is held for a table's whole merge pass, by this thread or by
    a writer merging itself, so two passes never pick overlapping runs of one process's tables."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._cond = threading.Condition()
        self._pending: dict[Key, Context] = {}
        self._thread: threading.Thread | None = None
        self._busy = False
        self._stopping = False

    def submit(self, ctx: Context, key: Key) -> None:
        with self._cond:
            if self._stopping:
                return
            self._pending[key] = ctx
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="gluecat-merge", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                if not self._pending and not self._stopping:
                    self._cond.wait(IDLE_SECONDS)
                if self._stopping or not self._pending:
                    self._thread = None
                    self._cond.notify_all()
                    return
                key, ctx = self._pending.popitem()
                self._busy = True
            try:
                maybe_merge(ctx, *key)
            except Exception as e:  # a merge is only an optimisation: the next write tries again
                log.warning("merging the segments of %s failed: %s", ".".join(key), e)
            finally:
                del ctx
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def drain(self) -> None:
        """Wait until every merge asked for so far is done."""
        with self._cond:
            while self._pending or self._busy:
                self._cond.wait()

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout=60)


_MERGERS: weakref.WeakKeyDictionary[Store, _Merger] = weakref.WeakKeyDictionary()
_MERGERS_LOCK = threading.Lock()


def _merger(store: Store) -> _Merger:
    with _MERGERS_LOCK:
        merger = _MERGERS.get(store)
        if merger is None:
            merger = _MERGERS[store] = _Merger()
        return merger


@atexit.register
def _stop_all() -> None:
    # A merge still running when the interpreter finalises could be cut off inside pyarrow: let it end.
    # (Merges not started are not lost: the table's next write asks for them again.)
    with _MERGERS_LOCK:
        mergers = list(_MERGERS.values())
    for merger in mergers:
        merger.stop()


def after_write(ctx: Context, database: str, name: str) -> None:
    """Called after each partition write: merge what has gathered, on the store's merge thread unless
    the table has a backlog (then the writer merges, so merging keeps up with any rate of writes)."""
    segments = ctx.store.cached().table_segments((database, name))
    if not _run_to_merge(ctx.store, segments):
        return
    if ctx.background_merges and len(segments) <= BACKLOG:
        _merger(ctx.store).submit(ctx, (database, name))
    else:
        maybe_merge(ctx, database, name)


def wait_for_merges(store: Store) -> None:
    """Wait until the merges this process's writes have asked for are done."""
    _merger(store).drain()


def maybe_merge(ctx: Context, database: str, name: str) -> None:
    """Merge runs of a table's segments while there are any (a merge may complete the next tier's run,
    as a binary counter carries)."""
    with _merger(ctx.store).lock:
        for _ in range(MAX_CASCADE):
            segments = ctx.store.cached().table_segments((database, name))
            if not _run_to_merge(ctx.store, segments):
                return
            if not _merge(ctx, database, name, whole=False):
                return


def compact_table(ctx: Context, database: str, name: str) -> bool:
    with _merger(ctx.store).lock:
        return _merge(ctx, database, name, whole=True)


def compact_all(store: Store) -> int:
    """Merge every table's segments into one sorted base; returns how many tables were merged."""
    ctx = Context(store=store)
    merged = 0
    for database, name in list(store.latest().segments):
        if compact_table(ctx, database, name):
            merged += 1
    return merged
