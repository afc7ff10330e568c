"""gluecat.Catalog behaves as boto3's Glue client beyond its operations: errors are botocore ClientErrors
laid out as botocore lays them out, paginators are botocore's, and ``meta`` and its events are there.

Where moto can answer the same call, the test compares with what boto3 itself gives over moto.
"""

from __future__ import annotations

import pickle
from typing import Any

import boto3  # type: ignore[import-untyped]
import moto
import pytest
from botocore.exceptions import ClientError, OperationNotPageableError, PaginationError
from botocore.paginate import Paginator

from gluecat import Catalog
from gluecat.api.operation import operation, response
from gluecat.api.service import ClientMeta, ServiceClient
from gluecat.errors import EntityNotFoundException, InternalServiceException, StorageError


def missing_database_error(client: Any) -> ClientError:
    with pytest.raises(ClientError) as caught:
        client.get_database(Name="nope")
    return caught.value


def test_errors_are_client_errors_laid_out_as_boto3_lays_them_out(warehouse: str) -> None:
    with moto.mock_aws():
        theirs = missing_database_error(boto3.client("glue", region_name="us-east-1"))
    ours = missing_database_error(Catalog(warehouse))
    assert isinstance(ours, EntityNotFoundException)
    assert ours.operation_name == theirs.operation_name == "GetDatabase"
    assert str(ours) == str(theirs)
    assert ours.response["Error"] == theirs.response["Error"]
    assert set(ours.response) == set(theirs.response)
    ours_meta, theirs_meta = ours.response["ResponseMetadata"], theirs.response["ResponseMetadata"]
    assert set(ours_meta) == set(theirs_meta)
    assert ours_meta["HTTPStatusCode"] == theirs_meta["HTTPStatusCode"] == 400
    assert ours_meta["HTTPHeaders"]["x-amzn-requestid"] == ours_meta["RequestId"]
    assert ours_meta["HTTPHeaders"]["x-amzn-errortype"] == theirs_meta["HTTPHeaders"]["x-amzn-errortype"]


@pytest.mark.in_process
def test_client_exceptions_name_every_modeled_error_class(catalog: Catalog) -> None:
    assert catalog.exceptions.ClientError is ClientError
    assert catalog.exceptions.EntityNotFoundException is EntityNotFoundException
    # A code only the service model names still has its class, a ClientError like the rest.
    throttled = catalog.exceptions.ThrottlingException
    assert issubclass(throttled, ClientError) and throttled.__name__ == "ThrottlingException"
    assert catalog.exceptions.from_code("ThrottlingException") is throttled
    assert catalog.exceptions.from_code("NoSuchCode") is ClientError
    with pytest.raises(AttributeError):
        _ = catalog.exceptions.NoSuchCode
    with pytest.raises(catalog.exceptions.EntityNotFoundException):
        catalog.get_table(DatabaseName="nope", Name="t")


def test_errors_pickle_with_their_class_and_operation() -> None:
    error = EntityNotFoundException("Database x not found.", operation_name="GetDatabase")
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is EntityNotFoundException
    assert (str(back), back.operation_name, back.response["Error"]) == (
        str(error),
        "GetDatabase",
        error.response["Error"],
    )


def test_a_damaged_warehouse_is_an_internal_service_exception_of_its_own_class() -> None:
    error = StorageError("log/00000000000000000002.json: not valid JSON")
    assert isinstance(error, ClientError) and isinstance(error, InternalServiceException)
    assert error.response["Error"]["Code"] == "InternalServiceException"
    assert error.response["ResponseMetadata"]["HTTPStatusCode"] == 500


def test_an_error_outside_any_operation_reads_without_one() -> None:
    assert str(EntityNotFoundException("gone")) == "An error occurred (EntityNotFoundException): gone"


# -- paginators ------------------------------------------------------------------------------------


def fill(client: Any, tables: int = 7) -> None:
    client.create_database(DatabaseInput={"Name": "db"})
    for i in range(tables):
        client.create_table(DatabaseName="db", TableInput={"Name": f"t{i}"})


@pytest.mark.in_process
def test_paginators_are_botocores_for_every_paginated_operation_gluecat_implements(catalog: Catalog) -> None:
    expected = {
        "get_databases",
        "get_tables",
        "get_table_versions",
        "get_partitions",
        "get_partition_indexes",
    }
    pageable = {name for name in catalog.meta.method_to_api_mapping if catalog.can_paginate(name)}
    assert pageable == expected
    for name in expected:
        assert isinstance(catalog.get_paginator(name), Paginator)
    # SearchTables has no paginator in the service model (boto3 has none either).
    assert not catalog.can_paginate("search_tables")
    with pytest.raises(OperationNotPageableError):
        catalog.get_paginator("search_tables")


