"""INSERT and DataFrameWriterV2 write files through Spark and register partitions in the same commit."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gluecat import Catalog


@pytest.fixture
def ns(cat_ns: str) -> str:
    """The module's tests run against both catalogs, the warehouse opened here and served (conftest's cat)."""
    return cat_ns


@pytest.fixture
def table(spark: Any, cat: str, ns: str) -> str:
    spark.sql(f"CREATE TABLE {cat}.{ns}.t (v INT, p STRING, q INT) USING parquet PARTITIONED BY (p, q)")
    return f"{cat}.{ns}.t"


def rows(spark: Any, table: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in spark.sql(f"SELECT v, p, q FROM {table}").collect())


def partitions(warehouse: Path, table: str) -> list[list[str]]:
    _, db, name = table.split(".")
    got = Catalog(str(warehouse)).get_partitions(DatabaseName=db, TableName=name)["Partitions"]
    return sorted(p["Values"] for p in got)


def test_insert_into_appends_and_registers_new_partitions(spark: Any, warehouse: Path, table: str) -> None:
    spark.sql(f"INSERT INTO {table} VALUES (1, 'a', 1), (2, 'b', 2)")
    spark.sql(f"INSERT INTO {table} VALUES (3, 'a', 1), (4, NULL, 3)")
    assert rows(spark, table) == [(1, "a", 1), (2, "b", 2), (3, "a", 1), (4, None, 3)]
    assert partitions(warehouse, table) == [["__HIVE_DEFAULT_PARTITION__", "3"], ["a", "1"], ["b", "2"]]


def test_static_overwrite_replaces_one_partition(spark: Any, warehouse: Path, table: str) -> None:
    spark.sql(f"INSERT INTO {table} VALUES (1, 'a', 1), (2, 'b', 2)")
    spark.sql(f"INSERT OVERWRITE {table} PARTITION (p='a', q=1) VALUES (10)")
    assert rows(spark, table) == [(2, "b", 2), (10, "a", 1)]
    spark.sql(f"INSERT OVERWRITE {table} PARTITION (p='b') SELECT 20, 5")
    # Hive semantics: partitions under p='b' that the overwrite did not write are gone.
    assert rows(spark, table) == [(10, "a", 1), (20, "b", 5)]
    assert partitions(warehouse, table) == [["a", "1"], ["b", "5"]]


def test_an_overwrite_replaces_exactly_the_partitions_its_condition_matches(
    spark: Any, cat: str, ns: str
) -> None:
    """The catalog's selection for a read may hold more partitions than Spark's filters match (a double
    key, a null test: Spark filters again); an overwrite deleted all of them, so INSERT OVERWRITE ...
    PARTITION (d = 1.5) or (p = NULL) emptied the whole table."""
    from pyspark.sql import functions as F

    name = f"{cat}.{ns}.exact"
    spark.sql(f"CREATE TABLE {name} (v INT, p STRING, d DOUBLE) USING parquet PARTITIONED BY (p, d)")
    initial = f"INSERT INTO {name} VALUES (1, 'a', 1), (2, 'b', 2), (3, NULL, 3), (4, 'c', NULL)"

    def after(overwrite: Callable[[], None]) -> list[int]:
        spark.sql(f"TRUNCATE TABLE {name}")
        spark.sql(initial)
        overwrite()
        return sorted(r.v for r in spark.table(name).collect())

    def sql(statement: str) -> Callable[[], None]:
        def run() -> None:
            spark.sql(statement.format(name))

        return run

    def v2(condition: Any) -> Callable[[], None]:
        frame = spark.sql("SELECT 9 AS v, 'z' AS p, 9D AS d")
        return lambda: frame.writeTo(name).overwrite(condition)

    assert after(sql("INSERT OVERWRITE {} PARTITION (p = 'a', d = 1) SELECT 9")) == [2, 3, 4, 9]
    assert after(sql("INSERT OVERWRITE {} PARTITION (p = NULL, d = 3) SELECT 9")) == [1, 2, 4, 9]
    assert after(sql("INSERT OVERWRITE {} PARTITION (p = 'c', d = NULL) SELECT 9")) == [1, 2, 3, 9]
    assert after(sql("INSERT OVERWRITE {} PARTITION (p = 'b') SELECT 9, 2")) == [1, 3, 4, 9]
    assert after(v2(F.col("p").isNull())) == [1, 2, 4, 9]
    assert after(v2((F.col("p") == "a") | F.col("p").isNull())) == [2, 4, 9]
    assert after(v2(F.col("d") > 1.5)) == [1, 4, 9]
    assert after(v2(~(F.col("d") > 1.5))) == [2, 3, 4, 9]
    assert after(v2(F.col("p").startswith("b"))) == [1, 3, 4, 9]


def test_a_governed_overwrite_replaces_exactly_the_partitions_its_condition_matches(
    spark: Any, cat: str, ns: str
) -> None:
    """As above, for a governed table's objects (whose typed keys hold no nulls)."""
    from pyspark.sql import functions as F

    name = f"{cat}.{ns}.exact"
    spark.sql(
        f"CREATE TABLE {name} (v INT, p STRING, q INT) USING parquet PARTITIONED BY (p, q) "
        "TBLPROPERTIES ('table_type' = 'GOVERNED')"
    )
    spark.sql(f"INSERT INTO {name} VALUES (1, 'a', 1), (2, 'b', 2), (3, NULL, 3)")
    spark.sql(f"INSERT OVERWRITE {name} PARTITION (p = NULL, q = 3) SELECT 8")
    assert sorted(r.v for r in spark.table(name).collect()) == [1, 2, 8]
    frame = spark.sql("SELECT 9 AS v, 'z' AS p, 9 AS q")
    frame.writeTo(name).overwrite((F.col("p") == "a") | F.col("p").isNull())
    assert sorted(r.v for r in spark.table(name).collect()) == [2, 9]


