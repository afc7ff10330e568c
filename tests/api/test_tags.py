"""Tags: TagResource, UntagResource, GetTags on the catalog, its databases and its tables, by Glue ARN;
CreateDatabase's Tags are read back; tags go with their resource."""

from __future__ import annotations

import pytest

from gluecat import Catalog

ARN = "arn:aws:glue:us-east-1:000000000000"


@pytest.fixture
def lake(catalog: Catalog) -> Catalog:
    catalog.create_database(DatabaseInput={"Name": "sales"}, Tags={"team": "etl", "cost": "42"})
    catalog.create_table(DatabaseName="sales", TableInput={"Name": "orders"})
    return catalog


def tags(catalog: Catalog, arn: str) -> dict[str, str]:
    return catalog.get_tags(ResourceArn=arn)["Tags"]


def test_create_databases_tags_are_read_back(lake: Catalog) -> None:
    assert tags(lake, f"{ARN}:database/sales") == {"team": "etl", "cost": "42"}
    assert tags(lake, f"{ARN}:table/sales/orders") == {}


def test_tags_are_added_replaced_and_removed(lake: Catalog) -> None:
    table = f"{ARN}:table/sales/orders"
    lake.tag_resource(ResourceArn=table, TagsToAdd={"pii": "no", "owner": "ana"})
    lake.tag_resource(ResourceArn=table, TagsToAdd={"owner": "bo"})
    assert tags(lake, table) == {"pii": "no", "owner": "bo"}
    lake.untag_resource(ResourceArn=table, TagsToRemove=["pii", "absent"])
    assert tags(lake, table) == {"owner": "bo"}
    # Names in an ARN fold to lowercase, as Glue stores them.
    assert tags(lake, f"{ARN}:table/Sales/ORDERS") == {"owner": "bo"}
    lake.tag_resource(ResourceArn=f"{ARN}:catalog", TagsToAdd={"env": "dev"})
    assert tags(lake, f"{ARN}:catalog") == {"env": "dev"}


def test_tags_go_with_their_resource(lake: Catalog) -> None:
    lake.tag_resource(ResourceArn=f"{ARN}:table/sales/orders", TagsToAdd={"a": "1"})
    lake.delete_table(DatabaseName="sales", Name="orders")
    lake.create_table(DatabaseName="sales", TableInput={"Name": "orders"})
    assert tags(lake, f"{ARN}:table/sales/orders") == {}
    lake.tag_resource(ResourceArn=f"{ARN}:table/sales/orders", TagsToAdd={"b": "2"})
    lake.delete_database(Name="sales")
    with pytest.raises(lake.exceptions.EntityNotFoundException):
        tags(lake, f"{ARN}:database/sales")
    lake.create_database(DatabaseInput={"Name": "sales"})
    lake.create_table(DatabaseName="sales", TableInput={"Name": "orders"})
    assert tags(lake, f"{ARN}:database/sales") == {}
    assert tags(lake, f"{ARN}:table/sales/orders") == {}
    lake.tag_resource(ResourceArn=f"{ARN}:table/sales/orders", TagsToAdd={"c": "3"})
    lake.batch_delete_table(DatabaseName="sales", TablesToDelete=["orders"])
    lake.create_table(DatabaseName="sales", TableInput={"Name": "orders"})
    assert tags(lake, f"{ARN}:table/sales/orders") == {}


@pytest.mark.parametrize(
    "arn",
    [
        f"{ARN}:table/sales/missing",
        f"{ARN}:database/missing",
        "arn:aws:glue:us-east-1:111122223333:database/sales",  # another account
        "arn:aws:glue:eu-west-1:000000000000:database/sales",  # another region
        f"{ARN}:connection/sales",  # a kind of resource gluecat does not hold
        f"{ARN}:table/sales",
        "arn:aws-us-gov:glue:us-east-1:000000000000:database/sales",  # another partition
        "arn:aws-cn:glue:us-east-1:000000000000:catalog",
        f"{ARN}:catalog/",
    ],
)
def test_a_resource_that_is_not_here_is_not_found(lake: Catalog, arn: str) -> None:
    for call in (
        lambda: lake.get_tags(ResourceArn=arn),
        lambda: lake.tag_resource(ResourceArn=arn, TagsToAdd={"a": "1"}),
        lambda: lake.untag_resource(ResourceArn=arn, TagsToRemove=["a"]),
    ):
        with pytest.raises(lake.exceptions.EntityNotFoundException):
            call()


def test_bad_tags_change_nothing(lake: Catalog) -> None:
    database = f"{ARN}:database/sales"
    before = tags(lake, database)
    with pytest.raises(lake.exceptions.InvalidInputException, match="at most 50 tags"):
        lake.tag_resource(ResourceArn=database, TagsToAdd={f"k{i}": "v" for i in range(49)})
    with pytest.raises(lake.exceptions.InvalidInputException, match="reserved"):
        lake.tag_resource(ResourceArn=database, TagsToAdd={"aws:owner": "x", "ok": "y"})
    with pytest.raises(lake.exceptions.InvalidInputException, match="TagsToAdd key 'kkk"):
        lake.tag_resource(ResourceArn=database, TagsToAdd={"k" * 129: "v"})
    with pytest.raises(
        lake.exceptions.InvalidInputException, match="ResourceArn: .* does not match the pattern"
    ):
        lake.get_tags(ResourceArn="sales")
    with pytest.raises(lake.exceptions.InvalidInputException, match="Tags"):
        lake.create_database(DatabaseInput={"Name": "other"}, Tags={"aws:x": "1"})
    assert tags(lake, database) == before
    with pytest.raises(lake.exceptions.EntityNotFoundException):
        lake.get_database(Name="other")


def test_another_region_is_named_by_the_clients_region(warehouse: str) -> None:
    catalog = Catalog(warehouse, region_name="eu-west-1", catalog_id="111122223333")
    catalog.create_database(DatabaseInput={"Name": "d"}, Tags={"k": "v"})
    assert tags(catalog, "arn:aws:glue:eu-west-1:111122223333:database/d") == {"k": "v"}


def test_an_arn_names_the_partition_of_the_clients_region(warehouse: str) -> None:
    catalog = Catalog(warehouse, region_name="cn-north-1", catalog_id="111122223333")
    catalog.create_database(DatabaseInput={"Name": "d"}, Tags={"k": "v"})
    assert tags(catalog, "arn:aws-cn:glue:cn-north-1:111122223333:database/d") == {"k": "v"}
    with pytest.raises(catalog.exceptions.EntityNotFoundException, match="partition aws-cn"):
        tags(catalog, "arn:aws:glue:cn-north-1:111122223333:database/d")
