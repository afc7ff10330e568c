"""Glue tables and their versions: create, update (archiving the previous version), read, list, delete.

Every version of a table, the current one included, is kept as a TABLE_VERSION record keyed by its
VersionId (a decimal integer string, incremented by one per update), so GetTableVersion(s) read them
directly; SkipArchive drops the version being replaced instead of keeping it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import re2

from gluecat import locations
from gluecat.catalog import access, grants, iceberg, indexes, objects, paging, partitions, statistics
from gluecat.catalog.context import (
    COLUMN_STATISTICS,
    DATABASE,
    PARTITION_COLUMN_STATISTICS,
    PARTITION_INDEX,
    TABLE,
    TABLE_VERSION,
    Context,
    copy_doc,
    missing_table,
    partition_key_count,
    records_unchanged_since,
    require_database,
    require_table,
    require_table_at,
)
from gluecat.catalog.removals import drop_table_changes, reshaped_rows_changes
from gluecat.catalog.staged_writes import staged_table_write
from gluecat.errors import (
    AlreadyExistsException,
    ConcurrentModificationException,
    EntityNotFoundException,
    InvalidInputException,
    ResourceNotReadyException,
    ResourceNumberLimitExceededException,
)
from gluecat.store.snapshot import Changes, Key, Snapshot


def _version_key(database: str, name: str, version_id: str) -> tuple[str, str, str]:
    # Zero-padded so that the store's key order is the numeric order of versions.
    return (database, name, f"{int(version_id):012d}")


def table_doc(
    ctx: Context,
    database: str,
    table_input: dict[str, Any],
    *,
    version_id: str,
    create_time: datetime,
    created_by: str | None,
    now: datetime,
) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "PartitionKeys": [],
        **table_input,
        "DatabaseName": database,
        "CreateTime": create_time,
        "UpdateTime": now,
        "IsRegisteredWithLakeFormation": table_input.get("TableType") == "GOVERNED",
        "CatalogId": ctx.catalog_id,
        "VersionId": version_id,
    }
    if created_by is not None:
        doc["CreatedBy"] = created_by
    return doc


def _write(
    ctx: Context,
    operation: str,
    transaction_id: str | None,
    key: tuple[str, str],
    build: Callable[[Snapshot], Changes],
    *,
    drop: bool = False,
) -> None:
    """Commit the changes ``build`` makes against the latest state; in a transaction, stage those it
    makes against the transaction's state instead (gluecat.catalog.transactions)."""
    if transaction_id is None:
        ctx.store.commit(operation, lambda snap: (build(snap), None))
        return
    txs = ctx.transactions()

    def stage(tx: Any) -> tuple[list[dict[str, Any]], None]:
        snap = txs.overlay(tx)
        return [staged_table_write(snap, key, build(snap), drop=drop)], None

    txs.stage(transaction_id, stage)


def create_table(
    ctx: Context,
    database: str,
    table_input: dict[str, Any],
    index_descriptors: list[dict[str, Any]] | None = None,
    open_table_format: dict[str, Any] | None = None,
    transaction_id: str | None = None,
) -> None:
    """CreateTable; with ``open_table_format``, an Iceberg table whose first metadata file is written
    (after the database and the name are checked) before the table is committed. In a transaction
    (``transaction_id``) it is staged: it exists for the transaction, and for others once it commits."""
    name = table_input["Name"]
    if open_table_format is not None:
        snap = ctx.read_snapshot(None, transaction_id)
        db = require_database(snap, database)
        if snap.get(TABLE, (database, name)) is not None:
            raise AlreadyExistsException("Table already exists.")
        base = db.get("LocationUri")
        table_input = iceberg.registered(
            table_input, open_table_format, _default_location(base, database, name) if base else None
        )

    def build(snap: Snapshot) -> Changes:
        changes = Changes()
        _new_table(ctx, snap, database, table_input, changes)
        grants.created_table(snap, require_database(snap, database), name, changes)
        for desc in index_descriptors or []:
            changes.put(PARTITION_INDEX, (database, name, desc["IndexName"]), desc)
        return changes

    _write(ctx, "CreateTable", transaction_id, (database, name), build)


