"""Partition maintenance Spark's v2 syntax does not bring to a catalog, as procedures (CALL glue.system.*),
which the session extension also runs for MSCK REPAIR TABLE, ALTER TABLE RECOVER PARTITIONS and ALTER TABLE
PARTITION ... SET LOCATION.

repair_table discovers partitions from the folder layout under the table's location (``k1=v1/k2=v2``, keys in
the table's order, values unescaped as Hive escapes them), registers those the catalog lacks in batches, and
with ``drop`` drops the registered ones whose folder is gone, as MSCK REPAIR TABLE [ADD|DROP|SYNC] PARTITIONS
does. A folder whose value does not fit its key's type is skipped and reported, not registered.
"""

from __future__ import annotations

import json
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import unquote

import pyarrow.fs as pafs

from gluecat.api.partition_names import DEFAULT_PARTITION_NAME, partition_namer
from gluecat.catalog.context import base_type
from gluecat.data.files import DataFiles, FolderMove, GlueClient, filesystem, folder_key
from gluecat.errors import InvalidInputException

_BATCH = 100  # BatchCreatePartition's page
_INTEGRAL = {"tinyint", "smallint", "int", "integer", "bigint", "long"}


def _fits(value: str, hive_type: str) -> bool:
    """Whether a folder's value can be a value of the partition key's type (Hive's null marker always can)."""
    if value == DEFAULT_PARTITION_NAME:
        return True
    base = base_type(hive_type)
    try:
        if base in _INTEGRAL:
            int(value)
        elif base in ("float", "double", "decimal"):
            Decimal(value)
        elif base == "date":
            date.fromisoformat(value)
        elif base == "timestamp":
            datetime.fromisoformat(value)
        elif base == "boolean":
            return value.lower() in ("true", "false")
    except (ValueError, InvalidOperation):
        return False
    return True


def discover(location: str, keys: list[dict[str, Any]]) -> tuple[list[tuple[list[str], str]], list[str]]:
    """The partitions a folder layout holds: (values, folder) for each ``k=v/...`` path of the table's keys,
    and the paths skipped because a value does not fit its key's type."""
    fs, root = filesystem(location)
    found: list[tuple[list[str], str]] = []
    skipped: list[str] = []
    level: list[tuple[list[str], str, str]] = [([], location.rstrip("/"), root.rstrip("/"))]
    for key in keys:
        next_level = []
        prefix = key["Name"].lower() + "="
        for values, folder, path in level:
            selector = pafs.FileSelector(path, allow_not_found=True)
            for info in fs.get_file_info(selector):
                name = info.base_name
                if info.type != pafs.FileType.Directory or not name.lower().startswith(prefix):
                    continue
                value = unquote(name[len(prefix) :])
                next_level.append(([*values, value], f"{folder}/{name}", info.path))
        level = next_level
    for values, folder, _ in level:
        if all(_fits(v, k.get("Type", "string")) for v, k in zip(values, keys, strict=True)):
            found.append((values, folder))
        else:
            skipped.append(folder)
    return found, skipped


def repair_table(
    catalog: GlueClient, files: DataFiles, table: dict[str, Any], add: bool, drop: bool
) -> list[dict[str, str]]:
    """MSCK REPAIR TABLE: what was added, dropped and skipped, one row per partition."""
    keys = table.get("PartitionKeys") or []
    if not keys:
        raise InvalidInputException(
            f"Table {table['DatabaseName']}.{table['Name']} is not partitioned: there is nothing to repair"
        )
    location = (table.get("StorageDescriptor") or {}).get("Location")
    if not location:
        raise InvalidInputException(
            f"Table {table['DatabaseName']}.{table['Name']} has no location to discover"
        )
    name = partition_namer([k["Name"] for k in keys])
    registered = {tuple(v): f for v, f in files.partition_folders(table)}
    rows: list[dict[str, str]] = []
    if add:
        found, skipped = discover(location, keys)
        rows += [
            {"action": "skipped", "partition": f"{folder} (a value does not fit its type)"}
            for folder in skipped
        ]
        new = [(v, f) for v, f in found if tuple(v) not in registered]
        # Folders a drop on an object store was killed before deleting: gone now, not registered.
        dropped = set(files.finish_drops(f for _, f in new))
        new = [(v, f) for v, f in new if f not in dropped]
        sd = dict(table.get("StorageDescriptor") or {})
        for start in range(0, len(new), _BATCH):
            chunk = new[start : start + _BATCH]
            catalog.commit_partitions(
                DatabaseName=table["DatabaseName"],
                TableName=table["Name"],
                Add=[{"Values": v, "StorageDescriptor": {**sd, "Location": f}} for v, f in chunk],
                IfNotExists=True,
            )
            rows += [{"action": "added", "partition": name(v)} for v, _ in chunk]
    if drop:
        gone = [list(v) for v, f in registered.items() if not _exists(f)]
        for start in range(0, len(gone), _BATCH):
            batch = gone[start : start + _BATCH]
            catalog.commit_partitions(
                DatabaseName=table["DatabaseName"], TableName=table["Name"], Drop=batch, IfExists=True
            )
            rows += [{"action": "dropped", "partition": name(v)} for v in batch]
    return rows


