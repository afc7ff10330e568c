"""Which log keeps what, in a warehouse whose tables have logs of their own (format 6).

The root log keeps what the whole catalog shares: databases, every table's definition (so that a listing
of a database's tables reads one log), tags, the files aborted transactions are deleting, and governed
tables' objects (Lake Formation transactions span tables and commit atomically in the root). Each
table's log keeps its own: its partitions, versions, partition indexes and column statistics, and a copy
of its definition. A commit to one table's partitions or statistics is a commit to that table's log
alone, so writers of different tables never wait for each other; a change of a table's definition (or
anything else the root decides) is published in the root and, as a marker, in the table's log
(gluecat/store/store.py), so that a reader of one table reads one log.

A table's log is named after the table ([database, name]), not an id: a table dropped and made again
goes on in the same log, and a reader that asks for a table that does not exist reads its would-be log.
"""

from __future__ import annotations

import json

import xxhash

Key = tuple[str, ...]

TABLE = "table"
TABLE_KINDS = frozenset(
    {"table", "table_version", "column_statistics", "partition_column_statistics", "partition_index"}
)
"""Record kinds kept by table (the key starts with database and table); ``table`` is kept in both the
root and the table's log."""
MARKS = "$marks"
"""Root records, one a table: the newest marker the root committed in the table's log (``{"root": root
version, "version": the marker's version}``), by which a reader finds a table log that lost one."""
LAYOUT = "$warehouse"
"""The root record that says how the warehouse keeps its tables (key ``("layout",)``)."""
LAYOUT_KEY: Key = ("layout",)
SHARDED = {"tables": "own-logs"}


def table_of(kind: str, key: Key) -> Key | None:
    """The table whose log keeps a record, or None for the root."""
    if kind in TABLE_KINDS and len(key) >= 2:
        return key[:2]
    return None


def table_of_rows(rows: Key) -> Key | None:
    """The table whose log keeps a row set's segments: a table's partitions ([database, name]) are in
    its log; governed tables' objects ([database, name, "objects"]) in the root."""
    return rows if len(rows) == 2 else None


def in_root(kind: str) -> bool:
    """Whether the root keeps records of ``kind`` (table definitions are in both)."""
    return kind not in TABLE_KINDS or kind == TABLE


def log_name(table: Key) -> str:
    """The folder name of a table's log: a hash of its key (names may hold any character)."""
    return xxhash.xxh3_128_hexdigest(json.dumps(list(table), ensure_ascii=False).encode())
