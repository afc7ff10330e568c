"""Tags of the catalog's resources (the catalog, its databases and tables), named by Glue ARNs.

A resource's tags are one record (kind ``tags``) keyed by the resource: ``("catalog",)``,
``("database", db)`` or ``("table", db, table)``. They go with their resource: deleting a database or a
table deletes its tags (databases.py and tables.py call drop_changes).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from botocore.exceptions import UnknownRegionError
from botocore.loaders import create_loader
from botocore.regions import EndpointResolver

from gluecat.catalog.context import Context, require_database, require_table
from gluecat.errors import EntityNotFoundException, InvalidInputException
from gluecat.store.snapshot import Changes, Key, Snapshot

TAGS = "tags"
MAX_TAGS = 50  # Glue's limit of tags a resource
_ARN = re.compile(r"arn:(aws[a-z-]*):glue:([^:]*):([^:]*):(.+)")


def resource_key(ctx: Context, region: str, arn: str) -> Key:
    """The resource an ARN of this catalog names: arn:<partition>:glue:<region>:<catalog id>:catalog,
    ...:database/<db> or ...:table/<db>/<table>, the partition being the region's (aws for us-east-1,
    aws-cn for cn-north-1, ...); names fold to lowercase, as Glue stores them."""
    m = _ARN.fullmatch(arn)
    if m is None:
        raise InvalidInputException(
            f"ResourceArn: {arn[:200]!r} is not a Glue ARN (arn:aws:glue:<region>:<account>:...)"
        )
    arn_partition, arn_region, account, resource = m.groups()
    partition = _partition(region)
    if arn_region != region or account != ctx.catalog_id or arn_partition != (partition or arn_partition):
        raise EntityNotFoundException(
            f"Resource {arn} not found: this catalog is {ctx.catalog_id} in {region}"
            + (f" (partition {partition})" if partition else "")
        )
    kind, _, path = resource.partition("/")
    parts = path.split("/") if path else []
    if resource == "catalog":
        return ("catalog",)
    if kind == "database" and len(parts) == 1 and parts[0]:
        return ("database", parts[0].lower())
    if kind == "table" and len(parts) == 2 and all(parts):
        return ("table", parts[0].lower(), parts[1].lower())
    raise EntityNotFoundException(
        f"Resource {arn} not found: gluecat tags the catalog, its databases and its tables "
        "(catalog, database/<name>, table/<database>/<name>)"
    )


@functools.cache
def _partition(region: str) -> str | None:
    """The AWS partition of a region (aws, aws-cn, aws-us-gov, ...) as botocore's endpoint data says;
    None for a region it does not know (a made-up local one), whose ARNs may name any partition."""
    resolver = EndpointResolver(create_loader().load_data("endpoints"))
    try:
        return str(resolver.get_partition_for_region(region))
    except UnknownRegionError:
        return None


def _require(snap: Snapshot, key: Key) -> None:
    if key[0] == "database":
        require_database(snap, key[1])
    elif key[0] == "table":
        require_table(snap, key[1], key[2])


def put_changes(
    changes: Changes, key: Key, current: dict[str, str] | None, tags: dict[str, str], field: str = "TagsToAdd"
) -> None:
    """Add ``tags`` (the request's ``field``) to a resource's ``current`` ones in ``changes``."""
    for name in tags:
        if name.lower().startswith("aws:"):
            raise InvalidInputException(f"{field} key {name!r}: keys starting with aws: are reserved for AWS")
    merged = {**(current or {}), **tags}
    if len(merged) > MAX_TAGS:
        raise InvalidInputException(
            f"a resource may have at most {MAX_TAGS} tags; this one would have {len(merged)}"
        )
    if merged:
        changes.put(TAGS, key, merged)


def tag_resource(ctx: Context, key: Key, tags: dict[str, str]) -> None:
    def build(snap: Snapshot) -> tuple[Changes, None]:
        _require(snap, key)
        changes = Changes()
        put_changes(changes, key, snap.get(TAGS, key), tags)
        return changes, None

    ctx.store.commit("TagResource", build)


def untag_resource(ctx: Context, key: Key, names: list[str]) -> None:
    def build(snap: Snapshot) -> tuple[Changes, None]:
        _require(snap, key)
        current = dict(snap.get(TAGS, key) or {})
        changes = Changes()
        for name in names:
            current.pop(name, None)
        if current:
            changes.put(TAGS, key, current)
        elif snap.get(TAGS, key) is not None:
            changes.delete(TAGS, key)
        return changes, None

    ctx.store.commit("UntagResource", build)


def get_tags(ctx: Context, key: Key) -> dict[str, Any]:
    snap = ctx.snapshot()
    _require(snap, key)
    return {"Tags": dict(snap.get(TAGS, key) or {})}


def drop_changes(snap: Snapshot, key: Key, changes: Changes) -> None:
    """Add to ``changes`` the removal of a resource's tags (a database's or a table's, as it goes)."""
    if snap.get(TAGS, key) is not None:
        changes.delete(TAGS, key)
