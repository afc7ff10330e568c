"""The documents' request rules that botocore's model does not hold, and named checks of Glue structures.

Request validation is gluecat.api.validate's walker over the service model. What is here is only what
the model cannot say: the rules that span fields (partition keys against columns, a segment below its
total, statistics bounds, ...), and where the documents (the seeds, which are the contract) differ from
the model (PartitionInput must have Values; partition values are any text, even empty; CreateTable and
UpdateTable need a TableInput). Database and table names are folded to lowercase, as Glue stores them.

Each ``check_*`` takes what the caller passed and returns the normalized copy, or raises
InvalidInputException whose message starts with the field path, e.g.
``TableInput.StorageDescriptor.Columns[2].Name: must be at least 1 byte long (it is 0)``.
"""

from __future__ import annotations

import functools
import itertools
import operator
import re
from decimal import Decimal
from typing import Any

from gluecat import uniform
from gluecat.api import validate
from gluecat.api.patterns import (
    Pattern,
    check_bool,
    check_db_or_table_name,
    check_enum,
    check_int,
    check_name,
    check_number,
    check_string,
    check_text,
    check_timestamp,
    check_transaction_id,
    invalid,
)
from gluecat.api.validate import Memo
from gluecat.errors import InvalidInputException

__all__ = [
    "Checked",
    "Pattern",
    "check_bool",
    "check_column_statistics",
    "check_database_input",
    "check_db_or_table_name",
    "check_enum",
    "check_expression",
    "check_int",
    "check_name",
    "check_number",
    "check_parameters",
    "check_partition_index",
    "check_partition_input",
    "check_partition_inputs",
    "check_partition_value_list",
    "check_property_predicates",
    "check_segment",
    "check_sort_criteria",
    "check_storage_descriptor",
    "check_string",
    "check_string_list",
    "check_table_input",
    "check_text",
    "check_timestamp",
    "check_transaction_id",
    "invalid",
    "partition_input_fields",
    "table_input_fields",
]

Checked = Memo
"""What one request has checked already (see gluecat.api.validate): pass the same one for the items of
a batch, and what they share is checked once."""


def _glue(shape: str, value: Any, field: str, checked: Checked | None = None) -> Any:
    return validate.check("glue", shape, value, field, checked)


def check_table_input(value: Any, field: str = "TableInput") -> dict[str, Any]:
    out: dict[str, Any] = _glue("TableInput", value, field)
    return out


def check_database_input(value: Any, field: str = "DatabaseInput") -> dict[str, Any]:
    out: dict[str, Any] = _glue("DatabaseInput", value, field)
    return out


def check_storage_descriptor(value: Any, field: str, checked: Checked | None = None) -> dict[str, Any]:
    out: dict[str, Any] = _glue("StorageDescriptor", value, field, checked)
    return out


