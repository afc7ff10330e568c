"""The data files of the tables Spark reads and writes through gluecat: the one place that moves and deletes them.

The rules, as Hive and Spark's built-in catalog keep them, plus one they lack (nothing another table reads
is ever deleted):

- A table's data is the catalog's (managed) when the table is a MANAGED_TABLE or GOVERNED, its Parameters do
  not say EXTERNAL=TRUE, and its folder lies inside its database's folder (the database's LocationUri, else
  ``<warehouse>/<db>.db``). Anything else is external: created with LOCATION, registered by a crawler, moved
  elsewhere with SET LOCATION.
- DROP TABLE [PURGE], ALTER TABLE DROP PARTITION [PURGE] and DROP DATABASE CASCADE delete managed data and
  never external data. A partition's folder is deleted only if it lies inside its table's managed folder.
  The folders are hidden before the catalog commit and deleted after it, so a killed drop leaves no
  files behind where they would read as rows again.
- TRUNCATE TABLE [PARTITION] deletes the files of a managed table's folders and is refused on an external
  table (CANNOT_TRUNCATE_EXTERNAL_TABLE).
- A folder is never deleted while another table, a partition of another table or a partition that stays
  uses it, lies inside it or contains it; nor anything holding the catalog's own ``_gluecat`` folder. Such
  a folder stays (DROP) or the statement is refused (TRUNCATE, INSERT OVERWRITE), so no table loses rows
  another statement wrote to a different table.
- A managed table is created in an empty folder (LOCATION_ALREADY_EXISTS otherwise), so files left behind
  never come back as rows of a new table. Renaming a managed table at its default folder moves the folder
  to the new name's default folder, taking the partitions inside it along (unless another table uses the
  folder: then it stays, and a new table of the old name is refused its folder).
- A write's files go to a staging folder private to the job; its commit sets aside the files an overwrite
  replaces, moves the new ones into place, registers new partitions in one catalog commit, and only then
  deletes the replaced files. A failed job leaves nothing; a killed one never leaves a partition folder
  with old and new rows together.
"""

from __future__ import annotations

import bisect
import errno
import posixpath
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow.fs as pafs

from gluecat import locations
from gluecat.api.pages import every
from gluecat.api.partition_names import partition_namer
from gluecat.api.patterns import check_db_or_table_name
from gluecat.api.table_kinds import is_external
from gluecat.errors import EntityNotFoundException, InternalServiceException, InvalidInputException
from gluecat.spark.refusals import SparkRefusal, quoted

if TYPE_CHECKING:
    from gluecat.spark.remote import GlueClient

STAGING_PREFIX = ".gluecat-staging-"
DROPPING_PREFIX = ".gluecat-dropping-"  # a dropped table's or partition's folder, until it is deleted
_FOLDER_RENAMES = ("local", "hdfs")  # file systems that rename a folder in one step
_REPLACED = ".replaced"  # in a staging folder: the files an overwrite replaces, until its commit
_STORE_FOLDER = "_gluecat"


def folder_key(location: str) -> str:
    """A location in one canonical form for comparing folders: the place Spark writes to and this module
    touches (gluecat.locations.literal: a ``file:`` URI's path as Hadoop reads it, not percent-decoded;
    local paths with ``..``, ``//`` and symbolic links resolved, s3a/s3n as s3, no trailing slash)."""
    return locations.literal(location)


def _inside(child: str, parent: str) -> bool:
    return child == parent or child.startswith(parent + "/")


def _ancestors(key: str) -> Iterator[str]:
    while True:
        parent = key.rsplit("/", 1)[0]
        if not parent or parent == key or parent.endswith(":/") or parent.endswith(":"):
            return
        yield parent
        key = parent


def filesystem(location: str) -> tuple[pafs.FileSystem, str]:
    """The file system and path of a table or partition location (a URI, or a local path), read as Spark
    reads it: a ``file:`` location's ``k=a%3Ab`` is the folder Spark wrote, not ``k=a:b``."""
    return locations.hadoop_filesystem(location)


def _visible(path: str) -> bool:
    name = path.rstrip("/").rsplit("/", 1)[-1]
    return not name.startswith(("_", "."))


def _listing(fs: pafs.FileSystem, path: str, recursive: bool = False) -> list[pafs.FileInfo]:
    """What a folder holds: nothing if it is not there, or if no folder can have its path (a name longer
    than the file system allows, ENAMETOOLONG: the Hive path of a partition registered without a
    location, whose values are long)."""
    try:
        return fs.get_file_info(pafs.FileSelector(path, allow_not_found=True, recursive=recursive))
    except OSError as e:
        if e.errno == errno.ENAMETOOLONG:
            return []
        raise


