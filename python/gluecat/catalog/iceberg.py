"""Iceberg tables registered the way Glue registers one (CreateTable's OpenTableFormatInput).

Glue writes the table's first metadata file itself, at ``<location>/metadata/00000-<uuid>.metadata.json``,
and keeps a Glue table of type EXTERNAL_TABLE whose Parameters say ``table_type = ICEBERG`` and
``metadata_location`` = that file, whose columns are the schema's (each with its Iceberg field id), and
which has no Hive partition keys (Iceberg partitions in its metadata). That is what Iceberg clients
(pyiceberg's and Iceberg's GlueCatalog) read back and commit to, with UpdateTable's VersionId as their
lock. The schema comes from the TableInput's columns and partition keys (Hive types; the partition
keys become an identity partition spec), or from IcebergInput.CreateIcebergTableInput.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from typing import Any

import pyarrow.fs as pafs
from sqlglot import exp
from sqlglot.errors import ParseError

from gluecat.catalog import grants
from gluecat.errors import InvalidInputException

FORMAT_VERSIONS = ("1", "2")
_PRIMITIVES = {
    exp.DataType.Type.TINYINT: "int",
    exp.DataType.Type.SMALLINT: "int",
    exp.DataType.Type.INT: "int",
    exp.DataType.Type.BIGINT: "long",
    exp.DataType.Type.FLOAT: "float",
    exp.DataType.Type.DOUBLE: "double",
    exp.DataType.Type.BOOLEAN: "boolean",
    exp.DataType.Type.TEXT: "string",
    exp.DataType.Type.VARCHAR: "string",
    exp.DataType.Type.CHAR: "string",
    exp.DataType.Type.BINARY: "binary",
    exp.DataType.Type.DATE: "date",
    exp.DataType.Type.TIMESTAMP: "timestamp",
}
_HIVE = {
    "int": "int",
    "long": "bigint",
    "float": "float",
    "double": "double",
    "boolean": "boolean",
    "string": "string",
    "uuid": "string",
    "time": "string",
    "binary": "binary",
    "date": "date",
    "timestamp": "timestamp",
    "timestamptz": "timestamp",
    "timestamp_ns": "timestamp",
    "timestamptz_ns": "timestamp",
}


class _Ids:
    def __init__(self) -> None:
        self.last = 0

    def __call__(self) -> int:
        self.last += 1
        return self.last


def _iceberg_type(hive: exp.DataType, ids: _Ids, where: str) -> Any:
    kind = hive.this
    if kind in _PRIMITIVES:
        return _PRIMITIVES[kind]
    if kind == exp.DataType.Type.DECIMAL:
        params = [int(p.name) for p in hive.expressions] or [10, 0]  # Hive's plain decimal
        precision, scale = [*params, 0][:2]
        return f"decimal({precision}, {scale})"
    if kind == exp.DataType.Type.ARRAY:
        element_id = ids()
        return {
            "type": "list",
            "element-id": element_id,
            "element": _iceberg_type(hive.expressions[0], ids, f"{where} element"),
            "element-required": False,
        }
    if kind == exp.DataType.Type.MAP:
        key_id, value_id = ids(), ids()
        return {
            "type": "map",
            "key-id": key_id,
            "key": _iceberg_type(hive.expressions[0], ids, f"{where} key"),
            "value-id": value_id,
            "value": _iceberg_type(hive.expressions[1], ids, f"{where} value"),
            "value-required": False,
        }
    if kind == exp.DataType.Type.STRUCT:
        members = [(str(f.name), f.args["kind"]) for f in hive.expressions]
        field_ids = [ids() for _ in members]
        return {
            "type": "struct",
            "fields": [
                {"id": i, "name": name, "required": False, "type": _iceberg_type(t, ids, f"{where}.{name}")}
                for i, (name, t) in zip(field_ids, members, strict=True)
            ],
        }
    raise InvalidInputException(f"{where}: type {hive.sql('hive')} has no Iceberg type")


def _parse_hive(text: str, where: str) -> exp.DataType:
    try:
        return exp.DataType.build(text, dialect="hive")
    except (ParseError, ValueError) as e:
        raise InvalidInputException(f"{where}: {text!r} is not a Hive type that Iceberg can hold") from e


def schema_from_columns(columns: list[tuple[str, str, str | None]]) -> dict[str, Any]:
    """An Iceberg schema (schema-id 0) of Glue columns (name, Hive type, comment, where they came from)."""
    ids = _Ids()
    top = [ids() for _ in columns]
    fields = []
    for field_id, (name, hive_type, comment) in zip(top, columns, strict=True):
        field: dict[str, Any] = {
            "id": field_id,
            "name": name,
            "required": False,
            "type": _iceberg_type(_parse_hive(hive_type, name), ids, name),
        }
        if comment:
            field["doc"] = comment
        fields.append(field)
    return {"type": "struct", "schema-id": 0, "fields": fields}


def schema_from_iceberg(schema: dict[str, Any]) -> dict[str, Any]:
    """CreateIcebergTableInput's Schema (Glue's IcebergSchema) as Iceberg metadata writes it."""
    out: dict[str, Any] = {"type": "struct", "schema-id": schema.get("SchemaId", 0), "fields": []}
    if schema.get("IdentifierFieldIds"):
        out["identifier-field-ids"] = schema["IdentifierFieldIds"]
    for f in schema["Fields"]:
        field = {"id": f["Id"], "name": f["Name"], "required": f["Required"], "type": f["Type"]}
        if f.get("Doc"):
            field["doc"] = f["Doc"]
        out["fields"].append(field)
    return out


def hive_type(iceberg: Any) -> str:
    """The Glue (Hive) column type of an Iceberg type, as Iceberg's Glue catalogs write it."""
    if isinstance(iceberg, str):
        if iceberg.startswith("decimal"):
            return iceberg.replace(" ", "")
        if iceberg.startswith("fixed"):
            return "binary"
        return _HIVE.get(iceberg, "string")
    kind = iceberg.get("type")
    if kind == "list":
        return f"array<{hive_type(iceberg['element'])}>"
    if kind == "map":
        return f"map<{hive_type(iceberg['key'])},{hive_type(iceberg['value'])}>"
    fields = ",".join(f"{f['name']}:{hive_type(f['type'])}" for f in iceberg.get("fields", []))
    return f"struct<{fields}>"


