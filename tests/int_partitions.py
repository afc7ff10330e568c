"""A table db.t partitioned by one int key k, for tests of how partition writes are stored."""

from __future__ import annotations

from typing import Any

from gluecat import Catalog

KEY = ("db", "t")


def make(catalog: Catalog) -> Catalog:
    catalog.create_database(DatabaseInput={"Name": "db"})
    catalog.create_table(
        DatabaseName="db",
        TableInput={
            "Name": "t",
            "StorageDescriptor": {"Columns": [{"Name": "x", "Type": "int"}], "Location": "s3://b/t/"},
            "PartitionKeys": [{"Name": "k", "Type": "int"}],
        },
    )
    return catalog


def add(catalog: Catalog, *keys: int) -> None:
    """One write (one segment) of the partitions k = each of ``keys``."""
    catalog.batch_create_partition(
        DatabaseName="db",
        TableName="t",
        PartitionInputList=[
            {"Values": [str(k)], "StorageDescriptor": {"Location": f"s3://b/t/k={k}/"}} for k in keys
        ],
    )


def live(catalog: Catalog) -> list[int]:
    """The table's partitions (every page of GetPartitions), sorted."""
    found = []
    token: dict[str, Any] = {}
    while True:
        page = catalog.get_partitions(DatabaseName="db", TableName="t", **token)
        found += [int(p["Values"][0]) for p in page["Partitions"]]
        if not page.get("NextToken"):
            return sorted(found)
        token = {"NextToken": page["NextToken"]}


def segments(catalog: Catalog) -> tuple[str, ...]:
    return catalog.store.latest().table_segments(KEY)
