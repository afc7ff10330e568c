"""Tables made and changed through Spark SQL are proper Glue tables, seen the same through the Python API."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import AnalysisException

from gluecat import Catalog


@pytest.fixture
def ns(cat_ns: str) -> str:
    """The module's tests run against both catalogs, the warehouse opened here and served (conftest's cat)."""
    return cat_ns


@pytest.mark.parametrize(
    ("provider", "serde", "input_format"),
    [
        (
            "parquet",
            "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
            "MapredParquetInputFormat",
        ),
        ("orc", "org.apache.hadoop.hive.ql.io.orc.OrcSerde", "OrcInputFormat"),
        ("csv", "org.apache.hadoop.hive.serde2.OpenCSVSerde", "TextInputFormat"),
        ("json", "org.apache.hive.hcatalog.data.JsonSerDe", "TextInputFormat"),
    ],
)
def test_create_table_gives_a_hive_compatible_glue_table(
    spark: Any, cat: str, warehouse: Path, ns: str, provider: str, serde: str, input_format: str
) -> None:
    spark.sql(
        f"CREATE TABLE {cat}.{ns}.sales (id BIGINT COMMENT 'key', amount DECIMAL(10,2), dt DATE) "
        f"USING {provider} PARTITIONED BY (dt) COMMENT 'daily sales' TBLPROPERTIES ('team'='bi')"
    )
    spark.sql(f"INSERT INTO {cat}.{ns}.sales VALUES (1, 9.50, DATE'2024-01-01'), (2, 3.25, DATE'2024-01-02')")
    assert [
        tuple(r)
        for r in spark.sql(
            f"SELECT id, CAST(amount AS STRING), dt FROM {cat}.{ns}.sales ORDER BY id"
        ).collect()
    ] == [
        (1, "9.50", __import__("datetime").date(2024, 1, 1)),
        (2, "3.25", __import__("datetime").date(2024, 1, 2)),
    ]

    table = Catalog(str(warehouse)).get_table(DatabaseName=ns, Name="sales")["Table"]
    sd = table["StorageDescriptor"]
    assert sd["SerdeInfo"]["SerializationLibrary"] == serde
    assert sd["InputFormat"].endswith(input_format)
    assert [(c["Name"], c["Type"]) for c in sd["Columns"]] == [("id", "bigint"), ("amount", "decimal(10,2)")]
    assert sd["Columns"][0]["Comment"] == "key"
    assert table["PartitionKeys"] == [{"Name": "dt", "Type": "date"}]
    assert sd["Location"] == f"{warehouse}/{ns}.db/sales"
    assert table["Description"] == "daily sales"
    assert table["Parameters"]["team"] == "bi"
    assert table["Parameters"]["classification"] == provider
    parts = Catalog(str(warehouse)).get_partitions(DatabaseName=ns, TableName="sales")["Partitions"]
    assert sorted(p["Values"][0] for p in parts) == ["2024-01-01", "2024-01-02"]
    assert {p["StorageDescriptor"]["Location"] for p in parts} == {
        f"{warehouse}/{ns}.db/sales/dt=2024-01-01",
        f"{warehouse}/{ns}.db/sales/dt=2024-01-02",
    }


def test_create_if_not_exists_location_and_duplicate(
    spark: Any, cat: str, warehouse: Path, ns: str, tmp_path: Path
) -> None:
    spark.sql(f"CREATE TABLE {cat}.{ns}.ext (a INT) USING parquet LOCATION '{tmp_path}/ext'")
    spark.sql(f"CREATE TABLE IF NOT EXISTS {cat}.{ns}.ext (b STRING) USING parquet")
    with pytest.raises(AnalysisException, match="TABLE_OR_VIEW_ALREADY_EXISTS"):
        spark.sql(f"CREATE TABLE {cat}.{ns}.ext (b STRING) USING parquet")
    table = Catalog(str(warehouse)).get_table(DatabaseName=ns, Name="ext")["Table"]
    assert table["StorageDescriptor"]["Location"] == f"file:{tmp_path}/ext"  # Spark qualifies LOCATION
    assert table["TableType"] == "EXTERNAL_TABLE"
    assert [c["Name"] for c in table["StorageDescriptor"]["Columns"]] == ["a"]
    with pytest.raises(Exception, match="USING avro"):
        spark.sql(f"CREATE TABLE {cat}.{ns}.other (a INT) USING avro")


def test_ctas_and_replace_table(spark: Any, cat: str, ns: str) -> None:
    spark.sql(f"CREATE TABLE {cat}.{ns}.ctas USING parquet PARTITIONED BY (p) AS SELECT 1 AS x, 'a' AS p")
    assert [tuple(r) for r in spark.sql(f"SELECT * FROM {cat}.{ns}.ctas").collect()] == [(1, "a")]
    spark.sql(f"REPLACE TABLE {cat}.{ns}.ctas USING parquet AS SELECT 'new' AS y")
    assert [tuple(r) for r in spark.sql(f"SELECT * FROM {cat}.{ns}.ctas").collect()] == [("new",)]
    assert [f.name for f in spark.table(f"{cat}.{ns}.ctas").schema.fields] == ["y"]


def test_a_replace_table_whose_query_fails_keeps_the_old_table_and_its_rows(
    spark: Any, cat: str, warehouse: Path, ns: str
) -> None:
    # Spark drops the old table before the query runs unless the catalog stages the replacement: a
    # failed query used to leave no table, and a managed table's files deleted.
    spark.sql(f"CREATE TABLE {cat}.{ns}.t USING parquet PARTITIONED BY (p) AS SELECT 1 AS x, 'a' AS p")
    with pytest.raises(Exception, match="boom"):
        spark.sql(f"REPLACE TABLE {cat}.{ns}.t USING parquet AS SELECT raise_error('boom') AS y")
    with pytest.raises(Exception, match="boom"):
        spark.sql(f"CREATE OR REPLACE TABLE {cat}.{ns}.t USING parquet AS SELECT raise_error('boom') AS y")
    assert [tuple(r) for r in spark.sql(f"SELECT * FROM {cat}.{ns}.t").collect()] == [(1, "a")]
    assert [f.name for f in spark.table(f"{cat}.{ns}.t").schema.fields] == ["x", "p"]
    staged = [p for p in (warehouse / f"{ns}.db" / "t").iterdir() if p.name.startswith(".gluecat-staging")]
    assert staged == []


def test_a_replace_table_reads_the_old_rows_it_replaces(
    spark: Any, cat: str, warehouse: Path, ns: str
) -> None:
    spark.sql(f"CREATE TABLE {cat}.{ns}.t USING parquet PARTITIONED BY (p) AS SELECT 1 AS x, 'a' AS p")
    spark.sql(f"REPLACE TABLE {cat}.{ns}.t USING parquet AS SELECT x + 1 AS x, p FROM {cat}.{ns}.t")
    assert [tuple(r) for r in spark.sql(f"SELECT * FROM {cat}.{ns}.t").collect()] == [(2, "a")]
    assert Catalog(str(warehouse)).get_partitions(DatabaseName=ns, TableName="t")["Partitions"] == []
    assert not (warehouse / f"{ns}.db" / "t" / "p=a").exists()  # the old table's files went


# A driver killed (os._exit, and its JVM with it) once its REPLACE TABLE's rows are written, just before
# their catalog commit: the furthest a kill can come before the statement takes effect.
_KILLED_REPLACE = textwrap.dedent(
    """
    import os, sys
    from gluecat.spark import session
    from gluecat.spark.backend import Backend
    warehouse, ns = sys.argv[1:]
    spark = session(warehouse)
    Backend.op_commit_staged = Backend.op_commit_write = lambda self, args: os._exit(9)
    spark.sql(f"REPLACE TABLE glue.{ns}.t USING parquet AS SELECT 'new' AS y")
    """
)


@pytest.mark.parametrize("cat", ["glue"], indirect=True)  # its driver opens the warehouse
def test_a_driver_killed_in_a_replace_table_leaves_the_old_table_whole(
    spark: Any, cat: str, warehouse: Path, ns: str
) -> None:
    spark.sql(f"CREATE TABLE {cat}.{ns}.t USING parquet PARTITIONED BY (p) AS SELECT 1 AS x, 'a' AS p")
    child = subprocess.Popen(
        [sys.executable, "-c", _KILLED_REPLACE, str(warehouse), ns],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        out, _ = child.communicate(timeout=240)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)  # the JVM, if it outlived its driver
    assert child.returncode == 9, out.decode()[-3000:]
    assert [tuple(r) for r in spark.sql(f"SELECT * FROM {cat}.{ns}.t").collect()] == [(1, "a")]
    # What the killed statement wrote stays hidden in its staging folder, and the statement runs again.
    spark.sql(f"REPLACE TABLE {cat}.{ns}.t USING parquet AS SELECT 'new' AS y")
    assert [tuple(r) for r in spark.sql(f"SELECT * FROM {cat}.{ns}.t").collect()] == [("new",)]


def test_a_failed_ctas_leaves_no_table_and_no_folder(spark: Any, cat: str, warehouse: Path, ns: str) -> None:
    with pytest.raises(Exception, match="boom"):
        spark.sql(f"CREATE TABLE {cat}.{ns}.t USING parquet AS SELECT raise_error('boom') AS y")
    assert spark.sql(f"SHOW TABLES IN {cat}.{ns}").collect() == []
    assert not (warehouse / f"{ns}.db" / "t").exists()
    spark.sql(f"CREATE TABLE {cat}.{ns}.t USING parquet AS SELECT 1 AS y")
    assert [tuple(r) for r in spark.sql(f"SELECT * FROM {cat}.{ns}.t").collect()] == [(1,)]


def test_a_failed_ctas_keeps_the_empty_folder_its_location_names(
    spark: Any, cat: str, ns: str, tmp_path: Path
) -> None:
    folder = tmp_path / "made-by-hand"
    folder.mkdir()
    with pytest.raises(Exception, match="boom"):
        spark.sql(
            f"CREATE TABLE {cat}.{ns}.t USING parquet LOCATION '{folder}' AS SELECT raise_error('boom') AS y"
        )
    assert folder.is_dir() and list(folder.iterdir()) == []


def test_show_tables_like_show_create_and_describe(spark: Any, cat: str, ns: str) -> None:
    spark.sql(
        f"CREATE TABLE {cat}.{ns}.orders (id INT, dt STRING) USING parquet PARTITIONED BY (dt) COMMENT 'o'"
    )
    spark.sql(f"CREATE TABLE {cat}.{ns}.users (id INT) USING orc")
    assert [r.tableName for r in spark.sql(f"SHOW TABLES IN {cat}.{ns} LIKE 'ord*'").collect()] == ["orders"]
    ddl = spark.sql(f"SHOW CREATE TABLE {cat}.{ns}.orders").collect()[0][0]
    assert "USING parquet" in ddl and "PARTITIONED BY (dt)" in ddl and "COMMENT 'o'" in ddl
    described = {
        r.col_name: r.data_type for r in spark.sql(f"DESCRIBE TABLE EXTENDED {cat}.{ns}.orders").collect()
    }
    assert described["Provider"] == "parquet"
    assert described["Comment"] == "o"
    assert described["Location"].endswith(f"{ns}.db/orders")


def test_alter_table_columns_and_properties(spark: Any, cat: str, warehouse: Path, ns: str) -> None:
    # CSV: its files find columns by position, so a column can be renamed (test_data_life_cycle has the rules)
    spark.sql(f"CREATE TABLE {cat}.{ns}.evolve (a INT, b STRING, p STRING) USING csv PARTITIONED BY (p)")
    spark.sql(f"ALTER TABLE {cat}.{ns}.evolve ADD COLUMNS (c DOUBLE COMMENT 'new')")
    spark.sql(f"ALTER TABLE {cat}.{ns}.evolve RENAME COLUMN b TO bee")
    spark.sql(f"ALTER TABLE {cat}.{ns}.evolve ALTER COLUMN a TYPE BIGINT")
    spark.sql(f"ALTER TABLE {cat}.{ns}.evolve ALTER COLUMN a COMMENT 'the a'")
    spark.sql(f"ALTER TABLE {cat}.{ns}.evolve DROP COLUMN c")
    spark.sql(f"ALTER TABLE {cat}.{ns}.evolve SET TBLPROPERTIES ('k1'='v1', 'k2'='v2')")
    spark.sql(f"ALTER TABLE {cat}.{ns}.evolve UNSET TBLPROPERTIES ('k2')")
    table = Catalog(str(warehouse)).get_table(DatabaseName=ns, Name="evolve")["Table"]
    cols = table["StorageDescriptor"]["Columns"]
    assert [(c["Name"], c["Type"], c.get("Comment")) for c in cols] == [
        ("a", "bigint", "the a"),
        ("bee", "string", None),
    ]
    assert table["Parameters"]["k1"] == "v1" and "k2" not in table["Parameters"]
    props = {r.key: r.value for r in spark.sql(f"SHOW TBLPROPERTIES {cat}.{ns}.evolve").collect()}
    assert props["k1"] == "v1"
    # UpdateTable archived each change as a table version.
    versions = Catalog(str(warehouse)).get_table_versions(DatabaseName=ns, TableName="evolve")[
        "TableVersions"
    ]
    assert len(versions) == 8


def test_rename_keeps_partitions_and_data(spark: Any, cat: str, warehouse: Path, ns: str) -> None:
    spark.sql(f"CREATE TABLE {cat}.{ns}.old (a INT, p STRING) USING parquet PARTITIONED BY (p)")
    spark.sql(f"INSERT INTO {cat}.{ns}.old VALUES (1, 'x'), (2, 'y')")
    spark.sql(f"ALTER TABLE {cat}.{ns}.old RENAME TO {ns}.new")
    assert [tuple(r) for r in spark.sql(f"SELECT * FROM {cat}.{ns}.new ORDER BY a").collect()] == [
        (1, "x"),
        (2, "y"),
    ]
    with pytest.raises(AnalysisException, match="TABLE_OR_VIEW_NOT_FOUND"):
        spark.sql(f"SELECT * FROM {cat}.{ns}.old")
    parts = Catalog(str(warehouse)).get_partitions(DatabaseName=ns, TableName="new")["Partitions"]
    assert len(parts) == 2


def test_drop_table_deletes_managed_data_only_and_purge_deletes_it(
    spark: Any, cat: str, warehouse: Path, ns: str, tmp_path: Path
) -> None:
    spark.sql(
        f"CREATE TABLE {cat}.{ns}.external (a INT, p STRING) USING parquet PARTITIONED BY (p) LOCATION '{tmp_path}/e'"
    )
    for name in ("managed", "purged"):
        spark.sql(f"CREATE TABLE {cat}.{ns}.{name} (a INT, p STRING) USING parquet PARTITIONED BY (p)")
    for name in ("external", "managed", "purged"):
        spark.sql(f"INSERT INTO {cat}.{ns}.{name} VALUES (1, 'x')")
    spark.sql(f"DROP TABLE {cat}.{ns}.external")
    spark.sql(f"DROP TABLE {cat}.{ns}.managed")
    spark.sql(f"DROP TABLE {cat}.{ns}.purged PURGE")
    assert any((tmp_path / "e" / "p=x").iterdir())  # EXTERNAL_TABLE: the data is not the catalog's to delete
    assert not (warehouse / f"{ns}.db" / "managed").exists()
    assert not (warehouse / f"{ns}.db" / "purged").exists()
    assert Catalog(str(warehouse)).get_tables(DatabaseName=ns)["TableList"] == []


def test_errors_reach_spark_as_its_own_exceptions(spark: Any, cat: str, ns: str) -> None:
    with pytest.raises(AnalysisException, match="SCHEMA_NOT_FOUND"):
        spark.sql(f"CREATE TABLE {cat}.no_such_db.t (a INT) USING parquet")
    with pytest.raises(AnalysisException, match="TABLE_OR_VIEW_NOT_FOUND"):
        spark.sql(f"ALTER TABLE {cat}.{ns}.missing ADD COLUMNS (b INT)")
    spark.sql(f"CREATE TABLE {cat}.{ns}.a (x INT) USING parquet")
    spark.sql(f"CREATE TABLE {cat}.{ns}.b (x INT) USING parquet")
    with pytest.raises(AnalysisException, match="TABLE_OR_VIEW_ALREADY_EXISTS"):
        spark.sql(f"ALTER TABLE {cat}.{ns}.a RENAME TO {ns}.b")
    # Glue's InvalidInputException keeps gluecat's message, not a Py4J trace.
    with pytest.raises(
        Exception, match="gluecat InvalidInputException: .*Partition column p cannot be dropped"
    ):
        spark.sql(f"CREATE TABLE {cat}.{ns}.c (x INT, p STRING) USING parquet PARTITIONED BY (p)")
        spark.sql(f"ALTER TABLE {cat}.{ns}.c DROP COLUMN p")


def test_set_location_and_show_table_extended_partition(
    spark: Any, cat: str, warehouse: Path, ns: str, tmp_path: Path
) -> None:
    spark.sql(f"CREATE TABLE {cat}.{ns}.moved (v INT, p STRING) USING parquet PARTITIONED BY (p)")
    spark.sql(f"ALTER TABLE {cat}.{ns}.moved SET LOCATION '{tmp_path}/new-home'")
    spark.sql(f"INSERT INTO {cat}.{ns}.moved VALUES (1, 'a')")
    assert (tmp_path / "new-home" / "p=a").is_dir()
    info = (
        spark.sql(f"SHOW TABLE EXTENDED IN {cat}.{ns} LIKE 'moved' PARTITION (p='a')")
        .collect()[0]
        .information
    )
    assert f"{tmp_path}/new-home/p=a" in info


def test_create_table_like_copies_columns_partitioning_and_storage(
    spark: Any, cat: str, warehouse: Path, ns: str, tmp_path: Path
) -> None:
    spark.sql(
        f"CREATE TABLE {cat}.{ns}.src (a INT, b STRING, p STRING) USING csv OPTIONS (sep ';') "
        "PARTITIONED BY (p) TBLPROPERTIES ('team'='bi')"
    )
    spark.sql(f"CREATE TABLE {cat}.{ns}.same LIKE {cat}.{ns}.src")
    spark.sql(f"CREATE TABLE {cat}.{ns}.other LIKE {cat}.{ns}.src USING parquet LOCATION '{tmp_path}/other'")
    api = Catalog(str(warehouse))
    src, same, other = (api.get_table(DatabaseName=ns, Name=n)["Table"] for n in ("src", "same", "other"))
    assert same["StorageDescriptor"]["SerdeInfo"] == src["StorageDescriptor"]["SerdeInfo"]
    assert same["StorageDescriptor"]["Columns"] == src["StorageDescriptor"]["Columns"]
    assert same["PartitionKeys"] == src["PartitionKeys"] == other["PartitionKeys"]
    assert same["TableType"] == "MANAGED_TABLE" and "team" not in same["Parameters"]
    assert same["StorageDescriptor"]["Location"] == f"{warehouse}/{ns}.db/same"
    assert other["StorageDescriptor"]["SerdeInfo"]["SerializationLibrary"].endswith("ParquetHiveSerDe")
    assert other["TableType"] == "EXTERNAL_TABLE"
    spark.sql(f"INSERT INTO {cat}.{ns}.same VALUES (1, 'x', 'k')")
    assert [tuple(r) for r in spark.table(f"{cat}.{ns}.same").collect()] == [(1, "x", "k")]


def test_catalog_create_table_infers_the_schema_and_partitions_from_the_files(
    spark: Any, cat: str, warehouse: Path, ns: str, tmp_path: Path
) -> None:
    spark.range(4).selectExpr("id", "CAST(id % 2 AS INT) AS p").write.partitionBy("p").parquet(
        f"{tmp_path}/data"
    )
    df = spark.catalog.createTable(f"{cat}.{ns}.found", path=f"{tmp_path}/data", source="parquet")
    assert [(f.name, f.dataType.simpleString()) for f in df.schema.fields] == [("id", "bigint"), ("p", "int")]
    assert sorted(tuple(r) for r in df.collect()) == [(0, 0), (1, 1), (2, 0), (3, 1)]
    table = Catalog(str(warehouse)).get_table(DatabaseName=ns, Name="found")["Table"]
    assert table["PartitionKeys"] == [{"Name": "p", "Type": "int"}]
    assert table["TableType"] == "EXTERNAL_TABLE"
    assert len(Catalog(str(warehouse)).get_partitions(DatabaseName=ns, TableName="found")["Partitions"]) == 2


def test_alter_table_does_not_overwrite_an_update_made_meanwhile_through_another_door(
    spark: Any, cat: str, warehouse: Path, ns: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ALTER TABLE applies Spark's changes to the table as it read it. A boto3 UpdateTable landing between
    # that read and the write (here through the Python API, while the type change is checked) used to be
    # overwritten; now the ALTER fails with ConcurrentModificationException and the other update stays.
    from gluecat.spark import backend

    t = f"{cat}.{ns}.raced"
    spark.sql(f"CREATE TABLE {t} (a INT) USING parquet")
    glue = Catalog(str(warehouse))
    check = backend._check_readable_types

    def check_while_another_client_updates(catalog: Any, table: Any, changes: Any) -> None:
        current = glue.get_table(DatabaseName=ns, Name="raced")["Table"]
        glue.update_table(
            DatabaseName=ns,
            TableInput={
                "Name": "raced",
                "StorageDescriptor": current["StorageDescriptor"],
                "TableType": current["TableType"],
                "Parameters": {**current["Parameters"], "set_by": "boto3"},
            },
        )
        check(catalog, table, changes)

    monkeypatch.setattr(backend, "_check_readable_types", check_while_another_client_updates)
    with pytest.raises(Exception, match="ConcurrentModificationException"):
        spark.sql(f"ALTER TABLE {t} ALTER COLUMN a TYPE BIGINT")
    monkeypatch.undo()
    table = glue.get_table(DatabaseName=ns, Name="raced")["Table"]
    assert table["Parameters"]["set_by"] == "boto3"
    assert table["StorageDescriptor"]["Columns"] == [{"Name": "a", "Type": "int"}]
    spark.sql(f"ALTER TABLE {t} ALTER COLUMN a TYPE BIGINT")
    table = glue.get_table(DatabaseName=ns, Name="raced")["Table"]
    assert (table["Parameters"]["set_by"], table["StorageDescriptor"]["Columns"][0]["Type"]) == (
        "boto3",
        "bigint",
    )


def test_rename_fails_rather_than_lose_an_update_made_meanwhile_through_another_door(
    spark: Any, cat: str, warehouse: Path, ns: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Glue has no rename: the table is made again under the new name and the old one deleted. An
    # UpdateTable of the old table landing after Spark read it (here while the folder move is planned)
    # used to be deleted with it, the new table being a copy of the state read. Now the rename fails with
    # ConcurrentModificationException and leaves both names, and the data, as they were.
    from gluecat.data.files import DataFiles

    spark.sql(f"CREATE TABLE {cat}.{ns}.old (a INT, p STRING) USING parquet PARTITIONED BY (p)")
    spark.sql(f"INSERT INTO {cat}.{ns}.old VALUES (1, 'x')")
    glue = Catalog(str(warehouse))
    plan = DataFiles.plan_rename

    def plan_while_another_client_updates(self: Any, table: Any, database: str, name: str) -> Any:
        current = glue.get_table(DatabaseName=ns, Name="old")["Table"]
        update = {k: current[k] for k in ("Name", "StorageDescriptor", "PartitionKeys", "TableType")}
        glue.update_table(
            DatabaseName=ns, TableInput={**update, "Parameters": {**current["Parameters"], "set_by": "boto3"}}
        )
        return plan(self, table, database, name)

    monkeypatch.setattr(DataFiles, "plan_rename", plan_while_another_client_updates)
    with pytest.raises(Exception, match="ConcurrentModificationException"):
        spark.sql(f"ALTER TABLE {cat}.{ns}.old RENAME TO {ns}.new")
    monkeypatch.undo()
    assert glue.get_table(DatabaseName=ns, Name="old")["Table"]["Parameters"]["set_by"] == "boto3"
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_table(DatabaseName=ns, Name="new")
    assert [tuple(r) for r in spark.sql(f"SELECT * FROM {cat}.{ns}.old").collect()] == [(1, "x")]
    spark.sql(f"ALTER TABLE {cat}.{ns}.old RENAME TO {ns}.new")  # read again, it renames
    assert glue.get_table(DatabaseName=ns, Name="new")["Table"]["Parameters"]["set_by"] == "boto3"
    assert [tuple(r) for r in spark.sql(f"SELECT * FROM {cat}.{ns}.new").collect()] == [(1, "x")]


def test_rename_carries_a_partition_added_meanwhile_through_another_door(
    spark: Any, cat: str, warehouse: Path, ns: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The partitions are copied in the commit that makes the new table and deletes the old one, so one
    # added after Spark read the table is carried (into the moved folder), not deleted with the old name.
    from gluecat.data.files import DataFiles

    spark.sql(f"CREATE TABLE {cat}.{ns}.old (a INT, p STRING) USING parquet PARTITIONED BY (p)")
    spark.sql(f"INSERT INTO {cat}.{ns}.old VALUES (1, 'x')")
    glue = Catalog(str(warehouse))
    plan = DataFiles.plan_rename

    def plan_while_another_client_adds_a_partition(self: Any, table: Any, database: str, name: str) -> Any:
        sd = glue.get_table(DatabaseName=ns, Name="old")["Table"]["StorageDescriptor"]
        glue.create_partition(
            DatabaseName=ns,
            TableName="old",
            PartitionInput={
                "Values": ["y"],
                "StorageDescriptor": {**sd, "Location": f"{sd['Location']}/p=y"},
            },
        )
        return plan(self, table, database, name)

    monkeypatch.setattr(DataFiles, "plan_rename", plan_while_another_client_adds_a_partition)
    spark.sql(f"ALTER TABLE {cat}.{ns}.old RENAME TO {ns}.new")
    monkeypatch.undo()
    parts = glue.get_partitions(DatabaseName=ns, TableName="new")["Partitions"]
    assert sorted((p["Values"], p["StorageDescriptor"]["Location"]) for p in parts) == [
        (["x"], f"{warehouse}/{ns}.db/new/p=x"),
        (["y"], f"{warehouse}/{ns}.db/new/p=y"),
    ]
    assert [tuple(r) for r in spark.sql(f"SELECT * FROM {cat}.{ns}.new").collect()] == [(1, "x")]


@pytest.mark.parametrize("cat", ["glue"], indirect=True)  # a fault of the local catalog
def test_rename_leaves_the_folder_with_the_new_table_when_its_commit_landed_but_reported_an_error(
    spark: Any, cat: str, warehouse: Path, ns: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A commit can land and still fail its caller (the store lost the answer after publishing it). The
    # moved folder used to move back whenever the commit call failed, leaving the renamed table over an
    # empty folder; now it moves back only while the old table is still there.
    from gluecat.errors import StorageError

    spark.sql(f"CREATE TABLE {cat}.{ns}.old (a INT) USING parquet")
    spark.sql(f"INSERT INTO {cat}.{ns}.old VALUES (1)")
    rename = Catalog.rename_table

    def rename_that_lands_and_fails(self: Catalog, **kwargs: Any) -> Any:
        rename(self, **kwargs)
        raise StorageError("the answer of the commit was lost")

    monkeypatch.setattr(Catalog, "rename_table", rename_that_lands_and_fails)
    with pytest.raises(Exception, match="the answer of the commit was lost"):
        spark.sql(f"ALTER TABLE {cat}.{ns}.old RENAME TO {ns}.new")
    monkeypatch.undo()
    assert [tuple(r) for r in spark.sql(f"SELECT * FROM {cat}.{ns}.new").collect()] == [(1,)]
    assert not (warehouse / f"{ns}.db" / "old").exists()


def test_drop_table_does_not_drop_a_table_made_under_its_name_meanwhile_nor_its_data(
    spark: Any, cat: str, warehouse: Path, ns: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # DROP TABLE plans which folder to delete from the table it read. Another client dropping that table
    # and making one of the same name, at the same folder, before the delete used to lose the new table
    # and its files; now the DROP fails with ConcurrentModificationException and deletes nothing.
    from gluecat.data.files import DataFiles

    spark.sql(f"CREATE TABLE {cat}.{ns}.t (a INT) USING parquet")
    spark.sql(f"INSERT INTO {cat}.{ns}.t VALUES (1)")
    glue = Catalog(str(warehouse))
    plan = DataFiles.plan_drop_table

    def plan_while_another_client_makes_the_table_again(self: Any, table: Any) -> Any:
        read = glue.get_table(DatabaseName=ns, Name="t")["Table"]
        glue.delete_table(DatabaseName=ns, Name="t")
        again = {k: read[k] for k in ("Name", "StorageDescriptor", "PartitionKeys", "Parameters")}
        glue.create_table(DatabaseName=ns, TableInput={**again, "TableType": "EXTERNAL_TABLE"})
        return plan(self, table)

    monkeypatch.setattr(DataFiles, "plan_drop_table", plan_while_another_client_makes_the_table_again)
    with pytest.raises(Exception, match="ConcurrentModificationException"):
        spark.sql(f"DROP TABLE {cat}.{ns}.t")
    monkeypatch.undo()
    assert glue.get_table(DatabaseName=ns, Name="t")["Table"]["TableType"] == "EXTERNAL_TABLE"
    assert [tuple(r) for r in spark.sql(f"SELECT * FROM {cat}.{ns}.t").collect()] == [(1,)]


def test_alter_table_does_not_change_a_table_made_under_its_name_meanwhile(
    spark: Any, cat: str, warehouse: Path, ns: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Both tables are at VersionId 1, so the VersionId check let the ALTER replace the new table with the
    # old one's definition plus the change; now it fails with ConcurrentModificationException.
    from gluecat.spark import backend

    spark.sql(f"CREATE TABLE {cat}.{ns}.t (a INT) USING parquet")
    glue = Catalog(str(warehouse))
    check = backend._check_readable_types

    def check_while_another_client_makes_the_table_again(catalog: Any, table: Any, changes: Any) -> None:
        read = glue.get_table(DatabaseName=ns, Name="t")["Table"]
        glue.delete_table(DatabaseName=ns, Name="t")
        again = {k: read[k] for k in ("Name", "StorageDescriptor", "PartitionKeys", "TableType")}
        glue.create_table(DatabaseName=ns, TableInput={**again, "Parameters": {"made_by": "boto3"}})
        check(catalog, table, changes)

    monkeypatch.setattr(backend, "_check_readable_types", check_while_another_client_makes_the_table_again)
    with pytest.raises(Exception, match="ConcurrentModificationException"):
        spark.sql(f"ALTER TABLE {cat}.{ns}.t SET TBLPROPERTIES ('k'='v')")
    monkeypatch.undo()
    assert glue.get_table(DatabaseName=ns, Name="t")["Table"]["Parameters"] == {"made_by": "boto3"}


def test_a_rename_whose_folder_cannot_move_back_says_where_the_data_is(
    spark: Any, cat: str, warehouse: Path, ns: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The rename fails (another client updated the table), and moving its folder back fails too: the old
    # table would read as empty, so the error says where its files are instead of only the move's error.
    from gluecat.data.files import DataFiles, FolderMove

    spark.sql(f"CREATE TABLE {cat}.{ns}.old (a INT) USING parquet")
    spark.sql(f"INSERT INTO {cat}.{ns}.old VALUES (1)")
    glue = Catalog(str(warehouse))
    plan = DataFiles.plan_rename

    def plan_while_another_client_updates(self: Any, table: Any, database: str, name: str) -> Any:
        current = glue.get_table(DatabaseName=ns, Name="old")["Table"]
        update = {k: current[k] for k in ("Name", "StorageDescriptor", "PartitionKeys", "TableType")}
        glue.update_table(DatabaseName=ns, TableInput={**update, "Parameters": {"set_by": "boto3"}})
        return plan(self, table, database, name)

    def refused(self: FolderMove) -> None:
        raise OSError("the file system refused")

    monkeypatch.setattr(DataFiles, "plan_rename", plan_while_another_client_updates)
    monkeypatch.setattr(FolderMove, "undo", refused)
    with pytest.raises(
        Exception, match=f"could not be moved back .*its data files are in {warehouse}/{ns}.db/new"
    ):
        spark.sql(f"ALTER TABLE {cat}.{ns}.old RENAME TO {ns}.new")
    monkeypatch.undo()
    Path(f"{warehouse}/{ns}.db/new").rename(f"{warehouse}/{ns}.db/old")  # by hand, as the error says
    assert [tuple(r) for r in spark.sql(f"SELECT * FROM {cat}.{ns}.old").collect()] == [(1,)]
