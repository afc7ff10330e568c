"""`gluecat compact`: each row set of the warehouse merged into one segment, sorted for its table's
lookups (by the typed keys of the table's first ACTIVE partition index, else by identity)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from gluecat.catalog import indexes
from gluecat.catalog.context import TABLE, Context
from gluecat.expressions import key_type, typed_column
from gluecat.store.snapshot import Key, Snapshot


def index_order(table: dict[str, Any], snap: Snapshot, rows: pa.Table) -> pa.Table:
    """``rows`` sorted by the typed keys of the table's first ACTIVE partition index, then identity."""
    active = indexes.usable_indexes(snap, table)
    if not active:
        return rows.take(pc.sort_indices(rows, sort_keys=[("_vk", "ascending")]))
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


def compact_rows(ctx: Context, key: Key) -> bool:
    """Merge a row set (a table's partitions, or a governed table's objects) into one sorted segment;
    False if there was nothing to merge or its segments changed meanwhile."""
    snap = ctx.store.latest()
    table = snap.get(TABLE, key[:2])
    if table is None:
        return False
    return ctx.rows.compact(key, lambda rows: index_order(table, snap, rows))


def compact_table(ctx: Context, database: str, name: str) -> bool:
    """Merge a table's partitions into one segment sorted for its first ACTIVE partition index."""
    return compact_rows(ctx, (database, name))


def compact_all(ctx: Context) -> int:
    """Merge every row set of the warehouse into one sorted segment; returns how many were merged."""
    snap = ctx.store.latest()
    keys = list(snap.segments)
    if snap.sharded:  # tables' partitions are in their own logs
        keys += [table for table in snap.sorted_keys(TABLE) if snap.table_segments(table)]
    return sum(1 for key in keys if compact_rows(ctx, key))
