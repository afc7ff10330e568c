"""What Spark refuses for v2 tables works on gluecat tables through the session extension (GlueExtensions):
MSCK REPAIR TABLE / RECOVER PARTITIONS, ANALYZE TABLE, partial DROP PARTITION specs, PARTITION ... SET
LOCATION; and partition RENAME, and errors that print partition values as they were written."""

from __future__ import annotations

import datetime
import shutil
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import pytest
from pyspark.errors import AnalysisException

from gluecat import Catalog


def rows(spark: Any, sql: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in spark.sql(sql).collect())


def partitions(spark: Any, table: str) -> list[str]:
    return [r.partition for r in spark.sql(f"SHOW PARTITIONS {table}").collect()]


def test_msck_repair_registers_folders_written_outside_the_catalog(
    spark: Any, ns: str, tmp_path: Path
) -> None:
    t = f"glue.{ns}.e"
    spark.sql(
        f"CREATE TABLE {t} (v INT, dt DATE, q INT) USING parquet PARTITIONED BY (dt, q) LOCATION '{tmp_path}/e'"
    )
    for dt, q, v in [("2025-01-01", 1, 1), ("2025-01-01", 2, 2), ("2025-01-02", 1, 3)]:
        spark.createDataFrame([(v,)], "v INT").write.parquet(f"{tmp_path}/e/dt={dt}/q={q}")
    spark.createDataFrame([(9,)], "v INT").write.parquet(f"{tmp_path}/e/dt=not-a-date/q=1")
    assert rows(spark, f"SELECT * FROM {t}") == []
    spark.sql(f"MSCK REPAIR TABLE {t}")
    assert partitions(spark, t) == ["dt=2025-01-01/q=1", "dt=2025-01-01/q=2", "dt=2025-01-02/q=1"]
    day = datetime.date(2025, 1, 1)
    assert rows(spark, f"SELECT * FROM {t} WHERE dt = DATE'2025-01-01'") == [(1, day, 1), (2, day, 2)]

    spark.createDataFrame([(4,)], "v INT").write.parquet(f"{tmp_path}/e/dt=2025-01-03/q=1")
    spark.sql(f"ALTER TABLE {t} RECOVER PARTITIONS")
    assert "dt=2025-01-03/q=1" in partitions(spark, t)

    shutil.rmtree(f"{tmp_path}/e/dt=2025-01-02")
    spark.sql(f"MSCK REPAIR TABLE {t} SYNC PARTITIONS")
    assert "dt=2025-01-02/q=1" not in partitions(spark, t)

    spark.createDataFrame([(5,)], "v INT").write.parquet(f"{tmp_path}/e/dt=2025-01-04/q=7")
    report = rows(spark, f"CALL glue.system.repair_table(table => '{ns}.e')")
    assert ("added", "dt=2025-01-04/q=7") in report
    skipped = [r[1] for r in report if r[0] == "skipped"]
    assert len(skipped) == 1 and "dt=not-a-date/q=1 (a value does not fit its type)" in skipped[0]


def test_partial_partition_specs_drop_every_partition_they_match(
    spark: Any, warehouse: Path, ns: str
) -> None:
    t = f"glue.{ns}.t"
    spark.sql(f"CREATE TABLE {t} (v INT, p STRING, q INT) USING parquet PARTITIONED BY (p, q)")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'a', 1), (2, 'a', 2), (3, 'b', 1)")
    spark.sql(f"ALTER TABLE {t} DROP PARTITION (p='a')")
    assert partitions(spark, t) == ["p=b/q=1"]
    assert not (warehouse / f"{ns}.db" / "t" / "p=a").exists()  # a managed table's partitions' folders go
    with pytest.raises(AnalysisException, match=r"PARTITIONS_NOT_FOUND.*PARTITION \(`p` = z\)"):
        spark.sql(f"ALTER TABLE {t} DROP PARTITION (p='z')")
    spark.sql(f"ALTER TABLE {t} DROP IF EXISTS PARTITION (p='z')")
    spark.sql(f"ALTER TABLE {t} DROP PARTITION (Q=1)")  # column names match without regard to case
    assert partitions(spark, t) == []


