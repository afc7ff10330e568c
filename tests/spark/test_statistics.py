"""The statistics handed to Spark's planner, read from a table's parameters (no Spark session needed)."""

from __future__ import annotations

from typing import Any

from gluecat import Catalog
from gluecat.spark import statistics


def table_with(catalog: Catalog, parameters: dict[str, str], id_type: str = "bigint") -> dict:
    catalog.create_database(DatabaseInput={"Name": "db"})
    catalog.create_table(
        DatabaseName="db",
        TableInput={
            "Name": "t",
            "Parameters": parameters,
            "StorageDescriptor": {"Columns": [{"Name": "id", "Type": id_type}], "Location": "/tmp/t"},
        },
    )
    return catalog.get_table(DatabaseName="db", Name="t")["Table"]


def test_size_and_row_count_are_read_from_the_tables_parameters(tmp_path) -> None:
    catalog = Catalog(str(tmp_path))
    table = table_with(catalog, {"totalSize": "2048", "numRows": "10"})
    assert statistics.for_spark(catalog, table) == {"columns": {}, "size": 2048, "rows": 10}


def test_a_size_or_row_count_that_is_not_a_plain_decimal_number_is_ignored(tmp_path) -> None:
    """Parameters are anyone's text: '²' is a digit to str.isdigit() but no number to int(), and '١٠'
    (Arabic-Indic digits) would be read as 10. Neither may stop Spark loading the table, or invent a count."""
    catalog = Catalog(str(tmp_path))
    table = table_with(catalog, {"totalSize": "²", "numRows": "١٠"})
    assert statistics.for_spark(catalog, table) == {"columns": {}}


def test_decimal_bounds_of_more_than_28_digits_reach_spark_exactly(tmp_path) -> None:
    """Python's Decimal arithmetic rounds to 28 digits: a decimal(38, 0) column's bound of 38 nines came back
    to Spark as 1E+38, a value outside the column's type, and a decimal(38, 30) one lost its last digit."""
    catalog = Catalog(str(tmp_path))
    catalog.create_database(DatabaseInput={"Name": "db"})
    columns = [{"Name": "big", "Type": "decimal(38,0)"}, {"Name": "fine", "Type": "decimal(38,30)"}]
    catalog.create_table(
        DatabaseName="db",
        TableInput={"Name": "t", "StorageDescriptor": {"Columns": columns, "Location": "/tmp/t"}},
    )
    table = catalog.get_table(DatabaseName="db", Name="t")["Table"]
    nines = "9" * 38
    computed = {
        "big": {"min": f"-{nines}", "max": nines, "null_count": 0, "distinct_count": 2},
        "fine": {"min": "-1.000000000000000000000000000001", "max": "0.000000000000000000000000000000"},
    }
    assert statistics.store(catalog, table, computed) == (["big", "fine"], [])
    read = statistics.for_spark(catalog, table)
    assert read is not None
    assert (read["columns"]["big"]["min"], read["columns"]["big"]["max"]) == (f"-{nines}", nines)
    assert read["columns"]["fine"]["min"] == "-1.000000000000000000000000000001"
    assert read["columns"]["fine"]["max"] == "0.000000000000000000000000000000"


def test_a_double_column_holding_nan_or_infinity_keeps_its_counts_without_bounds(tmp_path) -> None:
    """Spark's min and max of a double column holding NaN or an infinity are NaN or that infinity, which
    Glue's bounds cannot hold: ANALYZE ... FOR ALL COLUMNS used to fail with InvalidInputException for
    the whole table (after storing the row count). Now the column keeps its counts, and no bounds."""
    catalog = Catalog(str(tmp_path))
    table = table_with(catalog, {}, id_type="double")
    computed = {"id": {"min": "-Infinity", "max": "NaN", "null_count": 1, "distinct_count": 3}}
    assert statistics.store(catalog, table, computed) == (["id"], [])
    assert statistics.for_spark(catalog, table) == {"columns": {"id": {"null_count": 1, "distinct_count": 3}}}


def test_hive_zeros_are_no_statistics_but_sparks_own_are(tmp_path) -> None:
    """Hive writes totalSize, numRows and rawDataSize as 0 for tables whose statistics it did not gather (made
    by Hive's CREATE TABLE, written with autogather off); Spark's Hive catalog reads them as no statistics.
    Read as 0 bytes and 0 rows, a table full of data planned as empty (a broadcast of all of it). Spark's
    own keys, which only ANALYZE writes, are read as they are."""
    catalog = Catalog(str(tmp_path))
    table = table_with(catalog, {"numFiles": "0", "numRows": "0", "rawDataSize": "0", "totalSize": "0"})
    assert statistics.for_spark(catalog, table) == {"columns": {}}
    catalog.update_table(
        DatabaseName="db",
        TableInput={"Name": "t", "Parameters": {"totalSize": "0", "rawDataSize": "512", "numRows": "0"}},
    )
    table = catalog.get_table(DatabaseName="db", Name="t")["Table"]
    assert statistics.for_spark(catalog, table) == {"columns": {}, "size": 512}
    catalog.update_table(
        DatabaseName="db",
        TableInput={
            "Name": "t",
            "Parameters": {
                "totalSize": "4096",
                "numRows": "99",
                "spark.sql.statistics.totalSize": "0",
                "spark.sql.statistics.numRows": "0",
            },
        },
    )
    table = catalog.get_table(DatabaseName="db", Name="t")["Table"]
    assert statistics.for_spark(catalog, table) == {"columns": {}, "size": 0, "rows": 0}


