"""The governed table db.t (int partition key k) that the transaction tests of tests/catalog write to."""

from __future__ import annotations

from gluecat import Catalog


def make_table(warehouse: str) -> Catalog:
    glue = Catalog(warehouse)
    glue.create_database(DatabaseInput={"Name": "db"})
    glue.create_table(
        DatabaseName="db",
        TableInput={
            "Name": "t",
            "TableType": "GOVERNED",
            "StorageDescriptor": {"Columns": [{"Name": "x", "Type": "int"}], "Location": "s3://lake/t/"},
            "PartitionKeys": [{"Name": "k", "Type": "int"}],
        },
    )
    return glue
