"""The statistics handed to Spark's planner, read from a table's parameters (no Spark session needed)."""

from __future__ import annotations

from gluecat import Catalog
from gluecat.spark import statistics


def table_with(catalog: Catalog, parameters: dict[str, str]) -> dict:
    catalog.create_database(DatabaseInput={"Name": "db"})
    catalog.create_table(
        DatabaseName="db",
        TableInput={
            "Name": "t",
            "Parameters": parameters,
            "StorageDescriptor": {"Columns": [{"Name": "id", "Type": "bigint"}], "Location": "/tmp/t"},
        },
    )
    return catalog.get_table(DatabaseName="db", Name="t")["Table"]


def test_size_and_row_count_are_read_from_the_tables_parameters(tmp_path) -> None:
    catalog = Catalog(str(tmp_path))
    table = table_with(catalog, {"totalSize": "2048", "numRows": "10"})
    assert statistics.for_spark(catalog, table) == {"columns": {}, "size": 2048, "rows": 10}


def test_a_size_or_row_count_that_is_not_a_plain_decimal_number_is_ignored(tmp_path) -> None:
    """Parameters are anyone's text: '²' is a digit to str.isdigit() but no number to int(), and '١٠'
    (Arabic-Indic digits) would be read as 10. Neither may stop Spark loading the table, or invent a count."""
    catalog = Catalog(str(tmp_path))
    table = table_with(catalog, {"totalSize": "²", "numRows": "١٠"})
    assert statistics.for_spark(catalog, table) == {"columns": {}}
