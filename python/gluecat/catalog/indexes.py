"""Partition index descriptors: which keys an index may have, and its status life cycle.

An index's keys are a sub-list of the table's partition keys, in any order, of the types the partition
index document allows (string, char, varchar, the integer types, date).
"""

from __future__ import annotations

import functools
import logging
import operator
import re
import time
from collections.abc import Callable
from typing import Any, cast

from gluecat.catalog import paging
from gluecat.catalog.context import (
    PARTITION_INDEX,
    TABLE,
    Context,
    base_type,
    copy_doc,
    partition_key_count,
    require_table,
    type_spelling,
)
from gluecat.errors import (
    AlreadyExistsException,
    ConflictException,
    EntityNotFoundException,
    InvalidInputException,
    ResourceNumberLimitExceededException,
)
from gluecat.expressions.types import Index, KeyType, key_type, partition_value
from gluecat.store.snapshot import Changes, Snapshot

log = logging.getLogger(__name__)

INDEXABLE_TYPES = {
    "string",
    "char",
    "varchar",
    "int",
    "integer",
    "bigint",
    "long",
    "smallint",
    "tinyint",
    "date",
}


# The lengths the partition index document gives its string types: char(1..255), varchar(1..65535).
_SIZED_STRING = re.compile(r"(char|varchar)\s*\(\s*([0-9]+)\s*\)")
_MAX_LENGTH = {"char": 255, "varchar": 65535}


def descriptor(table: dict[str, Any], index: dict[str, Any], field: str, *, status: str) -> dict[str, Any]:
    """The PartitionIndexDescriptor of ``index`` on ``table``, or InvalidInputException naming the key."""
    key_types = {
        k["Name"].lower(): (k["Name"], k.get("Type") or "string") for k in table.get("PartitionKeys") or []
    }
    keys = []
    for i, key in enumerate(index["Keys"]):
        found = key_types.get(key.lower())
        if found is None:
            raise InvalidInputException(
                f"{field}.Keys[{i}]: {key!r} is not a partition key of the table "
                f"(partition keys: {[name for name, _ in key_types.values()]})"
            )
        name, glue_type = found
        if base_type(glue_type) not in INDEXABLE_TYPES:
            raise InvalidInputException(
                f"{field}.Keys[{i}]: partition key {name!r} has type {glue_type}, which cannot be indexed "
                f"(indexable: string, char, varchar, int, bigint, long, smallint, tinyint, date)"
            )
        sized = _SIZED_STRING.fullmatch(glue_type.strip().lower())
        if sized is not None and not 1 <= int(sized.group(2)) <= _MAX_LENGTH[sized.group(1)]:
            raise InvalidInputException(
                f"{field}.Keys[{i}]: partition key {name!r} has type {glue_type}, which cannot be indexed "
                f"(a {sized.group(1)} index key has a length of 1 to {_MAX_LENGTH[sized.group(1)]})"
            )
        keys.append({"Name": name, "Type": glue_type})
    return {"IndexName": index["IndexName"], "Keys": keys, "IndexStatus": status}


# -- the index life cycle -----------------------------------------------------------------------------

BACKFILL_SAMPLE = 10  # partitions reported per backfill error code
FAILED_KEPT = 10  # a table keeps its last 10 failed indexes
STALE_CREATING_SECONDS = 60.0  # a CREATING index untouched this long lost its builder; anyone resumes it
_FORBIDDEN = re.compile("[\u0000-\u0002]")

# The integer types' widths: an indexed key's value must fit its type, as "foo" must be an integer at
# all (004's INVALID_PARTITION_TYPE_DATA_ERROR: a value that is not valid for the key's type). Expressions
# compare every integer type as 64 bits; an index only ever holds values of the key's own width.
_INTEGER_BITS = {"tinyint": 8, "smallint": 16, "int": 32, "integer": 32, "bigint": 64, "long": 64}


def table_indexes(snap: Snapshot, table: dict[str, Any]) -> list[dict[str, Any]]:
    prefix = (table["DatabaseName"], table["Name"])
    found = (snap.get(PARTITION_INDEX, k) for k in snap.keys_with_prefix(PARTITION_INDEX, prefix))
    return [d for d in found if d is not None]