def data_files(location: str) -> list[str]:
    """The data files directly in a folder (not hidden ones, not subfolders), as file-system paths."""
    fs, path = filesystem(location)
    return [
        info.path for info in _listing(fs, path) if info.type == pafs.FileType.File and _visible(info.path)
    ]


def has_files(location: str) -> bool:
    """Whether a folder holds any file, at any depth."""
    fs, path = filesystem(location)
    return any(info.type == pafs.FileType.File for info in _listing(fs, path, recursive=True))


def _renames_folders(fs: pafs.FileSystem) -> bool:
    """Whether ``fs`` renames a folder in one step (object stores copy every file, and pyarrow moves no
    folder there)."""
    return fs.type_name in _FOLDER_RENAMES


def _in_staging(path: str) -> bool:
    return any(part.startswith((STAGING_PREFIX, DROPPING_PREFIX)) for part in path.split("/"))


def row_files(location: str, removed: Iterable[str] = ()) -> list[str]:
    """The files at any depth of a folder that could read as rows: not those in write jobs' staging
    folders or drops' hidden folders (a killed job or drop leaves its own behind), nor those inside
    ``removed``."""
    fs, path = filesystem(location)
    gone = [folder_key(f) for f in removed]
    root = len(path.rstrip("/"))
    out = []
    for info in _listing(fs, path, recursive=True):
        below = info.path[root:]
        if info.type != pafs.FileType.File or _in_staging(below):
            continue
        if not any(_inside(folder_key(f"{location.rstrip('/')}{below}"), g) for g in gone):
            out.append(info.path)
    return out


def delete_tree_except(location: str, keep: str) -> None:
    """Delete a folder and everything in it but the folder ``keep`` (and the folders holding it)."""
    fs, path = filesystem(location)
    keep_key = folder_key(keep)
    if not _inside(keep_key, folder_key(location)):
        delete_tree(location)
        return
    for info in fs.get_file_info(pafs.FileSelector(path, allow_not_found=True)):
        child = f"{location.rstrip('/')}/{info.path.rstrip('/').rsplit('/', 1)[-1]}"
        key = folder_key(child)
        if key == keep_key:
            continue
        if _inside(keep_key, key):
            delete_tree_except(child, keep)
        elif info.type == pafs.FileType.Directory:
            fs.delete_dir(info.path)
        else:
            fs.delete_file(info.path)


def _delete_files(location: str) -> None:
    fs, _ = filesystem(location)
    for path in data_files(location):
        fs.delete_file(path)


def delete_tree(location: str) -> None:
    """Delete a folder and everything in it; one that is gone already counts as deleted."""
    fs, path = filesystem(location)
    try:
        found = fs.get_file_info(path).type != pafs.FileType.NotFound
    except OSError as e:
        if e.errno != errno.ENAMETOOLONG:  # else a path no folder can have: none to delete
            raise
        found = False
    if found:
        fs.delete_dir(path)


@dataclass
class Claims:
    """The folders that tables use, for checking a deletion: each folder's canonical key and its user."""

    users: dict[str, str] = field(default_factory=dict)
    trees: dict[str, str] = field(default_factory=dict)
    """Folders whose every subfolder is in use too (the catalog's own files)."""
    _sorted: list[str] = field(default_factory=list)

    def add(self, location: str, user: str) -> None:
        # Hadoop reads a file: URI's percent-escapes as they are, pyarrow decodes them: both folders.
        for key in {folder_key(location), locations.literal(location)}:
            self.users.setdefault(key, user)

    def add_tree(self, location: str, user: str) -> None:
        self.add(location, user)
        self.trees.setdefault(folder_key(location), user)

    def seal(self) -> Claims:
        self._sorted = sorted(self.users)
        return self

    def using(self, key: str) -> str | None:
        """Who uses exactly this folder (or a folder it lies in, for the catalog's own)."""
        if key in self.users:
            return self.users[key]
        return next((user for tree, user in self.trees.items() if _inside(key, tree)), None)

    def overlapping(self, key: str) -> str | None:
        """Who uses this folder, a folder inside it, or a folder containing it."""
        if key in self.users:
            return self.users[key]
        for parent in _ancestors(key):
            if parent in self.users:
                return self.users[parent]
        i = bisect.bisect_left(self._sorted, key + "/")
        if i < len(self._sorted) and self._sorted[i].startswith(key + "/"):
            return self.users[self._sorted[i]]
        return None


@dataclass
class Removal:
    """What a drop deletes once its catalog commit is done: whole folders, and why others stay; partition
    folders' emptied parents go too, up to ``within`` (the table's folder), as Hive removes them."""

    trees: list[str] = field(default_factory=list)
    kept: list[tuple[str, str]] = field(default_factory=list)
    within: str | None = None


