"""The codec: JSON to boto3's values and back, by the service model, converting only what differs."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from gluecat.aws.codec import ShapeCodec, shapes_needing_conversion
from gluecat.aws.endpoint import service_model
from gluecat.aws.errors import AwsError

GLUE = service_model("glue")
WHEN = datetime(2024, 2, 29, 23, 59, 58, 123456, tzinfo=UTC)


@pytest.fixture(scope="module")
def codec() -> ShapeCodec:
    return ShapeCodec(GLUE)


def test_only_shapes_holding_a_timestamp_or_blob_need_converting() -> None:
    needs = shapes_needing_conversion(GLUE)
    assert {"Partition", "PartitionList", "Table", "Database", "ColumnStatistics", "DecimalNumber"} <= needs
    assert not {"StorageDescriptor", "SerDeInfo", "Column", "ColumnList", "ParametersMap"} & needs


def test_a_reply_keeps_only_the_output_members_and_converts_only_timestamps(codec: ShapeCodec) -> None:
    descriptor = {"Columns": [{"Name": "id", "Type": "int"}], "Location": "s3://x/"}
    answer = {
        "Partitions": [{"Values": ["1"], "CreationTime": WHEN, "StorageDescriptor": descriptor}],
        "ResponseMetadata": {"HTTPStatusCode": 200},
    }
    wire = codec.write_output(GLUE.operation_model("GetPartitions"))(answer)
    assert wire == {
        "Partitions": [{"Values": ["1"], "CreationTime": 1709251198.123456, "StorageDescriptor": descriptor}]
    }
    assert wire["Partitions"][0]["StorageDescriptor"] is descriptor  # not walked: nothing in it to convert
    assert datetime.fromtimestamp(json.loads(json.dumps(wire))["Partitions"][0]["CreationTime"], UTC) == WHEN


def test_a_request_gets_datetimes_and_bytes(codec: ShapeCodec) -> None:
    read = codec.read_input(GLUE.operation_model("UpdateColumnStatisticsForTable"))
    params = read(
        {
            "DatabaseName": "db",
            "ColumnStatisticsList": [
                {
                    "AnalyzedTime": 1709251198.123456,
                    "StatisticsData": {
                        "Type": "DECIMAL",
                        "DecimalColumnStatisticsData": {
                            "MinimumValue": {"UnscaledValue": "AQI=", "Scale": 1}
                        },
                    },
                }
            ],
        }
    )
    stats = params["ColumnStatisticsList"][0]
    assert stats["AnalyzedTime"] == WHEN
    assert (
        stats["StatisticsData"]["DecimalColumnStatisticsData"]["MinimumValue"]["UnscaledValue"] == b"\x01\x02"
    )


def test_a_recursive_shape_is_converted_at_every_depth(codec: ShapeCodec) -> None:
    # Table -> TableStatus -> StatusDetails -> Table: the model's own cycle
    table = {
        "Name": "t",
        "UpdateTime": WHEN,
        "Status": {"Details": {"RequestedChange": {"Name": "t", "UpdateTime": WHEN}}},
    }
    wire = codec.writer(GLUE.shape_for("Table"))
    assert wire is not None
    out = wire(table)
    assert out["UpdateTime"] == out["Status"]["Details"]["RequestedChange"]["UpdateTime"] == WHEN.timestamp()


def test_iso8601_shapes_travel_as_text(codec: ShapeCodec) -> None:
    reader = codec.reader(GLUE.shape_for("KafkaStreamingSourceOptions"))
    assert reader is not None
    assert reader({"StartingTimestamp": "2024-02-29T23:59:58.123456Z"})["StartingTimestamp"] == WHEN
    lake_formation = service_model("lakeformation")
    write = ShapeCodec(lake_formation).write_output(lake_formation.operation_model("GetQueryStatistics"))
    assert write({"QuerySubmissionTime": WHEN}) == {"QuerySubmissionTime": "2024-02-29T23:59:58.123456Z"}


def test_values_of_the_wrong_type_are_left_for_the_apis_validation(codec: ShapeCodec) -> None:
    read = codec.read_input(GLUE.operation_model("GetTable"))
    assert read({"QueryAsOfTime": True})["QueryAsOfTime"] is True
    read = codec.read_input(GLUE.operation_model("BatchCreatePartition"))
    assert read({"PartitionInputList": "not a list"}) == {"PartitionInputList": "not a list"}
    assert read({"PartitionInputList": [None, 3]}) == {"PartitionInputList": [None, 3]}


@pytest.mark.parametrize(
    ("operation", "body", "says"),
    [
        ("GetTable", {"QueryAsOfTime": 1e30}, "out of range"),
        ("GetTable", {"QueryAsOfTime": float("nan")}, "out of range"),
        (
            "UpdateColumnStatisticsForTable",
            {
                "ColumnStatisticsList": [
                    {
                        "StatisticsData": {
                            "DecimalColumnStatisticsData": {"MinimumValue": {"UnscaledValue": "!!"}}
                        }
                    }
                ]
            },
            "base64",
        ),
    ],
)
def test_undecodable_timestamps_and_blobs_are_serialization_errors(
    codec: ShapeCodec, operation: str, body: dict[str, object], says: str
) -> None:
    with pytest.raises(AwsError, match=says) as err:
        codec.read_input(GLUE.operation_model(operation))(body)
    assert err.value.code == "SerializationException"