def _default_location(database_location: str, database: str, name: str) -> str:
    """A new table's folder in its database's, where a table made without a location gets one."""
    why = locations.folder_name_problem(name)
    if why is not None:
        raise InvalidInputException(
            f"TableInput.Name: table {database}.{name} has no folder in its database's LocationUri: "
            f"{name!r} cannot be the name of a folder ({why}); give it a StorageDescriptor.Location"
        )
    return f"{database_location.rstrip('/')}/{name}"


def _new_table(
    ctx: Context,
    snap: Snapshot,
    database: str,
    table_input: dict[str, Any],
    changes: Changes,
    *,
    replacing_one: bool = False,
) -> dict[str, Any]:
    """Add to ``changes`` a new table (VersionId 1) made from ``table_input`` in ``database``, which must
    exist, have no table of its name, and room for one more (``replacing_one``: a table of it goes in the
    same commit); the new table's document."""
    name = table_input["Name"]
    require_database(snap, database)
    if snap.get(TABLE, (database, name)) is not None:
        raise AlreadyExistsException("Table already exists.")
    limit = ctx.limits.tables_per_database
    if not replacing_one and len(snap.keys_with_prefix(TABLE, (database,))) >= limit:
        raise ResourceNumberLimitExceededException(
            f"database {database} already has {limit} tables, its limit"
        )
    now = datetime.now(UTC)
    doc = table_doc(
        ctx,
        database,
        table_input,
        version_id="1",
        create_time=now,
        created_by=access.creator() or ctx.principal,
        now=now,
    )
    changes.put(TABLE, (database, name), doc)
    changes.put(TABLE_VERSION, _version_key(database, name, "1"), doc)
    return doc


def require_same_table(snap: Snapshot, read: dict[str, Any]) -> dict[str, Any]:
    """The table ``read`` names, if it is still the one read: the same VersionId of the same table. A
    table dropped and made again under its name starts again at VersionId 1, so its CreateTime tells it
    apart; otherwise ConcurrentModificationException."""
    database, name = read["DatabaseName"], read["Name"]
    table = require_table(snap, database, name)
    if table["CreateTime"] != read["CreateTime"]:
        raise ConcurrentModificationException(
            f"Table {database}.{name} was dropped and made again (at {table['CreateTime'].isoformat()}) "
            "since it was read"
        )
    if table["VersionId"] != read["VersionId"]:
        raise ConcurrentModificationException(
            f"Table {database}.{name} is at VersionId {table['VersionId']}, not {read['VersionId']}: "
            "it was updated by someone else since it was read"
        )
    return table


def update_table(
    ctx: Context,
    database: str,
    table_input: dict[str, Any],
    *,
    skip_archive: bool,
    version_id: str | None,
    transaction_id: str | None = None,
    read: dict[str, Any] | None = None,
    drop_column_statistics: bool = False,
) -> None:
    """UpdateTable; with ``read`` (a table as GetTable returned it), only of that table as it was read
    (require_same_table); with ``drop_column_statistics``, the table's column statistics go in the same
    commit."""
    name = table_input["Name"]

    def build(snap: Snapshot) -> Changes:
        old = require_table(snap, database, name) if read is None else require_same_table(snap, read)
        if version_id is not None and _parse_version_id(version_id) != int(old["VersionId"]):
            raise ConcurrentModificationException(
                f"Table {database}.{name} is at VersionId {old['VersionId']}, not {version_id}: "
                "it was updated by someone else"
            )
        indexes.check_table_update(ctx, snap, old, table_input)
        objects.check_type_change(old, table_input)
        objects.check_key_change(old, table_input, lambda: _holds_objects(ctx, snap, old, transaction_id))
        new_version = str(int(old["VersionId"]) + 1)
        versions = snap.keys_with_prefix(TABLE_VERSION, (database, name))
        changes = Changes()
        if skip_archive:
            changes.delete(TABLE_VERSION, _version_key(database, name, old["VersionId"]))
        elif len(versions) >= ctx.limits.versions_per_table:
            raise ResourceNumberLimitExceededException(
                f"table {database}.{name} already has {ctx.limits.versions_per_table} versions, its limit; "
                "delete old versions or update with SkipArchive"
            )
        doc = table_doc(
            ctx,
            database,
            table_input,
            version_id=new_version,
            create_time=old["CreateTime"],
            created_by=old.get("CreatedBy"),
            now=datetime.now(UTC),
        )
        changes.put(TABLE, (database, name), doc)
        changes.put(TABLE_VERSION, _version_key(database, name, new_version), doc)
        partitions.statistics_outdated_by_table_update(ctx, snap, old, doc, changes)
        if drop_column_statistics:
            for key in snap.keys_with_prefix(COLUMN_STATISTICS, (database, name)):
                changes.delete(COLUMN_STATISTICS, key)
        reshaped_rows_changes(snap, old, doc, changes)
        return changes

    _write(ctx, "UpdateTable", transaction_id, (database, name), build)


