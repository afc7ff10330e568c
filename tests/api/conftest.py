from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from gluecat import Catalog
from gluecat.api.service import operations

from .response_shapes import problems


@pytest.fixture
def catalog(warehouse: str) -> Catalog:
    return Catalog(warehouse)


@pytest.fixture(autouse=True)
def responses_conform_to_botocore(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every response of every Glue operation a test in tests/api makes is checked against botocore's
    output shape of the operation (member names, types, required members, enums); a test whose calls
    answered anything else fails, naming the response and what in it does not conform."""
    found: list[str] = []

    def recording(method: Callable[..., Any], api: str) -> Callable[..., Any]:
        @functools.wraps(method)
        def call(self: Catalog, *args: Any, **kwargs: Any) -> Any:
            response = method(self, *args, **kwargs)
            found.extend(problems("glue", api, response))
            return response

        return call

    for name, api in operations(Catalog, "glue"):
        monkeypatch.setattr(Catalog, name, recording(getattr(Catalog, name), api))
    yield found
    assert found == [], "responses that botocore's output shapes do not allow:\n" + "\n".join(found[:20])


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
