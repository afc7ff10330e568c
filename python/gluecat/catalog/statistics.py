"""Table-level column statistics: one record per (database, table, column)."""

from __future__ import annotations

from typing import Any

from gluecat.catalog.context import COLUMN_STATISTICS, Context, copy_doc, require_table
from gluecat.errors import EntityNotFoundException
from gluecat.store.snapshot import Changes, Snapshot

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


def _columns(table: dict[str, Any]) -> dict[str, str]:
    cols = (table.get("StorageDescriptor") or {}).get("Columns") or []
    return {c["Name"].lower(): (c.get("Type") or "") for c in cols}


def _base_type(hive_type: str) -> str:
    return hive_type.split("(", 1)[0].split("<", 1)[0].strip().lower()


def _error(code: str, message: str) -> dict[str, str]:
    return {"ErrorCode": code, "ErrorMessage": message}


def get_column_statistics(ctx: Context, database: str, table: str, column_names: list[str]) -> dict[str, Any]:
    snap = ctx.snapshot()
    doc = require_table(snap, database, table)
    columns = _columns(doc)
    found, errors = [], []
    for name in dict.fromkeys(column_names):
        col = name.lower()
        if col not in columns:
            errors.append(
                {
                    "ColumnName": name,
                    "Error": _error(
                        "InvalidInputException", f"Column {name} is not a column of {database}.{table}"
                    ),
                }
            )
            continue
        stats = snap.get(COLUMN_STATISTICS, (database, table, col))
        if stats is None:
            errors.append(
                {
                    "ColumnName": name,
                    "Error": _error(
                        "EntityNotFoundException", f"No statistics for column {name} of {database}.{table}"
                    ),
                }
            )
        else:
            found.append(copy_doc(stats))
    return {"ColumnStatisticsList": found, "Errors": errors}


def update_column_statistics(
    ctx: Context, database: str, table: str, stats_list: list[dict[str, Any]]
) -> dict[str, Any]:
    def build(snap: Snapshot) -> tuple[Changes, dict[str, Any]]:
        doc = require_table(snap, database, table)
        columns = _columns(doc)
        changes = Changes()
        errors = []
        for stats in stats_list:
            col = stats["ColumnName"].lower()
            problem = None
            if col not in columns:
                problem = f"Column {stats['ColumnName']} is not a column of {database}.{table}"
            else:
                kind = stats["StatisticsData"]["Type"]
                base = _base_type(columns[col])
                if base not in _FITTING[kind]:
                    problem = f"StatisticsData.Type {kind} does not fit column {col} of type {columns[col]}"
            if problem is not None:
                errors.append(
                    {"ColumnStatistics": copy_doc(stats), "Error": _error("InvalidInputException", problem)}
                )
                continue
            changes.put(COLUMN_STATISTICS, (database, table, col), {**stats, "ColumnName": col})
        return changes, {"Errors": errors}

    return ctx.store.commit("UpdateColumnStatisticsForTable", build)


def delete_column_statistics(ctx: Context, database: str, table: str, column: str) -> None:
    col = column.lower()

    def build(snap: Snapshot) -> tuple[Changes, None]:
        require_table(snap, database, table)
        if snap.get(COLUMN_STATISTICS, (database, table, col)) is None:
            raise EntityNotFoundException(f"No statistics for column {column} of {database}.{table}")
        changes = Changes()
        changes.delete(COLUMN_STATISTICS, (database, table, col))
        return changes, None

    ctx.store.commit("DeleteColumnStatisticsForTable", build)
