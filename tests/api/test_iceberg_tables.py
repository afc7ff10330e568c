"""CreateTable's OpenTableFormatInput registers an Iceberg table as Glue does: the first metadata file
written under the table's location, table_type ICEBERG and metadata_location in Parameters. pyiceberg's
own GlueCatalog, given a gluecat Catalog as its boto3 Glue client, loads it, appends to it and commits
with UpdateTable's VersionId as its lock."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.catalog.glue import GlueCatalog
from pyiceberg.types import (
    DecimalType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
)

from gluecat import Catalog
from gluecat.errors import InvalidInputException

ICEBERG = {"IcebergInput": {"MetadataOperation": "CREATE", "Version": "2"}}


@pytest.fixture
def lake(catalog: Catalog, tmp_path: Path) -> Catalog:
    catalog.create_database(DatabaseInput={"Name": "db", "LocationUri": f"file://{tmp_path}/db"})
    return catalog


def orders(location: str | None) -> dict[str, Any]:
    sd: dict[str, Any] = {
        "Columns": [
            {"Name": "id", "Type": "bigint", "Comment": "the key"},
            {"Name": "amount", "Type": "decimal(10,2)"},
            {"Name": "tags", "Type": "array<string>"},
            {"Name": "attrs", "Type": "map<string,int>"},
            {"Name": "who", "Type": "struct<name:string,age:int>"},
            {"Name": "at", "Type": "timestamp"},
        ]
    }
    if location is not None:
        sd["Location"] = location
    return {
        "Name": "orders",
        "StorageDescriptor": sd,
        "PartitionKeys": [{"Name": "region", "Type": "string"}],
    }


def test_the_table_is_registered_as_glue_registers_one(lake: Catalog, tmp_path: Path) -> None:
    location = f"file://{tmp_path}/orders"
    lake.create_table(DatabaseName="db", TableInput=orders(location), OpenTableFormatInput=ICEBERG)
    table = lake.get_table(DatabaseName="db", Name="orders")["Table"]
    assert table["TableType"] == "EXTERNAL_TABLE"
    assert table["Parameters"]["table_type"] == "ICEBERG"
    metadata_location = table["Parameters"]["metadata_location"]
    assert metadata_location.startswith(f"{location}/metadata/00000-") and metadata_location.endswith(
        ".metadata.json"
    )
    assert table["PartitionKeys"] == []  # Iceberg partitions in its own metadata
    assert [c["Name"] for c in table["StorageDescriptor"]["Columns"]] == [
        "id", "amount", "tags", "attrs", "who", "at", "region",
    ]  # fmt: skip
    assert table["StorageDescriptor"]["Columns"][0]["Parameters"]["iceberg.field.id"] == "1"
    metadata = json.loads(Path(metadata_location.removeprefix("file://")).read_text())
    assert (metadata["format-version"], metadata["location"], metadata["snapshots"]) == (2, location, [])
    assert metadata["partition-specs"][0]["fields"] == [
        {"source-id": 7, "field-id": 1000, "name": "region", "transform": "identity"}
    ]


def test_pyiceberg_reads_writes_and_locks_it(
    lake: Catalog, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    lake.create_table(DatabaseName="db", TableInput=orders(None), OpenTableFormatInput=ICEBERG)
    assert lake.get_table(DatabaseName="db", Name="orders")["Table"]["StorageDescriptor"]["Location"] == (
        f"file://{tmp_path}/db/orders"  # the database's location, as Glue places a table without one
    )
    iceberg = GlueCatalog("glue", client=lake)
    table = iceberg.load_table("db.orders")
    fields = {f.name: f for f in table.schema().fields}
    assert fields["id"] == NestedField(1, "id", LongType(), required=False, doc="the key")
    assert fields["amount"].field_type == DecimalType(10, 2)
    assert isinstance(fields["tags"].field_type, ListType)
    assert fields["tags"].field_type.element_type == StringType()
    assert isinstance(fields["attrs"].field_type, MapType)
    assert fields["attrs"].field_type.value_type == IntegerType()
    assert isinstance(fields["who"].field_type, StructType)
    assert fields["at"].field_type == TimestampType()
    assert [f.name for f in table.spec().fields] == ["region"]

    data = pa.table({"id": pa.array([1, 2], pa.int64()), "region": ["eu", "us"]})
    table.append(_full(table, data))
    again = iceberg.load_table("db.orders")
    assert sorted(again.scan(selected_fields=("id", "region")).to_arrow().to_pylist(), key=str) == [
        {"id": 1, "region": "eu"},
        {"id": 2, "region": "us"},
    ]
    # Two writers from the same version: the second's UpdateTable carries a stale VersionId, which
    # pyiceberg sees as a concurrent update (ConcurrentModificationException) and retries on the new one.
    first, second = iceberg.load_table("db.orders"), iceberg.load_table("db.orders")
    first.append(_full(first, data))
    second.append(_full(second, data))
    assert "Commit failed due to a concurrent update" in caplog.text
    assert len(iceberg.load_table("db.orders").scan().to_arrow()) == 6
    # pyiceberg's commits are Glue UpdateTables (with SkipArchive, its default): three appends, version 4.
    assert lake.get_table(DatabaseName="db", Name="orders")["Table"]["VersionId"] == "4"
    versions = lake.get_table_versions(DatabaseName="db", TableName="orders")["TableVersions"]
    assert [v["VersionId"] for v in versions] == ["4"]


def _full(table: Any, data: pa.Table) -> pa.Table:
    """``data`` with every other column of the table as nulls, in the table's Arrow schema."""
    schema = table.schema().as_arrow()
    columns = [
        data.column(f.name) if f.name in data.column_names else pa.nulls(len(data), f.type) for f in schema
    ]
    return pa.Table.from_arrays([c.cast(f.type) for c, f in zip(columns, schema, strict=True)], schema=schema)


