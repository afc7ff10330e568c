"""Request validation: every structure of the Glue documents checked against its field limits.

Each ``check_*`` function takes what the caller passed (any type at all), and returns a normalized deep
copy (plain dicts, lists, str, int, bool, aware datetimes; database and table names folded to lowercase)
or raises InvalidInputException naming the full field path and the rule broken, e.g.
``TableInput.StorageDescriptor.Columns[2].Name: must be at least 1 byte long``. Lengths are UTF-8 bytes.
Unknown members of a structure are refused by name, as boto3 refuses unknown parameters.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Literal, NoReturn

from gluecat.errors import InvalidInputException

Pattern = Literal["single_line", "multi_line", "custom11"] | None

# Glue's service model patterns, as character classes (no surrogates can occur in a Python str
# built from valid UTF-8; a lone surrogate is refused explicitly).
_SINGLE_LINE = re.compile("[\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff\t]*")
_MULTI_LINE = re.compile("[\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff\r\n\t]*")
_PATTERN_NAMES = {
    "single_line": "the single-line string pattern (no control characters but tab)",
    "multi_line": "the URI address multi-line string pattern (no control characters but tab, CR, LF)",
    "custom11": "letters, digits and punctuation only",
}


def invalid(field: str, why: str) -> NoReturn:
    raise InvalidInputException(f"{field}: {why}")


def _matches(value: str, pattern: Pattern) -> bool:
    if pattern == "single_line":
        return _SINGLE_LINE.fullmatch(value) is not None
    if pattern == "multi_line":
        return _MULTI_LINE.fullmatch(value) is not None
    if pattern == "custom11":
        return all(unicodedata.category(c)[0] in "LNP" for c in value)
    return True


def _utf8_len(value: str, field: str) -> int:
    try:
        return len(value.encode("utf-8"))
    except UnicodeEncodeError:
        invalid(field, "is not valid UTF-8 (it contains a lone surrogate)")


def check_string(
    value: Any,
    field: str,
    *,
    min_bytes: int = 0,
    max_bytes: int | None = None,
    pattern: Pattern = None,
    required: bool = False,
) -> str | None:
    if value is None:
        if required:
            invalid(field, "is required")
        return None
    if not isinstance(value, str):
        invalid(field, f"must be a string, not {type(value).__name__}")
    n = _utf8_len(value, field)
    if n < min_bytes:
        invalid(field, f"must be at least {min_bytes} byte{'s' if min_bytes != 1 else ''} long")
    if max_bytes is not None and n > max_bytes:
        invalid(field, f"must be at most {max_bytes} bytes long (it is {n})")
    if not _matches(value, pattern):
        invalid(field, f"{value[:40]!r} does not match {_PATTERN_NAMES[str(pattern)]}")
    return value


def _required_str(value: Any, field: str, **kwargs: Any) -> str:
    out = check_string(value, field, required=True, **kwargs)
    assert out is not None
    return out


def check_name(value: Any, field: str) -> str:
    """A Glue entity name: 1..255 bytes, single line."""
    return _required_str(value, field, min_bytes=1, max_bytes=255, pattern="single_line")


def check_db_or_table_name(value: Any, field: str) -> str:
    """A database or table name, folded to lowercase for Hive compatibility."""
    return check_name(value, field).lower()


def check_int(
    value: Any, field: str, *, min: int | None = None, max: int | None = None, required: bool = False
) -> int | None:
    if value is None:
        if required:
            invalid(field, "is required")
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        invalid(field, f"must be an integer, not {type(value).__name__}")
    if min is not None and value < min:
        invalid(field, f"must be at least {min} (it is {value})")
    if max is not None and value > max:
        invalid(field, f"must be at most {max} (it is {value})")
    return value


def _required_int(value: Any, field: str, **kwargs: Any) -> int:
    out = check_int(value, field, required=True, **kwargs)
    assert out is not None
    return out


def check_number(value: Any, field: str, *, min: float | None = None, required: bool = False) -> float | None:
    if value is None:
        if required:
            invalid(field, "is required")
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        invalid(field, f"must be a number, not {type(value).__name__}")
    if not math.isfinite(value):
        invalid(field, "must be a finite number")
    if min is not None and value < min:
        invalid(field, f"must be at least {min} (it is {value})")
    return float(value)


def check_bool(value: Any, field: str) -> bool | None:
    if value is None:
        return None
    if not isinstance(value, bool):
        invalid(field, f"must be a boolean, not {type(value).__name__}")
    return value


def check_timestamp(value: Any, field: str, *, required: bool = False) -> datetime | None:
    """A datetime (naive means UTC, as botocore sends it) or epoch seconds, as an aware UTC datetime."""
    if value is None:
        if required:
            invalid(field, "is required")
        return None
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value, UTC)
        except (OverflowError, OSError, ValueError):
            invalid(field, f"{value!r} is not a representable time")
    if isinstance(value, str):
        try:
            ts = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            invalid(field, f"{value[:40]!r} is not an ISO-8601 time")
        return ts.replace(tzinfo=UTC) if ts.tzinfo is None else ts.astimezone(UTC)
    invalid(field, f"must be a timestamp, not {type(value).__name__}")


def _struct(value: Any, field: str, allowed: set[str], required: tuple[str, ...] = ()) -> dict[str, Any]:
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


def check_parameters(value: Any, field: str) -> dict[str, str] | None:
    """A Parameters map: keys 1..255 bytes single-line, values at most 512000 bytes."""
    if value is None:
        return None
    if not isinstance(value, dict):
        invalid(field, f"must be a map of strings, not {type(value).__name__}")
    out: dict[str, str] = {}
    for k, v in value.items():
        key = _required_str(k, f"{field} key", min_bytes=1, max_bytes=255, pattern="single_line")
        out[key] = _required_str(v, f"{field}[{key!r}]", max_bytes=512_000)
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
        _required_str(
            v, f"{field}[{i}]", min_bytes=item_min_bytes, max_bytes=item_max_bytes, pattern=item_pattern
        )
        for i, v in enumerate(items)
    ]


def check_max_results(value: Any, field: str, lo: int, hi: int) -> int | None:
    return check_int(value, field, min=lo, max=hi)


def check_catalog_id(value: Any) -> str | None:
    return check_string(value, "CatalogId", min_bytes=1, max_bytes=255, pattern="single_line")


def check_transaction_id(value: Any) -> str | None:
    return check_string(value, "TransactionId", min_bytes=1, max_bytes=255, pattern="custom11")


# -- the Table API's structures -------------------------------------------------------------------


def check_column(value: Any, field: str) -> dict[str, Any]:
    v = _struct(value, field, {"Name", "Type", "Comment", "Parameters"}, ("Name",))
    out: dict[str, Any] = {"Name": check_name(v["Name"], f"{field}.Name")}
    if v.get("Type") is not None:
        out["Type"] = check_string(v["Type"], f"{field}.Type", max_bytes=131_072, pattern="single_line")
    if v.get("Comment") is not None:
        out["Comment"] = check_string(v["Comment"], f"{field}.Comment", max_bytes=255, pattern="single_line")
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
            out[key] = check_string(
                v[key], f"{field}.{key}", min_bytes=1, max_bytes=255, pattern="single_line"
            )
    if v.get("Parameters") is not None:
        out["Parameters"] = check_parameters(v["Parameters"], f"{field}.Parameters")
    return out


def check_order(value: Any, field: str) -> dict[str, Any]:
    v = _struct(value, field, {"Column", "SortOrder"}, ("Column", "SortOrder"))
    return {
        "Column": check_name(v["Column"], f"{field}.Column"),
        "SortOrder": _required_int(v["SortOrder"], f"{field}.SortOrder", min=0, max=1),
    }


def check_skewed_info(value: Any, field: str) -> dict[str, Any]:
    v = _struct(value, field, {"SkewedColumnNames", "SkewedColumnValues", "SkewedColumnValueLocationMaps"})
    out: dict[str, Any] = {}
    for key in ("SkewedColumnNames", "SkewedColumnValues"):
        if v.get(key) is not None:
            out[key] = check_string_list(v[key], f"{field}.{key}")
    maps = v.get("SkewedColumnValueLocationMaps")
    if maps is not None:
        if not isinstance(maps, dict):
            invalid(f"{field}.SkewedColumnValueLocationMaps", "must be a map of strings")
        out["SkewedColumnValueLocationMaps"] = {
            _required_str(k, f"{field}.SkewedColumnValueLocationMaps key"): _required_str(
                m, f"{field}.SkewedColumnValueLocationMaps[{k!r}]"
            )
            for k, m in maps.items()
        }
    return out


def check_schema_reference(value: Any, field: str) -> dict[str, Any]:
    v = _struct(value, field, {"SchemaId", "SchemaVersionId", "SchemaVersionNumber"})
    out: dict[str, Any] = {}
    if v.get("SchemaId") is not None:
        sid = _struct(v["SchemaId"], f"{field}.SchemaId", {"SchemaArn", "SchemaName", "RegistryName"})
        out["SchemaId"] = {
            k: check_string(
                sid[k], f"{field}.SchemaId.{k}", min_bytes=1, max_bytes=255 if k != "SchemaArn" else 10240
            )
            for k in sid
            if sid[k] is not None
        }
    if v.get("SchemaVersionId") is not None:
        out["SchemaVersionId"] = check_string(
            v["SchemaVersionId"],
            f"{field}.SchemaVersionId",
            min_bytes=36,
            max_bytes=36,
            pattern="single_line",
        )
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


def check_storage_descriptor(value: Any, field: str) -> dict[str, Any]:
    v = _struct(value, field, _SD_FIELDS)
    out: dict[str, Any] = {}
    if v.get("Columns") is not None:
        out["Columns"] = _columns(v["Columns"], f"{field}.Columns")
    if v.get("Location") is not None:
        out["Location"] = check_string(
            v["Location"], f"{field}.Location", max_bytes=2056, pattern="multi_line"
        )
    if v.get("AdditionalLocations") is not None:
        out["AdditionalLocations"] = check_string_list(
            v["AdditionalLocations"], f"{field}.AdditionalLocations"
        )
    for key in ("InputFormat", "OutputFormat"):
        if v.get(key) is not None:
            out[key] = check_string(v[key], f"{field}.{key}", max_bytes=128, pattern="single_line")
    for key in ("Compressed", "StoredAsSubDirectories"):
        if v.get(key) is not None:
            out[key] = check_bool(v[key], f"{field}.{key}")
    if v.get("NumberOfBuckets") is not None:
        out["NumberOfBuckets"] = check_int(v["NumberOfBuckets"], f"{field}.NumberOfBuckets")
    if v.get("SerdeInfo") is not None:
        out["SerdeInfo"] = check_serde_info(v["SerdeInfo"], f"{field}.SerdeInfo")
    if v.get("BucketColumns") is not None:
        out["BucketColumns"] = check_string_list(
            v["BucketColumns"],
            f"{field}.BucketColumns",
            item_min_bytes=1,
            item_max_bytes=255,
            item_pattern="single_line",
        )
    if v.get("SortColumns") is not None:
        out["SortColumns"] = [
            check_order(o, f"{field}.SortColumns[{i}]")
            for i, o in enumerate(_list(v["SortColumns"], f"{field}.SortColumns") or [])
        ]
    if v.get("Parameters") is not None:
        out["Parameters"] = check_parameters(v["Parameters"], f"{field}.Parameters")
    if v.get("SkewedInfo") is not None:
        out["SkewedInfo"] = check_skewed_info(v["SkewedInfo"], f"{field}.SkewedInfo")
    if v.get("SchemaReference") is not None:
        out["SchemaReference"] = check_schema_reference(v["SchemaReference"], f"{field}.SchemaReference")
    return out


def check_table_identifier(value: Any, field: str) -> dict[str, Any]:
    v = _struct(value, field, {"CatalogId", "DatabaseName", "Name", "Region"})
    return {
        k: check_string(v[k], f"{field}.{k}", min_bytes=1, max_bytes=255, pattern="single_line")
        for k in ("CatalogId", "DatabaseName", "Name", "Region")
        if v.get(k) is not None
    }


_TABLE_INPUT_FIELDS = {
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
    v = _struct(value, field, _TABLE_INPUT_FIELDS, ("Name",))
    if v.get("ViewDefinition") is not None:
        invalid(f"{field}.ViewDefinition", "multi-dialect views are not supported by gluecat")
    out: dict[str, Any] = {"Name": check_db_or_table_name(v["Name"], f"{field}.Name")}
    if v.get("Description") is not None:
        out["Description"] = check_string(
            v["Description"], f"{field}.Description", max_bytes=2048, pattern="multi_line"
        )
    if v.get("Owner") is not None:
        out["Owner"] = check_string(
            v["Owner"], f"{field}.Owner", min_bytes=1, max_bytes=255, pattern="single_line"
        )
    for key in ("LastAccessTime", "LastAnalyzedTime"):
        if v.get(key) is not None:
            out[key] = check_timestamp(v[key], f"{field}.{key}")
    if v.get("Retention") is not None:
        out["Retention"] = check_int(v["Retention"], f"{field}.Retention", min=0)
    if v.get("StorageDescriptor") is not None:
        out["StorageDescriptor"] = check_storage_descriptor(
            v["StorageDescriptor"], f"{field}.StorageDescriptor"
        )
    if v.get("PartitionKeys") is not None:
        out["PartitionKeys"] = _columns(v["PartitionKeys"], f"{field}.PartitionKeys")
    for key in ("ViewOriginalText", "ViewExpandedText"):
        if v.get(key) is not None:
            out[key] = check_string(v[key], f"{field}.{key}", max_bytes=409_600)
    if v.get("TableType") is not None:
        out["TableType"] = check_string(v["TableType"], f"{field}.TableType", max_bytes=255)
    if v.get("Parameters") is not None:
        out["Parameters"] = check_parameters(v["Parameters"], f"{field}.Parameters")
    if v.get("TargetTable") is not None:
        out["TargetTable"] = check_table_identifier(v["TargetTable"], f"{field}.TargetTable")
    _check_key_names(out, field)
    return out


def _check_key_names(table: dict[str, Any], field: str) -> None:
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
        if col["Name"].lower() in seen:
            i = seen[col["Name"].lower()]
            invalid(
                f"{field}.PartitionKeys[{i}].Name",
                f"{keys[i]['Name']!r} is also StorageDescriptor.Columns[{j}]; a partition key cannot be a column",
            )


_PERMISSIONS = {
    "ALL",
    "SELECT",
    "ALTER",
    "DROP",
    "DELETE",
    "INSERT",
    "CREATE_DATABASE",
    "CREATE_TABLE",
    "DATA_LOCATION_ACCESS",
}


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
        out["Description"] = check_string(
            v["Description"], f"{field}.Description", max_bytes=2048, pattern="multi_line"
        )
    if v.get("LocationUri") is not None:
        out["LocationUri"] = check_string(
            v["LocationUri"], f"{field}.LocationUri", min_bytes=1, max_bytes=1024, pattern="multi_line"
        )
    if v.get("Parameters") is not None:
        out["Parameters"] = check_parameters(v["Parameters"], f"{field}.Parameters")
    perms = _list(v.get("CreateTableDefaultPermissions"), f"{field}.CreateTableDefaultPermissions")
    if perms is not None:
        checked = []
        for i, p in enumerate(perms):
            pf = f"{field}.CreateTableDefaultPermissions[{i}]"
            p = _struct(p, pf, {"Principal", "Permissions"})
            entry: dict[str, Any] = {}
            if p.get("Principal") is not None:
                principal = _struct(p["Principal"], f"{pf}.Principal", {"DataLakePrincipalIdentifier"})
                entry["Principal"] = {
                    k: check_string(principal[k], f"{pf}.Principal.{k}", min_bytes=1, max_bytes=255)
                    for k in principal
                    if principal[k] is not None
                }
            if p.get("Permissions") is not None:
                names = check_string_list(p["Permissions"], f"{pf}.Permissions") or []
                for j, name in enumerate(names):
                    if name not in _PERMISSIONS:
                        invalid(
                            f"{pf}.Permissions[{j}]",
                            f"{name!r} is not one of {', '.join(sorted(_PERMISSIONS))}",
                        )
                entry["Permissions"] = names
            checked.append(entry)
        out["CreateTableDefaultPermissions"] = checked
    if v.get("TargetDatabase") is not None:
        t = _struct(v["TargetDatabase"], f"{field}.TargetDatabase", {"CatalogId", "DatabaseName", "Region"})
        out["TargetDatabase"] = {
            k: check_string(
                t[k], f"{field}.TargetDatabase.{k}", min_bytes=1, max_bytes=255, pattern="single_line"
            )
            for k in t
            if t[k] is not None
        }
    if v.get("FederatedDatabase") is not None:
        f = _struct(v["FederatedDatabase"], f"{field}.FederatedDatabase", {"Identifier", "ConnectionName"})
        fed: dict[str, Any] = {}
        if f.get("Identifier") is not None:
            fed["Identifier"] = check_string(
                f["Identifier"],
                f"{field}.FederatedDatabase.Identifier",
                min_bytes=1,
                max_bytes=512,
                pattern="single_line",
            )
        if f.get("ConnectionName") is not None:
            fed["ConnectionName"] = check_string(
                f["ConnectionName"],
                f"{field}.FederatedDatabase.ConnectionName",
                min_bytes=1,
                max_bytes=255,
                pattern="single_line",
            )
        out["FederatedDatabase"] = fed
    return out


# -- the Partition API's structures ---------------------------------------------------------------


def _values(value: Any, field: str) -> list[str]:
    items = _list(value, field)
    if items is None:
        invalid(field, "is required")
    return [_required_str(v, f"{field}[{i}]", max_bytes=1024) for i, v in enumerate(items)]


def check_partition_input(value: Any, field: str = "PartitionInput") -> dict[str, Any]:
    v = _struct(
        value, field, {"Values", "LastAccessTime", "StorageDescriptor", "Parameters", "LastAnalyzedTime"}
    )
    out: dict[str, Any] = {"Values": _values(v.get("Values"), f"{field}.Values")}
    for key in ("LastAccessTime", "LastAnalyzedTime"):
        if v.get(key) is not None:
            out[key] = check_timestamp(v[key], f"{field}.{key}")
    if v.get("StorageDescriptor") is not None:
        out["StorageDescriptor"] = check_storage_descriptor(
            v["StorageDescriptor"], f"{field}.StorageDescriptor"
        )
    if v.get("Parameters") is not None:
        out["Parameters"] = check_parameters(v["Parameters"], f"{field}.Parameters")
    return out


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
    seen: set[str] = set()
    for i, key in enumerate(keys):
        if key.lower() in seen:
            invalid(f"{field}.Keys[{i}]", f"{key!r} appears twice")
        seen.add(key.lower())
    return {"IndexName": check_name(v["IndexName"], f"{field}.IndexName"), "Keys": keys}


def check_segment(value: Any, field: str = "Segment") -> dict[str, int]:
    v = _struct(value, field, {"SegmentNumber", "TotalSegments"}, ("SegmentNumber", "TotalSegments"))
    number = _required_int(v["SegmentNumber"], f"{field}.SegmentNumber", min=0)
    total = _required_int(v["TotalSegments"], f"{field}.TotalSegments", min=1, max=10)
    if number >= total:
        invalid(f"{field}.SegmentNumber", f"{number} must be less than TotalSegments ({total})")
    return {"SegmentNumber": number, "TotalSegments": total}


def check_expression(value: Any, field: str = "Expression", max_bytes: int = 2048) -> str | None:
    """A GetPartitions Expression: a predicate string of at most 2048 bytes (multi-line pattern)."""
    return check_string(value, field, max_bytes=max_bytes, pattern="multi_line")


# -- SearchTables -----------------------------------------------------------------------------------

_COMPARATORS = {"EQUALS", "GREATER_THAN", "LESS_THAN", "GREATER_THAN_EQUALS", "LESS_THAN_EQUALS"}


def check_sort_criteria(value: Any, field: str = "SortCriteria") -> list[dict[str, Any]] | None:
    items = _list(value, field, max_items=1)
    if items is None:
        return None
    out = []
    for i, c in enumerate(items):
        c = _struct(c, f"{field}[{i}]", {"FieldName", "Sort"})
        entry: dict[str, Any] = {}
        if c.get("FieldName") is not None:
            entry["FieldName"] = check_string(c["FieldName"], f"{field}[{i}].FieldName", max_bytes=1024)
        if c.get("Sort") is not None:
            if c["Sort"] not in ("ASC", "DESC"):
                invalid(f"{field}[{i}].Sort", f"{c['Sort']!r} is not ASC or DESC")
            entry["Sort"] = c["Sort"]
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
                entry[key] = check_string(p[key], f"{field}[{i}].{key}", max_bytes=1024)
        if p.get("Comparator") is not None:
            if p["Comparator"] not in _COMPARATORS:
                invalid(
                    f"{field}[{i}].Comparator",
                    f"{p['Comparator']!r} is not one of {', '.join(sorted(_COMPARATORS))}",
                )
            entry["Comparator"] = p["Comparator"]
        out.append(entry)
    return out


# -- column statistics ----------------------------------------------------------------------------

_COUNT = {"min": 0}


def _counts(v: dict[str, Any], field: str, names: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in names:
        out[name] = _required_int(v.get(name), f"{field}.{name}", **_COUNT)
    return out


def _min_max(v: dict[str, Any], field: str, check: Callable[[Any, str], Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in ("MinimumValue", "MaximumValue"):
        if v.get(name) is not None:
            out[name] = check(v[name], f"{field}.{name}")
    lo, hi = out.get("MinimumValue"), out.get("MaximumValue")
    if lo is not None and hi is not None and _order_value(lo) > _order_value(hi):
        invalid(f"{field}.MinimumValue", "is greater than MaximumValue")
    return out


def _order_value(v: Any) -> Any:
    if isinstance(v, dict):  # a DecimalNumber
        return int.from_bytes(v["UnscaledValue"], "big", signed=True) / (10 ** v["Scale"])
    return v


def _decimal_number(value: Any, field: str) -> dict[str, Any]:
    v = _struct(value, field, {"UnscaledValue", "Scale"}, ("UnscaledValue", "Scale"))
    if not isinstance(v["UnscaledValue"], (bytes, bytearray)):
        invalid(f"{field}.UnscaledValue", "must be bytes (a big-endian two's-complement integer)")
    return {"UnscaledValue": bytes(v["UnscaledValue"]), "Scale": _required_int(v["Scale"], f"{field}.Scale")}


def _long(value: Any, field: str) -> int:
    return _required_int(value, field)


def _double(value: Any, field: str) -> float:
    out = check_number(value, field, required=True)
    assert out is not None
    return out


def _date(value: Any, field: str) -> datetime:
    out = check_timestamp(value, field, required=True)
    assert out is not None
    return out


def _stats_boolean(v: dict[str, Any], field: str) -> dict[str, Any]:
    _struct(v, field, {"NumberOfTrues", "NumberOfFalses", "NumberOfNulls"})
    return _counts(v, field, ("NumberOfTrues", "NumberOfFalses", "NumberOfNulls"))


def _stats_ranged(check: Callable[[Any, str], Any]) -> Callable[[dict[str, Any], str], dict[str, Any]]:
    def stats(v: dict[str, Any], field: str) -> dict[str, Any]:
        _struct(v, field, {"MinimumValue", "MaximumValue", "NumberOfNulls", "NumberOfDistinctValues"})
        return {**_min_max(v, field, check), **_counts(v, field, ("NumberOfNulls", "NumberOfDistinctValues"))}

    return stats


def _stats_string(v: dict[str, Any], field: str) -> dict[str, Any]:
    _struct(v, field, {"MaximumLength", "AverageLength", "NumberOfNulls", "NumberOfDistinctValues"})
    out = _counts(v, field, ("MaximumLength", "NumberOfNulls", "NumberOfDistinctValues"))
    out["AverageLength"] = check_number(
        v.get("AverageLength"), f"{field}.AverageLength", min=0, required=True
    )
    return out


def _stats_binary(v: dict[str, Any], field: str) -> dict[str, Any]:
    _struct(v, field, {"MaximumLength", "AverageLength", "NumberOfNulls"})
    out = _counts(v, field, ("MaximumLength", "NumberOfNulls"))
    out["AverageLength"] = check_number(
        v.get("AverageLength"), f"{field}.AverageLength", min=0, required=True
    )
    return out


_STATISTICS: dict[str, tuple[str, Callable[[dict[str, Any], str], dict[str, Any]]]] = {
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
    data_field = f"{field}.StatisticsData"
    data = _struct(
        v["StatisticsData"], data_field, {"Type"} | {m for m, _ in _STATISTICS.values()}, ("Type",)
    )
    kind = data["Type"]
    if kind not in _STATISTICS:
        invalid(f"{data_field}.Type", f"{kind!r} is not one of {', '.join(sorted(_STATISTICS))}")
    member, check = _STATISTICS[kind]
    given = [m for m, _ in _STATISTICS.values() if data.get(m) is not None]
    if given != [member]:
        invalid(data_field, f"Type {kind} needs exactly the member {member}, but has {given or 'none'}")
    if not isinstance(data[member], dict):
        invalid(f"{data_field}.{member}", "must be a structure (dict)")
    return {
        "ColumnName": check_name(v["ColumnName"], f"{field}.ColumnName"),
        "ColumnType": _required_str(
            v["ColumnType"], f"{field}.ColumnType", max_bytes=20_000, pattern="single_line"
        ),
        "AnalyzedTime": check_timestamp(v["AnalyzedTime"], f"{field}.AnalyzedTime", required=True),
        "StatisticsData": {"Type": kind, member: check(data[member], f"{data_field}.{member}")},
    }