def test_a_decimal_bound_no_spark_decimal_holds_is_left_out() -> None:
    """Stored before UpdateColumnStatistics refused them, such bounds were written out in full at every load of
    the table: a Scale of 2**31 - 1 as a string of two billion digits, thousands of digits as a ValueError that
    stopped Spark loading the table at all."""
    data = {
        "MinimumValue": {"UnscaledValue": b"\x01", "Scale": 39},
        "MaximumValue": {"UnscaledValue": b"\x01" * 2000, "Scale": 0},
        "NumberOfNulls": 0,
        "NumberOfDistinctValues": 2,
    }
    glue = {"ColumnName": "m", "StatisticsData": {"Type": "DECIMAL", "DecimalColumnStatisticsData": data}}
    assert statistics.spark_statistics(glue) == {"null_count": 0, "distinct_count": 2}


def test_analyze_counts_as_a_change_only_against_counts_it_had() -> None:
    """ANALYZE without columns drops column statistics when the size or row count changed; a table with no
    size yet (its column statistics stored by a Glue statistics task, say) has no evidence of a change."""
    after = statistics.table_parameters({}, 100, 1, 5)
    assert not statistics.changed({}, after)
    assert not statistics.changed(after, after)
    assert statistics.changed({"totalSize": "90"}, after)
    assert statistics.changed({"totalSize": "100", "numRows": "4"}, after)
    assert not statistics.changed(
        {"totalSize": "100", "numRows": "4"}, statistics.table_parameters({}, 100, 1, None)
    )


COLUMNS = (
    "b BOOLEAN, ti TINYINT, si SMALLINT, i INT, l BIGINT, f FLOAT, d DOUBLE, d1 DECIMAL(5,2), d2 DECIMAL(20,3), "
    "d3 DECIMAL(38,0), dt DATE, ts TIMESTAMP, s STRING, bi BINARY"
)
ROWS = """(true, 1Y, -2S, -3, -9223372036854775808L, float('NaN'), double('-Infinity'), -123.45,
  -12345678901234567.891, -99999999999999999999999999999999999999, DATE'0001-01-01', TIMESTAMP'1969-12-31 23:59:59',
  'héllo wörld ✓', X'00FF'),
 (false, -128Y, 32767S, 2147483647, 9223372036854775807L, 1.5, 2.5D, 0.01, 12345678901234567.891,
  99999999999999999999999999999999999999, DATE'1969-12-31', TIMESTAMP'2024-02-29 12:00:00', '', X''),
 (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)"""


def planned_column_statistics(spark: Any, table: str) -> dict[str, tuple[str, ...]]:
    """The optimizer's statistics of each column (distinct count, min, max, null count), as text."""
    spark.conf.set("spark.sql.cbo.enabled", "true")
    try:
        stats = spark.table(table)._jdf.queryExecution().optimizedPlan().stats().attributeStats()
    finally:
        spark.conf.unset("spark.sql.cbo.enabled")
    out = {}
    for pair in stats.toList().mkString("\n", "\n", "").strip().splitlines():
        name, stat = pair.strip("()").split("#", 1)[0], pair.split("ColumnStat(", 1)[1]
        out[name] = tuple(stat.split(",")[:4])
    return out


def test_analyze_gives_the_planner_the_column_statistics_sparks_own_catalog_gives(
    spark: Any, ns: str
) -> None:
    """Every type ANALYZE keeps in Glue, against Spark's Hive catalog: the same distinct and null counts, and the
    same min and max (38-digit decimals, dates before 1970 and year 1, integer limits), except what Glue cannot
    hold: timestamps, a binary column's distinct count, and a double's NaN or infinite bounds."""
    hive = f"spark_catalog.{ns}_hive"
    spark.sql(f"CREATE DATABASE {hive}")
    try:
        for table in (f"glue.{ns}.t", f"{hive}.t"):
            spark.sql(f"CREATE TABLE {table} ({COLUMNS}) USING parquet")
            spark.sql(f"INSERT INTO {table} VALUES {ROWS}")
            spark.sql(f"ANALYZE TABLE {table} COMPUTE STATISTICS FOR ALL COLUMNS")
        glue, expected = (
            planned_column_statistics(spark, f"glue.{ns}.t"),
            planned_column_statistics(spark, f"{hive}.t"),
        )
    finally:
        spark.sql(f"DROP DATABASE {hive} CASCADE")
    del expected["ts"]
    expected["bi"] = ("None", *expected["bi"][1:])
    expected["f"] = (*expected["f"][:2], "None", expected["f"][3])  # min 1.5, max NaN
    expected["d"] = (expected["d"][0], "None", *expected["d"][2:])  # min -Infinity, max 2.5
    assert glue == expected
