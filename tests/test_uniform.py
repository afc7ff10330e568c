"""A batch of dicts is one template when they hold the very same objects under every name but one."""

from __future__ import annotations

from gluecat.uniform import all_but, members_are


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
