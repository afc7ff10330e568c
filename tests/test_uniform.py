"""A batch of dicts is one template when they hold the very same objects under every name but one (or,
for ``all_but_alike``, equal plain JSON values of the same types, as a request decoded from the wire
holds)."""

from __future__ import annotations

import enum
import uuid

from gluecat.uniform import all_but, all_but_alike, members_are


def test_the_one_member_that_differs_is_returned_in_order() -> None:
    serde = {"SerializationLibrary": "x"}
    batch = [{"Location": f"s3://t/{i}", "SerdeInfo": serde} for i in range(3)]
    assert all_but(batch, "Location") == ["s3://t/0", "s3://t/1", "s3://t/2"]


def test_equal_but_distinct_objects_are_not_the_same_template() -> None:
    batch = [{"Location": "a", "SerdeInfo": {"SerializationLibrary": "x"}} for _ in range(2)]
    assert all_but(batch, "Location") is None


def test_other_member_names_or_counts_or_non_dicts_are_refused() -> None:
    assert all_but([{"Location": "a", "x": 1}, {"Location": "b", "y": 1}], "Location") is None
    assert all_but([{"Location": "a"}, {"Location": "b", "x": 1}], "Location") is None
    assert all_but([{"x": 1}, {"x": 1}], "Location") is None
    assert all_but([{"Location": "a"}, ["Location"]], "Location") is None


def test_members_are_exactly_the_names_given() -> None:
    names = ("Values", "StorageDescriptor")
    assert members_are([{"Values": [], "StorageDescriptor": {}}] * 2, names)
    assert members_are([], names)
    assert not members_are([{"Values": [], "StorageDescriptor": {}}, {"Values": []}], names)
    assert not members_are([{"Values": [], "StorageDescriptor": {}, "Parameters": {}}], names)
    assert not members_are([{"Values": [], "Location": ""}], names)


def test_alike_takes_equal_copies_of_the_same_types() -> None:
    def sd(i: int) -> dict[str, object]:
        return {
            "Location": f"s3://t/{i}",
            "Columns": [{"Name": "id", "Type": "bigint"}],
            "NumberOfBuckets": 1,
        }

    assert all_but_alike([sd(0), sd(1), sd(2)], "Location") == ["s3://t/0", "s3://t/1", "s3://t/2"]
    assert all_but_alike([sd(0)], "Location") == ["s3://t/0"]


class Color(enum.Enum):
    RED = "red"


def test_alike_refuses_equal_values_of_other_types() -> None:
    class Text(str):
        pass

    # Each pair is == in Python (but for NaN), and a validator would take one and refuse or convert
    # the other; values that are not plain JSON are refused even when equal.
    pairs = [(1, True), (1, 1.0), ([1], (1,)), ("red", Color.RED), (str(uuid.UUID(int=0)), uuid.UUID(int=0))]
    pairs += [("a", Text("a")), ({1: "a"}, {1: "a"}), (b"xy", b"xyz"[:2]), (float("nan"), float("nan"))]
    for first, other in pairs:
        batch = [{"Location": "a", "X": first}, {"Location": "b", "X": other}]
        assert all_but_alike(batch, "Location") is None, (first, other)


def test_alike_refuses_other_member_names_or_counts_or_non_dicts() -> None:
    assert all_but_alike([{"Location": "a", "x": 1}, {"Location": "b", "y": 1}], "Location") is None
    assert all_but_alike([{"Location": "a"}, {"Location": "b", "x": 1}], "Location") is None
    assert all_but_alike([{"Location": "a"}, ["Location"]], "Location") is None
