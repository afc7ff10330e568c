"""Data locations registered with Lake Formation (RegisterResource): records of the root log (kind
``lf_location``, key ``(uri,)``). A database or table whose location is inside a registered location
may be made or moved there only by callers with DATA_LOCATION_ACCESS on it (gluecat/serving/
permissions.py checks that); grants of DATA_LOCATION_ACCESS name registered locations."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from gluecat.catalog import paging
from gluecat.catalog.context import Context
from gluecat.catalog.grants import LOCATION, location_of
from gluecat.errors import AlreadyExistsException, EntityNotFoundException
from gluecat.store.snapshot import Changes, Snapshot


def register(ctx: Context, arn: str, details: dict[str, Any]) -> None:
    path = location_of(arn, "ResourceArn")

    def build(snap: Snapshot) -> tuple[Changes, None]:
        if snap.get(LOCATION, (path,)) is not None:
            raise AlreadyExistsException(f"Resource {arn} is already registered")
        changes = Changes()
        changes.put(
            LOCATION,
            (path,),
            {
                "ResourceArn": arn,
                **{k: v for k, v in details.items() if v is not None},
                "LastModified": datetime.now(UTC),
            },
        )
        return changes, None

    ctx.store.commit("RegisterResource", build)


def deregister(ctx: Context, arn: str) -> None:
    path = location_of(arn, "ResourceArn")

    def build(snap: Snapshot) -> tuple[Changes, None]:
        if snap.get(LOCATION, (path,)) is None:
            raise EntityNotFoundException(f"Resource {arn} is not registered")
        changes = Changes()
        changes.delete(LOCATION, (path,))
        return changes, None

    ctx.store.commit("DeregisterResource", build)


def _resource_info(doc: dict[str, Any]) -> dict[str, Any]:
    return {
        k: v
        for k, v in doc.items()
        if k
        in (
            "ResourceArn",
            "RoleArn",
            "LastModified",
            "WithFederation",
            "HybridAccessEnabled",
            "WithPrivilegedAccess",
        )
    }


def describe_resource(ctx: Context, arn: str) -> dict[str, Any]:
    doc = ctx.snapshot().get(LOCATION, (location_of(arn, "ResourceArn"),))
    if doc is None:
        raise EntityNotFoundException(f"Resource {arn} is not registered")
    return {"ResourceInfo": _resource_info(doc)}


def list_resources(ctx: Context, next_token: str | None, max_results: int | None) -> dict[str, Any]:
    snap = ctx.snapshot()
    query = paging.query_digest("ListResources")
    after = paging.read_token(ctx.store.secret, query, next_token)
    keys = [k for k in snap.sorted_keys(LOCATION) if after is None or k[0] > after]
    limit = max_results or 100
    out: dict[str, Any] = {
        "ResourceInfoList": [_resource_info(snap.get(LOCATION, k) or {}) for k in keys[:limit]]
    }
    if len(keys) > limit:
        out["NextToken"] = paging.make_token(ctx.store.secret, query, keys[limit - 1][0])
    return out
