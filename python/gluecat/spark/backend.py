"""The Python half of the Spark shim: answers io.gluecat.spark.PythonCatalog calls from a gluecat.Catalog (a
warehouse opened here) or a RemoteCatalog (a catalog service over the Glue API: gluecat.spark.remote).

Each call carries one operation and a JSON document; the answer is {"ok": result} or
{"error": <Glue error code>, "message": ...} so the shim can raise Spark's own exception with our message.
Calls are coarse (a whole table, a whole partition list, one commit) because each is a Py4J round trip.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pyarrow.compute as pc
import pyarrow.fs as pafs

from gluecat import s3_access
from gluecat.api import shapes
from gluecat.api.pages import every, every_database
from gluecat.api.partition_names import partition_namer, partition_names
from gluecat.api.table_kinds import is_external
from gluecat.catalog import table_changes as tc
from gluecat.data import maintenance
from gluecat.data.files import (
    DataFiles,
    Hidden,
    Removal,
    data_file_infos,
    filesystem,
    folder_key,
    table_location,
)
from gluecat.data.refusals import SparkRefusal, quoted
from gluecat.data.renames import rename_table
from gluecat.errors import (
    AlreadyExistsException,
    ConcurrentModificationException,
    EntityNotFoundException,
    GlueError,
    InvalidInputException,
)
from gluecat.expressions.spark import TooDeep, parse_spark_filters
from gluecat.gc_pause import gc_paused
from gluecat.locations import folder_name_problem
from gluecat.spark import formats, statistics, views
from gluecat.spark.governed import GovernedWrites, is_governed, objects_answer
from gluecat.spark.partition_values import as_spark_reads
from gluecat.spark.remote import GlueClient, NotImplementedByServer, RemoteCatalog

# Glue keeps the namespace comment and location in fields of their own, Spark in reserved properties.
_DB_FIELDS = {"comment": "Description", "location": "LocationUri"}
# Spark's reserved table properties, kept in Glue's own fields rather than Parameters.
_RESERVED = {
    "provider",
    "location",
    "comment",
    "owner",
    "external",
    "is_managed_location",
    "table_type",
    "gluecat.table_type",  # table_type as GlueExtensions' parser passes it (Spark's refuses the key)
    "path",
}
_BATCH = 100  # BatchCreatePartition's and BatchGetPartition's comfortable page
COLUMN_ORDER = tc.COLUMN_ORDER
# A column's DEFAULT, in the Glue Column's Parameters: Spark's own metadata keys (ResolveDefaultColumns).
_DEFAULTS = {"current_default": tc.CURRENT_DEFAULT, "exists_default": tc.EXISTS_DEFAULT}
# Table parameters that describe the files' format, which CREATE TABLE ... LIKE keeps.
_FORMAT_PARAMETERS = {"classification", formats.HEADER}


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


def glue_column(c: dict[str, Any]) -> dict[str, Any]:
    """A column as the shim sends it, as a Glue Column: a DEFAULT is kept in its Parameters under the
    names Spark gives it in a field's metadata (its SQL, and the value rows written before it read as)."""
    out: dict[str, Any] = {"Name": c["name"], "Type": c["type"]}
    if c.get("comment"):
        out["Comment"] = c["comment"]
    defaults = {key: c[field] for field, key in _DEFAULTS.items() if c.get(field) is not None}
    if defaults:
        out["Parameters"] = defaults
    return out


def spark_column(c: dict[str, Any]) -> dict[str, Any]:
    """A Glue Column as the shim reads it."""
    out: dict[str, Any] = {
        "name": c["Name"],
        "type": c.get("Type", "string"),
        "comment": c.get("Comment", ""),
    }
    params = c.get("Parameters") or {}
    for field, key in _DEFAULTS.items():
        if key in params:
            out[field] = params[key]
    return out


def table_input(table: dict[str, Any]) -> dict[str, Any]:
    """The TableInput that recreates a table as GetTable returned it."""
    return {k: table[k] for k in shapes.table_input_fields() if k in table}


def _check_folder_names(table: dict[str, Any], values: list[str], name: str) -> None:
    """A partition placed at its Hive path gets a folder for each key, ``k=v`` escaped: refused when one
    would be too long a name for a folder (ENAMETOOLONG at its first write or drop)."""
    for part in name.split("/"):
        why = folder_name_problem(part)
        if why is not None:
            raise InvalidInputException(
                f"Partition {[v[:40] for v in values]} of {table['DatabaseName']}.{table['Name']} has no "
                f"folder of its own under the table's: {part[:60]!r}... cannot be the name of a folder "
                f"({why}); give it a LOCATION"
            )


def _not_governed(table: dict[str, Any], statement: str) -> None:
    """A governed table's data is its objects, not partitions or folders: partition DDL has nothing to act
    on (an INSERT OVERWRITE or TRUNCATE replaces objects)."""
    if is_governed(table):
        raise InvalidInputException(
            f"{statement} does not apply to governed table {table['DatabaseName']}.{table['Name']}: its data "
            "is the objects its transactions registered; use INSERT OVERWRITE or TRUNCATE TABLE"
        )