def test_an_overwrite_of_a_boolean_partition_replaces_it(spark: Any, cat: str, ns: str) -> None:
    """Spark hands the literal of b <=> true to the table as a predicate of its own, which its own
    conversion to filters refused: every static overwrite of a boolean partition failed in planning."""
    name = f"{cat}.{ns}.flags"
    spark.sql(f"CREATE TABLE {name} (v INT, b BOOLEAN, k STRING) USING parquet PARTITIONED BY (b, k)")
    spark.sql(f"INSERT INTO {name} VALUES (1, true, 'x'), (2, false, 'x'), (3, true, 'y'), (4, NULL, 'x')")

    def after(statement: str) -> list[tuple[Any, ...]]:
        spark.sql(statement.format(name))
        return sorted((tuple(r) for r in spark.table(name).collect()), key=lambda r: r[0])

    assert after("INSERT OVERWRITE {} PARTITION (b = true, k = 'y') VALUES (5)") == [
        (1, True, "x"),
        (2, False, "x"),
        (4, None, "x"),
        (5, True, "y"),
    ]
    assert after("INSERT OVERWRITE {} PARTITION (b = false) SELECT 6, 'z'") == [
        (1, True, "x"),
        (4, None, "x"),
        (5, True, "y"),
        (6, False, "z"),
    ]
    assert after("INSERT INTO {} REPLACE WHERE b = true SELECT 7, true, 'x'") == [
        (4, None, "x"),
        (6, False, "z"),
        (7, True, "x"),
    ]
    assert after("INSERT INTO {} REPLACE WHERE b IN (false) SELECT 8, false, 'x'") == [
        (4, None, "x"),
        (7, True, "x"),
        (8, False, "x"),
    ]


def test_dynamic_overwrite_replaces_only_written_partitions(spark: Any, warehouse: Path, table: str) -> None:
    spark.sql(f"INSERT INTO {table} VALUES (1, 'a', 1), (2, 'b', 2)")
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try:
        spark.sql(f"INSERT OVERWRITE {table} VALUES (3, 'a', 1), (4, 'c', 3)")
    finally:
        spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    assert rows(spark, table) == [(2, "b", 2), (3, "a", 1), (4, "c", 3)]
    assert partitions(warehouse, table) == [["a", "1"], ["b", "2"], ["c", "3"]]


def test_full_overwrite_truncates_then_writes(spark: Any, warehouse: Path, table: str) -> None:
    spark.sql(f"INSERT INTO {table} VALUES (1, 'a', 1), (2, 'b', 2)")
    spark.sql(f"INSERT OVERWRITE {table} VALUES (5, 'z', 9)")
    assert rows(spark, table) == [(5, "z", 9)]
    assert partitions(warehouse, table) == [["z", "9"]]


