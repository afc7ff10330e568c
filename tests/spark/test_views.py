"""Views through Spark's ViewCatalog, stored as Glue stores views (VIRTUAL_VIEW, ViewOriginalText and
ViewExpandedText), in the one namespace of names that tables and views share."""

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


def rows(spark: Any, sql: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in spark.sql(sql).collect())


def test_view_life_cycle(spark: Any, cat: str, warehouse: Path, ns: str) -> None:
    spark.sql(f"CREATE TABLE {cat}.{ns}.t (a INT, b STRING) USING parquet")
    spark.sql(f"INSERT INTO {cat}.{ns}.t VALUES (1, 'x'), (2, 'y')")
    spark.sql(f"CREATE VIEW {cat}.{ns}.v COMMENT 'big ones' AS SELECT a, b FROM {cat}.{ns}.t WHERE a > 1")
    assert rows(spark, f"SELECT * FROM {cat}.{ns}.v") == [(2, "y")]

    view = Catalog(str(warehouse)).get_table(DatabaseName=ns, Name="v")["Table"]
    assert view["TableType"] == "VIRTUAL_VIEW"
    assert (
        view["ViewOriginalText"] == view["ViewExpandedText"] == f"SELECT a, b FROM {cat}.{ns}.t WHERE a > 1"
    )
    assert [(c["Name"], c["Type"]) for c in view["StorageDescriptor"]["Columns"]] == [
        ("a", "int"),
        ("b", "string"),
    ]
    assert view["Description"] == "big ones"

    assert [r.viewName for r in spark.sql(f"SHOW VIEWS IN {cat}.{ns}").collect()] == ["v"]
    assert sorted(r.tableName for r in spark.sql(f"SHOW TABLES IN {cat}.{ns}").collect()) == ["t", "v"]
    described = {
        r.col_name: r.data_type for r in spark.sql(f"DESCRIBE TABLE EXTENDED {cat}.{ns}.v").collect()
    }
    assert described["Type"] == "VIEW" and "WHERE a > 1" in described["View Text"]

    spark.sql(f"CREATE OR REPLACE VIEW {cat}.{ns}.v AS SELECT a FROM {cat}.{ns}.t")
    assert rows(spark, f"SELECT * FROM {cat}.{ns}.v") == [(1,), (2,)]
    spark.sql(f"ALTER VIEW {cat}.{ns}.v AS SELECT b FROM {cat}.{ns}.t")
    assert rows(spark, f"SELECT * FROM {cat}.{ns}.v") == [("x",), ("y",)]
    spark.sql(f"ALTER VIEW {cat}.{ns}.v SET TBLPROPERTIES ('team'='bi')")
    assert {r.key: r.value for r in spark.sql(f"SHOW TBLPROPERTIES {cat}.{ns}.v").collect()}["team"] == "bi"

    spark.sql(f"DROP VIEW {cat}.{ns}.v")
    spark.sql(f"DROP VIEW IF EXISTS {cat}.{ns}.v")
    with pytest.raises(AnalysisException, match="VIEW_NOT_FOUND"):
        spark.sql(f"DROP VIEW {cat}.{ns}.v")
    assert [t["Name"] for t in Catalog(str(warehouse)).get_tables(DatabaseName=ns)["TableList"]] == ["t"]


def test_tables_and_views_share_one_namespace_of_names(spark: Any, cat: str, ns: str) -> None:
    spark.sql(f"CREATE TABLE {cat}.{ns}.t (a INT) USING parquet")
    spark.sql(f"CREATE VIEW {cat}.{ns}.v AS SELECT 1 AS one")
    with pytest.raises(AnalysisException, match="TABLE_OR_VIEW_ALREADY_EXISTS"):
        spark.sql(f"CREATE VIEW {cat}.{ns}.t AS SELECT 1 AS one")
    with pytest.raises(AnalysisException, match="TABLE_OR_VIEW_ALREADY_EXISTS"):
        spark.sql(f"CREATE TABLE {cat}.{ns}.v (a INT) USING parquet")
    with pytest.raises(AnalysisException, match="WRONG_COMMAND_FOR_OBJECT_TYPE"):
        spark.sql(f"DROP TABLE {cat}.{ns}.v")
    spark.sql(f"ALTER VIEW {cat}.{ns}.v RENAME TO {ns}.w")
    assert rows(spark, f"SELECT * FROM {cat}.{ns}.w") == [(1,)]
    assert [r.viewName for r in spark.sql(f"SHOW VIEWS IN {cat}.{ns}").collect()] == ["w"]


