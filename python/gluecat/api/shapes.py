"""Request validation: every structure of the Glue documents checked against its field limits.

Each ``check_*`` function takes what the caller passed (any type at all), and returns a normalized deep
copy (plain dicts, lists, str, int, bool, aware UTC datetimes; database and table names folded to
lowercase) or raises InvalidInputException naming the full field path and the rule broken, e.g.
``TableInput.StorageDescriptor.Columns[2].Name: must be at least 1 byte long``. Lengths are UTF-8 bytes.
Unknown members of a structure are refused by name, as boto3 refuses unknown parameters. A member
given as None counts as absent. The scalar checks live in gluecat.api.patterns and are re-exported here.
"""

from __future__ import annotations

import itertools
import operator
import re
from collections.abc import Callable
from datetime import datetime
from decimal import Decimal
from functools import partial
from typing import Any

from gluecat import uniform
from gluecat.api.patterns import (
    INT32_MAX,
    INT32_MIN,
    INT64_MAX,
    INT64_MIN,
    Pattern,
    check_bool,
    check_catalog_id,
    check_db_or_table_name,
    check_enum,
    check_int,
    check_max_results,
    check_name,
    check_number,
    check_string,
    check_text,
    check_timestamp,
    check_transaction_id,
    invalid,
    reject_unknown,
    required_int,
    required_timestamp,
)

__all__ = [
    "Checked",
    "Pattern",
    "check_bool",
    "check_catalog_id",
    "check_column",
    "check_column_statistics",
    "check_database_input",
    "check_db_or_table_name",
    "check_expression",
    "check_int",
    "check_max_results",
    "check_name",
    "check_number",
    "check_order",
    "check_parameters",
    "check_partition_index",
    "check_partition_input",
    "check_partition_inputs",
    "check_partition_value_list",
    "check_property_predicates",
    "check_schema_reference",
    "check_segment",
    "check_serde_info",
    "check_skewed_info",
    "check_sort_criteria",
    "check_storage_descriptor",
    "check_string",
    "check_string_list",
    "check_table_identifier",
    "check_table_input",
    "check_timestamp",
    "check_transaction_id",
    "invalid",
    "reject_unknown",
]


# -- containers -----------------------------------------------------------------------------------


def _struct(value: Any, field: str, allowed: set[str], required: tuple[str, ...] = ()) -> dict[str, Any]:
    """The caller's dict, after refusing unknown members and missing required ones (not copied)."""
    if not isinstance(value, dict):
        invalid(field, f"must be a structure (dict), not {type(value).__name__}")
    for key in value:
        if key not in allowed:
            invalid(field, f"unknown field {key!r} (allowed: {', '.join(sorted(allowed))})")
    for key in required:
        if value.get(key) is None:
            invalid(f"{field}.{key}", "is required")
    return value


def _list(value: Any, field: str, *, max_items: int | None = None, min_items: int = 0) -> list[Any] | None:
    if value is None:
        return None
    if not isinstance(value, (list, tuple)):
        invalid(field, f"must be a list, not {type(value).__name__}")
    if len(value) < min_items:
        invalid(field, f"must have at least {min_items} item{'s' if min_items != 1 else ''}")
    if max_items is not None and len(value) > max_items:
        invalid(field, f"has {len(value)} items; at most {max_items} are allowed")
    return list(value)


def _map(value: Any, field: str) -> dict[Any, Any]:
    if not isinstance(value, dict):
        invalid(field, f"must be a map of strings (dict), not {type(value).__name__}")
    return value


def _shown(key: Any) -> str:
    """A map key in a field path: its repr, cut short. The key's path is "Field key 'k'", as
    tests/api/test_request_validation.py expects."""
    return repr(key[:40]) if isinstance(key, str) else repr(key)[:40]


def check_parameters(value: Any, field: str) -> dict[str, str] | None:
    """A Parameters map: keys 1..255 bytes single-line, values at most 512000 bytes."""
    if value is None:
        return None
    out: dict[str, str] = {}
    for k, v in _map(value, field).items():
        kf = f"{field} key {_shown(k)}"
        key = check_text(k, kf, min_bytes=1, max_bytes=255, pattern="single_line", show_value=False)
        out[key] = check_text(v, f"{field}[{key!r}]", max_bytes=512_000)
    return out


