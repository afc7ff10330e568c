"""The partition and partition-index half of ``gluecat.Catalog`` (boto3 Glue names and shapes)."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Any, NoReturn

import pyarrow as pa

from gluecat.api import shapes
from gluecat.api.operation import operation, response
from gluecat.catalog import indexes, partition_statistics, partitions
from gluecat.catalog.context import Context
from gluecat.errors import InvalidInputException
from gluecat.expressions import parse_spark_filters


def _invalid(field: str, why: str) -> NoReturn:
    raise InvalidInputException(f"{field}: {why}")


class PartitionOperations:
    _ctx: Context

    def _catalog(self, catalog_id: str | None) -> None:
        self._ctx.check_catalog_id(catalog_id)

    @operation("CreatePartition")
    def create_partition(
        self,
        *,
        DatabaseName: str,
        TableName: str,
        PartitionInput: dict[str, Any],
        CatalogId: str | None = None,
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        partitions.create_partition(self._ctx, DatabaseName.lower(), TableName.lower(), PartitionInput)
        return response()

    @operation("BatchCreatePartition")
    def batch_create_partition(
        self,
        *,
        DatabaseName: str,
        TableName: str,
        PartitionInputList: list[dict[str, Any]],
        CatalogId: str | None = None,
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        db, table = DatabaseName.lower(), TableName.lower()
        return response(partitions.batch_create_partition(self._ctx, db, table, PartitionInputList))

    @operation("UpdatePartition")
    def update_partition(
        self,
        *,
        DatabaseName: str,
        TableName: str,
        PartitionValueList: list[str],
        PartitionInput: dict[str, Any],
        CatalogId: str | None = None,
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        db, table = DatabaseName.lower(), TableName.lower()
        partitions.update_partition(self._ctx, db, table, PartitionValueList, PartitionInput)
        return response()

    @operation("BatchUpdatePartition")
    def batch_update_partition(
        self,
        *,
        DatabaseName: str,
        TableName: str,
        Entries: list[dict[str, Any]],
        CatalogId: str | None = None,
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        db, table = DatabaseName.lower(), TableName.lower()
        return response(partitions.batch_update_partition(self._ctx, db, table, Entries))

    @operation("DeletePartition")
    def delete_partition(
        self, *, DatabaseName: str, TableName: str, PartitionValues: list[str], CatalogId: str | None = None
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        partitions.delete_partition(self._ctx, DatabaseName.lower(), TableName.lower(), PartitionValues)
        return response()

    @operation("BatchDeletePartition")
    def batch_delete_partition(
        self,
        *,
        DatabaseName: str,
        TableName: str,
        PartitionsToDelete: list[dict[str, Any]],
        CatalogId: str | None = None,
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        db, table = DatabaseName.lower(), TableName.lower()
        values = [p["Values"] for p in PartitionsToDelete]
        return response(partitions.batch_delete_partition(self._ctx, db, table, values))

    @operation("GetPartition")
    def get_partition(
        self, *, DatabaseName: str, TableName: str, PartitionValues: list[str], CatalogId: str | None = None
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        db, table = DatabaseName.lower(), TableName.lower()
        return response(partitions.get_partition(self._ctx, db, table, PartitionValues))

    @operation("BatchGetPartition")
    def batch_get_partition(
        self,
        *,
        DatabaseName: str,
        TableName: str,
        PartitionsToGet: list[dict[str, Any]],
        CatalogId: str | None = None,
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        db, table = DatabaseName.lower(), TableName.lower()
        values = [p["Values"] for p in PartitionsToGet]
        return response(partitions.batch_get_partition(self._ctx, db, table, values))

    @operation("GetPartitions")
    def get_partitions(
        self,
        *,
        DatabaseName: str,
        TableName: str,
        CatalogId: str | None = None,
        Expression: str | None = None,
        NextToken: str | None = None,
        Segment: dict[str, int] | None = None,
        MaxResults: int | None = None,
        ExcludeColumnSchema: bool | None = None,
        TransactionId: str | None = None,
        QueryAsOfTime: datetime | None = None,
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        return response(
            partitions.get_partitions(
                self._ctx,
                DatabaseName.lower(),
                TableName.lower(),
                expression=Expression,
                next_token=NextToken,
                segment=Segment,
                max_results=MaxResults,
                exclude_column_schema=bool(ExcludeColumnSchema),
                as_of=QueryAsOfTime,
                transaction_id=TransactionId,
            )
        )

    # -- column statistics of a partition ------------------------------------------------------------

    @operation("GetColumnStatisticsForPartition")
    def get_column_statistics_for_partition(
        self,
        *,
        DatabaseName: str,
        TableName: str,
        PartitionValues: list[str],
        ColumnNames: list[str],
        CatalogId: str | None = None,
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        db, table = DatabaseName.lower(), TableName.lower()
        return response(
            partition_statistics.get_column_statistics(self._ctx, db, table, PartitionValues, ColumnNames)
        )

    @operation("UpdateColumnStatisticsForPartition")
    def update_column_statistics_for_partition(
        self,
        *,
        DatabaseName: str,
        TableName: str,
        PartitionValues: list[str],
        ColumnStatisticsList: list[dict[str, Any]],
        CatalogId: str | None = None,
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        db, table = DatabaseName.lower(), TableName.lower()
        return response(
            partition_statistics.update_column_statistics(
                self._ctx, db, table, PartitionValues, ColumnStatisticsList
            )
        )

    @operation("DeleteColumnStatisticsForPartition")
    def delete_column_statistics_for_partition(
        self,
        *,
        DatabaseName: str,
        TableName: str,
        PartitionValues: list[str],
        ColumnName: str,
        CatalogId: str | None = None,
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        db, table = DatabaseName.lower(), TableName.lower()
        partition_statistics.delete_column_statistics(self._ctx, db, table, PartitionValues, ColumnName)
        return response()

    # -- partition indexes ---------------------------------------------------------------------

    @operation("CreatePartitionIndex")
    def create_partition_index(
        self,
        *,
        DatabaseName: str,
        TableName: str,
        PartitionIndex: dict[str, Any],
        CatalogId: str | None = None,
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        indexes.create_partition_index(self._ctx, DatabaseName.lower(), TableName.lower(), PartitionIndex)
        return response()

    @operation("DeletePartitionIndex")
    def delete_partition_index(
        self, *, DatabaseName: str, TableName: str, IndexName: str, CatalogId: str | None = None
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        indexes.delete_partition_index(self._ctx, DatabaseName.lower(), TableName.lower(), IndexName)
        return response()

    @operation("GetPartitionIndexes")
    def get_partition_indexes(
        self, *, DatabaseName: str, TableName: str, CatalogId: str | None = None, NextToken: str | None = None
    ) -> dict[str, Any]:
        self._catalog(CatalogId)
        db, table = DatabaseName.lower(), TableName.lower()
        return response(indexes.get_partition_indexes(self._ctx, db, table, NextToken))

    # -- gluecat's own bulk calls (not in boto3) ------------------------------------------------

    @operation("ExplainPartitions")
    def explain_partitions(
        self, *, DatabaseName: str, TableName: str, Expression: str | None = None
    ) -> dict[str, Any]:
        """Which partition index GetPartitions would use for ``Expression``, its key ranges, the residual."""
        db, table = _names(DatabaseName, TableName)
        return partitions.explain(self._ctx, db, table, shapes.check_expression(Expression, "Expression"))

    @operation("GetPartitionsArrow")
    def get_partitions_arrow(
        self,
        *,
        DatabaseName: str,
        TableName: str,
        Expression: str | None = None,
        SparkFilters: list[dict[str, Any]] | None = None,
        QueryAsOfTime: datetime | None = None,
    ) -> pa.Table:
        """All matching partitions at once as Arrow: a string column per partition key, and Location.

        ``SparkFilters`` (instead of an Expression) are Spark's pushed source filters as JSON trees, ANDed
        (gluecat.expressions.spark describes the form). ``QueryAsOfTime`` reads the partitions as they were.
        """
        db, table = _names(DatabaseName, TableName)
        expression = shapes.check_expression(Expression, "Expression")
        as_of = shapes.check_timestamp(QueryAsOfTime, "QueryAsOfTime")
        if SparkFilters is not None and expression:
            _invalid("SparkFilters", "cannot be given together with Expression")
        if SparkFilters is not None and not isinstance(SparkFilters, list):
            _invalid("SparkFilters", "must be a list of filters")
        predicate = parse_spark_filters(SparkFilters) if SparkFilters is not None else None
        return partitions.get_partitions_arrow(self._ctx, db, table, expression, predicate, as_of)

    def partitions_unchanged_since(
        self, database: str, table: str, version: int, excluding: Collection[int] = ()
    ) -> int | None:
        """The table's latest version (``Catalog.table_version``) if, after ``version``, no commit other
        than those in ``excluding`` added or dropped a partition of the table; None if one may have. Segment merges and commits to
        other tables do not count, so something derived from the table's partitions (the Spark shim's
        identities) can be relabelled instead of re-derived. ``excluding`` names commits the caller
        has already applied to its copy.
        """
        db, name = _names(database, table)
        if type(version) is not int:
            _invalid("version", "must be an integer warehouse version")
        if not isinstance(excluding, (list, tuple, set, frozenset)) or any(
            type(v) is not int for v in excluding
        ):
            _invalid("excluding", "must be a collection of integer warehouse versions")
        return partitions.partitions_unchanged_since(self._ctx, db, name, version, excluding)

    @operation("CommitPartitions")
    def commit_partitions(
        self,
        *,
        DatabaseName: str,
        TableName: str,
        Add: list[dict[str, Any]] | None = None,
        Drop: list[list[str]] | None = None,
        IfNotExists: bool = False,
        IfExists: bool = False,
    ) -> dict[str, Any]:
        """Add and drop any number of partitions in one atomic commit (Spark writes, partition DDL).

        The response's CommitVersion is the version of the table's log this commit landed as
        (``Catalog.table_version``; other commits to the table may have come before it, since it was
        checked: ``partitions_unchanged_since`` tells).
        """
        db, table = _names(DatabaseName, TableName)
        for field, value in (("Add", Add), ("Drop", Drop)):
            if value is not None and not isinstance(value, list):
                _invalid(field, "must be a list")
        for field, flag in (("IfNotExists", IfNotExists), ("IfExists", IfExists)):
            if not isinstance(flag, bool):
                _invalid(field, "must be a boolean")
        add = shapes.check_partition_inputs(list(Add or []), "Add")
        drop = [_values(v, f"Drop[{i}]") for i, v in enumerate(Drop or [])]
        landed = partitions.commit_partitions(
            self._ctx, db, table, add, drop, if_not_exists=bool(IfNotExists), if_exists=bool(IfExists)
        )
        return response({"CommitVersion": landed})


def _names(database: Any, table: Any) -> tuple[str, str]:
    """The database and table names of gluecat's own calls (which the service model does not check)."""
    return (
        shapes.check_db_or_table_name(database, "DatabaseName"),
        shapes.check_db_or_table_name(table, "TableName"),
    )


def _values(value: Any, field: str) -> list[str]:
    if not isinstance(value, list):
        _invalid(field, "is required and must be a list of strings")
    return shapes.check_partition_value_list({"Values": value}, field)
