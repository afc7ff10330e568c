"""Merging a table's partition segments.

Every partition write adds one small segment, so segments are merged as they accumulate, by size tier
as LSM trees do: the newest ``MERGE_WIDTH`` become one, keeping deletions (which may cancel rows of
older segments), whenever the oldest of them holds at most twice the mean of the rest, so segments of
about one size are merged together and the result may complete the next tier. A table keeps at most
about twenty segments at a million partitions, and each row is rewritten about 4.5 times (merging
whenever the oldest held at most twice the *sum* of the rest rewrote each row about 8 times).
``compact_table`` merges all segments into a single base with no deletions, sorted by the first ACTIVE
partition index's keys (by identity otherwise) in row groups with Parquet statistics.

A merged segment records the segments it replaces in its Parquet metadata (``gluecat.replaces``), so a
reader whose merged view already covers them swaps names instead of rebuilding.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from gluecat.catalog import indexes
from gluecat.catalog.context import TABLE, Context
from gluecat.catalog.partition_rows import dedupe_last, latest_by_identity, segment_schema, sort_by_identity
from gluecat.catalog.partition_views import partition_key_count
from gluecat.expressions import key_type, typed_column
from gluecat.store.snapshot import Changes, Key, Snapshot
from gluecat.store.store import Store

OPERATION = "CompactPartitions"
"""The operation name of merge commits: they rewrite segments but never change which partitions exist."""
MERGE_WIDTH = 8
MAX_SEGMENTS = 96  # past this, merge the newest MERGE_WIDTH whatever their sizes
MAX_CASCADE = 8  # merges one write may trigger: 8 tiers of 8 cover 16M one-row writes (Glue allows 10M)


def _merged(store: Store, n_keys: int, paths: tuple[str, ...], *, keep_deletions: bool) -> pa.Table:
    schema = segment_schema(n_keys)
    rows = pa.concat_tables([store.read_segment(p, cache=False).select(schema.names) for p in paths])
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
    """Merge a table's segments (all, or the newest MERGE_WIDTH); False if there was nothing to do."""
    key: Key = (database, name)
    snap = ctx.store.latest()
    table = snap.get(TABLE, key)
    segments = snap.table_segments(key)
    if table is None or len(segments) < 2:
        return False
    chosen = segments if whole else _tail_to_merge(ctx.store, segments)
    if not chosen:
        return False
    n_keys = partition_key_count(table)
    rows = _merged(ctx.store, n_keys, chosen, keep_deletions=not whole and len(chosen) < len(segments))
    if whole:
        rows = _sorted_for_index(table, snap, rows)
    rows = rows.replace_schema_metadata({b"gluecat.replaces": json.dumps(list(chosen)).encode()})

    def build(latest: Snapshot) -> tuple[Changes, bool]:
        changes = Changes()
        now = latest.table_segments(key)
        # Only if the merged segments are still the table's newest (the merged one is appended, so it
        # must not land after a segment that overrides it); otherwise a later pass merges.
        if now[-len(chosen) :] != chosen or (whole and now != segments):
            return changes, False
        for path in chosen:
            changes.segment_removes.append((key, path))
        changes.segment_adds.append((key, rows))
        return changes, True

    return bool(ctx.store.commit(OPERATION, build))


def _tail_to_merge(store: Store, segments: tuple[str, ...]) -> tuple[str, ...]:
    """The newest MERGE_WIDTH segments, when they are of one size tier: their oldest (normally the
    largest) holds at most twice the mean of the others, so a big segment is rewritten only when as
    many rows as it holds have gathered behind it in segments of its size."""
    if len(segments) < MERGE_WIDTH:
        return ()
    tail = segments[-MERGE_WIDTH:]
    if len(segments) > MAX_SEGMENTS:
        return tail
    rows = [store.segment_footer(p)[0] for p in tail]
    return tail if rows[0] * (MERGE_WIDTH - 1) <= 2 * sum(rows[1:]) else ()


def maybe_merge(ctx: Context, database: str, name: str) -> None:
    """Called after a partition write: keep the number of segments (and rewrites) small."""
    # A merge may complete the next tier's run of segments: cascade, as a binary counter carries.
    for _ in range(MAX_CASCADE):
        segments = ctx.store.cached().table_segments((database, name))
        if len(segments) < MERGE_WIDTH or not _tail_to_merge(ctx.store, segments):
            return
        if not _merge(ctx, database, name, whole=False):
            return


def compact_table(ctx: Context, database: str, name: str) -> bool:
    return _merge(ctx, database, name, whole=True)


def compact_all(store: Store) -> int:
    """Merge every table's segments into one sorted base; returns how many tables were merged."""
    ctx = Context(store=store)
    merged = 0
    for database, name in list(store.latest().segments):
        if compact_table(ctx, database, name):
            merged += 1
    return merged