def check_string_list(
    value: Any,
    field: str,
    *,
    max_items: int | None = None,
    min_items: int = 0,
    item_max_bytes: int | None = None,
    item_min_bytes: int = 0,
    item_pattern: Pattern = None,
) -> list[str] | None:
    items = _list(value, field, max_items=max_items, min_items=min_items)
    if items is None:
        return None
    return [
        check_text(
            v, f"{field}[{i}]", min_bytes=item_min_bytes, max_bytes=item_max_bytes, pattern=item_pattern
        )
        for i, v in enumerate(items)
    ]


def _required_list(value: Any, field: str, **kwargs: Any) -> list[Any]:
    if value is None:
        invalid(field, "is required")
    out = _list(value, field, **kwargs)
    assert out is not None
    return out


# -- the Table API's structures -------------------------------------------------------------------


def check_column(value: Any, field: str) -> dict[str, Any]:
    v = _struct(value, field, {"Name", "Type", "Comment", "Parameters"}, ("Name",))
    out: dict[str, Any] = {"Name": check_name(v["Name"], f"{field}.Name")}
    if v.get("Type") is not None:
        out["Type"] = check_text(v["Type"], f"{field}.Type", max_bytes=131_072, pattern="single_line")
    if v.get("Comment") is not None:
        out["Comment"] = check_text(v["Comment"], f"{field}.Comment", max_bytes=255, pattern="single_line")
    if v.get("Parameters") is not None:
        out["Parameters"] = check_parameters(v["Parameters"], f"{field}.Parameters")
    return out


def _columns(value: Any, field: str) -> list[dict[str, Any]] | None:
    items = _list(value, field)
    if items is None:
        return None
    return [check_column(c, f"{field}[{i}]") for i, c in enumerate(items)]


def check_serde_info(value: Any, field: str) -> dict[str, Any]:
    v = _struct(value, field, {"Name", "SerializationLibrary", "Parameters"})
    out: dict[str, Any] = {}
    for key in ("Name", "SerializationLibrary"):
        if v.get(key) is not None:
            out[key] = check_text(v[key], f"{field}.{key}", min_bytes=1, max_bytes=255, pattern="single_line")
    if v.get("Parameters") is not None:
        out["Parameters"] = check_parameters(v["Parameters"], f"{field}.Parameters")
    return out


def check_order(value: Any, field: str) -> dict[str, Any]:
    """An Order: SortOrder 1 is ascending, 0 descending (the document allows nothing else)."""
    v = _struct(value, field, {"Column", "SortOrder"}, ("Column", "SortOrder"))
    return {
        "Column": check_name(v["Column"], f"{field}.Column"),
        "SortOrder": required_int(v["SortOrder"], f"{field}.SortOrder", min=0, max=1),
    }


def _column_names(value: Any, field: str) -> list[str] | None:
    """A list of column names (SkewedColumnNames, BucketColumns): each 1 to 255 bytes on one line."""
    return check_string_list(value, field, item_min_bytes=1, item_max_bytes=255, item_pattern="single_line")


def check_skewed_info(value: Any, field: str) -> dict[str, Any]:
    v = _struct(value, field, {"SkewedColumnNames", "SkewedColumnValues", "SkewedColumnValueLocationMaps"})
    out: dict[str, Any] = {}
    if v.get("SkewedColumnNames") is not None:
        out["SkewedColumnNames"] = _column_names(v["SkewedColumnNames"], f"{field}.SkewedColumnNames")
    if v.get("SkewedColumnValues") is not None:
        out["SkewedColumnValues"] = check_string_list(v["SkewedColumnValues"], f"{field}.SkewedColumnValues")
    if v.get("SkewedColumnValueLocationMaps") is not None:
        mf = f"{field}.SkewedColumnValueLocationMaps"
        maps: dict[str, str] = {}
        for k, loc in _map(v["SkewedColumnValueLocationMaps"], mf).items():
            key = check_text(k, f"{mf} key {_shown(k)}", show_value=False)
            maps[key] = check_text(loc, f"{mf}[{key!r}]")
        out["SkewedColumnValueLocationMaps"] = maps
    return out


# Custom string pattern #12 of Glue's service model: a lowercase UUID.
_SCHEMA_VERSION_ID = re.compile("[a-z0-9]{8}-[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{12}")