@dataclass
class Hidden:
    """A folder a drop renamed out of the way until its catalog commit is done (``within``: not the folder
    but what it held, moved into ``at`` inside it)."""

    fs: pafs.FileSystem
    folder: str
    at: str
    within: bool = False


class DataFiles:
    """The data-file life cycle of one warehouse's tables, by the rules in this module's docstring."""

    def __init__(self, catalog: GlueClient) -> None:
        self.catalog = catalog

    # -- where tables live ---------------------------------------------------------------------

    def database_folder(self, database: str) -> str:
        return self._folder_of(self.catalog.get_database(Name=database)["Database"])

    def _folder_of(self, db: dict[str, Any]) -> str:
        if db.get("LocationUri"):
            return str(db["LocationUri"]).rstrip("/")
        return self._default_database_folder(db["Name"])

    def _default_database_folder(self, name: str) -> str:
        """``<warehouse>/<db>.db``, of the database's name as the catalog stores it (lower case)."""
        if self.catalog.warehouse is None:  # a catalog service that is not gluecat names none
            raise InvalidInputException(
                f"Database {name} has no LocationUri, and the catalog names no warehouse to put its tables "
                "in: give the database a LOCATION, or set the Spark catalog's warehouse option"
            )
        return f"{self.catalog.warehouse.rstrip('/')}/{name}.db"

    def default_location(self, database: str, name: str) -> str:
        """Where a table made without LOCATION lives: ``<database folder>/<table>``, both named as the
        catalog names them (in lower case, as Hive's and Spark's own catalogs name their folders), so that
        the folder is one of those its database manages. InvalidInputException if either name cannot be
        the name of one folder: the table's folder would lie inside another table's, be its database's
        folder, lie outside it, or be refused by the file system (ENAMETOOLONG)."""
        db = self.catalog.get_database(Name=database)["Database"]
        table = check_db_or_table_name(name, "Name")
        if not db.get("LocationUri"):
            why = locations.folder_name_problem(f"{db['Name']}.db")
            if why is not None:
                raise InvalidInputException(
                    f"Database {db['Name']} has no folder for table {table}: {db['Name'] + '.db'!r} cannot "
                    f"be the name of a folder ({why}); give the database a LOCATION, or the table one"
                )
        why = locations.folder_name_problem(table)
        if why is not None:
            raise InvalidInputException(
                f"Table {db['Name']}.{table} has no default folder: {table!r} cannot be the name of a "
                f"folder ({why}); give the table a LOCATION"
            )
        return f"{self._folder_of(db)}/{table}"

    def managed_folder(self, table: dict[str, Any]) -> str | None:
        """The table's folder when its data is the catalog's to delete, else None."""
        location = (table.get("StorageDescriptor") or {}).get("Location")
        if not location or is_external(table):
            return None
        key = folder_key(location)
        db_key = folder_key(self.database_folder(table["DatabaseName"]))
        if key == db_key or not _inside(key, db_key):
            return None
        return str(location).rstrip("/")

    def partition_folders(
        self, table: dict[str, Any], values: list[list[str]] | None = None
    ) -> list[tuple[list[str], str]]:
        """The partitions of a table (those with ``values``, if given, that exist) with their folders."""
        keys = [k["Name"] for k in table.get("PartitionKeys") or []]
        if not keys:
            return []
        base = str((table.get("StorageDescriptor") or {}).get("Location") or "").rstrip("/")
        name = partition_namer(keys)
        if values is None:
            rows = self.catalog.get_partitions_arrow(
                DatabaseName=table["DatabaseName"], TableName=table["Name"]
            )
            columns = [rows.column(k).to_pylist() for k in keys]
            found = [list(v) for v in zip(*columns, strict=True)]
            locations = rows.column("Location").to_pylist()
            return [(v, loc or f"{base}/{name(v)}") for v, loc in zip(found, locations, strict=True)]
        out = []
        for start in range(0, len(values), 1000):
            got = self.catalog.batch_get_partition(
                DatabaseName=table["DatabaseName"],
                TableName=table["Name"],
                PartitionsToGet=[{"Values": v} for v in values[start : start + 1000]],
            )
            for p in got["Partitions"]:
                loc = (p.get("StorageDescriptor") or {}).get("Location")
                out.append((list(p["Values"]), loc or f"{base}/{name(p['Values'])}"))
        return out

    def claims(
        self,
        skip_tables: Iterable[tuple[str, str]] = (),
        table: dict[str, Any] | None = None,
        leaving: Iterable[list[str]] = (),
    ) -> Claims:
        """Every folder some table uses, except the tables in ``skip_tables``; of ``table``, its partitions
        other than those ``leaving`` (its own folder is the partitions' parent by design, so not a claim)."""
        skipped = set(skip_tables)
        own = (table["DatabaseName"], table["Name"]) if table is not None else None
        gone = {tuple(v) for v in leaving}
        claims = Claims()
        if self.catalog.warehouse is not None:
            claims.add_tree(
                f"{self.catalog.warehouse.rstrip('/')}/{_STORE_FOLDER}", "the catalog's own files"
            )
        for db in every(self.catalog.get_databases, "DatabaseList"):
            for t in every(self.catalog.get_tables, "TableList", DatabaseName=db["Name"]):
                ident = (db["Name"], t["Name"])
                if ident in skipped:
                    continue
                location = (t.get("StorageDescriptor") or {}).get("Location")
                if location and ident != own:
                    claims.add(location, f"table {db['Name']}.{t['Name']}")
                if t.get("PartitionKeys") and location:
                    for values, folder in self.partition_folders(t):
                        if ident == own and tuple(values) in gone:
                            continue
                        claims.add(folder, f"partition {values} of {db['Name']}.{t['Name']}")
        return claims.seal()

    # -- creating ------------------------------------------------------------------------------

    def check_new_managed_folder(
        self, database: str, name: str, location: str, removed: Iterable[str] = ()
    ) -> None:
        """A managed table starts empty: files already in its folder would read as its rows (those of
        write jobs' staging folders never do; ``removed``: folders deleted before the table is made)."""
        if row_files(location, removed):
            raise SparkRefusal(
                "LOCATION_ALREADY_EXISTS",
                {"identifier": quoted(database, name), "location": f"'{location}'"},
                f"Table {database}.{name}: its folder {location} already holds files; pick another name, "
                "or remove the folder first",
            )

    # -- dropping ------------------------------------------------------------------------------

    def plan_drop_table(self, table: dict[str, Any]) -> Removal:
        """What DROP TABLE [PURGE] deletes: a managed table's folder, unless another table uses it."""
        removal = Removal()
        folder = self.managed_folder(table)
        if folder is not None:
            self._plan_tree(
                folder, self.claims(skip_tables=[(table["DatabaseName"], table["Name"])]), removal
            )
        return removal

    def plan_drop_database(self, database: str) -> Removal:
        """What DROP DATABASE CASCADE deletes: the folders of its managed tables, as DROP TABLE would."""
        removal = Removal()
        tables = list(every(self.catalog.get_tables, "TableList", DatabaseName=database))
        folders = [f for f in map(self.managed_folder, tables) if f is not None]
        if folders:
            claims = self.claims(skip_tables=[(database, t["Name"]) for t in tables])
            for folder in folders:
                self._plan_tree(folder, claims, removal)
        return removal

    def plan_drop_partitions(self, table: dict[str, Any], values: list[list[str]]) -> Removal:
        """What ALTER TABLE DROP PARTITION [PURGE] deletes: the folders of those partitions that lie inside
        a managed table's folder, unless a partition that stays or another table uses them."""
        removal = Removal()
        folder = self.managed_folder(table)
        if folder is None:
            return removal
        inside = [
            (v, f)
            for v, f in self.partition_folders(table, values)
            if _inside(folder_key(f), folder_key(folder)) and folder_key(f) != folder_key(folder)
        ]
        if inside:
            claims = self.claims(table=table, leaving=values)
            for _, f in inside:
                self._plan_tree(f, claims, removal)
        removal.within = folder
        return removal

    def _plan_tree(self, folder: str, claims: Claims, removal: Removal) -> None:
        user = claims.overlapping(folder_key(folder))
        if user is None:
            removal.trees.append(folder)
        else:
            removal.kept.append((folder, f"{user} uses it"))

    def remove(self, removal: Removal, keep: str | None = None, hidden: Iterable[Hidden] = ()) -> None:
        """Deletes what a plan said (and the folders ``hide`` renamed); called after the catalog commit, so
        no reader sees half a table. ``keep``: a folder inside them that stays (a REPLACE TABLE's staged
        rows)."""
        for h in hidden:
            h.fs.delete_dir(h.at)
        for folder in removal.trees:
            if keep is None:
                delete_tree(folder)
            else:
                delete_tree_except(folder, keep)
        if removal.within is not None:
            stop = folder_key(removal.within)
            for folder in removal.trees:
                parent = folder.rstrip("/").rsplit("/", 1)[0]
                while _inside(folder_key(parent), stop) and folder_key(parent) != stop:
                    fs, path = filesystem(parent)
                    infos = fs.get_file_info(pafs.FileSelector(path, allow_not_found=True))
                    if infos or fs.get_file_info(path).type != pafs.FileType.Directory:
                        break
                    fs.delete_dir(path)
                    parent = parent.rsplit("/", 1)[0]

    def hide(self, removal: Removal) -> list[Hidden]:
        """Before a drop's catalog commit: each folder it deletes is renamed to a hidden folder beside it
        (``.gluecat-dropping-<uuid>``), where no read, MSCK REPAIR or later write of a partition or table
        in its place finds its files, should the process die before deleting them. Only where a folder
        renames in one step (elsewhere the folders are deleted after the commit, as Hive deletes them)."""
        hidden = []
        for folder in removal.trees:
            fs, path = filesystem(folder)
            if not _renames_folders(fs) or fs.get_file_info(path).type != pafs.FileType.Directory:
                continue
            path = path.rstrip("/")
            at = f"{posixpath.dirname(path)}/{DROPPING_PREFIX}{uuid.uuid4()}"
            fs.move(path, at)
            hidden.append(Hidden(fs, path, at))
        return hidden

    def hide_except(self, removal: Removal, keep: str) -> list[Hidden]:
        """``hide`` for REPLACE TABLE, whose old folder holds the new rows' staging folder ``keep``: there
        everything else is hidden inside the folder, in a ``.gluecat-dropping-<uuid>`` of its own."""
        hidden = []
        keep_key = folder_key(keep)
        for folder in removal.trees:
            if not _inside(keep_key, folder_key(folder)):
                hidden += self.hide(Removal(trees=[folder]))
                continue
            fs, path = filesystem(folder)
            if not _renames_folders(fs):
                continue
            path = path.rstrip("/")
            at = f"{path}/{DROPPING_PREFIX}{uuid.uuid4()}"
            entries = fs.get_file_info(pafs.FileSelector(path, allow_not_found=True))
            fs.create_dir(at)
            for info in entries:
                if not info.base_name.startswith((STAGING_PREFIX, DROPPING_PREFIX)):
                    fs.move(info.path, f"{at}/{info.base_name}")
            hidden.append(Hidden(fs, path, at, within=True))
        return hidden

    @staticmethod
    def unhide(hidden: list[Hidden]) -> None:
        """The drop's catalog commit failed: its folders go back."""
        for h in reversed(hidden):
            if not h.within:
                h.fs.move(h.at, h.folder)
                continue
            for info in h.fs.get_file_info(pafs.FileSelector(h.at)):
                h.fs.move(info.path, f"{h.folder}/{info.base_name}")
            h.fs.delete_dir(h.at)

    def remove_empty_database_folder(self, database: str, folder: str) -> None:
        """Hive removes a dropped database's folder; gluecat does when nothing is left in it."""
        default = self._default_database_folder(check_db_or_table_name(database, "Name"))
        if folder_key(folder) == folder_key(default):
            fs, path = filesystem(folder)
            if fs.get_file_info(path).type == pafs.FileType.Directory and not has_files(folder):
                fs.delete_dir(path)

    # -- truncating ----------------------------------------------------------------------------

    def truncate(self, table: dict[str, Any], values: list[list[str]] | None) -> None:
        """TRUNCATE TABLE [PARTITION]: the files of the folders go, the partitions stay (as in Hive)."""
        if is_external(table):
            raise SparkRefusal(
                "CANNOT_TRUNCATE_EXTERNAL_TABLE",
                {"tableName": quoted(table["DatabaseName"], table["Name"])},
                f"Table {table['DatabaseName']}.{table['Name']} is external: TRUNCATE TABLE would delete "
                "data the catalog does not own",
            )
        if not table.get("PartitionKeys"):
            folders = [table_location(table)]
            claims = self.claims(table=table)
        else:
            found = self.partition_folders(table, values)
            if values is not None:
                missing = {tuple(v) for v in values} - {tuple(v) for v, _ in found}
                if missing:
                    raise _no_partition(table, list(next(iter(missing))))
            folders = [f for _, f in found]
            claims = self.claims(table=table, leaving=[v for v, _ in found])
        self._check_files_deletable(table, folders, claims, "TRUNCATE TABLE")
        for folder in folders:
            _delete_files(folder)

    def _check_files_deletable(
        self, table: dict[str, Any], folders: list[str], claims: Claims, statement: str
    ) -> None:
        for folder in folders:
            user = claims.using(folder_key(folder))
            if user is not None:
                why = f"among {user}" if user in claims.trees.values() else f"which {user} also reads"
                raise InvalidInputException(
                    f"{statement} on {table['DatabaseName']}.{table['Name']} would delete the files in "
                    f"{folder}, {why}; refused"
                )

    # -- renaming ------------------------------------------------------------------------------

    def plan_rename(self, table: dict[str, Any], database: str, name: str) -> tuple[str, str] | None:
        """For ALTER TABLE RENAME: (old folder, new folder) when a managed table at its default folder moves
        to the new name's default folder (as Hive moves it); None when the data stays where it is."""
        folder = self.managed_folder(table)
        if folder is None:
            return None
        try:
            old_default = self.default_location(table["DatabaseName"], table["Name"])
        except InvalidInputException:
            return None  # a name with no default folder (made through another client): not at it
        if folder_key(folder) != folder_key(old_default):
            return None
        if self.claims(skip_tables=[(table["DatabaseName"], table["Name"])]).overlapping(folder_key(folder)):
            return None  # another table reads it: the data stays, and the old name's folder stays taken
        new = self.default_location(database, name)
        fs, path = filesystem(new)
        if fs.get_file_info(path).type != pafs.FileType.NotFound:
            raise SparkRefusal(
                "LOCATION_ALREADY_EXISTS",
                {"identifier": quoted(database, name), "location": f"'{new}'"},
                f"Cannot rename {table['DatabaseName']}.{table['Name']} to {database}.{name}: its new "
                f"folder {new} already exists",
            )
        return folder, new

    @staticmethod
    def moved(location: str, old: str, new: str) -> str:
        """``location`` with the folder ``old`` it lies in replaced by ``new``; unchanged if outside it."""
        return locations.moved(location, old, new)

    @staticmethod
    def move_folder(old: str, new: str) -> None:
        """Moves a folder (a rename where the file system has one)."""
        fs, src = filesystem(old)
        _, dst = filesystem(new)
        if fs.get_file_info(src).type == pafs.FileType.NotFound:
            return
        fs.create_dir(posixpath.dirname(dst.rstrip("/")), recursive=True)
        fs.move(src, dst)

    def plan_rename_partition(
        self, table: dict[str, Any], values: list[str], new_values: list[str], location: str
    ) -> tuple[str, str] | None:
        """For PARTITION RENAME TO: (old folder, new folder) when a managed table's partition is at its
        Hive path, which then moves to the new values' Hive path; else None."""
        root = self.managed_folder(table)
        if root is None:
            return None
        name = partition_namer([k["Name"] for k in table["PartitionKeys"]])
        if folder_key(location) != folder_key(f"{root}/{name(values)}"):
            return None
        new = f"{root}/{name(new_values)}"
        if has_files(new):
            raise InvalidInputException(
                f"Cannot rename partition {values} of {table['DatabaseName']}.{table['Name']} to "
                f"{new_values}: its new folder {new} already holds files"
            )
        return location, new

    # -- writing -------------------------------------------------------------------------------

    def begin_write(self, table: dict[str, Any]) -> str:
        """A staging folder private to one write job, inside the table's folder (hidden from readers)."""
        return f"{table_location(table)}/{STAGING_PREFIX}{uuid.uuid4()}"

    def abort_write(self, staging: str) -> None:
        """A failed job: its staging folder and everything in it go."""
        if STAGING_PREFIX not in staging.rsplit("/", 1)[-1]:
            raise InvalidInputException(f"{staging} is not a gluecat staging folder")
        delete_tree(staging)

    def commit_write(
        self,
        table: dict[str, Any],
        staging: str,
        mode: str,
        written: list[dict[str, Any]],
        overwrite: list[list[str]],
    ) -> None:
        """Moves a finished job's files into the partitions that exist, setting aside the files an
        overwrite replaces; registers new partitions (and drops the ones an overwrite emptied) in one
        catalog commit; then moves the new partitions' files in and deletes the replaced ones.

        ``written``: each partition the job wrote, as its folder under the staging folder (``fragment``)
        and its values. ``mode``: APPEND, OVERWRITE_BY_FILTER (``overwrite``: the values of the partitions
        Spark's filters match, as the shim evaluated them), OVERWRITE_DYNAMIC or TRUNCATE.

        Partition by partition, the replaced files go into the staging folder's hidden ``.replaced``
        before the new ones come in, so a driver killed meanwhile never leaves a partition reading old
        and new rows together (as Spark's own dynamic overwrite replaces one folder at a time), and the
        replaced files are still there to be moved back. A new partition's files come in only once it is
        registered: a killed driver leaves a registered partition without its rows (they stay in the
        hidden staging folder), never files in an unregistered folder, which MSCK REPAIR would take for
        rows and a later write would be refused. A failure before the catalog commit puts every file back.
        """
        keep_staging = False
        try:
            plan = self._plan_write(table, mode, [w["values"] for w in written], overwrite)
            self._check_new_partition_folders(table, plan.add)
            if plan.overwritten:
                claims = self.claims(table=table, leaving=plan.overwritten_values)
                self._check_files_deletable(table, plan.overwritten, claims, "INSERT OVERWRITE")
            moves = _Moves(staging, plan.overwritten)
            new = {tuple(p["Values"]) for p in plan.add}
            later = []  # new partitions' files: placed once registered, so none is ever found unregistered
            try:
                for w, target in zip(written, plan.targets, strict=True):
                    source = f"{staging}/{w['fragment']}" if w["fragment"] else staging
                    if tuple(w["values"]) in new:
                        later.append((source, target))
                        continue
                    moves.set_aside(target)
                    moves.place(source, target)
                for folder in list(moves.replaced):
                    moves.set_aside(folder)
                if plan.add or plan.drop:
                    self._commit_partitions(table, plan)
            except InternalServiceException as e:
                # The commit's outcome may be unknown: the files go where the commit would have them.
                problem = self._place_after_commit(moves, later)
                keep_staging = problem is not None
                if problem is not None:
                    raise InternalServiceException(f"{e.message}; {problem}") from e
                raise
            except BaseException as e:
                problem = moves.undo()
                keep_staging = problem is not None
                if problem is not None:
                    raise InternalServiceException(f"{type(e).__name__}: {e}; {problem}") from e
                raise
            problem = self._place_after_commit(moves, later)
            if problem is not None:
                keep_staging = True
                raise InternalServiceException(problem)
        finally:
            if not keep_staging:
                delete_tree(staging)

    def _commit_partitions(self, table: dict[str, Any], plan: _WritePlan) -> None:
        self.catalog.commit_partitions(
            DatabaseName=table["DatabaseName"],
            TableName=table["Name"],
            Add=plan.add,
            Drop=plan.drop,
            IfNotExists=True,
            IfExists=True,
        )

    @staticmethod
    def _place_after_commit(moves: _Moves, later: list[tuple[str, str]]) -> str | None:
        """The new partitions' files into their folders, after their catalog commit; what went wrong and
        where the files not moved are (the staging folder, which must then stay), or None."""
        try:
            for source, target in later:
                moves.place(source, target)
        except Exception as e:
            return (
                f"the write's new partitions were registered, but moving their files in failed ({e}); the "
                f"files not in place are in {moves.staging}"
            )
        return None

    def _check_new_partition_folders(self, table: dict[str, Any], add: list[dict[str, Any]]) -> None:
        """Refuses to register a new partition of a managed table at a folder of it that already holds data
        files. Only a partition dropped through another client leaves them there (Glue's DeletePartition
        keeps a partition's files; Spark's DROP PARTITION deletes a managed one's): registered again, the
        dropped rows would come back beside the new ones, as files left behind never come back as rows of
        a new managed table (LOCATION_ALREADY_EXISTS)."""
        managed = self.managed_folder(table)
        if managed is None:
            return
        inside = folder_key(managed)
        for partition in add:
            folder = partition["StorageDescriptor"]["Location"]
            if _inside(folder_key(folder), inside) and data_files(folder):
                raise InvalidInputException(
                    f"Partition {partition['Values']} of {table['DatabaseName']}.{table['Name']} is new, but its "
                    f"folder {folder} holds data files that no registered partition reads (left by a partition "
                    "dropped through another client, whose files Glue keeps): registered now, their rows would "
                    "come back. Delete them, or register them first (ALTER TABLE ADD PARTITION, MSCK REPAIR "
                    "TABLE)"
                )

    def _plan_write(
        self, table: dict[str, Any], mode: str, written: list[list[str]], replaced: list[list[str]]
    ) -> _WritePlan:
        base = table_location(table)
        keys = [k["Name"] for k in table.get("PartitionKeys") or []]
        if not keys:
            overwrite = mode != "APPEND"
            return _WritePlan(targets=[base], overwritten=[base] if overwrite else [])
        existing = {tuple(v): f for v, f in self.partition_folders(table, written)}
        name = partition_namer(keys)
        targets = [existing.get(tuple(v)) or f"{base}/{name(v)}" for v in written]
        sd = dict(table.get("StorageDescriptor") or {})
        add = [
            {"Values": v, "StorageDescriptor": {**sd, "Location": t}}
            for v, t in zip(written, targets, strict=True)
            if tuple(v) not in existing
        ]
        plan = _WritePlan(targets=targets, add=add)
        if mode == "OVERWRITE_DYNAMIC":
            plan.overwritten = list(existing.values())
            plan.overwritten_values = [list(v) for v in existing]
        elif mode in ("OVERWRITE_BY_FILTER", "TRUNCATE"):
            # Exactly the partitions the filters match (a selection by the catalog's own evaluation of
            # Spark's filters may hold more, which is only right for a read): all of them for TRUNCATE.
            found = self.partition_folders(table, replaced if mode == "OVERWRITE_BY_FILTER" else None)
            matched = [v for v, _ in found]
            locations = [loc for _, loc in found]
            written_keys = {tuple(v) for v in written}
            plan.overwritten = sorted(set(locations) | set(existing.values()))
            plan.overwritten_values = matched + [list(v) for v in existing]
            plan.drop = [v for v in matched if tuple(v) not in written_keys]
        return plan