def test_a_partial_spec_drops_partitions_whose_other_keys_are_null(spark: Any, ns: str) -> None:
    """A matched partition's null date or int went back to Spark as Hive's marker text, which Spark
    then failed to cast (CAST_INVALID_INPUT), so nothing was dropped."""
    t = f"glue.{ns}.t"
    spark.sql(f"CREATE TABLE {t} (v INT, d DATE, n INT, q INT) USING parquet PARTITIONED BY (d, n, q)")
    spark.sql(f"INSERT INTO {t} VALUES (1, NULL, NULL, 1), (2, DATE'2025-01-01', 5, 1), (3, NULL, 7, 2)")
    spark.sql(f"ALTER TABLE {t} DROP PARTITION (q=1)")
    assert partitions(spark, t) == ["d=null/n=7/q=2"]
    spark.sql(f"ALTER TABLE {t} DROP PARTITION (n=7)")
    assert partitions(spark, t) == []


def test_partition_errors_print_values_as_written(spark: Any, ns: str) -> None:
    t = f"glue.{ns}.d"
    spark.sql(f"CREATE TABLE {t} (v INT, dt DATE) USING parquet PARTITIONED BY (dt)")
    spark.sql(f"ALTER TABLE {t} ADD PARTITION (dt='2025-01-01')")
    with pytest.raises(AnalysisException, match="PARTITIONS_ALREADY_EXIST") as exists:
        spark.sql(f"ALTER TABLE {t} ADD PARTITION (dt='2025-01-01')")
    assert "PARTITION (`dt` = 2025-01-01)" in str(exists.value)
    assert f"`glue`.`{ns}`.`d`" in str(exists.value)
    with pytest.raises(AnalysisException, match="PARTITIONS_NOT_FOUND") as missing:
        spark.sql(f"ALTER TABLE {t} DROP PARTITION (dt='2025-01-09')")
    assert "PARTITION (`dt` = 2025-01-09)" in str(missing.value)
    spark.sql(f"ALTER TABLE {t} ADD IF NOT EXISTS PARTITION (dt='2025-01-01') PARTITION (dt='2025-01-02')")
    assert partitions(spark, t) == ["dt=2025-01-01", "dt=2025-01-02"]


def test_rename_partition_moves_a_managed_partitions_folder(spark: Any, warehouse: Path, ns: str) -> None:
    t = f"glue.{ns}.r"
    spark.sql(f"CREATE TABLE {t} (v INT, dt DATE) USING parquet PARTITIONED BY (dt)")
    spark.sql(f"INSERT INTO {t} VALUES (1, DATE'2025-01-01'), (2, DATE'2025-01-02')")
    spark.sql(f"ALTER TABLE {t} PARTITION (dt='2025-01-01') RENAME TO PARTITION (dt='2025-02-01')")
    assert partitions(spark, t) == ["dt=2025-01-02", "dt=2025-02-01"]
    folder = warehouse / f"{ns}.db" / "r"
    assert not (folder / "dt=2025-01-01").exists() and any((folder / "dt=2025-02-01").glob("part-*"))
    assert rows(spark, f"SELECT v, dt FROM {t} WHERE dt = DATE'2025-02-01'") == [
        (1, datetime.date(2025, 2, 1))
    ]
    with pytest.raises(AnalysisException, match=r"PARTITIONS_ALREADY_EXIST.*`dt` = 2025-01-02"):
        spark.sql(f"ALTER TABLE {t} PARTITION (dt='2025-02-01') RENAME TO PARTITION (dt='2025-01-02')")
    with pytest.raises(AnalysisException, match=r"PARTITIONS_NOT_FOUND.*`dt` = 2025-03-03"):
        spark.sql(f"ALTER TABLE {t} PARTITION (dt='2025-03-03') RENAME TO PARTITION (dt='2025-03-04')")


def test_set_location_of_a_partition(spark: Any, warehouse: Path, ns: str, tmp_path: Path) -> None:
    t = f"glue.{ns}.l"
    spark.sql(f"CREATE TABLE {t} (v INT, p STRING) USING parquet PARTITIONED BY (p)")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'a')")
    spark.createDataFrame([(7,)], "v INT").write.parquet(f"{tmp_path}/moved")
    spark.sql(f"ALTER TABLE {t} PARTITION (p='a') SET LOCATION '{tmp_path}/moved'")
    assert rows(spark, f"SELECT * FROM {t}") == [(7, "a")]
    got = Catalog(str(warehouse)).get_partition(DatabaseName=ns, TableName="l", PartitionValues=["a"])
    assert got["Partition"]["StorageDescriptor"]["Location"] == f"{tmp_path}/moved"
    spark.sql(
        f"CALL glue.system.set_partition_location(table => '{ns}.l', partition => 'p=a', location => '{tmp_path}/x')"
    )
    assert rows(spark, f"SELECT * FROM {t}") == []