def _holds_objects(ctx: Context, snap: Snapshot, table: dict[str, Any], transaction_id: str | None) -> bool:
    """Whether ``table`` holds objects at ``snap``, with the transaction's own object writes."""
    n_keys = partition_key_count(table)
    view = objects.view_of(ctx, snap, table)
    if transaction_id is not None:
        txs = ctx.transactions()
        own = txs.own_objects(txs.get(transaction_id), (table["DatabaseName"], table["Name"]))
        view = objects.with_writes(view, n_keys, own, f"transaction {transaction_id}")
    return view.count() > 0


def delete_table(
    ctx: Context,
    database: str,
    name: str,
    transaction_id: str | None = None,
    read: dict[str, Any] | None = None,
) -> None:
    """DeleteTable; with ``read``, only of that table as it was read (require_same_table)."""

    def build(snap: Snapshot) -> Changes:
        require_table(snap, database, name) if read is None else require_same_table(snap, read)
        changes = Changes()
        drop_table_changes(snap, database, name, changes)
        return changes

    _write(ctx, "DeleteTable", transaction_id, (database, name), build, drop=True)


def rename_table(
    ctx: Context,
    read: dict[str, Any],
    new_database: str,
    table_input: dict[str, Any],
    relocate: Callable[[dict[str, Any]], dict[str, Any]],
) -> None:
    """Glue has no rename: in one commit, the table ``read`` (still as it was read, require_same_table)
    is made again as ``table_input`` in ``new_database`` with its partitions (their StorageDescriptors
    through ``relocate``), partition indexes and column statistics as they are at the commit, and the old
    one dropped. One
    commit, so no update of the old table made meanwhile is lost with it and no reader sees both or
    neither."""
    database, name, new_name = read["DatabaseName"], read["Name"], table_input["Name"]

    def build(snap: Snapshot) -> tuple[Changes, None]:
        old = require_same_table(snap, read)
        if objects.is_governed(old):
            raise InvalidInputException(
                f"Table {database}.{name} is governed: its objects belong to its name's transactions "
                "and cannot be renamed with it"
            )
        changes = Changes()
        doc = _new_table(
            ctx, snap, new_database, table_input, changes, replacing_one=new_database == database
        )
        drop_table_changes(snap, database, name, changes)  # refuses while an index is CREATING
        for key in snap.keys_with_prefix(PARTITION_INDEX, (database, name)):
            desc = snap.get(PARTITION_INDEX, key)
            if desc is not None and desc.get("IndexStatus") == "ACTIVE":
                changes.put(PARTITION_INDEX, (new_database, new_name, key[2]), desc)
        partitions.copy_partitions(ctx, snap, old, doc, relocate, changes)
        _copy_statistics(snap, (database, name), (new_database, new_name), doc, changes)
        grants.renamed_table(snap, (database, name), (new_database, new_name), changes)
        return changes, None

    ctx.store.commit("RenameTable", build)
    ctx.rows.after_write((new_database, new_name))


