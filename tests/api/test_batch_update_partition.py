"""BatchUpdatePartition: each entry as UpdatePartition would do it, in order, all in one commit; an entry
that fails is reported in Errors and changes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from gluecat import Catalog
from gluecat.errors import InvalidInputException


def part(*values: str, **extra: Any) -> dict[str, Any]:
    return {"Values": list(values), "StorageDescriptor": {"Location": f"s3://b/{'/'.join(values)}/"}, **extra}


@pytest.fixture
def glue(catalog: Catalog) -> Catalog:
    catalog.create_database(DatabaseInput={"Name": "db"})
    catalog.create_table(
        DatabaseName="db",
        TableInput={
            "Name": "t",
            "PartitionKeys": [{"Name": "dt", "Type": "string"}, {"Name": "r", "Type": "string"}],
        },
    )
    catalog.batch_create_partition(
        DatabaseName="db",
        TableName="t",
        PartitionInputList=[part("d1", "eu"), part("d1", "us"), part("d2", "eu")],
    )
    return catalog


def entry(values: list[str], new: dict[str, Any]) -> dict[str, Any]:
    return {"PartitionValueList": values, "PartitionInput": new}


def partitions(glue: Catalog) -> dict[tuple[str, ...], dict[str, Any]]:
    return {
        tuple(p["Values"]): p for p in glue.get_partitions(DatabaseName="db", TableName="t")["Partitions"]
    }


@pytest.mark.in_process
def test_entries_are_applied_in_one_commit(glue: Catalog) -> None:
    before = partitions(glue)
    version = glue.table_version("db", "t")
    out = glue.batch_update_partition(
        DatabaseName="db",
        TableName="t",
        Entries=[
            entry(["d1", "eu"], part("d1", "eu", Parameters={"rows": "7"})),
            entry(["d2", "eu"], part("d3", "eu")),  # a new value list: the partition is renamed
        ],
    )
    assert out["Errors"] == []
    assert glue.table_version("db", "t") == version + 1
    after = partitions(glue)
    assert set(after) == {("d1", "eu"), ("d1", "us"), ("d3", "eu")}
    assert after[("d1", "eu")]["Parameters"] == {"rows": "7"}
    # An update keeps the partition's creation time, as UpdatePartition does.
    assert after[("d1", "eu")]["CreationTime"] == before[("d1", "eu")]["CreationTime"]
    assert after[("d3", "eu")]["CreationTime"] == before[("d2", "eu")]["CreationTime"]


def test_failing_entries_are_reported_and_change_nothing(glue: Catalog) -> None:
    out = glue.batch_update_partition(
        DatabaseName="db",
        TableName="t",
        Entries=[
            entry(["d9", "eu"], part("d9", "eu")),  # no such partition
            entry(["d1", "eu"], part("d1", "us")),  # renamed onto one that exists
            entry(["d1"], part("d1")),  # too few values
            entry(["d1", "us"], part("d1", "us", Parameters={"ok": "yes"})),
        ],
    )
    assert [(e["PartitionValueList"], e["ErrorDetail"]["ErrorCode"]) for e in out["Errors"]] == [
        (["d9", "eu"], "EntityNotFoundException"),
        (["d1", "eu"], "AlreadyExistsException"),
        (["d1"], "InvalidInputException"),
    ]
    assert "Entries[2].PartitionValueList" in out["Errors"][2]["ErrorDetail"]["ErrorMessage"]
    after = partitions(glue)
    assert set(after) == {("d1", "eu"), ("d1", "us"), ("d2", "eu")}
    assert after[("d1", "us")]["Parameters"] == {"ok": "yes"}
    assert "Parameters" not in after[("d1", "eu")]


def test_later_entries_see_earlier_ones(glue: Catalog) -> None:
    out = glue.batch_update_partition(
        DatabaseName="db",
        TableName="t",
        Entries=[
            entry(["d1", "eu"], part("d5", "eu")),
            entry(["d5", "eu"], part("d6", "eu", Parameters={"hops": "2"})),
            entry(["d1", "eu"], part("d1", "eu")),  # renamed away by the first entry
        ],
    )
    assert [e["ErrorDetail"]["ErrorCode"] for e in out["Errors"]] == ["EntityNotFoundException"]
    after = partitions(glue)
    assert set(after) == {("d1", "us"), ("d2", "eu"), ("d6", "eu")}
    assert after[("d6", "eu")]["Parameters"] == {"hops": "2"}


@pytest.mark.in_process
def test_the_request_is_checked_whole_before_anything_changes(glue: Catalog) -> None:
    version = glue.table_version("db", "t")
    with pytest.raises(
        InvalidInputException, match=r"Entries\[1\]\.PartitionInput\.StorageDescriptor\.Location"
    ):
        glue.batch_update_partition(
            DatabaseName="db",
            TableName="t",
            Entries=[
                entry(["d1", "eu"], part("d1", "eu", Parameters={"a": "b"})),
                entry(["d1", "us"], {"Values": ["d1", "us"], "StorageDescriptor": {"Location": "x" * 2057}}),
            ],
        )
    with pytest.raises(glue.exceptions.InvalidInputException, match="Entries: must have at least 1 item"):
        glue.batch_update_partition(DatabaseName="db", TableName="t", Entries=[])
    with pytest.raises(glue.exceptions.InvalidInputException, match="Entries: has 101 items; at most 100"):
        glue.batch_update_partition(
            DatabaseName="db", TableName="t", Entries=[entry(["d1", "eu"], part("d1", "eu"))] * 101
        )
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.batch_update_partition(
            DatabaseName="db", TableName="nope", Entries=[entry(["a", "b"], part("a", "b"))]
        )
    assert glue.table_version("db", "t") == version