def check_schema_reference(value: Any, field: str) -> dict[str, Any]:
    v = _struct(value, field, {"SchemaId", "SchemaVersionId", "SchemaVersionNumber"})
    out: dict[str, Any] = {}
    if v.get("SchemaId") is not None:
        sid = _struct(v["SchemaId"], f"{field}.SchemaId", {"SchemaArn", "SchemaName", "RegistryName"})
        out["SchemaId"] = {
            k: check_text(
                sid[k], f"{field}.SchemaId.{k}", min_bytes=1, max_bytes=10_240 if k == "SchemaArn" else 255
            )
            for k in ("SchemaArn", "SchemaName", "RegistryName")
            if sid.get(k) is not None
        }
        if not out["SchemaId"]:
            invalid(f"{field}.SchemaId", "needs SchemaArn or SchemaName")
    if v.get("SchemaVersionId") is not None:
        vid = check_text(v["SchemaVersionId"], f"{field}.SchemaVersionId", min_bytes=36, max_bytes=36)
        if _SCHEMA_VERSION_ID.fullmatch(vid) is None:
            invalid(f"{field}.SchemaVersionId", f"{vid!r} does not match Custom string pattern #12 (a UUID)")
        out["SchemaVersionId"] = vid
    if v.get("SchemaVersionNumber") is not None:
        out["SchemaVersionNumber"] = check_int(
            v["SchemaVersionNumber"], f"{field}.SchemaVersionNumber", min=1, max=100_000
        )
    if "SchemaId" not in out and "SchemaVersionId" not in out:
        invalid(field, "needs SchemaId or SchemaVersionId")
    return out


_SD_FIELDS = {
    "Columns",
    "Location",
    "AdditionalLocations",
    "InputFormat",
    "OutputFormat",
    "Compressed",
    "NumberOfBuckets",
    "SerdeInfo",
    "BucketColumns",
    "SortColumns",
    "Parameters",
    "SkewedInfo",
    "StoredAsSubDirectories",
    "SchemaReference",
}


def _sort_columns(value: Any, field: str) -> list[dict[str, Any]]:
    items = _list(value, field) or []
    return [check_order(o, f"{field}[{i}]") for i, o in enumerate(items)]


_SD_CHECKS: dict[str, Callable[[Any, str], Any]] = {
    "Columns": _columns,
    "Location": partial(check_text, max_bytes=2056, pattern="multi_line"),
    # The document says only "UTF-8 strings"; the service model makes each a Location string.
    "AdditionalLocations": partial(check_string_list, item_max_bytes=2056, item_pattern="multi_line"),
    "InputFormat": partial(check_text, max_bytes=128, pattern="single_line"),
    "OutputFormat": partial(check_text, max_bytes=128, pattern="single_line"),
    "Compressed": check_bool,
    "StoredAsSubDirectories": check_bool,
    # Hive writes -1 for "not bucketed", so no lower bound but Glue's 32-bit Integer.
    "NumberOfBuckets": partial(check_int, min=INT32_MIN, max=INT32_MAX),
    "SerdeInfo": check_serde_info,
    "BucketColumns": _column_names,
    "SortColumns": _sort_columns,
    "Parameters": check_parameters,
    "SkewedInfo": check_skewed_info,
    "SchemaReference": check_schema_reference,
}
assert set(_SD_CHECKS) == _SD_FIELDS


Checked = dict[tuple[Any, ...], tuple[Any, Any]]
"""What one request has checked already, to (what was passed, its checked copy): storage descriptor
members by (member, id of what was passed), and whole descriptors but their location by their member
names and the ids of their members."""


def check_storage_descriptor(value: Any, field: str, checked: Checked | None = None) -> dict[str, Any]:
    """With ``checked``, a member object seen before in the same request (a batch whose partitions share
    the table's Columns, SerdeInfo, ...) is not checked again: its checked copy is shared, read-only."""
    if checked is not None and type(value) is dict and "Location" in value:
        # Most partitions of a batch share every member object but their location: one lookup for all.
        names = tuple(value)
        ids = list(map(id, value.values()))
        ids[names.index("Location")] = 0
        shape = ("$StorageDescriptor", names, *ids)
        seen = checked.get(shape)
        if seen is not None:
            out = dict(seen[1])
            location = value["Location"]
            if location is not None:
                out["Location"] = _SD_CHECKS["Location"](location, f"{field}.Location")
            return out
        out = _checked_storage_descriptor(value, field, checked)
        # The entry keeps the first such descriptor, and so its members, alive: their ids stay theirs.
        checked[shape] = (value, {k: v for k, v in out.items() if k != "Location"})
        return out
    return _checked_storage_descriptor(value, field, checked)