def test_the_iceberg_schema_may_be_given_itself(lake: Catalog, tmp_path: Path) -> None:
    create = {
        "Location": f"file://{tmp_path}/events",
        "Schema": {
            "Fields": [
                {"Id": 1, "Name": "id", "Type": "long", "Required": True},
                {"Id": 2, "Name": "day", "Type": "date", "Required": False, "Doc": "event day"},
                {
                    "Id": 3,
                    "Name": "payload",
                    "Type": {"type": "list", "element-id": 4, "element": "string", "element-required": False},
                    "Required": False,
                },
            ]
        },
        "PartitionSpec": {"Fields": [{"SourceId": 2, "Transform": "month", "Name": "day_month"}]},
        "Properties": {"write.format.default": "parquet"},
    }
    lake.create_table(
        DatabaseName="db",
        TableInput={"Name": "events"},
        OpenTableFormatInput={
            "IcebergInput": {"MetadataOperation": "CREATE", "CreateIcebergTableInput": create}
        },
    )
    table = lake.get_table(DatabaseName="db", Name="events")["Table"]
    assert [(c["Name"], c["Type"]) for c in table["StorageDescriptor"]["Columns"]] == [
        ("id", "bigint"),
        ("day", "date"),
        ("payload", "array<string>"),
    ]
    loaded = GlueCatalog("glue", client=lake).load_table("db.events")
    assert loaded.schema().find_field("id").required
    assert str(loaded.spec().fields[0].transform) == "month"
    assert loaded.properties["write.format.default"] == "parquet"


@pytest.mark.in_process
def test_bad_requests_change_nothing(lake: Catalog, tmp_path: Path) -> None:
    location = f"file://{tmp_path}/bad"
    cases: list[tuple[dict[str, Any], dict[str, Any], type[Exception], str]] = [
        (
            orders(location),
            {"IcebergInput": {"MetadataOperation": "UPDATE"}},
            InvalidInputException,
            "CREATE",
        ),
        (
            orders(location),
            {"IcebergInput": {"MetadataOperation": "CREATE", "Version": "9"}},
            InvalidInputException,
            "'9'",
        ),
        (orders(location), {}, InvalidInputException, "needs IcebergInput"),
        (
            {
                "Name": "orders",
                "StorageDescriptor": {
                    "Location": location,
                    "Columns": [{"Name": "u", "Type": "uniontype<int>"}],
                },
            },
            ICEBERG,
            InvalidInputException,
            "u: 'uniontype<int>'",
        ),
    ]
    for table_input, open_format, error, message in cases:
        with pytest.raises(error, match=message):
            lake.create_table(DatabaseName="db", TableInput=table_input, OpenTableFormatInput=open_format)
    with pytest.raises(lake.exceptions.EntityNotFoundException):
        lake.create_table(DatabaseName="nope", TableInput=orders(location), OpenTableFormatInput=ICEBERG)
    assert not Path(tmp_path, "bad").exists()  # nothing was written for a refused request
    lake.create_table(DatabaseName="db", TableInput=orders(location), OpenTableFormatInput=ICEBERG)
    with pytest.raises(lake.exceptions.AlreadyExistsException):
        lake.create_table(DatabaseName="db", TableInput=orders(location), OpenTableFormatInput=ICEBERG)
    assert len(list(Path(tmp_path, "bad", "metadata").iterdir())) == 1
    with pytest.raises(lake.exceptions.InvalidInputException, match="PartitionIndexes"):
        lake.create_table(
            DatabaseName="db",
            TableInput={**orders(location), "Name": "other"},
            OpenTableFormatInput=ICEBERG,
            PartitionIndexes=[{"IndexName": "i", "Keys": ["region"]}],
        )


def test_a_table_named_as_no_folder_gets_none_in_its_database(lake: Catalog, tmp_path: Path) -> None:
    # Without a location the table's folder is <LocationUri>/<name>: '..' in the name would put its
    # metadata outside the database's folder, '/' inside another table's.
    for name in ("../../escaped", "..", "orders/metadata"):
        with pytest.raises(lake.exceptions.InvalidInputException, match="cannot be the name of a folder"):
            lake.create_table(
                DatabaseName="db", TableInput={**orders(None), "Name": name}, OpenTableFormatInput=ICEBERG
            )
    assert sorted(p.name for p in tmp_path.rglob("*.metadata.json")) == []
    assert lake.get_tables(DatabaseName="db")["TableList"] == []
    lake.create_table(DatabaseName="db", TableInput=orders(None), OpenTableFormatInput=ICEBERG)
    location = lake.get_table(DatabaseName="db", Name="orders")["Table"]["StorageDescriptor"]["Location"]
    assert location == f"file://{tmp_path}/db/orders"
