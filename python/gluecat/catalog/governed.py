"""Lake Formation's object operations on governed tables, in transactions: UpdateTableObjects,
GetTableObjects, DeleteObjectsOnCancel, and what a Spark job needs of them (the objects of the matching
partitions as Arrow, at a transaction or a time).

Writes are staged in their transaction (gluecat.catalog.transactions) and checked when staged against
the table's objects as they are now plus the transaction's own writes: adding a Uri that is held, or
deleting an object that is not, is InvalidInputException and stages nothing. (A write that a commit made
since the transaction started makes wrong could only belong to a transaction that cannot commit: the
commit finds the same partition changed since, and refuses it; it is ConcurrentModificationException, as
a write to a table dropped and made again since the start is.)

Reads see the transaction's start state plus its own writes (TransactionId of an ACTIVE transaction),
the state its commit made (of a COMMITTED one), the state as of a time (QueryAsOfTime), or the latest.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pyarrow as pa

from gluecat import locations
from gluecat.catalog import access, indexes, paging
from gluecat.catalog import objects as obj
from gluecat.catalog.context import TABLE, Context, partition_key_count, require_table_at
from gluecat.catalog.partitions import plan_query
from gluecat.catalog.rows.view import TableView
from gluecat.catalog.staged_writes import staged_object_write
from gluecat.catalog.transactions import (
    ACTIVE,
    COMMIT_IN_PROGRESS,
    Transaction,
    now_us,
)
from gluecat.errors import ConcurrentModificationException, InvalidInputException
from gluecat.store import layout
from gluecat.store.snapshot import Key, Snapshot


def _wrote_definition(tx: Transaction, key: Key) -> bool:
    return any(w["w"] == "table" and tuple(w["table"]) == key for w in tx.writes)


def update_table_objects(
    ctx: Context, database: str, name: str, transaction_id: str, operations: list[dict[str, Any]]
) -> None:
    """UpdateTableObjects: the writes, checked together, staged whole in the transaction or not at all."""
    txs = ctx.transactions()

    def stage(tx: Transaction) -> tuple[list[dict[str, Any]], None]:
        latest, state = txs.writing_state(tx)
        table = obj.require_governed(state, database, name)
        key = (database, name)
        overlay = txs.overlay(tx)
        _check_same_table(tx, overlay.get(TABLE, key), table)
        writes = obj.parse_writes(table, operations)
        own = txs.own_objects(tx, key)
        n_keys = partition_key_count(table)
        now = txs.objects_now(latest, state, table, own_definition=_wrote_definition(tx, key))

        def seen() -> TableView:
            return obj.with_writes(obj.view_of(ctx, overlay, table), n_keys, own, f"transaction {tx.id}")

        try:
            obj.check_writes(obj.with_writes(now, n_keys, own, f"transaction {tx.id}"), writes, table)
        except InvalidInputException as e:
            # Writes right as the transaction reads the table, wrong now: a commit since its start
            # changed those objects (an overwrite deleting what that commit deleted already).
            obj.check_writes(seen(), writes, table)  # wrong in its own view too: the caller's mistake
            raise ConcurrentModificationException(
                f"{e.message}: a transaction committed since transaction {tx.id} started changed them"
            ) from e
        rows = obj.rows_key(database, name)
        if overlay.table_segments(rows) != state.table_segments(rows):
            # Right now, wrong as the transaction reads the table: an add of a Uri that a commit since
            # deleted from another partition would show the transaction the Uri twice.
            try:
                obj.check_writes(seen(), writes, table)
            except InvalidInputException as e:
                raise ConcurrentModificationException(
                    f"{e.message} as transaction {tx.id} reads it: a transaction committed since it "
                    "started changed them"
                ) from e
        return [staged_object_write(table, writes)], None

    txs.stage(transaction_id, stage)


def _check_same_table(tx: Transaction, started: dict[str, Any] | None, table: dict[str, Any]) -> None:
    """Objects go to the table the transaction reads: one dropped and made again under its name since it
    started is another table, whose objects would be written from a state that never held it."""
    if started is not None and started["CreateTime"] != table["CreateTime"]:
        raise ConcurrentModificationException(
            f"Table {table['Name']} in database {table['DatabaseName']} was deleted and made again since "
            f"transaction {tx.id} started: its objects cannot be written in it"
        )


def delete_objects_on_cancel(
    ctx: Context, database: str, name: str, transaction_id: str, objects: list[dict[str, Any]]
) -> None:
    """DeleteObjectsOnCancel: files the transaction will write, to delete if it is canceled or aborted."""
    txs = ctx.transactions()

    def check(tx: Transaction) -> None:
        _, state = txs.writing_state(tx)
        table = obj.require_governed(state, database, name)
        for o in objects:
            _check_deletable(ctx, state, table, o["Uri"])

    txs.on_cancel(transaction_id, (database, name), [(o["Uri"], o.get("ETag")) for o in objects], check)


def _check_deletable(ctx: Context, state: Snapshot, table: dict[str, Any], uri: str) -> None:
    """A file a cancel may delete lies in the table's own folder, in no other table's and not among the
    catalog's own files: a caller cannot have anything else deleted, whatever the spelling of its Uri
    (``..``, ``%2e``, a symbolic link, ``file:`` or not)."""
    ident = f"{table['DatabaseName']}.{table['Name']}"
    location = (table.get("StorageDescriptor") or {}).get("Location")
    if not location:
        raise InvalidInputException(
            f"Objects: table {ident} has no StorageDescriptor.Location, so no file can be deleted for it"
        )
    key, folder = locations.canonical(uri), locations.canonical(str(location))
    if key == folder or not locations.inside(key, folder):
        raise InvalidInputException(
            f"Objects: {uri} is not in the folder of table {ident} ({location}); only files written "
            "there can be deleted on cancel"
        )
    store = locations.canonical(ctx.store.fs.uri(layout.ROOT))
    if locations.inside(key, store) or locations.inside(store, key):
        raise InvalidInputException(f"Objects: {uri} is one of the catalog's own files")
    for other, other_folder in _table_folders(state):
        if (
            other != (table["DatabaseName"], table["Name"])
            and locations.inside(other_folder, folder)
            and locations.inside(key, other_folder)
        ):
            view = access.current()  # the other table is named only to a caller who may see it
            named = view is None or view.table_visible(str(other[0]), str(other[1]))
            which = f"table {other[0]}.{other[1]}" if named else "another table"
            raise InvalidInputException(f"Objects: {uri} is in the folder of {which}, inside that of {ident}")


def _table_folders(state: Snapshot) -> list[tuple[Key, str]]:
    """Every table's folder, canonical (computed once per state)."""

    def compute() -> list[tuple[Key, str]]:
        out = []
        for key in state.records(TABLE):
            location = ((state.get(TABLE, key) or {}).get("StorageDescriptor") or {}).get("Location")
            if location:
                out.append((key, locations.canonical(str(location))))
        return out

    folders: list[tuple[Key, str]] = state.derived("gluecat.table_folders", compute)
    return folders