def validating_indexes(snap: Snapshot, table: dict[str, Any]) -> list[dict[str, Any]]:
    """Indexes that new partitions must satisfy: every index that exists and has not failed."""
    return [d for d in table_indexes(snap, table) if d["IndexStatus"] in ("CREATING", "ACTIVE")]


def usable_indexes(snap: Snapshot, table: dict[str, Any]) -> list[dict[str, Any]]:
    return [d for d in table_indexes(snap, table) if d["IndexStatus"] == "ACTIVE"]


def planning_indexes(snap: Snapshot, table: dict[str, Any]) -> list[Index]:
    """The table's ACTIVE partition indexes, as the query planner takes them (for its partitions and,
    of a governed table, its objects)."""
    return [Index(d["IndexName"], [k["Name"] for k in d["Keys"]]) for d in usable_indexes(snap, table)]


@functools.lru_cache(maxsize=8192)
def _problem(value: str | None, glue_type: str) -> str | None:
    """The backfill error code a partition value earns on an indexed key, or None if it is fine.

    Cached: a batch of new partitions repeats the same few values on each indexed key."""
    if value is None or value == "":
        return "MISSING_PARTITION_VALUE_ERROR"
    if _FORBIDDEN.search(value):
        return "UNSUPPORTED_PARTITION_CHARACTER_ERROR"
    typed = partition_value(value, _key_type(glue_type))
    if typed is None:
        return "INVALID_PARTITION_TYPE_DATA_ERROR"
    bits = _INTEGER_BITS.get(base_type(glue_type))
    if bits is not None and not -(2 ** (bits - 1)) <= cast(int, typed) < 2 ** (bits - 1):
        return "INVALID_PARTITION_TYPE_DATA_ERROR"
    return None


@functools.lru_cache(maxsize=256)
def _key_type(glue_type: str) -> KeyType:
    return key_type(glue_type)


def _positions(table: dict[str, Any]) -> dict[str, int]:
    return {k["Name"].lower(): i for i, k in enumerate(table.get("PartitionKeys") or [])}


def new_partition_check(table: dict[str, Any], active: list[dict[str, Any]]) -> Callable[[list[str]], None]:
    """A check refusing a new partition whose indexed values an existing index cannot hold; made once
    for a batch of partitions."""
    positions = _positions(table)
    keys = [
        (index["IndexName"], key["Name"], key["Type"], positions[key["Name"].lower()])
        for index in active
        for key in index["Keys"]
    ]

    def check(values: list[str]) -> None:
        for index_name, name, glue_type, position in keys:
            value = values[position]
            code = _problem(value, glue_type)
            if code == "UNSUPPORTED_PARTITION_CHARACTER_ERROR":
                raise InvalidInputException(
                    f"Values: the value of indexed key {name} contains U+0000, U+0001 or U+0002, "
                    f"which partition index {index_name} cannot hold"
                )
            if code is not None:
                raise InvalidInputException(
                    f"Values: {value!r} is not a valid {glue_type} value for key {name}, "
                    f"which partition index {index_name} covers"
                )

    return check


def new_partitions_fine(table: dict[str, Any], active: list[dict[str, Any]], values: list[list[str]]) -> bool:
    """Whether every one of a batch's new partitions has indexed values the indexes can hold: one check
    per distinct value of each indexed key, so that such a batch needs no check partition by partition."""
    positions = _positions(table)
    try:
        for index in active:
            for key in index["Keys"]:
                column = set(map(operator.itemgetter(positions[key["Name"].lower()]), values))
                if any(_problem(v, key["Type"]) is not None for v in column):
                    return False
    except (IndexError, TypeError):  # too few values, or unhashable ones: the caller checks one by one
        return False
    return True


def check_new_partition(table: dict[str, Any], active: list[dict[str, Any]], values: list[str]) -> None:
    """Refuse a new partition whose indexed values an existing index cannot hold."""
    new_partition_check(table, active)(values)


