"""SearchTables and column statistics."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from gluecat import Catalog
from gluecat.store import maintenance

from .conftest import table_input


@pytest.fixture
def lake(catalog: Catalog) -> Catalog:
    catalog.create_database(DatabaseInput={"Name": "sales"})
    catalog.create_database(DatabaseInput={"Name": "crm"})
    catalog.create_table(DatabaseName="sales", TableInput=table_input("customer-link"))
    catalog.create_table(DatabaseName="sales", TableInput=table_input("xx-link-yy", Owner="alice"))
    catalog.create_table(DatabaseName="crm", TableInput=table_input("xxlinkyy", Description="the link table"))
    catalog.create_table(
        DatabaseName="crm", TableInput=table_input("contacts", Parameters={"classification": "csv"})
    )
    return catalog


def names(resp: dict) -> list[str]:
    return [f"{t['DatabaseName']}.{t['Name']}" for t in resp["TableList"]]


def test_a_name_filter_matches_punctuation_separated_tokens(lake: Catalog) -> None:
    resp = lake.search_tables(Filters=[{"Key": "Name", "Value": "link"}])
    assert names(resp) == ["sales.customer-link", "sales.xx-link-yy"]


def test_filters_on_database_owner_and_parameters(lake: Catalog) -> None:
    assert names(lake.search_tables(Filters=[{"Key": "DatabaseName", "Value": "crm"}])) == [
        "crm.contacts",
        "crm.xxlinkyy",
    ]
    assert names(lake.search_tables(Filters=[{"Key": "Owner", "Value": "alice"}])) == ["sales.xx-link-yy"]
    assert names(lake.search_tables(Filters=[{"Key": "classification", "Value": "csv"}])) == ["crm.contacts"]


def test_time_filters_use_the_comparator(lake: Catalog) -> None:
    future = datetime(2100, 1, 1, tzinfo=UTC).isoformat()
    assert names(
        lake.search_tables(Filters=[{"Key": "CreateTime", "Value": future, "Comparator": "LESS_THAN"}])
    )
    assert not names(
        lake.search_tables(Filters=[{"Key": "CreateTime", "Value": future, "Comparator": "GREATER_THAN"}])
    )


@pytest.mark.parametrize("value", ["yesterday", "\u0661\u0662", "9" * 30])
def test_a_time_filter_that_is_not_a_time_is_invalid_input(lake: Catalog, value: str) -> None:
    # No table has a LastAccessTime to compare it with: the value is refused all the same, not
    # answered with no tables. ('\u0661\u0662' is Arabic-Indic digits; 9 * 30 is past year 9999.)
    for key in ("LastAccessTime", "CreateTime"):
        with pytest.raises(lake.exceptions.InvalidInputException, match=rf"Filters\[1\]\.Value.*{key}"):
            lake.search_tables(
                Filters=[
                    {"Key": "Name", "Value": "link"},
                    {"Key": key, "Value": value, "Comparator": "GREATER_THAN"},
                ]
            )


def test_search_text_matches_words_and_quoted_phrases(lake: Catalog) -> None:
    assert names(lake.search_tables(SearchText="link")) == [
        "crm.xxlinkyy",
        "sales.customer-link",
        "sales.xx-link-yy",
    ]
    assert names(lake.search_tables(SearchText='"the link table"')) == ["crm.xxlinkyy"]
    assert names(lake.search_tables(SearchText="USD")) == names(lake.search_tables())  # a column comment


def test_sort_criteria_and_paging(lake: Catalog) -> None:
    sort = [{"FieldName": "Name", "Sort": "DESC"}]
    first = lake.search_tables(SortCriteria=sort, MaxResults=3)
    rest = lake.search_tables(SortCriteria=sort, MaxResults=3, NextToken=first["NextToken"])
    assert names(first) + names(rest) == [
        "crm.xxlinkyy",
        "sales.xx-link-yy",
        "sales.customer-link",
        "crm.contacts",
    ]
    assert "NextToken" not in rest
    with pytest.raises(lake.exceptions.InvalidInputException, match="SortCriteria"):
        lake.search_tables(SortCriteria=[{"FieldName": "Columns", "Sort": "ASC"}])


def test_foreign_resource_share_finds_nothing_shared(lake: Catalog) -> None:
    assert lake.search_tables(ResourceShareType="FOREIGN")["TableList"] == []


def long_stats(column: str, lo: int, hi: int) -> dict:
    return {
        "ColumnName": column,
        "ColumnType": "bigint",
        "AnalyzedTime": datetime(2024, 5, 1, tzinfo=UTC),
        "StatisticsData": {
            "Type": "LONG",
            "LongColumnStatisticsData": {
                "MinimumValue": lo,
                "MaximumValue": hi,
                "NumberOfNulls": 0,
                "NumberOfDistinctValues": hi - lo + 1,
            },
        },
    }


def test_column_statistics_round_trip(lake: Catalog) -> None:
    out = lake.update_column_statistics_for_table(
        DatabaseName="sales", TableName="customer-link", ColumnStatisticsList=[long_stats("id", 1, 99)]
    )
    assert out["Errors"] == []
    got = lake.get_column_statistics_for_table(
        DatabaseName="sales", TableName="customer-link", ColumnNames=["id", "amount", "nope"]
    )
    assert got["ColumnStatisticsList"] == [long_stats("id", 1, 99)]
    assert {e["ColumnName"]: e["Error"]["ErrorCode"] for e in got["Errors"]} == {
        "amount": "EntityNotFoundException",
        "nope": "InvalidInputException",
    }
    lake.delete_column_statistics_for_table(DatabaseName="sales", TableName="customer-link", ColumnName="id")
    with pytest.raises(lake.exceptions.EntityNotFoundException):
        lake.delete_column_statistics_for_table(
            DatabaseName="sales", TableName="customer-link", ColumnName="id"
        )


def test_statistics_of_the_wrong_type_or_column_are_reported_per_item(lake: Catalog) -> None:
    wrong_type = long_stats("note", 1, 2)
    out = lake.update_column_statistics_for_table(
        DatabaseName="sales",
        TableName="customer-link",
        ColumnStatisticsList=[wrong_type, long_stats("zz", 1, 2)],
    )
    assert [e["Error"]["ErrorCode"] for e in out["Errors"]] == ["InvalidInputException"] * 2


def test_statistics_limits(lake: Catalog) -> None:
    with pytest.raises(lake.exceptions.InvalidInputException, match="25"):
        lake.update_column_statistics_for_table(
            DatabaseName="sales",
            TableName="customer-link",
            ColumnStatisticsList=[long_stats("id", 1, 2)] * 26,
        )
    with pytest.raises(lake.exceptions.InvalidInputException, match="ColumnNames"):
        lake.get_column_statistics_for_table(
            DatabaseName="sales", TableName="customer-link", ColumnNames=["id"] * 101
        )


def _columns(*columns: tuple[str, str]) -> dict:
    table = table_input("customer-link")
    table["StorageDescriptor"]["Columns"] = [{"Name": n, "Type": t} for n, t in columns]
    return table


def _with_statistics(lake: Catalog, *columns: str) -> list[str]:
    got = lake.get_column_statistics_for_table(
        DatabaseName="sales", TableName="customer-link", ColumnNames=list(columns)
    )
    return [s["ColumnName"] for s in got["ColumnStatisticsList"]]


def test_an_update_keeps_the_statistics_of_the_columns_it_keeps(lake: Catalog) -> None:
    lake.update_column_statistics_for_table(
        DatabaseName="sales",
        TableName="customer-link",
        ColumnStatisticsList=[long_stats("id", 1, 9)],
    )
    lake.update_table(DatabaseName="sales", TableInput=table_input("customer-link", Description="new"))
    assert _with_statistics(lake, "id") == ["id"]
    # The type as Hive spells it in another case is the same type.
    lake.update_table(DatabaseName="sales", TableInput=_columns(("ID", "BIGINT"), ("note", "string")))
    assert _with_statistics(lake, "id") == ["id"]


def test_an_update_drops_the_statistics_of_columns_it_drops_or_retypes(lake: Catalog) -> None:
    lake.update_table(
        DatabaseName="sales", TableInput=_columns(("id", "bigint"), ("n", "int"), ("m", "bigint"))
    )
    lake.update_column_statistics_for_table(
        DatabaseName="sales",
        TableName="customer-link",
        ColumnStatisticsList=[long_stats("id", 1, 9), long_stats("n", 1, 9), long_stats("m", 1, 9)],
    )
    # m is dropped, n retyped; a column m made again later is a new column, whose values the old
    # statistics do not describe (they are LONG statistics, and it is now a string).
    lake.update_table(DatabaseName="sales", TableInput=_columns(("id", "bigint"), ("n", "string")))
    lake.update_table(
        DatabaseName="sales", TableInput=_columns(("id", "bigint"), ("n", "string"), ("m", "string"))
    )
    assert _with_statistics(lake, "id", "n", "m") == ["id"]
    got = lake.get_column_statistics_for_table(
        DatabaseName="sales", TableName="customer-link", ColumnNames=["n", "m"]
    )
    assert [(e["ColumnName"], e["Error"]["ErrorCode"]) for e in got["Errors"]] == [
        ("n", "EntityNotFoundException"),
        ("m", "EntityNotFoundException"),
    ]


@pytest.mark.in_process
def test_a_search_token_older_than_the_kept_history_is_invalid_input(lake: Catalog) -> None:
    # A SearchTables token continues the state its first page read; once expiry removed that state,
    # the token is the caller's to drop (InvalidInputException), not damage (InternalServiceException).
    token = lake.search_tables(MaxResults=2)["NextToken"]
    lake.create_table(DatabaseName="crm", TableInput=table_input("later"))
    lake.store.checkpoint()
    later = datetime.now(UTC) + timedelta(seconds=1)
    maintenance.expire(lake.store, retain=timedelta(0), grace=timedelta(0), dry_run=False, now=later)
    with pytest.raises(lake.exceptions.InvalidInputException, match="NextToken: .*older than the history"):
        Catalog(lake.warehouse).search_tables(MaxResults=2, NextToken=token)
