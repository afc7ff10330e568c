"""ListPermissions and GetEffectivePermissionsForPath: the grant records (gluecat/catalog/grants.py) in
boto3's PrincipalResourcePermissions shape, only those the caller may see."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gluecat.catalog import access, paging
from gluecat.catalog.context import DATABASE, TABLE, Context
from gluecat.catalog.grants import (
    CATALOG_RES,
    COLUMNS_RES,
    DATABASE_RES,
    GRANT,
    LOCATION_RES,
    SELECT,
    TABLE_RES,
    TABLES_RES,
    Columns,
    Target,
    all_columns,
    check_principal,
    location_of,
    normalized_location,
    parse_resource,
    resource_json,
    under,
    within,
)
from gluecat.errors import InvalidInputException
from gluecat.store.snapshot import Key, Snapshot


def _restated(snap: Snapshot, key: Key) -> Callable[[Columns], Columns]:
    """How a column grant's columns are shown to the caller: as they are, or, to a caller who may see
    only some of the table's columns, as the names of those of them it may see (an ExcludedColumnNames
    would name columns it may not)."""
    view = access.current()
    seen = view.visible_columns(key[1], key[2]) if view is not None else None
    if seen is None:
        return lambda columns: columns
    table = snap.get(TABLE, (key[1], key[2])) or {}
    names = [c["Name"].lower() for c in all_columns(table)]
    return lambda columns: Columns.of([n for n in names if columns.contains(n) and seen.contains(n)])


def _grant_rows(
    key: Key, doc: dict[str, Any], catalog_id: str, restate: Callable[[Columns], Columns] | None = None
) -> list[dict[str, Any]]:
    """A grant record as ListPermissions rows: one, or two for columns of which only some carry the grant
    option (those, and the others)."""
    principal = {"DataLakePrincipalIdentifier": key[-1]}
    resource_key = key[:-1]
    stamp: dict[str, Any] = {}
    if doc.get("LastUpdated") is not None:
        stamp["LastUpdated"] = doc["LastUpdated"]
    if doc.get("LastUpdatedBy"):
        stamp["LastUpdatedBy"] = doc["LastUpdatedBy"][:255]
    if resource_key[0] != COLUMNS_RES:
        return [
            {
                "Principal": principal,
                "Resource": resource_json(resource_key, catalog_id),
                "Permissions": list(doc.get("Permissions") or []),
                "PermissionsWithGrantOption": list(doc.get("Grantable") or []),
                **stamp,
            }
        ]
    select = Columns.from_json(doc.get("Select"))
    grantable = within(Columns.from_json(doc.get("Grantable")), select)
    parts = [(select - grantable, []), (grantable, [SELECT])]
    if restate is not None:
        parts = [(restate(columns), option) for columns, option in parts]
    return [
        {
            "Principal": principal,
            "Resource": resource_json(resource_key, catalog_id, columns),
            "Permissions": [SELECT],
            "PermissionsWithGrantOption": option,
            **stamp,
        }
        for columns, option in parts
        if not columns.is_empty()
    ]


_TYPE_KINDS = {
    "CATALOG": (CATALOG_RES,),
    "DATABASE": (DATABASE_RES,),
    "TABLE": (TABLE_RES, TABLES_RES, COLUMNS_RES),
    "DATA_LOCATION": (LOCATION_RES,),
}


def _resource_prefixes(target: Target, include_related: bool) -> list[Key]:
    key = target.key
    if key[0] in (TABLE_RES, COLUMNS_RES):
        out: list[Key] = [(TABLE_RES, key[1], key[2]), (COLUMNS_RES, key[1], key[2])]
        if include_related:
            out += [(TABLES_RES, key[1]), (DATABASE_RES, key[1])]
        return out
    if key[0] == DATABASE_RES and include_related:
        return [key, (TABLES_RES, key[1])]
    return [key]


def _visible_keys(snap: Snapshot, prefixes: list[Key] | None) -> list[Key]:
    view = access.current()
    keys = (
        snap.sorted_keys(GRANT)
        if prefixes is None
        else sorted({k for p in prefixes for k in snap.keys_with_prefix(GRANT, p) if len(k) == len(p) + 1})
    )
    if view is None:
        return keys
    return [k for k in keys if view.grants_visible(k[:-1])]


def list_permissions(
    ctx: Context,
    *,
    principal: Any,
    resource_type: str | None,
    resource: Any,
    next_token: str | None,
    max_results: int | None,
    include_related: str | None,
) -> dict[str, Any]:
    """ListPermissions: the grants the caller may see (every one, for an administrator; those on the
    resources it holds a permission with grant option on, for others), in key order, paged."""
    who = check_principal(ctx, principal, "Principal") if principal is not None else None
    target = parse_resource(ctx, resource) if resource is not None else None
    kinds = _TYPE_KINDS.get(resource_type) if resource_type is not None else None
    if resource_type is not None and kinds is None:
        raise InvalidInputException(
            f"ResourceType: gluecat keeps no {resource_type} resources ({', '.join(sorted(_TYPE_KINDS))})"
        )
    snap = ctx.snapshot()
    query = paging.query_digest("ListPermissions", who, resource_type, resource, include_related)
    after = paging.read_token(ctx.store.secret, query, next_token)
    prefixes = _resource_prefixes(target, include_related == "TRUE") if target is not None else None
    rows: list[dict[str, Any]] = []
    limit = max_results or 100
    last: list[str] | None = None
    more = False
    for key in _visible_keys(snap, prefixes):
        if after is not None and list(key) <= after:
            continue
        if who is not None and key[-1] != who:
            continue
        if kinds is not None and key[0] not in kinds:
            continue
        if len(rows) == limit:
            more = True
            break
        doc = snap.get(GRANT, key)
        if doc is None:
            continue
        restate = _restated(snap, key) if key[0] == COLUMNS_RES else None
        rows.extend(_grant_rows(key, doc, ctx.catalog_id, restate))
        last = list(key)
    out: dict[str, Any] = {"PrincipalResourcePermissions": rows}
    if more and last is not None:
        out["NextToken"] = paging.make_token(ctx.store.secret, query, last)
    return out


def effective_for_path(
    ctx: Context, arn: str, next_token: str | None, max_results: int | None
) -> dict[str, Any]:
    """GetEffectivePermissionsForPath: the grants on the databases and tables located at or under the
    path, and on the data locations that hold it."""
    path = location_of(arn, "ResourceArn")
    snap = ctx.snapshot()
    prefixes: list[Key] = []
    for (name,) in snap.sorted_keys(DATABASE):
        db = snap.get(DATABASE, (name,)) or {}
        if db.get("LocationUri") and under(normalized_location(db["LocationUri"]), path):
            prefixes.append((DATABASE_RES, name))
    for database, table in snap.sorted_keys(TABLE):
        doc = snap.get(TABLE, (database, table)) or {}
        location = (doc.get("StorageDescriptor") or {}).get("Location")
        if location and under(normalized_location(location), path):
            prefixes += [(TABLE_RES, database, table), (COLUMNS_RES, database, table)]
    for key in snap.keys_with_prefix(GRANT, (LOCATION_RES,)):
        if under(path, key[1]) or under(key[1], path):
            prefixes.append(key[:2])
    query = paging.query_digest("GetEffectivePermissionsForPath", path)
    after = paging.read_token(ctx.store.secret, query, next_token)
    keys = [k for k in _visible_keys(snap, prefixes) if after is None or list(k) > after] if prefixes else []
    limit = max_results or 100
    page = keys[:limit]
    out: dict[str, Any] = {
        "Permissions": [
            row
            for k in page
            for row in _grant_rows(
                k,
                snap.get(GRANT, k) or {},
                ctx.catalog_id,
                _restated(snap, k) if k[0] == COLUMNS_RES else None,
            )
        ]
    }
    if len(keys) > limit:
        out["NextToken"] = paging.make_token(ctx.store.secret, query, list(page[-1]))
    return out
