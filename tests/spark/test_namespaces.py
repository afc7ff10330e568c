"""Namespaces through Spark SQL are Glue databases of the warehouse."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import AnalysisException

from gluecat import Catalog


@pytest.fixture
def ns(cat_ns: str) -> str:
    """The module's tests run against both catalogs, the warehouse opened here and served (conftest's cat)."""
    return cat_ns


def test_create_describe_alter_and_drop_namespace(spark: Any, cat: str, warehouse: Path) -> None:
    spark.sql(f"CREATE NAMESPACE {cat}.ns_life COMMENT 'sales data' WITH DBPROPERTIES ('team'='bi')")
    assert "ns_life" in [r[0] for r in spark.sql(f"SHOW NAMESPACES IN {cat}").collect()]
    db = Catalog(str(warehouse)).get_database(Name="ns_life")["Database"]
    assert db["Description"] == "sales data"
    assert db["Parameters"]["team"] == "bi"

    spark.sql(f"ALTER NAMESPACE {cat}.ns_life SET PROPERTIES ('team'='ops')")
    described = {r[0]: r[1] for r in spark.sql(f"DESCRIBE NAMESPACE EXTENDED {cat}.ns_life").collect()}
    assert described["Comment"] == "sales data"
    assert "ops" in described["Properties"]

    spark.sql(f"DROP NAMESPACE {cat}.ns_life")
    assert "ns_life" not in [r[0] for r in spark.sql(f"SHOW NAMESPACES IN {cat}").collect()]


def test_missing_and_duplicate_namespaces_are_spark_errors(spark: Any, cat: str) -> None:
    spark.sql(f"CREATE NAMESPACE {cat}.ns_dup")
    with pytest.raises(AnalysisException, match="SCHEMA_ALREADY_EXISTS"):
        spark.sql(f"CREATE NAMESPACE {cat}.ns_dup")
    with pytest.raises(AnalysisException, match="SCHEMA_NOT_FOUND"):
        spark.sql(f"DESCRIBE NAMESPACE {cat}.ns_never_made").collect()
    spark.sql(f"DROP NAMESPACE {cat}.ns_dup")


def test_show_tables_lists_python_made_tables_and_drop_needs_cascade(
    spark: Any, cat: str, warehouse: Path
) -> None:
    api = Catalog(str(warehouse))
    api.create_database(DatabaseInput={"Name": "ns_tables"})
    api.create_table(DatabaseName="ns_tables", TableInput={"Name": "orders", "TableType": "EXTERNAL_TABLE"})
    assert [r.tableName for r in spark.sql(f"SHOW TABLES IN {cat}.ns_tables").collect()] == ["orders"]

    with pytest.raises(AnalysisException, match="SCHEMA_NOT_EMPTY"):
        spark.sql(f"DROP NAMESPACE {cat}.ns_tables")
    spark.sql(f"DROP NAMESPACE {cat}.ns_tables CASCADE")
    assert "ns_tables" not in [db["Name"] for db in api.get_databases()["DatabaseList"]]


def test_describe_table_shows_glue_columns_and_partition_keys(spark: Any, cat: str, warehouse: Path) -> None:
    api = Catalog(str(warehouse))
    api.create_database(DatabaseInput={"Name": "ns_describe"})
    api.create_table(
        DatabaseName="ns_describe",
        TableInput={
            "Name": "orders",
            "StorageDescriptor": {"Columns": [{"Name": "amount", "Type": "double", "Comment": "EUR"}]},
            "PartitionKeys": [{"Name": "dt", "Type": "date"}],
        },
    )
    rows = spark.sql(f"DESCRIBE TABLE {cat}.ns_describe.orders").collect()
    assert [(r.col_name, r.data_type) for r in rows[:2]] == [("amount", "double"), ("dt", "date")]
    assert ("# Partition Information", "") in [(r.col_name, r.data_type) for r in rows]
    with pytest.raises(AnalysisException, match="TABLE_OR_VIEW_NOT_FOUND"):
        spark.sql(f"DESCRIBE TABLE {cat}.ns_describe.missing")

    spark.sql(f"DROP TABLE {cat}.ns_describe.orders")
    assert api.get_tables(DatabaseName="ns_describe")["TableList"] == []
    with pytest.raises(AnalysisException, match="TABLE_OR_VIEW_NOT_FOUND"):
        spark.sql(f"DROP TABLE {cat}.ns_describe.orders")
    spark.sql(f"DROP NAMESPACE {cat}.ns_describe")


def test_namespace_location_is_the_glue_location_uri(spark: Any, cat: str, warehouse: Path) -> None:
    spark.sql(f"CREATE NAMESPACE {cat}.ns_loc LOCATION 'file:{warehouse}/elsewhere'")
    spark.sql(f"ALTER NAMESPACE {cat}.ns_loc SET LOCATION 'file:{warehouse}/moved'")
    db = Catalog(str(warehouse)).get_database(Name="ns_loc")["Database"]
    assert db["LocationUri"] == f"file:{warehouse}/moved"
    spark.sql(f"DROP NAMESPACE {cat}.ns_loc")