def _checked_storage_descriptor(value: Any, field: str, checked: Checked | None) -> dict[str, Any]:
    v = _struct(value, field, _SD_FIELDS)
    out: dict[str, Any] = {}
    for key, item in v.items():
        if item is None:  # absent and null members are the same to Glue
            continue
        if checked is None or key == "Location":  # each partition has its own location
            out[key] = _SD_CHECKS[key](item, f"{field}.{key}")
            continue
        seen = checked.get((key, id(item)))
        if seen is None:
            # The entry keeps the object alive, so its id cannot be reused by another during the request.
            seen = checked[(key, id(item))] = (item, _SD_CHECKS[key](item, f"{field}.{key}"))
        out[key] = seen[1]
    return out


def check_table_identifier(value: Any, field: str) -> dict[str, Any]:
    v = _struct(value, field, {"CatalogId", "DatabaseName", "Name", "Region"})
    return {
        k: check_text(v[k], f"{field}.{k}", min_bytes=1, max_bytes=255, pattern="single_line")
        for k in ("CatalogId", "DatabaseName", "Name", "Region")
        if v.get(k) is not None
    }


TABLE_INPUT_FIELDS = {
    "Name",
    "Description",
    "Owner",
    "LastAccessTime",
    "LastAnalyzedTime",
    "Retention",
    "StorageDescriptor",
    "PartitionKeys",
    "ViewOriginalText",
    "ViewExpandedText",
    "TableType",
    "Parameters",
    "TargetTable",
    "ViewDefinition",
}


def check_table_input(value: Any, field: str = "TableInput") -> dict[str, Any]:
    v = _struct(value, field, TABLE_INPUT_FIELDS, ("Name",))
    if v.get("ViewDefinition") is not None:
        # Newer Glue has it; the document does not, so it is named rather than silently dropped.
        invalid(f"{field}.ViewDefinition", "multi-dialect views are not supported by gluecat")
    out: dict[str, Any] = {"Name": check_db_or_table_name(v["Name"], f"{field}.Name")}
    if v.get("Description") is not None:
        out["Description"] = check_text(
            v["Description"], f"{field}.Description", max_bytes=2048, pattern="multi_line"
        )
    if v.get("Owner") is not None:
        out["Owner"] = check_text(
            v["Owner"], f"{field}.Owner", min_bytes=1, max_bytes=255, pattern="single_line"
        )
    for key in ("LastAccessTime", "LastAnalyzedTime"):
        if v.get(key) is not None:
            out[key] = check_timestamp(v[key], f"{field}.{key}")
    if v.get("Retention") is not None:
        out["Retention"] = check_int(v["Retention"], f"{field}.Retention", min=0, max=INT32_MAX)
    if v.get("StorageDescriptor") is not None:
        out["StorageDescriptor"] = check_storage_descriptor(
            v["StorageDescriptor"], f"{field}.StorageDescriptor"
        )
    if v.get("PartitionKeys") is not None:
        out["PartitionKeys"] = _columns(v["PartitionKeys"], f"{field}.PartitionKeys")
    for key in ("ViewOriginalText", "ViewExpandedText"):
        if v.get(key) is not None:
            out[key] = check_text(v[key], f"{field}.{key}", max_bytes=409_600)
    if v.get("TableType") is not None:
        out["TableType"] = check_text(v["TableType"], f"{field}.TableType", max_bytes=255)
    if v.get("Parameters") is not None:
        out["Parameters"] = check_parameters(v["Parameters"], f"{field}.Parameters")
    if v.get("TargetTable") is not None:
        out["TargetTable"] = check_table_identifier(v["TargetTable"], f"{field}.TargetTable")
    _check_key_names(out, field)
    return out


def _check_key_names(table: dict[str, Any], field: str) -> None:
    """Partition keys are unique and are not also data columns (Hive compares names case-insensitively)."""
    keys = table.get("PartitionKeys") or []
    seen: dict[str, int] = {}
    for i, key in enumerate(keys):
        name = key["Name"].lower()
        if name in seen:
            invalid(
                f"{field}.PartitionKeys[{i}].Name", f"{key['Name']!r} repeats PartitionKeys[{seen[name]}]"
            )
        seen[name] = i
    columns = (table.get("StorageDescriptor") or {}).get("Columns") or []
    for j, col in enumerate(columns):
        k = seen.get(col["Name"].lower())
        if k is not None:
            invalid(
                f"{field}.PartitionKeys[{k}].Name",
                f"{keys[k]['Name']!r} is also StorageDescriptor.Columns[{j}] ({col['Name']!r}); "
                "a partition key cannot be a column",
            )