def _change(change: dict[str, Any]) -> tc.TableChange:
    """One of Spark's TableChanges, as the shim sends it, as a typed change; Spark's reserved properties
    (location, comment, owner) are Glue fields of their own."""
    op = change["op"]
    if op == "set_property":
        key, value = change["key"], change["value"]
        if key == "location":
            return tc.SetLocation(value)
        if key == "comment":
            return tc.SetDescription(value)
        if key == "owner":
            return tc.SetOwner(value)
        if key == "provider":
            raise InvalidInputException("The provider (USING) of a table cannot be changed")
        return tc.SetParameter(key, value)
    if op == "remove_property":
        return tc.SetDescription(None) if change["key"] == "comment" else tc.RemoveParameter(change["key"])
    if op == "add_column":
        return tc.AddColumn(
            change["name"],
            change["type"],
            change.get("comment"),
            bool(change.get("first")),
            change.get("after"),
            change.get("current_default"),
            change.get("exists_default"),
        )
    if op == "update_column_default":
        return tc.UpdateColumnDefault(change["name"], change.get("default"))
    if op == "rename_column":
        return tc.RenameColumn(change["name"], change["new_name"])
    if op == "update_column_type":
        return tc.UpdateColumnType(change["name"], change["type"])
    if op == "update_column_comment":
        return tc.UpdateColumnComment(change["name"], change["comment"])
    if op == "delete_column":
        return tc.DeleteColumn(change["name"], bool(change.get("if_exists")))
    raise InvalidInputException(f"unsupported table change {op!r}")


def _check_readable_types(catalog: GlueClient, table: dict[str, Any], changes: list[tc.TableChange]) -> None:
    """Refuses a data column's new type that the table's files, written with its earlier types, would not
    read as (Spark's built-in catalog refuses every type change): the reads would fail, or return other
    values. Its earlier types are those of the table's versions. A partition column's values are the
    catalog's, cast to the new type when read."""
    retyped = [c for c in changes if isinstance(c, tc.UpdateColumnType)]
    if not retyped:
        return
    try:
        fmt, _ = formats.spark_source(table)
    except formats.Unreadable:
        return  # Spark reads none of its files anyway
    versions = [
        v["Table"]
        for v in every(
            catalog.get_table_versions,
            "TableVersions",
            DatabaseName=table["DatabaseName"],
            TableName=table["Name"],
        )
    ]
    types: dict[str, set[str]] = {}
    for version in [table, *versions]:
        for column in (version.get("StorageDescriptor") or {}).get("Columns", []):
            types.setdefault(column["Name"].lower(), set()).add(column["Type"])
    for change in retyped:
        for old in sorted(types.get(change.name.lower(), set())):
            if not formats.reads_as(fmt, old, change.type):
                raise InvalidInputException(
                    f"Column {change.name} of {table['Name']} cannot change type to {change.type}: its "
                    f"files hold values of type {old}, which Spark's {fmt} reader does not read as "
                    f"{change.type}. Add a new column and copy the values instead"
                )


