"""A governed table db.t, as the tests of transactions and governed writes make it: by default keyed by
an int partition key k, its objects under s3://lake/t/."""

from __future__ import annotations

from gluecat import Catalog


def make_table(
    warehouse: str, *, location: str = "s3://lake/t/", keys: tuple[tuple[str, str], ...] = (("k", "int"),)
) -> Catalog:
    glue = Catalog(warehouse)
    glue.create_database(DatabaseInput={"Name": "db"})
    glue.create_table(
        DatabaseName="db",
        TableInput={
            "Name": "t",
            "TableType": "GOVERNED",
            "StorageDescriptor": {"Columns": [{"Name": "x", "Type": "int"}], "Location": location},
            "PartitionKeys": [{"Name": name, "Type": kind} for name, kind in keys],
        },
    )
    return glue