def _copy_statistics(snap: Snapshot, old: Key, new: Key, doc: dict[str, Any], changes: Changes) -> None:
    """Add to ``changes`` the column statistics of table ``old`` (those of its columns that ``doc``, the
    new table, has) and of its partitions, as ``new``'s: the partitions keep their values."""
    columns = statistics.columns_of(doc)
    for key in snap.keys_with_prefix(COLUMN_STATISTICS, old):
        if key[-1] in columns:
            changes.put(COLUMN_STATISTICS, (*new, *key[len(old) :]), snap.get(COLUMN_STATISTICS, key))
    for key in snap.keys_with_prefix(PARTITION_COLUMN_STATISTICS, old):
        changes.put(
            PARTITION_COLUMN_STATISTICS, (*new, *key[len(old) :]), snap.get(PARTITION_COLUMN_STATISTICS, key)
        )


def batch_delete_table(
    ctx: Context, database: str, names: list[str], transaction_id: str | None = None
) -> dict[str, Any]:
    def build(snap: Snapshot) -> tuple[Changes, dict[str, Any], list[str]]:
        require_database(snap, database)
        changes = Changes()
        errors = []
        dropped: list[str] = []
        seen: set[str] = set()
        for name in names:
            if name in seen:
                continue
            seen.add(name)
            try:
                require_table(snap, database, name)
                drop_table_changes(snap, database, name, changes)
                dropped.append(name)
            except (EntityNotFoundException, ResourceNotReadyException) as e:
                errors.append(
                    {"TableName": name, "ErrorDetail": {"ErrorCode": e.code, "ErrorMessage": e.message}}
                )
        return changes, {"Errors": errors}, dropped

    if transaction_id is None:
        return ctx.store.commit("BatchDeleteTable", lambda snap: build(snap)[:2])
    txs = ctx.transactions()

    def stage(tx: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        snap = txs.overlay(tx)
        _, result, dropped = build(snap)
        return [staged_table_write(snap, (database, n), Changes(), drop=True) for n in dropped], result

    return txs.stage(transaction_id, stage)


def get_table(
    ctx: Context, database: str, name: str, as_of: datetime | None, transaction_id: str | None
) -> Any:
    view = access.current()
    if view is not None and not view.table_visible(database, name):
        raise EntityNotFoundException(missing_table(database, name))
    snap = ctx.read_snapshot(as_of, transaction_id, (database, name))
    return {"Table": access.project_table(copy_doc(require_table_at(ctx, snap, database, name, as_of)))}


def _name_pattern(expression: str) -> Callable[[str], bool]:
    """GetTables' Expression: a regular expression matched against the whole name; as in Hive and the
    Glue console, a '*' not preceded by '.' is a wildcard ("sales*" means "sales.*").

    It is compiled by RE2, whose matching time is linear in the name whatever the expression (Python's
    backtracking engine takes seconds on ``(.+)+!``), so RE2's syntax applies: no back-references or
    look-around, which are refused as InvalidInputException."""
    pattern = re.sub(r"(?<!\.)\*", ".*", expression)
    options = re2.Options()
    options.case_sensitive = False
    options.log_errors = False
    try:
        compiled = re2.compile(pattern, options)
    except re2.error as e:
        detail = e.args[0].decode(errors="replace") if e.args and isinstance(e.args[0], bytes) else str(e)
        raise InvalidInputException(
            f"Expression: not a regular expression RE2 accepts ({detail}); "
            "back-references and look-around are not supported (matching must take linear time)"
        ) from e
    return lambda name: compiled.fullmatch(name) is not None


def tables_unchanged_since(ctx: Context, database: str, version: int) -> int | None:
    """The latest warehouse version, if no commit after ``version`` made, changed or dropped the database
    or any table of it; else None (context.records_unchanged_since)."""
    return records_unchanged_since(
        ctx, version, lambda kind, key: kind in (TABLE, DATABASE) and key[0] == database
    )


def get_tables(
    ctx: Context,
    database: str,
    expression: str | None,
    next_token: str | None,
    max_results: int | None,
    as_of: datetime | None,
    transaction_id: str | None,
) -> dict[str, Any]:
    snap = ctx.read_snapshot(as_of, transaction_id)
    db = require_database(snap, database)
    query = paging.query_digest("GetTables", database, db["CreateTime"], expression, transaction_id, as_of)
    after = paging.read_token(ctx.store.secret, query, next_token)
    pattern = _name_pattern(expression) if expression else None
    limit = max_results or 100
    page: list[Any] = []
    more = False
    view = access.current()
    for key in snap.keys_with_prefix(TABLE, (database,)):
        if after is not None and key[1] <= after:
            continue
        if pattern is not None and not pattern(key[1]):
            continue
        if view is not None and not view.table_visible(database, key[1]):
            continue
        if len(page) == limit:
            more = True
            break
        page.append(snap.get(TABLE, key))
    out: dict[str, Any] = {"TableList": [access.project_table(copy_doc(t)) for t in page]}
    if more:
        out["NextToken"] = paging.make_token(ctx.store.secret, query, page[-1]["Name"])
    return out


def _parse_version_id(version_id: str, field: str = "VersionId") -> int:
    # ASCII digits only: str.isdigit() also takes '²' (which int() refuses) and '١' (which int() reads
    # as 1), so either would crash the call or name another version.
    if not (version_id.isascii() and version_id.isdigit()):
        raise InvalidInputException(f"{field}: {version_id!r} is not a version number (a decimal integer)")
    return int(version_id)


def get_table_version(ctx: Context, database: str, name: str, version_id: str | None) -> dict[str, Any]:
    snap = ctx.snapshot(table=(database, name))
    table = require_table(snap, database, name)
    vid = table["VersionId"] if version_id is None else str(_parse_version_id(version_id))
    doc = snap.get(TABLE_VERSION, _version_key(database, name, vid))
    if doc is None:
        raise EntityNotFoundException("Version not found.")
    return {"TableVersion": {"Table": access.project_table(copy_doc(doc)), "VersionId": vid}}


def get_table_versions(
    ctx: Context, database: str, name: str, next_token: str | None, max_results: int | None
) -> dict[str, Any]:
    snap = ctx.snapshot(table=(database, name))
    table = require_table(snap, database, name)
    query = paging.query_digest("GetTableVersions", database, name, table["CreateTime"])
    after = paging.read_token(ctx.store.secret, query, next_token)
    keys = [
        k for k in snap.keys_with_prefix(TABLE_VERSION, (database, name)) if after is None or k[2] > after
    ]
    limit = max_results or 100
    page = keys[:limit]
    out: dict[str, Any] = {
        "TableVersions": [
            {"Table": access.project_table(copy_doc(snap.get(TABLE_VERSION, k))), "VersionId": str(int(k[2]))}
            for k in page
        ]
    }
    if len(keys) > limit:
        out["NextToken"] = paging.make_token(ctx.store.secret, query, page[-1][2])
    return out


def _version_deletion(snap: Snapshot, database: str, name: str, version_id: str, changes: Changes) -> None:
    table = require_table(snap, database, name)
    vid = str(_parse_version_id(version_id))
    key = _version_key(database, name, vid)
    if snap.get(TABLE_VERSION, key) is None:
        raise EntityNotFoundException("Version not found.")
    if vid == table["VersionId"]:
        raise InvalidInputException(
            f"VersionId: {vid} is the current version of {database}.{name} and cannot be deleted"
        )
    changes.delete(TABLE_VERSION, key)


def delete_table_version(ctx: Context, database: str, name: str, version_id: str) -> None:
    def build(snap: Snapshot) -> tuple[Changes, None]:
        changes = Changes()
        _version_deletion(snap, database, name, version_id, changes)
        return changes, None

    ctx.store.commit("DeleteTableVersion", build, table=(database, name))


def batch_delete_table_version(
    ctx: Context, database: str, name: str, version_ids: list[str]
) -> dict[str, Any]:
    def build(snap: Snapshot) -> tuple[Changes, dict[str, Any]]:
        require_table(snap, database, name)
        changes = Changes()
        errors = []
        for vid in dict.fromkeys(version_ids):
            try:
                _version_deletion(snap, database, name, vid, changes)
            except (EntityNotFoundException, InvalidInputException) as e:
                errors.append(
                    {
                        "TableName": name,
                        "VersionId": vid,
                        "ErrorDetail": {"ErrorCode": e.code, "ErrorMessage": e.message},
                    }
                )
        return changes, {"Errors": errors}

    return ctx.store.commit("BatchDeleteTableVersion", build, table=(database, name))