# -- DatabaseInput --------------------------------------------------------------------------------

_PERMISSIONS = (
    "ALL",
    "SELECT",
    "ALTER",
    "DROP",
    "DELETE",
    "INSERT",
    "CREATE_DATABASE",
    "CREATE_TABLE",
    "DATA_LOCATION_ACCESS",
)


def _principal_permissions(value: Any, field: str) -> dict[str, Any]:
    p = _struct(value, field, {"Principal", "Permissions"})
    out: dict[str, Any] = {}
    if p.get("Principal") is not None:
        principal = _struct(p["Principal"], f"{field}.Principal", {"DataLakePrincipalIdentifier"})
        out["Principal"] = {}
        if principal.get("DataLakePrincipalIdentifier") is not None:
            out["Principal"]["DataLakePrincipalIdentifier"] = check_text(
                principal["DataLakePrincipalIdentifier"],
                f"{field}.Principal.DataLakePrincipalIdentifier",
                min_bytes=1,
                max_bytes=255,
            )
    if p.get("Permissions") is not None:
        names = _list(p["Permissions"], f"{field}.Permissions") or []
        out["Permissions"] = [
            check_enum(name, f"{field}.Permissions[{j}]", _PERMISSIONS) for j, name in enumerate(names)
        ]
    return out


def check_database_input(value: Any, field: str = "DatabaseInput") -> dict[str, Any]:
    v = _struct(
        value,
        field,
        {
            "Name",
            "Description",
            "LocationUri",
            "Parameters",
            "CreateTableDefaultPermissions",
            "TargetDatabase",
            "FederatedDatabase",
        },
        ("Name",),
    )
    out: dict[str, Any] = {"Name": check_db_or_table_name(v["Name"], f"{field}.Name")}
    if v.get("Description") is not None:
        out["Description"] = check_text(
            v["Description"], f"{field}.Description", max_bytes=2048, pattern="multi_line"
        )
    if v.get("LocationUri") is not None:
        out["LocationUri"] = check_text(
            v["LocationUri"], f"{field}.LocationUri", min_bytes=1, max_bytes=1024, pattern="multi_line"
        )
    if v.get("Parameters") is not None:
        out["Parameters"] = check_parameters(v["Parameters"], f"{field}.Parameters")
    if v.get("CreateTableDefaultPermissions") is not None:
        pf = f"{field}.CreateTableDefaultPermissions"
        perms = _list(v["CreateTableDefaultPermissions"], pf) or []
        out["CreateTableDefaultPermissions"] = [
            _principal_permissions(p, f"{pf}[{i}]") for i, p in enumerate(perms)
        ]
    if v.get("TargetDatabase") is not None:
        t = _struct(v["TargetDatabase"], f"{field}.TargetDatabase", {"CatalogId", "DatabaseName", "Region"})
        out["TargetDatabase"] = {
            k: check_text(
                t[k], f"{field}.TargetDatabase.{k}", min_bytes=1, max_bytes=255, pattern="single_line"
            )
            for k in ("CatalogId", "DatabaseName", "Region")
            if t.get(k) is not None
        }
    if v.get("FederatedDatabase") is not None:
        f = _struct(v["FederatedDatabase"], f"{field}.FederatedDatabase", {"Identifier", "ConnectionName"})
        limits = {"Identifier": 512, "ConnectionName": 255}
        out["FederatedDatabase"] = {
            k: check_text(
                f[k], f"{field}.FederatedDatabase.{k}", min_bytes=1, max_bytes=limit, pattern="single_line"
            )
            for k, limit in limits.items()
            if f.get(k) is not None
        }
    return out


# -- the Partition API's structures ---------------------------------------------------------------


def _values(value: Any, field: str) -> list[str]:
    # No pattern: partition values may hold any text; only an index restricts them (document 004).
    if type(value) is list:
        try:
            # ASCII text is one byte a character: the common case needs no encoding to measure it.
            if "".join(value).isascii() and max(map(len, value), default=0) <= 1024:
                return list(value)
        except TypeError:  # not all strings: checked one by one below
            pass
    items = _required_list(value, field)
    out = []
    for i, v in enumerate(items):
        # ASCII text is one byte a character: the common case needs no encoding to measure it.
        if type(v) is not str or len(v) > 1024 or not v.isascii():
            v = check_text(v, f"{field}[{i}]", max_bytes=1024)
        out.append(v)
    return out


