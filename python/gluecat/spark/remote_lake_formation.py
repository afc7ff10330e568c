"""The Lake Formation calls of gluecat.spark.governed, made of a catalog service (RemoteCatalog's
endpoint) over its API, answered as the local LakeFormation answers them."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from gluecat.api.pages import every
from gluecat.errors import InvalidInputException
from gluecat.spark.pushed import partition_predicate

if TYPE_CHECKING:
    from gluecat.spark.remote import RemoteCatalog

PAGE = 1000  # GetTableObjects' largest page


class RemoteLakeFormation:
    """The Lake Formation calls gluecat.spark.governed makes, at the same endpoint. A transaction idles
    out after the server's timeout (StartTransaction takes none); the heartbeat extends it as often as
    for the local default."""

    def __init__(self, catalog: RemoteCatalog) -> None:
        from gluecat.catalog.transactions import DEFAULT_TIMEOUT_SECONDS

        self.catalog = catalog
        self.transaction_timeout = float(DEFAULT_TIMEOUT_SECONDS)

    def _call(self, method: str, **params: Any) -> dict[str, Any]:
        return self.catalog._call(self.catalog._lf, method, params)

    def start_transaction(self, **params: Any) -> dict[str, Any]:
        return self._call("start_transaction", **params)

    def start_transaction_at_version(self, **params: Any) -> dict[str, Any]:
        raise InvalidInputException("StartTransactionAtVersion: a remote catalog's versions are not known")

    def commit_transaction(self, **params: Any) -> dict[str, Any]:
        return self._call("commit_transaction", **params)

    def cancel_transaction(self, **params: Any) -> dict[str, Any]:
        return self._call("cancel_transaction", **params)

    def extend_transaction(self, **params: Any) -> dict[str, Any]:
        return self._call("extend_transaction", **params)

    def describe_transaction(self, **params: Any) -> dict[str, Any]:
        return self._call("describe_transaction", **params)

    def delete_objects_on_cancel(self, **params: Any) -> dict[str, Any]:
        return self._call("delete_objects_on_cancel", **params)

    def update_table_objects(self, **params: Any) -> dict[str, Any]:
        return self._call("update_table_objects", **params)

    def get_table_objects_arrow(
        self,
        *,
        DatabaseName: str,
        TableName: str,
        SparkFilters: list[dict[str, Any]] | None = None,
        TransactionId: str | None = None,
        QueryAsOfTime: datetime | None = None,
        WarehouseVersion: int | None = None,
    ) -> pa.Table:
        """As the local call answers: a string column per key, then Uri, ETag and Size (no warehouse
        version: a remote read is not pinned to one)."""
        table = self.catalog.get_table(
            DatabaseName=DatabaseName,
            Name=TableName,
            TransactionId=TransactionId,
            QueryAsOfTime=QueryAsOfTime,
        )["Table"]
        keys = [(k["Name"], k.get("Type", "string")) for k in table.get("PartitionKeys") or []]
        text = partition_predicate(SparkFilters or [], keys)
        rows: list[tuple[list[str], dict[str, Any]]] = []
        if text != "":
            args: dict[str, Any] = {
                "DatabaseName": DatabaseName,
                "TableName": TableName,
                "TransactionId": TransactionId,
                "QueryAsOfTime": QueryAsOfTime,
                "PartitionPredicate": text,
                "MaxResults": PAGE,
            }
            for partition in every(lambda **a: self._call("get_table_objects", **a), "Objects", **args):
                rows += [(list(partition.get("PartitionValues") or []), o) for o in partition["Objects"]]
        columns = [pa.array([v[i] for v, _ in rows], pa.string()) for i in range(len(keys))]
        return pa.table(
            [
                *columns,
                pa.array([o["Uri"] for _, o in rows], pa.string()),
                pa.array([o.get("ETag") for _, o in rows], pa.string()),
                pa.array([o.get("Size") for _, o in rows], pa.int64()),
            ],
            names=[k for k, _ in keys] + ["Uri", "ETag", "Size"],
        )
