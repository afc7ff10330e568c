"""Glue database calls: CreateDatabase, GetDatabase(s), UpdateDatabase, DeleteDatabase."""

from __future__ import annotations

from datetime import datetime

import pytest

from gluecat import Catalog

from .conftest import table_input


def test_a_database_is_created_with_its_name_folded_to_lowercase(catalog: Catalog) -> None:
    catalog.create_database(
        DatabaseInput={"Name": "Sales", "Description": "d", "LocationUri": "s3://b/sales"}
    )
    db = catalog.get_database(Name="sales")["Database"]
    assert db["Name"] == "sales"
    assert db["Description"] == "d"
    assert db["LocationUri"] == "s3://b/sales"
    assert isinstance(db["CreateTime"], datetime)
    assert db["CatalogId"] == "000000000000"
    assert catalog.get_database(Name="SALES")["Database"]["Name"] == "sales"


def test_a_name_is_held_to_its_limit_as_it_is_stored_in_lowercase(catalog: Catalog) -> None:
    # 'İ' (2 bytes) lower-cases to 'i' and a combining dot (3): 127 of them, 254 bytes as given, would
    # be stored as a 381-byte name that GetTable, DeleteTable and BatchDeleteTable all refuse.
    grows = "İ" * 127
    with pytest.raises(
        catalog.exceptions.InvalidInputException, match="DatabaseInput.Name: .*once lower-cased"
    ):
        catalog.create_database(DatabaseInput={"Name": grows})
    catalog.create_database(DatabaseInput={"Name": "db"})
    with pytest.raises(catalog.exceptions.InvalidInputException, match="TableInput.Name: .*once lower-cased"):
        catalog.create_table(DatabaseName="db", TableInput=table_input(grows))
    assert catalog.get_databases()["DatabaseList"][0]["Name"] == "db"
    assert catalog.get_tables(DatabaseName="db")["TableList"] == []
    catalog.create_table(DatabaseName="db", TableInput=table_input("İ" * 85))  # 255 bytes once stored
    name = catalog.get_tables(DatabaseName="db")["TableList"][0]["Name"]
    assert name == "i\u0307" * 85
    catalog.batch_delete_table(DatabaseName="db", TablesToDelete=[name])
    assert catalog.get_tables(DatabaseName="db")["TableList"] == []


def test_creating_a_database_twice_is_refused(catalog: Catalog) -> None:
    catalog.create_database(DatabaseInput={"Name": "a"})
    with pytest.raises(catalog.exceptions.AlreadyExistsException, match="Database already exists.") as err:
        catalog.create_database(DatabaseInput={"Name": "A"})
    assert err.value.response["Error"]["Code"] == "AlreadyExistsException"
    assert err.value.operation_name == "CreateDatabase"


def test_a_missing_database_is_entity_not_found(catalog: Catalog) -> None:
    with pytest.raises(catalog.exceptions.EntityNotFoundException, match="nope"):
        catalog.get_database(Name="nope")


def test_get_databases_pages_with_an_opaque_token(catalog: Catalog) -> None:
    for i in range(7):
        catalog.create_database(DatabaseInput={"Name": f"db{i}"})
    seen, token = [], None
    while True:
        page = catalog.get_databases(MaxResults=3, **({"NextToken": token} if token else {}))
        assert len(page["DatabaseList"]) <= 3
        seen += [d["Name"] for d in page["DatabaseList"]]
        token = page.get("NextToken")
        if not token:
            break
    assert seen == [f"db{i}" for i in range(7)]


@pytest.mark.parametrize("token", ["garbage", "eyJxIjoiIn0", "A" * 64])
def test_a_forged_token_is_invalid_input(catalog: Catalog, token: str) -> None:
    catalog.create_database(DatabaseInput={"Name": "a"})
    with pytest.raises(catalog.exceptions.InvalidInputException, match="NextToken"):
        catalog.get_databases(NextToken=token)


def test_max_results_is_bounded(catalog: Catalog) -> None:
    with pytest.raises(catalog.exceptions.InvalidInputException, match="MaxResults"):
        catalog.get_databases(MaxResults=0)
    with pytest.raises(catalog.exceptions.InvalidInputException, match="MaxResults"):
        catalog.get_databases(MaxResults=101)


def test_update_database_replaces_its_definition_but_keeps_create_time(catalog: Catalog) -> None:
    catalog.create_database(DatabaseInput={"Name": "a", "Description": "old", "Parameters": {"k": "v"}})
    created = catalog.get_database(Name="a")["Database"]["CreateTime"]
    catalog.update_database(Name="a", DatabaseInput={"Name": "a", "Description": "new"})
    db = catalog.get_database(Name="a")["Database"]
    assert db["Description"] == "new"
    assert db["Parameters"] == {}
    assert db["CreateTime"] == created


def test_a_database_cannot_be_renamed_by_update(catalog: Catalog) -> None:
    catalog.create_database(DatabaseInput={"Name": "a"})
    with pytest.raises(catalog.exceptions.InvalidInputException, match="DatabaseInput.Name"):
        catalog.update_database(Name="a", DatabaseInput={"Name": "b"})


def test_deleting_a_database_deletes_its_tables(catalog: Catalog) -> None:
    catalog.create_database(DatabaseInput={"Name": "a"})
    catalog.create_table(DatabaseName="a", TableInput=table_input("t"))
    catalog.delete_database(Name="a")
    with pytest.raises(catalog.exceptions.EntityNotFoundException):
        catalog.get_database(Name="a")
    catalog.create_database(DatabaseInput={"Name": "a"})
    assert catalog.get_tables(DatabaseName="a")["TableList"] == []


@pytest.mark.in_process
def test_unknown_and_missing_parameters_are_named(catalog: Catalog) -> None:
    with pytest.raises(catalog.exceptions.InvalidInputException, match="Foo"):
        catalog.get_database(Name="a", Foo=1)  # type: ignore[call-arg]
    with pytest.raises(catalog.exceptions.InvalidInputException, match="Name"):
        catalog.get_database()  # type: ignore[call-arg]


def test_responses_carry_boto3_response_metadata(catalog: Catalog) -> None:
    resp = catalog.create_database(DatabaseInput={"Name": "a"})
    assert resp["ResponseMetadata"]["HTTPStatusCode"] == 200


def test_another_catalog_id_is_not_found(catalog: Catalog) -> None:
    with pytest.raises(catalog.exceptions.EntityNotFoundException, match="Catalog 123"):
        catalog.get_databases(CatalogId="123")
