"""Governed tables from Spark: each write job is one transaction registering its files as objects; reads
plan from the object set (never the folder), and read as of a committed transaction or a time."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql.functions import col

from gluecat import Catalog, LakeFormation
from gluecat.spark.backend import Backend
from gluecat.spark.governed import GovernedWrites

GOVERNED = "TBLPROPERTIES ('table_type' = 'GOVERNED')"


def lf(warehouse: Path) -> LakeFormation:
    return LakeFormation(str(warehouse))


def objects(warehouse: Path, ns: str, name: str, **at: Any) -> list[dict[str, Any]]:
    """Every object of the table, each with its partition values."""
    out = []
    got = lf(warehouse).get_table_objects(DatabaseName=ns, TableName=name, **at)
    for part in got["Objects"]:
        out += [{**o, "PartitionValues": part.get("PartitionValues", [])} for o in part["Objects"]]
    return out


def committed(warehouse: Path) -> list[str]:
    txs = lf(warehouse).list_transactions(StatusFilter="COMMITTED")["Transactions"]
    return [t["TransactionId"] for t in txs]


def files_in(folder: Path) -> set[str]:
    """Every file under a folder, as objects name them."""
    return {
        "file://" + os.path.join(root, f) for root, _, names in os.walk(folder) for f in names if f != ".crc"
    }


def rows(spark: Any, table: str, at: str = "") -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in spark.sql(f"SELECT v, p, q FROM {table} {at}").collect())


@pytest.fixture
def tables(spark: Any, ns: str) -> tuple[str, str]:
    """A governed table and a plain one of the same shape, for comparing answers."""
    for name, props in (("g", GOVERNED), ("plain", "")):
        spark.sql(
            f"CREATE TABLE glue.{ns}.{name} (v INT, p STRING, q INT) USING parquet PARTITIONED BY (p, q) {props}"
        )
    return f"glue.{ns}.g", f"glue.{ns}.plain"


def test_create_table_with_table_type_governed_makes_a_governed_table(
    spark: Any, warehouse: Path, ns: str
) -> None:
    spark.sql(f"CREATE TABLE glue.{ns}.t (v INT, dt DATE) USING parquet PARTITIONED BY (dt) {GOVERNED}")
    table = lf(warehouse)
    assert Catalog(str(warehouse)).get_table(DatabaseName=ns, Name="t")["Table"]["TableType"] == "GOVERNED"
    described = {r[0]: r[1] for r in spark.sql(f"DESCRIBE TABLE EXTENDED glue.{ns}.t").collect()}
    assert described["Table_type"] == "GOVERNED"
    props = {r[0]: r[1] for r in spark.sql(f"SHOW TBLPROPERTIES glue.{ns}.t").collect()}
    assert props["gluecat.table_type"] == "GOVERNED"
    assert table.get_table_objects(DatabaseName=ns, TableName="t")["Objects"] == []
    # The property as Spark's grammar spells it otherwise: unquoted, double-quoted, without '='.
    for name, props in (("u", "table_type = 'governed'"), ("d", '"table_type" "GOVERNED"')):
        spark.sql(f"CREATE TABLE glue.{ns}.{name} (v INT) USING parquet TBLPROPERTIES ({props})")
        got = Catalog(str(warehouse)).get_table(DatabaseName=ns, Name=name)["Table"]
        assert got["TableType"] == "GOVERNED"
        assert "gluecat.table_type" not in got.get("Parameters", {})


def test_each_write_is_one_transaction_registering_its_files(
    spark: Any, warehouse: Path, ns: str, tables: tuple[str, str]
) -> None:
    governed, plain = tables
    statements = [
        "INSERT INTO {t} VALUES (1, 'a', 1), (2, 'b', 2), (3, 'b', 3)",
        "INSERT INTO {t} VALUES (4, 'a', 1)",
        "INSERT OVERWRITE {t} PARTITION (p = 'b', q = 2) VALUES (5)",
        "INSERT OVERWRITE {t} PARTITION (p = 'a', q) VALUES (6, 1), (7, 9)",
    ]
    for statement in statements:
        before = len(committed(warehouse))
        for t in (governed, plain):
            spark.sql(statement.format(t=t))
        assert len(committed(warehouse)) == before + 1, statement
        assert rows(spark, governed) == rows(spark, plain), statement
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try:
        for t in (governed, plain):
            spark.sql(f"INSERT OVERWRITE {t} VALUES (8, 'b', 3), (9, 'c', 1)")
    finally:
        spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    assert (
        rows(spark, governed)
        == rows(spark, plain)
        == [(5, "b", 2), (6, "a", 1), (7, "a", 9), (8, "b", 3), (9, "c", 1)]
    )
    # Each object is a file the job wrote: its ETag is its MD5, its size its size, its values its partition.
    got = objects(warehouse, ns, "g")
    assert len(got) == 5
    for o in got:
        path = o["Uri"].removeprefix("file://")
        data = Path(path).read_bytes()
        assert o["ETag"] == hashlib.md5(data).hexdigest()
        assert o["Size"] == len(data)
        p, q = o["PartitionValues"]
        assert f"/p={p}/q={q}/" in path


def test_dataframe_writer_v2_and_ctas_are_one_transaction_each(spark: Any, warehouse: Path, ns: str) -> None:
    df = spark.createDataFrame([(1, "a", 1), (2, "b", 2)], "v INT, p STRING, q INT")
    name = f"glue.{ns}.w"
    before = len(committed(warehouse))
    df.writeTo(name).tableProperty("table_type", "GOVERNED").partitionedBy("p").create()
    df.writeTo(name).append()
    spark.createDataFrame([(3, "a", 3)], "v INT, p STRING, q INT").writeTo(name).overwritePartitions()
    assert rows(spark, name) == [(2, "b", 2), (2, "b", 2), (3, "a", 3)]
    spark.createDataFrame([(4, "b", 4)], "v INT, p STRING, q INT").writeTo(name).overwrite(col("p") == "b")
    assert rows(spark, name) == [(3, "a", 3), (4, "b", 4)]
    spark.sql(f"CREATE TABLE glue.{ns}.c USING parquet {GOVERNED} AS SELECT * FROM {name}")
    assert rows(spark, f"glue.{ns}.c") == [(3, "a", 3), (4, "b", 4)]
    assert len(committed(warehouse)) == before + 5
    assert len(objects(warehouse, ns, "c")) >= 1


def test_a_write_of_more_than_100_files_is_registered_in_batches(
    spark: Any, warehouse: Path, ns: str
) -> None:
    spark.sql(f"CREATE TABLE glue.{ns}.many (v INT, k INT) USING parquet PARTITIONED BY (k) {GOVERNED}")
    before = len(committed(warehouse))
    spark.sql(
        f"INSERT INTO glue.{ns}.many SELECT CAST(id AS INT), CAST(id % 150 AS INT) FROM range(0, 300, 1, 1)"
    )
    assert len(committed(warehouse)) == before + 1
    assert len(objects(warehouse, ns, "many")) == 150
    assert spark.sql(f"SELECT count(*), count(DISTINCT k) FROM glue.{ns}.many").collect()[0] == (300, 150)


def test_reads_plan_from_the_objects_never_the_folder(
    spark: Any, warehouse: Path, ns: str, tables: tuple[str, str]
) -> None:
    governed, plain = tables
    for t in (governed, plain):
        spark.sql(f"INSERT INTO {t} VALUES (1, 'a', 1), (2, 'b', 2)")
    folder = warehouse / f"{ns}.db" / "g"
    one = next((folder / "p=a" / "q=1").glob("*.parquet"))
    (folder / "p=a" / "q=1" / "stray.parquet").write_bytes(one.read_bytes())  # in a partition's folder
    (folder / "p=z" / "q=9").mkdir(parents=True)
    (folder / "p=z" / "q=9" / "stray.parquet").write_bytes(one.read_bytes())  # a partition no object has
    (folder / "stray.parquet").write_bytes(one.read_bytes())
    assert rows(spark, governed) == rows(spark, plain) == [(1, "a", 1), (2, "b", 2)]
    query = f"SELECT v FROM {governed} WHERE p = 'b'"
    spark.conf.set("spark.sql.maxMetadataStringLength", "10000")  # EXPLAIN's Location unabridged
    try:
        plan = spark.sql(f"EXPLAIN {query}").collect()[0][0]
    finally:
        spark.conf.unset("spark.sql.maxMetadataStringLength")
    assert "GlueFileIndex(1 paths)" in plan and "/p=b/q=2/part-" in plan  # pruned to one object
    assert "PartitionFilters: [isnotnull(p" in plan
    assert [r.v for r in spark.sql(query).collect()] == [2]
    # Filters the catalog cannot evaluate are applied by Spark to the partitions' values.
    assert [r.v for r in spark.sql(f"SELECT v FROM {governed} WHERE q % 2 = 0").collect()] == [2]


def test_version_and_timestamp_as_of_read_a_committed_transaction(
    spark: Any, warehouse: Path, ns: str, tables: tuple[str, str]
) -> None:
    governed, _ = tables
    spark.sql(f"INSERT INTO {governed} VALUES (1, 'a', 1)")
    first = lf(warehouse).list_transactions(StatusFilter="COMMITTED")["Transactions"][0]
    spark.sql(f"INSERT OVERWRITE {governed} PARTITION (p = 'a', q = 1) VALUES (2)")
    spark.sql(f"INSERT INTO {governed} VALUES (3, 'b', 1)")
    assert rows(spark, governed) == [(2, "a", 1), (3, "b", 1)]
    assert rows(spark, governed, f"VERSION AS OF '{first['TransactionId']}'") == [(1, "a", 1)]
    ended = first["TransactionEndTime"].isoformat()
    assert rows(spark, governed, f"TIMESTAMP AS OF '{ended}'") == [(1, "a", 1)]
    assert rows(spark, governed, f"VERSION AS OF '{first['TransactionId']}' WHERE p = 'b'") == []
    # An active transaction's writes are nobody's to read but its own.
    active = lf(warehouse).start_transaction()["TransactionId"]
    with pytest.raises(Exception, match="the transaction is ACTIVE"):
        spark.sql(f"SELECT * FROM {governed} VERSION AS OF '{active}'").collect()
    lf(warehouse).cancel_transaction(TransactionId=active)
    with pytest.raises(Exception, match="VERSION AS OF 'nope'"):
        spark.sql(f"SELECT * FROM {governed} VERSION AS OF 'nope'").collect()


def test_a_job_whose_task_fails_leaves_no_object_and_no_file(
    spark: Any, warehouse: Path, ns: str, tables: tuple[str, str]
) -> None:
    governed, _ = tables
    spark.sql(f"INSERT INTO {governed} VALUES (1, 'a', 1)")
    kept = objects(warehouse, ns, "g")
    with pytest.raises(Exception, match="boom"):
        spark.sql(
            f"INSERT INTO {governed} SELECT CAST(id AS INT), 'x', CAST(id % 3 AS INT) FROM range(100) "
            "WHERE IF(id = 77, raise_error('boom'), true)"
        ).collect()
    assert objects(warehouse, ns, "g") == kept
    assert rows(spark, governed) == [(1, "a", 1)]
    last = lf(warehouse).list_transactions()["Transactions"][0]
    assert last["TransactionStatus"] == "ABORTED"
    # Spark aborts a job while its other task may still be writing: the abort removes the job's folder,
    # and the next write removes it again with whatever such a task wrote late.
    spark.sql(f"INSERT INTO {governed} VALUES (2, 'b', 2)")
    assert files_in(warehouse / f"{ns}.db" / "g") == {o["Uri"] for o in objects(warehouse, ns, "g")}


def test_a_job_whose_commit_conflicts_fails_naming_it_and_leaves_nothing(
    spark: Any, warehouse: Path, ns: str, tables: tuple[str, str]
) -> None:
    governed, _ = tables
    spark.sql(f"INSERT INTO {governed} VALUES (1, 'a', 1)")
    outsider = warehouse / f"{ns}.db" / "outsider.parquet"
    outsider.write_bytes(b"not read")

    def commit_into_the_same_partition(v: int) -> int:
        # Runs in a task of the job, after its transaction started: another writer's commit lands first.
        other = LakeFormation(str(warehouse))
        tx = other.start_transaction()["TransactionId"]
        other.update_table_objects(
            DatabaseName=ns,
            TableName="g",
            TransactionId=tx,
            WriteOperations=[
                {
                    "AddObject": {
                        "Uri": f"file://{outsider}",
                        "ETag": "x",
                        "Size": 8,
                        "PartitionValues": ["a", "1"],
                    }
                }
            ],
        )
        other.commit_transaction(TransactionId=tx)
        return v

    spark.udf.register("commit_into_the_same_partition", commit_into_the_same_partition, "int")
    try:
        conflict = (
            r'ConcurrentModificationException: The objects of partition \["a","1"\] of ns\d+\.g were changed'
        )
        with pytest.raises(Exception, match=conflict):
            spark.sql(f"INSERT INTO {governed} SELECT commit_into_the_same_partition(7), 'a', 1").collect()
    finally:
        spark.sql("DROP TEMPORARY FUNCTION commit_into_the_same_partition")
    uris = {o["Uri"] for o in objects(warehouse, ns, "g")}
    assert len(uris) == 2 and f"file://{outsider}" in uris  # the first object and the outsider's, no more
    assert files_in(warehouse / f"{ns}.db" / "g") == uris - {f"file://{outsider}"}


def test_truncate_deletes_the_objects_in_one_transaction_and_partition_ddl_is_refused(
    spark: Any, warehouse: Path, ns: str, tables: tuple[str, str]
) -> None:
    governed, _ = tables
    spark.sql(f"INSERT INTO {governed} VALUES (1, 'a', 1), (2, 'b', 2), (3, 'c', 3)")
    # Its partitions are those its objects are in.
    shown = [r[0] for r in spark.sql(f"SHOW PARTITIONS {governed}").collect()]
    assert shown == ["p=a/q=1", "p=b/q=2", "p=c/q=3"]
    with pytest.raises(Exception, match="ALTER TABLE DROP PARTITION does not apply to governed table"):
        spark.sql(f"ALTER TABLE {governed} DROP PARTITION (p = 'a', q = 1)")
    spark.sql(f"TRUNCATE TABLE {governed} PARTITION (p = 'c', q = 3)")
    assert rows(spark, governed) == [(1, "a", 1), (2, "b", 2)]
    before = len(committed(warehouse))
    spark.sql(f"TRUNCATE TABLE {governed}")
    assert len(committed(warehouse)) == before + 1
    assert rows(spark, governed) == [] and objects(warehouse, ns, "g") == []
    with pytest.raises(Exception, match="ALTER TABLE ADD PARTITION does not apply to governed table"):
        spark.sql(f"ALTER TABLE {governed} ADD PARTITION (p = 'c', q = 3)")
    with pytest.raises(Exception, match="MSCK REPAIR TABLE does not apply to governed table"):
        spark.sql(f"MSCK REPAIR TABLE {governed}")


def test_analyze_counts_the_objects_rename_is_refused_and_drop_deletes_a_managed_folder(
    spark: Any, warehouse: Path, ns: str, tables: tuple[str, str]
) -> None:
    governed, _ = tables
    spark.sql(f"INSERT INTO {governed} VALUES (1, 'a', 1), (2, 'b', 2)")
    folder = warehouse / f"{ns}.db" / "g"
    (folder / "stray.parquet").write_bytes(b"x" * 1000)  # no object: not the table's size
    got = {r.statistic: r.value for r in spark.sql(f"ANALYZE TABLE {governed} COMPUTE STATISTICS").collect()}
    sizes = [o["Size"] for o in objects(warehouse, ns, "g")]
    assert (got["numFiles"], got["totalSize"], got["numRows"]) == (str(len(sizes)), str(sum(sizes)), "2")
    with pytest.raises(Exception, match="ALTER TABLE RENAME TO does not apply to governed table"):
        spark.sql(f"ALTER TABLE {governed} RENAME TO {ns}.g2")
    spark.sql(
        f"DROP TABLE {governed}"
    )  # made without LOCATION: its folder is the catalog's, as for any table
    assert not folder.exists()


def test_a_job_whose_objects_are_refused_fails_naming_why_and_leaves_nothing(
    spark: Any, warehouse: Path, ns: str
) -> None:
    spark.sql(f"CREATE TABLE glue.{ns}.i (v INT, k INT) USING parquet PARTITIONED BY (k) {GOVERNED}")
    # Spark writes a null key as Hive's __HIVE_DEFAULT_PARTITION__, which no integer key of an object takes.
    with pytest.raises(
        Exception, match=r"PartitionValues\[0\]: '__HIVE_DEFAULT_PARTITION__' is not an integer"
    ):
        spark.sql(f"INSERT INTO glue.{ns}.i VALUES (1, NULL), (2, 3)")
    assert objects(warehouse, ns, "i") == []
    assert list((warehouse / f"{ns}.db" / "i").rglob("*")) == []  # no file, and no folder made for one


def test_overwrite_and_truncate_replace_partitions_of_a_decimal_key(spark: Any, ns: str) -> None:
    # Spark spells a decimal(10,2) key's value 1.50; objects keep it as 1.5: the same partition.
    name = f"glue.{ns}.dec"
    spark.sql(f"CREATE TABLE {name} (v INT, d DECIMAL(10,2)) USING parquet PARTITIONED BY (d) {GOVERNED}")
    spark.sql(f"INSERT INTO {name} VALUES (1, 1.50), (2, 2.00), (3, 3.25)")

    def got() -> list[tuple[int, str]]:
        return sorted((r.v, str(r.d)) for r in spark.sql(f"SELECT v, d FROM {name}").collect())

    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try:
        spark.sql(f"INSERT OVERWRITE {name} VALUES (4, 1.50)")
    finally:
        spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    assert got() == [(2, "2.00"), (3, "3.25"), (4, "1.50")]
    spark.sql(f"TRUNCATE TABLE {name} PARTITION (d = 2.00)")
    assert got() == [(3, "3.25"), (4, "1.50")]


def test_partition_values_with_characters_spark_escapes_are_written_and_read(
    spark: Any, warehouse: Path, ns: str
) -> None:
    """Spark names a partition's folder with its value escaped (`a:b` is `p=a%3Ab`); the file goes to
    that folder, as a plain table's does, and its object's Uri is a file URI of it, percent-encoded, that
    pyarrow and Hadoop both read as that file."""
    name = f"glue.{ns}.esc"
    spark.sql(f"CREATE TABLE {name} (v INT, p STRING) USING parquet PARTITIONED BY (p) {GOVERNED}")
    values = ["a:b", "a b", "100%", "x/y", "plain"]
    spark.sql(f"INSERT INTO {name} VALUES " + ", ".join(f"({i}, '{v}')" for i, v in enumerate(values)))
    got = sorted((r.v, r.p) for r in spark.sql(f"SELECT v, p FROM {name}").collect())
    assert got == list(enumerate(values))
    folders = {p.parent.name for p in (warehouse / f"{ns}.db" / "esc").rglob("*.parquet")}
    assert folders == {"p=a%3Ab", "p=a b", "p=100%25", "p=x%2Fy", "p=plain"}
    uris = sorted(o["Uri"] for o in objects(warehouse, ns, "esc"))
    assert [u.rsplit("/", 2)[-2] for u in uris] == [
        "p=100%2525",
        "p=a%20b",
        "p=a%253Ab",
        "p=plain",
        "p=x%252Fy",
    ]


def test_a_dynamic_overwrite_and_a_transaction_writing_its_partition_serialise(
    spark: Any, warehouse: Path, ns: str, tables: tuple[str, str]
) -> None:
    """An overwrite of partition a and another writer's transaction that deletes a's object and adds one:
    whichever commits second fails with ConcurrentModificationException and leaves nothing behind."""
    governed, _ = tables
    spark.sql(f"INSERT INTO {governed} VALUES (1, 'a', 1), (2, 'b', 2)")
    folder = warehouse / f"{ns}.db" / "g"
    before = files_in(folder)
    (old,) = [o["Uri"] for o in objects(warehouse, ns, "g") if o["PartitionValues"] == ["a", "1"]]
    one = next((folder / "p=a" / "q=1").glob("*.parquet"))

    def replace_a(other: LakeFormation, tx: str, name: str) -> str:
        """Stages, in ``tx``, the deletion of a's object and the addition of a file of the table's."""
        added = folder / "p=a" / "q=1" / name
        added.write_bytes(one.read_bytes())
        uri = f"file://{added}"
        ops: list[dict[str, Any]] = [
            {"DeleteObject": {"Uri": old, "PartitionValues": ["a", "1"]}},
            {
                "AddObject": {
                    "Uri": uri,
                    "ETag": "x",
                    "Size": added.stat().st_size,
                    "PartitionValues": ["a", "1"],
                }
            },
        ]
        args = {"DatabaseName": ns, "TableName": "g", "TransactionId": tx}
        other.delete_objects_on_cancel(**args, Objects=[{"Uri": uri, "ETag": "x"}])
        other.update_table_objects(**args, WriteOperations=ops)
        return uri

    def commit_first(v: int) -> int:
        # Runs in a task of the job, after its transaction started: the other writer commits first.
        other = LakeFormation(str(warehouse))
        tx = other.start_transaction()["TransactionId"]
        replace_a(other, tx, "first.parquet")
        other.commit_transaction(TransactionId=tx)
        return v

    spark.udf.register("commit_first", commit_first, "int")
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try:
        with pytest.raises(
            Exception, match=r"gluecat ConcurrentModificationException: .*partition \[\"a\",\"1\"\]"
        ):
            spark.sql(f"INSERT OVERWRITE {governed} SELECT commit_first(7), 'a', 1").collect()
        assert rows(spark, governed) == [(1, "a", 1), (2, "b", 2)]  # the other writer's file holds row 1
        first = f"file://{folder / 'p=a' / 'q=1' / 'first.parquet'}"
        assert {o["Uri"] for o in objects(warehouse, ns, "g")} == before - {old} | {first}
        assert files_in(folder) == before | {
            first
        }  # the job's files went; a's old file stays for time travel

        # The other order: the transaction started and staged first, the job commits first.
        other = LakeFormation(str(warehouse))
        tx = other.start_transaction()["TransactionId"]
        old = first
        second = replace_a(other, tx, "second.parquet")
        spark.sql(f"INSERT OVERWRITE {governed} VALUES (8, 'a', 1)")
        with pytest.raises(other.exceptions.ConcurrentModificationException, match=r'partition \["a","1"\]'):
            other.commit_transaction(TransactionId=tx)
    finally:
        spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
        spark.sql("DROP TEMPORARY FUNCTION IF EXISTS commit_first")
    assert rows(spark, governed) == [(2, "b", 2), (8, "a", 1)]
    assert f"file://{second}" not in files_in(folder)  # deleted on cancel: the conflict aborted it


def test_a_job_whose_table_is_dropped_and_made_again_meanwhile_fails_and_writes_nothing_to_the_new_one(
    spark: Any, warehouse: Path, ns: str, tables: tuple[str, str]
) -> None:
    governed, _ = tables
    spark.sql(f"INSERT INTO {governed} VALUES (1, 'a', 1)")
    before = files_in(warehouse / f"{ns}.db" / "g")
    glue = Catalog(str(warehouse))
    table = glue.get_table(DatabaseName=ns, Name="g")["Table"]
    again = {k: table[k] for k in ("Name", "StorageDescriptor", "PartitionKeys", "TableType", "Parameters")}

    def make_again(v: int) -> int:
        # Runs in a task of the job, after its transaction started (the Python API leaves the files).
        other = Catalog(str(warehouse))
        other.delete_table(DatabaseName=ns, Name="g")
        other.create_table(DatabaseName=ns, TableInput=again)
        return v

    spark.udf.register("make_again", make_again, "int")
    try:
        with pytest.raises(
            Exception, match="gluecat ConcurrentModificationException: .*deleted and made again"
        ):
            spark.sql(f"INSERT INTO {governed} SELECT make_again(7), 'a', 1").collect()
    finally:
        spark.sql("DROP TEMPORARY FUNCTION make_again")
    assert objects(warehouse, ns, "g") == [] and rows(spark, governed) == []
    assert files_in(warehouse / f"{ns}.db" / "g") == before


def test_time_travel_never_reads_a_dropped_table_as_the_one_made_again_under_its_name(
    spark: Any, warehouse: Path, ns: str
) -> None:
    name, where = f"glue.{ns}.again", warehouse / f"{ns}-again"  # external: DROP TABLE leaves the files
    make = f"CREATE TABLE {name} (v INT, p STRING) USING parquet PARTITIONED BY (p) {GOVERNED} LOCATION '{where}'"
    spark.sql(make)
    spark.sql(f"INSERT INTO {name} VALUES (1, 'a')")
    old = lf(warehouse).list_transactions(StatusFilter="COMMITTED")["Transactions"][0]
    spark.sql(f"DROP TABLE {name}")
    spark.sql(make)
    spark.sql(f"INSERT INTO {name} VALUES (2, 'b')")
    new = lf(warehouse).list_transactions(StatusFilter="COMMITTED")["Transactions"][0]
    for at in (
        f"VERSION AS OF '{old['TransactionId']}'",
        f"TIMESTAMP AS OF '{old['TransactionEndTime'].isoformat()}'",
    ):
        with pytest.raises(Exception, match=f"InvalidInputException: {at.split(' OF')[0]} .*was made again"):
            spark.sql(f"SELECT * FROM {name} {at}").collect()
    # Its own history reads as it was: empty before its first write, then that write.
    made = new["TransactionStartTime"].isoformat()  # the write's start: the table made, not yet written
    assert spark.sql(f"SELECT * FROM {name} TIMESTAMP AS OF '{made}'").collect() == []
    got = spark.sql(f"SELECT v, p FROM {name} VERSION AS OF '{new['TransactionId']}'").collect()
    assert [tuple(r) for r in got] == [(2, "b")]


def test_a_write_whose_transaction_ends_under_it_fails_and_leaves_no_object_and_no_file(
    spark: Any, warehouse: Path, ns: str, tables: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The job's transaction aborted while it runs (idle past its timeout while its heartbeat stalls), or
    canceled by someone else between the registration of its files and their move: the job fails naming
    it, never commits, and its files go."""
    governed, _ = tables
    folder = warehouse / f"{ns}.db" / "g"
    spark.sql(f"INSERT INTO {governed} VALUES (1, 'a', 1)")
    before = files_in(folder)

    # Canceled by another caller just after its files were registered, before they move into place.
    register = LakeFormation.update_table_objects

    def then_canceled(self: LakeFormation, **kwargs: Any) -> Any:
        answer = register(self, **kwargs)
        LakeFormation(str(warehouse)).cancel_transaction(TransactionId=kwargs["TransactionId"])
        return answer

    monkeypatch.setattr(LakeFormation, "update_table_objects", then_canceled)
    with pytest.raises(Exception, match=r"gluecat TransactionCanceledException: .*aborted \(canceled\)"):
        spark.sql(f"INSERT INTO {governed} VALUES (2, 'b', 2)")
    monkeypatch.setattr(LakeFormation, "update_table_objects", register)
    assert rows(spark, governed) == [(1, "a", 1)]
    assert files_in(folder) == before

    # Idle past a 1 s timeout: its heartbeat stalls (a driver paused), the job runs 2 s.
    monkeypatch.setattr("gluecat.spark.governed.DEFAULT_TIMEOUT_SECONDS", 1.0)
    monkeypatch.setattr("gluecat.spark.governed._Heartbeat.add", lambda self, lf, tx: None)

    def slow(v: int) -> int:
        time.sleep(2)
        return v

    spark.udf.register("slow", slow, "int")
    try:
        with pytest.raises(
            Exception, match=r"gluecat TransactionCanceledException: .*idle for more than 1 s"
        ):
            spark.sql(f"INSERT INTO {governed} SELECT slow(3), 'c', 3")
    finally:
        spark.sql("DROP TEMPORARY FUNCTION slow")
    assert rows(spark, governed) == [(1, "a", 1)]
    assert lf(warehouse).list_transactions()["Transactions"][0]["TransactionStatus"] == "ABORTED"
    assert files_in(folder) == before


