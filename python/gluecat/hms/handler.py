"""The nine Hive Metastore calls of the protocol document, answered from a gluecat Catalog."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

from gluecat.api.pages import READ_ATTEMPTS, every, every_database, every_table
from gluecat.api.partition_names import partition_namer
from gluecat.errors import EntityNotFoundException, GlueError, InvalidInputException
from gluecat.hms import mapping, patterns
from gluecat.hms.gen.hive_metastore import ttypes

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


class Handler:
    """Implements ThriftHiveMetastore.Iface for the methods gluecat serves (others: UNKNOWN_METHOD)."""

    def __init__(self, catalog: Any) -> None:
        self.catalog = catalog

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
        return [mapping.partition(p, table) for _, p in named[:limit]]
