"""What dropping a table, or changing its number of partition keys, removes: for the table operations,
DeleteDatabase, and the staged writes a Lake Formation transaction commits."""

from __future__ import annotations

from typing import Any

from gluecat.catalog import grants, tags
from gluecat.catalog.context import (
    COLUMN_STATISTICS,
    PARTITION_COLUMN_STATISTICS,
    PARTITION_INDEX,
    TABLE,
    TABLE_VERSION,
    partition_key_count,
)
from gluecat.catalog.objects import rows_key
from gluecat.errors import ResourceNotReadyException
from gluecat.store.snapshot import Changes, Snapshot


def drop_table_changes(snap: Snapshot, database: str, name: str, changes: Changes) -> None:
    """Add to ``changes`` the removal of a table and everything that belongs to it."""
    prefix = (database, name)
    for index_key in snap.keys_with_prefix(PARTITION_INDEX, prefix):
        if (snap.get(PARTITION_INDEX, index_key) or {}).get("IndexStatus") == "CREATING":
            raise ResourceNotReadyException(
                f"Table {database}.{name} cannot be deleted while its partition index {index_key[2]} is CREATING"
            )
        changes.delete(PARTITION_INDEX, index_key)
    changes.delete(TABLE, prefix)
    for kind in (TABLE_VERSION, COLUMN_STATISTICS, PARTITION_COLUMN_STATISTICS):
        for key in snap.keys_with_prefix(kind, prefix):
            changes.delete(kind, key)
    for key in (prefix, rows_key(database, name)):
        for path in snap.table_segments(key):
            changes.segment_removes.append((key, path))
    tags.drop_changes(snap, ("table", database, name), changes)
    grants.dropped_table(snap, database, name, changes)


def reshaped_rows_changes(snap: Snapshot, old: dict[str, Any], new: dict[str, Any], changes: Changes) -> None:
    """Add to ``changes`` the removal of a table's row sets (its partitions' and its objects' segments)
    when an update changes its number of partition keys.

    That is allowed only while the table holds neither (indexes.check_table_update,
    objects.check_key_change), so its segments hold only deletions and the rows they deleted. Left in
    place, rows of two numbers of values would share a row set, which no fold or merge reads: the
    table's next partition read, write or compaction failed."""
    if partition_key_count(old) == partition_key_count(new):
        return
    database, name = old["DatabaseName"], old["Name"]
    for key in ((database, name), rows_key(database, name)):
        for path in snap.table_segments(key):
            changes.segment_removes.append((key, path))
