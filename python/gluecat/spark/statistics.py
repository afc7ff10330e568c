"""ANALYZE TABLE's statistics kept in Glue, both ways: table statistics as table parameters (Hive's numRows,
totalSize, numFiles and Spark's spark.sql.statistics.*), column statistics through Glue's column statistics
(UpdateColumnStatisticsForTable), and back as the statistics Spark's planner and DESCRIBE read.

Spark's column statistics carry min and max in Spark's external form (``2024-01-01`` for a date, ``1.50`` for a
decimal); Glue's are typed per kind (LONG, DOUBLE, DECIMAL, DATE, STRING, BOOLEAN, BINARY). Glue has no kind for
timestamps, so timestamp columns keep no column statistics. Partition columns are not Glue columns and keep none.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from gluecat.api.shapes import decimal_holds
from gluecat.catalog.context import base_type

if TYPE_CHECKING:
    from gluecat.spark.remote import GlueClient

ROWS, SIZE, FILES, RAW_SIZE = "numRows", "totalSize", "numFiles", "rawDataSize"
SPARK_ROWS, SPARK_SIZE = "spark.sql.statistics.numRows", "spark.sql.statistics.totalSize"
_LONG = {"tinyint", "smallint", "int", "integer", "bigint", "long"}
_DOUBLE = {"float", "double"}
_STRING = {"string", "char", "varchar"}
_BATCH = 25  # UpdateColumnStatisticsForTable's limit
# The table parameters that describe the table's data as it was when counted (Hive's and Spark's).
_TABLE_STATISTICS = (ROWS, SIZE, FILES, RAW_SIZE)
_SPARK_STATISTICS = "spark.sql.statistics."


def table_parameters(params: dict[str, str], size: int, files: int, rows: int | None) -> dict[str, str]:
    """The table's parameters with new statistics; without a row count (NOSCAN) a stale one goes if the size
    changed, as Spark's ANALYZE ... NOSCAN drops it."""
    out = dict(params)
    if rows is None and out.get(SIZE) != str(size):
        for key in (ROWS, SPARK_ROWS):
            out.pop(key, None)
    out.update({SIZE: str(size), SPARK_SIZE: str(size), FILES: str(files)})
    if rows is not None:
        out.update({ROWS: str(rows), SPARK_ROWS: str(rows)})
    return out


def changed(before: dict[str, str], after: dict[str, str]) -> bool:
    """Whether ANALYZE found another size or row count than the table's parameters held (Spark's
    CommandUtils.compareAndGetNewStats; a row count only where it counted rows). Without any before,
    nothing says the data changed: column statistics stored by others (a Glue statistics task keeps
    no table size) are no evidence of other data."""
    old_size = before.get(SPARK_SIZE) or before.get(SIZE)
    old_rows = before.get(SPARK_ROWS) or before.get(ROWS)
    size = old_size is not None and old_size != after.get(SPARK_SIZE)
    rows = old_rows is not None and after.get(SPARK_ROWS) is not None and old_rows != after[SPARK_ROWS]
    return size or rows


def without_statistics(params: dict[str, str]) -> dict[str, str] | None:
    """The table parameters without its statistics (size, row and file counts), or None if it has none."""
    kept = {
        k: v for k, v in params.items() if k not in _TABLE_STATISTICS and not k.startswith(_SPARK_STATISTICS)
    }
    return kept if len(kept) != len(params) else None


def has_column_statistics(catalog: GlueClient, table: dict[str, Any]) -> bool:
    """Whether any column of the table has Glue column statistics."""
    names = [c["Name"] for c in (table.get("StorageDescriptor") or {}).get("Columns", [])]
    return any(
        catalog.get_column_statistics_for_table(
            DatabaseName=table["DatabaseName"], TableName=table["Name"], ColumnNames=batch
        )["ColumnStatisticsList"]
        for batch in _batches(names, 100)
    )


