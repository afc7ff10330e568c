from __future__ import annotations

from typing import Any

import pytest

from gluecat import Catalog


@pytest.fixture
def catalog(warehouse: str) -> Catalog:
    return Catalog(warehouse)


def table_input(name: str, **overrides: Any) -> dict[str, Any]:
    """A typical crawler-made Parquet table."""
    base: dict[str, Any] = {
        "Name": name,
        "Description": "orders by day",
        "Owner": "etl",
        "TableType": "EXTERNAL_TABLE",
        "Parameters": {"classification": "parquet"},
        "StorageDescriptor": {
            "Columns": [
                {"Name": "id", "Type": "bigint"},
                {"Name": "amount", "Type": "double", "Comment": "in USD"},
                {"Name": "note", "Type": "string"},
            ],
            "Location": f"s3://bucket/{name}/",
            "InputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
            "OutputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
            "SerdeInfo": {
                "SerializationLibrary": "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
            },
        },
        "PartitionKeys": [{"Name": "dt", "Type": "string"}],
    }
    base.update(overrides)
    return base