def test_pages_items_and_tokens_follow_pagination_config(catalog: Catalog) -> None:
    fill(catalog)
    paginator = catalog.get_paginator("get_tables")
    pages = [[t["Name"] for t in p["TableList"]] for p in paginator.paginate(DatabaseName="db")]
    assert pages == [[f"t{i}" for i in range(7)]]
    small = paginator.paginate(DatabaseName="db", PaginationConfig={"PageSize": 3})
    assert [[t["Name"] for t in p["TableList"]] for p in small] == [
        ["t0", "t1", "t2"],
        ["t3", "t4", "t5"],
        ["t6"],
    ]
    first = paginator.paginate(DatabaseName="db", PaginationConfig={"PageSize": 2, "MaxItems": 3})
    result = first.build_full_result()
    assert [t["Name"] for t in result["TableList"]] == ["t0", "t1", "t2"]
    rest = paginator.paginate(
        DatabaseName="db", PaginationConfig={"PageSize": 2, "StartingToken": result["NextToken"]}
    )
    assert list(rest.search("TableList[].Name")) == ["t3", "t4", "t5", "t6"]


def test_paginators_behave_as_over_boto3(warehouse: str) -> None:
    """The same paginator calls over moto give the same items (moto pages GetDatabases as Glue does)."""
    config = {"PageSize": 2, "MaxItems": 5}
    with moto.mock_aws():
        mock = boto3.client("glue", region_name="us-east-1")
        seen = []
        for client in (Catalog(warehouse), mock):
            for i in range(6):
                client.create_database(DatabaseInput={"Name": f"db{i}"})
            full = client.get_paginator("get_databases").paginate(PaginationConfig=config).build_full_result()
            seen.append(([d["Name"] for d in full["DatabaseList"]], "NextToken" in full))
    assert seen[0] == seen[1] == ([f"db{i}" for i in range(5)], True)


def test_page_size_is_refused_where_the_operation_has_no_limit(catalog: Catalog) -> None:
    paginator = catalog.get_paginator("get_partition_indexes")
    with pytest.raises(PaginationError):
        paginator.paginate(DatabaseName="db", TableName="t", PaginationConfig={"PageSize": 2})


def test_a_paginator_raises_the_operations_errors(catalog: Catalog) -> None:
    with pytest.raises(catalog.exceptions.EntityNotFoundException):
        list(catalog.get_paginator("get_tables").paginate(DatabaseName="nope"))


# -- meta and its events --------------------------------------------------------------------------------


def test_meta_describes_the_glue_service(warehouse: str) -> None:
    catalog = Catalog(warehouse, region_name="eu-west-1")
    assert catalog.meta.service_model.service_name == "glue"
    assert catalog.meta.region_name == "eu-west-1"
    assert catalog.meta.partition == "aws"
    mapping = catalog.meta.method_to_api_mapping
    assert mapping["get_tables"] == "GetTables"
    assert mapping["batch_create_partition"] == "BatchCreatePartition"
    # gluecat's own bulk calls are not Glue operations.
    assert "commit_partitions" not in mapping and "get_partitions_arrow" not in mapping
    assert catalog.waiter_names == []
    with pytest.raises(ValueError, match="Waiter does not exist"):
        catalog.get_waiter("table_exists")


def test_parameter_events_reach_handlers_as_in_boto3(catalog: Catalog) -> None:
    catalog.create_database(DatabaseInput={"Name": "db"})
    seen: list[tuple[str, dict[str, Any]]] = []

    def add_catalog_id(params: dict[str, Any], model: Any, **kwargs: Any) -> None:
        seen.append((model.name, dict(params)))
        params.setdefault("CatalogId", "111122223333")

    catalog.meta.events.register("provide-client-params.glue", add_catalog_id)
    with pytest.raises(catalog.exceptions.EntityNotFoundException, match="Catalog 111122223333"):
        catalog.get_database(Name="db")
    assert seen == [("GetDatabase", {"Name": "db"})]
    assert catalog.get_database(Name="db", CatalogId="000000000000")["Database"]["Name"] == "db"


class Transactions(ServiceClient):
    """A client of another service, Lake Formation, with one operation: what gluecat.LakeFormation will
    be built on. It gets its validation, exceptions, meta and paginators from that service's model."""

    SERVICE = "lakeformation"

    def __init__(self) -> None:
        self.meta = ClientMeta(self, "us-east-1")

    @operation("ListTransactions")
    def list_transactions(
        self,
        *,
        CatalogId: str | None = None,
        StatusFilter: str | None = None,
        MaxResults: int | None = None,
        NextToken: str | None = None,
    ) -> dict[str, Any]:
        return response({"Transactions": [], "StatusFilter": StatusFilter})


def test_the_machinery_serves_any_service_from_its_model() -> None:
    client = Transactions()
    assert client.meta.service_model.service_name == "lakeformation"
    assert client.meta.method_to_api_mapping == {"list_transactions": "ListTransactions"}
    assert client.list_transactions(StatusFilter="ACTIVE")["StatusFilter"] == "ACTIVE"
    with pytest.raises(
        client.exceptions.InvalidInputException, match="StatusFilter: 'OPEN' is not one of ALL"
    ):
        client.list_transactions(StatusFilter="OPEN")
    assert issubclass(client.exceptions.TransactionCommittedException, ClientError)
    # botocore's Lake Formation model has no ListTransactions paginator, so boto3 has none either.
    assert not client.can_paginate("list_transactions")