def glue_statistics(
    column: str, hive_type: str, spark: dict[str, Any], analyzed: datetime
) -> dict[str, Any] | None:
    """Glue's ColumnStatistics for one column from Spark's (ANALYZE's), or None where Glue has no kind for it."""
    base = base_type(hive_type)
    nulls = int(spark.get("null_count", 0))
    distinct = int(spark.get("distinct_count", 0))
    data: dict[str, Any]
    if base in _LONG:
        kind, member = "LONG", "LongColumnStatisticsData"
        data = _ranged(spark, int, nulls, distinct)
    elif base in _DOUBLE:
        kind, member = "DOUBLE", "DoubleColumnStatisticsData"
        data = _ranged(spark, float, nulls, distinct)
    elif base == "decimal":
        kind, member = "DECIMAL", "DecimalColumnStatisticsData"
        data = _ranged(spark, _decimal_number, nulls, distinct)
    elif base == "date":
        kind, member = "DATE", "DateColumnStatisticsData"
        data = _ranged(spark, _midnight, nulls, distinct)
    elif base in _STRING:
        kind, member = "STRING", "StringColumnStatisticsData"
        data = {
            "MaximumLength": int(spark.get("max_len", 0)),
            "AverageLength": float(spark.get("avg_len", 0)),
            "NumberOfNulls": nulls,
            "NumberOfDistinctValues": distinct,
        }
    elif base == "boolean":
        kind, member = "BOOLEAN", "BooleanColumnStatisticsData"
        data = {
            "NumberOfTrues": int(spark.get("true_count", 0)),
            "NumberOfFalses": int(spark.get("false_count", 0)),
            "NumberOfNulls": nulls,
        }
    elif base == "binary":
        kind, member = "BINARY", "BinaryColumnStatisticsData"
        data = {
            "MaximumLength": int(spark.get("max_len", 0)),
            "AverageLength": float(spark.get("avg_len", 0)),
            "NumberOfNulls": nulls,
        }
    else:
        return None
    return {
        "ColumnName": column,
        "ColumnType": hive_type,
        "AnalyzedTime": analyzed,
        "StatisticsData": {"Type": kind, member: data},
    }


def _ranged(spark: dict[str, Any], parse: Any, nulls: int, distinct: int) -> dict[str, Any]:
    out: dict[str, Any] = {"NumberOfNulls": nulls, "NumberOfDistinctValues": distinct}
    for glue, key in (("MinimumValue", "min"), ("MaximumValue", "max")):
        if spark.get(key) is not None:
            value = parse(spark[key])
            # Spark's min and max of a double column are NaN or an infinity when the column holds one;
            # Glue's bounds are finite numbers, so the column keeps its counts without bounds.
            if not (isinstance(value, float) and not math.isfinite(value)):
                out[glue] = value
    return out