def glue_columns(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The Glue columns of an Iceberg schema, with the field parameters Iceberg's Glue catalogs write."""
    out = []
    for f in schema["fields"]:
        column: dict[str, Any] = {
            "Name": f["name"],
            "Type": hive_type(f["type"]),
            "Parameters": {
                "iceberg.field.id": str(f["id"]),
                "iceberg.field.optional": str(not f["required"]).lower(),
                "iceberg.field.current": "true",
            },
        }
        if f.get("doc"):
            column["Comment"] = f["doc"]
        out.append(column)
    return out


def _max_id(value: Any) -> int:
    if isinstance(value, dict):
        found = [
            v
            for k, v in value.items()
            if k in ("id", "element-id", "key-id", "value-id") and isinstance(v, int)
        ]
        return max([*found, *(_max_id(v) for v in value.values())], default=0)
    if isinstance(value, list):
        return max((_max_id(v) for v in value), default=0)
    return 0


def metadata(
    version: str,
    location: str,
    schema: dict[str, Any],
    partition_fields: list[dict[str, Any]],
    sort_order: dict[str, Any],
    properties: dict[str, str],
) -> dict[str, Any]:
    """A new table's first metadata (Iceberg table spec, format version 1 or 2), with no snapshot."""
    spec = {"spec-id": 0, "fields": partition_fields}
    out: dict[str, Any] = {
        "format-version": int(version),
        "table-uuid": str(uuid.uuid4()),
        "location": location,
        "last-updated-ms": int(time.time() * 1000),
        "last-column-id": _max_id(schema),
        "current-schema-id": schema["schema-id"],
        "schemas": [schema],
        "default-spec-id": 0,
        "partition-specs": [spec],
        "last-partition-id": max((f["field-id"] for f in partition_fields), default=999),
        "default-sort-order-id": sort_order["order-id"],
        "sort-orders": [sort_order],
        "properties": properties,
        "refs": {},
        "snapshots": [],
        "snapshot-log": [],
        "metadata-log": [],
    }
    if version == "1":
        out["schema"] = schema
        out["partition-spec"] = partition_fields
    else:
        out["last-sequence-number"] = 0
    return out


def identity_spec(schema: dict[str, Any], keys: list[str]) -> list[dict[str, Any]]:
    by_name = {f["name"]: f["id"] for f in schema["fields"]}
    return [
        {"source-id": by_name[k], "field-id": 1000 + i, "name": k, "transform": "identity"}
        for i, k in enumerate(keys)
    ]


def spec_from_glue(spec: dict[str, Any] | None) -> list[dict[str, Any]]:
    """CreateIcebergTableInput's PartitionSpec fields, as Iceberg metadata writes them."""
    out = []
    for i, f in enumerate((spec or {}).get("Fields") or []):
        out.append(
            {
                "source-id": f["SourceId"],
                "field-id": f.get("FieldId", 1000 + i),
                "name": f["Name"],
                "transform": f["Transform"],
            }
        )
    return out


def sort_order_from_glue(order: dict[str, Any] | None) -> dict[str, Any]:
    if order is None:
        return {"order-id": 0, "fields": []}
    return {
        "order-id": order["OrderId"],
        "fields": [
            {
                "source-id": f["SourceId"],
                "transform": f["Transform"],
                "direction": f["Direction"],
                "null-order": f["NullOrder"],
            }
            for f in order["Fields"]
        ],
    }


def write_metadata(
    location: str, document: dict[str, Any], filesystem: Callable[[str], tuple[pafs.FileSystem, str]]
) -> str:
    """Write a table's first metadata file under ``location``; its path, as a location."""
    path = f"{location.rstrip('/')}/metadata/00000-{uuid.uuid4()}.metadata.json"
    fs, local = filesystem(path)
    try:
        fs.create_dir(local.rsplit("/", 1)[0], recursive=True)
        with fs.open_output_stream(local) as out:
            out.write(json.dumps(document, indent=2).encode())
    except (OSError, ValueError) as e:
        raise InvalidInputException(f"cannot write the Iceberg metadata at {path}: {e}") from e
    return path


def registered(
    table_input: dict[str, Any], open_table_format: dict[str, Any], default_location: str | None
) -> dict[str, Any]:
    """The Glue table to store for CreateTable with an OpenTableFormatInput, once its first Iceberg
    metadata file is written (``default_location``: where a table without a location goes)."""
    iceberg = open_table_format.get("IcebergInput")
    if iceberg is None:
        raise InvalidInputException("OpenTableFormatInput: needs IcebergInput (the only open table format)")
    version = iceberg.get("Version", "2")
    if version not in FORMAT_VERSIONS:
        raise InvalidInputException(
            f"OpenTableFormatInput.IcebergInput.Version: {version!r} is not an Iceberg format version "
            f"gluecat writes ({', '.join(FORMAT_VERSIONS)})"
        )
    sd = table_input.get("StorageDescriptor") or {}
    create = iceberg.get("CreateIcebergTableInput")
    if create is not None:
        location = create["Location"]
        schema = schema_from_iceberg(create["Schema"])
        spec = spec_from_glue(create.get("PartitionSpec"))
        order = sort_order_from_glue(create.get("WriteOrder"))
        properties = dict(create.get("Properties") or {})
    else:
        location = sd.get("Location") or default_location
        if not location:
            raise InvalidInputException(
                "TableInput.StorageDescriptor.Location: an Iceberg table needs a location (or its "
                "database a LocationUri)"
            )
        keys = table_input.get("PartitionKeys") or []
        columns = [*(sd.get("Columns") or []), *keys]
        schema = schema_from_columns(
            [(c["Name"], c.get("Type") or "string", c.get("Comment")) for c in columns]
        )
        spec, order, properties = (
            identity_spec(schema, [k["Name"] for k in keys]),
            sort_order_from_glue(None),
            {},
        )
    # Where the table goes, whether CreateIcebergTableInput or the database's folder says it: placed data,
    # for the caller the call acts for (the server's check of the request sees the named one only).
    grants.require_placing(location)
    path = write_metadata(
        location, metadata(version, location.rstrip("/"), schema, spec, order, properties), filesystem
    )
    return {
        **table_input,
        "TableType": table_input.get("TableType") or "EXTERNAL_TABLE",
        "Parameters": {
            **(table_input.get("Parameters") or {}),
            "table_type": "ICEBERG",
            "metadata_location": path,
        },
        "StorageDescriptor": {**sd, "Location": location, "Columns": glue_columns(schema)},
        "PartitionKeys": [],
    }


def filesystem(location: str) -> tuple[pafs.FileSystem, str]:
    """The file system and path of a location (a URI, or a local path)."""
    if "://" in location or location.startswith("file:"):
        return pafs.FileSystem.from_uri(location)
    return pafs.LocalFileSystem(), location
