"""Glue databases: create, read, list, update, delete (with everything inside them)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from gluecat.catalog import access, grants, paging
from gluecat.catalog.context import (
    DATABASE,
    TABLE,
    Context,
    copy_doc,
    missing_database,
    records_unchanged_since,
    require_database,
)
from gluecat.catalog.removals import drop_table_changes
from gluecat.catalog.tags import drop_changes, put_changes
from gluecat.errors import (
    AlreadyExistsException,
    EntityNotFoundException,
    InvalidInputException,
    ResourceNumberLimitExceededException,
)
from gluecat.store.snapshot import Changes, Snapshot


def _database_doc(
    ctx: Context, database_input: dict[str, Any], create_time: datetime, table_defaults: list[dict[str, Any]]
) -> dict[str, Any]:
    """The stored Database: the input, plus what Glue adds (an empty Parameters, and the permissions its
    new tables grant: Lake Formation's settings' when the database is made, unless the input names them)."""
    doc = {"Parameters": {}, "CreateTableDefaultPermissions": table_defaults, **database_input}
    doc.update({"CreateTime": create_time, "CatalogId": ctx.catalog_id})
    return doc


def create_database(ctx: Context, database_input: dict[str, Any], tags: dict[str, str] | None = None) -> None:
    name = database_input["Name"]

    def build(snap: Snapshot) -> tuple[Changes, None]:
        if snap.get(DATABASE, (name,)) is not None:
            raise AlreadyExistsException("Database already exists.")
        if len(snap.records(DATABASE)) >= ctx.limits.databases:
            raise ResourceNumberLimitExceededException(
                f"the catalog already has {ctx.limits.databases} databases, its limit"
            )
        changes = Changes()
        defaults = grants.database_defaults(snap)
        changes.put(DATABASE, (name,), _database_doc(ctx, database_input, datetime.now(UTC), defaults))
        grants.created_database(snap, name, changes)
        if tags:
            put_changes(changes, ("database", name), None, tags, "Tags")
        return changes, None

    ctx.store.commit("CreateDatabase", build)


def get_database(ctx: Context, name: str) -> dict[str, Any]:
    snap = ctx.snapshot()
    view = access.current()
    if view is not None and not view.database_visible(name):
        raise EntityNotFoundException(missing_database(name))
    return {"Database": copy_doc(require_database(snap, name))}


def get_databases(ctx: Context, next_token: str | None, max_results: int | None) -> dict[str, Any]:
    snap = ctx.snapshot()
    query = paging.query_digest("GetDatabases")
    after = paging.read_token(ctx.store.secret, query, next_token)
    keys = snap.sorted_keys(DATABASE)
    view = access.current()
    names = [
        k[0]
        for k in keys
        if (after is None or k[0] > after) and (view is None or view.database_visible(k[0]))
    ]
    limit = max_results or 100
    page = names[:limit]
    out: dict[str, Any] = {"DatabaseList": [copy_doc(snap.get(DATABASE, (n,))) for n in page]}
    if len(names) > limit:
        out["NextToken"] = paging.make_token(ctx.store.secret, query, page[-1])
    return out


def databases_unchanged_since(ctx: Context, version: int) -> int | None:
    """The latest warehouse version, if no commit after ``version`` made, changed or dropped a database;
    else None (context.records_unchanged_since)."""
    return records_unchanged_since(ctx, version, lambda kind, _: kind == DATABASE)


def update_database(ctx: Context, name: str, database_input: dict[str, Any]) -> None:
    def build(snap: Snapshot) -> tuple[Changes, None]:
        old = require_database(snap, name)
        new_name = database_input["Name"]
        if new_name != name:
            # Glue cannot rename a database: the input's name must be the database's own.
            raise InvalidInputException(
                f"DatabaseInput.Name: {new_name!r} differs from Name {name!r}; databases cannot be renamed"
            )
        changes = Changes()
        # The permissions new tables get stay the database's unless the input names others.
        defaults = old.get("CreateTableDefaultPermissions") or []
        changes.put(DATABASE, (name,), _database_doc(ctx, database_input, old["CreateTime"], defaults))
        return changes, None

    ctx.store.commit("UpdateDatabase", build)


def delete_database(ctx: Context, name: str) -> None:
    """Delete a database and, as Glue does, every table in it (with their versions, partitions, ...)."""

    def build(snap: Snapshot) -> tuple[Changes, None]:
        require_database(snap, name)
        changes = Changes()
        for key in snap.keys_with_prefix(TABLE, (name,)):
            drop_table_changes(snap, key[0], key[1], changes)
        changes.delete(DATABASE, (name,))
        drop_changes(snap, ("database", name), changes)
        grants.dropped_database(snap, name, changes)
        return changes, None

    ctx.store.commit("DeleteDatabase", build)