def _decimal_number(text: str) -> dict[str, Any]:
    d = Decimal(text)
    sign, digits, exponent = d.as_tuple()
    scale = -int(exponent)
    unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
    return {
        "UnscaledValue": unscaled.to_bytes(max(1, (unscaled.bit_length() + 8) // 8), "big", signed=True),
        "Scale": scale,
    }


def _midnight(text: str) -> datetime:
    day = date.fromisoformat(text)
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def spark_statistics(glue: dict[str, Any]) -> dict[str, Any]:
    """Spark's view of one column's Glue statistics: counts, lengths, and min/max in Spark's external form."""
    data = glue["StatisticsData"]
    kind = data["Type"]
    values = next(v for k, v in data.items() if k != "Type")
    out: dict[str, Any] = {"null_count": values.get("NumberOfNulls")}
    if "NumberOfDistinctValues" in values:
        out["distinct_count"] = values["NumberOfDistinctValues"]
    if kind in ("STRING", "BINARY"):
        out["max_len"] = values["MaximumLength"]
        out["avg_len"] = round(values["AverageLength"])
    if kind == "BOOLEAN":
        trues, falses = values["NumberOfTrues"], values["NumberOfFalses"]
        out["distinct_count"] = (trues > 0) + (falses > 0)
        if trues or falses:
            out["min"], out["max"] = ("false" if falses else "true"), ("true" if trues else "false")
    for glue_key, key in (("MinimumValue", "min"), ("MaximumValue", "max")):
        if values.get(glue_key) is not None:
            out[key] = _external(kind, values[glue_key])
    return {k: v for k, v in out.items() if v is not None}


def _external(kind: str, value: Any) -> str | None:
    if kind == "DECIMAL":
        # Built from its digits, not by arithmetic: Decimal's arithmetic rounds to 28 digits, and a
        # decimal(38, 0) bound of 38 nines would turn into 1E+38, a value the column cannot hold.
        unscaled, scale = int.from_bytes(value["UnscaledValue"], "big", signed=True), int(value["Scale"])
        if not decimal_holds(unscaled, scale):
            return None  # no Spark decimal holds it (stored before UpdateColumnStatistics refused such)
        return format(Decimal(f"{unscaled}E{-scale}"), "f")
    if kind == "DATE":
        return value.date().isoformat() if isinstance(value, datetime) else str(value)
    return str(value)


def store(
    catalog: GlueClient, table: dict[str, Any], column_stats: dict[str, dict[str, Any]]
) -> tuple[list[str], list[str]]:
    """Stores Spark's column statistics as Glue's; answers the columns stored and the reasons others were not."""
    columns = {c["Name"].lower(): c for c in (table.get("StorageDescriptor") or {}).get("Columns", [])}
    keys = {k["Name"].lower() for k in table.get("PartitionKeys") or []}
    now = datetime.now(UTC)
    stats, stored, skipped = [], [], []
    for name, spark in column_stats.items():
        if name.lower() in keys:
            skipped.append(f"{name}: a partition column (Glue keeps statistics for columns only)")
            continue
        column = columns.get(name.lower())
        glue = glue_statistics(column["Name"], column.get("Type", ""), spark, now) if column else None
        if column is None or glue is None:
            skipped.append(f"{name}: Glue keeps no statistics for type {spark.get('type')}")
            continue
        stats.append(glue)
        stored.append(column["Name"])
    for batch in _batches(stats, _BATCH):
        got = catalog.update_column_statistics_for_table(
            DatabaseName=table["DatabaseName"], TableName=table["Name"], ColumnStatisticsList=batch
        )
        for error in got.get("Errors", []):
            name = error["ColumnStatistics"]["ColumnName"]
            stored.remove(next(s for s in stored if s.lower() == name.lower()))
            skipped.append(f"{name}: {error['Error']['ErrorMessage']}")
    return stored, skipped


def _batches(items: list[Any], size: int) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def for_spark(catalog: GlueClient, table: dict[str, Any]) -> dict[str, Any] | None:
    """The statistics Spark's planner and DESCRIBE read, when ANALYZE (or anyone) stored some: size in bytes,
    row count, and column statistics by column name."""
    params = table.get("Parameters") or {}
    size, rows = _table_statistics(params)
    names = [c["Name"] for c in (table.get("StorageDescriptor") or {}).get("Columns", [])]
    columns: dict[str, Any] = {}
    for batch in _batches(names, 100):
        got = catalog.get_column_statistics_for_table(
            DatabaseName=table["DatabaseName"], TableName=table["Name"], ColumnNames=batch
        )
        for s in got["ColumnStatisticsList"]:
            name = next(n for n in batch if n.lower() == s["ColumnName"].lower())
            columns[name] = spark_statistics(s)
    if not any(k in params for k in (SPARK_SIZE, SIZE, RAW_SIZE)) and not columns:
        return None
    out: dict[str, Any] = {"columns": columns}
    if size is not None:
        out["size"] = size
    if rows is not None:
        out["rows"] = rows
    return out


def _number(text: str | None) -> int | None:
    # Parameters are anyone's text: '²' is a digit to str.isdigit(), but no number.
    return int(text) if text is not None and text.isascii() and text.isdigit() else None


def _table_statistics(params: dict[str, str]) -> tuple[int | None, int | None]:
    """The size and row count, as Spark's Hive catalog reads them (HiveExternalCatalog, HiveClientImpl):
    Spark's own spark.sql.statistics.* as written, 0 included; else Hive's totalSize (or rawDataSize)
    only above 0, and numRows only above 0 beside such a size. Hive leaves 0 there for tables whose
    statistics it did not gather (a new table, an external one, an INSERT with autogather off): read as
    they are, a table full of data would plan as empty, and be broadcast."""
    if SPARK_SIZE in params:
        return _number(params[SPARK_SIZE]), _number(params.get(SPARK_ROWS))
    size = _number(params.get(SIZE)) or _number(params.get(RAW_SIZE))
    rows = _number(params.get(ROWS)) if size else None
    return size or None, rows or None
