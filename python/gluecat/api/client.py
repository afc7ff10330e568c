"""``gluecat.Catalog``: the Glue Data Catalog's Python API (boto3's Glue client shape) over a warehouse.

Each method validates its whole request before anything changes (a rejected call changes nothing),
delegates to the catalog layer, and answers with boto3's response dictionaries. Code written against
``boto3.client("glue")`` runs unchanged against a Catalog for these calls.
"""

from __future__ import annotations

import getpass
from collections.abc import Callable
from datetime import datetime
from typing import Any, NoReturn

import pyarrow.fs as pafs

from gluecat import locations
from gluecat.api import extensions, open_contexts, shapes, validate
from gluecat.api.operation import operation, response
from gluecat.api.partition_operations import PartitionOperations
from gluecat.api.service import ClientMeta, ServiceClient
from gluecat.catalog import databases, search, statistics, tables, tags
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
        if filesystem is None:
            open_contexts.register(warehouse, single_writer, fsync, self._ctx)

    def close(self) -> None:
        """Wait for the segment merges this catalog's writes have started (they run in the background);
        the catalog stays usable. Before removing a warehouse folder, say."""
        self._ctx.rows.wait_for_merges()

    def __enter__(self) -> Catalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def warehouse_version(self) -> int:
        """The number of the latest commit to the warehouse's root log: it moves on with every change
        of the catalog's databases and table definitions (and of governed tables' objects), not with a
        table's partitions or statistics (``table_version`` covers those).

        Callers that keep something derived from the catalog (database and table listings) label it
        with this and re-derive when it has moved on.
        """
        return self.store.latest().version

    def table_version(self, DatabaseName: str, TableName: str) -> int:
        """The version of one table's state: it moves on with every commit that changes the table (its
        definition, partitions, statistics, indexes; its drop) and with no other. What callers that keep
        something derived from one table label it with (one look at the table's log). Not comparable
        with ``warehouse_version``."""
        db = shapes.check_db_or_table_name(DatabaseName, "DatabaseName")
        name = shapes.check_db_or_table_name(TableName, "TableName")
        return self.store.table_version((db, name))

    @operation("GetGluecatInfo")
    def get_gluecat_info(self) -> dict[str, Any]:
        """That this catalog is gluecat: its version, its warehouse (where tables made without a location
        go) and the gluecat operations it serves besides Glue's (gluecat.api.extensions)."""
        info = {
            "Version": _version(),
            "Warehouse": self.warehouse,
            "Operations": list(extensions.OPERATIONS),
        }
        return response({"Gluecat": info})

    def tables_unchanged_since(self, database: str, version: int) -> int | None:
        """The latest warehouse version if, after ``version``, no commit made, changed or dropped the
        database or one of its tables; None if one may have. A listing read in several calls (GetTables
        pages) that started at ``version`` is then of one state."""
        db = shapes.check_db_or_table_name(database, "DatabaseName")
        if type(version) is not int:
            raise InvalidInputException("version: must be an integer warehouse version")
        return tables.tables_unchanged_since(self._ctx, db, version)

    def databases_unchanged_since(self, version: int) -> int | None:
        """The latest warehouse version if, after ``version``, no commit made, changed or dropped a
        database; None if one may have. A listing read in several calls (GetDatabases pages) that
        started at ``version`` is then of one state."""
        if type(version) is not int:
            raise InvalidInputException("version: must be an integer warehouse version")
        return databases.databases_unchanged_since(self._ctx, version)

    # -- databases -----------------------------------------------------------------------------
    # Every parameter arrives checked against the service model (gluecat.api.operation); what is left
    # here are the rules between parameters and the catalog's own.

    @operation("CreateDatabase")
    def create_database(
        self,
        *,
        DatabaseInput: dict[str, Any],
        CatalogId: str | None = None,
        Tags: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        databases.create_database(self._ctx, DatabaseInput, Tags)
        return response()

    @operation("GetDatabase")
    def get_database(self, *, Name: str, CatalogId: str | None = None) -> dict[str, Any]:
        self._catalog(CatalogId)
        return response(databases.get_database(self._ctx, Name.lower()))

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
        if ResourceShareType in ("FOREIGN", "FEDERATED"):
            return response({"DatabaseList": []})  # nothing is shared into this catalog
        out = databases.get_databases(self._ctx, NextToken, MaxResults)
        if AttributesToGet is not None:
            out["DatabaseList"] = [
                _attributes(d, AttributesToGet, _DATABASE_ATTRIBUTES) for d in out["DatabaseList"]
            ]
        return response(out)

    @operation("UpdateDatabase")
    def update_database(
        self, *, Name: str, DatabaseInput: dict[str, Any], CatalogId: str | None = None
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        databases.update_database(self._ctx, Name.lower(), DatabaseInput)
        return response()

    @operation("DeleteDatabase")
    def delete_database(self, *, Name: str, CatalogId: str | None = None) -> dict[str, Any]:
        self._catalog(CatalogId)
        databases.delete_database(self._ctx, Name.lower())
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
        if OpenTableFormatInput is not None and PartitionIndexes:
            raise InvalidInputException(
                "PartitionIndexes: an Iceberg table has no Glue partition keys to index"
            )
        indexes = self._index_descriptors(TableInput, PartitionIndexes)
        tables.create_table(
            self._ctx, DatabaseName.lower(), TableInput, indexes, OpenTableFormatInput, TransactionId
        )
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
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        tables.update_table(
            self._ctx,
            DatabaseName.lower(),
            TableInput,
            skip_archive=bool(SkipArchive),
            version_id=VersionId,
            transaction_id=TransactionId,
        )
        return response()

    @operation("DeleteTable")
    def delete_table(
        self, *, DatabaseName: str, Name: str, CatalogId: str | None = None, TransactionId: str | None = None
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        tables.delete_table(self._ctx, DatabaseName.lower(), Name.lower(), TransactionId)
        return response()

    # gluecat's own table calls, for clients that change a table as they read it (the Spark shim): each
    # takes ``Table``, the table as GetTable returned it, and changes nothing unless the table is still
    # that one (the same CreateTime and VersionId), else ConcurrentModificationException.

    @operation("UpdateTableAsRead")
    def update_table_as_read(
        self,
        *,
        Table: dict[str, Any],
        TableInput: dict[str, Any],
        SkipArchive: bool = False,
        DropColumnStatistics: bool = False,
    ) -> dict[str, Any]:
        """UpdateTable of ``Table`` as it was read: not of a table made again under its name since. With
        ``DropColumnStatistics``, the table's column statistics go in the same commit (they describe
        data that is no longer the table's)."""
        read = _read_table(Table)
        checked = validate.request(
            self.SERVICE, "UpdateTable", {"DatabaseName": read["DatabaseName"], "TableInput": TableInput}
        )
        if checked["TableInput"]["Name"].lower() != read["Name"]:
            _invalid("TableInput.Name", f"must be the name of the table read, {read['Name']}")
        tables.update_table(
            self._ctx,
            read["DatabaseName"],
            {**checked["TableInput"], "Name": read["Name"]},
            skip_archive=SkipArchive is True,
            version_id=None,
            read=read,
            drop_column_statistics=DropColumnStatistics is True,
        )
        return response()

    @operation("DeleteTableAsRead")
    def delete_table_as_read(self, *, Table: dict[str, Any]) -> dict[str, Any]:
        """DeleteTable of ``Table`` as it was read."""
        read = _read_table(Table)
        tables.delete_table(self._ctx, read["DatabaseName"], read["Name"], read=read)
        return response()

    @operation("RenameTable")
    def rename_table(
        self,
        *,
        Table: dict[str, Any],
        NewDatabaseName: str,
        TableInput: dict[str, Any],
        RelocateStorage: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
        MovedFolder: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """Glue has no rename: one atomic commit makes ``TableInput`` (the new name's table) in
        ``NewDatabaseName`` with the partitions and ACTIVE partition indexes of ``Table`` as they are at
        the commit, and deletes ``Table``, which must still be as it was read. ``RelocateStorage`` maps
        each partition's StorageDescriptor to the new table's (e.g. into a moved folder); over the wire,
        ``MovedFolder`` ({"From": folder, "To": folder}) says the table's folder moved, and each
        partition inside it moves with it."""
        read = _read_table(Table)
        checked = validate.request(
            self.SERVICE, "CreateTable", {"DatabaseName": NewDatabaseName, "TableInput": TableInput}
        )
        if RelocateStorage is not None and not callable(RelocateStorage):
            _invalid("RelocateStorage", "must be a function of a StorageDescriptor")
        if MovedFolder is not None:
            if RelocateStorage is not None:
                _invalid("MovedFolder", "cannot be given together with RelocateStorage")
            RelocateStorage = _mover(MovedFolder)
        tables.rename_table(
            self._ctx,
            read,
            checked["DatabaseName"].lower(),
            {**checked["TableInput"], "Name": checked["TableInput"]["Name"].lower()},
            RelocateStorage or (lambda sd: sd),
        )
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
        names = [n.lower() for n in TablesToDelete]
        return response(tables.batch_delete_table(self._ctx, DatabaseName.lower(), names, TransactionId))

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
        db, name = DatabaseName.lower(), Name.lower()
        return response(tables.get_table(self._ctx, db, name, QueryAsOfTime, TransactionId))

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
        db = DatabaseName.lower()
        out = tables.get_tables(
            self._ctx, db, Expression, NextToken, MaxResults, QueryAsOfTime, TransactionId
        )
        if AttributesToGet is not None:
            out["TableList"] = [_attributes(t, AttributesToGet, _TABLE_ATTRIBUTES) for t in out["TableList"]]
        return response(out)

    @operation("GetTableVersion")
    def get_table_version(
        self, *, DatabaseName: str, TableName: str, CatalogId: str | None = None, VersionId: str | None = None
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        return response(
            tables.get_table_version(self._ctx, DatabaseName.lower(), TableName.lower(), VersionId)
        )

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
        db, name = DatabaseName.lower(), TableName.lower()
        return response(tables.get_table_versions(self._ctx, db, name, NextToken, MaxResults))

    @operation("DeleteTableVersion")
    def delete_table_version(
        self, *, DatabaseName: str, TableName: str, VersionId: str, CatalogId: str | None = None
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        tables.delete_table_version(self._ctx, DatabaseName.lower(), TableName.lower(), VersionId)
        return response()

    @operation("BatchDeleteTableVersion")
    def batch_delete_table_version(
        self, *, DatabaseName: str, TableName: str, VersionIds: list[str], CatalogId: str | None = None
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        db, name = DatabaseName.lower(), TableName.lower()
        return response(tables.batch_delete_table_version(self._ctx, db, name, VersionIds))

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
        return response(
            search.search_tables(
                self._ctx,
                filters=Filters or [],
                search_text=SearchText,
                sort_criteria=SortCriteria or [],
                next_token=NextToken,
                max_results=MaxResults,
                resource_share_type=ResourceShareType,
            )
        )

    # -- column statistics ---------------------------------------------------------------------

    @operation("GetColumnStatisticsForTable")
    def get_column_statistics_for_table(
        self, *, DatabaseName: str, TableName: str, ColumnNames: list[str], CatalogId: str | None = None
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        db, name = DatabaseName.lower(), TableName.lower()
        return response(statistics.get_column_statistics(self._ctx, db, name, ColumnNames))

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
        db, name = DatabaseName.lower(), TableName.lower()
        return response(statistics.update_column_statistics(self._ctx, db, name, ColumnStatisticsList))

    @operation("DeleteColumnStatisticsForTable")
    def delete_column_statistics_for_table(
        self, *, DatabaseName: str, TableName: str, ColumnName: str, CatalogId: str | None = None
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        statistics.delete_column_statistics(self._ctx, DatabaseName.lower(), TableName.lower(), ColumnName)
        return response()

    # -- tags --------------------------------------------------------------------------------------
    # Resources are named by Glue ARNs: arn:aws:glue:<region>:<catalog id>:catalog, ...:database/<db>
    # and ...:table/<db>/<table>, with this catalog's id and meta.region_name (and its partition:
    # arn:aws-cn:... for cn-north-1).

    @operation("TagResource")
    def tag_resource(self, *, ResourceArn: str, TagsToAdd: dict[str, str]) -> dict[str, Any]:
        tags.tag_resource(self._ctx, self._resource(ResourceArn), TagsToAdd)
        return response()

    @operation("UntagResource")
    def untag_resource(self, *, ResourceArn: str, TagsToRemove: list[str]) -> dict[str, Any]:
        tags.untag_resource(self._ctx, self._resource(ResourceArn), TagsToRemove)
        return response()

    @operation("GetTags")
    def get_tags(self, *, ResourceArn: str) -> dict[str, Any]:
        return response(tags.get_tags(self._ctx, self._resource(ResourceArn)))

    # -- helpers -------------------------------------------------------------------------------

    def _resource(self, arn: str) -> tuple[str, ...]:
        return tags.resource_key(self._ctx, self.meta.region_name, arn)

    def _index_descriptors(
        self, table_input: dict[str, Any], partition_indexes: list[dict[str, Any]] | None
    ) -> list[dict[str, Any]]:
        """CreateTable's PartitionIndexes: at most 3, on partition keys; ACTIVE at once (nothing to backfill)."""
        if partition_indexes is None:
            return []
        if len(partition_indexes) > self._ctx.limits.indexes_per_table:
            _invalid(
                "PartitionIndexes",
                f"has {len(partition_indexes)} indexes; a table may have at most {self._ctx.limits.indexes_per_table}",
            )
        from gluecat.catalog.indexes import descriptor  # the partition layer owns index rules

        seen: set[str] = set()
        out = []
        for i, index in enumerate(partition_indexes):
            if index["IndexName"] in seen:
                _invalid(f"PartitionIndexes[{i}].IndexName", f"{index['IndexName']!r} is used twice")
            seen.add(index["IndexName"])
            out.append(descriptor(table_input, index, f"PartitionIndexes[{i}]", status="ACTIVE"))
        return out


def _mover(moved: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """RenameTable's MovedFolder as a function of a partition's StorageDescriptor."""
    if not isinstance(moved, dict) or not all(
        isinstance(moved.get(k), str) and moved[k] for k in ("From", "To")
    ):
        _invalid("MovedFolder", "must be an object with the folders From and To")
    old, new = moved["From"], moved["To"]

    def relocate(sd: dict[str, Any]) -> dict[str, Any]:
        if not sd.get("Location"):
            return sd
        return {**sd, "Location": locations.moved(sd["Location"], old, new)}

    return relocate


def _read_table(table: Any) -> dict[str, Any]:
    """A table as GetTable returned it, with what require_same_table compares."""
    if not isinstance(table, dict):
        _invalid("Table", "must be a table as GetTable returned it")
    for key, kind in (("DatabaseName", str), ("Name", str), ("VersionId", str), ("CreateTime", datetime)):
        if not isinstance(table.get(key), kind):
            _invalid(f"Table.{key}", f"is required and must be a {kind.__name__} (as GetTable returns it)")
    return {**table, "DatabaseName": table["DatabaseName"].lower(), "Name": table["Name"].lower()}


def _invalid(field: str, why: str) -> NoReturn:
    raise InvalidInputException(f"{field}: {why}")


_DATABASE_ATTRIBUTES = {"NAME": "Name", "TARGET_DATABASE": "TargetDatabase"}
_TABLE_ATTRIBUTES = {"NAME": "Name", "TABLE_TYPE": "TableType"}


def _attributes(doc: dict[str, Any], wanted: list[str], names: dict[str, str]) -> dict[str, Any]:
    """AttributesToGet: only the members named (NAME always), as Glue answers; DEFAULT is everything."""
    if "DEFAULT" in wanted:
        return doc
    keep = {names[a] for a in wanted if a in names} | {"Name"}
    return {k: v for k, v in doc.items() if k in keep}


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gluecat")
    except PackageNotFoundError:  # run from a checkout without installing
        return "unknown"


def _default_principal() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "gluecat"
