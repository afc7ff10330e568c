"""Get/Update/DeleteColumnStatisticsForPartition: the table statistics' rules for one partition, and the
statistics go with their partition."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from gluecat import Catalog

from .conftest import Governed

AT = datetime(2024, 5, 1, tzinfo=UTC)
US = ["2024-05-01", "us"]


def long_stats(column: str, low: int = 1, high: int = 9) -> dict[str, Any]:
    data = {"MinimumValue": low, "MaximumValue": high, "NumberOfNulls": 0, "NumberOfDistinctValues": 9}
    return {
        "ColumnName": column,
        "ColumnType": "bigint",
        "AnalyzedTime": AT,
        "StatisticsData": {"Type": "LONG", "LongColumnStatisticsData": data},
    }


@pytest.fixture
def glue(catalog: Catalog) -> Catalog:
    catalog.create_database(DatabaseInput={"Name": "db"})
    catalog.create_table(
        DatabaseName="db",
        TableInput={
            "Name": "t",
            "StorageDescriptor": {
                "Columns": [{"Name": "id", "Type": "bigint"}, {"Name": "note", "Type": "string"}]
            },
            "PartitionKeys": [{"Name": "dt", "Type": "string"}, {"Name": "r", "Type": "string"}],
        },
    )
    catalog.batch_create_partition(
        DatabaseName="db",
        TableName="t",
        PartitionInputList=[{"Values": US}, {"Values": ["2024-05-01", "eu"]}],
    )
    return catalog


STRING_STATS = {
    "Type": "STRING",
    "StringColumnStatisticsData": {
        "MaximumLength": 5,
        "AverageLength": 2.5,
        "NumberOfNulls": 0,
        "NumberOfDistinctValues": 3,
    },
}


def put(glue: Catalog, values: list[str], *stats: dict[str, Any]) -> dict[str, Any]:
    return glue.update_column_statistics_for_partition(
        DatabaseName="db", TableName="t", PartitionValues=values, ColumnStatisticsList=list(stats)
    )


def get(glue: Catalog, values: list[str], *columns: str) -> dict[str, Any]:
    return glue.get_column_statistics_for_partition(
        DatabaseName="db", TableName="t", PartitionValues=values, ColumnNames=list(columns)
    )


def found(glue: Catalog, values: list[str], column: str = "id") -> list[dict[str, Any]]:
    return get(glue, values, column)["ColumnStatisticsList"]


def test_statistics_round_trip_per_partition(glue: Catalog) -> None:
    assert put(glue, US, long_stats("ID"))["Errors"] == []
    got = get(glue, US, "id", "note")
    assert got["ColumnStatisticsList"] == [long_stats("id")]
    assert [(e["ColumnName"], e["Error"]["ErrorCode"]) for e in got["Errors"]] == [
        ("note", "EntityNotFoundException")
    ]
    # Another partition, and the table itself, have statistics of their own.
    assert found(glue, ["2024-05-01", "eu"]) == []
    table = glue.get_column_statistics_for_table(DatabaseName="db", TableName="t", ColumnNames=["id"])
    assert table["ColumnStatisticsList"] == []
    put(glue, US, long_stats("id", 2, 3))
    assert found(glue, US)[0]["StatisticsData"]["LongColumnStatisticsData"]["MaximumValue"] == 3
    glue.delete_column_statistics_for_partition(
        DatabaseName="db", TableName="t", PartitionValues=US, ColumnName="id"
    )
    assert found(glue, US) == []
    with pytest.raises(
        glue.exceptions.EntityNotFoundException, match="No statistics for column id of partition"
    ):
        glue.delete_column_statistics_for_partition(
            DatabaseName="db", TableName="t", PartitionValues=US, ColumnName="id"
        )


def test_the_table_statistics_rules_apply(glue: Catalog) -> None:
    wrong_type = {**long_stats("note")}
    out = put(glue, US, long_stats("ghost"), wrong_type, long_stats("id"))
    assert [e["Error"]["ErrorCode"] for e in out["Errors"]] == ["InvalidInputException"] * 2
    assert "does not fit column note of type string" in out["Errors"][1]["Error"]["ErrorMessage"]
    assert get(glue, US, "ghost")["Errors"][0]["Error"]["ErrorCode"] == "InvalidInputException"
    with pytest.raises(
        glue.exceptions.InvalidInputException, match=r"ColumnStatisticsList\[0\].*MinimumValue.*greater"
    ):
        put(glue, US, long_stats("id", 9, 1))
    with pytest.raises(
        glue.exceptions.InvalidInputException, match="ColumnStatisticsList: has 26 items; at most 25"
    ):
        put(glue, US, *[long_stats("id")] * 26)


def test_the_partition_must_exist(glue: Catalog) -> None:
    with pytest.raises(glue.exceptions.EntityNotFoundException, match="Cannot find partition."):
        put(glue, ["2030-01-01", "us"], long_stats("id"))
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        get(glue, ["2030-01-01", "us"], "id")
    with pytest.raises(glue.exceptions.InvalidInputException, match="PartitionValues: 1 values given"):
        get(glue, ["2024-05-01"], "id")
    with pytest.raises(glue.exceptions.EntityNotFoundException, match="Table nope not found"):
        glue.get_column_statistics_for_partition(
            DatabaseName="db", TableName="nope", PartitionValues=US, ColumnNames=["id"]
        )


def test_a_partitions_own_columns_are_its_statistics_columns(glue: Catalog) -> None:
    own = {
        "Values": ["2024-05-02", "us"],
        "StorageDescriptor": {"Columns": [{"Name": "extra", "Type": "int"}]},
    }
    glue.create_partition(DatabaseName="db", TableName="t", PartitionInput=own)
    stats = {**long_stats("extra"), "ColumnType": "int"}
    assert (
        put(glue, own["Values"], stats, long_stats("id"))["Errors"][0]["ColumnStatistics"]["ColumnName"]
        == "id"
    )
    assert found(glue, own["Values"], "extra") == [stats]


@pytest.mark.in_process
def test_statistics_go_with_their_partition(glue: Catalog, warehouse: str) -> None:
    def recreated(drop: Any) -> list[dict[str, Any]]:
        put(glue, US, long_stats("id"))
        drop()
        glue.create_partition(DatabaseName="db", TableName="t", PartitionInput={"Values": US})
        return found(glue, US)

    assert (
        recreated(lambda: glue.delete_partition(DatabaseName="db", TableName="t", PartitionValues=US)) == []
    )
    assert (
        recreated(
            lambda: glue.batch_delete_partition(
                DatabaseName="db", TableName="t", PartitionsToDelete=[{"Values": US}]
            )
        )
        == []
    )
    assert recreated(lambda: glue.commit_partitions(DatabaseName="db", TableName="t", Drop=[US])) == []

    def renamed_away() -> None:
        glue.update_partition(
            DatabaseName="db",
            TableName="t",
            PartitionValueList=US,
            PartitionInput={"Values": ["2024-05-09", "us"]},
        )

    assert recreated(renamed_away) == []
    assert found(glue, ["2024-05-09", "us"]) == []  # statistics do not follow a rename
    # Updating a partition in place keeps them.
    put(glue, US, long_stats("id"))
    glue.update_partition(
        DatabaseName="db",
        TableName="t",
        PartitionValueList=US,
        PartitionInput={"Values": US, "Parameters": {"a": "b"}},
    )
    assert found(glue, US) == [long_stats("id")]
    # And a dropped table takes its partitions' statistics along.
    glue.delete_table(DatabaseName="db", Name="t")
    glue.create_table(
        DatabaseName="db",
        TableInput={
            "Name": "t",
            "StorageDescriptor": {"Columns": [{"Name": "id", "Type": "bigint"}]},
            "PartitionKeys": [{"Name": "dt", "Type": "string"}, {"Name": "r", "Type": "string"}],
        },
    )
    glue.create_partition(DatabaseName="db", TableName="t", PartitionInput={"Values": US})
    assert found(glue, US) == []
    assert (
        Catalog(warehouse).store.latest().keys_with_prefix("partition_column_statistics", ("db", "t")) == []
    )


def table_with(columns: list[dict[str, str]]) -> dict[str, Any]:
    return {
        "Name": "t",
        "StorageDescriptor": {"Columns": columns},
        "PartitionKeys": [{"Name": "dt", "Type": "string"}, {"Name": "r", "Type": "string"}],
    }


def error_codes(glue: Catalog, values: list[str], *columns: str) -> list[str]:
    return [e["Error"]["ErrorCode"] for e in get(glue, values, *columns)["Errors"]]


def test_a_table_update_outdates_the_statistics_of_partitions_with_its_columns(glue: Catalog) -> None:
    # US has no columns of its own: its statistics columns are the table's. OWN has its own.
    own = ["2024-05-02", "us"]
    glue.create_partition(
        DatabaseName="db",
        TableName="t",
        PartitionInput={
            "Values": own,
            "StorageDescriptor": {"Columns": [{"Name": "id", "Type": "bigint"}]},
        },
    )
    put(glue, US, long_stats("id"))
    put(glue, own, long_stats("id"))
    note = {"Name": "note", "Type": "string"}
    glue.update_table(DatabaseName="db", TableInput={**table_with([note]), "Description": "no id"})
    # A column of that name made again, of another type, must not find the dropped column's statistics.
    glue.update_table(DatabaseName="db", TableInput=table_with([{"Name": "id", "Type": "string"}, note]))
    assert found(glue, US) == []
    assert error_codes(glue, US, "id") == ["EntityNotFoundException"]
    assert found(glue, own) == [long_stats("id")]  # its own columns did not change
    # Retyping in one step outdates them too; an update that keeps the column keeps them.
    put(glue, US, {**long_stats("id"), "ColumnType": "string"} | {"StatisticsData": STRING_STATS})
    glue.update_table(DatabaseName="db", TableInput={**table_with([{"Name": "id", "Type": "string"}, note])})
    assert len(found(glue, US)) == 1
    glue.update_table(DatabaseName="db", TableInput=table_with([{"Name": "id", "Type": "bigint"}, note]))
    assert found(glue, US) == []


def test_an_update_in_place_outdates_the_statistics_of_the_columns_it_changes(glue: Catalog) -> None:
    def update(*columns: dict[str, str]) -> None:
        glue.update_partition(
            DatabaseName="db",
            TableName="t",
            PartitionValueList=US,
            PartitionInput={"Values": US, "StorageDescriptor": {"Columns": list(columns)}},
        )

    note = {"Name": "note", "Type": "string"}
    put(
        glue,
        US,
        long_stats("id"),
        {**long_stats("note"), "ColumnType": "string", "StatisticsData": STRING_STATS},
    )
    update({"Name": "id", "Type": "bigint"}, note)  # the table's columns, now its own: nothing changes
    assert len(get(glue, US, "id", "note")["ColumnStatisticsList"]) == 2
    update(note)
    update({"Name": "id", "Type": "string"}, note)
    assert error_codes(glue, US, "id") == ["EntityNotFoundException"]
    assert len(found(glue, US, "note")) == 1
    # In a batch, as one by one: an entry that retypes a column, then one that changes something else.
    put(glue, US, {**long_stats("id"), "ColumnType": "string", "StatisticsData": STRING_STATS})
    entry = {"PartitionValueList": US, "PartitionInput": {"Values": US}}
    out = glue.batch_update_partition(
        DatabaseName="db",
        TableName="t",
        Entries=[
            {**entry, "PartitionInput": {"Values": US, "StorageDescriptor": {"Columns": [note]}}},
            {
                **entry,
                "PartitionInput": {
                    "Values": US,
                    "StorageDescriptor": {"Columns": [{"Name": "id", "Type": "string"}, note]},
                },
            },
        ],
    )
    assert out["Errors"] == []
    assert error_codes(glue, US, "id") == ["EntityNotFoundException"]
    assert len(found(glue, US, "note")) == 1


def test_a_partition_renamed_to_values_renamed_away_in_the_batch_has_no_statistics(glue: Catalog) -> None:
    eu = ["2024-05-01", "eu"]
    put(glue, US, long_stats("id"))
    out = glue.batch_update_partition(
        DatabaseName="db",
        TableName="t",
        Entries=[
            {"PartitionValueList": US, "PartitionInput": {"Values": ["2024-05-09", "us"]}},
            {"PartitionValueList": eu, "PartitionInput": {"Values": US}},
        ],
    )
    assert out["Errors"] == []
    # The partition at US is eu's: US's statistics describe the data that moved away.
    assert found(glue, US) == []
    assert found(glue, ["2024-05-09", "us"]) == []
    # Renamed away and back in one batch: as the two updates one after the other.
    put(glue, US, long_stats("id"))
    glue.batch_update_partition(
        DatabaseName="db",
        TableName="t",
        Entries=[
            {"PartitionValueList": US, "PartitionInput": {"Values": eu}},
            {"PartitionValueList": eu, "PartitionInput": {"Values": US}},
        ],
    )
    assert found(glue, US) == []


def test_a_transactions_table_update_outdates_partition_statistics_analyzed_since(
    governed: Governed,
) -> None:
    glue = governed.glue
    glue.create_database(DatabaseInput={"Name": "db"})
    glue.create_table(DatabaseName="db", TableInput=table_with([{"Name": "id", "Type": "bigint"}]))
    glue.create_partition(DatabaseName="db", TableName="t", PartitionInput={"Values": US})
    tx = governed.lf.start_transaction()["TransactionId"]
    note = {"Name": "note", "Type": "string"}
    glue.update_table(DatabaseName="db", TableInput=table_with([note]), TransactionId=tx)
    put(glue, US, long_stats("id"))  # analyzed after the update was staged, before its commit
    governed.lf.commit_transaction(TransactionId=tx)
    glue.update_table(DatabaseName="db", TableInput=table_with([{"Name": "id", "Type": "string"}, note]))
    assert error_codes(glue, US, "id") == ["EntityNotFoundException"]