def test_dataframe_writer_v2(spark: Any, warehouse: Path, table: str) -> None:
    df = spark.createDataFrame([(1, "a", 1), (2, "b", 2)], "v INT, p STRING, q INT")
    df.writeTo(table).append()
    spark.createDataFrame([(7, "a", 1)], "v INT, p STRING, q INT").writeTo(table).overwritePartitions()
    assert rows(spark, table) == [(2, "b", 2), (7, "a", 1)]
    created = table + "_v2"
    df.writeTo(created).using("orc").partitionedBy(df.p).create()
    assert sorted(tuple(r) for r in spark.table(created).select("v", "p").collect()) == [(1, "a"), (2, "b")]
    _, db, name = created.split(".")
    got = Catalog(str(warehouse)).get_table(DatabaseName=db, Name=name)["Table"]
    assert got["StorageDescriptor"]["SerdeInfo"]["SerializationLibrary"].endswith("OrcSerde")
    assert got["PartitionKeys"] == [{"Name": "p", "Type": "string"}]


def test_a_failed_job_registers_nothing_and_leaves_data_alone(
    spark: Any, warehouse: Path, table: str
) -> None:
    spark.sql(f"INSERT INTO {table} VALUES (1, 'a', 1)")
    with pytest.raises(Exception, match="boom"):
        spark.sql(
            f"INSERT INTO {table} SELECT IF(id = 3, raise_error('boom'), CAST(id AS INT)), 'new', 7 FROM range(5)"
        )
    assert rows(spark, table) == [(1, "a", 1)]
    assert partitions(warehouse, table) == [["a", "1"]]
    _, db, _name = table.split(".")
    leftovers = [
        p.name for p in (warehouse / f"{db}.db" / "t").iterdir() if p.name.startswith(".gluecat-staging")
    ]
    assert leftovers == []


def test_unpartitioned_table_insert_and_overwrite(spark: Any, table: str) -> None:
    plain = table + "_plain"
    spark.sql(f"CREATE TABLE {plain} (v INT, s STRING) USING json")
    spark.sql(f"INSERT INTO {plain} VALUES (1, 'x')")
    spark.sql(f"INSERT INTO {plain} VALUES (2, 'y')")
    assert sorted(tuple(r) for r in spark.table(plain).collect()) == [(1, "x"), (2, "y")]
    spark.sql(f"INSERT OVERWRITE {plain} VALUES (3, 'z')")
    assert [tuple(r) for r in spark.table(plain).collect()] == [(3, "z")]


def test_typed_partition_values_round_trip(spark: Any, cat: str, warehouse: Path, ns: str) -> None:
    typed = f"{cat}.{ns}.typed"
    spark.sql(
        f"CREATE TABLE {typed} (v INT, ts TIMESTAMP, d DECIMAL(5,2), s STRING) USING parquet PARTITIONED BY (ts, d, s)"
    )
    spark.sql(f"INSERT INTO {typed} VALUES (1, TIMESTAMP'2024-01-02 03:04:05', 9.50, 'a/b=c:d')")
    got = Catalog(str(warehouse)).get_partitions(DatabaseName=ns, TableName="typed")["Partitions"]
    assert [p["Values"] for p in got] == [["2024-01-02 03:04:05", "9.50", "a/b=c:d"]]
    rows = spark.sql(
        f"SELECT v, CAST(ts AS STRING), CAST(d AS STRING), s FROM {typed} WHERE s = 'a/b=c:d'"
    ).collect()
    assert [tuple(r) for r in rows] == [(1, "2024-01-02 03:04:05", "9.50", "a/b=c:d")]


def test_csv_values_with_separators_and_quotes_round_trip(spark: Any, cat: str, ns: str) -> None:
    table = f"{cat}.{ns}.people"
    spark.sql(f"CREATE TABLE {table} (name STRING, note STRING) USING csv")
    spark.sql(f"""INSERT INTO {table} VALUES ('smith, ann', 'said "hi"'), ('plain', NULL)""")
    assert sorted(tuple(r) for r in spark.table(table).collect()) == [
        ("plain", None),
        ("smith, ann", 'said "hi"'),
    ]