PARTITION_INPUT_FIELDS = {"Values", "LastAccessTime", "StorageDescriptor", "Parameters", "LastAnalyzedTime"}


def check_partition_input(
    value: Any, field: str = "PartitionInput", checked: Checked | None = None
) -> dict[str, Any]:
    """``checked``: as check_storage_descriptor's, shared by the partitions of one batch."""
    v = _struct(value, field, PARTITION_INPUT_FIELDS)
    # The SDK lets Values out; the document says a valid input must have them.
    out: dict[str, Any] = {"Values": _values(v.get("Values"), f"{field}.Values")}
    for key in ("LastAccessTime", "LastAnalyzedTime"):
        if v.get(key) is not None:
            out[key] = check_timestamp(v[key], f"{field}.{key}")
    if v.get("StorageDescriptor") is not None:
        out["StorageDescriptor"] = check_storage_descriptor(
            v["StorageDescriptor"], f"{field}.StorageDescriptor", checked
        )
    if v.get("Parameters") is not None:
        out["Parameters"] = check_parameters(v["Parameters"], f"{field}.Parameters")
    return out


def check_partition_inputs(items: list[Any], field: str) -> list[dict[str, Any]]:
    """check_partition_input of each of a batch's partitions (named ``field[i]``). A batch whose
    partitions differ only in their values and locations (what Spark's partition DDL, crawlers and bulk
    loaders send) is checked in a few passes over the whole batch instead of partition by partition."""
    uniform = _uniform_partition_inputs(items, field)
    if uniform is not None:
        return uniform
    checked: Checked = {}
    return [check_partition_input(p, f"{field}[{i}]", checked) for i, p in enumerate(items)]


_UNIFORM_MEMBERS = frozenset({"Values", "StorageDescriptor"})


def _uniform_partition_inputs(items: list[Any], field: str) -> list[dict[str, Any]] | None:
    """The checked inputs, if each is {"Values": [printable ASCII of at most 1,024 characters, ...],
    "StorageDescriptor": the first's member objects but a printable ASCII Location of at most 2,056
    characters} and the first's descriptor is valid; else None, and the caller checks them one by one
    (and so names the first fault). Printable ASCII is one byte a character and inside both line patterns,
    which is what check_text's own fast path accepts."""
    if not items or set(map(type, items)) != {dict} or not uniform.members_are(items, _UNIFORM_MEMBERS):
        return None
    values = list(map(operator.itemgetter("Values"), items))
    if set(map(type, values)) != {list}:
        return None
    flat = list(itertools.chain.from_iterable(values))
    if flat and (set(map(type, flat)) != {str} or not "".join(flat).isascii() or max(map(len, flat)) > 1024):
        return None
    sds = list(map(operator.itemgetter("StorageDescriptor"), items))
    locations = uniform.all_but(sds, "Location")
    if locations is None or set(map(type, locations)) != {str}:
        return None
    joined = "".join(locations)
    if not joined.isascii() or not joined.isprintable() or max(map(len, locations)) > 2056:
        return None
    checked = check_storage_descriptor(sds[0], f"{field}[0].StorageDescriptor")
    shared = {k: v for k, v in checked.items() if k != "Location"}
    return [
        {"Values": list(v), "StorageDescriptor": {**shared, "Location": location}}
        for v, location in zip(values, locations, strict=True)
    ]


def check_partition_value_list(value: Any, field: str) -> list[str]:
    v = _struct(value, field, {"Values"}, ("Values",))
    return _values(v["Values"], f"{field}.Values")


def check_partition_index(value: Any, field: str = "PartitionIndex") -> dict[str, Any]:
    v = _struct(value, field, {"Keys", "IndexName"}, ("Keys", "IndexName"))
    keys = (
        check_string_list(
            v["Keys"],
            f"{field}.Keys",
            min_items=1,
            item_min_bytes=1,
            item_max_bytes=255,
            item_pattern="single_line",
        )
        or []
    )
    seen: dict[str, int] = {}
    for i, key in enumerate(keys):
        if key.lower() in seen:
            invalid(f"{field}.Keys[{i}]", f"{key!r} appears twice (also Keys[{seen[key.lower()]}])")
        seen[key.lower()] = i
    return {"IndexName": check_name(v["IndexName"], f"{field}.IndexName"), "Keys": keys}


