"""``gluecat.LakeFormation``: Lake Formation's transactions and governed-table object APIs (boto3's
``lakeformation`` client shape) over a warehouse.

It shares the warehouse with ``gluecat.Catalog``: a transaction it starts is the TransactionId that the
Catalog's CreateTable, UpdateTable, DeleteTable, BatchDeleteTable, GetTable, GetTables and GetPartitions
take. In one process it shares the Catalog's store and catalog Context too: given the Catalog itself,
or the path of a warehouse a live Catalog has opened (with the same options).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pyarrow as pa

from gluecat.api import open_contexts, shapes, validate
from gluecat.api.client import Catalog
from gluecat.api.operation import operation, response
from gluecat.api.patterns import check_transaction_id
from gluecat.api.service import ClientMeta, ServiceClient
from gluecat.catalog import data_locations, governed, grants, permission_listing
from gluecat.catalog.context import Context
from gluecat.catalog.transactions import DEFAULT_TIMEOUT_SECONDS, READ_AND_WRITE
from gluecat.errors import InvalidInputException
from gluecat.expressions import parse_spark_filters
from gluecat.store.store import Store

# The seed (002) requires UpdateTableObjects' TransactionId, which botocore's model leaves optional.
validate.REQUIRED["UpdateTableObjectsRequest"] = ("TransactionId",)


class LakeFormation(ServiceClient):
    """Lake Formation transactions and table objects over ``warehouse``: a path or URI, or a
    ``gluecat.Catalog`` whose store and context it shares.

    ``transaction_timeout`` is how long (seconds) a transaction it starts may stay idle, with no write
    and no ExtendTransaction, before it is aborted (docs/governed.md).
    """

    SERVICE = "lakeformation"

    def __init__(
        self,
        warehouse: Any = "warehouse",
        *,
        catalog_id: str = "000000000000",
        single_writer: bool = False,
        fsync: bool = True,
        transaction_timeout: float = DEFAULT_TIMEOUT_SECONDS,
        region_name: str = "us-east-1",
    ) -> None:
        self.meta = ClientMeta(self, region_name)
        if not transaction_timeout > 0:
            raise ValueError(f"transaction_timeout must be positive, not {transaction_timeout!r}")
        self.transaction_timeout = float(transaction_timeout)
        if isinstance(warehouse, Catalog):
            self._ctx = warehouse._ctx
            self.warehouse = warehouse.warehouse
        else:
            self.warehouse = str(warehouse)
            shared = open_contexts.shared(self.warehouse, single_writer, fsync)
            if shared is not None and shared.catalog_id == catalog_id:
                self._ctx = shared
            else:
                store = Store(self.warehouse, single_writer=single_writer, fsync=fsync)
                self._ctx = Context(store=store, catalog_id=catalog_id)
        self.store = self._ctx.store

    def _catalog(self, catalog_id: str | None) -> None:
        self._ctx.check_catalog_id(catalog_id)

    # -- transactions --------------------------------------------------------------------------

    @operation("StartTransaction")
    def start_transaction(self, *, TransactionType: str | None = None) -> dict[str, Any]:
        kind = TransactionType or READ_AND_WRITE
        tx_id = self._ctx.transactions().start(kind, self.transaction_timeout)
        return response({"TransactionId": tx_id})

    @operation("CommitTransaction")
    def commit_transaction(self, *, TransactionId: str) -> dict[str, Any]:
        return response({"TransactionStatus": self._ctx.transactions().commit(TransactionId)})

    @operation("CancelTransaction")
    def cancel_transaction(self, *, TransactionId: str) -> dict[str, Any]:
        self._ctx.transactions().cancel(TransactionId)
        return response()

    @operation("ExtendTransaction")
    def extend_transaction(self, *, TransactionId: str | None = None) -> dict[str, Any]:
        if TransactionId is None:
            raise InvalidInputException("TransactionId: is required (the transaction to keep alive)")
        self._ctx.transactions().extend(TransactionId)
        return response()

    @operation("DescribeTransaction")
    def describe_transaction(self, *, TransactionId: str) -> dict[str, Any]:
        return response({"TransactionDescription": self._ctx.transactions().describe(TransactionId)})

    @operation("ListTransactions")
    def list_transactions(
        self,
        *,
        CatalogId: str | None = None,
        StatusFilter: str | None = None,
        MaxResults: int | None = None,
        NextToken: str | None = None,
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        return response(self._ctx.transactions().listing(StatusFilter, MaxResults, NextToken))

    # -- governed tables' objects --------------------------------------------------------------

    @operation("GetTableObjects")
    def get_table_objects(
        self,
        *,
        DatabaseName: str,
        TableName: str,
        CatalogId: str | None = None,
        TransactionId: str | None = None,
        QueryAsOfTime: datetime | None = None,
        PartitionPredicate: str | None = None,
        MaxResults: int | None = None,
        NextToken: str | None = None,
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        return response(
            governed.get_table_objects(
                self._ctx,
                DatabaseName.lower(),
                TableName.lower(),
                transaction_id=TransactionId,
                as_of=QueryAsOfTime,
                predicate=PartitionPredicate,
                max_results=MaxResults,
                next_token=NextToken,
            )
        )

    @operation("UpdateTableObjects")
    def update_table_objects(
        self,
        *,
        DatabaseName: str,
        TableName: str,
        TransactionId: str,
        WriteOperations: list[dict[str, Any]],
        CatalogId: str | None = None,
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        governed.update_table_objects(
            self._ctx, DatabaseName.lower(), TableName.lower(), TransactionId, WriteOperations
        )
        return response()

    @operation("DeleteObjectsOnCancel")
    def delete_objects_on_cancel(
        self,
        *,
        DatabaseName: str,
        TableName: str,
        TransactionId: str,
        Objects: list[dict[str, Any]],
        CatalogId: str | None = None,
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        governed.delete_objects_on_cancel(
            self._ctx, DatabaseName.lower(), TableName.lower(), TransactionId, Objects
        )
        return response()

    # -- permissions (docs/permissions.md) --------------------------------------------------------
    # Called in-process they change the warehouse as its owner: gluecat serve checks who may call them
    # (gluecat/serving/permissions.py).

    @operation("GrantPermissions")
    def grant_permissions(
        self,
        *,
        Principal: dict[str, Any],
        Resource: dict[str, Any],
        Permissions: list[str],
        CatalogId: str | None = None,
        Condition: dict[str, Any] | None = None,
        PermissionsWithGrantOption: list[str] | None = None,
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        grants.grant(
            self._ctx, _entry(Principal, Resource, Permissions, Condition, PermissionsWithGrantOption)
        )
        return response()

    @operation("RevokePermissions")
    def revoke_permissions(
        self,
        *,
        Principal: dict[str, Any],
        Resource: dict[str, Any],
        Permissions: list[str],
        CatalogId: str | None = None,
        Condition: dict[str, Any] | None = None,
        PermissionsWithGrantOption: list[str] | None = None,
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        grants.revoke(
            self._ctx, _entry(Principal, Resource, Permissions, Condition, PermissionsWithGrantOption)
        )
        return response()

    @operation("BatchGrantPermissions")
    def batch_grant_permissions(
        self, *, Entries: list[dict[str, Any]], CatalogId: str | None = None
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        return response(grants.batch(self._ctx, Entries, revoking=False))

    @operation("BatchRevokePermissions")
    def batch_revoke_permissions(
        self, *, Entries: list[dict[str, Any]], CatalogId: str | None = None
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        return response(grants.batch(self._ctx, Entries, revoking=True))

    @operation("ListPermissions")
    def list_permissions(
        self,
        *,
        CatalogId: str | None = None,
        Principal: dict[str, Any] | None = None,
        ResourceType: str | None = None,
        Resource: dict[str, Any] | None = None,
        NextToken: str | None = None,
        MaxResults: int | None = None,
        IncludeRelated: str | None = None,
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        return response(
            permission_listing.list_permissions(
                self._ctx,
                principal=Principal,
                resource_type=ResourceType,
                resource=Resource,
                next_token=NextToken,
                max_results=MaxResults,
                include_related=IncludeRelated,
            )
        )

    @operation("GetEffectivePermissionsForPath")
    def get_effective_permissions_for_path(
        self,
        *,
        ResourceArn: str,
        CatalogId: str | None = None,
        NextToken: str | None = None,
        MaxResults: int | None = None,
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        return response(permission_listing.effective_for_path(self._ctx, ResourceArn, NextToken, MaxResults))

    @operation("GetDataLakeSettings")
    def get_data_lake_settings(self, *, CatalogId: str | None = None) -> dict[str, Any]:
        self._catalog(CatalogId)
        return response(grants.get_settings(self._ctx))

    @operation("PutDataLakeSettings")
    def put_data_lake_settings(
        self, *, DataLakeSettings: dict[str, Any], CatalogId: str | None = None
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        grants.put_settings(self._ctx, DataLakeSettings)
        return response()

    @operation("RegisterResource")
    def register_resource(
        self,
        *,
        ResourceArn: str,
        UseServiceLinkedRole: bool | None = None,
        RoleArn: str | None = None,
        WithFederation: bool | None = None,
        HybridAccessEnabled: bool | None = None,
        WithPrivilegedAccess: bool | None = None,
        ExpectedResourceOwnerAccount: str | None = None,
    ) -> dict[str, Any]:
        details = {
            "RoleArn": RoleArn,
            "WithFederation": WithFederation,
            "HybridAccessEnabled": HybridAccessEnabled,
            "WithPrivilegedAccess": WithPrivilegedAccess,
        }
        data_locations.register(self._ctx, ResourceArn, details)
        return response()

    @operation("DeregisterResource")
    def deregister_resource(self, *, ResourceArn: str) -> dict[str, Any]:
        data_locations.deregister(self._ctx, ResourceArn)
        return response()

    @operation("DescribeResource")
    def describe_resource(self, *, ResourceArn: str) -> dict[str, Any]:
        return response(data_locations.describe_resource(self._ctx, ResourceArn))

    @operation("ListResources")
    def list_resources(
        self,
        *,
        FilterConditionList: list[dict[str, Any]] | None = None,
        MaxResults: int | None = None,
        NextToken: str | None = None,
    ) -> dict[str, Any]:
        if FilterConditionList:
            raise InvalidInputException("FilterConditionList: gluecat lists every registered resource")
        return response(data_locations.list_resources(self._ctx, NextToken, MaxResults))

    # -- gluecat's own calls (not in boto3) ------------------------------------------------------

    @operation("StartTransactionAtVersion")
    def start_transaction_at_version(
        self, *, WarehouseVersion: int, TransactionType: str | None = None
    ) -> dict[str, Any]:
        """StartTransaction whose start state is an earlier commit of the warehouse
        (``Catalog.warehouse_version()`` as a caller read it), so that the commits made since then
        conflict with its writes as commits made since its start do: a Spark write job starts at the
        state its query was planned on or after."""
        _check_version(WarehouseVersion)
        kind = TransactionType or READ_AND_WRITE
        tx_id = self._ctx.transactions().start(kind, self.transaction_timeout, WarehouseVersion)
        return response({"TransactionId": tx_id})

    @operation("GetTableObjectsArrow")
    def get_table_objects_arrow(
        self,
        *,
        DatabaseName: str,
        TableName: str,
        Expression: str | None = None,
        SparkFilters: list[dict[str, Any]] | None = None,
        TransactionId: str | None = None,
        QueryAsOfTime: datetime | None = None,
        WarehouseVersion: int | None = None,
    ) -> pa.Table:
        """Every object of the partitions that match, at once, as Arrow: a string column per partition
        key, then Uri, ETag and Size (what a Spark scan plans from).

        ``Expression`` is a GetPartitions expression (OR, IN, LIKE, ... as GetPartitions takes them), or
        ``SparkFilters`` Spark's pushed source filters as JSON trees (gluecat.expressions.spark); read at
        ``TransactionId`` (its start and own writes; its commit, once committed), ``QueryAsOfTime``, or
        ``WarehouseVersion`` (the state right after that commit: the metadata ``gluecat.warehouse_version``
        of every answer names the one it read, so that a query's later reads read the same).
        """
        database = shapes.check_db_or_table_name(DatabaseName, "DatabaseName")
        table = shapes.check_db_or_table_name(TableName, "TableName")
        expression = shapes.check_expression(Expression, "Expression")
        as_of = shapes.check_timestamp(QueryAsOfTime, "QueryAsOfTime")
        if TransactionId is not None:
            check_transaction_id(TransactionId)
        _check_version(WarehouseVersion)
        if SparkFilters is not None and (expression or not isinstance(SparkFilters, list)):
            raise InvalidInputException(
                "SparkFilters: must be a list of filters, and not given with Expression"
            )
        predicate = parse_spark_filters(SparkFilters) if SparkFilters is not None else None
        return governed.objects_arrow(
            self._ctx,
            database,
            table,
            expression=expression,
            spark_filters=predicate,
            transaction_id=TransactionId,
            as_of=as_of,
            version=WarehouseVersion,
        )


def _entry(
    principal: dict[str, Any],
    resource: dict[str, Any],
    permissions: list[str],
    condition: dict[str, Any] | None,
    with_grant_option: list[str] | None,
) -> dict[str, Any]:
    return {
        "Principal": principal,
        "Resource": resource,
        "Permissions": permissions,
        "Condition": condition,
        "PermissionsWithGrantOption": with_grant_option,
    }


def _check_version(version: Any) -> None:
    if version is not None and (isinstance(version, bool) or not isinstance(version, int) or version < 0):
        raise InvalidInputException(f"WarehouseVersion: {version!r} is not a commit number")
