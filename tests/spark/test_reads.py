"""SELECT reads only the partitions the catalog selects, wherever their folders are."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gluecat import Catalog

PARQUET_SD = {
    "InputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
    "OutputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
    "SerdeInfo": {"SerializationLibrary": "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"},
}


def crawled_table(cat: Catalog, db: str, root: Path, partitions: dict[tuple[str, str], int | None]) -> None:
    """A table as a crawler makes it: partitions at arbitrary folders; None marks a folder of garbage."""
    cat.create_table(
        DatabaseName=db,
        TableInput={
            "Name": "events",
            "StorageDescriptor": {
                **PARQUET_SD,
                "Columns": [{"Name": "n", "Type": "int"}],
                "Location": str(root),
            },
            "PartitionKeys": [{"Name": "country", "Type": "string"}, {"Name": "year", "Type": "int"}],
        },
    )
    add = []
    for i, ((country, year), n) in enumerate(sorted(partitions.items())):
        folder = root / f"folder-{i}"  # not Hive's country=../year=.. layout: the catalog says where
        folder.mkdir(parents=True)
        if n is None:
            (folder / "part-0.parquet").write_bytes(b"this is not parquet")
        else:
            pq.write_table(pa.table({"n": pa.array([n], pa.int32())}), folder / "part-0.parquet")
        add.append(
            {"Values": [country, year], "StorageDescriptor": {**PARQUET_SD, "Location": f"file:{folder}"}}
        )
    cat.batch_create_partition(DatabaseName=db, TableName="events", PartitionInputList=add)


def test_filtered_select_reads_only_the_selected_partitions(
    spark: Any, warehouse: Path, ns: str, tmp_path: Path
) -> None:
    cat = Catalog(str(warehouse))
    crawled_table(cat, ns, tmp_path / "events", {("US", "2020"): 1, ("US", "2021"): 2, ("FR", "2020"): None})
    got = spark.sql(f"SELECT n, year FROM glue.{ns}.events WHERE country = 'US' ORDER BY n").collect()
    assert [tuple(r) for r in got] == [(1, 2020), (2, 2021)]
    with pytest.raises(Exception, match="not a Parquet file|is not a Parquet|magic number"):
        spark.sql(f"SELECT * FROM glue.{ns}.events").collect()


def test_an_index_planned_filter_reads_only_the_selected_partitions(
    spark: Any, warehouse: Path, ns: str, tmp_path: Path
) -> None:
    cat = Catalog(str(warehouse))
    crawled_table(
        cat,
        ns,
        tmp_path / "events",
        {("US", "2020"): 1, ("US", "2021"): 2, ("US", "2019"): None, ("FR", "2021"): None},
    )
    spark.sql(
        f"CALL glue.system.create_partition_index(table => '{ns}.events', index_name => 'cy', keys => 'country,year')"
    )
    plan = cat.explain_partitions(
        DatabaseName=ns, TableName="events", Expression="country = 'US' AND year >= 2020"
    )
    assert plan["Index"] == "cy"
    got = spark.sql(
        f"SELECT n FROM glue.{ns}.events WHERE country = 'US' AND year >= 2020 ORDER BY n"
    ).collect()
    assert [r.n for r in got] == [1, 2]
    with pytest.raises(Exception, match="not a Parquet file|is not a Parquet|magic number"):
        spark.sql(f"SELECT n FROM glue.{ns}.events WHERE year >= 2019").collect()


def test_explain_shows_the_partition_filter_and_the_selected_partitions(
    spark: Any, warehouse: Path, ns: str, tmp_path: Path
) -> None:
    crawled_table(
        Catalog(str(warehouse)), ns, tmp_path / "e", {("US", "2020"): 1, ("US", "2021"): 2, ("FR", "2020"): 3}
    )
    plan = spark.sql(f"EXPLAIN SELECT n FROM glue.{ns}.events WHERE country = 'US'").collect()[0][0]
    assert "PartitionFilters: [isnotnull(country" in plan and "(country#" in plan
    assert "GlueFileIndex(2 paths)" in plan  # the two US partitions, chosen by the catalog


def test_typed_partition_keys_compare_by_type(spark: Any, ns: str) -> None:
    spark.sql(f"CREATE TABLE glue.{ns}.typed (v INT, d DATE, n BIGINT) USING parquet PARTITIONED BY (d, n)")
    spark.sql(
        f"INSERT INTO glue.{ns}.typed VALUES (1, DATE'2024-01-09', 9), (2, DATE'2024-01-10', 10), (3, NULL, NULL)"
    )
    assert [r.v for r in spark.sql(f"SELECT v FROM glue.{ns}.typed WHERE n > 9").collect()] == [2]
    assert [
        r.v for r in spark.sql(f"SELECT v FROM glue.{ns}.typed WHERE d < DATE'2024-01-10'").collect()
    ] == [1]
    assert [r.v for r in spark.sql(f"SELECT v FROM glue.{ns}.typed WHERE n IS NULL").collect()] == [3]
    assert [
        r.v for r in spark.sql(f"SELECT v FROM glue.{ns}.typed WHERE n IN (9, 10) ORDER BY v").collect()
    ] == [1, 2]
    row = spark.sql(f"SELECT d FROM glue.{ns}.typed WHERE v = 2").collect()[0]
    assert row.d == datetime.date(2024, 1, 10)


def test_partitions_added_through_python_are_seen_by_the_next_query(
    spark: Any, warehouse: Path, ns: str
) -> None:
    spark.sql(f"CREATE TABLE glue.{ns}.live (v INT, p STRING) USING parquet PARTITIONED BY (p)")
    spark.sql(f"INSERT INTO glue.{ns}.live VALUES (1, 'a')")
    cat = Catalog(str(warehouse))
    cat.delete_partition(DatabaseName=ns, TableName="live", PartitionValues=["a"])
    assert spark.sql(f"SELECT * FROM glue.{ns}.live").collect() == []


def _columnar(df: Any) -> bool:
    return "ColumnarToRow" in df._jdf.queryExecution().executedPlan().toString()


@pytest.mark.parametrize("fmt", ["parquet", "orc"])
@pytest.mark.parametrize(
    "settings",
    [
        {},
        {"spark.sql.parquet.enableNestedColumnVectorizedReader": "false"},
        {"spark.sql.orc.enableNestedColumnVectorizedReader": "false"},
        {"spark.sql.codegen.maxFields": "2"},
        {"spark.sql.codegen.wholeStage": "false"},
    ],
)
def test_scans_read_columnar_exactly_when_sparks_own_v2_reader_does(
    spark: Any, ns: str, fmt: str, settings: dict[str, str]
) -> None:
    # gluecat's scans decide columnar reading while planning, without building Spark's reader factory;
    # the decision must be the one Spark's own DataSource v2 scan of the same files makes.
    spark.sql(
        f"CREATE TABLE glue.{ns}.t (v INT, s STRUCT<a: INT, b: STRING>, p STRING) USING {fmt} PARTITIONED BY (p)"
    )
    spark.sql(f"INSERT INTO glue.{ns}.t VALUES (1, named_struct('a', 2, 'b', 'x'), 'k')")
    location = (
        spark.sql(f"DESCRIBE TABLE EXTENDED glue.{ns}.t").where("col_name = 'Location'").first().data_type
    )
    before = {key: spark.conf.get(key, None) for key in [*settings, "spark.sql.sources.useV1SourceList"]}
    try:
        spark.conf.set("spark.sql.sources.useV1SourceList", "")
        for key, value in settings.items():
            spark.conf.set(key, value)
        for columns in (["v", "p"], ["v", "s", "p"]):
            ours = spark.table(f"glue.{ns}.t").select(*columns).where("p = 'k'")
            sparks = spark.read.format(fmt).load(location).select(*columns).where("p = 'k'")
            assert _columnar(ours) == _columnar(sparks), (columns, settings)
            assert ours.collect() == sparks.collect()
            # ... and the decision survives partition pruning, which copies the scan.
            leaf = ours._jdf.queryExecution().executedPlan().collectLeaves().head()
            assert leaf.scan().getClass().getSimpleName().startswith("Columnar")
    finally:
        for key, value in before.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_text_scans_are_planned_as_row_scans(spark: Any, ns: str, fmt: str) -> None:
    spark.sql(f"CREATE TABLE glue.{ns}.t (v INT, p STRING) USING {fmt} PARTITIONED BY (p)")
    spark.sql(f"INSERT INTO glue.{ns}.t VALUES (1, 'k'), (2, 'l')")
    df = spark.table(f"glue.{ns}.t").where("p = 'k'")
    assert not _columnar(df)
    leaf = df._jdf.queryExecution().executedPlan().collectLeaves().head()
    assert leaf.scan().getClass().getSimpleName().startswith("Row")
    assert [r.v for r in df.collect()] == [1]


def test_timestamp_keys_are_filtered_in_the_sessions_time_zone(spark: Any, ns: str) -> None:
    """A timestamp partition value is written in the session's time zone; the filter's value must be too
    (a java.sql.Timestamp prints in the JVM's zone, an Instant in UTC), or the catalog selects nothing and
    the query silently returns no rows."""
    jvm_zone = spark.sparkContext._jvm.java.util.TimeZone.getDefault().getID()
    session_zone = "Asia/Tokyo" if jvm_zone == "America/Los_Angeles" else "America/Los_Angeles"
    spark.conf.set("spark.sql.session.timeZone", session_zone)
    try:
        spark.sql(
            f"CREATE TABLE glue.{ns}.tz (v INT, ts TIMESTAMP, d DATE) USING parquet PARTITIONED BY (ts, d)"
        )
        spark.sql(
            f"INSERT INTO glue.{ns}.tz VALUES (1, TIMESTAMP'2024-01-01 10:00:00', DATE'1500-03-01'), "
            "(2, TIMESTAMP'2024-06-01 23:30:00.123', DATE'2024-02-29')"
        )

        def values(where: str) -> list[int]:
            return [r.v for r in spark.sql(f"SELECT v FROM glue.{ns}.tz WHERE {where} ORDER BY v").collect()]

        for java8_api in ("false", "true"):  # filters carry java.sql.Timestamp / Date, or Instant / LocalDate
            spark.conf.set("spark.sql.datetime.java8API.enabled", java8_api)
            assert values("ts = TIMESTAMP'2024-01-01 10:00:00'") == [1]
            assert values("ts >= TIMESTAMP'2024-06-01 23:00:00'") == [2]
            assert values("ts IN (TIMESTAMP'2024-06-01 23:30:00.123')") == [2]
            assert values("d = DATE'1500-03-01'") == [1]
            assert values("d > DATE'2024-01-01' AND ts < TIMESTAMP'2025-01-01 00:00:00'") == [2]
    finally:
        spark.conf.unset("spark.sql.session.timeZone")
        spark.conf.unset("spark.sql.datetime.java8API.enabled")


def test_keys_that_expressions_cannot_compare_are_filtered_by_spark(spark: Any, ns: str) -> None:
    """A double or boolean partition key: the catalog cannot compare its values (Glue refuses such keys
    in expressions), so it leaves those filters to Spark instead of comparing them as text (which
    dropped 10.0 from f > 2) or failing the query."""
    spark.sql(
        f"CREATE TABLE glue.{ns}.odd (v INT, f DOUBLE, b BOOLEAN, s STRING) USING parquet PARTITIONED BY (f, b, s)"
    )
    spark.sql(
        f"INSERT INTO glue.{ns}.odd VALUES (1, 1.5, true, 'x'), (2, 10.0, false, 'x'), (3, 9.0, true, 'y')"
    )

    def values(where: str) -> list[int]:
        return [r.v for r in spark.sql(f"SELECT v FROM glue.{ns}.odd WHERE {where} ORDER BY v").collect()]

    assert values("f > 2") == [2, 3]
    assert values("b AND s = 'x'") == [1]
    assert values("NOT (f > 2 AND s = 'x')") == [1, 3]
    assert values("f IN (1.5, 10.0) OR s = 'y'") == [1, 2, 3]


def test_a_long_chain_of_ors_selects_its_partitions(spark: Any, ns: str) -> None:
    """A DataFrame's reduce(or_) makes a left-deep chain of ORs as deep as it is long; the shim sends it
    flat (tests/expressions/test_spark_filters.py takes Python's side to thousands)."""
    import functools
    import operator

    from pyspark.sql import functions as F

    spark.sql(f"CREATE TABLE glue.{ns}.many (v INT, p INT) USING parquet PARTITIONED BY (p)")
    spark.sql(f"INSERT INTO glue.{ns}.many VALUES (1, 1), (2, 2), (3, 3), (4, 300)")
    condition = functools.reduce(operator.or_, [F.col("p") == i for i in range(2, 302)])
    got = spark.table(f"glue.{ns}.many").filter(condition).orderBy("v").collect()
    assert [r.v for r in got] == [2, 3, 4]


def test_a_filtered_read_returns_the_rows_of_the_full_read_that_pass_the_filter(
    spark: Any, warehouse: Path, ns: str, tmp_path: Path
) -> None:
    # Partitions registered through boto3 with values not written as their key's type writes them. The
    # catalog's filters take such a value for no value at all (as NULL), and compare decimals and
    # timestamps exactly; Spark's CAST used to read them as numbers, dates and rounded values, so a
    # filtered read missed rows the full read showed matching (k < 1.6 missed 1e0, read as 1.00).
    # Now Spark reads them as the catalog compares them: as NULL, where they are not values of the type.
    cat = Catalog(str(warehouse))
    keys = [("i", "int"), ("d", "decimal(5,2)"), ("t", "timestamp"), ("day", "date")]
    cat.create_table(
        DatabaseName=ns,
        TableInput={
            "Name": "sloppy",
            "StorageDescriptor": {
                **PARQUET_SD,
                "Columns": [{"Name": "n", "Type": "int"}],
                "Location": str(tmp_path),
            },
            "PartitionKeys": [{"Name": k, "Type": t} for k, t in keys],
        },
    )
    values = [
        ("7", "1.5", "2024-01-05 00:00:00", "2024-01-05"),
        ("07", "01.50", "2024-01-05T00:00:00", "2024-01-05"),
        (" 7", "1e0", "2024-01-05", "2024-1-5"),
        ("7 ", "1.505", "2024-01-05 00:00:00.0000001", "2024-01-05 00:00:00"),
        ("8", "1.4", "2024-01-06 00:00:00.000001", "2024-01-06"),
    ]
    for n, vs in enumerate(values):
        folder = tmp_path / f"p{n}"
        folder.mkdir()
        pq.write_table(pa.table({"n": pa.array([n], pa.int32())}), folder / "part-0.parquet")
        cat.create_partition(
            DatabaseName=ns,
            TableName="sloppy",
            PartitionInput={"Values": list(vs), "StorageDescriptor": {**PARQUET_SD, "Location": str(folder)}},
        )
    full = spark.sql(f"SELECT * FROM glue.{ns}.sloppy").collect()
    checks = {
        "i = 7": lambda r: r.i == 7,
        "i < 8": lambda r: r.i is not None and r.i < 8,
        "d < 1.6": lambda r: r.d is not None and float(r.d) < 1.6,
        "d = 1.51": lambda r: r.d is not None and float(r.d) == 1.51,
        "t = TIMESTAMP'2024-01-05 00:00:00'": lambda r: r.t == datetime.datetime(2024, 1, 5),
        "t > TIMESTAMP'2024-01-04 00:00:00'": lambda r: (
            r.t is not None and r.t > datetime.datetime(2024, 1, 4)
        ),
        "day <= DATE'2024-01-05'": lambda r: r.day is not None and r.day <= datetime.date(2024, 1, 5),
    }
    for condition, keep in checks.items():
        filtered = sorted(
            r.n for r in spark.sql(f"SELECT n FROM glue.{ns}.sloppy WHERE {condition}").collect()
        )
        assert filtered == sorted(r.n for r in full if keep(r)), condition
    # Values that are not of their key's type (or that it cannot hold exactly) read as NULL.
    assert sorted(r.n for r in full if r.i is None) == [2, 3]
    assert sorted(r.n for r in full if r.d is None) == [2, 3]
    assert sorted(r.n for r in full if r.t is None) == [2, 3]
    assert sorted(r.n for r in full if r.day is None) == [2, 3]


def test_not_null_safe_equal_keeps_the_null_partition(spark: Any, ns: str) -> None:
    """NOT (k <=> v) is true where k is NULL; the catalog read it as NOT (k = v), unknown there, and
    dropped the NULL partition from the scan."""
    spark.sql(f"CREATE TABLE glue.{ns}.ns_eq (v INT, k DECIMAL(10,2)) USING parquet PARTITIONED BY (k)")
    spark.sql(f"INSERT INTO glue.{ns}.ns_eq VALUES (1, 1.5), (2, 2.5), (3, NULL)")
    got = spark.sql(f"SELECT v FROM glue.{ns}.ns_eq WHERE NOT (k <=> 1.5) ORDER BY v").collect()
    assert [r.v for r in got] == [2, 3]


def test_dates_of_the_julian_gap_select_their_partitions(spark: Any, ns: str) -> None:
    """Spark's filters carried a date as a java.sql.Date, in the hybrid Julian calendar that has no
    1582-10-05 to 1582-10-14: DATE'1582-10-10' reached the catalog as 1582-10-20, and the query silently
    returned no rows (or the wrong ones for < and >)."""
    spark.sql(f"CREATE TABLE glue.{ns}.gap (v INT, d DATE) USING parquet PARTITIONED BY (d)")
    spark.sql(
        f"INSERT INTO glue.{ns}.gap VALUES (1, DATE'1582-10-04'), (2, DATE'1582-10-10'), (3, DATE'1582-10-15')"
    )

    def values(where: str) -> list[int]:
        return [r.v for r in spark.sql(f"SELECT v FROM glue.{ns}.gap WHERE {where} ORDER BY v").collect()]

    assert values("d = DATE'1582-10-10'") == [2]
    assert values("d > DATE'1582-10-09'") == [2, 3]
    assert values("d IN (DATE'1582-10-10', DATE'1582-10-14')") == [2]


def test_a_cast_of_a_timestamp_key_to_the_last_date_is_answered(spark: Any, ns: str) -> None:
    """Spark's optimizer makes CAST(ts AS DATE) = DATE'9999-12-31' a range of ts ending at the year +10000,
    which the catalog refused (InvalidInputException), failing the query."""
    spark.sql(f"CREATE TABLE glue.{ns}.last (v INT, ts TIMESTAMP) USING parquet PARTITIONED BY (ts)")
    spark.sql(
        f"INSERT INTO glue.{ns}.last VALUES (1, TIMESTAMP'9999-12-31 23:59:59.999999'), "
        "(2, TIMESTAMP'2024-01-01 00:00:00')"
    )
    got = spark.sql(f"SELECT v FROM glue.{ns}.last WHERE CAST(ts AS DATE) = DATE'9999-12-31'").collect()
    assert [r.v for r in got] == [1]