def check_segment(value: Any, field: str = "Segment") -> dict[str, int]:
    v = _struct(value, field, {"SegmentNumber", "TotalSegments"}, ("SegmentNumber", "TotalSegments"))
    number = required_int(v["SegmentNumber"], f"{field}.SegmentNumber", min=0, max=INT32_MAX)
    total = required_int(v["TotalSegments"], f"{field}.TotalSegments", min=1, max=10)
    if number >= total:
        invalid(f"{field}.SegmentNumber", f"{number} must be less than TotalSegments ({total})")
    return {"SegmentNumber": number, "TotalSegments": total}


def check_expression(
    value: Any, field: str = "Expression", max_bytes: int = 2048, *, pattern: Pattern = "multi_line"
) -> str | None:
    """An Expression of at most ``max_bytes`` bytes. GetPartitions' is a predicate string matching the
    URI address multi-line pattern (the default); GetTables' is single-line (pass pattern="single_line")."""
    return check_string(value, field, max_bytes=max_bytes, pattern=pattern)


# -- SearchTables -----------------------------------------------------------------------------------

_COMPARATORS = ("EQUALS", "GREATER_THAN", "LESS_THAN", "GREATER_THAN_EQUALS", "LESS_THAN_EQUALS")


def check_sort_criteria(value: Any, field: str = "SortCriteria") -> list[dict[str, Any]] | None:
    items = _list(value, field, max_items=1)
    if items is None:
        return None
    out = []
    for i, c in enumerate(items):
        c = _struct(c, f"{field}[{i}]", {"FieldName", "Sort"})
        entry: dict[str, Any] = {}
        if c.get("FieldName") is not None:
            entry["FieldName"] = check_text(c["FieldName"], f"{field}[{i}].FieldName", max_bytes=1024)
        if c.get("Sort") is not None:
            entry["Sort"] = check_enum(c["Sort"], f"{field}[{i}].Sort", ("ASC", "DESC"))
        out.append(entry)
    return out


def check_property_predicates(value: Any, field: str = "Filters") -> list[dict[str, Any]] | None:
    items = _list(value, field)
    if items is None:
        return None
    out = []
    for i, p in enumerate(items):
        p = _struct(p, f"{field}[{i}]", {"Key", "Value", "Comparator"})
        entry: dict[str, Any] = {}
        for key in ("Key", "Value"):
            if p.get(key) is not None:
                entry[key] = check_text(p[key], f"{field}[{i}].{key}", max_bytes=1024)
        if p.get("Comparator") is not None:
            entry["Comparator"] = check_enum(p["Comparator"], f"{field}[{i}].Comparator", _COMPARATORS)
        out.append(entry)
    return out


# -- column statistics ----------------------------------------------------------------------------


def _counts(v: dict[str, Any], field: str, names: tuple[str, ...]) -> dict[str, int]:
    """Glue's NonNegativeLong counts: required, 0..2^63-1."""
    return {name: required_int(v.get(name), f"{field}.{name}", min=0, max=INT64_MAX) for name in names}