def test_an_overwrite_never_deletes_objects_committed_after_its_query_read_the_table(
    spark: Any, warehouse: Path, ns: str, tables: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """INSERT OVERWRITE t ... SELECT ... FROM t reads the table while Spark plans the query, and its job's
    transaction starts after: another writer's commit in between, to a partition the overwrite replaces,
    must make the job fail, not be deleted unread (a lost write)."""
    governed, _ = tables
    spark.sql(f"INSERT INTO {governed} VALUES (1, 'a', 1)")
    folder = warehouse / f"{ns}.db" / "g"
    one = next((folder / "p=a" / "q=1").glob("*.parquet"))
    late = folder / "p=a" / "q=1" / "late.parquet"
    late.write_bytes(one.read_bytes())  # another writer's file, holding row (1, 'a', 1) too
    begin = GovernedWrites.begin

    def planned_then_begun(self: GovernedWrites, table: dict[str, Any], *args: Any) -> str:
        # The query was planned (its read listed the objects); another writer commits, then the job begins.
        other = LakeFormation(str(warehouse))
        tx = other.start_transaction()["TransactionId"]
        add = {
            "Uri": f"file://{late}",
            "ETag": "x",
            "Size": late.stat().st_size,
            "PartitionValues": ["a", "1"],
        }
        other.update_table_objects(
            DatabaseName=ns, TableName="g", TransactionId=tx, WriteOperations=[{"AddObject": add}]
        )
        other.commit_transaction(TransactionId=tx)
        monkeypatch.setattr(GovernedWrites, "begin", begin)
        return begin(self, table, *args)

    monkeypatch.setattr(GovernedWrites, "begin", planned_then_begun)
    with pytest.raises(
        Exception, match=r"gluecat ConcurrentModificationException: .*partition \[\"a\",\"1\"\]"
    ):
        spark.sql(
            f"INSERT OVERWRITE {governed} PARTITION (p = 'a', q = 1) SELECT v + 10 FROM {governed} "
            "WHERE p = 'a' AND q = 1"
        )
    assert rows(spark, governed) == [(1, "a", 1), (1, "a", 1)]  # the other writer's row kept
    spark.sql(
        f"INSERT OVERWRITE {governed} PARTITION (p = 'a', q = 1) SELECT v + 10 FROM {governed} WHERE p = 'a'"
    )
    assert rows(spark, governed) == [(11, "a", 1), (11, "a", 1)]  # run again, it reads both


def test_a_query_reading_the_table_in_several_scans_sees_a_commit_whole_or_not_at_all(
    spark: Any, warehouse: Path, ns: str, tables: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each scan lists the objects when Spark plans it; a commit between the scans of one query (here one
    moving the row from partition a to b) must not be half seen: the query reads one state throughout."""
    governed, _ = tables
    spark.sql(f"INSERT INTO {governed} VALUES (1, 'a', 1)")
    (old,) = objects(warehouse, ns, "g")
    moved = Path(old["Uri"].removeprefix("file://").replace("/p=a/", "/p=b/"))
    moved.parent.mkdir(parents=True)
    moved.write_bytes(Path(old["Uri"].removeprefix("file://")).read_bytes())
    listed = Backend.op_list_objects

    def then_moved(self: Backend, args: dict[str, Any]) -> dict[str, Any]:
        answer = listed(self, args)
        monkeypatch.setattr(Backend, "op_list_objects", listed)  # once, between the first and second scan
        other = LakeFormation(str(warehouse))
        tx = other.start_transaction()["TransactionId"]
        add = {
            "Uri": f"file://{moved}",
            "ETag": old["ETag"],
            "Size": old["Size"],
            "PartitionValues": ["b", "1"],
        }
        other.update_table_objects(
            DatabaseName=ns,
            TableName="g",
            TransactionId=tx,
            WriteOperations=[
                {"DeleteObject": {"Uri": old["Uri"], "PartitionValues": ["a", "1"]}},
                {"AddObject": add},
            ],
        )
        other.commit_transaction(TransactionId=tx)
        return answer

    monkeypatch.setattr(Backend, "op_list_objects", then_moved)
    union = (
        f"SELECT v, p, q FROM {governed} WHERE p = 'a' UNION ALL SELECT v, p, q FROM {governed} WHERE p = 'b'"
    )
    assert [tuple(r) for r in spark.sql(union).collect()] == [(1, "a", 1)]  # the state the first scan read
    assert [tuple(r) for r in spark.sql(union).collect()] == [(1, "b", 1)]  # the next query: the latest


def test_an_overwrite_never_keeps_a_partition_its_query_read_and_replaced(
    spark: Any, warehouse: Path, ns: str, tables: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The job's transaction starts where Spark loaded the table, its query reads the table later: a
    partition committed in between is read by the query, so an overwrite of the whole table must replace
    it or fail, never keep it beside the rows made from it (duplicates), also when the job writes none of
    its rows there."""
    governed, _ = tables
    spark.sql(f"INSERT INTO {governed} VALUES (1, 'a', 1)")
    (old,) = objects(warehouse, ns, "g")
    copy = Path(old["Uri"].removeprefix("file://").replace("/p=a/", "/p=c/"))
    copy.parent.mkdir(parents=True)
    copy.write_bytes(Path(old["Uri"].removeprefix("file://")).read_bytes())
    listed = Backend.op_list_objects

    def committed_then_listed(self: Backend, args: dict[str, Any]) -> dict[str, Any]:
        monkeypatch.setattr(Backend, "op_list_objects", listed)  # once: after the load, before the read
        other = LakeFormation(str(warehouse))
        tx = other.start_transaction()["TransactionId"]
        add = {
            "Uri": f"file://{copy}",
            "ETag": old["ETag"],
            "Size": old["Size"],
            "PartitionValues": ["c", "1"],
        }
        other.update_table_objects(
            DatabaseName=ns, TableName="g", TransactionId=tx, WriteOperations=[{"AddObject": add}]
        )
        other.commit_transaction(TransactionId=tx)
        return listed(self, args)

    monkeypatch.setattr(Backend, "op_list_objects", committed_then_listed)
    with pytest.raises(Exception, match=r'gluecat ConcurrentModificationException: .*partition \["c","1"\]'):
        spark.sql(f"INSERT OVERWRITE {governed} SELECT v + 10, 'a', q FROM {governed}")  # all into a
    assert rows(spark, governed) == [(1, "a", 1), (1, "c", 1)]
    spark.sql(f"INSERT OVERWRITE {governed} SELECT v + 10, 'a', q FROM {governed}")  # run again: replaced
    assert rows(spark, governed) == [(11, "a", 1), (11, "a", 1)]
