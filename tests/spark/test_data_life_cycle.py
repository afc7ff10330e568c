"""Through Spark SQL, no statement loses data or brings deleted data back: managed data goes with its table,
partition or database, external data is never deleted, and one table's statements never touch another's
files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import AnalysisException

from gluecat import Catalog


def rows(spark: Any, table: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in spark.table(table).collect())


def data_files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("part-*"))


def test_rename_moves_a_managed_tables_folder_so_a_new_table_of_the_old_name_starts_empty(
    spark: Any, warehouse: Path, ns: str
) -> None:
    spark.sql(f"CREATE TABLE glue.{ns}.t (a INT, p STRING) USING parquet PARTITIONED BY (p)")
    spark.sql(f"INSERT INTO glue.{ns}.t VALUES (1, 'x'), (2, 'y')")
    spark.sql(f"ALTER TABLE glue.{ns}.t RENAME TO {ns}.t2")
    assert not (warehouse / f"{ns}.db" / "t").exists()
    assert data_files(warehouse / f"{ns}.db" / "t2")
    parts = Catalog(str(warehouse)).get_partitions(DatabaseName=ns, TableName="t2")["Partitions"]
    assert {p["StorageDescriptor"]["Location"] for p in parts} == {
        f"{warehouse}/{ns}.db/t2/p=x",
        f"{warehouse}/{ns}.db/t2/p=y",
    }

    spark.sql(f"CREATE TABLE glue.{ns}.t (a INT, p STRING) USING parquet PARTITIONED BY (p)")
    assert rows(spark, f"glue.{ns}.t") == []  # not t2's rows
    spark.sql(f"INSERT INTO glue.{ns}.t VALUES (3, 'x')")
    spark.sql(f"DROP TABLE glue.{ns}.t2")  # takes t2's data, not the new t's
    assert rows(spark, f"glue.{ns}.t") == [(3, "x")]


def test_rename_leaves_an_external_tables_data_where_it_is(
    spark: Any, warehouse: Path, ns: str, tmp_path: Path
) -> None:
    spark.sql(f"CREATE TABLE glue.{ns}.e (a INT) USING parquet LOCATION '{tmp_path}/e'")
    spark.sql(f"INSERT INTO glue.{ns}.e VALUES (1)")
    spark.sql(f"ALTER TABLE glue.{ns}.e RENAME TO {ns}.e2")
    assert data_files(tmp_path / "e")
    assert rows(spark, f"glue.{ns}.e2") == [(1,)]
    table = Catalog(str(warehouse)).get_table(DatabaseName=ns, Name="e2")["Table"]
    assert table["StorageDescriptor"]["Location"] == f"file:{tmp_path}/e"


def test_dropping_a_managed_partition_deletes_its_rows_for_good(spark: Any, warehouse: Path, ns: str) -> None:
    t = f"glue.{ns}.t"
    spark.sql(f"CREATE TABLE {t} (a INT, p STRING) USING parquet PARTITIONED BY (p)")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'x'), (2, 'y'), (3, 'z')")
    spark.sql(f"ALTER TABLE {t} DROP PARTITION (p='x')")
    spark.sql(f"ALTER TABLE {t} DROP PARTITION (p='z') PURGE")  # one partition, purged
    assert not (warehouse / f"{ns}.db" / "t" / "p=x").exists()
    spark.sql(f"ALTER TABLE {t} ADD PARTITION (p='x')")
    spark.sql(f"INSERT INTO {t} VALUES (4, 'z')")
    assert rows(spark, t) == [(2, "y"), (4, "z")]


def test_dropping_an_external_partition_keeps_its_files(spark: Any, ns: str, tmp_path: Path) -> None:
    t = f"glue.{ns}.e"
    spark.sql(f"CREATE TABLE {t} (a INT, p STRING) USING parquet PARTITIONED BY (p) LOCATION '{tmp_path}/e'")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'x')")
    spark.sql(f"ALTER TABLE {t} DROP PARTITION (p='x') PURGE")
    assert data_files(tmp_path / "e" / "p=x")


def test_drop_database_cascade_deletes_managed_data_and_keeps_external_data(
    spark: Any, warehouse: Path, tmp_path: Path
) -> None:
    spark.sql("CREATE NAMESPACE glue.cascading")
    spark.sql("CREATE TABLE glue.cascading.m (a INT, p STRING) USING parquet PARTITIONED BY (p)")
    spark.sql(f"CREATE TABLE glue.cascading.e (a INT) USING parquet LOCATION '{tmp_path}/e'")
    spark.sql("INSERT INTO glue.cascading.m VALUES (1, 'x')")
    spark.sql("INSERT INTO glue.cascading.e VALUES (2)")
    spark.sql("DROP NAMESPACE glue.cascading CASCADE")
    assert not (warehouse / "cascading.db").exists()
    assert data_files(tmp_path / "e")
    spark.sql("CREATE NAMESPACE glue.cascading")
    spark.sql("CREATE TABLE glue.cascading.m (a INT, p STRING) USING parquet PARTITIONED BY (p)")
    assert rows(spark, "glue.cascading.m") == []
    spark.sql("DROP NAMESPACE glue.cascading CASCADE")


def test_truncate_of_an_external_table_is_refused_as_spark_refuses_it(
    spark: Any, ns: str, tmp_path: Path
) -> None:
    spark.sql(
        f"CREATE TABLE glue.{ns}.e (a INT, p STRING) USING parquet PARTITIONED BY (p) LOCATION '{tmp_path}/e'"
    )
    spark.sql(f"INSERT INTO glue.{ns}.e VALUES (1, 'x')")
    with pytest.raises(AnalysisException, match="CANNOT_TRUNCATE_EXTERNAL_TABLE") as refused:
        spark.sql(f"TRUNCATE TABLE glue.{ns}.e")
    assert f"`glue`.`{ns}`.`e`" in str(refused.value)
    with pytest.raises(AnalysisException, match="CANNOT_TRUNCATE_EXTERNAL_TABLE"):
        spark.sql(f"TRUNCATE TABLE glue.{ns}.e PARTITION (p='x')")
    assert rows(spark, f"glue.{ns}.e") == [(1, "x")]


def test_drop_table_purge_keeps_an_external_tables_data(spark: Any, ns: str, tmp_path: Path) -> None:
    spark.sql(f"CREATE TABLE glue.{ns}.e (a INT) USING parquet LOCATION '{tmp_path}/e'")
    spark.sql(f"INSERT INTO glue.{ns}.e VALUES (1)")
    spark.sql(f"DROP TABLE glue.{ns}.e PURGE")
    assert data_files(tmp_path / "e")


def test_external_tables_are_reported_as_external(spark: Any, ns: str, tmp_path: Path) -> None:
    spark.sql(f"CREATE TABLE glue.{ns}.e (a INT) USING parquet LOCATION '{tmp_path}/e'")
    spark.sql(f"CREATE TABLE glue.{ns}.m (a INT) USING parquet")
    described = {r.col_name: r.data_type for r in spark.sql(f"DESCRIBE TABLE EXTENDED glue.{ns}.e").collect()}
    assert described["Type"] == "EXTERNAL"
    assert spark.catalog.getTable(f"glue.{ns}.e").tableType == "EXTERNAL"
    assert spark.catalog.getTable(f"glue.{ns}.m").tableType == "MANAGED"
    listed = {t.name: t.tableType for t in spark.catalog.listTables(f"glue.{ns}")}
    assert listed == {"e": "EXTERNAL", "m": "MANAGED"}


def test_a_managed_table_is_not_created_over_files_already_there(
    spark: Any, warehouse: Path, ns: str
) -> None:
    folder = warehouse / f"{ns}.db" / "t"
    folder.mkdir(parents=True)
    spark.range(3).write.parquet(str(folder / "leftover"))
    with pytest.raises(AnalysisException, match="LOCATION_ALREADY_EXISTS"):
        spark.sql(f"CREATE TABLE glue.{ns}.t (id BIGINT) USING parquet")
    with pytest.raises(AnalysisException, match="TABLE_OR_VIEW_NOT_FOUND"):
        spark.table(f"glue.{ns}.t")


def test_rename_column_is_refused_where_the_files_find_columns_by_name(spark: Any, ns: str) -> None:
    spark.sql(f"CREATE TABLE glue.{ns}.pq (a INT, b STRING) USING parquet")
    spark.sql(f"INSERT INTO glue.{ns}.pq VALUES (1, 'x')")
    with pytest.raises(Exception, match="cannot be renamed: the table's data files find columns by name"):
        spark.sql(f"ALTER TABLE glue.{ns}.pq RENAME COLUMN b TO c")
    assert rows(spark, f"glue.{ns}.pq") == [(1, "x")]
    spark.sql(f"CREATE TABLE glue.{ns}.lines (a INT, b STRING) USING csv")
    spark.sql(f"INSERT INTO glue.{ns}.lines VALUES (1, 'x')")
    spark.sql(f"ALTER TABLE glue.{ns}.lines RENAME COLUMN b TO c")  # CSV fields are found by position
    assert [tuple(r) for r in spark.sql(f"SELECT a, c FROM glue.{ns}.lines").collect()] == [(1, "x")]


def test_a_dropped_columns_old_values_never_come_back(spark: Any, ns: str) -> None:
    t = f"glue.{ns}.t"
    spark.sql(f"CREATE TABLE {t} (a INT, b STRING) USING parquet")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'secret')")
    spark.sql(f"ALTER TABLE {t} DROP COLUMN b")
    with pytest.raises(Exception, match="Column b was dropped"):
        spark.sql(f"ALTER TABLE {t} ADD COLUMNS (b STRING)")
    spark.sql(f"ALTER TABLE {t} ADD COLUMNS (c STRING)")
    assert rows(spark, t) == [(1, None)]


# A value of each type (the float exact in binary: text formats read its written digits).
TYPED_VALUES = {
    "tinyint": "CAST(-7 AS TINYINT)",
    "int": "16777217",
    "bigint": "CAST(9007199254740993 AS BIGINT)",
    "float": "CAST(1.5 AS FLOAT)",
    "double": "CAST(0.1 AS DOUBLE)",
    "decimal(5,2)": "CAST(-123.45 AS DECIMAL(5,2))",
    "decimal(20,0)": "CAST(12345678901234567890 AS DECIMAL(20,0))",
    "date": "DATE'2024-02-29'",
    "timestamp": "TIMESTAMP'2024-02-29 12:34:56.789'",
    "timestamp_ntz": "TIMESTAMP_NTZ'2024-02-29 12:34:56.789'",
    "string": "'abc'",
}


@pytest.mark.parametrize(
    "fmt", ["USING parquet", "USING orc", "USING json", "USING csv", "STORED AS TEXTFILE"]
)
def test_a_column_type_change_is_refused_unless_the_files_read_as_the_new_type(
    spark: Any, ns: str, fmt: str
) -> None:
    """Spark's built-in catalog refuses every type change. gluecat takes a widening that the table's
    files, written with the old type, read as (each value as CAST gives it), in a session time zone
    other than UTC and with either reader; it refused none, so that Parquet's int -> string or date ->
    timestamp failed every later read, and decimal(20,0) -> string or JSON's timestamp -> bigint read
    other values."""
    name = f"glue.{ns}.retyped"
    accepted = []
    spark.conf.set("spark.sql.session.timeZone", "America/Los_Angeles")
    try:
        for old, value in TYPED_VALUES.items():
            if old == "timestamp_ntz" and fmt == "STORED AS TEXTFILE":
                continue  # Hive's text SerDe writes no timestamp_ntz
            fresh = False
            for new in TYPED_VALUES:
                if not fresh:  # a refused change leaves the table as it was
                    spark.sql(f"DROP TABLE IF EXISTS {name}")
                    spark.sql(f"CREATE TABLE {name} (a {old}, b INT) {fmt}")
                    spark.sql(f"INSERT INTO {name} VALUES ({value}, 1)")
                    fresh = True
                try:
                    spark.sql(f"ALTER TABLE {name} ALTER COLUMN a TYPE {new}")
                except AnalysisException:
                    continue  # refused by Spark's analysis
                except Exception as e:
                    if "UNSUPPORTED_TABLE_CHANGE" not in str(e):
                        raise
                    continue  # refused by gluecat
                accepted.append((old, new))
                fresh = False
                expected = spark.sql(f"SELECT CAST(CAST({value} AS {new}) AS STRING) AS a").first().a
                for vectorized in ("true", "false"):
                    spark.conf.set("spark.sql.parquet.enableVectorizedReader", vectorized)
                    spark.conf.set("spark.sql.orc.enableVectorizedReader", vectorized)
                    got = spark.sql(f"SELECT CAST(a AS STRING) AS a FROM {name}").first().a
                    assert got == expected, (old, new, vectorized)
    finally:
        for key in ("session.timeZone", "parquet.enableVectorizedReader", "orc.enableVectorizedReader"):
            spark.conf.unset(f"spark.sql.{key}")
    assert {("int", "bigint"), ("int", "decimal(20,0)"), ("float", "double")} <= set(accepted)
    assert ("int", "string") not in accepted and ("date", "timestamp") not in accepted


def test_a_type_change_counts_every_type_the_files_were_written_with(spark: Any, ns: str) -> None:
    """int -> bigint -> decimal(20,0) are each read right; decimal(20,0) -> decimal(22,2) would be too,
    but the first files hold Parquet ints, which Parquet reads as decimals of scale 0 only."""
    name = f"glue.{ns}.widened"
    spark.sql(f"CREATE TABLE {name} (a INT) USING parquet")
    spark.sql(f"INSERT INTO {name} VALUES (1)")
    spark.sql(f"ALTER TABLE {name} ALTER COLUMN a TYPE BIGINT")
    spark.sql(f"INSERT INTO {name} VALUES (2)")
    spark.sql(f"ALTER TABLE {name} ALTER COLUMN a TYPE DECIMAL(20,0)")
    with pytest.raises(Exception, match="UNSUPPORTED_TABLE_CHANGE.*files hold values of type (big)?int,"):
        spark.sql(f"ALTER TABLE {name} ALTER COLUMN a TYPE DECIMAL(22,2)")
    assert sorted(int(r.a) for r in spark.table(name).collect()) == [1, 2]


def test_other_tables_data_survives_every_drop_truncate_rename_and_overwrite(
    spark: Any, warehouse: Path, ns: str, tmp_path: Path
) -> None:
    """An external table whose folder lies inside a managed table's folder, another reading the same folder
    as a managed table: no statement on the managed tables deletes what the external ones read."""
    home = warehouse / f"{ns}.db"
    spark.sql(f"CREATE TABLE glue.{ns}.m (a INT, p STRING) USING parquet PARTITIONED BY (p)")
    spark.sql(f"INSERT INTO glue.{ns}.m VALUES (1, 'x')")
    spark.sql(f"CREATE TABLE glue.{ns}.inner (a INT) USING parquet LOCATION '{home}/m/p=x/inner'")
    spark.sql(f"INSERT INTO glue.{ns}.inner VALUES (7)")
    spark.sql(f"CREATE TABLE glue.{ns}.twin (a INT) USING parquet")
    spark.sql(f"INSERT INTO glue.{ns}.twin VALUES (8)")
    spark.sql(f"CREATE TABLE glue.{ns}.reader (a INT) USING parquet LOCATION '{home}/twin'")

    spark.sql(f"TRUNCATE TABLE glue.{ns}.m")
    spark.sql(f"INSERT OVERWRITE glue.{ns}.m VALUES (2, 'x')")
    spark.sql(f"ALTER TABLE glue.{ns}.m DROP PARTITION (p='x')")
    assert rows(spark, f"glue.{ns}.inner") == [(7,)]
    spark.sql(f"DROP TABLE glue.{ns}.m")
    assert rows(spark, f"glue.{ns}.inner") == [(7,)]

    with pytest.raises(Exception, match=f"{ns}.reader also reads"):
        spark.sql(f"TRUNCATE TABLE glue.{ns}.twin")
    with pytest.raises(Exception, match=f"{ns}.reader also reads"):
        spark.sql(f"INSERT OVERWRITE glue.{ns}.twin VALUES (9)")
    spark.sql(f"ALTER TABLE glue.{ns}.twin RENAME TO {ns}.twin2")  # the folder stays: reader uses it
    assert rows(spark, f"glue.{ns}.reader") == [(8,)]
    spark.sql(f"DROP TABLE glue.{ns}.twin2")
    assert rows(spark, f"glue.{ns}.reader") == [(8,)]


def test_rows_of_a_partition_dropped_through_another_client_do_not_come_back_with_a_new_one(
    spark: Any, warehouse: Path, ns: str
) -> None:
    # Glue's BatchDeletePartition unregisters a partition and keeps its files (Spark's DROP PARTITION of a
    # managed table deletes them). An INSERT of the same values used to register the folder again, and
    # the dropped rows came back beside the new ones. It is now refused, and nothing is written.
    t = f"glue.{ns}.t"
    spark.sql(f"CREATE TABLE {t} (a INT, p STRING) USING parquet PARTITIONED BY (p)")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'x'), (2, 'y')")
    glue = Catalog(str(warehouse))
    glue.batch_delete_partition(DatabaseName=ns, TableName="t", PartitionsToDelete=[{"Values": ["x"]}])
    for statement in (
        f"INSERT INTO {t} VALUES (3, 'x')",
        f"INSERT OVERWRITE {t} PARTITION (p = 'x') VALUES (3)",
    ):
        with pytest.raises(
            Exception, match=r"Partition \['x'\] of .* is new, but its folder .* holds data files"
        ):
            spark.sql(statement)
    assert sorted(tuple(r) for r in spark.sql(f"SELECT * FROM {t}").collect()) == [(2, "y")]
    spark.sql(f"INSERT INTO {t} VALUES (4, 'y'), (5, 'z')")  # existing and fresh partitions as before
    assert sorted(tuple(r) for r in spark.sql(f"SELECT * FROM {t}").collect()) == [
        (2, "y"),
        (4, "y"),
        (5, "z"),
    ]


def test_a_managed_table_of_a_mixed_case_name_is_managed_where_the_catalog_names_it(
    spark: Any, warehouse: Path, ns: str
) -> None:
    # Glue stores both names in lower case; a folder named as Spark spelled them (MyDb.db/MixedCase)
    # lay outside the folder the table's database manages (mydb.db), so DROP TABLE kept its rows and
    # a new table of that name was refused its folder.
    db = f"{ns}_Mixed"
    spark.sql(f"CREATE NAMESPACE glue.{db}")
    try:
        spark.sql(f"CREATE TABLE glue.{db}.MixedCase (a INT) USING parquet")
        spark.sql(f"INSERT INTO glue.{db}.MixedCase VALUES (1)")
        folder = warehouse / f"{db.lower()}.db" / "mixedcase"
        assert data_files(folder)
        spark.sql(f"DROP TABLE glue.{db}.MixedCase")
        assert not folder.exists()
        spark.sql(f"CREATE TABLE glue.{db}.MixedCase (a INT) USING parquet")
        assert rows(spark, f"glue.{db}.MixedCase") == []
    finally:
        spark.sql(f"DROP NAMESPACE glue.{db} CASCADE")
    assert not (warehouse / f"{db.lower()}.db").exists()


def test_a_name_that_cannot_be_a_folders_gets_no_managed_folder(spark: Any, warehouse: Path, ns: str) -> None:
    # A managed table's folder is named after it: `a/b` would lie inside table a's folder (read as
    # a's rows), `x/../../y` outside its database's, `.` would be the database's folder itself.
    spark.sql(f"CREATE TABLE glue.{ns}.a (v INT) USING parquet")
    spark.sql(f"INSERT INTO glue.{ns}.a VALUES (1)")
    for name in ("a/b", ".", "x/../../y"):
        with pytest.raises(Exception, match="cannot be the name of a folder"):
            spark.sql(f"CREATE TABLE glue.{ns}.`{name}` (v INT) USING parquet")
        with pytest.raises(Exception, match="cannot be the name of a folder"):
            spark.sql(f"ALTER TABLE glue.{ns}.a RENAME TO {ns}.`{name}`")
    spark.sql(f"CREATE TABLE glue.{ns}.`c/d` (v INT) USING parquet LOCATION '{warehouse}/{ns}-c-d'")
    names = sorted(t["Name"] for t in Catalog(str(warehouse)).get_tables(DatabaseName=ns)["TableList"])
    assert names == ["a", "c/d"]
    assert rows(spark, f"glue.{ns}.a") == [(1,)]
    assert sorted(p.name for p in (warehouse / f"{ns}.db").iterdir()) == ["a"]


def test_rows_of_partitions_whose_folder_names_spark_escapes_are_kept_at_a_file_location(
    spark: Any, ns: str, tmp_path: Path
) -> None:
    # Spark records LOCATION '/x' as file:/x and writes the value a:b to the folder k=a%3Ab, literally.
    # Read as a URI that folder was k=a:b: the commit found no files to move, registered the
    # partition, deleted the job's folder with the files, and the INSERT succeeded with its rows gone.
    t = f"glue.{ns}.e"
    spark.sql(f"CREATE TABLE {t} (i INT, k STRING) USING parquet PARTITIONED BY (k) LOCATION '{tmp_path}/e'")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'a:b'), (2, 'plain'), (3, '50%'), (4, '2024-01-01 10:00')")
    assert rows(spark, t) == [(1, "a:b"), (2, "plain"), (3, "50%"), (4, "2024-01-01 10:00")]
    spark.sql(f"INSERT OVERWRITE {t} PARTITION (k='a:b') VALUES (5)")
    assert rows(spark, t) == [(2, "plain"), (3, "50%"), (4, "2024-01-01 10:00"), (5, "a:b")]
    assert data_files(tmp_path / "e") == sorted(
        f"{folder}/{f.name}"
        for folder in ("k=2024-01-01 10%3A00", "k=50%25", "k=a%3Ab", "k=plain")
        for f in (tmp_path / "e" / folder).glob("part-*")
    )