def test_a_view_over_temporary_objects_is_refused_as_spark_refuses_it(spark: Any, cat: str, ns: str) -> None:
    """Spark's v2 view path leaves this check to the catalog: the view was stored, and read in any session
    its query found no temporary view (or another table of that name)."""
    spark.sql("CREATE OR REPLACE TEMPORARY VIEW gluecat_temp_view AS SELECT 7 AS y")
    spark.sql("DECLARE OR REPLACE VARIABLE gluecat_temp_variable INT DEFAULT 5")
    spark.udf.register("gluecat_temp_function", lambda x: x, "int")
    try:
        for query in (
            "SELECT * FROM (SELECT y FROM gluecat_temp_view)",
            "SELECT 1 AS a WHERE 7 IN (SELECT y FROM gluecat_temp_view)",
            "SELECT gluecat_temp_variable AS v",
            "WITH c AS (SELECT gluecat_temp_function(1) AS f) SELECT * FROM c",
        ):
            with pytest.raises(AnalysisException, match="INVALID_TEMP_OBJ_REFERENCE"):
                spark.sql(f"CREATE VIEW {cat}.{ns}.v AS {query}")
            spark.sql(f"CREATE VIEW {cat}.{ns}.v AS SELECT 1 AS one")
            with pytest.raises(AnalysisException, match="INVALID_TEMP_OBJ_REFERENCE"):
                spark.sql(f"ALTER VIEW {cat}.{ns}.v AS {query}")
            spark.sql(f"DROP VIEW {cat}.{ns}.v")
        # A CTE of a temporary view's name is no temporary view.
        spark.sql(
            f"CREATE VIEW {cat}.{ns}.v AS WITH gluecat_temp_view AS (SELECT 1 AS z) SELECT * FROM gluecat_temp_view"
        )
        assert rows(spark, f"SELECT * FROM {cat}.{ns}.v") == [(1,)]
    finally:
        spark.sql("DROP VIEW IF EXISTS gluecat_temp_view")
        spark.sql("DROP TEMPORARY VARIABLE IF EXISTS gluecat_temp_variable")
        spark.sql("DROP TEMPORARY FUNCTION IF EXISTS gluecat_temp_function")


