"""Partition-level column statistics: Get/Update/DeleteColumnStatisticsForPartition.

The table-level rules (statistics.py) for one partition: the partition must exist, its columns are its
own storage descriptor's or else the table's, and the records (database, table, partition identity,
column) are deleted with the partition (partitions.py) and with the table (tables.py), and a column's
when an update outdates them (statistics.py says which).
"""

from __future__ import annotations

from typing import Any

from gluecat.catalog import statistics
from gluecat.catalog.context import PARTITION_COLUMN_STATISTICS, Context, require_table
from gluecat.catalog.partitions import require_partition
from gluecat.catalog.rows.segments import value_key
from gluecat.store.snapshot import Changes, Key, Snapshot


def _partition(
    ctx: Context, snap: Snapshot, database: str, table_name: str, values: list[str]
) -> tuple[Key, dict[str, str], str]:
    """The records' key prefix, the partition's columns, and how errors name it."""
    table = require_table(snap, database, table_name)
    doc = require_partition(ctx, snap, table, values)
    columns = statistics.partition_columns(doc, table)
    return (
        (database, table_name, value_key(values)),
        columns,
        f"partition {values} of {database}.{table_name}",
    )


def get_column_statistics(
    ctx: Context, database: str, table: str, values: list[str], column_names: list[str]
) -> dict[str, Any]:
    snap = ctx.snapshot(table=(database, table))
    prefix, columns, where = _partition(ctx, snap, database, table, values)
    columns = statistics.seen_columns(database, table, columns)
    return statistics.found_and_errors(
        snap, PARTITION_COLUMN_STATISTICS, prefix, columns, column_names, where
    )


def update_column_statistics(
    ctx: Context, database: str, table: str, values: list[str], stats_list: list[dict[str, Any]]
) -> dict[str, Any]:
    def build(snap: Snapshot) -> tuple[Changes, dict[str, Any]]:
        prefix, columns, where = _partition(ctx, snap, database, table, values)
        return statistics.put_changes(PARTITION_COLUMN_STATISTICS, prefix, columns, stats_list, where)

    return ctx.store.commit("UpdateColumnStatisticsForPartition", build, table=(database, table))


def delete_column_statistics(ctx: Context, database: str, table: str, values: list[str], column: str) -> None:
    def build(snap: Snapshot) -> tuple[Changes, None]:
        prefix, _, where = _partition(ctx, snap, database, table, values)
        return statistics.deletion(snap, PARTITION_COLUMN_STATISTICS, prefix, column, where), None

    ctx.store.commit("DeleteColumnStatisticsForPartition", build, table=(database, table))
