"""The Python half of the Spark shim: answers io.gluecat.spark.PythonCatalog calls from gluecat.Catalog.

Each call carries one operation and a JSON document; the answer is {"ok": result} or
{"error": <Glue error code>, "message": ...} so the shim can raise Spark's own exception with our message.
Calls are coarse (a whole table, a whole partition list, one commit) because each is a Py4J round trip.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import pyarrow.compute as pc
import pyarrow.fs as pafs

from gluecat import Catalog
from gluecat.api import shapes
from gluecat.api.pages import every
from gluecat.api.partition_names import partition_namer, partition_names
from gluecat.errors import AlreadyExistsException, EntityNotFoundException, GlueError, InvalidInputException
from gluecat.expressions.spark import TooDeep, parse_spark_filters
from gluecat.gc_pause import gc_paused
from gluecat.spark import formats

# Glue keeps the namespace comment and location in fields of their own, Spark in reserved properties.
_DB_FIELDS = {"comment": "Description", "location": "LocationUri"}
# Spark's reserved table properties, kept in Glue's own fields rather than Parameters.
_RESERVED = {"provider", "location", "comment", "owner", "external", "is_managed_location"}
_BATCH = 100  # BatchCreatePartition's and BatchGetPartition's comfortable page
# Glue keeps partition keys apart from the columns; where Spark declared them elsewhere than last (a
# DataFrameWriterV2 partitionedBy, a CTAS), Spark's column order is kept here so positional writes line up.
COLUMN_ORDER = "gluecat.spark.column_order"


def _as_of(args: dict[str, Any]) -> datetime | None:
    """The ``as_of`` argument (ISO 8601 with offset) as a time, or None."""
    text = args.get("as_of")
    if text is None:
        return None
    try:
        return datetime.fromisoformat(text)
    except ValueError as e:
        raise InvalidInputException(f"as_of: {text!r} is not an ISO 8601 time") from e


def _pushable(spark_filter: dict[str, Any]) -> bool:
    """Whether a pushed filter is within what gluecat evaluates; a filter nested too deeply is left to
    Spark, which applies every partition filter again to the partitions the catalog returns."""
    try:
        parse_spark_filters([spark_filter])
    except TooDeep:
        return False
    except GlueError:
        return True  # refused for another reason: the catalog call says why
    return True


def table_input(table: dict[str, Any]) -> dict[str, Any]:
    """The TableInput that recreates a table as GetTable returned it."""
    return {k: table[k] for k in shapes.table_input_fields() if k in table}


def _visible(path: str) -> bool:
    name = path.rstrip("/").rsplit("/", 1)[-1]
    return not name.startswith(("_", "."))


def _filesystem(location: str) -> tuple[pafs.FileSystem, str]:
    """The file system and path of a table or partition location (a URI, or a local path)."""
    if "://" in location or location.startswith("file:"):
        return pafs.FileSystem.from_uri(location)
    return pafs.LocalFileSystem(), location


def delete_files(location: str) -> int:
    """Deletes the data files directly in a folder (not hidden ones, not subfolders); how many went."""
    fs, path = _filesystem(location)
    gone = 0
    for info in fs.get_file_info(pafs.FileSelector(path, allow_not_found=True)):
        if info.type == pafs.FileType.File and _visible(info.path):
            fs.delete_file(info.path)
            gone += 1
    return gone


def _delete_tree(location: str) -> None:
    fs, path = _filesystem(location)
    if fs.get_file_info(path).type != pafs.FileType.NotFound:
        fs.delete_dir(path)


class Backend:
    """Implements io.gluecat.spark.PythonCatalog for one warehouse."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def call(self, operation: str, arguments: str) -> str:
        handler = getattr(self, "op_" + operation, None)
        try:
            if handler is None:
                raise InvalidInputException(f"unknown gluecat backend operation {operation!r}")
            with gc_paused():  # a call builds documents and lists, none in a reference cycle
                return json.dumps({"ok": handler(json.loads(arguments))})
        except GlueError as e:
            return json.dumps({"error": e.code, "message": e.message})
        except RecursionError:  # json.loads of a document nested past Python's stack
            return json.dumps(
                {"error": "InvalidInputException", "message": "the request is nested too deeply"}
            )
        except formats.Unreadable as e:
            return json.dumps({"error": "InvalidInputException", "message": str(e)})
        except Exception as e:  # a Python bug must still reach Spark as a message, not a Py4J trace
            return json.dumps({"error": "InternalServiceException", "message": f"{type(e).__name__}: {e}"})

    # -- namespaces ----------------------------------------------------------------------------------

    def op_list_databases(self, args: dict[str, Any]) -> list[str]:
        return [db["Name"] for db in every(self.catalog.get_databases, "DatabaseList")]

    def op_get_database(self, args: dict[str, Any]) -> dict[str, str]:
        db = self.catalog.get_database(Name=args["name"])["Database"]
        props = dict(db.get("Parameters", {}))
        for spark_key, glue_key in _DB_FIELDS.items():
            if db.get(glue_key):
                props[spark_key] = db[glue_key]
        return props

    def op_create_database(self, args: dict[str, Any]) -> None:
        props = dict(args.get("properties", {}))
        db: dict[str, Any] = {"Name": args["name"]}
        for spark_key, glue_key in _DB_FIELDS.items():
            if spark_key in props:
                db[glue_key] = props.pop(spark_key)
        props.pop("owner", None)
        db["Parameters"] = props
        self.catalog.create_database(DatabaseInput=db)

    def op_alter_database(self, args: dict[str, Any]) -> None:
        db = self.catalog.get_database(Name=args["name"])["Database"]
        params = dict(db.get("Parameters", {}))
        new: dict[str, Any] = {"Name": db["Name"]}
        for key in ("Description", "LocationUri"):
            if key in db:
                new[key] = db[key]
        for key, value in args.get("set", {}).items():
            if key in _DB_FIELDS:
                new[_DB_FIELDS[key]] = value
            elif key != "owner":
                params[key] = value
        for key in args.get("remove", []):
            params.pop(key, None)
        new["Parameters"] = params
        self.catalog.update_database(Name=args["name"], DatabaseInput=new)

    def op_drop_database(self, args: dict[str, Any]) -> bool:
        tables = self.op_list_tables(args)
        if tables and not args.get("cascade"):
            raise InvalidInputException(
                f"Database {args['name']} is not empty ({len(tables)} tables); use DROP NAMESPACE ... CASCADE"
            )
        self.catalog.delete_database(Name=args["name"])
        return True

    # -- tables --------------------------------------------------------------------------------------

    def op_list_tables(self, args: dict[str, Any]) -> list[str]:
        return [t["Name"] for t in every(self.catalog.get_tables, "TableList", DatabaseName=args["name"])]

    def _table(self, args: dict[str, Any]) -> dict[str, Any]:
        """The Glue table, as of ``args["as_of"]`` when given."""
        got = self.catalog.get_table(
            DatabaseName=args["database"], Name=args["name"], QueryAsOfTime=_as_of(args)
        )
        table: dict[str, Any] = got["Table"]
        return table

    def _location(self, table: dict[str, Any]) -> str:
        location = (table.get("StorageDescriptor") or {}).get("Location")
        if not location:
            raise InvalidInputException(
                f"Table {table['DatabaseName']}.{table['Name']} has no StorageDescriptor.Location to read or write"
            )
        return str(location).rstrip("/")

    def _default_location(self, database: str, name: str) -> str:
        db = self.catalog.get_database(Name=database)["Database"]
        if db.get("LocationUri"):
            return f"{db['LocationUri'].rstrip('/')}/{name}"
        return f"{self.catalog.warehouse.rstrip('/')}/{database}.db/{name}"

    def op_get_table(self, args: dict[str, Any]) -> dict[str, Any]:
        """The table as Spark needs it; ``as_of`` (ISO time) or ``version`` (a Glue VersionId) time-travels.

        TIMESTAMP AS OF reads the table and its partitions as they were then. VERSION AS OF reads that table
        version's schema and descriptor; Glue versions tables, not partitions, so the partitions are those
        as of the moment the version was replaced (or now, for the current version).
        """
        unchanged_at = None
        if args.get("version") is not None:
            table, as_of = self._table_version(args)
        else:
            if args.get("identities_since") is not None and args.get("as_of") is None:
                # The shim's copy of the partition identities, checked here as op_partition_identities
                # would: partition DDL loads the table just before its existence checks.
                unchanged_at = self.catalog.partitions_unchanged_since(
                    args["database"],
                    args["name"],
                    args["identities_since"],
                    args.get("identities_applied", []),
                )
            table, as_of = self._table(args), _as_of(args)
        sd = table.get("StorageDescriptor") or {}

        def columns(cols: list[dict[str, Any]]) -> list[dict[str, str]]:
            return [
                {"name": c["Name"], "type": c.get("Type", "string"), "comment": c.get("Comment", "")}
                for c in cols
            ]

        props = dict(table.get("Parameters", {}))
        fmt: str | None = None
        options: dict[str, str] = {}
        unreadable: str | None = None
        try:
            fmt, options = formats.spark_source(table)
            props["provider"] = fmt
        except formats.Unreadable as e:
            unreadable = (
                f"table {table['DatabaseName']}.{table['Name']} cannot be read or written by Spark: {e}"
            )
        if not sd.get("Location") and unreadable is None:
            unreadable = f"table {table['DatabaseName']}.{table['Name']} has no StorageDescriptor.Location"
        for key, value in options.items():
            props[f"option.{key}"] = value
        if sd.get("Location"):
            props["location"] = sd["Location"]
        if table.get("Description"):
            props["comment"] = table["Description"]
        if table.get("Owner"):
            props["owner"] = table["Owner"]
        order = props.pop(COLUMN_ORDER, None)
        return {
            "as_of": as_of.isoformat() if as_of is not None else None,
            "columns": columns(sd.get("Columns", [])),
            "partition_keys": columns(table.get("PartitionKeys", [])),
            "order": json.loads(order) if order else None,
            "properties": props,
            "location": sd.get("Location"),
            "format": fmt,
            "options": options,
            "unreadable": unreadable,
            "identities_unchanged_at": unchanged_at,
        }

    def _table_version(self, args: dict[str, Any]) -> tuple[dict[str, Any], datetime | None]:
        version = str(args["version"])
        versions = list(
            every(
                self.catalog.get_table_versions,
                "TableVersions",
                DatabaseName=args["database"],
                TableName=args["name"],
            )
        )
        ids = [v["VersionId"] for v in versions]
        if version not in ids:
            # The table exists, so not EntityNotFound (which Spark would show as a missing table).
            raise InvalidInputException(
                f"Table {args['database']}.{args['name']} has no version {version} (it has {', '.join(ids)})"
            )
        table: dict[str, Any] = dict(versions[ids.index(version)]["Table"])
        # Partitions as they were just before the next version replaced this one.
        later = [v["Table"].get("UpdateTime") for v in versions if int(v["VersionId"]) > int(version)]
        replaced = min((t for t in later if t is not None), default=None)
        return table, replaced - timedelta(microseconds=1) if replaced is not None else None

    def op_create_table(self, args: dict[str, Any]) -> None:
        props = dict(args.get("properties", {}))
        provider = (props.get("provider") or "parquet").lower()
        if provider not in formats.FORMATS:
            raise InvalidInputException(
                f"USING {provider}: gluecat tables are one of {', '.join(formats.FORMATS)}"
            )
        location = props.get("location") or self._default_location(args["database"], args["name"])
        sd = formats.storage_descriptor(provider)
        serde_params = sd["SerdeInfo"]["Parameters"]
        for key in [k for k in props if k.startswith("option.")]:
            serde_params[key.removeprefix("option.")] = props.pop(key)

        def column(c: dict[str, Any]) -> dict[str, Any]:
            out = {"Name": c["name"], "Type": c["type"]}
            if c.get("comment"):
                out["Comment"] = c["comment"]
            return out

        params = {k: v for k, v in props.items() if k not in _RESERVED}
        params.setdefault("classification", provider)
        names = [c["name"] for c in args["columns"]] + [c["name"] for c in args["partition_keys"]]
        if args.get("order") and args["order"] != names:
            params[COLUMN_ORDER] = json.dumps(args["order"])
        table: dict[str, Any] = {
            "Name": args["name"],
            "StorageDescriptor": {
                **sd,
                "Columns": [column(c) for c in args["columns"]],
                "Location": location,
            },
            "PartitionKeys": [column(c) for c in args["partition_keys"]],
            "TableType": "EXTERNAL_TABLE" if props.get("location") else "MANAGED_TABLE",
            "Parameters": params,
        }
        if props.get("comment"):
            table["Description"] = props["comment"]
        if props.get("owner"):
            table["Owner"] = props["owner"]
        self.catalog.create_table(DatabaseName=args["database"], TableInput=table)

    def op_alter_table(self, args: dict[str, Any]) -> None:
        table = self._table(args)
        new = table_input(table)
        sd = dict(new.get("StorageDescriptor") or {})
        columns = [dict(c) for c in sd.get("Columns", [])]
        keys = [dict(k) for k in new.get("PartitionKeys", [])]
        params = dict(new.get("Parameters") or {})
        order: list[str] | None = json.loads(params[COLUMN_ORDER]) if COLUMN_ORDER in params else None

        def find(name: str) -> tuple[list[dict[str, Any]], int] | None:
            for group in (columns, keys):
                for i, c in enumerate(group):
                    if c["Name"].lower() == name.lower():
                        return group, i
            return None

        def existing(name: str) -> tuple[list[dict[str, Any]], int]:
            found = find(name)
            if found is None:
                raise InvalidInputException(f"Column {name} does not exist in {table['Name']}")
            return found

        for change in args["changes"]:
            op = change["op"]
            if op == "set_property":
                key, value = change["key"], change["value"]
                if key == "location":
                    sd["Location"] = value
                elif key == "comment":
                    new["Description"] = value
                elif key == "owner":
                    new["Owner"] = value
                elif key == "provider":
                    raise InvalidInputException("The provider (USING) of a table cannot be changed")
                else:
                    params[key] = value
            elif op == "remove_property":
                if change["key"] == "comment":
                    new.pop("Description", None)
                else:
                    params.pop(change["key"], None)
            elif op == "add_column":
                if find(change["name"]) is not None:
                    raise AlreadyExistsException(f"Column {change['name']} already exists in {table['Name']}")
                col = {"Name": change["name"], "Type": change["type"]}
                if change.get("comment"):
                    col["Comment"] = change["comment"]
                if order is not None:
                    at = order.index(change["after"]) + 1 if change.get("after") in order else len(order)
                    order.insert(0 if change.get("first") else at, change["name"])
                if change.get("first"):
                    columns.insert(0, col)
                elif change.get("after"):
                    group, i = existing(change["after"])
                    if group is keys:
                        raise InvalidInputException("A data column cannot be placed after a partition column")
                    columns.insert(i + 1, col)
                else:
                    columns.append(col)
            elif op == "delete_column":
                found = find(change["name"])
                if found is None:
                    if not change.get("if_exists"):
                        raise InvalidInputException(
                            f"Column {change['name']} does not exist in {table['Name']}"
                        )
                    continue
                group, i = found
                if group is keys:
                    raise InvalidInputException(f"Partition column {change['name']} cannot be dropped")
                if order is not None:
                    order.remove(group[i]["Name"])
                del group[i]
            elif op == "rename_column":
                group, i = existing(change["name"])
                if order is not None:
                    order[order.index(group[i]["Name"])] = change["new_name"]
                group[i]["Name"] = change["new_name"]
            elif op == "update_column_type":
                group, i = existing(change["name"])
                group[i]["Type"] = change["type"]
            elif op == "update_column_comment":
                group, i = existing(change["name"])
                group[i]["Comment"] = change["comment"]
            else:
                raise InvalidInputException(f"unsupported table change {op!r}")
        if order is not None:
            params[COLUMN_ORDER] = json.dumps(order)
        sd["Columns"] = columns
        new["StorageDescriptor"] = sd
        new["PartitionKeys"] = keys
        new["Parameters"] = params
        self.catalog.update_table(DatabaseName=args["database"], TableInput=new)

    def op_rename_table(self, args: dict[str, Any]) -> None:
        """Glue has no rename: the table is recreated under its new name with its partitions and indexes.

        Three commits (create, copy partitions, delete), ordered so that a failure leaves both tables
        rather than neither. The data stays where it is.
        """
        table = self._table(args)
        new = table_input(table)
        new["Name"] = args["new_name"]
        indexes = self.catalog.get_partition_indexes(DatabaseName=args["database"], TableName=args["name"])
        new_indexes = [
            {"IndexName": d["IndexName"], "Keys": [k["Name"] for k in d["Keys"]]}
            for d in indexes["PartitionIndexDescriptorList"]
            if d["IndexStatus"] in ("ACTIVE", "CREATING")
        ]
        self.catalog.create_table(
            DatabaseName=args["new_database"], TableInput=new, PartitionIndexes=new_indexes or None
        )
        parts = [
            {k: p[k] for k in shapes.partition_input_fields() if k in p}
            for p in every(
                self.catalog.get_partitions,
                "Partitions",
                DatabaseName=args["database"],
                TableName=args["name"],
            )
        ]
        if parts:
            self.catalog.commit_partitions(
                DatabaseName=args["new_database"], TableName=args["new_name"], Add=parts
            )
        self.catalog.delete_table(DatabaseName=args["database"], Name=args["name"])

    def op_drop_table(self, args: dict[str, Any]) -> None:
        table = self._table(args)
        folders: list[str] = []
        # Like Hive: dropping a MANAGED_TABLE deletes its data, an EXTERNAL_TABLE's data stays unless purged.
        if args.get("purge") or table.get("TableType") == "MANAGED_TABLE":
            folders = [loc for loc in self._partitions(table, [])[1] if loc]
            if (table.get("StorageDescriptor") or {}).get("Location"):
                folders.append(self._location(table))
        self.catalog.delete_table(DatabaseName=args["database"], Name=args["name"])
        for folder in folders:  # only after the table is gone, so no reader sees half its data
            _delete_tree(folder)

    # -- partitions ----------------------------------------------------------------------------------

    def _partitions(
        self, table: dict[str, Any], filters: list[dict[str, Any]], as_of: datetime | None = None
    ) -> tuple[list[list[str]], list[str]]:
        """Values (one list per partition) and folders of the partitions matching Spark's filters."""
        keys = [k["Name"] for k in table.get("PartitionKeys", [])]
        if not keys:
            return [], []
        rows = self.catalog.get_partitions_arrow(
            DatabaseName=table["DatabaseName"],
            TableName=table["Name"],
            SparkFilters=[f for f in filters if _pushable(f)],
            QueryAsOfTime=as_of,
        )
        columns = [rows.column(k).to_pylist() for k in keys]
        values = [list(v) for v in zip(*columns, strict=True)]
        base = (table.get("StorageDescriptor") or {}).get("Location", "").rstrip("/")
        name = partition_namer(keys)
        locations = [
            loc or f"{base}/{name(v)}"
            for loc, v in zip(rows.column("Location").to_pylist(), values, strict=True)
        ]
        return values, locations

    def op_list_partitions(self, args: dict[str, Any]) -> dict[str, Any]:
        table = self._table(args)
        values, locations = self._partitions(table, args.get("filters", []), _as_of(args))
        columns = [list(c) for c in zip(*values, strict=True)] if values else []
        return {"values": columns, "locations": locations}

    def _existing(self, table: dict[str, Any], wanted: list[list[str]]) -> dict[tuple[str, ...], str]:
        """Folders of those of ``wanted`` that exist, by values."""
        found: dict[tuple[str, ...], str] = {}
        name = partition_namer([k["Name"] for k in table.get("PartitionKeys", [])])
        base = self._location(table)
        for start in range(0, len(wanted), _BATCH):
            chunk = wanted[start : start + _BATCH]
            got = self.catalog.batch_get_partition(
                DatabaseName=table["DatabaseName"],
                TableName=table["Name"],
                PartitionsToGet=[{"Values": v} for v in chunk],
            )
            for p in got["Partitions"]:
                loc = (p.get("StorageDescriptor") or {}).get("Location")
                found[tuple(p["Values"])] = loc or f"{base}/{name(p['Values'])}"
        return found

    def _partition_input(self, table: dict[str, Any], values: list[str], location: str) -> dict[str, Any]:
        sd = dict(table.get("StorageDescriptor") or {})
        sd["Location"] = location
        return {"Values": values, "StorageDescriptor": sd}

    def op_plan_write(self, args: dict[str, Any]) -> dict[str, Any]:
        """Where each written partition's files go, which folders' old files the write replaces, and the commit."""
        table = self._table(args)
        base = self._location(table)
        keys = [k["Name"] for k in table.get("PartitionKeys", [])]
        mode = args["mode"]
        written: list[list[str]] = args["written"]
        if not keys:
            overwrite = mode != "APPEND"
            return {
                "targets": [base],
                "overwritten": [base] if overwrite else [],
                "commit": {"add": [], "drop": []},
            }
        existing = self._existing(table, written)
        name = partition_namer(keys)
        targets = [existing.get(tuple(v)) or f"{base}/{name(v)}" for v in written]
        add = [
            {"values": v, "location": t}
            for v, t in zip(written, targets, strict=True)
            if tuple(v) not in existing
        ]
        overwritten: list[str] = []
        drop: list[list[str]] = []
        if mode == "OVERWRITE_DYNAMIC":
            overwritten = targets
        elif mode in ("OVERWRITE_BY_FILTER", "TRUNCATE"):
            filters = args.get("filters", []) if mode == "OVERWRITE_BY_FILTER" else []
            values, locations = self._partitions(table, filters)
            written_keys = {tuple(v) for v in written}
            overwritten = sorted(set(locations) | set(existing.values()))
            drop = [v for v in values if tuple(v) not in written_keys]
        return {"targets": targets, "overwritten": overwritten, "commit": {"add": add, "drop": drop}}

    def op_commit_write(self, args: dict[str, Any]) -> None:
        commit = args["commit"]
        if not commit["add"] and not commit["drop"]:
            return
        table = self._table(args)
        self.catalog.commit_partitions(
            DatabaseName=args["database"],
            TableName=args["name"],
            Add=[self._partition_input(table, a["values"], a["location"]) for a in commit["add"]],
            Drop=commit["drop"],
            IfNotExists=True,
            IfExists=True,
        )

    def op_truncate(self, args: dict[str, Any]) -> None:
        """TRUNCATE TABLE [PARTITION]: the files go, the partitions stay registered (as Hive does)."""
        table = self._table(args)
        if not table.get("PartitionKeys"):
            delete_files(self._location(table))
            return
        wanted = args.get("partitions")
        if wanted is None:
            folders = self._partitions(table, [])[1]
        else:
            existing = self._existing(table, wanted)
            missing = [v for v in wanted if tuple(v) not in existing]
            if missing:
                raise EntityNotFoundException(f"Partition {missing[0]} not found in {table['Name']}")
            folders = list(existing.values())
        for folder in folders:
            delete_files(folder)

    def op_partition_identities(self, args: dict[str, Any]) -> dict[str, Any]:
        """Every partition's identity, for the shim's existence checks; or just "unchanged" when no commit
        since version ``since`` (other than the shim's own commits listed in ``applied``, which it has
        applied to its copy) added or dropped any of the table's partitions. The version is read before
        the partitions, so the identities given are never older than the version they are labelled with.

        One string crosses instead of a JSON list per partition: each partition's values escaped
        (backslash, NUL, newline) and joined by NUL, partitions separated by newlines; the shim builds the
        same key for the partition Spark asks about.
        """
        since = args.get("since", -1)
        if since >= 0:
            now = self.catalog.partitions_unchanged_since(
                args["database"], args["name"], since, args.get("applied", [])
            )
            if now is not None:
                return {"version": now, "unchanged": True}
        version = self.catalog.warehouse_version()
        table = self._table(args)
        keys = [k["Name"] for k in table.get("PartitionKeys", [])]
        if not keys:
            return {"version": version, "count": 0, "keys": ""}
        rows = self.catalog.get_partitions_arrow(DatabaseName=args["database"], TableName=args["name"])
        escaped = []
        for key in keys:
            column = rows.column(key)
            for old, new in (("\\", "\\\\"), ("\x00", "\\0"), ("\n", "\\n")):
                column = pc.replace_substring(column, old, new)
            escaped.append(column)
        joined: Any = escaped[0]
        if len(escaped) > 1:
            joined = pc.binary_join_element_wise(*escaped, "\x00")  # type: ignore[call-overload]
        identities: list[str] = joined.to_pylist()
        return {"version": version, "count": rows.num_rows, "keys": "\n".join(identities)}

    def op_create_partitions(self, args: dict[str, Any]) -> dict[str, int]:
        table = self._table(args)
        values_list: list[list[str]] = args["partitions"]
        props_list = [dict(props or {}) for props in args["properties"]]
        if len(props_list) != len(values_list):
            raise InvalidInputException("create_partitions: each partition needs its own properties map")
        locations = [props.pop("location", None) for props in props_list]
        unplaced = [i for i, location in enumerate(locations) if not location]
        if unplaced:
            keys = [k["Name"] for k in table.get("PartitionKeys", [])]
            names = partition_names(keys, [values_list[i] for i in unplaced])
            base = self._location(table)
            for i, name in zip(unplaced, names, strict=True):
                locations[i] = f"{base}/{name}"
        add = []
        for values, props, location in zip(values_list, props_list, locations, strict=True):
            part = self._partition_input(table, values, location)
            if props:
                part["Parameters"] = props
            add.append(part)
        got = self.catalog.commit_partitions(DatabaseName=args["database"], TableName=args["name"], Add=add)
        return {"version": got["CommitVersion"]}

    def op_drop_partitions(self, args: dict[str, Any]) -> dict[str, int]:
        table = self._table(args)
        folders = list(self._existing(table, args["partitions"]).values()) if args.get("purge") else []
        got = self.catalog.commit_partitions(
            DatabaseName=args["database"], TableName=args["name"], Drop=args["partitions"]
        )
        for folder in folders:
            _delete_tree(folder)
        return {"version": got["CommitVersion"]}

    def op_get_partition(self, args: dict[str, Any]) -> dict[str, str]:
        p = self.catalog.get_partition(
            DatabaseName=args["database"], TableName=args["name"], PartitionValues=args["values"]
        )["Partition"]
        out = dict(p.get("Parameters") or {})
        if (p.get("StorageDescriptor") or {}).get("Location"):
            out["location"] = p["StorageDescriptor"]["Location"]
        if p.get("CreationTime"):
            out["created"] = str(p["CreationTime"])
        return out

    # -- procedures ----------------------------------------------------------------------------------

    @staticmethod
    def _qualified(name: str) -> tuple[str, str]:
        parts = name.split(".")
        if len(parts) != 2 or not all(parts):
            raise InvalidInputException(f"table => '{name}': expected 'database.table'")
        return parts[0], parts[1]

    def _index_rows(self, database: str, table: str) -> list[dict[str, Any]]:
        got = self.catalog.get_partition_indexes(DatabaseName=database, TableName=table)
        return [
            {
                "index_name": d["IndexName"],
                "keys": ",".join(k["Name"] for k in d["Keys"]),
                "status": d["IndexStatus"],
                "backfill_errors": json.dumps(d["BackfillErrors"]) if d.get("BackfillErrors") else None,
            }
            for d in got["PartitionIndexDescriptorList"]
        ]

    def op_create_partition_index(self, args: dict[str, Any]) -> list[dict[str, Any]]:
        database, table = self._qualified(args["table"])
        keys = [k.strip() for k in args["keys"].split(",") if k.strip()]
        self.catalog.create_partition_index(
            DatabaseName=database,
            TableName=table,
            PartitionIndex={"Keys": keys, "IndexName": args["index_name"]},
        )
        return [
            {"index_name": r["index_name"], "status": r["status"]}
            for r in self._index_rows(database, table)
            if r["index_name"] == args["index_name"]
        ]

    def op_drop_partition_index(self, args: dict[str, Any]) -> list[dict[str, Any]]:
        database, table = self._qualified(args["table"])
        self.catalog.delete_partition_index(
            DatabaseName=database, TableName=table, IndexName=args["index_name"]
        )
        return [{"index_name": args["index_name"], "status": "DELETED"}]

    def op_partition_indexes(self, args: dict[str, Any]) -> list[dict[str, Any]]:
        return self._index_rows(*self._qualified(args["table"]))

    class Java:
        implements = ["io.gluecat.spark.PythonCatalog"]  # noqa: RUF012 (Py4J reads this class attribute)