def test_create_or_replace_view_does_not_replace_a_table_made_under_its_name_meanwhile(
    spark: Any, cat: str, warehouse: Path, ns: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another client drops the view and creates a table of its name after Spark read the view. The
    # replace used to overwrite that table with the view (a table made again starts at VersionId 1, so a
    # VersionId alone does not tell them apart); now it fails with ConcurrentModificationException.
    from gluecat.spark import views

    spark.sql(f"CREATE VIEW {cat}.{ns}.v AS SELECT 1 AS a")
    glue = Catalog(str(warehouse))
    get = views._get

    def get_while_another_client_replaces_the_view(catalog: Any, database: str, name: str) -> Any:
        read = get(catalog, database, name)
        glue.delete_table(DatabaseName=ns, Name="v")
        glue.create_table(
            DatabaseName=ns,
            TableInput={
                "Name": "v",
                "TableType": "EXTERNAL_TABLE",
                "StorageDescriptor": {"Columns": [{"Name": "a", "Type": "int"}], "Location": "/tmp/v"},
            },
        )
        return read

    monkeypatch.setattr(views, "_get", get_while_another_client_replaces_the_view)
    with pytest.raises(Exception, match="ConcurrentModificationException"):
        spark.sql(f"CREATE OR REPLACE VIEW {cat}.{ns}.v AS SELECT 2 AS a")
    monkeypatch.undo()
    assert glue.get_table(DatabaseName=ns, Name="v")["Table"]["TableType"] == "EXTERNAL_TABLE"


def test_drop_view_does_not_drop_a_table_made_under_its_name_meanwhile(
    spark: Any, cat: str, warehouse: Path, ns: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gluecat.spark import views

    spark.sql(f"CREATE VIEW {cat}.{ns}.v AS SELECT 1 AS a")
    glue = Catalog(str(warehouse))
    get = views._get

    def get_while_another_client_replaces_the_view(catalog: Any, database: str, name: str) -> Any:
        read = get(catalog, database, name)
        glue.delete_table(DatabaseName=ns, Name="v")
        glue.create_table(DatabaseName=ns, TableInput={"Name": "v", "TableType": "EXTERNAL_TABLE"})
        return read

    monkeypatch.setattr(views, "_get", get_while_another_client_replaces_the_view)
    with pytest.raises(Exception, match="ConcurrentModificationException"):
        spark.sql(f"DROP VIEW {cat}.{ns}.v")
    monkeypatch.undo()
    assert glue.get_table(DatabaseName=ns, Name="v")["Table"]["TableType"] == "EXTERNAL_TABLE"


def test_rename_view_does_not_lose_an_update_made_meanwhile(
    spark: Any, cat: str, warehouse: Path, ns: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ALTER VIEW RENAME made the view read under the new name and deleted the old one: an update of the
    # view by another client in between was lost. Now the rename fails and leaves the updated view.
    from gluecat.spark import views

    spark.sql(f"CREATE VIEW {cat}.{ns}.v AS SELECT 1 AS a")
    glue = Catalog(str(warehouse))
    get = views._get

    def get_while_another_client_updates_the_view(catalog: Any, database: str, name: str) -> Any:
        read = get(catalog, database, name)
        update = {k: read[k] for k in ("Name", "TableType", "StorageDescriptor", "Parameters")}
        glue.update_table(
            DatabaseName=ns,
            TableInput={**update, "ViewOriginalText": "SELECT 2 AS a", "ViewExpandedText": "SELECT 2 AS a"},
        )
        return read

    monkeypatch.setattr(views, "_get", get_while_another_client_updates_the_view)
    with pytest.raises(Exception, match="ConcurrentModificationException"):
        spark.sql(f"ALTER VIEW {cat}.{ns}.v RENAME TO {ns}.w")
    monkeypatch.undo()
    assert rows(spark, f"SELECT * FROM {cat}.{ns}.v") == [(2,)]
    assert [t["Name"] for t in glue.get_tables(DatabaseName=ns)["TableList"]] == ["v"]


def test_show_tables_of_several_pages_lists_a_table_renamed_meanwhile_once(tmp_path: Path) -> None:
    """SHOW TABLES of a database of more than one GetTables page (100) is of one state: a rename (one
    commit) landing between two pages lists the table under its new name, not under neither."""
    from gluecat.spark.views import kinds

    glue = Catalog(str(tmp_path / "wh"), fsync=False)
    glue.create_database(DatabaseInput={"Name": "db"})
    for i in range(1, 151):
        glue.create_table(DatabaseName="db", TableInput={"Name": f"t{i:03d}"})
    other = Catalog(glue.warehouse, fsync=False)
    read = other.get_table(DatabaseName="db", Name="t150")["Table"]
    pages, renamed = glue.get_tables, []

    def get_tables(**kwargs: Any) -> Any:
        page = pages(**kwargs)
        if not renamed:  # another process's rename, after the first page
            renamed.append(other.rename_table(Table=read, NewDatabaseName="db", TableInput={"Name": "t000"}))
        return page

    glue.get_tables = get_tables  # type: ignore[method-assign]
    names = [name for name, _ in kinds(glue, "db")]
    assert ("t000" in names, "t150" in names) == (True, False)
    assert len(names) == 150
