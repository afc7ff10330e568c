"""Glue table calls: create, get, list, update with versions, delete, time travel."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gluecat import Catalog
from gluecat.catalog.context import Limits

from .conftest import table_input


@pytest.fixture
def sales(catalog: Catalog) -> Catalog:
    catalog.create_database(DatabaseInput={"Name": "sales"})
    return catalog


def test_create_table_stores_the_definition_as_a_glue_table(sales: Catalog) -> None:
    sales.create_table(DatabaseName="sales", TableInput=table_input("Orders"))
    t = sales.get_table(DatabaseName="sales", Name="orders")["Table"]
    assert t["Name"] == "orders"
    assert t["DatabaseName"] == "sales"
    assert t["VersionId"] == "1"
    assert t["StorageDescriptor"]["Columns"][1] == {"Name": "amount", "Type": "double", "Comment": "in USD"}
    assert t["PartitionKeys"] == [{"Name": "dt", "Type": "string"}]
    assert t["Parameters"] == {"classification": "parquet"}
    assert t["IsRegisteredWithLakeFormation"] is False
    assert isinstance(t["CreateTime"], datetime) and t["CreateTime"].tzinfo is not None


def test_a_table_needs_its_database(catalog: Catalog) -> None:
    with pytest.raises(catalog.exceptions.EntityNotFoundException, match="Database nope not found"):
        catalog.create_table(DatabaseName="nope", TableInput=table_input("t"))


def test_a_table_cannot_be_created_twice(sales: Catalog) -> None:
    sales.create_table(DatabaseName="sales", TableInput=table_input("t"))
    with pytest.raises(sales.exceptions.AlreadyExistsException):
        sales.create_table(DatabaseName="sales", TableInput=table_input("T"))


@pytest.mark.in_process
def test_a_rejected_create_changes_nothing(sales: Catalog) -> None:
    version = sales.store.latest().version
    with pytest.raises(sales.exceptions.InvalidInputException, match="Name"):
        sales.create_table(DatabaseName="sales", TableInput=table_input("x" * 256))
    assert sales.store.latest().version == version


def test_only_primitive_types_are_partition_keys(sales: Catalog) -> None:
    tags = [{"Name": "tags", "Type": "array<string>"}]
    with pytest.raises(sales.exceptions.InvalidInputException, match=r"PartitionKeys\[0\]\.Type.*primitive"):
        sales.create_table(DatabaseName="sales", TableInput=table_input("t", PartitionKeys=tags))
    assert sales.get_tables(DatabaseName="sales")["TableList"] == []
    sales.create_table(DatabaseName="sales", TableInput=table_input("t"))
    with pytest.raises(sales.exceptions.InvalidInputException, match=r"PartitionKeys\[0\]\.Type.*primitive"):
        sales.update_table(DatabaseName="sales", TableInput=table_input("t", PartitionKeys=tags))
    t = sales.get_table(DatabaseName="sales", Name="t")["Table"]
    assert (t["VersionId"], t["PartitionKeys"]) == ("1", [{"Name": "dt", "Type": "string"}])


def test_the_returned_table_is_the_callers_own_copy(sales: Catalog) -> None:
    sales.create_table(DatabaseName="sales", TableInput=table_input("t"))
    sales.get_table(DatabaseName="sales", Name="t")["Table"]["Parameters"]["x"] = "y"
    assert "x" not in sales.get_table(DatabaseName="sales", Name="t")["Table"]["Parameters"]


def test_update_archives_the_previous_version(sales: Catalog) -> None:
    sales.create_table(DatabaseName="sales", TableInput=table_input("t"))
    sales.update_table(DatabaseName="sales", TableInput=table_input("t", Description="v2"))
    sales.update_table(DatabaseName="sales", TableInput=table_input("t", Description="v3"))
    t = sales.get_table(DatabaseName="sales", Name="t")["Table"]
    assert (t["VersionId"], t["Description"]) == ("3", "v3")
    versions = sales.get_table_versions(DatabaseName="sales", TableName="t")["TableVersions"]
    assert [(v["VersionId"], v["Table"]["Description"]) for v in versions] == [
        ("1", "orders by day"),
        ("2", "v2"),
        ("3", "v3"),
    ]
    v2 = sales.get_table_version(DatabaseName="sales", TableName="t", VersionId="2")["TableVersion"]
    assert v2["Table"]["Description"] == "v2"
    assert t["CreateTime"] == v2["Table"]["CreateTime"]


def test_skip_archive_replaces_the_version_instead_of_keeping_it(sales: Catalog) -> None:
    sales.create_table(DatabaseName="sales", TableInput=table_input("t"))
    sales.update_table(DatabaseName="sales", TableInput=table_input("t", Description="v2"), SkipArchive=True)
    versions = sales.get_table_versions(DatabaseName="sales", TableName="t")["TableVersions"]
    assert [v["VersionId"] for v in versions] == ["2"]


def test_a_stale_version_id_is_a_concurrent_modification(sales: Catalog) -> None:
    sales.create_table(DatabaseName="sales", TableInput=table_input("t"))
    sales.update_table(DatabaseName="sales", TableInput=table_input("t", Description="a"), VersionId="1")
    with pytest.raises(sales.exceptions.ConcurrentModificationException, match="VersionId 2"):
        sales.update_table(DatabaseName="sales", TableInput=table_input("t", Description="b"), VersionId="1")
    assert sales.get_table(DatabaseName="sales", Name="t")["Table"]["Description"] == "a"


def test_updating_a_missing_table_is_entity_not_found(sales: Catalog) -> None:
    with pytest.raises(sales.exceptions.EntityNotFoundException):
        sales.update_table(DatabaseName="sales", TableInput=table_input("t"))


def test_table_versions_page(sales: Catalog) -> None:
    sales.create_table(DatabaseName="sales", TableInput=table_input("t"))
    for i in range(11):
        sales.update_table(DatabaseName="sales", TableInput=table_input("t", Description=str(i)))
    ids, token = [], None
    while True:
        page = sales.get_table_versions(
            DatabaseName="sales", TableName="t", MaxResults=5, **({"NextToken": token} if token else {})
        )
        ids += [v["VersionId"] for v in page["TableVersions"]]
        token = page.get("NextToken")
        if not token:
            break
    assert ids == [str(i) for i in range(1, 13)]


def test_deleting_versions_one_and_in_a_batch(sales: Catalog) -> None:
    sales.create_table(DatabaseName="sales", TableInput=table_input("t"))
    for i in range(3):
        sales.update_table(DatabaseName="sales", TableInput=table_input("t", Description=str(i)))
    sales.delete_table_version(DatabaseName="sales", TableName="t", VersionId="1")
    with pytest.raises(sales.exceptions.EntityNotFoundException):
        sales.get_table_version(DatabaseName="sales", TableName="t", VersionId="1")
    out = sales.batch_delete_table_version(
        DatabaseName="sales", TableName="t", VersionIds=["2", "9", "x", "4"]
    )
    codes = {e["VersionId"]: e["ErrorDetail"]["ErrorCode"] for e in out["Errors"]}
    assert codes == {
        "9": "EntityNotFoundException",
        "x": "InvalidInputException",
        "4": "InvalidInputException",
    }
    ids = [
        v["VersionId"] for v in sales.get_table_versions(DatabaseName="sales", TableName="t")["TableVersions"]
    ]
    assert ids == ["3", "4"]


@pytest.mark.parametrize("version_id", ["\u00b2", "\u0661", "abc", "-1", "1.0"])
def test_a_version_id_must_be_a_decimal_integer(sales: Catalog, version_id: str) -> None:
    # '\u00b2' (superscript two) and '\u0661' (Arabic-Indic one) pass str.isdigit(): the first used to
    # crash the call (InternalServiceException over the wire), the second to be read as version 1.
    sales.create_table(DatabaseName="sales", TableInput=table_input("t"))
    sales.update_table(DatabaseName="sales", TableInput=table_input("t", Description="v2"))
    with pytest.raises(sales.exceptions.InvalidInputException, match="VersionId"):
        sales.get_table_version(DatabaseName="sales", TableName="t", VersionId=version_id)
    with pytest.raises(sales.exceptions.InvalidInputException, match="VersionId"):
        sales.delete_table_version(DatabaseName="sales", TableName="t", VersionId=version_id)
    out = sales.batch_delete_table_version(DatabaseName="sales", TableName="t", VersionIds=[version_id])
    assert [(e["VersionId"], e["ErrorDetail"]["ErrorCode"]) for e in out["Errors"]] == [
        (version_id, "InvalidInputException")
    ]
    with pytest.raises(sales.exceptions.InvalidInputException, match="VersionId"):
        sales.update_table(
            DatabaseName="sales", TableInput=table_input("t", Description="v3"), VersionId=version_id
        )
    versions = sales.get_table_versions(DatabaseName="sales", TableName="t")["TableVersions"]
    assert [(v["VersionId"], v["Table"]["Description"]) for v in versions] == [
        ("1", "orders by day"),
        ("2", "v2"),
    ]


def test_a_version_id_is_compared_as_the_integer_it_represents(sales: Catalog) -> None:
    sales.create_table(DatabaseName="sales", TableInput=table_input("t"))
    assert (
        sales.get_table_version(DatabaseName="sales", TableName="t", VersionId="01")["TableVersion"][
            "VersionId"
        ]
        == "1"
    )
    sales.update_table(DatabaseName="sales", TableInput=table_input("t", Description="v2"), VersionId="01")
    assert sales.get_table(DatabaseName="sales", Name="t")["Table"]["VersionId"] == "2"
    with pytest.raises(sales.exceptions.ConcurrentModificationException):
        sales.update_table(
            DatabaseName="sales", TableInput=table_input("t", Description="v3"), VersionId="01"
        )


def test_the_current_version_cannot_be_deleted(sales: Catalog) -> None:
    sales.create_table(DatabaseName="sales", TableInput=table_input("t"))
    with pytest.raises(sales.exceptions.InvalidInputException, match="current version"):
        sales.delete_table_version(DatabaseName="sales", TableName="t", VersionId="1")


def test_batch_delete_version_ids_are_limited_to_100(sales: Catalog) -> None:
    sales.create_table(DatabaseName="sales", TableInput=table_input("t"))
    with pytest.raises(sales.exceptions.InvalidInputException, match="VersionIds"):
        sales.batch_delete_table_version(DatabaseName="sales", TableName="t", VersionIds=["1"] * 101)


def test_delete_table_removes_versions_and_statistics(sales: Catalog) -> None:
    sales.create_table(DatabaseName="sales", TableInput=table_input("t"))
    sales.update_table(DatabaseName="sales", TableInput=table_input("t", Description="v2"))
    sales.delete_table(DatabaseName="sales", Name="t")
    with pytest.raises(sales.exceptions.EntityNotFoundException):
        sales.get_table(DatabaseName="sales", Name="t")
    sales.create_table(DatabaseName="sales", TableInput=table_input("t"))
    versions = sales.get_table_versions(DatabaseName="sales", TableName="t")["TableVersions"]
    assert [v["VersionId"] for v in versions] == ["1"]
    with pytest.raises(sales.exceptions.EntityNotFoundException):
        sales.delete_table(DatabaseName="sales", Name="nope")


@pytest.mark.parametrize("batch", [False, True])
def test_a_table_made_again_has_nothing_of_the_deleted_one(sales: Catalog, batch: bool) -> None:
    sales.create_table(
        DatabaseName="sales",
        TableInput=table_input("t", Description="old"),
        PartitionIndexes=[{"IndexName": "by_dt", "Keys": ["dt"]}],
    )
    sales.create_partition(DatabaseName="sales", TableName="t", PartitionInput={"Values": ["2024-01-01"]})
    sales.update_table(DatabaseName="sales", TableInput=table_input("t", Description="old v2"))
    stats = {
        "ColumnName": "id",
        "ColumnType": "bigint",
        "AnalyzedTime": datetime(2024, 5, 1, tzinfo=UTC),
        "StatisticsData": {
            "Type": "LONG",
            "LongColumnStatisticsData": {"NumberOfNulls": 0, "NumberOfDistinctValues": 1},
        },
    }
    sales.update_column_statistics_for_table(
        DatabaseName="sales", TableName="t", ColumnStatisticsList=[stats]
    )
    if batch:
        assert sales.batch_delete_table(DatabaseName="sales", TablesToDelete=["T"])["Errors"] == []
    else:
        sales.delete_table(DatabaseName="sales", Name="T")
    sales.create_table(DatabaseName="sales", TableInput=table_input("t", Description="new"))
    t = sales.get_table(DatabaseName="sales", Name="t")["Table"]
    assert (t["VersionId"], t["Description"]) == ("1", "new")
    versions = sales.get_table_versions(DatabaseName="sales", TableName="t")["TableVersions"]
    assert [(v["VersionId"], v["Table"]["Description"]) for v in versions] == [("1", "new")]
    assert sales.get_partitions(DatabaseName="sales", TableName="t")["Partitions"] == []
    assert (
        sales.get_partition_indexes(DatabaseName="sales", TableName="t")["PartitionIndexDescriptorList"] == []
    )
    got = sales.get_column_statistics_for_table(DatabaseName="sales", TableName="t", ColumnNames=["id"])
    assert got["ColumnStatisticsList"] == []


def test_batch_delete_table_reports_missing_tables(sales: Catalog) -> None:
    for name in ("a", "b"):
        sales.create_table(DatabaseName="sales", TableInput=table_input(name))
    out = sales.batch_delete_table(DatabaseName="sales", TablesToDelete=["a", "zz", "B"])
    assert [(e["TableName"], e["ErrorDetail"]["ErrorCode"]) for e in out["Errors"]] == [
        ("zz", "EntityNotFoundException")
    ]
    assert sales.get_tables(DatabaseName="sales")["TableList"] == []


def test_get_tables_filters_names_by_regular_expression(sales: Catalog) -> None:
    for name in ("orders", "orders_2023", "customers", "order_items"):
        sales.create_table(DatabaseName="sales", TableInput=table_input(name))

    def names(expr: str) -> list[str]:
        return [t["Name"] for t in sales.get_tables(DatabaseName="sales", Expression=expr)["TableList"]]

    assert names("orders.*") == ["orders", "orders_2023"]
    assert names("order*") == ["order_items", "orders", "orders_2023"]
    assert names("customers|order_items") == ["customers", "order_items"]
    assert names("orders") == ["orders"]
    with pytest.raises(sales.exceptions.InvalidInputException, match="regular expression"):
        names("orders(")


def test_get_tables_expression_is_matched_in_linear_time(sales: Catalog) -> None:
    # "(.+)+!" makes a backtracking engine take 2^n steps over n characters; RE2 takes n.
    sales.create_table(DatabaseName="sales", TableInput=table_input("e" * 250))
    started = time.perf_counter()
    assert sales.get_tables(DatabaseName="sales", Expression="(.+)+!")["TableList"] == []
    assert time.perf_counter() - started < 2.0


@pytest.mark.parametrize("expression", [r"(o)\1", "(?=o)rders", "(?<!x)orders"])
def test_get_tables_refuses_expressions_that_need_backtracking(sales: Catalog, expression: str) -> None:
    with pytest.raises(
        sales.exceptions.InvalidInputException, match="Expression: .*back-references and look-around"
    ):
        sales.get_tables(DatabaseName="sales", Expression=expression)


def test_get_tables_expression_is_bounded_in_length(sales: Catalog) -> None:
    with pytest.raises(sales.exceptions.InvalidInputException, match="Expression"):
        sales.get_tables(DatabaseName="sales", Expression="a" * 2049)


def test_get_tables_pages_exactly_while_tables_are_added(sales: Catalog) -> None:
    for i in range(0, 20, 2):
        sales.create_table(DatabaseName="sales", TableInput=table_input(f"t{i:02d}"))
    page = sales.get_tables(DatabaseName="sales", MaxResults=4)
    names = [t["Name"] for t in page["TableList"]]
    sales.create_table(DatabaseName="sales", TableInput=table_input("t01"))  # before the cursor
    sales.create_table(DatabaseName="sales", TableInput=table_input("t19"))  # after it
    token = page.get("NextToken")
    while token:
        page = sales.get_tables(DatabaseName="sales", MaxResults=4, NextToken=token)
        names += [t["Name"] for t in page["TableList"]]
        token = page.get("NextToken")
    assert names == [f"t{i:02d}" for i in range(0, 20, 2)] + ["t19"]


def test_a_token_from_another_listing_is_refused(sales: Catalog) -> None:
    for i in range(3):
        sales.create_table(DatabaseName="sales", TableInput=table_input(f"t{i}"))
    token = sales.get_tables(DatabaseName="sales", MaxResults=1)["NextToken"]
    with pytest.raises(sales.exceptions.InvalidInputException, match="different request"):
        sales.get_tables(DatabaseName="sales", Expression="t.*", NextToken=token)


def test_query_as_of_time_reads_the_past(sales: Catalog) -> None:
    sales.create_table(DatabaseName="sales", TableInput=table_input("t", Description="v1"))
    time.sleep(0.01)
    between = datetime.now(UTC)
    time.sleep(0.01)
    sales.update_table(DatabaseName="sales", TableInput=table_input("t", Description="v2"))
    sales.create_table(DatabaseName="sales", TableInput=table_input("later"))
    old = sales.get_table(DatabaseName="sales", Name="t", QueryAsOfTime=between)["Table"]
    assert old["Description"] == "v1"
    assert [
        t["Name"] for t in sales.get_tables(DatabaseName="sales", QueryAsOfTime=between)["TableList"]
    ] == ["t"]
    with pytest.raises(sales.exceptions.InvalidInputException, match="TransactionId"):
        sales.get_table(DatabaseName="sales", Name="t", QueryAsOfTime=between, TransactionId="tx1")


def test_query_as_of_time_before_the_table_existed_says_so(sales: Catalog) -> None:
    then = datetime.now(UTC)
    time.sleep(0.01)
    sales.create_table(DatabaseName="sales", TableInput=table_input("t"))
    made = sales.get_table(DatabaseName="sales", Name="t")["Table"]["CreateTime"]
    with pytest.raises(sales.exceptions.EntityNotFoundException) as info:
        sales.get_table(DatabaseName="sales", Name="t", QueryAsOfTime=then)
    message = info.value.response["Error"]["Message"]
    assert message.startswith("Table t not found in database sales: it did not exist at QueryAsOfTime ")
    assert message.endswith(f"(it was made at {made.isoformat()}).")
    with pytest.raises(sales.exceptions.EntityNotFoundException) as info:
        sales.get_table(DatabaseName="sales", Name="never", QueryAsOfTime=then)
    never = info.value.response["Error"]["Message"]
    assert "it did not exist at QueryAsOfTime" in never and "(it was made" not in never


def test_a_time_before_the_kept_history_is_invalid_input(sales: Catalog, warehouse: str) -> None:
    # Expiry (gluecat compact) removes old history; asking for a time before it is the caller's choice
    # of time, not damage to the warehouse (it was InternalServiceException).
    from gluecat.cli import main as cli

    sales.create_table(DatabaseName="sales", TableInput=table_input("t", Description="v1"))
    time.sleep(0.01)
    early = datetime.now(UTC)
    for i in range(3):
        sales.update_table(DatabaseName="sales", TableInput=table_input("t", Description=f"v{i + 2}"))
    assert cli(["compact", "-w", warehouse, "--apply", "--retain-hours", "0"]) == 0
    with pytest.raises(sales.exceptions.InvalidInputException, match="QueryAsOfTime: .* before the history"):
        sales.get_table(DatabaseName="sales", Name="t", QueryAsOfTime=early)
    assert sales.get_table(DatabaseName="sales", Name="t")["Table"]["Description"] == "v4"


def test_an_unknown_transaction_is_not_found(sales: Catalog) -> None:
    sales.create_table(DatabaseName="sales", TableInput=table_input("t"))
    with pytest.raises(sales.exceptions.EntityNotFoundException, match="Transaction"):
        sales.get_table(DatabaseName="sales", Name="t", TransactionId="tx-1")


def test_partition_indexes_given_at_creation_are_active(sales: Catalog) -> None:
    sales.create_table(
        DatabaseName="sales",
        TableInput=table_input("t"),
        PartitionIndexes=[{"IndexName": "by_dt", "Keys": ["dt"]}],
    )
    indexes = sales.get_partition_indexes(DatabaseName="sales", TableName="t")["PartitionIndexDescriptorList"]
    assert indexes == [
        {"IndexName": "by_dt", "Keys": [{"Name": "dt", "Type": "string"}], "IndexStatus": "ACTIVE"}
    ]


def test_at_most_three_partition_indexes_on_partition_keys(sales: Catalog) -> None:
    with pytest.raises(sales.exceptions.InvalidInputException, match="at most 3"):
        sales.create_table(
            DatabaseName="sales",
            TableInput=table_input("t"),
            PartitionIndexes=[{"IndexName": f"i{i}", "Keys": ["dt"]} for i in range(4)],
        )
    with pytest.raises(sales.exceptions.InvalidInputException, match="not a partition key"):
        sales.create_table(
            DatabaseName="sales",
            TableInput=table_input("t"),
            PartitionIndexes=[{"IndexName": "i", "Keys": ["id"]}],
        )


@pytest.mark.in_process
def test_rename_table_makes_the_new_table_with_partitions_indexes_and_statistics_and_drops_the_old_in_one_commit(
    sales: Catalog,
) -> None:
    sales.create_table(
        DatabaseName="sales",
        TableInput=table_input("old"),
        PartitionIndexes=[{"IndexName": "by_dt", "Keys": ["dt"]}],
    )
    read = sales.get_table(DatabaseName="sales", Name="old")["Table"]
    sd = read["StorageDescriptor"]
    for day in ("2024-01-01", "2024-01-02"):  # added after the read: carried all the same
        part = {"Values": [day], "StorageDescriptor": {**sd, "Location": f"s3://bucket/old/dt={day}/"}}
        sales.create_partition(DatabaseName="sales", TableName="old", PartitionInput=part)
    stats = {
        "ColumnName": "id",
        "ColumnType": "bigint",
        "AnalyzedTime": datetime(2024, 5, 1, tzinfo=UTC),
        "StatisticsData": {
            "Type": "LONG",
            "LongColumnStatisticsData": {
                "MinimumValue": 1,
                "MaximumValue": 9,
                "NumberOfNulls": 0,
                "NumberOfDistinctValues": 9,
            },
        },
    }
    sales.update_column_statistics_for_table(
        DatabaseName="sales", TableName="old", ColumnStatisticsList=[stats]
    )
    sales.update_column_statistics_for_partition(
        DatabaseName="sales", TableName="old", PartitionValues=["2024-01-01"], ColumnStatisticsList=[stats]
    )
    before = sales.warehouse_version()
    new = {**table_input("new"), "StorageDescriptor": {**sd, "Location": "s3://bucket/new/"}}
    sales.rename_table(
        Table=read,
        NewDatabaseName="sales",
        TableInput=new,
        RelocateStorage=lambda sd: {**sd, "Location": sd["Location"].replace("/old/", "/new/")},
    )
    assert sales.warehouse_version() == before + 1
    with pytest.raises(sales.exceptions.EntityNotFoundException):
        sales.get_table(DatabaseName="sales", Name="old")
    parts = sales.get_partitions(DatabaseName="sales", TableName="new")["Partitions"]
    assert sorted(p["StorageDescriptor"]["Location"] for p in parts) == [
        "s3://bucket/new/dt=2024-01-01/",
        "s3://bucket/new/dt=2024-01-02/",
    ]
    indexes = sales.get_partition_indexes(DatabaseName="sales", TableName="new")
    assert [d["IndexName"] for d in indexes["PartitionIndexDescriptorList"]] == ["by_dt"]
    got = sales.get_column_statistics_for_table(DatabaseName="sales", TableName="new", ColumnNames=["id"])
    assert got["ColumnStatisticsList"] == [stats]
    got = sales.get_column_statistics_for_partition(
        DatabaseName="sales", TableName="new", PartitionValues=["2024-01-01"], ColumnNames=["id"]
    )
    assert got["ColumnStatisticsList"] == [stats]


@pytest.mark.in_process
def test_calls_on_a_table_as_read_refuse_a_table_updated_or_made_again_since(sales: Catalog) -> None:
    sales.create_table(DatabaseName="sales", TableInput=table_input("t"))
    read = sales.get_table(DatabaseName="sales", Name="t")["Table"]
    sales.delete_table(DatabaseName="sales", Name="t")
    sales.create_table(DatabaseName="sales", TableInput=table_input("t", Description="another"))
    again = sales.get_table(DatabaseName="sales", Name="t")["Table"]
    assert again["VersionId"] == read["VersionId"] == "1"  # only CreateTime tells them apart
    cme = sales.exceptions.ConcurrentModificationException
    with pytest.raises(cme, match="dropped and made again"):
        sales.update_table_as_read(Table=read, TableInput=table_input("t"))
    with pytest.raises(cme, match="dropped and made again"):
        sales.delete_table_as_read(Table=read)
    with pytest.raises(cme, match="dropped and made again"):
        sales.rename_table(Table=read, NewDatabaseName="sales", TableInput=table_input("u"))
    sales.update_table(DatabaseName="sales", TableInput=table_input("t", Description="updated"))
    with pytest.raises(cme, match="VersionId 2, not 1"):
        sales.update_table_as_read(Table=again, TableInput=table_input("t"))
    assert sales.get_table(DatabaseName="sales", Name="t")["Table"]["Description"] == "updated"
    assert [t["Name"] for t in sales.get_tables(DatabaseName="sales")["TableList"]] == ["t"]


@pytest.mark.in_process
def test_rename_table_refuses_a_governed_table_whose_objects_would_be_lost(sales: Catalog) -> None:
    sales.create_table(DatabaseName="sales", TableInput=table_input("g", TableType="GOVERNED"))
    read = sales.get_table(DatabaseName="sales", Name="g")["Table"]
    with pytest.raises(sales.exceptions.InvalidInputException, match="governed"):
        sales.rename_table(Table=read, NewDatabaseName="sales", TableInput=table_input("h"))
    assert [t["Name"] for t in sales.get_tables(DatabaseName="sales")["TableList"]] == ["g"]


@pytest.mark.in_process
def test_rename_table_into_another_database_keeps_to_its_table_limit(tmp_path: Path) -> None:
    glue = Catalog(str(tmp_path / "w"), limits=Limits(tables_per_database=1))
    for db in ("a", "b"):
        glue.create_database(DatabaseInput={"Name": db})
        glue.create_table(DatabaseName=db, TableInput=table_input("t"))
    read = glue.get_table(DatabaseName="a", Name="t")["Table"]
    with pytest.raises(glue.exceptions.ResourceNumberLimitExceededException, match="database b"):
        glue.rename_table(Table=read, NewDatabaseName="b", TableInput=table_input("u"))
    glue.rename_table(
        Table=read, NewDatabaseName="a", TableInput=table_input("u")
    )  # within a: one table still
    assert [t["Name"] for t in glue.get_tables(DatabaseName="a")["TableList"]] == ["u"]


@pytest.mark.in_process
def test_tables_unchanged_since_passes_over_partitions_and_other_databases(catalog: Catalog) -> None:
    """What a listing of a database's tables read in pages checks (the Hive endpoint's): only a change of
    the database or of one of its tables counts."""
    catalog.create_database(DatabaseInput={"Name": "db"})
    catalog.create_database(DatabaseInput={"Name": "elsewhere"})
    catalog.create_table(DatabaseName="db", TableInput=table_input("t"))
    since = catalog.warehouse_version()
    catalog.create_table(DatabaseName="elsewhere", TableInput=table_input("t"))
    catalog.create_partition(DatabaseName="db", TableName="t", PartitionInput={"Values": ["a"]})
    now = catalog.warehouse_version()
    assert catalog.tables_unchanged_since("db", since) == now
    catalog.update_database(Name="db", DatabaseInput={"Name": "db", "Description": "described"})
    assert catalog.tables_unchanged_since("db", now) is None
    for change in (
        lambda: catalog.create_table(DatabaseName="db", TableInput=table_input("u")),
        lambda: catalog.update_table(DatabaseName="db", TableInput=table_input("u")),
        lambda: catalog.delete_table(DatabaseName="db", Name="u"),
    ):
        before = catalog.warehouse_version()
        change()
        assert catalog.tables_unchanged_since("db", before) is None
    assert catalog.tables_unchanged_since("db", catalog.warehouse_version() + 1) is None  # not yet


def test_a_token_of_a_table_or_database_dropped_and_made_again_is_refused(sales: Catalog) -> None:
    # A token is a place in one table's (or database's) listing: read as a place in the listing of
    # the one made again under its name, it would silently skip that one's first rows.
    sales.create_table(DatabaseName="sales", TableInput=table_input("t"))
    for i in range(3):
        sales.update_table(DatabaseName="sales", TableInput=table_input("t", Description=f"v{i}"))
    versions = sales.get_table_versions(DatabaseName="sales", TableName="t", MaxResults=2)
    for name in ("a", "b", "c"):
        sales.create_table(DatabaseName="sales", TableInput=table_input(name))
    tables = sales.get_tables(DatabaseName="sales", MaxResults=2)

    sales.delete_table(DatabaseName="sales", Name="t")
    sales.create_table(DatabaseName="sales", TableInput=table_input("t"))
    with pytest.raises(sales.exceptions.InvalidInputException, match="NextToken: .*made again"):
        sales.get_table_versions(DatabaseName="sales", TableName="t", NextToken=versions["NextToken"])

    sales.delete_database(Name="sales")
    sales.create_database(DatabaseInput={"Name": "sales"})
    for name in ("x", "y", "z"):
        sales.create_table(DatabaseName="sales", TableInput=table_input(name))
    with pytest.raises(sales.exceptions.InvalidInputException, match="NextToken: .*made again"):
        sales.get_tables(DatabaseName="sales", NextToken=tables["NextToken"])
    assert [t["Name"] for t in sales.get_tables(DatabaseName="sales")["TableList"]] == ["x", "y", "z"]
