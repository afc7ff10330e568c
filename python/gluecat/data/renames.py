"""A table's rename with its data: what Spark's ALTER TABLE RENAME and the Hive Metastore's alter_table
to a new name both do, one way."""

from __future__ import annotations

from typing import Any

from gluecat.catalog import grants
from gluecat.data.files import DataFiles, FolderMove
from gluecat.errors import InternalServiceException


def rename_table(
    catalog: Any, files: DataFiles, table: dict[str, Any], database: str, new: dict[str, Any]
) -> None:
    """Rename ``table`` (as read) to ``new`` (a TableInput) in ``database``, in one catalog commit
    (Catalog.rename_table: ConcurrentModificationException if another client changed the table since it
    was read). A managed table at its default folder takes its folder to the new name's default folder,
    as Hive does, so a new table of the old name starts empty: its files move before the commit (on an
    object store, copied before it and the old ones deleted after it), and back if the commit fails, so
    a failure leaves the old table whole. ``new``'s location is the moved folder when it names the old
    one or none."""
    move = files.plan_rename(table, database, new["Name"])
    moving = FolderMove(*move) if move is not None else None
    old_location = (table.get("StorageDescriptor") or {}).get("Location")
    sd = dict(new.get("StorageDescriptor") or {})
    if move is not None and old_location and sd.get("Location") in (None, old_location):
        sd["Location"] = DataFiles.moved(old_location, *move)
    new = {**new, "StorageDescriptor": sd}
    if move is not None:
        # Where the folder goes is placed data, as RenameTable's MovedFolder is: checked for the caller
        # the call acts for (over Hive; the Spark plugin's RenameTable is checked by the server).
        grants.require_placing(move[1])
        grants.require_placing(sd.get("Location"))
    if moving is not None:
        moving.prepare()
        moving.switch()
    try:
        # MovedFolder, not a function: a catalog over the wire relocates the partitions itself.
        moved = {"From": move[0], "To": move[1]} if move is not None else None
        catalog.rename_table(Table=table, NewDatabaseName=database, TableInput=new, MovedFolder=moved)
    except BaseException as e:
        # A commit whose outcome is unknown (its log entry may have been published) may have made the
        # new table over the moved folder: the folder moves back only while the old table is there.
        if moving is not None and still_there(catalog, table):
            _move_back(moving, e)
        raise
    if moving is not None:
        moving.finish()


def still_there(catalog: Any, table: dict[str, Any]) -> bool:
    """Whether ``table`` (as read) is still in the catalog; False when that cannot be told."""
    try:
        now = catalog.get_table(DatabaseName=table["DatabaseName"], Name=table["Name"])["Table"]
    except Exception:
        return False
    return bool(now["CreateTime"] == table["CreateTime"])


def _move_back(move: FolderMove, failure: BaseException) -> None:
    """Move a renamed table's folder back after its rename failed; if that fails too, say where the old
    table's data now is rather than leave the table to read as empty without a word."""
    try:
        move.undo()
    except Exception as e:
        raise InternalServiceException(f"The rename failed ({failure}), and {move.stranded(e)}") from failure
