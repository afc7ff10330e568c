"""The response check of conftest.py (every call in tests/api) finds what botocore's output shapes do
not allow: it must not pass responses that boto3 would parse differently."""

from __future__ import annotations

from datetime import UTC, datetime

from .response_shapes import problems


def test_the_check_names_each_kind_of_fault() -> None:
    bad = {
        "Table": {
            "Name": 7,
            "Bogus": 1,
            "CreateTime": datetime(2024, 1, 1),
            "PartitionKeys": {"Name": "dt"},
            "IsRegisteredWithLakeFormation": "no",
        },
        "ResponseMetadata": {"RequestId": "r"},
    }
    assert problems("glue", "GetTable", bad) == [
        "GetTable.Table.Name: a int, not a string",
        "GetTable.Table.Bogus: not a member of Table",
        "GetTable.Table.CreateTime: datetime.datetime(2024, 1, 1, 0, 0) is not a timezone-aware datetime "
        "(botocore parses timestamps so)",
        "GetTable.Table.PartitionKeys: a dict, not a list",
        "GetTable.Table.IsRegisteredWithLakeFormation: a str, not a boolean",
    ]
    indexes = {"PartitionIndexDescriptorList": [{"IndexName": "i", "IndexStatus": "WEIRD"}]}
    assert problems("glue", "GetPartitionIndexes", indexes) == [
        "GetPartitionIndexes.PartitionIndexDescriptorList[0].IndexStatus: 'WEIRD' is not one of "
        "PartitionIndexStatus's ['CREATING', 'ACTIVE', 'DELETING', 'FAILED']",
        "GetPartitionIndexes.PartitionIndexDescriptorList[0].Keys: required by PartitionIndexDescriptor, missing",
    ]
    assert (
        problems("glue", "GetTable", {"Table": {"Name": "t", "CreateTime": datetime(2024, 1, 1, tzinfo=UTC)}})
        == []
    )