def check_table_update(ctx: Context, snap: Snapshot, old: dict[str, Any], new: dict[str, Any]) -> None:
    """UpdateTable may not rename, retype or reorder partition keys that an index covers."""
    indexed = validating_indexes(snap, old)
    old_keys = [(k["Name"], k.get("Type")) for k in old.get("PartitionKeys") or []]
    new_keys = [(k["Name"], k.get("Type")) for k in new.get("PartitionKeys") or []]
    if indexed:
        if [n for n, _ in old_keys] != [n for n, _ in new_keys]:
            raise InvalidInputException(
                f"TableInput.PartitionKeys: {[n for n, _ in new_keys]} renames, reorders, adds or removes "
                f"partition keys of {[n for n, _ in old_keys]}, which partition indexes "
                f"{[d['IndexName'] for d in indexed]} prevent"
            )
        types = dict(new_keys)
        for d in indexed:
            for key in d["Keys"]:
                if _type_spelling(types.get(key["Name"])) != _type_spelling(key["Type"]):
                    raise InvalidInputException(
                        f"TableInput.PartitionKeys: key {key['Name']} is indexed by {d['IndexName']} as "
                        f"{key['Type']} and cannot change type to {types.get(key['Name'])}"
                    )
    elif (
        len(old_keys) != len(new_keys)
        and snap.table_segments((old["DatabaseName"], old["Name"]))
        and ctx.rows.view(snap, (old["DatabaseName"], old["Name"]), len(old_keys)).count() > 0
    ):
        raise InvalidInputException(
            f"TableInput.PartitionKeys: the table has partitions with {len(old_keys)} values each; "
            f"the number of partition keys cannot change to {len(new_keys)}"
        )


def _type_spelling(glue_type: str | None) -> str:
    """A key's type as compared for a change: a key without a Type is a string key (as its index
    records it), spelled as type_spelling compares types (``INT`` is ``int``)."""
    return type_spelling(glue_type or "string")


def public(desc: dict[str, Any]) -> dict[str, Any]:
    """The descriptor as Glue shows it (without gluecat's bookkeeping fields)."""
    return {k: copy_doc(v) for k, v in desc.items() if not k.startswith("_")}


def get_partition_indexes(
    ctx: Context, database: str, table_name: str, next_token: str | None
) -> dict[str, Any]:
    snap = ctx.snapshot(table=(database, table_name))
    table = require_table(snap, database, table_name)
    for d in table_indexes(snap, table):
        if d["IndexStatus"] == "CREATING" and time.time() - d.get("_touched", 0) > STALE_CREATING_SECONDS:
            backfill(ctx, database, table_name, d["IndexName"])
    snap = ctx.snapshot(table=(database, table_name))
    query = paging.query_digest("GetPartitionIndexes", database, table_name, table["CreateTime"])
    after = paging.read_token(ctx.store.secret, query, next_token)
    found = [d for d in table_indexes(snap, table) if after is None or d["IndexName"] > after]
    return {"PartitionIndexDescriptorList": [public(d) for d in found]}


def create_partition_index(ctx: Context, database: str, table_name: str, index: dict[str, Any]) -> None:
    name = index["IndexName"]

    def build(snap: Snapshot) -> tuple[Changes, None]:
        table = require_table(snap, database, table_name)
        existing = {d["IndexName"]: d for d in table_indexes(snap, table)}
        if name in existing and existing[name]["IndexStatus"] != "FAILED":
            raise AlreadyExistsException(f"Partition index {name} already exists on {database}.{table_name}.")
        live = [d for d in existing.values() if d["IndexStatus"] != "FAILED"]
        if len(live) >= ctx.limits.indexes_per_table:
            raise ResourceNumberLimitExceededException(
                f"table {database}.{table_name} already has {len(live)} partition indexes, the limit"
            )
        desc = descriptor(table, index, "PartitionIndex", status="CREATING")
        desc["_touched"] = time.time()
        changes = Changes()
        changes.put(PARTITION_INDEX, (database, table_name, name), desc)
        return changes, None

    ctx.store.commit("CreatePartitionIndex", build, table=(database, table_name))
    try:
        backfill(ctx, database, table_name, name)
    except Exception as e:
        # The index is made (CREATING), as Glue answers before its build: a build that fails is resumed
        # by a GetPartitionIndexes once it is stale. Raising would tell the caller it was not made.
        log.warning("building partition index %s of %s.%s failed: %s", name, database, table_name, e)


