"""Request validation (gluecat.api.shapes): the documents' limits at their boundaries, with errors that
name the field path; accepted input comes back as a normalized copy."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest

from gluecat.api import shapes, validate
from gluecat.errors import InvalidInputException


def table(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "Name": "Orders",
        "StorageDescriptor": {
            "Columns": [{"Name": "id", "Type": "bigint", "Comment": "key"}],
            "Location": "s3://b/orders/",
            "SerdeInfo": {"SerializationLibrary": "x", "Parameters": {"field.delim": ","}},
            "SortColumns": [{"Column": "id", "SortOrder": 1}],
        },
        "PartitionKeys": [{"Name": "dt", "Type": "string"}],
        "Parameters": {"k": "v"},
    }
    base.update(overrides)
    return base


def sd(**overrides: Any) -> dict[str, Any]:
    return table(StorageDescriptor={**table()["StorageDescriptor"], **overrides})


def test_a_valid_table_input_is_normalized_into_a_copy() -> None:
    raw = table(LastAccessTime=datetime(2024, 1, 1))
    out = shapes.check_table_input(raw)
    assert out["Name"] == "orders"
    assert out["LastAccessTime"] == datetime(2024, 1, 1, tzinfo=UTC)
    out["StorageDescriptor"]["Columns"][0]["Name"] = "changed"
    assert raw["StorageDescriptor"]["Columns"][0]["Name"] == "id"
    assert raw["Name"] == "Orders"


# (input, field path named in the error, rule); every case is one limit just past its boundary.
INVALID_TABLE_INPUTS = [
    (table(Name=""), "TableInput.Name", "at least 1 byte"),
    (table(Name="n" * 256), "TableInput.Name", "at most 255 bytes"),
    (table(Name="é" * 128), "TableInput.Name", "at most 255 bytes"),  # 256 UTF-8 bytes
    (table(Name="a\nb"), "TableInput.Name", "single-line"),
    (table(Name=7), "TableInput.Name", "must be a string"),
    (table(Description="d" * 2049), "TableInput.Description", "at most 2048"),
    (table(Owner=""), "TableInput.Owner", "at least 1 byte"),
    (table(Retention=-1), "TableInput.Retention", "at least 0"),
    (table(Retention=True), "TableInput.Retention", "must be an integer"),
    (table(ViewOriginalText="v" * 409_601), "TableInput.ViewOriginalText", "at most 409600"),
    (table(TableType="t" * 256), "TableInput.TableType", "at most 255"),
    (table(Parameters={"k" * 256: "v"}), "TableInput.Parameters key", "at most 255"),
    (table(Parameters={"k": "v" * 512_001}), r"TableInput.Parameters\['k'\]", "at most 512000"),
    (table(Parameters={"a\nb": "v"}), "TableInput.Parameters key", "single-line"),
    (table(Foo=1), "TableInput", "unknown field 'Foo'"),
    (sd(Location="l" * 2057), "TableInput.StorageDescriptor.Location", "at most 2056"),
    (sd(InputFormat="i" * 129), "TableInput.StorageDescriptor.InputFormat", "at most 128"),
    (sd(Columns=[{"Name": ""}]), r"TableInput.StorageDescriptor.Columns\[0\].Name", "at least 1 byte"),
    (sd(Columns=[{"Type": "int"}]), r"TableInput.StorageDescriptor.Columns\[0\].Name", "is required"),
    (sd(Columns=[{"Name": "c", "Comment": "c" * 256}]), r"Columns\[0\].Comment", "at most 255"),
    (sd(SortColumns=[{"Column": "id", "SortOrder": 2}]), r"SortColumns\[0\].SortOrder", "at most 1"),
    (sd(NumberOfBuckets="4"), "StorageDescriptor.NumberOfBuckets", "must be an integer"),
    (sd(Compressed="yes"), "StorageDescriptor.Compressed", "must be a boolean"),
    (sd(SerdeInfo={"Name": ""}), "StorageDescriptor.SerdeInfo.Name", "at least 1 byte"),
    (sd(SchemaReference={}), "StorageDescriptor.SchemaReference", "needs SchemaId or SchemaVersionId"),
    (sd(Columns=[{"Name": "dt"}]), r"TableInput.PartitionKeys\[0\].Name", "cannot be a column"),
    (table(PartitionKeys=[{"Name": "a"}, {"Name": "A"}]), r"PartitionKeys\[1\].Name", "repeats"),
    (table(StorageDescriptor=[]), "TableInput.StorageDescriptor", "must be a structure"),
]


@pytest.mark.parametrize(("raw", "field", "rule"), INVALID_TABLE_INPUTS)
def test_invalid_table_inputs_name_the_field_and_the_rule(raw: dict[str, Any], field: str, rule: str) -> None:
    before = copy.deepcopy(raw)
    with pytest.raises(InvalidInputException, match=f"{field}.*{rule}"):
        shapes.check_table_input(raw)
    assert raw == before


@pytest.mark.parametrize(
    "raw",
    [
        table(Name="n" * 255),
        table(Name="é" * 127 + "x"),  # 255 bytes
        table(Name="tab\tseparated"),
        table(Description="line one\nline two\r\n"),
        table(Parameters={"k": "v" * 512_000}),
        table(ViewOriginalText="v" * 409_600),
        sd(SortColumns=[{"Column": "id", "SortOrder": 0}]),
    ],
)
def test_values_at_their_limits_are_accepted(raw: dict[str, Any]) -> None:
    shapes.check_table_input(raw)


def test_database_input() -> None:
    out = shapes.check_database_input(
        {
            "Name": "Sales",
            "LocationUri": "s3://b/sales",
            "CreateTableDefaultPermissions": [
                {
                    "Principal": {"DataLakePrincipalIdentifier": "IAM_ALLOWED_PRINCIPALS"},
                    "Permissions": ["ALL"],
                }
            ],
        }
    )
    assert out["Name"] == "sales"
    with pytest.raises(InvalidInputException, match=r"Permissions\[0\].*'READ' is not one of"):
        shapes.check_database_input(
            {"Name": "a", "CreateTableDefaultPermissions": [{"Permissions": ["READ"]}]}
        )
    with pytest.raises(InvalidInputException, match="DatabaseInput.LocationUri.*at most 1024"):
        shapes.check_database_input({"Name": "a", "LocationUri": "l" * 1025})


@pytest.mark.parametrize(
    ("raw", "field", "rule"),
    [
        ({"StorageDescriptor": {}}, "PartitionInput.Values", "is required"),
        ({"Values": "2024"}, "PartitionInput.Values", "must be a list"),
        ({"Values": [2024]}, r"PartitionInput.Values\[0\]", "must be a string"),
        ({"Values": ["v" * 1025]}, r"PartitionInput.Values\[0\]", "at most 1024"),
        ({"Values": ["a"], "Parameters": {"": "x"}}, "PartitionInput.Parameters key", "at least 1 byte"),
    ],
)
def test_invalid_partition_inputs(raw: dict[str, Any], field: str, rule: str) -> None:
    with pytest.raises(InvalidInputException, match=f"{field}.*{rule}"):
        shapes.check_partition_input(raw)


def test_partition_values_may_hold_any_text() -> None:
    # Only an index restricts values (no U+0000..U+0002 in indexed keys); the Partition API does not.
    assert shapes.check_partition_input({"Values": ["a\nb", "\u0001"]})["Values"] == ["a\nb", "\u0001"]


@pytest.mark.parametrize(
    ("raw", "rule"),
    [
        ({"SegmentNumber": 0, "TotalSegments": 11}, "TotalSegments.*at most 10"),
        ({"SegmentNumber": 0, "TotalSegments": 0}, "TotalSegments.*at least 1"),
        ({"SegmentNumber": 3, "TotalSegments": 3}, "SegmentNumber.*less than TotalSegments"),
        ({"SegmentNumber": -1, "TotalSegments": 3}, "SegmentNumber.*at least 0"),
        ({"TotalSegments": 3}, "SegmentNumber.*is required"),
    ],
)
def test_segments(raw: dict[str, Any], rule: str) -> None:
    with pytest.raises(InvalidInputException, match=rule):
        shapes.check_segment(raw)


def test_partition_indexes_need_unique_keys() -> None:
    assert shapes.check_partition_index({"IndexName": "i", "Keys": ["a", "b"]}) == {
        "IndexName": "i",
        "Keys": ["a", "b"],
    }
    with pytest.raises(InvalidInputException, match=r"Keys\[1\].*twice"):
        shapes.check_partition_index({"IndexName": "i", "Keys": ["a", "A"]})
    with pytest.raises(InvalidInputException, match="Keys.*at least 1 item"):
        shapes.check_partition_index({"IndexName": "i", "Keys": []})


def stats(kind: str, member: str, data: dict[str, Any]) -> dict[str, Any]:
    return {
        "ColumnName": "c",
        "ColumnType": "bigint",
        "AnalyzedTime": datetime(2024, 1, 1, tzinfo=UTC),
        "StatisticsData": {"Type": kind, member: data},
    }


def test_column_statistics() -> None:
    good = stats(
        "LONG",
        "LongColumnStatisticsData",
        {"MinimumValue": 1, "MaximumValue": 9, "NumberOfNulls": 0, "NumberOfDistinctValues": 9},
    )
    assert shapes.check_column_statistics(good, "S") == good
    cases = [
        (
            stats("LONG", "DoubleColumnStatisticsData", {"NumberOfNulls": 0, "NumberOfDistinctValues": 1}),
            "Type LONG needs exactly",
        ),
        (
            stats(
                "LONG",
                "LongColumnStatisticsData",
                {"MinimumValue": 9, "MaximumValue": 1, "NumberOfNulls": 0, "NumberOfDistinctValues": 1},
            ),
            "MinimumValue.*greater than MaximumValue",
        ),
        (
            stats("LONG", "LongColumnStatisticsData", {"NumberOfNulls": -1, "NumberOfDistinctValues": 1}),
            "NumberOfNulls.*at least 0",
        ),
        (
            stats("BOOLEAN", "BooleanColumnStatisticsData", {"NumberOfTrues": 1, "NumberOfFalses": 1}),
            "NumberOfNulls.*is required",
        ),
        (stats("TEXT", "LongColumnStatisticsData", {}), "Type.*'TEXT' is not one of"),
    ]
    for raw, rule in cases:
        with pytest.raises(InvalidInputException, match=rule):
            shapes.check_column_statistics(raw, "S")


def test_search_inputs() -> None:
    with pytest.raises(InvalidInputException, match=r"SortCriteria.*at most 1"):
        shapes.check_sort_criteria([{"FieldName": "Name"}, {"FieldName": "Owner"}])
    with pytest.raises(InvalidInputException, match=r"SortCriteria\[0\].Sort.*ASC or DESC"):
        shapes.check_sort_criteria([{"FieldName": "Name", "Sort": "UP"}])
    with pytest.raises(InvalidInputException, match=r"Filters\[0\].Comparator"):
        shapes.check_property_predicates([{"Key": "Name", "Value": "x", "Comparator": "LIKE"}])


def test_names_and_ids() -> None:
    assert shapes.check_db_or_table_name("MiXed", "DatabaseName") == "mixed"
    assert shapes.check_transaction_id("tx-1.2:3") == "tx-1.2:3"
    with pytest.raises(InvalidInputException, match="TransactionId.*letters, digits and punctuation"):
        shapes.check_transaction_id("has space")
    with pytest.raises(InvalidInputException, match="MaxResults.*at most 100"):
        validate.request("glue", "GetTables", {"DatabaseName": "d", "MaxResults": 101})
    with pytest.raises(InvalidInputException, match="is not valid UTF-8"):
        shapes.check_name("\ud800", "Name")
    assert shapes.check_timestamp(0, "T") == datetime(1970, 1, 1, tzinfo=UTC)
