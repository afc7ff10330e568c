"""``gluecat.Catalog``: the Glue Data Catalog's Python API (boto3's Glue client shape) over a warehouse.

Each method validates its whole request before anything changes (a rejected call changes nothing),
delegates to the catalog layer, and answers with boto3's response dictionaries. Code written against
``boto3.client("glue")`` runs unchanged against a Catalog for these calls.
"""

from __future__ import annotations

import getpass
from datetime import datetime
from typing import Any, NoReturn

import pyarrow.fs as pafs

from gluecat.api import shapes
from gluecat.api.operation import operation, response
from gluecat.api.partition_operations import PartitionOperations
from gluecat.api.service import ClientMeta, ServiceClient
from gluecat.catalog import compaction, databases, search, statistics, tables
from gluecat.catalog.context import Context, Limits
from gluecat.errors import InvalidInputException
from gluecat.store.store import Store


class Catalog(ServiceClient, PartitionOperations):
    """A Glue Data Catalog stored in ``warehouse`` (a local folder or a pyarrow file system URI).

    Several processes may open the same warehouse at once; each call sees every commit made before it.
    ``fsync=False`` trades durability across power failures (not across process crashes) for speed.
    ``region_name`` is the region of the catalog's resource ARNs (``meta.region_name``, as boto3's).
    """

    SERVICE = "glue"

    def __init__(
        self,
        warehouse: str = "warehouse",
        *,
        catalog_id: str = "000000000000",
        principal: str | None = None,
        single_writer: bool = False,
        fsync: bool = True,
        filesystem: pafs.FileSystem | None = None,
        limits: Limits | None = None,
        background_merges: bool = True,
        region_name: str = "us-east-1",
    ) -> None:
        self.warehouse = warehouse
        self.meta = ClientMeta(self, region_name)
        self.store = Store(warehouse, single_writer=single_writer, fsync=fsync, filesystem=filesystem)
        self._ctx = Context(
            store=self.store,
            catalog_id=catalog_id,
            principal=principal or _default_principal(),
            limits=limits or Limits(),
            background_merges=background_merges,
        )

    def close(self) -> None:
        """Wait for the segment merges this catalog's writes have started (they run in the background);
        the catalog stays usable. Before removing a warehouse folder, say."""
        compaction.wait_for_merges(self.store)

    def __enter__(self) -> Catalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def warehouse_version(self) -> int:
        """The number of the latest commit to the warehouse: any change anywhere makes it larger.

        Callers that keep something derived from the catalog (the Hive endpoint's encoded replies, the
        Spark shim's partition identities) label it with this and re-derive when it has moved on.
        """
        return self.store.latest().version

    # -- databases -----------------------------------------------------------------------------

    @operation("CreateDatabase")
    def create_database(
        self,
        *,
        DatabaseInput: dict[str, Any],
        CatalogId: str | None = None,
        Tags: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        shapes.check_parameters(Tags, "Tags")
        databases.create_database(self._ctx, shapes.check_database_input(DatabaseInput))
        return response()

    @operation("GetDatabase")
    def get_database(self, *, Name: str, CatalogId: str | None = None) -> dict[str, Any]:
        self._catalog(CatalogId)
        return response(databases.get_database(self._ctx, shapes.check_db_or_table_name(Name, "Name")))

    @operation("GetDatabases")
    def get_databases(
        self,
        *,
        CatalogId: str | None = None,
        NextToken: str | None = None,
        MaxResults: int | None = None,
        ResourceShareType: str | None = None,
        AttributesToGet: list[str] | None = None,
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        max_results = shapes.check_max_results(MaxResults, "MaxResults", 1, 100)
        if ResourceShareType not in (None, "ALL", "FOREIGN", "FEDERATED"):
            _invalid("ResourceShareType", "must be one of ALL, FOREIGN, FEDERATED")
        if ResourceShareType in ("FOREIGN", "FEDERATED"):
            return response({"DatabaseList": []})  # nothing is shared into this catalog
        out = databases.get_databases(self._ctx, NextToken, max_results)
        if AttributesToGet is not None:
            wanted = set(shapes.check_string_list(AttributesToGet, "AttributesToGet") or []) | {"Name"}
            out["DatabaseList"] = [{k: v for k, v in d.items() if k in wanted} for d in out["DatabaseList"]]
        return response(out)

    @operation("UpdateDatabase")
    def update_database(
        self, *, Name: str, DatabaseInput: dict[str, Any], CatalogId: str | None = None
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        name = shapes.check_db_or_table_name(Name, "Name")
        databases.update_database(self._ctx, name, shapes.check_database_input(DatabaseInput))
        return response()

    @operation("DeleteDatabase")
    def delete_database(self, *, Name: str, CatalogId: str | None = None) -> dict[str, Any]:
        self._catalog(CatalogId)
        databases.delete_database(self._ctx, shapes.check_db_or_table_name(Name, "Name"))
        return response()

    # -- tables --------------------------------------------------------------------------------

    @operation("CreateTable")
    def create_table(
        self,
        *,
        DatabaseName: str,
        TableInput: dict[str, Any],
        CatalogId: str | None = None,
        PartitionIndexes: list[dict[str, Any]] | None = None,
        TransactionId: str | None = None,
        OpenTableFormatInput: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        db = shapes.check_db_or_table_name(DatabaseName, "DatabaseName")
        table_input = shapes.check_table_input(TableInput)
        indexes = self._index_descriptors(table_input, PartitionIndexes)
        self._transaction(TransactionId)
        if OpenTableFormatInput is not None:
            _invalid("OpenTableFormatInput", "open table formats (Iceberg) are not supported by gluecat")
        tables.create_table(self._ctx, db, table_input, indexes)
        return response()

    @operation("UpdateTable")
    def update_table(
        self,
        *,
        DatabaseName: str,
        TableInput: dict[str, Any],
        CatalogId: str | None = None,
        SkipArchive: bool | None = None,
        TransactionId: str | None = None,
        VersionId: str | None = None,
        ViewUpdateAction: str | None = None,
        Force: bool | None = None,
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        db = shapes.check_db_or_table_name(DatabaseName, "DatabaseName")
        table_input = shapes.check_table_input(TableInput)
        skip = bool(shapes.check_bool(SkipArchive, "SkipArchive"))
        version = shapes.check_string(
            VersionId, "VersionId", min_bytes=1, max_bytes=255, pattern="single_line"
        )
        if ViewUpdateAction is not None or Force is not None:
            _invalid("ViewUpdateAction", "multi-dialect views are not supported by gluecat")
        self._transaction(TransactionId)
        tables.update_table(self._ctx, db, table_input, skip_archive=skip, version_id=version)
        return response()

    @operation("DeleteTable")
    def delete_table(
        self, *, DatabaseName: str, Name: str, CatalogId: str | None = None, TransactionId: str | None = None
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        db = shapes.check_db_or_table_name(DatabaseName, "DatabaseName")
        name = shapes.check_db_or_table_name(Name, "Name")
        self._transaction(TransactionId)
        tables.delete_table(self._ctx, db, name)
        return response()

    @operation("BatchDeleteTable")
    def batch_delete_table(
        self,
        *,
        DatabaseName: str,
        TablesToDelete: list[str],
        CatalogId: str | None = None,
        TransactionId: str | None = None,
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        db = shapes.check_db_or_table_name(DatabaseName, "DatabaseName")
        names = shapes.check_string_list(
            TablesToDelete,
            "TablesToDelete",
            max_items=100,
            item_min_bytes=1,
            item_max_bytes=255,
            item_pattern="single_line",
        )
        self._transaction(TransactionId)
        return response(
            tables.batch_delete_table(
                self._ctx, db, [n.lower() for n in _required_list(names, "TablesToDelete")]
            )
        )

    @operation("GetTable")
    def get_table(
        self,
        *,
        DatabaseName: str,
        Name: str,
        CatalogId: str | None = None,
        TransactionId: str | None = None,
        QueryAsOfTime: datetime | None = None,
        IncludeStatusDetails: bool | None = None,
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        db = shapes.check_db_or_table_name(DatabaseName, "DatabaseName")
        name = shapes.check_db_or_table_name(Name, "Name")
        as_of = shapes.check_timestamp(QueryAsOfTime, "QueryAsOfTime")
        shapes.check_bool(IncludeStatusDetails, "IncludeStatusDetails")
        tx = shapes.check_transaction_id(TransactionId)
        return response(tables.get_table(self._ctx, db, name, as_of, tx))

    @operation("GetTables")
    def get_tables(
        self,
        *,
        DatabaseName: str,
        CatalogId: str | None = None,
        Expression: str | None = None,
        NextToken: str | None = None,
        MaxResults: int | None = None,
        TransactionId: str | None = None,
        QueryAsOfTime: datetime | None = None,
        IncludeStatusDetails: bool | None = None,
        AttributesToGet: list[str] | None = None,
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        db = shapes.check_db_or_table_name(DatabaseName, "DatabaseName")
        expression = shapes.check_string(Expression, "Expression", max_bytes=2048, pattern="single_line")
        max_results = shapes.check_max_results(MaxResults, "MaxResults", 1, 100)
        as_of = shapes.check_timestamp(QueryAsOfTime, "QueryAsOfTime")
        shapes.check_bool(IncludeStatusDetails, "IncludeStatusDetails")
        tx = shapes.check_transaction_id(TransactionId)
        out = tables.get_tables(self._ctx, db, expression, NextToken, max_results, as_of, tx)
        if AttributesToGet is not None:
            wanted = set(shapes.check_string_list(AttributesToGet, "AttributesToGet") or []) | {"Name"}
            out["TableList"] = [{k: v for k, v in t.items() if k in wanted} for t in out["TableList"]]
        return response(out)

    @operation("GetTableVersion")
    def get_table_version(
        self, *, DatabaseName: str, TableName: str, CatalogId: str | None = None, VersionId: str | None = None
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        db = shapes.check_db_or_table_name(DatabaseName, "DatabaseName")
        name = shapes.check_db_or_table_name(TableName, "TableName")
        vid = shapes.check_string(VersionId, "VersionId", min_bytes=1, max_bytes=255, pattern="single_line")
        return response(tables.get_table_version(self._ctx, db, name, vid))

    @operation("GetTableVersions")
    def get_table_versions(
        self,
        *,
        DatabaseName: str,
        TableName: str,
        CatalogId: str | None = None,
        NextToken: str | None = None,
        MaxResults: int | None = None,
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        db = shapes.check_db_or_table_name(DatabaseName, "DatabaseName")
        name = shapes.check_db_or_table_name(TableName, "TableName")
        max_results = shapes.check_max_results(MaxResults, "MaxResults", 1, 100)
        return response(tables.get_table_versions(self._ctx, db, name, NextToken, max_results))

    @operation("DeleteTableVersion")
    def delete_table_version(
        self, *, DatabaseName: str, TableName: str, VersionId: str, CatalogId: str | None = None
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        db = shapes.check_db_or_table_name(DatabaseName, "DatabaseName")
        name = shapes.check_db_or_table_name(TableName, "TableName")
        vid = shapes.check_string(
            VersionId, "VersionId", min_bytes=1, max_bytes=255, pattern="single_line", required=True
        )
        tables.delete_table_version(self._ctx, db, name, str(vid))
        return response()

    @operation("BatchDeleteTableVersion")
    def batch_delete_table_version(
        self, *, DatabaseName: str, TableName: str, VersionIds: list[str], CatalogId: str | None = None
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        db = shapes.check_db_or_table_name(DatabaseName, "DatabaseName")
        name = shapes.check_db_or_table_name(TableName, "TableName")
        vids = shapes.check_string_list(
            VersionIds,
            "VersionIds",
            max_items=100,
            item_min_bytes=1,
            item_max_bytes=255,
            item_pattern="single_line",
        )
        return response(
            tables.batch_delete_table_version(self._ctx, db, name, _required_list(vids, "VersionIds"))
        )

    @operation("SearchTables")
    def search_tables(
        self,
        *,
        CatalogId: str | None = None,
        NextToken: str | None = None,
        Filters: list[dict[str, Any]] | None = None,
        SearchText: str | None = None,
        SortCriteria: list[dict[str, Any]] | None = None,
        MaxResults: int | None = None,
        ResourceShareType: str | None = None,
        IncludeStatusDetails: bool | None = None,
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        filters = shapes.check_property_predicates(Filters, "Filters") or []
        text = shapes.check_string(SearchText, "SearchText", max_bytes=1024)
        sort = shapes.check_sort_criteria(SortCriteria, "SortCriteria") or []
        max_results = shapes.check_max_results(MaxResults, "MaxResults", 1, 1000)
        if ResourceShareType not in (None, "ALL", "FOREIGN", "FEDERATED"):
            _invalid("ResourceShareType", "must be one of FOREIGN, ALL, FEDERATED")
        shapes.check_bool(IncludeStatusDetails, "IncludeStatusDetails")
        return response(
            search.search_tables(
                self._ctx,
                filters=filters,
                search_text=text,
                sort_criteria=sort,
                next_token=NextToken,
                max_results=max_results,
                resource_share_type=ResourceShareType,
            )
        )

    # -- column statistics ---------------------------------------------------------------------

    @operation("GetColumnStatisticsForTable")
    def get_column_statistics_for_table(
        self, *, DatabaseName: str, TableName: str, ColumnNames: list[str], CatalogId: str | None = None
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        db = shapes.check_db_or_table_name(DatabaseName, "DatabaseName")
        name = shapes.check_db_or_table_name(TableName, "TableName")
        cols = shapes.check_string_list(
            ColumnNames,
            "ColumnNames",
            max_items=100,
            item_min_bytes=1,
            item_max_bytes=255,
            item_pattern="single_line",
        )
        return response(
            statistics.get_column_statistics(self._ctx, db, name, _required_list(cols, "ColumnNames"))
        )

    @operation("UpdateColumnStatisticsForTable")
    def update_column_statistics_for_table(
        self,
        *,
        DatabaseName: str,
        TableName: str,
        ColumnStatisticsList: list[dict[str, Any]],
        CatalogId: str | None = None,
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        db = shapes.check_db_or_table_name(DatabaseName, "DatabaseName")
        name = shapes.check_db_or_table_name(TableName, "TableName")
        if not isinstance(ColumnStatisticsList, list):
            _invalid("ColumnStatisticsList", "must be a list")
        if len(ColumnStatisticsList) > 25:
            _invalid("ColumnStatisticsList", f"has {len(ColumnStatisticsList)} items; at most 25 are allowed")
        stats = [
            shapes.check_column_statistics(s, f"ColumnStatisticsList[{i}]")
            for i, s in enumerate(ColumnStatisticsList)
        ]
        return response(statistics.update_column_statistics(self._ctx, db, name, stats))

    @operation("DeleteColumnStatisticsForTable")
    def delete_column_statistics_for_table(
        self, *, DatabaseName: str, TableName: str, ColumnName: str, CatalogId: str | None = None
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        db = shapes.check_db_or_table_name(DatabaseName, "DatabaseName")
        name = shapes.check_db_or_table_name(TableName, "TableName")
        col = shapes.check_name(ColumnName, "ColumnName")
        statistics.delete_column_statistics(self._ctx, db, name, col)
        return response()

    # -- helpers -------------------------------------------------------------------------------

    def _transaction(self, transaction_id: str | None) -> None:
        self._ctx.check_transaction(shapes.check_transaction_id(transaction_id))

    def _index_descriptors(
        self, table_input: dict[str, Any], partition_indexes: list[dict[str, Any]] | None
    ) -> list[dict[str, Any]]:
        """CreateTable's PartitionIndexes: at most 3, on partition keys; ACTIVE at once (nothing to backfill)."""
        if partition_indexes is None:
            return []
        if not isinstance(partition_indexes, list):
            _invalid("PartitionIndexes", "must be a list")
        if len(partition_indexes) > self._ctx.limits.indexes_per_table:
            _invalid(
                "PartitionIndexes",
                f"has {len(partition_indexes)} indexes; a table may have at most {self._ctx.limits.indexes_per_table}",
            )
        from gluecat.catalog.indexes import descriptor  # the partition layer owns index rules

        seen: set[str] = set()
        out = []
        for i, raw in enumerate(partition_indexes):
            index = shapes.check_partition_index(raw, f"PartitionIndexes[{i}]")
            if index["IndexName"] in seen:
                _invalid(f"PartitionIndexes[{i}].IndexName", f"{index['IndexName']!r} is used twice")
            seen.add(index["IndexName"])
            out.append(descriptor(table_input, index, f"PartitionIndexes[{i}]", status="ACTIVE"))
        return out


def _invalid(field: str, why: str) -> NoReturn:
    raise InvalidInputException(f"{field}: {why}")


def _required_list(value: list[str] | None, field: str) -> list[str]:
    if value is None:
        _invalid(field, "is required")
    return value


def _default_principal() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "gluecat"