def _min_max(v: dict[str, Any], field: str, check: Callable[[Any, str], Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in ("MinimumValue", "MaximumValue"):
        if v.get(name) is not None:
            out[name] = check(v[name], f"{field}.{name}")
    lo, hi = out.get("MinimumValue"), out.get("MaximumValue")
    if lo is not None and hi is not None and _comparable(lo) > _comparable(hi):
        invalid(f"{field}.MinimumValue", "is greater than MaximumValue")
    return out


def _comparable(v: Any) -> Any:
    if isinstance(v, dict):
        # A DecimalNumber, compared exactly: a float would round, and 10**Scale could be huge.
        return Decimal(f"{int.from_bytes(v['UnscaledValue'], 'big', signed=True)}E{-v['Scale']}")
    return v


def _decimal_number(value: Any, field: str) -> dict[str, Any]:
    v = _struct(value, field, {"UnscaledValue", "Scale"}, ("UnscaledValue", "Scale"))
    if not isinstance(v["UnscaledValue"], (bytes, bytearray, memoryview)):
        invalid(
            f"{field}.UnscaledValue",
            f"must be bytes (a big-endian two's-complement integer), not {type(v['UnscaledValue']).__name__}",
        )
    return {
        "UnscaledValue": bytes(v["UnscaledValue"]),
        "Scale": required_int(v["Scale"], f"{field}.Scale", min=INT32_MIN, max=INT32_MAX),
    }


def _long(value: Any, field: str) -> int:
    return required_int(value, field, min=INT64_MIN, max=INT64_MAX)


def _double(value: Any, field: str) -> float:
    out = check_number(value, field, required=True)
    assert out is not None
    return out


def _date(value: Any, field: str) -> datetime:
    return required_timestamp(value, field)


def _average_length(v: dict[str, Any], field: str) -> float:
    out = check_number(v.get("AverageLength"), f"{field}.AverageLength", min=0, required=True)
    assert out is not None
    return out


def _stats_boolean(value: Any, field: str) -> dict[str, Any]:
    v = _struct(value, field, {"NumberOfTrues", "NumberOfFalses", "NumberOfNulls"})
    return _counts(v, field, ("NumberOfTrues", "NumberOfFalses", "NumberOfNulls"))


def _stats_ranged(check: Callable[[Any, str], Any]) -> Callable[[Any, str], dict[str, Any]]:
    def stats(value: Any, field: str) -> dict[str, Any]:
        v = _struct(value, field, {"MinimumValue", "MaximumValue", "NumberOfNulls", "NumberOfDistinctValues"})
        return {**_min_max(v, field, check), **_counts(v, field, ("NumberOfNulls", "NumberOfDistinctValues"))}

    return stats


def _stats_string(value: Any, field: str) -> dict[str, Any]:
    v = _struct(value, field, {"MaximumLength", "AverageLength", "NumberOfNulls", "NumberOfDistinctValues"})
    out: dict[str, Any] = dict(
        _counts(v, field, ("MaximumLength", "NumberOfNulls", "NumberOfDistinctValues"))
    )
    out["AverageLength"] = _average_length(v, field)
    return out


def _stats_binary(value: Any, field: str) -> dict[str, Any]:
    v = _struct(value, field, {"MaximumLength", "AverageLength", "NumberOfNulls"})
    out: dict[str, Any] = dict(_counts(v, field, ("MaximumLength", "NumberOfNulls")))
    out["AverageLength"] = _average_length(v, field)
    return out


_STATISTICS: dict[str, tuple[str, Callable[[Any, str], dict[str, Any]]]] = {
    "BOOLEAN": ("BooleanColumnStatisticsData", _stats_boolean),
    "DATE": ("DateColumnStatisticsData", _stats_ranged(_date)),
    "DECIMAL": ("DecimalColumnStatisticsData", _stats_ranged(_decimal_number)),
    "DOUBLE": ("DoubleColumnStatisticsData", _stats_ranged(_double)),
    "LONG": ("LongColumnStatisticsData", _stats_ranged(_long)),
    "STRING": ("StringColumnStatisticsData", _stats_string),
    "BINARY": ("BinaryColumnStatisticsData", _stats_binary),
}


def check_column_statistics(value: Any, field: str) -> dict[str, Any]:
    v = _struct(
        value,
        field,
        {"ColumnName", "ColumnType", "AnalyzedTime", "StatisticsData"},
        ("ColumnName", "ColumnType", "AnalyzedTime", "StatisticsData"),
    )
    column = check_name(v["ColumnName"], f"{field}.ColumnName")
    column_type = check_text(v["ColumnType"], f"{field}.ColumnType", max_bytes=20_000, pattern="single_line")
    analyzed = required_timestamp(v["AnalyzedTime"], f"{field}.AnalyzedTime")
    data_field = f"{field}.StatisticsData"
    data = _struct(
        v["StatisticsData"], data_field, {"Type"} | {m for m, _ in _STATISTICS.values()}, ("Type",)
    )
    kind = check_enum(data["Type"], f"{data_field}.Type", tuple(_STATISTICS))
    member, check = _STATISTICS[kind]
    given = [m for m, _ in _STATISTICS.values() if data.get(m) is not None]
    if given != [member]:
        has = ", ".join(given) if given else "none"
        invalid(data_field, f"Type {kind} needs exactly the member {member}, but has {has}")
    return {
        "ColumnName": column,
        "ColumnType": column_type,
        "AnalyzedTime": analyzed,
        "StatisticsData": {"Type": kind, member: check(data[member], f"{data_field}.{member}")},
    }