class _Moves:
    """A write's file moves, undone in reverse if the write fails before its catalog commit.

    Where a folder holds no folder (a partition's, usually), it moves as one: its old files go aside by one
    rename, and the job's folder of new files takes its place by another (as Spark's own dynamic overwrite
    deletes a partition's folder and renames the new one in), so a process killed meanwhile leaves each such
    partition with all its old rows, none, or all its new ones. Elsewhere (a table's own folder, which holds
    the staging folder) the files move one by one: old ones all aside first, then the new ones in."""

    def __init__(self, staging: str, overwritten: list[str]) -> None:
        self.staging = staging
        self.fs, staging_path = filesystem(staging)
        self.aside_folder = f"{staging_path.rstrip('/')}/{_REPLACED}"
        self.replaced: dict[str, list[str]] = {}
        """The files each overwritten folder holds that are not set aside yet, by the folder's path: two
        partitions can name one folder in two spellings (``file:`` or not, a trailing slash), and its
        old files are set aside once, before new ones come in."""
        for folder in overwritten:
            self.replaced.setdefault(self._path(folder), data_files(folder))
        self.done: list[tuple[str, str]] = []
        """Every move made, (from, to), in order."""
        self._asides = 0

    def _move(self, source: str, to: str) -> None:
        self.fs.move(source, to)
        self.done.append((source, to))

    def _flat(self, path: str) -> bool:
        """Whether ``path`` can move as one: a folder holding no folder, where renaming one is one step."""
        if not _renames_folders(self.fs):
            return False
        infos = self.fs.get_file_info(pafs.FileSelector(path, allow_not_found=True))
        return all(info.type == pafs.FileType.File for info in infos)

    @staticmethod
    def _path(folder: str) -> str:
        return filesystem(folder)[1].rstrip("/")

    def set_aside(self, folder: str) -> None:
        """An overwritten folder's files go to the staging folder (hidden from readers) until the commit."""
        path = self._path(folder)
        files = self.replaced.pop(path, [])
        if not files:
            return
        to = f"{self.aside_folder}/{self._asides}"
        self._asides += 1
        # As one only while it holds just the files listed: never new rows placed in it meanwhile.
        if self._flat(path) and sorted(data_files(folder)) == sorted(files):
            self.fs.create_dir(self.aside_folder, recursive=True)
            self._move(path, to)
            return
        self.fs.create_dir(to, recursive=True)
        for file in files:
            self._move(file, f"{to}/{posixpath.basename(file)}")

    def place(self, source: str, target: str) -> None:
        """The job's files of one partition (``source``, in the staging folder) into its folder."""
        _, to = filesystem(target)
        _, source_path = filesystem(source)
        to = to.rstrip("/")
        if self.fs.get_file_info(to).type == pafs.FileType.NotFound and self._flat(source_path):
            self.fs.create_dir(posixpath.dirname(to), recursive=True)
            self._move(source_path.rstrip("/"), to)
            return
        self.fs.create_dir(to, recursive=True)
        for path in data_files(source):
            self._move(path, f"{to}/{posixpath.basename(path)}")

    def undo(self) -> str | None:
        """Puts every file back; when that fails, what went wrong and where the replaced files are (the
        staging folder, which must then stay)."""
        try:
            for source, to in reversed(self.done):
                self.fs.move(to, source)
        except Exception as e:
            return (
                f"putting the files back failed too ({e}); replaced files not back in their folders are in "
                f"{self.aside_folder}"
            )
        return None


@dataclass
class _WritePlan:
    targets: list[str]
    overwritten: list[str] = field(default_factory=list)
    overwritten_values: list[list[str]] = field(default_factory=list)
    add: list[dict[str, Any]] = field(default_factory=list)
    drop: list[list[str]] = field(default_factory=list)


def table_location(table: dict[str, Any]) -> str:
    """A table's StorageDescriptor.Location without a trailing slash; InvalidInputException if none."""
    location = (table.get("StorageDescriptor") or {}).get("Location")
    if not location:
        raise InvalidInputException(
            f"Table {table['DatabaseName']}.{table['Name']} has no StorageDescriptor.Location to read or write"
        )
    return str(location).rstrip("/")


def _no_partition(table: dict[str, Any], values: list[str]) -> Exception:
    return EntityNotFoundException(f"Partition {values} not found in {table['Name']}")