def _exists(folder: str) -> bool:
    fs, path = filesystem(folder)
    return bool(fs.get_file_info(path).type == pafs.FileType.Directory)


def partition_values(table: dict[str, Any], partition: str) -> list[str]:
    """A partition named by a JSON object of its values, or by its Hive name (k1=v1/k2=v2), as values in key
    order; every key must be given."""
    keys = [k["Name"] for k in table.get("PartitionKeys") or []]
    if partition.strip().startswith("{"):
        try:
            spec = {str(k).lower(): str(v) for k, v in json.loads(partition).items()}
        except (ValueError, AttributeError) as e:
            raise InvalidInputException(f"partition => {partition!r}: not a JSON object of values") from e
    else:
        spec = {}
        for part in partition.strip("/").split("/"):
            key, sep, value = part.partition("=")
            if not sep:
                raise InvalidInputException(
                    f"partition => {partition!r}: expected k1=v1/k2=v2 or a JSON object"
                )
            spec[unquote(key).lower()] = unquote(value)
    missing = [k for k in keys if k.lower() not in spec]
    extra = sorted(set(spec) - {k.lower() for k in keys})
    if missing or extra:
        raise InvalidInputException(
            f"partition => {partition!r}: the partition columns of {table['Name']} are {', '.join(keys)}"
        )
    return [spec[k.lower()] for k in keys]


def set_partition_location(
    catalog: GlueClient, table: dict[str, Any], values: list[str], location: str
) -> list[dict[str, str]]:
    """ALTER TABLE ... PARTITION (...) SET LOCATION: the partition reads and writes there from now on; its files
    stay where they are, as in Hive."""
    got = catalog.get_partition(
        DatabaseName=table["DatabaseName"], TableName=table["Name"], PartitionValues=values
    )["Partition"]
    part = {k: got[k] for k in ("Values", "StorageDescriptor", "Parameters") if k in got}
    part["StorageDescriptor"] = {**(got.get("StorageDescriptor") or {}), "Location": location}
    catalog.update_partition(
        DatabaseName=table["DatabaseName"],
        TableName=table["Name"],
        PartitionValueList=values,
        PartitionInput=part,
    )
    name = partition_namer([k["Name"] for k in table["PartitionKeys"]])
    return [{"partition": name(values), "location": location}]


def rename_partition(
    catalog: GlueClient, files: DataFiles, table: dict[str, Any], values: list[str], new_values: list[str]
) -> int:
    """PARTITION (...) RENAME TO PARTITION (...): one commit (the new partition with the old one's descriptor
    and parameters, the old one dropped); a managed table's partition at its Hive path moves to the new values'
    path (on an object store, its files copied before the commit and the old ones deleted after it).
    Answers the commit's version."""
    got = catalog.get_partition(
        DatabaseName=table["DatabaseName"], TableName=table["Name"], PartitionValues=values
    )["Partition"]
    sd = dict(got.get("StorageDescriptor") or {})
    base = str((table.get("StorageDescriptor") or {}).get("Location") or "").rstrip("/")
    location = (
        sd.get("Location") or f"{base}/{partition_namer([k['Name'] for k in table['PartitionKeys']])(values)}"
    )
    move = files.plan_rename_partition(table, values, new_values, location)
    part: dict[str, Any] = {
        "Values": new_values,
        "StorageDescriptor": {**sd, "Location": move[1] if move else location},
    }
    if got.get("Parameters"):
        part["Parameters"] = got["Parameters"]
    renames = move is not None and folder_key(move[0]) != folder_key(move[1])
    moving = FolderMove(*move, partitions_of=table) if move is not None and renames else None
    if moving is not None:
        moving.prepare()
    try:
        done = catalog.commit_partitions(
            DatabaseName=table["DatabaseName"], TableName=table["Name"], Add=[part], Drop=[values]
        )
    except BaseException:
        # The copies go while the old partition is still there (a commit whose outcome is unknown may have
        # registered them).
        if moving is not None and _registered(catalog, table, values, got):
            moving.undo()
        raise
    if moving is not None:
        try:
            moving.switch()
        except Exception:
            back = {**part, "Values": values, "StorageDescriptor": sd}
            catalog.commit_partitions(
                DatabaseName=table["DatabaseName"], TableName=table["Name"], Add=[back], Drop=[new_values]
            )
            raise
        moving.finish()
    return int(done["CommitVersion"])


def _registered(catalog: GlueClient, table: dict[str, Any], values: list[str], got: dict[str, Any]) -> bool:
    """Whether the partition ``got`` (as read) is still registered; False when that cannot be told."""
    try:
        now = catalog.get_partition(
            DatabaseName=table["DatabaseName"], TableName=table["Name"], PartitionValues=values
        )["Partition"]
    except Exception:
        return False
    return bool(now.get("CreationTime") == got.get("CreationTime"))