class Backend:
    """Implements io.gluecat.spark.PythonCatalog for one catalog: a warehouse opened here (a
    ``gluecat.Catalog``) or a catalog service over the Glue API (a ``RemoteCatalog``)."""

    def __init__(self, catalog: GlueClient) -> None:
        self.catalog = catalog
        self.files = DataFiles(catalog)
        self.governed = GovernedWrites(catalog)

    def call(self, operation: str, arguments: str) -> str:
        handler = getattr(self, "op_" + operation, None)
        try:
            if handler is None:
                raise InvalidInputException(f"unknown gluecat backend operation {operation!r}")
            with gc_paused():  # a call builds documents and lists, none in a reference cycle
                args = json.loads(arguments)
                # The Spark statement the call is for (the shim's Statements): a remote catalog's reads
                # are kept for it, and for no other.
                statement = args.pop("statement", None) if isinstance(args, dict) else None
                if isinstance(self.catalog, RemoteCatalog):
                    with self.catalog.statement(statement):
                        return json.dumps({"ok": handler(args)})
                return json.dumps({"ok": handler(args)})
        except SparkRefusal as e:
            spark = {"class": e.error_class, "params": e.params}
            return json.dumps({"error": e.code, "message": e.message, "spark": spark})
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

    def op_use_hadoop_settings(self, args: dict[str, Any]) -> None:
        """The Spark application's S3A settings (``s3a``), sent when its catalog starts: the tables' files on
        S3 are reached with them (gluecat.s3_access)."""
        s3_access.use_hadoop_settings(args.get("s3a") or {})

    # -- namespaces ----------------------------------------------------------------------------------

    def op_list_databases(self, args: dict[str, Any]) -> list[str]:
        return [db["Name"] for db in every_database(self.catalog)]

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
        """DROP NAMESPACE: refused while it holds tables unless CASCADE, which deletes their managed data."""
        name = args["name"]
        tables = self.op_list_tables(args)
        if tables and not args.get("cascade"):
            raise SparkRefusal(
                "SCHEMA_NOT_EMPTY",
                {"schemaName": quoted(name)},
                f"Database {name} is not empty ({len(tables)} tables); use DROP NAMESPACE ... CASCADE",
            )
        folder = self.files.database_folder(name)
        removal = self.files.plan_drop_database(name)
        hidden = self._dropping(removal, lambda: self.catalog.delete_database(Name=name))
        self.files.remove(removal, hidden=hidden)
        self.files.remove_empty_database_folder(name, folder)
        return True

    # -- tables --------------------------------------------------------------------------------------

    def op_list_tables(self, args: dict[str, Any]) -> list[list[str]]:
        """Every table and view of the database with its kind: MANAGED, EXTERNAL or VIEW."""
        return views.kinds(self.catalog, args["name"])

    def _table(self, args: dict[str, Any]) -> dict[str, Any]:
        """The Glue table, as of ``args["as_of"]`` when given; a view is not one (Spark loads it as a view).

        A table that exists now but did not at ``as_of`` is InvalidInputException saying so: Spark would
        show EntityNotFoundException as TABLE_OR_VIEW_NOT_FOUND, as if there were no such table."""
        as_of = _as_of(args)
        try:
            got = self.catalog.get_table(
                DatabaseName=args["database"], Name=args["name"], QueryAsOfTime=as_of
            )
        except EntityNotFoundException as e:
            if as_of is None:
                raise
            try:
                now = self.catalog.get_table(DatabaseName=args["database"], Name=args["name"])["Table"]
            except EntityNotFoundException:
                raise e from None
            raise InvalidInputException(
                f"TIMESTAMP AS OF {as_of.isoformat()} of table {args['database']}.{args['name']}: the table "
                f"did not exist at that time (it was made at {now['CreateTime'].isoformat()})"
            ) from e
        table: dict[str, Any] = got["Table"]
        if views.is_view(table):
            raise EntityNotFoundException(f"{args['database']}.{args['name']} is a view, not a table")
        return table

    def op_get_table(self, args: dict[str, Any]) -> dict[str, Any]:
        """The table as Spark needs it; ``as_of`` (ISO time) or ``version`` (a Glue VersionId) time-travels.

        TIMESTAMP AS OF reads the table and its partitions as they were then. VERSION AS OF reads that table
        version's schema and descriptor; Glue versions tables, not partitions, so the partitions are those
        as of the moment the version was replaced (or now, for the current version).
        """
        unchanged_at = None
        transaction = None
        if args.get("version") is not None:
            table, as_of, transaction = self._table_at_version(args)
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
            if args.get("or_view"):  # Spark resolving a name: a table or a view, read once
                found: dict[str, Any] = self.catalog.get_table(
                    DatabaseName=args["database"], Name=args["name"]
                )["Table"]
                if views.is_view(found):
                    return {"view": views.view_of(found)}
                table, as_of = found, None
            else:
                table, as_of = self._table(args), _as_of(args)
                if as_of is not None:
                    self._same_governed_table(args, table, f"TIMESTAMP AS OF {as_of.isoformat()}")
        stats = (
            statistics.for_spark(self.catalog, table)
            if args.get("version") is None and as_of is None
            else None
        )
        return self._spark_table(table, as_of, transaction, stats, unchanged_at)

    def _spark_table(
        self,
        table: dict[str, Any],
        as_of: datetime | None = None,
        transaction: str | None = None,
        stats: dict[str, Any] | None = None,
        unchanged_at: int | None = None,
    ) -> dict[str, Any]:
        """A Glue table as the shim's TableInfo reads it."""
        sd = table.get("StorageDescriptor") or {}

        def columns(cols: list[dict[str, Any]]) -> list[dict[str, Any]]:
            return [spark_column(c) for c in cols]

        props = dict(table.get("Parameters", {}))
        fmt: str | None = None
        options: dict[str, str] = {}
        unreadable: str | None = None
        try:
            fmt, options = formats.spark_source(table)
            props["provider"] = "hive" if fmt == formats.HIVE_TEXT else fmt  # as Spark's Hive catalog says
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
        governed = is_governed(table)
        if governed:
            props["table_type"] = "GOVERNED"  # DESCRIBE shows it; SHOW TBLPROPERTIES hides reserved keys:
            props["gluecat.table_type"] = "GOVERNED"
        if is_external(table):
            props["external"] = "true"  # what Spark's DESCRIBE and Catalog.getTable read as EXTERNAL
        elif sd.get("Location"):
            # A managed table's folder is the catalog's choice: SHOW CREATE TABLE leaves LOCATION out, as
            # for Spark's own managed tables (run again, it would make an external table over this folder).
            props["is_managed_location"] = "true"
        props.pop(COLUMN_ORDER, None)  # an earlier gluecat's record of Spark's order: Glue's order is shown
        # Read after the table: every read of it that Spark plans from this load comes later. A catalog
        # service's versions are not its clients' to know: its writes start their transactions when they begin.
        live = (
            governed and as_of is None and transaction is None and not isinstance(self.catalog, RemoteCatalog)
        )
        return {
            "governed": governed,
            "loaded_version": self.catalog.warehouse_version() if live else None,
            "transaction": transaction,
            "statistics": stats,
            "as_of": as_of.isoformat() if as_of is not None else None,
            "columns": columns(sd.get("Columns", [])),
            "partition_keys": columns(table.get("PartitionKeys", [])),
            "properties": props,
            "location": sd.get("Location"),
            "format": fmt,
            "options": options,
            "unreadable": unreadable,
            "identities_unchanged_at": unchanged_at,
        }

    def _table_at_version(self, args: dict[str, Any]) -> tuple[dict[str, Any], datetime | None, str | None]:
        """VERSION AS OF: a governed table's version is a committed transaction (its commit's state); any
        other table's a Glue table version."""
        current = self._table({"database": args["database"], "name": args["name"]})
        if not is_governed(current):
            return (*self._table_version(args), None)
        transaction = str(args["version"])
        try:
            self.governed.committed(transaction)
            got = self.catalog.get_table(
                DatabaseName=args["database"], Name=args["name"], TransactionId=transaction
            )
        except EntityNotFoundException as e:
            # The table exists now, so not EntityNotFound (which Spark would show as a missing table).
            raise InvalidInputException(
                f"VERSION AS OF '{transaction}' of governed table {args['database']}.{args['name']}: "
                f"{e.message}"
            ) from e
        self._same_governed_table(args, got["Table"], f"VERSION AS OF '{transaction}'", current)
        return got["Table"], None, transaction

    def _same_governed_table(
        self, args: dict[str, Any], then: dict[str, Any], when: str, now: dict[str, Any] | None = None
    ) -> None:
        """Time travel of a governed table reaches back over its own history only: a table dropped since
        and made again under its name is another table, whose objects are not this one's past (a table
        dropped and not made again can still be read as it was)."""
        if now is None:
            try:
                now = self._table({"database": args["database"], "name": args["name"]})
            except EntityNotFoundException:
                return
        if (is_governed(then) or is_governed(now)) and then["CreateTime"] != now["CreateTime"]:
            raise InvalidInputException(
                f"{when} of governed table {args['database']}.{args['name']}: the table was made again at "
                f"{now['CreateTime'].isoformat()}, after that; the table of that name then was another one, "
                "dropped since"
            )

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
        """CREATE TABLE: the format (USING, or Hive's STORED AS / ROW FORMAT) as Glue and Hive record it,
        its options as SerDe parameters; managed without LOCATION, external with it."""
        table = self._new_table(args)
        if not is_external(table):
            self.catalog.get_database(Name=args["database"])  # a missing database is named as such first
            location = table["StorageDescriptor"]["Location"]
            self.files.check_new_managed_folder(args["database"], args["name"], location)
        self.catalog.create_table(DatabaseName=args["database"], TableInput=table)

    def _new_table(self, args: dict[str, Any]) -> dict[str, Any]:
        """The TableInput of a CREATE TABLE (or of the table a CTAS or REPLACE TABLE makes), checked."""
        props = dict(args.get("properties", {}))
        storage = formats.table_storage(props)
        sd = storage.descriptor
        formats.check_columns(storage.source, args["columns"], args["partition_keys"])
        external = bool(props.get("location")) or str(props.get("external", "")).lower() == "true"
        location = props.get("location") or self.files.default_location(args["database"], args["name"])
        options = {k.removeprefix("option."): v for k, v in props.items() if k.startswith("option.")}

        # Spark passes each OPTIONS entry twice, as option.k and k; the SerDe parameters keep it once.
        params = {
            k: v
            for k, v in props.items()
            if k not in _RESERVED and not k.startswith(("option.", "hive.")) and options.get(k) != v
        }
        params.update(storage.parameters)
        if external:
            params["EXTERNAL"] = "TRUE"  # as Hive records an external table, besides its TableType
        table: dict[str, Any] = {
            "Name": args["name"],
            "StorageDescriptor": {
                **sd,
                "Columns": [glue_column(c) for c in args["columns"]],
                "Location": location,
            },
            "PartitionKeys": [glue_column(c) for c in args["partition_keys"]],
            "TableType": "EXTERNAL_TABLE" if external else "MANAGED_TABLE",
            "Parameters": params,
        }
        kind = props.get("table_type") or props.get("gluecat.table_type") or ""
        if str(kind).upper() == "GOVERNED":
            table["TableType"] = "GOVERNED"  # its data is the objects its writes' transactions register
        elif kind:
            # Spark passes table_type among its reserved properties, which Parameters do not keep: the
            # table it names (an Iceberg table, ...) must not silently become a plain file table.
            table["Parameters"]["table_type"] = kind
        if props.get("comment"):
            table["Description"] = props["comment"]
        if props.get("owner"):
            table["Owner"] = props["owner"]
        formats.spark_source(table)  # no table Spark could not read (TBLPROPERTIES ('table_type'='ICEBERG'))
        return table

    def _existing(self, database: str, name: str) -> dict[str, Any] | None:
        try:
            found: dict[str, Any] = self.catalog.get_table(DatabaseName=database, Name=name)["Table"]
        except EntityNotFoundException:
            return None
        return found

    def _staged_checks(self, args: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """The table a CTAS or REPLACE TABLE (``stage``: create, replace or create_or_replace) makes, and
        the one it replaces; refused as Spark's statements refuse them."""
        database, name = args["database"], args["name"]
        new = self._new_table(args)
        self.catalog.get_database(Name=database)
        old = self._existing(database, name)
        if old is not None and (args["stage"] == "create" or views.is_view(old)):
            raise AlreadyExistsException(f"Table {database}.{name} already exists")
        if old is None and args["stage"] == "replace":
            raise EntityNotFoundException(f"Table {database}.{name} not found")
        return new, old

    def op_stage_table(self, args: dict[str, Any]) -> dict[str, Any]:
        """CTAS and REPLACE TABLE [AS SELECT]: the table they make, as get_table answers, and a staging
        folder for its rows; nothing changes until commit_staged. A governed table (made or replaced) is
        made at once instead (``immediate``): its rows are objects, which its write's transaction commits."""
        new, old = self._staged_checks(args)
        if is_governed(new) or (old is not None and is_governed(old)):
            return {"immediate": True}
        table = {**new, "DatabaseName": args["database"]}
        return {
            **self._spark_table(table),
            "staging": self.files.begin_write(table),
            "replaces": old["CreateTime"].isoformat() if old is not None else None,
        }

    def op_commit_staged(self, args: dict[str, Any]) -> None:
        """A CTAS's or REPLACE TABLE's rows are written (in the staging folder): the old table (if any) and
        its managed data go, the new table is made, and the rows move in. Until now a failed statement
        changed nothing; a failure from here on leaves no table, as Spark's own CTAS leaves none."""
        database, name, staging = args["database"], args["name"], args["staging"]
        new, old = self._staged_checks(args)
        if is_governed(new) or (old is not None and is_governed(old)):
            raise InvalidInputException(f"Table {database}.{name}: a governed table is not staged")
        if old is not None and old["CreateTime"].isoformat() != args.get("replaces"):
            raise ConcurrentModificationException(
                f"Table {database}.{name} was made again by another client while the statement ran; "
                "nothing was changed"
            )
        removal = self.files.plan_drop_table(old) if old is not None else None
        location = new["StorageDescriptor"]["Location"]
        if not is_external(new):  # checked before the old table goes, so a refusal changes nothing
            gone = removal.trees if removal is not None else []
            self.files.check_new_managed_folder(database, name, location, gone)
        if old is not None and removal is not None:
            # Hidden first, as a drop hides them: killed after the old table is gone, nothing in its
            # folder keeps the statement, run again, from making the new one there.
            hidden = self.files.hide_except(removal, staging)
            try:
                self.catalog.delete_table_as_read(Table=old)
            except BaseException:
                self.files.unhide(hidden)
                raise
            self.files.remove(removal, keep=staging, hidden=hidden)
        self.catalog.create_table(DatabaseName=database, TableInput=new)
        try:
            table = self._table({"database": database, "name": name})
            self.files.commit_write(table, staging, args["mode"], args["written"], [])
        except BaseException:
            with contextlib.suppress(Exception):
                self.op_drop_table({"database": database, "name": name})
            raise

    def op_abort_staged(self, args: dict[str, Any]) -> None:
        """A failed CTAS or REPLACE TABLE: its staging folder goes, and so does the folder the write made
        for a new managed table if nothing else is in it (not a LOCATION someone made); the old table, if
        any, is as it was."""
        self.files.abort_write(args["staging"])
        folder = args["staging"].rstrip("/").rsplit("/", 1)[0]
        default = self.files.default_location(args["database"], args["name"])
        if (
            folder_key(folder) == folder_key(default)
            and self._existing(args["database"], args["name"]) is None
        ):
            fs, path = filesystem(folder)
            if fs.get_file_info(path).type == pafs.FileType.Directory and not fs.get_file_info(
                pafs.FileSelector(path)
            ):
                fs.delete_dir(path)

    def op_create_table_like(self, args: dict[str, Any]) -> None:
        """CREATE TABLE ... LIKE a gluecat table: its columns, partition keys and storage (formats, SerDe and
        its parameters, the format's table parameters) copied; the statement's USING replaces the storage,
        LOCATION makes it external, TBLPROPERTIES are its only other parameters (as in Spark)."""
        source = self._table({"database": args["source_database"], "name": args["source_name"]})
        props = dict(args.get("properties", {}))
        sd_source = source.get("StorageDescriptor") or {}
        keys = [spark_column(k) for k in source.get("PartitionKeys") or []]
        columns = [spark_column(c) for c in sd_source.get("Columns", [])]
        if props.get("provider") or any(k.startswith("hive.") for k in props):
            self.op_create_table({**args, "columns": columns, "partition_keys": keys})
            return
        inherited = {k: v for k, v in (source.get("Parameters") or {}).items() if k in _FORMAT_PARAMETERS}
        external = bool(props.get("location")) or str(props.get("external", "")).lower() == "true"
        location = props.get("location") or self.files.default_location(args["database"], args["name"])
        params = {
            k: v for k, v in props.items() if k not in _RESERVED and not k.startswith(("option.", "hive."))
        }
        params = {**inherited, **params}
        if external:
            params["EXTERNAL"] = "TRUE"
        sd = {
            k: v for k, v in sd_source.items() if k in ("InputFormat", "OutputFormat", "SerdeInfo", "Columns")
        }
        table: dict[str, Any] = {
            "Name": args["name"],
            "StorageDescriptor": {**sd, "Location": location},
            "PartitionKeys": source.get("PartitionKeys") or [],
            "TableType": "EXTERNAL_TABLE" if external else "MANAGED_TABLE",
            "Parameters": params,
        }
        if props.get("owner"):
            table["Owner"] = props["owner"]
        if not external:
            self.catalog.get_database(Name=args["database"])
            self.files.check_new_managed_folder(args["database"], args["name"], location)
        self.catalog.create_table(DatabaseName=args["database"], TableInput=table)

    def op_alter_table(self, args: dict[str, Any]) -> None:
        """ALTER TABLE's changes, decoded into typed changes and applied to the table as one UpdateTable."""
        table = self._table(args)
        layout = formats.layout(table)
        changes = [_change(c) for c in args["changes"]]
        _check_readable_types(self.catalog, table, changes)
        new = tc.apply_changes(table_input(table), changes, layout)
        # A new location is other data: its statistics go, as Spark's SET LOCATION drops them.
        moved = (new.get("StorageDescriptor") or {}).get("Location") != (
            table.get("StorageDescriptor") or {}
        ).get("Location")
        kept = statistics.without_statistics(new.get("Parameters") or {}) if moved else None
        if kept is not None:
            new["Parameters"] = kept
        # The changes were applied to the table as read above: an update another client made since (a
        # boto3 UpdateTable, a crawler) must fail this one, not be overwritten by it.
        # (A table dropped and made again under its name meanwhile starts again at the same VersionId 1:
        # update_table_as_read tells it apart.)
        self.catalog.update_table_as_read(Table=table, TableInput=new, DropColumnStatistics=moved)

    def op_rename_table(self, args: dict[str, Any]) -> None:
        """Glue has no rename: the table is made again under its new name with its partitions and indexes,
        and the old one deleted, in one catalog commit (RenameTable, locally and on gluecat serve; another
        Glue renames as AWS's clients do, not atomically: gluecat.spark.remote) that fails with
        ConcurrentModificationException if another client updated or replaced the table since it was read
        here, and carries the partitions it holds at the commit.

        A managed table at its default folder takes its folder along to the new name's default folder
        (as Hive does), so a new table of the old name starts empty. The folder moves first and moves
        back if the commit fails, so a failure leaves the old table whole.
        """
        table = self._table(args)
        _not_governed(table, "ALTER TABLE RENAME TO")  # its objects would stay with the old name
        database, name = args["new_database"], args["new_name"]
        try:
            self.catalog.get_table(DatabaseName=database, Name=name)
        except EntityNotFoundException:
            pass
        else:  # said before the folder it would move to is found taken (by that table)
            raise AlreadyExistsException(f"Table {database}.{name} already exists")
        new = table_input(table)
        new["Name"] = name
        rename_table(self.catalog, self.files, table, database, new)

    def _dropping(self, removal: Removal, commit: Callable[[], object]) -> list[Hidden]:
        """A drop's catalog commit, its folders hidden first (data_files.hide) so that a process killed
        between the commit and their deletion leaves no files where a later MSCK REPAIR, a write or a new
        table would take them for rows; they come back if the commit fails."""
        hidden = self.files.hide(removal)
        try:
            commit()
        except BaseException:
            # Also when the commit's outcome is unknown: files back in a dropped folder are what a drop
            # before this left, where files hidden under a drop that did not happen would be lost rows.
            self.files.unhide(hidden)
            raise
        return hidden

    def op_drop_table(self, args: dict[str, Any]) -> None:
        """DROP TABLE [PURGE]: a managed table's data goes with it, an external table's stays (PURGE too,
        as in Spark); data_files says which folders."""
        table = self._table(args)
        removal = self.files.plan_drop_table(table)
        # The removal is planned from the table as read: not another table made under its name since, nor
        # one whose folder an update changed (then not the folder to delete).
        hidden = self._dropping(removal, lambda: self.catalog.delete_table_as_read(Table=table))
        # Only after the table is gone, so no reader sees half its data.
        self.files.remove(removal, hidden=hidden)

    # -- views ---------------------------------------------------------------------------------------

    def op_get_view(self, args: dict[str, Any]) -> dict[str, Any]:
        return views.get_view(self.catalog, args["database"], args["name"])

    def op_create_view(self, args: dict[str, Any]) -> None:
        views.create_view(
            self.catalog, args["database"], args["name"], args["view"], bool(args.get("replace"))
        )

    def op_drop_view(self, args: dict[str, Any]) -> bool:
        return views.drop_view(self.catalog, args["database"], args["name"])

    def op_rename_view(self, args: dict[str, Any]) -> None:
        views.rename_view(
            self.catalog, args["database"], args["name"], args["new_database"], args["new_name"]
        )

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
        stored = [list(v) for v in zip(*(rows.column(k).to_pylist() for k in keys), strict=True)]
        base = (table.get("StorageDescriptor") or {}).get("Location", "").rstrip("/")
        name = partition_namer(keys)
        locations = [
            loc or f"{base}/{name(v)}"
            for loc, v in zip(rows.column("Location").to_pylist(), stored, strict=True)
        ]
        types = [k.get("Type", "string") for k in table.get("PartitionKeys", [])]
        columns = [as_spark_reads(rows.column(k), t) for k, t in zip(keys, types, strict=True)]
        return [list(v) for v in zip(*columns, strict=True)], locations

    def op_list_partitions(self, args: dict[str, Any]) -> dict[str, Any]:
        table = self._table(args)
        values, locations = self._partitions(table, args.get("filters", []), _as_of(args))
        columns = [list(c) for c in zip(*values, strict=True)] if values else []
        return {"values": columns, "locations": locations}

    def _partition_input(self, table: dict[str, Any], values: list[str], location: str) -> dict[str, Any]:
        sd = dict(table.get("StorageDescriptor") or {})
        sd["Location"] = location
        return {"Values": values, "StorageDescriptor": sd}

    def op_list_objects(self, args: dict[str, Any]) -> dict[str, Any]:
        """A governed table's objects in the partitions matching Spark's filters: columns of partition
        values, then each object's URI and size; at a committed transaction (``transaction``), a time
        (``as_of``), a warehouse version (``version``: the one an earlier read of the query answered) or
        now."""
        table = self._table(args)
        keys = [k["Name"] for k in table.get("PartitionKeys") or []]
        filters = [f for f in args.get("filters", []) if _pushable(f)]
        rows = self.governed.objects(
            table, filters, args.get("transaction"), _as_of(args), args.get("version")
        )
        return objects_answer(rows, keys)

    def op_begin_write(self, args: dict[str, Any]) -> dict[str, str]:
        """A staging folder for one write job's files; for a governed table, the job's transaction starts
        too (the folder is named by it)."""
        table = self._table(args)
        formats.check_writable(table)
        if is_governed(table):
            at = args.get("loaded_version")
            return {"staging": self.governed.begin(table, args.get("transaction_timeout"), at)}
        return {"staging": self.files.begin_write(table)}

    def op_commit_write(self, args: dict[str, Any]) -> None:
        """A finished job: its files move into place and its partitions are registered (data_files); a
        governed table's files are registered as objects in the job's transaction, which commits."""
        table = self._table(args)
        write = self.governed.commit if is_governed(table) else self.files.commit_write
        self._statistics_outdated(table)
        write(table, args["staging"], args["mode"], args["written"], args.get("overwrite", []))
        self._size_updated(table, args)

    def op_abort_write(self, args: dict[str, Any]) -> None:
        if self.governed.owns(args["staging"]):
            self.governed.abort(args["staging"])
        else:
            self.files.abort_write(args["staging"])

    def op_truncate(self, args: dict[str, Any]) -> None:
        """TRUNCATE TABLE [PARTITION]: the files go, the partitions stay (as Hive does); refused on an
        external table."""
        table = self._table(args)
        self._statistics_outdated(table)
        if is_governed(table):
            self.governed.truncate(table, args.get("partitions"))
        else:
            self.files.truncate(table, args.get("partitions"))
        self._size_updated(table, args)

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
        version = self.catalog.table_version(DatabaseName=args["database"], TableName=args["name"])
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
        _not_governed(table, "ALTER TABLE ADD PARTITION")
        values_list: list[list[str]] = args["partitions"]
        props_list = [dict(props or {}) for props in args["properties"]]
        if len(props_list) != len(values_list):
            raise InvalidInputException("create_partitions: each partition needs its own properties map")
        locations = [props.pop("location", None) for props in props_list]
        unplaced = [i for i, location in enumerate(locations) if not location]
        if unplaced:
            keys = [k["Name"] for k in table.get("PartitionKeys", [])]
            names = partition_names(keys, [values_list[i] for i in unplaced])
            base = table_location(table)
            for i, name in zip(unplaced, names, strict=True):
                _check_folder_names(table, values_list[i], name)
                locations[i] = f"{base}/{name}"
        # A folder a drop on an object store was killed before deleting holds dropped rows: deleted first.
        self.files.finish_drops(loc for loc in locations if loc)
        add = []
        for values, props, location in zip(values_list, props_list, locations, strict=True):
            part = self._partition_input(table, values, location)
            if props:
                part["Parameters"] = props
            add.append(part)
        self._statistics_outdated(table)
        got = self.catalog.commit_partitions(DatabaseName=args["database"], TableName=args["name"], Add=add)
        self._size_updated(table, args)
        return {"version": got["CommitVersion"]}

    def op_drop_partitions(self, args: dict[str, Any]) -> dict[str, int]:
        """ALTER TABLE DROP PARTITION [PURGE]: a managed table's partition folders go with them."""
        table = self._table(args)
        _not_governed(table, "ALTER TABLE DROP PARTITION")
        removal = self.files.plan_drop_partitions(table, args["partitions"])
        self._statistics_outdated(table)
        got: dict[str, Any] = {}

        def commit() -> None:
            got.update(
                self.catalog.commit_partitions(
                    DatabaseName=args["database"], TableName=args["name"], Drop=args["partitions"]
                )
            )

        hidden = self._dropping(removal, commit)
        self.files.remove(removal, hidden=hidden)
        self._size_updated(table, args)
        return {"version": got["CommitVersion"]}

    def _statistics_outdated(self, table: dict[str, Any]) -> None:
        """Before a change of the table's data (a write, TRUNCATE, partitions added or dropped): its
        statistics, table parameters and column statistics, go, as Spark's own catalog drops them
        (spark.sql.statistics.size.autoUpdate.enabled off). Kept, they would describe the data as it
        was: a table analyzed empty would still plan as 0 bytes and 0 rows (broadcast whatever it
        holds now), and min and max would be those of rows overwritten. Before, not after: a failure
        here must fail the statement while nothing has changed (a committed write reported as failed
        is run again: its rows twice), and statistics lost to a write that then fails cost nothing
        but a plan made without them. A table without statistics costs reads here, no commit."""
        for _ in range(5):
            try:
                now = self.catalog.get_table(DatabaseName=table["DatabaseName"], Name=table["Name"])["Table"]
            except EntityNotFoundException:
                return  # dropped meanwhile: nothing left to describe
            kept = statistics.without_statistics(now.get("Parameters") or {})
            columns = statistics.has_column_statistics(self.catalog, now)
            if kept is None and not columns:
                return
            new = table_input(now)
            if kept is not None:
                new["Parameters"] = kept
            try:
                self.catalog.update_table_as_read(
                    Table=now, TableInput=new, SkipArchive=True, DropColumnStatistics=columns
                )
                return
            except ConcurrentModificationException:
                continue  # updated meanwhile: read it again, its statistics still describe old data
        raise ConcurrentModificationException(
            f"Table {table['DatabaseName']}.{table['Name']} kept being updated by others, so its statistics, "
            "which a change of its data outdates, could not be dropped first; nothing was changed"
        )

    def _size_updated(self, table: dict[str, Any], args: dict[str, Any]) -> None:
        """After a change of the table's data, with spark.sql.statistics.size.autoUpdate.enabled
        (``size_auto_update``): its new size and file count in its parameters, as Spark's catalog records
        them (CommandUtils.updateTableStats), for the planner to use. Best effort: the data is committed,
        so a failure here must not report the statement as failed (run again, its rows would be there
        twice); the table is then left without statistics, as without the setting."""
        if not args.get("size_auto_update"):
            return
        with contextlib.suppress(GlueError, OSError):
            now = self.catalog.get_table(DatabaseName=table["DatabaseName"], Name=table["Name"])["Table"]
            sizes = self._file_sizes(now)
            new = table_input(now)
            new["Parameters"] = statistics.table_parameters(
                new.get("Parameters") or {}, sum(sizes), len(sizes), None
            )
            self.catalog.update_table_as_read(Table=now, TableInput=new, SkipArchive=True)

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

    def _named(self, args: dict[str, Any]) -> dict[str, Any]:
        database, name = self._qualified(args["table"])
        table: dict[str, Any] = self.catalog.get_table(DatabaseName=database, Name=name)["Table"]
        return table

    def op_repair_table(self, args: dict[str, Any]) -> list[dict[str, str]]:
        """MSCK REPAIR TABLE / RECOVER PARTITIONS: partitions found in the folders registered, and (drop) the
        registered ones whose folder is gone dropped; what it did, one row per partition."""
        table = self._named(args)
        _not_governed(table, "MSCK REPAIR TABLE")
        return maintenance.repair_table(
            self.catalog, self.files, table, bool(args.get("add", True)), bool(args.get("drop"))
        )

    def op_set_partition_location(self, args: dict[str, Any]) -> list[dict[str, str]]:
        table = self._named(args)
        _not_governed(table, "ALTER TABLE PARTITION ... SET LOCATION")
        values = maintenance.partition_values(table, args["partition"])
        return maintenance.set_partition_location(self.catalog, table, values, args["location"])

    def op_rename_partition(self, args: dict[str, Any]) -> dict[str, int]:
        table = self._table(args)
        _not_governed(table, "ALTER TABLE PARTITION ... RENAME TO")
        version = maintenance.rename_partition(
            self.catalog, self.files, table, args["values"], args["new_values"]
        )
        return {"version": version}

    def _file_sizes(self, table: dict[str, Any]) -> list[int]:
        """The sizes of the table's data files (from its folders; a governed table's from its objects)."""
        if is_governed(table):  # its files are its objects
            objects = self.governed.objects(table, [], None, None)
            return [int(n or 0) for n in objects.column("Size").to_pylist()]
        if table.get("PartitionKeys"):
            folders = [f for _, f in self.files.partition_folders(table)]
        else:
            folders = [(table.get("StorageDescriptor") or {}).get("Location") or ""]
        return [info.size for f in folders if f for info in data_file_infos(f)]

    def op_analyze_table(self, args: dict[str, Any]) -> list[dict[str, str]]:
        """ANALYZE TABLE: the table's size and file count (from its folders; a governed table's from its
        objects), the row count and column statistics Spark computed (``num_rows``, ``column_stats``;
        absent with NOSCAN), stored in Glue."""
        table = self._named(args)
        sizes = self._file_sizes(table)
        rows = args.get("num_rows")
        new = table_input(table)
        old = new.get("Parameters") or {}
        new["Parameters"] = statistics.table_parameters(old, sum(sizes), len(sizes), rows)
        # As Spark's ANALYZE without columns: when the size or row count changed, the column statistics
        # (of the data as it was) go; ANALYZE ... FOR COLUMNS keeps the other columns' (AnalyzeColumnCommand).
        outdated = not (args.get("columns") or args.get("all_columns")) and statistics.changed(
            old, new["Parameters"]
        )
        # Listing the files takes a while: a table update made meanwhile through another door fails this
        # one (ConcurrentModificationException) rather than being reverted, and dropped from the history
        # by SkipArchive.
        self.catalog.update_table_as_read(
            Table=table, TableInput=new, SkipArchive=True, DropColumnStatistics=outdated
        )
        out = [
            {"statistic": statistics.SIZE, "value": str(sum(sizes))},
            {"statistic": statistics.FILES, "value": str(len(sizes))},
        ]
        if rows is not None:
            out.append({"statistic": statistics.ROWS, "value": str(rows)})
        try:
            stored, skipped = statistics.store(self.catalog, table, args.get("column_stats") or {})
        except NotImplementedByServer:  # a Glue without column statistics: the table's are kept
            stored, skipped = [], ["the catalog service keeps no column statistics"]
        out += [{"statistic": "column statistics", "value": c} for c in stored]
        out += [{"statistic": "no column statistics", "value": why} for why in skipped]
        return out

    class Java:
        implements = ["io.gluecat.spark.PythonCatalog"]  # noqa: RUF012 (Py4J reads this class attribute)
