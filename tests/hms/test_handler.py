"""The Hive calls answered from one state of the warehouse, whatever other processes commit meanwhile.

A partition listing is read page by page (and its table before), each read at the latest state: another
process's commit landing in between must not make the answer a mix of two states, which no client could
tell from the truth.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gluecat import Catalog
from gluecat.hms.handler import Handler

KEYS = [{"Name": "k", "Type": "string"}]


@pytest.fixture
def lake(tmp_path: Path) -> Catalog:
    """db.t with 1,100 partitions (0001 to 1100): more than one page of GetPartitions."""
    glue = Catalog(str(tmp_path / "wh"), fsync=False)
    glue.create_database(DatabaseInput={"Name": "db"})
    glue.create_table(DatabaseName="db", TableInput={"Name": "t", "PartitionKeys": KEYS})
    glue.commit_partitions(
        DatabaseName="db", TableName="t", Add=[{"Values": [f"{i:04d}"]} for i in range(1, 1101)]
    )
    return glue


def after_first_call(glue: Catalog, method: str, write: Callable[[], Any]) -> None:
    """Let ``write`` (another process's commit) land right after the first ``method`` call of ``glue``
    returns, between that call and the next read."""
    real = getattr(glue, method)
    calls = []

    def call(**kwargs: Any) -> Any:
        answer = real(**kwargs)
        calls.append(kwargs)
        if len(calls) == 1:
            write()
        return answer

    setattr(glue, method, call)


@pytest.mark.parametrize(
    ("drop", "add"),
    [
        ("0001", "9999"),  # one commit swaps a partition of the first page for one of the second
        ("1100", "0000"),  # and the other way round
    ],
)
def test_a_listing_of_several_pages_is_of_one_state(lake: Catalog, drop: str, add: str) -> None:
    other = Catalog(lake.warehouse, fsync=False)
    after_first_call(
        lake,
        "get_partitions",
        lambda: other.commit_partitions(
            DatabaseName="db", TableName="t", Drop=[[drop]], Add=[{"Values": [add]}]
        ),
    )
    got = {p.values[0] for p in Handler(lake).get_partitions("db", "t", -1)}
    assert (drop in got, add in got) == (False, True), "both or neither of the two"
    assert len(got) == 1100


def test_partition_names_are_those_of_the_table_they_were_read_with(lake: Catalog) -> None:
    """A table dropped and made again, with another key, between the table's read and its partitions'."""
    other = Catalog(lake.warehouse, fsync=False)

    def remake() -> None:
        other.delete_table(DatabaseName="db", Name="t")
        other.create_table(
            DatabaseName="db", TableInput={"Name": "t", "PartitionKeys": [{"Name": "day", "Type": "string"}]}
        )
        other.create_partition(DatabaseName="db", TableName="t", PartitionInput={"Values": ["mon"]})

    after_first_call(lake, "get_table", remake)
    assert Handler(lake).get_partition_names("db", "t", -1) == ["day=mon"]


def test_a_table_listing_of_several_pages_is_of_one_state(tmp_path: Path) -> None:
    """A rename (one commit) between two pages of 100 tables lists the table once, by its new name."""
    glue = Catalog(str(tmp_path / "wh"), fsync=False)
    glue.create_database(DatabaseInput={"Name": "db"})
    for i in range(1, 151):
        glue.create_table(DatabaseName="db", TableInput={"Name": f"t{i:03d}"})
    other = Catalog(glue.warehouse, fsync=False)
    read = other.get_table(DatabaseName="db", Name="t150")["Table"]
    after_first_call(
        glue,
        "get_tables",
        lambda: other.rename_table(Table=read, NewDatabaseName="db", TableInput={"Name": "t000"}),
    )
    names = Handler(glue).get_all_tables("DB")  # (Hive names are read without regard to case)
    assert ("t000" in names, "t150" in names) == (True, False)
    assert len(names) == 150


def test_a_database_listing_of_several_pages_is_of_one_state(tmp_path: Path) -> None:
    """A database dropped, then another made, between two pages of 100 databases: the listing is not both
    (the first was gone before the second was made)."""
    glue = Catalog(str(tmp_path / "wh"), fsync=False)
    for i in range(1, 151):
        glue.create_database(DatabaseInput={"Name": f"d{i:03d}"})
    other = Catalog(glue.warehouse, fsync=False)

    def drop_then_make() -> None:
        other.delete_database(Name="d001")
        other.create_database(DatabaseInput={"Name": "zzz"})

    after_first_call(glue, "get_databases", drop_then_make)
    names = Handler(glue).get_all_databases()
    assert ("d001" in names, "zzz" in names) == (False, True)
    assert len(names) == 150
    since = glue.warehouse_version()
    glue.create_table(DatabaseName="d002", TableInput={"Name": "t"})  # a table is no database
    assert glue.databases_unchanged_since(since) == glue.warehouse_version()


def test_a_table_written_to_all_the_time_is_listed_as_of_one_moment(lake: Catalog) -> None:
    """Each plain read has a commit land in its middle, so the listing is read as of one moment instead:
    of one state, rather than a failure the client could only retry."""
    other = Catalog(lake.warehouse, fsync=False)
    real = lake.get_partitions
    swaps = iter(range(1_000_000))

    def get_partitions(**kwargs: Any) -> Any:
        page = real(**kwargs)
        if "NextToken" not in kwargs and kwargs.get("QueryAsOfTime") is None:
            n = next(swaps)
            other.commit_partitions(
                DatabaseName="db",
                TableName="t",
                Drop=[[f"x{n - 1}"]] if n else [],
                Add=[{"Values": [f"x{n}"]}],
            )
        return page

    lake.get_partitions = get_partitions  # type: ignore[method-assign]
    got = [p.values[0] for p in Handler(lake).get_partitions("db", "t", -1)]
    assert next(swaps) > 1, "the plain reads kept meeting commits"
    assert len(got) == len(set(got)) == 1101
    assert sum(v.startswith("x") for v in got) == 1


def test_a_database_renamed_in_all_the_time_is_listed_as_of_one_moment(tmp_path: Path) -> None:
    """Each plain read of 150 tables has a rename land between its pages: the listing is read as of one
    moment, so each table is listed once, by one name."""
    glue = Catalog(str(tmp_path / "wh"), fsync=False)
    glue.create_database(DatabaseInput={"Name": "db"})
    for i in range(1, 151):
        glue.create_table(DatabaseName="db", TableInput={"Name": f"t{i:03d}"})
    other = Catalog(glue.warehouse, fsync=False)
    real = glue.get_tables
    renames = iter(range(1_000_000))

    def get_tables(**kwargs: Any) -> Any:
        page = real(**kwargs)
        if "NextToken" not in kwargs and kwargs.get("QueryAsOfTime") is None:
            n = next(renames)
            old = "t150" if n == 0 else f"a{n - 1:03d}"
            read = other.get_table(DatabaseName="db", Name=old)["Table"]
            other.rename_table(Table=read, NewDatabaseName="db", TableInput={"Name": f"a{n:03d}"})
        return page

    glue.get_tables = get_tables  # type: ignore[method-assign]
    names = Handler(glue).get_all_tables("db")
    assert next(renames) > 1, "the plain reads kept meeting renames"
    assert len(names) == len(set(names)) == 150
