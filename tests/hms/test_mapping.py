"""hms/mapping.py's many-partitions path (shared structures) answers what the one-partition path does."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import Any

from gluecat.hms import mapping

TABLE: dict[str, Any] = {
    "Name": "t",
    "DatabaseName": "db",
    "PartitionKeys": [{"Name": "ds", "Type": "string"}, {"Name": "Region", "Type": "string"}],
    "StorageDescriptor": {
        "Columns": [{"Name": "ID", "Type": "bigint"}],
        "Location": "s3://b/t",
        "InputFormat": "in.table",
        "OutputFormat": "out.table",
        "SerdeInfo": {"SerializationLibrary": "serde.table", "Parameters": {"a": "1"}},
    },
}


def a_partition(rng: random.Random, i: int) -> dict[str, Any]:
    sd: dict[str, Any] = {}
    if rng.random() < 0.7:
        sd["Location"] = f"s3://b/t/p{i}"
    if rng.random() < 0.5:
        sd["Columns"] = [
            {"Name": "id", "Type": rng.choice(["bigint", "int"]), "Comment": rng.choice([None, "c"])}
        ]
        sd["Columns"] = [{k: v for k, v in c.items() if v is not None} for c in sd["Columns"]]
    if rng.random() < 0.5:
        sd["SerdeInfo"] = {
            "SerializationLibrary": rng.choice(["s1", "s2"]),
            "Parameters": {"k": rng.choice("xy")},
        }
    if rng.random() < 0.3:
        sd["InputFormat"] = "in.part"
    if rng.random() < 0.2:
        sd["SortColumns"] = [{"Column": "id", "SortOrder": 1}]
    if rng.random() < 0.2:
        sd["SkewedInfo"] = {"SkewedColumnNames": ["id"], "SkewedColumnValues": ["1"]}
    part: dict[str, Any] = {
        "Values": [f"d{i % 3}", rng.choice(["eu", "us", ""])],
        "DatabaseName": "db",
        "TableName": "t",
        "CreationTime": datetime(2024, 1, 1, tzinfo=UTC),
        "StorageDescriptor": sd,
    }
    if rng.random() < 0.5:
        part["Parameters"] = {"n": str(i)}
    return part


def test_partitions_of_one_reply_map_as_each_alone() -> None:
    rng = random.Random(39)
    parts = [a_partition(rng, i) for i in range(300)]
    assert mapping.partitions(parts, TABLE) == [mapping.partition(p, TABLE) for p in parts]