def test_analyze_stores_statistics_in_glue_and_spark_plans_with_them(
    spark: Any, warehouse: Path, ns: str
) -> None:
    t = f"glue.{ns}.s"
    spark.sql(
        f"CREATE TABLE {t} (a INT, b STRING, d DATE, flag BOOLEAN, amt DECIMAL(10,2), p STRING) "
        "USING parquet PARTITIONED BY (p)"
    )
    spark.sql(
        f"INSERT INTO {t} VALUES (1, 'x', DATE'2025-01-01', true, 1.50, 'k'), "
        "(2, NULL, DATE'2025-02-01', false, 2.25, 'k'), (3, 'zz', NULL, NULL, NULL, 'm')"
    )
    spark.sql(f"ANALYZE TABLE {t} COMPUTE STATISTICS NOSCAN")
    params = Catalog(str(warehouse)).get_table(DatabaseName=ns, Name="s")["Table"]["Parameters"]
    size = int(params["totalSize"])
    assert size > 0 and params["numFiles"] == "3" and "numRows" not in params
    spark.sql(f"ANALYZE TABLE {t} COMPUTE STATISTICS FOR ALL COLUMNS")
    params = Catalog(str(warehouse)).get_table(DatabaseName=ns, Name="s")["Table"]["Parameters"]
    assert (params["numRows"], params["spark.sql.statistics.numRows"]) == ("3", "3")
    assert params["spark.sql.statistics.totalSize"] == str(size)

    got = Catalog(str(warehouse)).get_column_statistics_for_table(
        DatabaseName=ns, TableName="s", ColumnNames=["a", "b", "d", "flag", "amt"]
    )
    stats = {s["ColumnName"]: s["StatisticsData"] for s in got["ColumnStatisticsList"]}
    assert stats["a"]["LongColumnStatisticsData"] == {
        "MinimumValue": 1,
        "MaximumValue": 3,
        "NumberOfNulls": 0,
        "NumberOfDistinctValues": 3,
    }
    assert stats["b"]["StringColumnStatisticsData"]["MaximumLength"] == 2
    assert stats["d"]["DateColumnStatisticsData"]["NumberOfNulls"] == 1
    assert stats["flag"]["BooleanColumnStatisticsData"] == {
        "NumberOfTrues": 1,
        "NumberOfFalses": 1,
        "NumberOfNulls": 1,
    }
    assert stats["amt"]["Type"] == "DECIMAL"

    described = {r.col_name: r.data_type for r in spark.sql(f"DESCRIBE TABLE EXTENDED {t}").collect()}
    assert described["Statistics"] == f"{size} bytes, 3 rows"
    column = {r.info_name: r.info_value for r in spark.sql(f"DESCRIBE TABLE EXTENDED {t} a").collect()}
    assert (column["num_nulls"], column["distinct_count"]) == ("0", "3")
    spark.conf.set("spark.sql.cbo.enabled", "true")
    try:
        planned = spark.table(t)._jdf.queryExecution().optimizedPlan().stats()
    finally:
        spark.conf.unset("spark.sql.cbo.enabled")
    assert str(planned.sizeInBytes()) == str(size)
    assert str(planned.rowCount().get()) == "3"


def _statistics(warehouse: Path, ns: str, name: str) -> tuple[dict[str, str], list[str]]:
    """A table's statistics parameters, and the columns that have Glue column statistics."""
    glue = Catalog(str(warehouse))
    table = glue.get_table(DatabaseName=ns, Name=name)["Table"]
    names = [c["Name"] for c in table["StorageDescriptor"]["Columns"]]
    got = glue.get_column_statistics_for_table(DatabaseName=ns, TableName=name, ColumnNames=names)
    params = {k: v for k, v in table["Parameters"].items() if k in ("numRows", "totalSize", "numFiles")}
    return params, [s["ColumnName"] for s in got["ColumnStatisticsList"]]


