"""The Hive Metastore's write calls that stock clients make (Spark's Hive support, Hive, Trino),
answered with the catalog's Glue operations, so every door sees the same catalog.

Each answers as Hive 2.3's metastore does (tests/hms/test_differential_real_hms.py compares them): a
Glue error becomes the exception the IDL declares for the call (``hive_error``), and the data files
follow Hive's rules as gluecat's Spark catalog keeps them (data/files.py): a managed table's
folder is made for it and deleted with it when the client asks (deleteData), and moves with a
rename; an external table's data is never touched.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar, cast
from urllib.parse import urlsplit

import pyarrow.fs as pafs

from gluecat import locations
from gluecat.api.pages import every
from gluecat.api.partition_names import partition_namer
from gluecat.catalog import grants
from gluecat.data.files import DataFiles
from gluecat.data.maintenance import rename_partition
from gluecat.data.renames import rename_table
from gluecat.errors import (
    AlreadyExistsException,
    EntityNotFoundException,
    GlueError,
    InvalidInputException,
)
from gluecat.hms import hive_input, mapping
from gluecat.hms.gen.hive_metastore import ThriftHiveMetastore, ttypes

F = TypeVar("F", bound=Callable[..., Any])

# The Hive exceptions a Glue error may become, best first; the first one the call declares is used.
_PREFERRED: dict[type[GlueError], tuple[str, ...]] = {
    EntityNotFoundException: (
        "NoSuchObjectException",
        "InvalidObjectException",
        "UnknownDBException",
        "UnknownTableException",
        "InvalidOperationException",
    ),
    AlreadyExistsException: ("AlreadyExistsException", "InvalidObjectException", "InvalidOperationException"),
    InvalidInputException: ("InvalidObjectException", "InvalidOperationException", "InvalidInputException"),
}


def declared(method: str) -> dict[str, type]:
    """The exception classes ``method`` declares, by name."""
    spec = getattr(ThriftHiveMetastore, f"{method}_result").thrift_spec
    return {s[3][0].__name__: s[3][0] for s in spec[1:] if s is not None}


def hive_error(method: str, error: GlueError, **override: str) -> Exception:
    """``error`` as the exception ``method`` declares for it (MetaException when none fits).

    ``override`` names, by Glue error code, the Hive exception a call raises instead of the usual one
    (Hive's alter_table answers a missing table with InvalidOperationException, not NoSuchObject).
    """
    found = declared(method)
    names: tuple[str, ...] = (override[error.code],) if error.code in override else ()
    for kind, preferred in _PREFERRED.items():
        if isinstance(error, kind):
            names += preferred
    for name in (*names, "MetaException"):
        if name in found:
            return cast(Exception, found[name](message=error.message))
    return cast(Exception, ttypes.MetaException(message=error.message))


def answers_as_hive(**override: str) -> Callable[[F], F]:
    """Turns the Glue errors of a handler method into the exception its Hive call declares."""

    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        def call(self: Any, *args: Any) -> Any:
            try:
                return fn(self, *args)
            except GlueError as e:
                raise hive_error(fn.__name__, e, **override) from e

        return cast(F, call)

    return wrap


def _make_folder(location: str | None) -> None:
    """Hive makes a new table's or partition's folder; on an object store there are none to make."""
    # Judged by the scheme first: making a file system object for s3:// would already reach the network.
    if not location or urlsplit(location).scheme not in ("", "file"):
        return
    fs, path = locations.filesystem(location)
    if isinstance(fs, pafs.LocalFileSystem):
        fs.create_dir(path, recursive=True)


class Writes:
    """The write calls; mixed into hms/handler.py's Handler, which provides ``catalog`` and the reads."""

    catalog: Any

    @functools.cached_property
    def files(self) -> DataFiles:
        return DataFiles(self.catalog)

    # -- databases -------------------------------------------------------------------------------

    @answers_as_hive()
    def create_database(self, database: Any) -> None:
        db = hive_input.database(database)
        if "LocationUri" not in db:
            # Hive answers get_database with the folder it chose; gluecat's rule is <warehouse>/<db>.db.
            db["LocationUri"] = f"{str(self.catalog.warehouse).rstrip('/')}/{str(database.name).lower()}.db"
            grants.require_placing(db["LocationUri"])  # as for a request that names that folder
        self.catalog.create_database(DatabaseInput=db)
        _make_folder(db["LocationUri"])

    @answers_as_hive()
    def alter_database(self, dbname: str, db: Any) -> None:
        self.catalog.update_database(Name=dbname, DatabaseInput={**hive_input.database(db), "Name": dbname})

    @answers_as_hive()
    def drop_database(self, name: str, deleteData: bool, cascade: bool) -> None:
        self.catalog.get_database(Name=name)
        tables = [t["Name"] for t in every(self.catalog.get_tables, "TableList", DatabaseName=name)]
        if tables and not cascade:
            raise ttypes.InvalidOperationException(
                message=f"Database {name} is not empty. One or more tables exist."
            )
        if not deleteData:
            self.catalog.delete_database(Name=name)
            return
        folder = self.files.database_folder(name)
        removal = self.files.plan_drop_database(name)
        hidden = self._dropping(removal, lambda: self.catalog.delete_database(Name=name))
        self.files.remove(removal, hidden=hidden)
        self.files.remove_empty_database_folder(name, folder)

    # -- tables ----------------------------------------------------------------------------------

    def create_table(self, tbl: Any) -> None:
        self.create_table_with_environment_context(tbl, None)

    @answers_as_hive()
    def create_table_with_environment_context(self, tbl: Any, environment_context: Any) -> None:
        table = hive_input.table(tbl)
        database = tbl.dbName
        try:
            self.catalog.get_database(Name=database)
        except EntityNotFoundException as e:  # what Hive 2.3 answers, not the declared NoSuchObject
            raise ttypes.InvalidObjectException(message=f"{e.message} (the table's database)") from e
        sd = table.setdefault("StorageDescriptor", {})
        if table.get("TableType") != "VIRTUAL_VIEW" and not sd.get("Location"):
            # CREATE TABLE ... USING parquet sends no location: Hive puts the table in its database's folder.
            sd["Location"] = self.files.default_location(database, table["Name"])
            grants.require_placing(sd["Location"])  # as for a request that names that folder
        self.catalog.create_table(DatabaseName=database, TableInput=table)
        if table.get("TableType") != "VIRTUAL_VIEW":
            _make_folder(sd.get("Location"))  # as Hive does, but only once the table is made

    def drop_table(self, dbname: str, name: str, deleteData: bool) -> None:
        self.drop_table_with_environment_context(dbname, name, deleteData, None)

    @answers_as_hive()
    def drop_table_with_environment_context(
        self, dbname: str, name: str, deleteData: bool, environment_context: Any
    ) -> None:
        table = self.catalog.get_table(DatabaseName=dbname, Name=name)["Table"]
        if not deleteData:
            self.catalog.delete_table_as_read(Table=table)
            return
        removal = self.files.plan_drop_table(table)
        hidden = self._dropping(removal, lambda: self.catalog.delete_table_as_read(Table=table))
        self.files.remove(removal, hidden=hidden)

    def alter_table(self, dbname: str, tbl_name: str, new_tbl: Any) -> None:
        self.alter_table_with_environment_context(dbname, tbl_name, new_tbl, None)

    def alter_table_with_cascade(self, dbname: str, tbl_name: str, new_tbl: Any, cascade: bool) -> None:
        self.alter_table_with_environment_context(dbname, tbl_name, new_tbl, None)

    @answers_as_hive(EntityNotFoundException="InvalidOperationException")
    def alter_table_with_environment_context(
        self, dbname: str, tbl_name: str, new_tbl: Any, environment_context: Any
    ) -> None:
        table = self.catalog.get_table(DatabaseName=dbname, Name=tbl_name)["Table"]
        new = hive_input.table(new_tbl)
        new_db = (new_tbl.dbName or dbname).lower()
        if new_db == table["DatabaseName"] and new["Name"].lower() == table["Name"]:
            self.catalog.update_table_as_read(Table=table, TableInput=new)
            return
        self._rename(table, new_db, new)

    def _rename(self, table: dict[str, Any], database: str, new: dict[str, Any]) -> None:
        """Hive's rename: a managed table at its default folder moves to the new name's, with the
        partitions inside it (data/files.py's plan_rename), in one catalog commit."""
        try:
            self.catalog.get_table(DatabaseName=database, Name=new["Name"])
        except EntityNotFoundException:
            pass
        else:
            raise ttypes.InvalidOperationException(
                message=f"new table {database}.{new['Name']} already exists"
            )
        rename_table(self.catalog, self.files, table, database, new)

    def _dropping(self, removal: Any, commit: Callable[[], object]) -> Any:
        """The catalog commit of a drop, its folders hidden first and back if it fails (as the Spark
        catalog drops: spark/backend.py)."""
        hidden = self.files.hide(removal)
        try:
            commit()
        except BaseException:
            self.files.unhide(hidden)
            raise
        return hidden

    # -- partitions ------------------------------------------------------------------------------

    def _table_doc(self, db_name: str, tbl_name: str) -> dict[str, Any]:
        return cast(dict[str, Any], self.catalog.get_table(DatabaseName=db_name, Name=tbl_name)["Table"])

    def _placed(self, table: dict[str, Any], part: dict[str, Any]) -> dict[str, Any]:
        """A new partition without a location goes to its Hive path under the table's folder."""
        sd = dict(part.get("StorageDescriptor") or {})
        base = (table.get("StorageDescriptor") or {}).get("Location")
        if not sd.get("Location") and base and "Values" in part:
            keys = [k["Name"] for k in table.get("PartitionKeys") or []]
            if len(keys) == len(part["Values"]):
                sd["Location"] = f"{str(base).rstrip('/')}/{partition_namer(keys)(part['Values'])}"
        return {**part, "StorageDescriptor": sd}

    def _existing(self, db_name: str, tbl_name: str, values: list[list[str]]) -> list[dict[str, Any]]:
        """The partitions of those ``values`` that exist, in BatchGetPartition's pages of 1,000."""
        found: list[dict[str, Any]] = []
        for at in range(0, len(values), 1000):
            found += self.catalog.batch_get_partition(
                DatabaseName=db_name,
                TableName=tbl_name,
                PartitionsToGet=[{"Values": v} for v in values[at : at + 1000]],
            )["Partitions"]
        return found

    def _read_partition(self, table: dict[str, Any], values: list[str]) -> Any:
        got = self.catalog.get_partition(
            DatabaseName=table["DatabaseName"], TableName=table["Name"], PartitionValues=values
        )["Partition"]
        return mapping.partition(got, table)

    def _add(
        self, db_name: str, tbl_name: str, parts: list[Any], if_not_exists: bool, need_result: bool = True
    ) -> list[Any]:
        table = self._table_doc(db_name, tbl_name)
        for p in parts:
            if (p.dbName or db_name).lower() != table["DatabaseName"] or (
                p.tableName or tbl_name
            ).lower() != table["Name"]:
                raise ttypes.MetaException(
                    message=f"Partition {p.values} names table {p.dbName}.{p.tableName}, "
                    f"not {db_name}.{tbl_name}"
                )
        add = [self._placed(table, hive_input.partition(p)) for p in parts]
        if if_not_exists:
            have = {tuple(p["Values"]) for p in self._existing(db_name, tbl_name, [a["Values"] for a in add])}
            add = [a for a in add if tuple(a["Values"]) not in have]
        if add:
            self.catalog.commit_partitions(
                DatabaseName=db_name, TableName=tbl_name, Add=add, IfNotExists=if_not_exists
            )
        for a in add:
            _make_folder(a["StorageDescriptor"].get("Location"))
        if not need_result:
            return add
        # Read back as stored (creation times, the table's format filled in), in the order given.
        stored = {
            tuple(p["Values"]): p for p in self._existing(db_name, tbl_name, [a["Values"] for a in add])
        }
        return mapping.partitions(
            [stored[tuple(a["Values"])] for a in add if tuple(a["Values"]) in stored], table
        )

    @answers_as_hive()
    def add_partition(self, new_part: Any) -> Any:
        return self._add(new_part.dbName, new_part.tableName, [new_part], False)[0]

    def add_partition_with_environment_context(self, new_part: Any, environment_context: Any) -> Any:
        return self.add_partition(new_part)

    @answers_as_hive()
    def add_partitions(self, new_parts: list[Any]) -> int:
        if not new_parts:
            return 0
        return len(
            self._add(new_parts[0].dbName, new_parts[0].tableName, new_parts, False, need_result=False)
        )

    @answers_as_hive()
    def add_partitions_req(self, request: Any) -> Any:
        need = bool(request.needResult)
        parts = list(request.parts or [])
        added = self._add(request.dbName, request.tblName, parts, bool(request.ifNotExists), need)
        return ttypes.AddPartitionsResult(partitions=added if need else None)

    def drop_partition(self, db_name: str, tbl_name: str, part_vals: list[str], deleteData: bool) -> bool:
        return self.drop_partition_with_environment_context(db_name, tbl_name, part_vals, deleteData, None)

    @answers_as_hive()
    def drop_partition_with_environment_context(
        self, db_name: str, tbl_name: str, part_vals: list[str], deleteData: bool, environment_context: Any
    ) -> bool:
        table = self._table_doc(db_name, tbl_name)
        values = list(part_vals or [])
        self.catalog.get_partition(DatabaseName=db_name, TableName=tbl_name, PartitionValues=values)

        def commit() -> None:
            self.catalog.commit_partitions(DatabaseName=db_name, TableName=tbl_name, Drop=[values])

        if not deleteData:
            commit()
            return True
        removal = self.files.plan_drop_partitions(table, [values])
        hidden = self._dropping(removal, commit)
        self.files.remove(removal, hidden=hidden)
        return True

    def drop_partition_by_name(self, db_name: str, tbl_name: str, part_name: str, deleteData: bool) -> bool:
        return self.drop_partition_by_name_with_environment_context(
            db_name, tbl_name, part_name, deleteData, None
        )

    @answers_as_hive()
    def drop_partition_by_name_with_environment_context(
        self, db_name: str, tbl_name: str, part_name: str, deleteData: bool, environment_context: Any
    ) -> bool:
        values = self._values_of_name(self._table_doc(db_name, tbl_name), part_name)
        return self.drop_partition_with_environment_context(db_name, tbl_name, values, deleteData, None)

    def _values_of_name(self, table: dict[str, Any], part_name: str) -> list[str]:
        raise NotImplementedError  # the Handler's (hms/handler.py)

    def alter_partition(self, db_name: str, tbl_name: str, new_part: Any) -> None:
        self.alter_partitions(db_name, tbl_name, [new_part])

    def alter_partition_with_environment_context(
        self, db_name: str, tbl_name: str, new_part: Any, environment_context: Any
    ) -> None:
        self.alter_partitions(db_name, tbl_name, [new_part])

    def alter_partitions_with_environment_context(
        self, db_name: str, tbl_name: str, new_parts: list[Any], environment_context: Any
    ) -> None:
        self.alter_partitions(db_name, tbl_name, new_parts)

    @answers_as_hive(EntityNotFoundException="InvalidOperationException")
    def alter_partitions(self, db_name: str, tbl_name: str, new_parts: list[Any]) -> None:
        table = self._table_doc(db_name, tbl_name)
        entries = [hive_input.partition(p) for p in new_parts or []]
        if not entries:
            return
        have = {
            tuple(p["Values"])
            for p in self._existing(db_name, tbl_name, [e.get("Values", []) for e in entries])
        }
        missing = [e.get("Values") for e in entries if tuple(e.get("Values", [])) not in have]
        if missing:
            raise ttypes.InvalidOperationException(
                message=f"alter is not possible: partition {missing[0]} of {db_name}.{tbl_name} does not exist"
            )
        updates = [
            {"PartitionValueList": e["Values"], "PartitionInput": self._placed(table, e)} for e in entries
        ]
        # BatchUpdatePartition takes 100 at a time: a larger alter is several commits (Hive's is one).
        for at in range(0, len(updates), 100):
            got = self.catalog.batch_update_partition(
                DatabaseName=db_name, TableName=tbl_name, Entries=updates[at : at + 100]
            )
            if got.get("Errors"):
                detail = got["Errors"][0]["ErrorDetail"]
                raise ttypes.InvalidOperationException(
                    message=f"{detail['ErrorCode']}: {detail['ErrorMessage']}"
                )

    @answers_as_hive(EntityNotFoundException="InvalidOperationException")
    def rename_partition(self, db_name: str, tbl_name: str, part_vals: list[str], new_part: Any) -> None:
        table = self._table_doc(db_name, tbl_name)
        new_values = list(new_part.values or [])
        if list(part_vals or []) == new_values:
            self.alter_partitions(db_name, tbl_name, [new_part])
            return
        rename_partition(self.catalog, self.files, table, list(part_vals or []), new_values)
