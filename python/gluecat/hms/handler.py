"""The Hive Metastore calls gluecat answers from a gluecat Catalog: the nine of the protocol document,
the other reads and the identity call stock clients make, and (hms/writes.py) their writes."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar
from urllib.parse import unquote

from gluecat.api.pages import READ_ATTEMPTS, every, every_database, every_table
from gluecat.api.partition_names import partition_namer
from gluecat.errors import EntityNotFoundException, GlueError, InvalidInputException
from gluecat.hms import filters, mapping, patterns
from gluecat.hms.gen.hive_metastore import ttypes
from gluecat.hms.writes import Writes, answers_as_hive

T = TypeVar("T")

# Hive 2.3's org.apache.hadoop.hive.metastore.TableType, the types get_tables_by_type takes (case counts).
HIVE_TABLE_TYPES = frozenset(
    {"MANAGED_TABLE", "EXTERNAL_TABLE", "VIRTUAL_VIEW", "INDEX_TABLE", "MATERIALIZED_VIEW"}
)


def hive_pattern(pattern: str) -> Callable[[str], bool]:
    """Hive's name patterns (hms/patterns.py); one too long is the MetaException the IDL declares.

    A missing pattern (None) is Hive's "all names"; an empty one is a pattern like any other, which
    matches no name, as in Hive (it must not be taken for "*").
    """
    try:
        return patterns.hive_pattern(pattern)
    except patterns.PatternError as e:
        raise ttypes.MetaException(message=str(e)) from e


def _unnamable(error: InvalidInputException, kind: str, *names: str | None) -> Exception:
    """A name no database or table can have (empty, too long, ...) names nothing: Hive answers
    NoSuchObjectException for it, as for any other name it does not have, and clients that ask
    "does it exist?" catch exactly that. A missing name (None) stays a MetaException, as in Hive."""
    if any(n is None for n in names):
        return ttypes.MetaException(message=error.message)
    return ttypes.NoSuchObjectException(
        message=f"{kind} {'.'.join(map(str, names))} not found: {error.message}"
    )


class Handler(Writes):
    """Implements ThriftHiveMetastore.Iface for the methods gluecat serves (others: UNKNOWN_METHOD).

    ``principal`` is who the caller is: over HTTP the user Basic authentication checked; over TCP the
    name set_ugi sent, unverified (as in Hive without Kerberos), None before it. ``known_user``, when
    given, refuses set_ugi names it answers False for.
    """

    def __init__(
        self,
        catalog: Any,
        principal: str | None = None,
        known_user: Callable[[str], bool] | None = None,
        set_ugi_names_caller: bool = True,
    ) -> None:
        self.catalog = catalog
        self.principal = principal
        self.known_user = known_user
        self.set_ugi_names_caller = set_ugi_names_caller

    # -- helpers -------------------------------------------------------------------------------

    def _database_names(self) -> list[str]:
        try:
            return [d["Name"] for d in every_database(self.catalog)]
        except GlueError as e:
            raise ttypes.MetaException(message=e.message) from e

    def _tables(self, db_name: str) -> list[dict[str, Any]]:
        try:
            return every_table(self.catalog, db_name)
        except EntityNotFoundException:
            return []  # Hive lists no tables of a database it does not have
        except InvalidInputException as e:
            if db_name is None:
                raise ttypes.MetaException(message=e.message) from e
            return []  # nor of one no database can be named (too long, empty, ...)
        except GlueError as e:
            raise ttypes.MetaException(message=e.message) from e

    # -- the nine methods ----------------------------------------------------------------------

    def get_all_databases(self) -> list[str]:
        return self._database_names()

    def get_databases(self, pattern: str) -> list[str]:
        matches = hive_pattern("*" if pattern is None else pattern)
        return [n for n in self._database_names() if matches(n)]

    def get_database(self, name: str) -> Any:
        try:
            return mapping.database(self.catalog.get_database(Name=name)["Database"])
        except EntityNotFoundException as e:
            raise ttypes.NoSuchObjectException(message=e.message) from e
        except InvalidInputException as e:
            raise _unnamable(e, "Database", name) from e
        except GlueError as e:
            raise ttypes.MetaException(message=e.message) from e

    def get_all_tables(self, db_name: str) -> list[str]:
        return [t["Name"] for t in self._tables(db_name)]

    def get_tables(self, db_name: str, pattern: str) -> list[str]:
        matches = hive_pattern("*" if pattern is None else pattern)
        return [t["Name"] for t in self._tables(db_name) if matches(t["Name"])]

    def get_tables_by_type(self, db_name: str, pattern: str, tableType: str) -> list[str]:
        if tableType not in HIVE_TABLE_TYPES:
            # Hive 2.3 answers TableType.valueOf's failure as a MetaException, whatever the database;
            # an unknown, empty or missing type must not read as "no such tables" or "all tables".
            raise ttypes.MetaException(
                message=f"tableType: {tableType!r} is not one of Hive's table types "
                f"({', '.join(sorted(HIVE_TABLE_TYPES))})"
            )
        matches = hive_pattern("*" if pattern is None else pattern)
        return [
            t.tableName
            for t in (mapping.table(doc) for doc in self._tables(db_name))
            if matches(t.tableName) and t.tableType == tableType
        ]

    def _table(self, db_name: str, tbl_name: str, as_of: datetime | None = None) -> dict[str, Any]:
        try:
            found = self.catalog.get_table(DatabaseName=db_name, Name=tbl_name, QueryAsOfTime=as_of)
            return dict(found["Table"])
        except EntityNotFoundException as e:
            raise ttypes.NoSuchObjectException(message=e.message) from e
        except InvalidInputException as e:
            raise _unnamable(e, "Table", db_name, tbl_name) from e
        except GlueError as e:
            raise ttypes.MetaException(message=e.message) from e

    def get_table(self, dbname: str, tbl_name: str) -> Any:
        return mapping.table(self._table(dbname, tbl_name))

    def _table_and_partitions(
        self, db_name: str, tbl_name: str, read: Callable[[datetime | None], T]
    ) -> tuple[dict[str, Any], T]:
        """The table and ``read(as_of)`` of its partitions, both of one state of the warehouse.

        They are separate calls (and a listing is read page by page), each at the latest state: a commit
        landing in between would make the answer a mix of two states, e.g. with both or neither of two
        partitions one commit swapped, or named by the keys of a table dropped since. So the whole is
        read again while a commit changed the table or its partitions meanwhile; a table written to all
        the time is then read as of one moment (time travel: slower, but of one state however busy)."""
        for _ in range(READ_ATTEMPTS):
            table = self._table(db_name, tbl_name)  # NoSuchObjectException for a name no table has
            since = self.catalog.table_version(DatabaseName=db_name, TableName=tbl_name)
            found = self._partitions_read(read, None)
            unchanged = self.catalog.partitions_unchanged_since(db_name, tbl_name, since) is not None
            if unchanged and self._table(db_name, tbl_name) == table:
                return table, found
        when = datetime.now(UTC)
        return self._table(db_name, tbl_name, when), self._partitions_read(read, when)

    @staticmethod
    def _partitions_read(read: Callable[[datetime | None], T], as_of: datetime | None) -> T:
        try:
            return read(as_of)
        except GlueError as e:
            raise ttypes.MetaException(message=e.message) from e

    def get_partition_names(self, db_name: str, tbl_name: str, max_parts: int) -> list[str]:
        try:
            table, rows = self._table_and_partitions(
                db_name,
                tbl_name,
                lambda as_of: self.catalog.get_partitions_arrow(
                    DatabaseName=db_name, TableName=tbl_name, QueryAsOfTime=as_of
                ),
            )
        except ttypes.NoSuchObjectException as e:
            raise ttypes.MetaException(message=e.message) from e  # the IDL declares only MetaException
        keys = [k["Name"] for k in table.get("PartitionKeys") or []]
        columns = [rows.column(k).to_pylist() for k in keys]
        name = partition_namer(keys)
        # In Hive's order (ORDER BY PART_NAME), so that max_parts keeps the partitions Hive keeps.
        names = sorted(name([str(c[i]) for c in columns]) for i in range(rows.num_rows))
        return names if max_parts is None or max_parts < 0 else names[:max_parts]

    def get_partitions(self, db_name: str, tbl_name: str, max_parts: int) -> list[Any]:
        limit = None if max_parts is None or max_parts < 0 else max_parts
        if limit == 0:
            self._table(db_name, tbl_name)
            return []
        table, parts = self._table_and_partitions(
            db_name,
            tbl_name,
            lambda as_of: list(
                every(
                    self.catalog.get_partitions,
                    "Partitions",
                    DatabaseName=db_name,
                    TableName=tbl_name,
                    QueryAsOfTime=as_of,
                )
            ),
        )
        name = partition_namer([k["Name"] for k in table.get("PartitionKeys") or []])
        named = [(name(p["Values"]), p) for p in parts]
        # Hive lists partitions by name too (ORDER BY PART_NAME) and max_parts keeps the first ones:
        # the store's order (by values) differs once a value has a character Hive escapes.
        named.sort(key=lambda pair: pair[0])
        return mapping.partitions([p for _, p in named[:limit]], table)

    # -- more reads stock clients make ---------------------------------------------------------

    def _values_of_name(self, table: dict[str, Any], part_name: str) -> list[str]:
        """The values of a partition name (``k1=v1/k2=v2``, escaped as Hive escapes it), in the table's
        key order; MetaException for a name that is not one of the table's partitions' names."""
        keys = [k["Name"].lower() for k in table.get("PartitionKeys") or []]
        found: dict[str, str] = {}
        for part in (part_name or "").split("/"):
            key, eq, value = part.partition("=")
            if not eq:
                raise ttypes.MetaException(message=f"Invalid partition key & values; {part_name!r}")
            found[unquote(key).lower()] = unquote(value)
        if sorted(found) != sorted(keys):
            raise ttypes.MetaException(message=f"Invalid partition key & values; {part_name!r}")
        return [found[k] for k in keys]

    def _partition_list(
        self, db_name: str, tbl_name: str, max_parts: int | None, expression: str | None = None
    ) -> list[Any]:
        table, parts = self._table_and_partitions(
            db_name,
            tbl_name,
            lambda as_of: list(
                every(
                    self.catalog.get_partitions,
                    "Partitions",
                    DatabaseName=db_name,
                    TableName=tbl_name,
                    Expression=expression,
                    QueryAsOfTime=as_of,
                )
            ),
        )
        name = partition_namer([k["Name"] for k in table.get("PartitionKeys") or []])
        named = sorted(((name(p["Values"]), p) for p in parts), key=lambda pair: pair[0])
        limit = None if max_parts is None or max_parts < 0 else max_parts
        return mapping.partitions([p for _, p in named[:limit]], table)

    def get_partitions_by_filter(self, db_name: str, tbl_name: str, filter: str, max_parts: int) -> list[Any]:
        try:
            expression = filters.expression(filter or "")
        except filters.FilterError as e:
            raise ttypes.MetaException(message=str(e)) from e
        return self._partition_list(db_name, tbl_name, max_parts, expression or None)

    def _matching_spec(self, db_name: str, tbl_name: str, part_vals: list[str], max_parts: int) -> list[Any]:
        """Partitions whose values start with ``part_vals`` (an empty value matches any), Hive's
        partial specification."""
        table = self._table(db_name, tbl_name)
        keys = table.get("PartitionKeys") or []
        vals = list(part_vals or [])
        if not vals or len(vals) > len(keys):
            # Hive 2.3 builds a partition name of the given values, and refuses none or too many.
            raise ttypes.MetaException(message=f"Invalid partition key & values; values {vals}")
        clauses = [
            f"{k['Name']} = '{v.replace(chr(39), chr(39) * 2)}'"
            for k, v in zip(keys, vals, strict=False)
            if v and k.get("Type", "string").lower().split("(")[0] in ("string", "varchar", "char")
        ]
        parts = self._partition_list(db_name, tbl_name, -1, " AND ".join(clauses) or None)
        chosen = [p for p in parts if all(not v or v == pv for v, pv in zip(vals, p.values, strict=False))]
        return chosen if max_parts is None or max_parts < 0 else chosen[:max_parts]

    def get_partitions_ps(
        self, db_name: str, tbl_name: str, part_vals: list[str], max_parts: int
    ) -> list[Any]:
        return self._matching_spec(db_name, tbl_name, part_vals, max_parts)

    def get_partitions_ps_with_auth(
        self,
        db_name: str,
        tbl_name: str,
        part_vals: list[str],
        max_parts: int,
        user_name: str,
        group_names: list[str],
    ) -> list[Any]:
        return self._matching_spec(db_name, tbl_name, part_vals, max_parts)

    def get_partitions_with_auth(
        self, db_name: str, tbl_name: str, max_parts: int, user_name: str, group_names: list[str]
    ) -> list[Any]:
        return self.get_partitions(db_name, tbl_name, max_parts)

    def get_partition_names_ps(
        self, db_name: str, tbl_name: str, part_vals: list[str], max_parts: int
    ) -> list[str]:
        table = self._table(db_name, tbl_name)
        name = partition_namer([k["Name"] for k in table.get("PartitionKeys") or []])
        return [name(p.values) for p in self._matching_spec(db_name, tbl_name, part_vals, max_parts)]

    @answers_as_hive()
    def get_partition(self, db_name: str, tbl_name: str, part_vals: list[str]) -> Any:
        table = self._table(db_name, tbl_name)
        return self._read_partition(table, list(part_vals or []))

    def get_partition_with_auth(
        self, db_name: str, tbl_name: str, part_vals: list[str], user_name: str, group_names: list[str]
    ) -> Any:
        return self.get_partition(db_name, tbl_name, part_vals)

    @answers_as_hive()
    def get_partition_by_name(self, db_name: str, tbl_name: str, part_name: str) -> Any:
        table = self._table(db_name, tbl_name)
        return self._read_partition(table, self._values_of_name(table, part_name))

    @answers_as_hive()
    def get_partitions_by_names(self, db_name: str, tbl_name: str, names: list[str]) -> list[Any]:
        table = self._table(db_name, tbl_name)
        wanted = [self._values_of_name(table, n) for n in names or []]
        return mapping.partitions(self._existing(db_name, tbl_name, wanted), table)

    @answers_as_hive()
    def get_table_objects_by_name(self, dbname: str, tbl_names: list[str]) -> list[Any]:
        out = []
        for name in tbl_names or []:
            try:
                out.append(self.get_table(dbname, name))
            except ttypes.NoSuchObjectException:
                continue  # Hive leaves out the names it does not have
        return out

    def get_table_objects_by_name_req(self, req: Any) -> Any:
        return ttypes.GetTablesResult(tables=self.get_table_objects_by_name(req.dbName, req.tblNames))

    def get_functions(self, dbName: str, pattern: str) -> list[str]:
        return []  # gluecat keeps no user-defined functions

    def get_all_functions(self) -> Any:
        return ttypes.GetAllFunctionsResponse(functions=[])

    # -- identity and the connection ---------------------------------------------------------------

    def set_ugi(self, user_name: str, group_names: list[str]) -> list[str]:
        """The caller's user name becomes its principal (unverified); with ``known_user``, a name
        the users file does not have is refused."""
        if not user_name:
            raise ttypes.MetaException(message="set_ugi: user_name is empty")
        if self.known_user is not None and not self.known_user(user_name):
            raise ttypes.MetaException(
                message=f"set_ugi: user {user_name!r} is not one of the server's users"
            )
        if self.set_ugi_names_caller:
            self.principal = user_name
        return list(group_names or [])  # as Hive 2.3's metastore answers it

    def shutdown(self) -> None:
        """fb303's oneway shutdown: clients send it when they close; the server goes on serving."""

    def getStatus(self) -> int:
        return 2  # fb303's ALIVE

    def getName(self) -> str:
        return "gluecat"

    def getVersion(self) -> str:
        return "2.3.10"