@pytest.mark.parametrize(
    "write",
    [
        "INSERT INTO {t} VALUES (5, 'k')",
        "INSERT OVERWRITE {t} VALUES (5, 'k')",
        "TRUNCATE TABLE {t}",
        "ALTER TABLE {t} DROP PARTITION (p = 'k')",
        "ALTER TABLE {t} ADD PARTITION (p = 'new')",
        "ALTER TABLE {t} SET LOCATION '{elsewhere}'",
    ],
)
def test_a_write_drops_the_statistics_that_describe_the_data_before_it(
    spark: Any, warehouse: Path, ns: str, tmp_path: Path, write: str
) -> None:
    # As Spark's own catalog drops them (size.autoUpdate off): they were kept, so a table analyzed empty
    # still planned as 0 bytes and 0 rows after an INSERT (a broadcast of whatever it holds), and min and
    # max stayed those of rows an overwrite or TRUNCATE had removed.
    t = f"glue.{ns}.w"
    spark.sql(f"CREATE TABLE {t} (a INT, p STRING) USING parquet PARTITIONED BY (p)")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'k'), (2, 'k')")
    spark.sql(f"ANALYZE TABLE {t} COMPUTE STATISTICS FOR ALL COLUMNS")
    params, columns = _statistics(warehouse, ns, "w")
    assert params["numRows"] == "2" and columns == ["a"]
    spark.sql(write.format(t=t, elsewhere=tmp_path))
    assert _statistics(warehouse, ns, "w") == ({}, [])
    described = {r.col_name: r.data_type for r in spark.sql(f"DESCRIBE TABLE EXTENDED {t}").collect()}
    assert "rows" not in described.get("Statistics", "")


def test_with_size_auto_update_a_write_records_the_new_size_as_sparks_catalog_does(
    spark: Any, warehouse: Path, ns: str
) -> None:
    t = f"glue.{ns}.u"
    spark.sql(f"CREATE TABLE {t} (a INT) USING parquet")
    spark.sql(f"ANALYZE TABLE {t} COMPUTE STATISTICS FOR ALL COLUMNS")
    spark.conf.set("spark.sql.statistics.size.autoUpdate.enabled", "true")
    try:
        spark.sql(f"INSERT INTO {t} VALUES (1), (2)")
    finally:
        spark.conf.unset("spark.sql.statistics.size.autoUpdate.enabled")
    params, columns = _statistics(warehouse, ns, "u")
    location = Path(
        Catalog(str(warehouse))
        .get_table(DatabaseName=ns, Name="u")["Table"]["StorageDescriptor"]["Location"]
        .removeprefix("file:")
    )
    size = sum(f.stat().st_size for f in location.rglob("*.parquet"))
    assert (params, columns) == ({"totalSize": str(size), "numFiles": ANY}, [])
    described = {r.col_name: r.data_type for r in spark.sql(f"DESCRIBE TABLE EXTENDED {t}").collect()}
    assert described["Statistics"] == f"{size} bytes"


def test_analyze_without_columns_drops_column_statistics_when_the_table_changed(
    spark: Any, warehouse: Path, ns: str
) -> None:
    # As Spark's ANALYZE does: column statistics of data whose size or row count has changed since are
    # stale (a min and max of other rows). They were kept, beside the new row count.
    t = f"glue.{ns}.x"
    spark.sql(f"CREATE TABLE {t} (a INT, b INT) USING parquet")
    spark.sql(f"INSERT INTO {t} VALUES (1, 1), (2, 2)")
    spark.sql(f"ANALYZE TABLE {t} COMPUTE STATISTICS FOR ALL COLUMNS")
    location = Catalog(str(warehouse)).get_table(DatabaseName=ns, Name="x")["Table"]["StorageDescriptor"]
    # Rows another engine adds: the catalog hears nothing of them.
    spark.range(100, 103).selectExpr("CAST(id AS INT) a", "CAST(id AS INT) b").write.mode("append").parquet(
        location["Location"]
    )
    spark.sql(f"ANALYZE TABLE {t} COMPUTE STATISTICS FOR COLUMNS a")
    assert _statistics(warehouse, ns, "x")[1] == ["a", "b"]  # FOR COLUMNS keeps the others' (as Spark)
    spark.sql(f"ANALYZE TABLE {t} COMPUTE STATISTICS")  # nothing changed since: they stay
    assert _statistics(warehouse, ns, "x") == (
        {"numRows": "5", "totalSize": ANY, "numFiles": ANY},
        ["a", "b"],
    )
    spark.range(200, 201).selectExpr("CAST(id AS INT) a", "CAST(id AS INT) b").write.mode("append").parquet(
        location["Location"]
    )
    spark.sql(f"ANALYZE TABLE {t} COMPUTE STATISTICS")
    params, columns = _statistics(warehouse, ns, "x")
    assert params["numRows"] == "6" and columns == []