def _read(
    ctx: Context,
    database: str,
    name: str,
    transaction_id: str | None,
    as_of: datetime | None,
    version: int | None = None,
) -> tuple[Snapshot, dict[str, Any], TableView]:
    """The state a read sees, the governed table in it, and its objects there."""
    if version is not None:
        if transaction_id is not None or as_of is not None:
            raise InvalidInputException(
                "WarehouseVersion: cannot be specified along with TransactionId or QueryAsOfTime"
            )
        snap = ctx.store.at_version(version)
        table = obj.require_governed(snap, database, name)
        return snap, table, obj.view_of(ctx, snap, table)
    if transaction_id is None:
        snap = ctx.read_snapshot(as_of, None)
        if as_of is not None:
            require_table_at(ctx, snap, database, name, as_of)
        table = obj.require_governed(snap, database, name)
        if as_of is not None:
            _check_own_past(ctx, table, as_of)
        return snap, table, obj.view_of(ctx, snap, table)
    txs = ctx.transactions()
    ctx.read_snapshot(as_of, transaction_id)  # both given: InvalidInputException
    tx, snap = txs.read_snapshot(transaction_id)
    table = obj.require_governed(snap, database, name)
    view = obj.view_of(ctx, snap, table)
    if tx.state(now_us()) in (ACTIVE, COMMIT_IN_PROGRESS):
        own = txs.own_objects(tx, (database, name))
        view = obj.with_writes(view, partition_key_count(table), own, f"transaction {tx.id}")
    return snap, table, view


def _check_own_past(ctx: Context, then: dict[str, Any], as_of: datetime) -> None:
    """A table dropped and made again under its name has its own history (as Spark's time travel has):
    a time before it was made reaches the dropped table, whose objects are not its past. A table dropped
    and not made again can still be read as it was."""
    now = ctx.snapshot().get(TABLE, (then["DatabaseName"], then["Name"]))
    if now is not None and now["CreateTime"] != then["CreateTime"]:
        raise InvalidInputException(
            f"QueryAsOfTime: {as_of.isoformat()} is before table {then['DatabaseName']}.{then['Name']} was "
            f"made again at {now['CreateTime'].isoformat()}; the table of that name then was another one, "
            "dropped since"
        )


def get_table_objects(
    ctx: Context,
    database: str,
    name: str,
    *,
    transaction_id: str | None,
    as_of: datetime | None,
    predicate: str | None,
    max_results: int | None,
    next_token: str | None,
) -> dict[str, Any]:
    """GetTableObjects: a page of the table's objects matching the PartitionPredicate, by partition."""
    snap, table, view = _read(ctx, database, name, transaction_id, as_of)
    query = obj.plan(snap, table, predicate, indexes.planning_indexes(snap, table))
    token_query = paging.query_digest(
        "GetTableObjects",
        database,
        name,
        table["CreateTime"],
        predicate or "",
        transaction_id,
        obj.as_of_key(as_of),
    )
    return obj.page(
        ctx, view, table, query, token_query=token_query, next_token=next_token, max_results=max_results
    )


def objects_arrow(
    ctx: Context,
    database: str,
    name: str,
    *,
    expression: str | None = None,
    spark_filters: Any = None,
    transaction_id: str | None = None,
    as_of: datetime | None = None,
    version: int | None = None,
) -> pa.Table:
    """Every object whose partition matches, as Arrow (a string column per partition key, then Uri, ETag
    and Size, in partition then Uri order), at a transaction (its start and its own writes while it runs,
    its commit once it has committed), at a time, or now: what a Spark scan plans from.

    ``expression`` is a GetPartitions expression (the whole language, not only a PartitionPredicate's),
    ``spark_filters`` Spark's pushed filters as parsed by gluecat.expressions.parse_spark_filters; both are
    planned as GetPartitions plans them, partition indexes included. ``version`` reads the state right
    after that commit of the warehouse; the schema's metadata ``gluecat.warehouse_version`` says which
    commit's state was read (so that later reads of one query read the same)."""
    snap, table, view = _read(ctx, database, name, transaction_id, as_of, version)
    got = obj.objects_arrow(view, table, plan_query(snap, table, expression, spark_filters))
    return got.replace_schema_metadata({WAREHOUSE_VERSION: str(snap.version)})


WAREHOUSE_VERSION = "gluecat.warehouse_version"
"""The Arrow metadata key of objects_arrow's answer naming the warehouse version it read."""
