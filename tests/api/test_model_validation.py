"""Every operation's parameters are checked against botocore's service model by one walker
(gluecat.api.validate); the documents' own rules are kept where they differ (gluecat.api.shapes)."""

from __future__ import annotations

from typing import Any

import pytest

from gluecat import Catalog
from gluecat.api import model, validate
from gluecat.api.service import operations
from gluecat.errors import InvalidInputException


def refused(operation: str, params: dict[str, Any]) -> str:
    with pytest.raises(InvalidInputException) as caught:
        validate.request("glue", operation, params)
    return caught.value.message


def string_members(operation: str) -> list[tuple[str, int | None, int]]:
    """The string parameters the model bounds (but those the documents define otherwise)."""
    shape = model.operation_model("glue", operation).input_shape
    out = []
    for name, member in shape.members.items():  # type: ignore[union-attr]
        meta = member.metadata
        overridden = (shape.name, name) in validate.MEMBERS  # type: ignore[union-attr]
        if member.type_name == "string" and not meta.get("enum") and "max" in meta and not overridden:
            out.append((name, meta["max"], meta.get("min", 0)))
    return out


def only_string_requirements(operation: str) -> bool:
    shape = model.operation_model("glue", operation).input_shape
    required = [*shape.required_members, *validate.REQUIRED.get(shape.name, ())]  # type: ignore[union-attr]
    return all(shape.members[name].type_name == "string" for name in required)  # type: ignore[union-attr]


# Every operation gluecat implements whose required parameters are all strings (filled with "x" here).
OPERATIONS = sorted(api for _, api in operations(Catalog, "glue") if only_string_requirements(api))


@pytest.mark.parametrize("operation", OPERATIONS)
def test_each_string_parameter_is_held_to_the_models_byte_lengths(operation: str) -> None:
    required = {
        name: "x"
        for name in model.operation_model("glue", operation).input_shape.required_members  # type: ignore[union-attr]
    }
    for name, most, least in string_members(operation):
        base = {**required}
        base.pop(name, None)
        over = refused(operation, {**base, name: "é" * (most // 2 + 1)})
        assert over.startswith(f"{name}: must be at most {most} bytes"), over
        if least:
            under = refused(operation, {**base, name: ""})
            assert under.startswith(f"{name}: must be at least {least} byte"), under


def test_limits_come_from_the_model_not_from_copies() -> None:
    # Tag keys are at most 128 characters and a resource at most 50 tags, as the model says; the
    # hand-written check took any Parameters-like map (keys of 255 bytes, values of 512,000).
    assert "Tags key" in refused("CreateDatabase", {"DatabaseInput": {"Name": "d"}, "Tags": {"k" * 129: "v"}})
    many = {f"k{i}": "v" for i in range(51)}
    assert "at most 50" in refused("CreateDatabase", {"DatabaseInput": {"Name": "d"}, "Tags": many})
    # AttributesToGet is an enum of attribute names.
    message = refused("GetTables", {"DatabaseName": "d", "AttributesToGet": ["Owner"]})
    assert message.startswith("AttributesToGet[0]: 'Owner' is not one of NAME, TABLE_TYPE, DEFAULT")


def test_what_the_documents_say_otherwise_than_the_model_follows_the_documents() -> None:
    # CreateTable needs a TableInput (000); the newer model makes it optional.
    assert refused("CreateTable", {"DatabaseName": "d"}) == "TableInput: is required"
    # A PartitionInput must have Values (001); partition values are any text, even empty.
    assert refused("CreatePartition", {"DatabaseName": "d", "TableName": "t", "PartitionInput": {}}) == (
        "PartitionInput.Values: is required"
    )
    ok = validate.request(
        "glue", "CreatePartition", {"DatabaseName": "d", "TableName": "t", "PartitionInput": {"Values": [""]}}
    )
    assert ok["PartitionInput"]["Values"] == [""]
    # SearchText is "not more than 1024 bytes long" (000): an empty one is taken.
    assert validate.request("glue", "SearchTables", {"SearchText": ""}) == {"SearchText": ""}


@pytest.mark.in_process
def test_model_members_gluecat_does_not_take_are_refused_by_name(catalog: Catalog) -> None:
    catalog.create_database(DatabaseInput={"Name": "d"})
    with pytest.raises(
        catalog.exceptions.InvalidInputException, match="^An error .*: AuditContext: not supported by gluecat"
    ):
        catalog.get_tables(DatabaseName="d", AuditContext={})
    with pytest.raises(
        catalog.exceptions.InvalidInputException, match="ViewUpdateAction: not supported by gluecat"
    ):
        catalog.update_table(DatabaseName="d", TableInput={"Name": "t"}, ViewUpdateAction="ADD")
    with pytest.raises(catalog.exceptions.InvalidInputException, match="GetTables: unknown parameter 'Nmae'"):
        catalog.get_tables(DatabaseName="d", Nmae="x")
    assert catalog.get_tables(DatabaseName="d")["TableList"] == []


def test_a_table_input_may_name_a_federated_table(catalog: Catalog) -> None:
    catalog.create_database(DatabaseInput={"Name": "d"})
    federated = {"Identifier": "ext.t", "DatabaseIdentifier": "ext", "ConnectionName": "c"}
    catalog.create_table(DatabaseName="d", TableInput={"Name": "t", "FederatedTable": federated})
    assert catalog.get_table(DatabaseName="d", Name="t")["Table"]["FederatedTable"] == federated
