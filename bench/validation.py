"""The cost of checking a request against the service model: gluecat's walker next to botocore's own
ParamValidator (what boto3 runs on every call before sending it), on the same requests in the same run.

    PYTHONPATH=python python bench/validation.py [--samples 300]

Requests: BatchCreatePartition of 100 partitions as bulk loaders send them (values and a location each,
the storage descriptors sharing every other member), the same with 20 columns, a SerDe and parameters
per partition, both again as the AWS endpoint gets them (decoded from JSON: the partitions share no
object) with what bench/aws_endpoint.py sends, GetPartitions with an expression, and GetTable. gluecat's walker checks more than
botocore's (byte lengths, patterns, enums, ranges, the documents' cross-field rules) and returns a
normalized copy; botocore checks required members, types and minimums.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import orjson
from botocore.session import get_session
from botocore.validate import ParamValidator

from gluecat.api import validate


def bulk(i: int) -> dict[str, Any]:
    parts = [
        {"Values": [f"v{i}", str(j)], "StorageDescriptor": {"Location": f"s3://lake/t/v{i}/{j}"}}
        for j in range(100)
    ]
    return {"DatabaseName": "db", "TableName": "t", "PartitionInputList": parts}


def rich(i: int) -> dict[str, Any]:
    columns = [{"Name": f"c{n}", "Type": "string", "Comment": "a column"} for n in range(20)]
    serde = {"SerializationLibrary": "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"}
    parts = [
        {
            "Values": [f"v{i}", str(j)],
            "Parameters": {"rows": str(j)},
            "StorageDescriptor": {
                "Columns": columns,
                "SerdeInfo": serde,
                "Location": f"s3://lake/t/v{i}/{j}",
                "InputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
            },
        }
        for j in range(100)
    ]
    return {"DatabaseName": "db", "TableName": "t", "PartitionInputList": parts}


def decoded(make: Callable[[int], dict[str, Any]]) -> Callable[[int], dict[str, Any]]:
    """A request as the AWS endpoint gets it: decoded from JSON, so its partitions share no object."""
    return lambda i: orjson.loads(orjson.dumps(make(i)))


def described(i: int) -> dict[str, Any]:
    """What bench/aws_endpoint.py sends: 3 columns, formats and a SerDe in each storage descriptor."""
    parquet = "org.apache.hadoop.hive.ql.io.parquet"
    parts = [
        {
            "Values": [f"v{i}-{j}"],
            "StorageDescriptor": {
                "Columns": [
                    {"Name": c, "Type": t} for c, t in (("id", "bigint"), ("x", "double"), ("s", "string"))
                ],
                "Location": f"s3://lake/t/v{i}-{j}/",
                "InputFormat": f"{parquet}.MapredParquetInputFormat",
                "OutputFormat": f"{parquet}.MapredParquetOutputFormat",
                "SerdeInfo": {"SerializationLibrary": f"{parquet}.serde.ParquetHiveSerDe"},
            },
        }
        for j in range(100)
    ]
    return {"DatabaseName": "db", "TableName": "t", "PartitionInputList": parts}


REQUESTS: list[tuple[str, str, Callable[[int], dict[str, Any]]]] = [
    ("BatchCreatePartition (100, bulk)", "BatchCreatePartition", bulk),
    ("BatchCreatePartition (100, rich)", "BatchCreatePartition", rich),
    ("BatchCreatePartition (100, described, wire)", "BatchCreatePartition", decoded(described)),
    ("BatchCreatePartition (100, rich, wire)", "BatchCreatePartition", decoded(rich)),
    (
        "GetPartitions",
        "GetPartitions",
        lambda i: {
            "DatabaseName": "db",
            "TableName": "t",
            "Expression": f"k = 'v{i}' AND j > 3",
            "MaxResults": 100,
        },
    ),
    ("GetTable", "GetTable", lambda i: {"DatabaseName": "db", "Name": f"t{i}"}),
]


def median_us(
    check: Callable[[dict[str, Any]], Any], make: Callable[[int], dict[str, Any]], samples: int
) -> float:
    requests = [make(i) for i in range(samples)]
    check(requests[0])  # compile and warm up
    times = []
    for request in requests:
        start = time.perf_counter()
        check(request)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--samples", type=int, default=300)
    args = parser.parse_args()
    service = get_session().get_service_model("glue")
    botocore = ParamValidator()
    print(f"{'request':44} {'gluecat (us)':>13} {'botocore (us)':>14}")
    for label, operation, make in REQUESTS:
        shape = service.operation_model(operation).input_shape

        def theirs(params: dict[str, Any], shape: Any = shape) -> Any:
            report = botocore.validate(params, shape)
            assert not report.has_errors(), report.generate_report()

        ours = median_us(
            lambda params, operation=operation: validate.request("glue", operation, params),
            make,
            args.samples,
        )
        peer = median_us(theirs, make, args.samples)
        print(f"{label:44} {ours:13.1f} {peer:14.1f}")


if __name__ == "__main__":
    main()
