"""Typed table changes applied to a table's TableInput, with the rules of its files' column layout."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gluecat.catalog import table_changes as tc
from gluecat.errors import AlreadyExistsException, InvalidInputException


def table(*columns: str, keys: tuple[str, ...] = (), params: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "Name": "t",
        "StorageDescriptor": {"Columns": [{"Name": c, "Type": "int"} for c in columns], "Location": "/x"},
        "PartitionKeys": [{"Name": k, "Type": "string"} for k in keys],
        "Parameters": params or {},
    }


def names(table_input: dict[str, Any]) -> list[str]:
    return [c["Name"] for c in table_input["StorageDescriptor"]["Columns"]]


def test_changes_apply_in_order_to_columns_parameters_and_fields() -> None:
    got = tc.apply_changes(
        table("a", "b", keys=("p",)),
        [
            tc.AddColumn("c", "string", "new"),
            tc.AddColumn("first", "int", first=True),
            tc.AddColumn("mid", "int", after="a"),
            tc.UpdateColumnType("a", "bigint"),
            tc.UpdateColumnComment("b", "the b"),
            tc.RenameColumn("p", "part"),
            tc.SetParameter("k", "v"),
            tc.SetDescription("about"),
            tc.SetOwner("ann"),
            tc.SetLocation("/y"),
        ],
        tc.Layout.BY_NAME,
    )
    assert names(got) == ["first", "a", "mid", "b", "c"]
    cols = {c["Name"]: c for c in got["StorageDescriptor"]["Columns"]}
    assert cols["a"]["Type"] == "bigint" and cols["b"]["Comment"] == "the b" and cols["c"]["Comment"] == "new"
    assert got["PartitionKeys"] == [{"Name": "part", "Type": "string"}]
    assert got["Parameters"] == {"k": "v"}
    assert (got["Description"], got["Owner"], got["StorageDescriptor"]["Location"]) == ("about", "ann", "/y")
    assert "Description" not in tc.apply_changes(got, [tc.SetDescription(None)], tc.Layout.BY_NAME)


def test_by_name_a_data_column_cannot_be_renamed_and_a_dropped_name_cannot_return() -> None:
    with pytest.raises(InvalidInputException, match="find columns by name"):
        tc.apply_changes(table("a", "b"), [tc.RenameColumn("b", "c")], tc.Layout.BY_NAME)
    dropped = tc.apply_changes(table("a", "b", keys=("p",)), [tc.DeleteColumn("b")], tc.Layout.BY_NAME)
    assert names(dropped) == ["a"]
    assert json.loads(dropped["Parameters"][tc.DROPPED_COLUMNS]) == ["b"]
    for change in (tc.AddColumn("B", "int"), tc.RenameColumn("p", "b")):
        with pytest.raises(InvalidInputException, match="was dropped"):
            tc.apply_changes(dropped, [change], tc.Layout.BY_NAME)


def test_by_position_columns_are_added_last_and_only_the_last_is_dropped() -> None:
    renamed = tc.apply_changes(table("a", "b"), [tc.RenameColumn("b", "c")], tc.Layout.BY_POSITION)
    assert names(renamed) == ["a", "c"]
    with pytest.raises(InvalidInputException, match="only be added last"):
        tc.apply_changes(table("a", "b"), [tc.AddColumn("z", "int", first=True)], tc.Layout.BY_POSITION)
    with pytest.raises(InvalidInputException, match="only the last column"):
        tc.apply_changes(table("a", "b"), [tc.DeleteColumn("a")], tc.Layout.BY_POSITION)
    assert names(tc.apply_changes(table("a", "b"), [tc.DeleteColumn("b")], tc.Layout.BY_POSITION)) == ["a"]


def test_a_broken_rule_names_the_column_and_changes_nothing() -> None:
    before = table("a", "b", keys=("p",))
    with pytest.raises(AlreadyExistsException, match="Column b already exists"):
        tc.apply_changes(before, [tc.AddColumn("x", "int"), tc.AddColumn("b", "int")], tc.Layout.BY_NAME)
    with pytest.raises(InvalidInputException, match="Partition column p cannot be dropped"):
        tc.apply_changes(before, [tc.DeleteColumn("p")], tc.Layout.BY_NAME)
    with pytest.raises(InvalidInputException, match="Column zz does not exist"):
        tc.apply_changes(before, [tc.UpdateColumnType("zz", "int")], tc.Layout.BY_NAME)
    with pytest.raises(InvalidInputException, match="last data column"):
        tc.apply_changes(table("a"), [tc.DeleteColumn("a")], tc.Layout.BY_NAME)
    assert tc.apply_changes(before, [tc.DeleteColumn("zz", if_exists=True)], tc.Layout.BY_NAME) == before
    assert names(before) == ["a", "b"]


def test_an_earlier_gluecats_column_order_is_dropped_at_the_next_change() -> None:
    ordered = table("a", "b", keys=("p",), params={tc.COLUMN_ORDER: json.dumps(["a", "p", "b"])})
    got = tc.apply_changes(ordered, [tc.AddColumn("c", "int", after="a")], tc.Layout.BY_NAME)
    assert tc.COLUMN_ORDER not in got["Parameters"]
    assert names(got) == ["a", "c", "b"]


def test_a_column_default_is_kept_in_the_columns_parameters() -> None:
    added = tc.apply_changes(
        table("a"), [tc.AddColumn("n", "int", default="40 + 2", exists_default="42")], tc.Layout.BY_NAME
    )
    n = added["StorageDescriptor"]["Columns"][1]
    assert n["Parameters"] == {tc.CURRENT_DEFAULT: "40 + 2", tc.EXISTS_DEFAULT: "42"}
    changed = tc.apply_changes(added, [tc.UpdateColumnDefault("n", "7")], tc.Layout.BY_NAME)
    # Rows written before the column existed still read as 42: only the current default changes.
    assert changed["StorageDescriptor"]["Columns"][1]["Parameters"] == {
        tc.CURRENT_DEFAULT: "7",
        tc.EXISTS_DEFAULT: "42",
    }
    dropped = tc.apply_changes(changed, [tc.UpdateColumnDefault("n", None)], tc.Layout.BY_NAME)
    assert dropped["StorageDescriptor"]["Columns"][1]["Parameters"] == {tc.EXISTS_DEFAULT: "42"}
    with pytest.raises(InvalidInputException, match="Column zz does not exist"):
        tc.apply_changes(added, [tc.UpdateColumnDefault("zz", "1")], tc.Layout.BY_NAME)