def backfill(ctx: Context, database: str, table_name: str, name: str) -> None:
    """Check every existing partition against a CREATING index, then make it ACTIVE or FAILED.

    Runs without blocking the table: partitions committed meanwhile were checked by their writers,
    since a CREATING index already validates new partitions.
    """
    snap = ctx.snapshot(table=(database, table_name))
    table = snap.get(TABLE, (database, table_name))
    desc = snap.get(PARTITION_INDEX, (database, table_name, name))
    if table is None or desc is None or desc["IndexStatus"] != "CREATING":
        return
    n = partition_key_count(table)
    base = ctx.rows.view(snap, (database, table_name), n)
    rows = base.select(base.base, lambda d: d)
    positions = _positions(table)
    samples: dict[str, list[dict[str, list[str]]]] = {}
    value_cols = [rows.column(f"p{i}").to_pylist() for i in range(n)]
    for key in desc["Keys"]:
        col = value_cols[positions[key["Name"].lower()]]
        for r, value in enumerate(col):
            code = _problem(value, key["Type"])
            if code is not None:
                bucket = samples.setdefault(code, [])
                if len(bucket) < BACKFILL_SAMPLE:
                    bucket.append({"Values": [str(c[r]) for c in value_cols]})

    def build(latest: Snapshot) -> tuple[Changes, None]:
        current = latest.get(PARTITION_INDEX, (database, table_name, name))
        changes = Changes()
        if current is None or current["IndexStatus"] != "CREATING":
            return changes, None  # deleted or finished by someone else meanwhile
        done = dict(current)
        done["_touched"] = time.time()
        if samples:
            done["IndexStatus"] = "FAILED"
            done["BackfillErrors"] = [
                {"Code": code, "Partitions": parts} for code, parts in sorted(samples.items())
            ]
            # The table keeps its last FAILED_KEPT failed indexes, this one among them: the oldest
            # others go now, when one more has failed (not when an index that may succeed is made).
            others = sorted(
                (
                    d
                    for d in table_indexes(latest, table)
                    if d["IndexStatus"] == "FAILED" and d["IndexName"] != name
                ),
                key=lambda d: d.get("_touched", 0),
            )
            for old in others[: max(0, len(others) - (FAILED_KEPT - 1))]:
                changes.delete(PARTITION_INDEX, (database, table_name, old["IndexName"]))
        else:
            done["IndexStatus"] = "ACTIVE"
        changes.put(PARTITION_INDEX, (database, table_name, name), done)
        return changes, None

    ctx.store.commit("BackfillPartitionIndex", build, table=(database, table_name))


def delete_partition_index(ctx: Context, database: str, table_name: str, name: str) -> None:
    def mark(snap: Snapshot) -> tuple[Changes, None]:
        require_table(snap, database, table_name)
        desc = snap.get(PARTITION_INDEX, (database, table_name, name))
        if desc is None:
            raise EntityNotFoundException(f"Partition index {name} not found on {database}.{table_name}.")
        if desc["IndexStatus"] == "CREATING":
            raise ConflictException(f"Partition index {name} is being created and cannot be deleted yet.")
        changes = Changes()
        if desc["IndexStatus"] == "ACTIVE":
            changes.put(
                PARTITION_INDEX,
                (database, table_name, name),
                {**desc, "IndexStatus": "DELETING", "_touched": time.time()},
            )
        else:
            changes.delete(PARTITION_INDEX, (database, table_name, name))
        return changes, None

    def remove(snap: Snapshot) -> tuple[Changes, None]:
        changes = Changes()
        desc = snap.get(PARTITION_INDEX, (database, table_name, name))
        if desc is not None and desc["IndexStatus"] == "DELETING":
            changes.delete(PARTITION_INDEX, (database, table_name, name))
        return changes, None

    ctx.store.commit("DeletePartitionIndex", mark, table=(database, table_name))
    ctx.store.commit("DropPartitionIndex", remove, table=(database, table_name))