def check_partition_input(
    value: Any, field: str = "PartitionInput", checked: Checked | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = _glue("PartitionInput", value, field, checked)
    return out


def check_partition_value_list(value: Any, field: str) -> list[str]:
    out: list[str] = _glue("PartitionValueList", value, field)["Values"]
    return out


def check_partition_index(value: Any, field: str = "PartitionIndex") -> dict[str, Any]:
    out: dict[str, Any] = _glue("PartitionIndex", value, field)
    return out


def check_segment(value: Any, field: str = "Segment") -> dict[str, int]:
    out: dict[str, int] = _glue("Segment", value, field)
    return out


def check_sort_criteria(value: Any, field: str = "SortCriteria") -> list[dict[str, Any]] | None:
    return None if value is None else list(_glue("SortCriteria", value, field))


def check_property_predicates(value: Any, field: str = "Filters") -> list[dict[str, Any]] | None:
    return None if value is None else list(_glue("SearchPropertyPredicates", value, field))


def check_column_statistics(value: Any, field: str) -> dict[str, Any]:
    out: dict[str, Any] = _glue("ColumnStatistics", value, field)
    return out


def check_parameters(value: Any, field: str) -> dict[str, str] | None:
    return None if value is None else dict(_glue("ParametersMap", value, field))


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
    if value is None:
        return None
    if not isinstance(value, list | tuple):
        invalid(field, f"must be a list, not {type(value).__name__}")
    if len(value) < min_items:
        invalid(field, f"must have at least {min_items} item{'s' if min_items != 1 else ''}")
    if max_items is not None and len(value) > max_items:
        invalid(field, f"has {len(value)} items; at most {max_items} are allowed")
    return [
        check_text(
            v, f"{field}[{i}]", min_bytes=item_min_bytes, max_bytes=item_max_bytes, pattern=item_pattern
        )
        for i, v in enumerate(value)
    ]


def check_expression(
    value: Any, field: str = "Expression", max_bytes: int = 2048, *, pattern: Pattern = "multi_line"
) -> str | None:
    """An Expression of at most ``max_bytes`` bytes. GetPartitions' is a predicate string matching the
    URI address multi-line pattern (the default); GetTables' is single-line (pass pattern="single_line")."""
    return check_string(value, field, max_bytes=max_bytes, pattern=pattern)


@functools.cache
def table_input_fields() -> frozenset[str]:
    """The members of a TableInput (what recreates a table as GetTable returned it)."""
    return _members("TableInput")


@functools.cache
def partition_input_fields() -> frozenset[str]:
    """The members of a PartitionInput (what recreates a partition as GetPartition returned it)."""
    return _members("PartitionInput")


def _members(shape: str) -> frozenset[str]:
    from gluecat.api import model

    return frozenset(model.service_model("glue").shape_for(shape).members)  # type: ignore[attr-defined]


# -- the documents' rules ---------------------------------------------------------------------------

# The documents require these where the model does not.
validate.REQUIRED.update(
    {
        "CreateTableRequest": ("TableInput",),
        "UpdateTableRequest": ("TableInput",),
        "PartitionInput": ("Values",),  # "a valid input must have them" (001)
    }
)


def _values(value: Any, field: str, memo: Memo) -> list[str]:
    """Partition values: any text, even empty, of at most 1,024 bytes each (001); the model's ValueString
    would refuse an empty value, which the documents allow (index backfill reports them, 004)."""
    if type(value) is list:
        try:
            # ASCII text is one byte a character: the common case needs no encoding to measure it.
            if "".join(value).isascii() and max(map(len, value), default=0) <= 1024:
                return list(value)
        except TypeError:  # not all strings: checked one by one below
            pass
    if not isinstance(value, list | tuple):
        invalid(field, f"must be a list, not {type(value).__name__}")
    return [
        v
        if type(v) is str and len(v) <= 1024 and v.isascii()
        else check_text(v, f"{field}[{i}]", max_bytes=1024)
        for i, v in enumerate(value)
    ]


def _bounded_values(value: Any, field: str, memo: Memo) -> list[str]:
    if isinstance(value, list | tuple) and len(value) > 100:
        invalid(field, f"has {len(value)} items; at most 100 are allowed")
    return _values(value, field, memo)


def _value_text(value: Any, field: str, memo: Memo) -> str:
    """A "Value string, not more than 1024 bytes long" (000): the model's ValueString also needs a byte."""
    return check_text(value, field, max_bytes=1024)


validate.CHECKERS.update({"ValueStringList": _values, "BoundedPartitionValueList": _bounded_values})
validate.MEMBERS.update(
    {("SearchTablesRequest", "SearchText"): _value_text, ("SortCriterion", "FieldName"): _value_text}
)


# Hive's complex types (array<...>, map<...>, struct<...>, uniontype<...>), which a partition key may not
# have: "Only primitive types are supported as partition keys" (000).
_COMPLEX_TYPE = re.compile(r"\s*(array|map|struct|uniontype)\s*<", re.IGNORECASE)


def _table_input(table: dict[str, Any], field: str) -> None:
    if "ViewDefinition" in table:
        # Newer Glue has it; the documents do not, so it is named rather than silently dropped.
        invalid(f"{field}.ViewDefinition", "multi-dialect views are not supported by gluecat")
    table["Name"] = check_db_or_table_name(table["Name"], f"{field}.Name")
    # Partition keys are unique and are not also data columns (Hive compares names case-insensitively).
    keys = table.get("PartitionKeys") or []
    seen: dict[str, int] = {}
    for i, key in enumerate(keys):
        if _COMPLEX_TYPE.match(key.get("Type") or ""):
            invalid(
                f"{field}.PartitionKeys[{i}].Type",
                f"{key['Type'][:40]!r} is not a primitive type: only primitive types are supported as "
                "partition keys",
            )
        name = key["Name"].lower()
        if name in seen:
            invalid(
                f"{field}.PartitionKeys[{i}].Name", f"{key['Name']!r} repeats PartitionKeys[{seen[name]}]"
            )
        seen[name] = i
    for j, column in enumerate((table.get("StorageDescriptor") or {}).get("Columns") or []):
        k = seen.get(column["Name"].lower())
        if k is not None:
            invalid(
                f"{field}.PartitionKeys[{k}].Name",
                f"{keys[k]['Name']!r} is also StorageDescriptor.Columns[{j}] ({column['Name']!r}); "
                "a partition key cannot be a column",
            )


def _database_input(database: dict[str, Any], field: str) -> None:
    database["Name"] = check_db_or_table_name(database["Name"], f"{field}.Name")


def _partition_index(index: dict[str, Any], field: str) -> None:
    seen: dict[str, int] = {}
    for i, key in enumerate(index["Keys"]):
        if key.lower() in seen:
            invalid(f"{field}.Keys[{i}]", f"{key!r} appears twice (also Keys[{seen[key.lower()]}])")
        seen[key.lower()] = i


def _schema_reference(reference: dict[str, Any], field: str) -> None:
    if "SchemaId" not in reference and "SchemaVersionId" not in reference:
        invalid(field, "needs SchemaId or SchemaVersionId")


def _schema_id(schema_id: dict[str, Any], field: str) -> None:
    if "SchemaArn" not in schema_id and "SchemaName" not in schema_id:
        invalid(field, "needs SchemaArn or SchemaName")


def _segment(segment: dict[str, Any], field: str) -> None:
    number, total = segment["SegmentNumber"], segment["TotalSegments"]
    if number >= total:
        invalid(f"{field}.SegmentNumber", f"{number} must be less than TotalSegments ({total})")


_STATISTICS_MEMBERS = {
    "BOOLEAN": "BooleanColumnStatisticsData",
    "DATE": "DateColumnStatisticsData",
    "DECIMAL": "DecimalColumnStatisticsData",
    "DOUBLE": "DoubleColumnStatisticsData",
    "LONG": "LongColumnStatisticsData",
    "STRING": "StringColumnStatisticsData",
    "BINARY": "BinaryColumnStatisticsData",
}


def _statistics_data(data: dict[str, Any], field: str) -> None:
    kind = check_enum(data["Type"], f"{field}.Type", tuple(_STATISTICS_MEMBERS))
    member = _STATISTICS_MEMBERS[kind]
    given = [m for m in _STATISTICS_MEMBERS.values() if data.get(m) is not None]
    if given != [member]:
        invalid(field, f"Type {kind} needs exactly the member {member}, but has {', '.join(given) or 'none'}")


# Hive's and Spark's decimals hold at most 38 digits, at a scale of 0 to 38 (Hive's DECIMAL(p, s) limits).
_DECIMAL_DIGITS = 38


def decimal_holds(unscaled: int, scale: int) -> bool:
    """Whether some decimal column (Hive's and Spark's, at most 38 digits) holds unscaled * 10**-scale."""
    return abs(unscaled) < 10**_DECIMAL_DIGITS and 0 <= scale <= _DECIMAL_DIGITS


def _decimal_number(value: dict[str, Any], field: str) -> None:
    # A bound no decimal column can hold is a wrong one; unchecked, a Scale of 2**31 - 1 or an
    # UnscaledValue of thousands of digits cost gigabytes (or failed with ValueError) wherever the
    # value is written out as a number: in this check, and in every Spark load of the table.
    unscaled = value["UnscaledValue"]
    if not unscaled:
        invalid(
            f"{field}.UnscaledValue", "must hold at least one byte (a big-endian two's complement integer)"
        )
    # (17 bytes hold any 38 digits: longer is refused before it is made a number.)
    if len(unscaled) > 17 or not decimal_holds(int.from_bytes(unscaled, "big", signed=True), 0):
        invalid(
            f"{field}.UnscaledValue", f"has more than {_DECIMAL_DIGITS} digits, more than a decimal holds"
        )
    if not 0 <= value["Scale"] <= _DECIMAL_DIGITS:
        invalid(f"{field}.Scale", f"must be between 0 and {_DECIMAL_DIGITS}, not {value['Scale']}")


def _comparable(value: Any) -> Any:
    if isinstance(value, dict):
        # A DecimalNumber, compared exactly: a float would round, and 10**Scale could be huge.
        return Decimal(f"{int.from_bytes(value['UnscaledValue'], 'big', signed=True)}E{-value['Scale']}")
    return value


def _bounds(data: dict[str, Any], field: str) -> None:
    low, high = data.get("MinimumValue"), data.get("MaximumValue")
    if low is not None and high is not None and _comparable(low) > _comparable(high):
        invalid(f"{field}.MinimumValue", "is greater than MaximumValue")


validate.SHAPE_RULES["ColumnStatisticsData"] = _statistics_data
validate.RULES.update(
    {
        "TableInput": _table_input,
        "DatabaseInput": _database_input,
        "PartitionIndex": _partition_index,
        "SchemaReference": _schema_reference,
        "SchemaId": _schema_id,
        "Segment": _segment,
        "DateColumnStatisticsData": _bounds,
        "DecimalColumnStatisticsData": _bounds,
        "DecimalNumber": _decimal_number,
        "DoubleColumnStatisticsData": _bounds,
        "LongColumnStatisticsData": _bounds,
    }
)


# -- batches of partitions ----------------------------------------------------------------------------


def check_partition_inputs(items: list[Any], field: str) -> list[dict[str, Any]]:
    """check_partition_input of each of a batch's partitions (named ``field[i]``). A batch whose
    partitions differ only in their values and locations (what Spark's partition DDL, crawlers and bulk
    loaders send) is checked in a few passes over the whole batch instead of partition by partition."""
    fast = _uniform_partition_inputs(items, field)
    if fast is not None:
        return fast
    checked: Checked = {}
    return [check_partition_input(p, f"{field}[{i}]", checked) for i, p in enumerate(items)]


def _partition_input_list(value: Any, field: str, memo: Memo) -> list[dict[str, Any]]:
    """BatchCreatePartition's PartitionInputList (at most 100, as the model says), batched as above."""
    if not isinstance(value, list | tuple):
        invalid(field, f"must be a list, not {type(value).__name__}")
    if len(value) > 100:
        invalid(field, f"has {len(value)} items; at most 100 are allowed")
    return check_partition_inputs(list(value), field)


validate.CHECKERS["PartitionInputList"] = _partition_input_list

_UNIFORM_MEMBERS = frozenset({"Values", "StorageDescriptor"})


def _uniform_partition_inputs(items: list[Any], field: str) -> list[dict[str, Any]] | None:
    """The checked inputs, if each holds {"Values": [printable ASCII of at most 1,024 characters, ...],
    "StorageDescriptor": the first's members (the same objects, or equal ones of the same plain JSON types:
    a request decoded from the wire shares none) but a printable ASCII Location of at most 2,056
    characters} and any other members of its own (Parameters, ...), and all are valid; else None, and the
    caller checks them one by one (and so names the first fault). Printable ASCII is one byte a character
    and inside both line patterns, which is what check_text's own fast path accepts."""
    if not items or set(map(type, items)) != {dict}:
        return None
    try:
        values = list(map(operator.itemgetter("Values"), items))
        sds = list(map(operator.itemgetter("StorageDescriptor"), items))
    except KeyError:
        return None
    if set(map(type, values)) != {list}:
        return None
    flat = list(itertools.chain.from_iterable(values))
    if flat and (set(map(type, flat)) != {str} or not "".join(flat).isascii() or max(map(len, flat)) > 1024):
        return None
    locations = uniform.all_but_alike(sds, "Location")
    if locations is None or set(map(type, locations)) != {str}:
        return None
    joined = "".join(locations)
    if not joined.isascii() or not joined.isprintable() or max(map(len, locations)) > 2056:
        return None
    try:
        checked = check_storage_descriptor(sds[0], f"{field}[0].StorageDescriptor")
        shared = {k: v for k, v in checked.items() if k != "Location"}
        if uniform.members_are(items, _UNIFORM_MEMBERS):
            return [
                {"Values": list(v), "StorageDescriptor": {**shared, "Location": location}}
                for v, location in zip(values, locations, strict=True)
            ]
        return _with_own_members(items, locations, shared, field)
    except InvalidInputException:
        # Checked one by one, a fault met here may come after another (the first partition's
        # Parameters before its descriptor): the caller names the one met first.
        return None


def _with_own_members(
    items: list[dict[str, Any]], locations: list[str], shared: dict[str, Any], field: str
) -> list[dict[str, Any]]:
    """Each partition's members but its descriptor checked as a PartitionInput of its own, and the
    descriptor the first's checked members with its own location, in the partition's member order."""
    memo: Checked = {}
    out = []
    for i, (item, location) in enumerate(zip(items, locations, strict=True)):
        rest = check_partition_input(
            {k: v for k, v in item.items() if k != "StorageDescriptor"}, f"{field}[{i}]", memo
        )
        sd = {**shared, "Location": location}
        out.append(
            {
                k: sd if k == "StorageDescriptor" else rest[k]
                for k in item
                if k in rest or k == "StorageDescriptor"
            }
        )
    return out