def test_analyze_for_columns_names_what_it_cannot_do(spark: Any, ns: str) -> None:
    t = f"glue.{ns}.c"
    spark.sql(f"CREATE TABLE {t} (a INT, arr ARRAY<INT>) USING parquet")
    with pytest.raises(Exception, match="is not a column of the table"):
        spark.sql(f"ANALYZE TABLE {t} COMPUTE STATISTICS FOR COLUMNS nope")
    with pytest.raises(Exception, match="Spark does not compute statistics for that type"):
        spark.sql(f"ANALYZE TABLE {t} COMPUTE STATISTICS FOR COLUMNS arr")


def test_analyze_does_not_revert_a_table_update_made_meanwhile_through_another_door(
    spark: Any, warehouse: Path, ns: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ANALYZE lists the table's files, then writes its statistics into the table's parameters. A boto3
    # UpdateTable made while it lists (here through the Python API, at that moment) used to be overwritten
    # by the table as ANALYZE had read it, and dropped from the history by its SkipArchive.
    from gluecat.spark import backend

    t = f"glue.{ns}.raced"
    spark.sql(f"CREATE TABLE {t} (a INT) USING parquet")
    spark.sql(f"INSERT INTO {t} VALUES (1)")
    glue = Catalog(str(warehouse))
    listing = backend.data_file_infos

    def list_while_another_client_updates(folder: str) -> list[Any]:
        table = glue.get_table(DatabaseName=ns, Name="raced")["Table"]
        sd = {**table["StorageDescriptor"], "Columns": [*table["StorageDescriptor"]["Columns"]]}
        sd["Columns"].append({"Name": "added_by_boto3", "Type": "string"})
        glue.update_table(
            DatabaseName=ns,
            TableInput={"Name": "raced", "StorageDescriptor": sd, "TableType": table["TableType"]},
            VersionId=table["VersionId"],
        )
        return listing(folder)

    monkeypatch.setattr(backend, "data_file_infos", list_while_another_client_updates)
    with pytest.raises(Exception, match="ConcurrentModificationException"):
        spark.sql(f"ANALYZE TABLE {t} COMPUTE STATISTICS NOSCAN")
    monkeypatch.undo()
    columns = glue.get_table(DatabaseName=ns, Name="raced")["Table"]["StorageDescriptor"]["Columns"]
    assert [c["Name"] for c in columns] == ["a", "added_by_boto3"]
    spark.sql(f"ANALYZE TABLE {t} COMPUTE STATISTICS NOSCAN")  # run again, it applies to the new table
    table = glue.get_table(DatabaseName=ns, Name="raced")["Table"]
    assert [c["Name"] for c in table["StorageDescriptor"]["Columns"]] == ["a", "added_by_boto3"]
    assert table["Parameters"]["numFiles"] == "1"


def test_analyze_does_not_write_its_statistics_into_a_table_made_under_its_name_meanwhile(
    spark: Any, warehouse: Path, ns: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A table dropped and made again starts at VersionId 1 again, so the VersionId check let ANALYZE
    # replace the new table by the old one's definition with the old one's file counts.
    from gluecat.spark import backend

    t = f"glue.{ns}.raced"
    spark.sql(f"CREATE TABLE {t} (a INT) USING parquet")
    spark.sql(f"INSERT INTO {t} VALUES (1)")
    glue = Catalog(str(warehouse))
    listing = backend.data_file_infos

    def list_while_another_client_makes_the_table_again(folder: str) -> list[Any]:
        read = glue.get_table(DatabaseName=ns, Name="raced")["Table"]
        glue.delete_table(DatabaseName=ns, Name="raced")
        again = {k: read[k] for k in ("Name", "StorageDescriptor", "PartitionKeys", "TableType")}
        glue.create_table(DatabaseName=ns, TableInput={**again, "Parameters": {"made_by": "boto3"}})
        return listing(folder)

    monkeypatch.setattr(backend, "data_file_infos", list_while_another_client_makes_the_table_again)
    with pytest.raises(Exception, match="ConcurrentModificationException"):
        spark.sql(f"ANALYZE TABLE {t} COMPUTE STATISTICS NOSCAN")
    monkeypatch.undo()
    assert glue.get_table(DatabaseName=ns, Name="raced")["Table"]["Parameters"] == {"made_by": "boto3"}
