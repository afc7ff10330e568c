"""Partition DDL goes through Spark's partition-management interfaces to one catalog commit each."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import AnalysisException

from gluecat import Catalog
from gluecat.spark.backend import Backend


@pytest.fixture
def ns(cat_ns: str) -> str:
    """The module's tests run against both catalogs, the warehouse opened here and served (conftest's cat)."""
    return cat_ns


@pytest.fixture
def table(spark: Any, cat: str, ns: str) -> str:
    spark.sql(f"CREATE TABLE {cat}.{ns}.t (v INT, p STRING, q INT) USING parquet PARTITIONED BY (p, q)")
    return f"{cat}.{ns}.t"


def shown(spark: Any, sql: str) -> list[str]:
    return [r.partition for r in spark.sql(sql).collect()]


@pytest.fixture
def backend_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    """Each call the shim makes into the Python backend from here on: its operation and arguments."""
    calls: list[tuple[str, dict[str, Any]]] = []
    call = Backend.call

    def recorded(self: Backend, op: str, args: str) -> str:
        calls.append((op, json.loads(args)))
        return call(self, op, args)

    monkeypatch.setattr(Backend, "call", recorded)
    return calls


def test_add_show_and_drop_partitions(
    spark: Any, warehouse: Path, ns: str, table: str, tmp_path: Path
) -> None:
    spark.sql(
        f"ALTER TABLE {table} ADD PARTITION (p='a', q=1) PARTITION (p='b', q=2) LOCATION '{tmp_path}/b2'"
    )
    assert shown(spark, f"SHOW PARTITIONS {table}") == ["p=a/q=1", "p=b/q=2"]
    assert shown(spark, f"SHOW PARTITIONS {table} PARTITION (p='b')") == ["p=b/q=2"]
    got = Catalog(str(warehouse)).get_partition(DatabaseName=ns, TableName="t", PartitionValues=["b", "2"])
    assert got["Partition"]["StorageDescriptor"]["Location"].endswith(f"{tmp_path}/b2")

    with pytest.raises(AnalysisException, match="PARTITIONS_ALREADY_EXIST"):
        spark.sql(f"ALTER TABLE {table} ADD PARTITION (p='a', q=1)")
    spark.sql(f"ALTER TABLE {table} ADD IF NOT EXISTS PARTITION (p='a', q=1) PARTITION (p='c', q=3)")
    assert shown(spark, f"SHOW PARTITIONS {table}") == ["p=a/q=1", "p=b/q=2", "p=c/q=3"]

    spark.sql(f"ALTER TABLE {table} DROP PARTITION (p='a', q=1), PARTITION (p='c', q=3)")
    with pytest.raises(AnalysisException, match="PARTITIONS_NOT_FOUND"):
        spark.sql(f"ALTER TABLE {table} DROP PARTITION (p='a', q=1)")
    spark.sql(f"ALTER TABLE {table} DROP IF EXISTS PARTITION (p='a', q=1)")
    assert shown(spark, f"SHOW PARTITIONS {table}") == ["p=b/q=2"]


def test_rows_written_into_an_added_partition_go_to_its_location(
    spark: Any, ns: str, table: str, tmp_path: Path
) -> None:
    spark.sql(f"ALTER TABLE {table} ADD PARTITION (p='x', q=1) LOCATION '{tmp_path}/elsewhere'")
    spark.sql(f"INSERT INTO {table} VALUES (5, 'x', 1)")
    assert [f.name for f in (tmp_path / "elsewhere").iterdir() if f.name.startswith("part-")]
    assert [tuple(r) for r in spark.sql(f"SELECT * FROM {table}").collect()] == [(5, "x", 1)]


def test_truncate_table_and_partition_keep_the_partitions(spark: Any, table: str) -> None:
    spark.sql(f"INSERT INTO {table} VALUES (1, 'a', 1), (2, 'b', 2)")
    spark.sql(f"TRUNCATE TABLE {table} PARTITION (p='a', q=1)")
    assert [tuple(r) for r in spark.sql(f"SELECT * FROM {table}").collect()] == [(2, "b", 2)]
    spark.sql(f"TRUNCATE TABLE {table}")
    assert spark.sql(f"SELECT * FROM {table}").collect() == []
    assert shown(spark, f"SHOW PARTITIONS {table}") == ["p=a/q=1", "p=b/q=2"]


def test_partition_values_must_fit_the_key_types(spark: Any, table: str) -> None:
    with pytest.raises(Exception, match="q"):
        spark.sql(f"ALTER TABLE {table} ADD PARTITION (p='a', q='not a number')")
    assert shown(spark, f"SHOW PARTITIONS {table}") == []


def test_a_partition_whose_folder_name_would_be_too_long_needs_a_location(
    spark: Any, table: str, tmp_path: Path
) -> None:
    # Its Hive path p=<300 x's> is no name a folder can have (ENAMETOOLONG at its first write or drop).
    long = "x" * 300
    with pytest.raises(Exception, match="cannot be the name of a folder"):
        spark.sql(f"ALTER TABLE {table} ADD PARTITION (p='ok', q=1) PARTITION (p='{long}', q=2)")
    assert shown(spark, f"SHOW PARTITIONS {table}") == []
    spark.sql(f"ALTER TABLE {table} ADD PARTITION (p='{long}', q=2) LOCATION '{tmp_path}/long'")
    spark.sql(f"ALTER TABLE {table} DROP PARTITION (p='{long}', q=2)")
    assert shown(spark, f"SHOW PARTITIONS {table}") == []


def test_partition_indexes_through_procedures(
    spark: Any, cat: str, warehouse: Path, ns: str, table: str
) -> None:
    made = spark.sql(
        f"CALL {cat}.system.create_partition_index(table => '{ns}.t', index_name => 'pq', keys => 'p,q')"
    )
    assert [tuple(r) for r in made.collect()] == [("pq", "ACTIVE")]
    listed = spark.sql(f"CALL {cat}.system.partition_indexes(table => '{ns}.t')").collect()
    assert [(r.index_name, r.keys, r.status) for r in listed] == [("pq", "p,q", "ACTIVE")]
    indexes = Catalog(str(warehouse)).get_partition_indexes(DatabaseName=ns, TableName="t")
    assert [d["IndexName"] for d in indexes["PartitionIndexDescriptorList"]] == ["pq"]
    with pytest.raises(Exception, match="InvalidInputException"):
        spark.sql(
            f"CALL {cat}.system.create_partition_index(table => '{ns}.t', index_name => 'bad', keys => 'v')"
        )
    spark.sql(f"CALL {cat}.system.drop_partition_index(table => '{ns}.t', index_name => 'pq')").collect()
    assert spark.sql(f"CALL {cat}.system.partition_indexes(table => '{ns}.t')").collect() == []
    names = [r.procedure_name for r in spark.sql(f"SHOW PROCEDURES IN {cat}.system").collect()]
    assert {"create_partition_index", "drop_partition_index", "partition_indexes"} <= set(names)


def test_existence_checks_see_partitions_added_elsewhere(
    spark: Any, warehouse: Path, ns: str, table: str
) -> None:
    """Spark checks each spec with partitionExists; the shim answers from its copy of the table's partitions,
    which must follow commits made by anyone else between statements."""
    spark.sql(f"ALTER TABLE {table} ADD PARTITION (p='a', q=1)")
    api = Catalog(str(warehouse))
    sd = api.get_table(DatabaseName=ns, Name="t")["Table"]["StorageDescriptor"]
    api.create_partition(
        DatabaseName=ns, TableName="t", PartitionInput={"Values": ["b", "2"], "StorageDescriptor": sd}
    )
    with pytest.raises(AnalysisException, match="PARTITIONS_ALREADY_EXIST"):
        spark.sql(f"ALTER TABLE {table} ADD PARTITION (p='b', q=2)")
    spark.sql(f"ALTER TABLE {table} ADD IF NOT EXISTS PARTITION (p='b', q=2) PARTITION (p='c', q=3)")
    api.delete_partition(DatabaseName=ns, TableName="t", PartitionValues=["c", "3"])
    with pytest.raises(AnalysisException, match="PARTITIONS_NOT_FOUND"):
        spark.sql(f"ALTER TABLE {table} DROP PARTITION (p='c', q=3)")
    odd = "back\\\\slash\\nnew line"
    spark.sql(f"ALTER TABLE {table} ADD PARTITION (p='{odd}', q=4)")
    spark.sql(f"ALTER TABLE {table} ADD IF NOT EXISTS PARTITION (p='{odd}', q=4)")
    values = sorted(p["Values"][0] for p in api.get_partitions(DatabaseName=ns, TableName="t")["Partitions"])
    assert values == ["a", "b", "back\\slash\nnew line"]


def test_existence_checks_follow_own_commits_merges_and_other_writers(
    spark: Any, cat: str, warehouse: Path, ns: str, table: str
) -> None:
    """The shim's copy passes over commits that leave the table's partitions alone (other tables, segment
    merges) and over its own commits, which it applies; any other change to the table is seen."""
    api = Catalog(str(warehouse))
    spark.sql(f"CREATE TABLE {cat}.{ns}.other (v INT, p STRING) USING parquet PARTITIONED BY (p)")
    spark.sql(f"ALTER TABLE {table} ADD PARTITION (p='a', q=1)")
    spark.sql(f"ALTER TABLE {cat}.{ns}.other ADD PARTITION (p='x')")
    spark.sql(f"ALTER TABLE {table} ADD PARTITION (p='b', q=1)")  # its own commit, not right after the copy's
    sd = api.get_table(DatabaseName=ns, Name="t")["Table"]["StorageDescriptor"]
    api.create_partition(
        DatabaseName=ns, TableName="t", PartitionInput={"Values": ["c", "1"], "StorageDescriptor": sd}
    )
    with pytest.raises(AnalysisException, match="PARTITIONS_ALREADY_EXIST"):
        spark.sql(f"ALTER TABLE {table} ADD PARTITION (p='c', q=1)")
    for q in range(2, 20):  # enough small commits for the store to merge segments in between
        spark.sql(f"ALTER TABLE {table} ADD PARTITION (p='d', q={q})")
        spark.sql(f"ALTER TABLE {cat}.{ns}.other ADD PARTITION (p='y{q}')")
    spark.sql(f"ALTER TABLE {table} DROP PARTITION (p='a', q=1), PARTITION (p='d', q=2)")
    api.delete_partition(DatabaseName=ns, TableName="t", PartitionValues=["d", "3"])
    with pytest.raises(AnalysisException, match="PARTITIONS_NOT_FOUND"):
        spark.sql(f"ALTER TABLE {table} DROP PARTITION (p='d', q=3)")
    spark.sql(f"ALTER TABLE {table} ADD PARTITION (p='a', q=1)")
    names = shown(spark, f"SHOW PARTITIONS {table}")
    assert sorted(names) == sorted(["p=a/q=1", "p=b/q=1", "p=c/q=1"] + [f"p=d/q={q}" for q in range(4, 20)])


@pytest.mark.parametrize("cat", ["glue"], indirect=True)  # the JVM's copy is of a local catalog
def test_a_stream_of_partition_ddl_makes_two_backend_calls_a_statement(
    spark: Any, table: str, backend_calls: list[tuple[str, dict[str, Any]]]
) -> None:
    """Spark asks whether each spec exists before adding it. Once the shim holds a copy of the table's
    partitions, the statement's table load checks that copy, so a statement costs the load and the
    commit, whatever the number of specs."""
    spark.sql(f"ALTER TABLE {table} ADD PARTITION (p='a', q=0)")  # the shim's copy is made here
    backend_calls.clear()
    for q in range(1, 4):
        specs = " ".join(f"PARTITION (p='{p}', q={q})" for p in "abcde")
        spark.sql(f"ALTER TABLE {table} ADD {specs}")
    calls = [op for op, _ in backend_calls]
    assert calls == ["get_table", "create_partitions"] * 3
    spark.sql(f"ALTER TABLE {table} ADD IF NOT EXISTS PARTITION (p='a', q=1) PARTITION (p='z', q=9)")
    assert [op for op, _ in backend_calls[6:]] == ["get_table", "create_partitions"]
    assert len(shown(spark, f"SHOW PARTITIONS {table}")) == 17


@pytest.mark.parametrize("cat", ["glue"], indirect=True)  # the JVM's copy is of a local catalog
def test_a_load_that_finds_the_copy_stale_drops_it(
    spark: Any, warehouse: Path, ns: str, table: str, backend_calls: list[tuple[str, dict[str, Any]]]
) -> None:
    """Once another writer has changed the table's partitions, loads stop asking about the shim's copy
    (each would read the log since the copy's version) until partition DDL reads the partitions afresh."""
    spark.sql(f"ALTER TABLE {table} ADD PARTITION (p='a', q=1)")
    api = Catalog(str(warehouse))
    sd = api.get_table(DatabaseName=ns, Name="t")["Table"]["StorageDescriptor"]
    api.create_partition(
        DatabaseName=ns, TableName="t", PartitionInput={"Values": ["b", "2"], "StorageDescriptor": sd}
    )

    def asked() -> list[bool]:
        """For each table load since the last clear: whether it checked the shim's copy."""
        return ["identities_since" in args for op, args in backend_calls if op == "get_table"]

    backend_calls.clear()
    spark.sql(f"SELECT * FROM {table}").collect()
    spark.sql(f"SELECT * FROM {table}").collect()
    assert asked()[0] and not any(asked()[1:])
    spark.sql(f"ALTER TABLE {table} ADD PARTITION (p='c', q=3)")
    backend_calls.clear()
    spark.sql(f"SELECT * FROM {table}").collect()
    assert asked() and all(asked())
    assert shown(spark, f"SHOW PARTITIONS {table}") == ["p=a/q=1", "p=b/q=2", "p=c/q=3"]
