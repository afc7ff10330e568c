"""Column statistics: one record per (database, table, column) for a table, per (database, table,
partition identity, column) for a partition (partition_statistics.py serves those).

Both follow the same rules: a column of the table, statistics of a type that fits the column's type,
per-column errors in the answer; they are deleted with their table, and a partition's with it. A
column's are deleted too when an update drops, renames or retypes the column (as Hive's metastore
does): a table's by UpdateTable, with those of the partitions whose columns are the table's; a
partition's by an UpdatePartition in place, and all of a partition's when it is renamed away."""

from __future__ import annotations

from typing import Any

from gluecat.catalog import access
from gluecat.catalog.context import (
    COLUMN_STATISTICS,
    PARTITION_COLUMN_STATISTICS,
    Context,
    base_type,
    copy_doc,
    require_table,
    type_spelling,
)
from gluecat.errors import EntityNotFoundException
from gluecat.store.snapshot import Changes, Key, Snapshot

# Which StatisticsData types fit which Hive column types (by the type's base name).
_FITTING = {
    "BOOLEAN": {"boolean"},
    "DATE": {"date"},
    "DECIMAL": {"decimal"},
    "DOUBLE": {"double", "float"},
    "LONG": {"tinyint", "smallint", "int", "integer", "bigint", "long"},
    "STRING": {"string", "char", "varchar"},
    "BINARY": {"binary"},
}


def columns_of(doc: dict[str, Any]) -> dict[str, str]:
    """The data columns of a table or partition document, by lowercase name: their types."""
    cols = (doc.get("StorageDescriptor") or {}).get("Columns") or []
    return {c["Name"].lower(): (c.get("Type") or "") for c in cols}


def _error(code: str, message: str) -> dict[str, str]:
    return {"ErrorCode": code, "ErrorMessage": message}


def found_and_errors(
    snap: Snapshot, kind: str, prefix: Key, columns: dict[str, str], column_names: list[str], where: str
) -> dict[str, Any]:
    """GetColumnStatistics*: the statistics of each named column under ``prefix``, or its error."""
    found, errors = [], []
    for name in dict.fromkeys(column_names):
        col = name.lower()
        if col not in columns:
            errors.append(
                {
                    "ColumnName": name,
                    "Error": _error("InvalidInputException", f"Column {name} is not a column of {where}"),
                }
            )
            continue
        stats = snap.get(kind, (*prefix, col))
        if stats is None:
            errors.append(
                {
                    "ColumnName": name,
                    "Error": _error("EntityNotFoundException", f"No statistics for column {name} of {where}"),
                }
            )
        else:
            found.append(copy_doc(stats))
    return {"ColumnStatisticsList": found, "Errors": errors}


def put_changes(
    kind: str, prefix: Key, columns: dict[str, str], stats_list: list[dict[str, Any]], where: str
) -> tuple[Changes, dict[str, Any]]:
    """UpdateColumnStatistics*: the statistics that fit their columns, and an error for each other."""
    changes = Changes()
    errors = []
    for stats in stats_list:
        col = stats["ColumnName"].lower()
        problem = None
        if col not in columns:
            problem = f"Column {stats['ColumnName']} is not a column of {where}"
        else:
            kind_of_data = stats["StatisticsData"]["Type"]
            if base_type(columns[col]) not in _FITTING[kind_of_data]:
                problem = (
                    f"StatisticsData.Type {kind_of_data} does not fit column {col} of type {columns[col]}"
                )
        if problem is not None:
            errors.append(
                {"ColumnStatistics": copy_doc(stats), "Error": _error("InvalidInputException", problem)}
            )
            continue
        changes.put(kind, (*prefix, col), {**stats, "ColumnName": col})
    return changes, {"Errors": errors}


def deletion(snap: Snapshot, kind: str, prefix: Key, column: str, where: str) -> Changes:
    """DeleteColumnStatistics*: the removal of one column's statistics, which must exist."""
    col = column.lower()
    if snap.get(kind, (*prefix, col)) is None:
        raise EntityNotFoundException(f"No statistics for column {column} of {where}")
    changes = Changes()
    changes.delete(kind, (*prefix, col))
    return changes


def seen_columns(database: str, table: str, columns: dict[str, str]) -> dict[str, str]:
    """``columns`` (by lowercase name) that the caller may see (gluecat.catalog.access): the others are
    answered as columns the table does not have."""
    view = access.current()
    shown = view.visible_columns(database, table) if view is not None else None
    return columns if shown is None else {k: v for k, v in columns.items() if shown.contains(k)}


def get_column_statistics(ctx: Context, database: str, table: str, column_names: list[str]) -> dict[str, Any]:
    snap = ctx.snapshot(table=(database, table))
    doc = require_table(snap, database, table)
    where = f"{database}.{table}"
    columns = seen_columns(database, table, columns_of(doc))
    return found_and_errors(snap, COLUMN_STATISTICS, (database, table), columns, column_names, where)


def update_column_statistics(
    ctx: Context, database: str, table: str, stats_list: list[dict[str, Any]]
) -> dict[str, Any]:
    def build(snap: Snapshot) -> tuple[Changes, dict[str, Any]]:
        doc = require_table(snap, database, table)
        where = f"{database}.{table}"
        return put_changes(COLUMN_STATISTICS, (database, table), columns_of(doc), stats_list, where)

    return ctx.store.commit("UpdateColumnStatisticsForTable", build, table=(database, table))


def delete_column_statistics(ctx: Context, database: str, table: str, column: str) -> None:
    def build(snap: Snapshot) -> tuple[Changes, None]:
        require_table(snap, database, table)
        return deletion(snap, COLUMN_STATISTICS, (database, table), column, f"{database}.{table}"), None

    ctx.store.commit("DeleteColumnStatisticsForTable", build, table=(database, table))


def outdated(column: str, before: dict[str, str], after: dict[str, str]) -> bool:
    """Whether statistics of ``column`` (lowercase) stop describing it when a table's or a partition's
    columns (columns_of) go from ``before`` to ``after``: it is dropped, renamed or retyped."""
    return (
        column not in after
        or column not in before
        or type_spelling(before[column]) != type_spelling(after[column])
    )


def partition_columns(partition: dict[str, Any], table: dict[str, Any]) -> dict[str, str]:
    """A partition's statistics columns: its own storage descriptor's, or else its table's."""
    return columns_of(partition) or columns_of(table)


def drop_outdated(
    snap: Snapshot, kind: str, prefix: Key, before: dict[str, str], after: dict[str, str], changes: Changes
) -> None:
    """Add to ``changes`` the removal of the statistics records of ``kind`` under ``prefix`` (a table's:
    database, table; or one partition's: database, table, identity) whose columns an update takes from
    ``before`` to ``after``, for the columns it drops, renames or retypes, as Hive's metastore removes
    them: they describe values of the column as it was, and a column of the name made again (or of
    another type) must not find them."""
    for key in snap.keys_with_prefix(kind, prefix):
        if outdated(key[-1], before, after):
            changes.delete(kind, key)


def drop_partition_statistics(snap: Snapshot, table: Key, identities: list[str], changes: Changes) -> None:
    """Add to ``changes`` the removal of the statistics of the partitions ``identities`` (value keys)."""
    if not identities or not snap.keys_with_prefix(PARTITION_COLUMN_STATISTICS, table):
        return
    for vk in identities:
        for key in snap.keys_with_prefix(PARTITION_COLUMN_STATISTICS, (*table, vk)):
            changes.delete(PARTITION_COLUMN_STATISTICS, key)
